/**
 * `npm run bench:mpi-gatherv`: vcoll's adaptive gatherv / scatterv (Traff18) over MPI against
 * the MPI library's own MPI_Gatherv / MPI_Scatterv and against guideline GL2's mock-up, in one
 * mpirun, over Traff18's distributions and b = 1, 10, 100, 1000, 10000 (elements of
 * `--unit-bytes` bytes, default 4: MPI_INT as in the paper), at the largest p the machine
 * holds (default os.availableParallelism(); `--p 8` oversubscribes).
 *
 *   npm run bench:mpi-gatherv -- [--quick] [--p N] [--b 1,10,...] [--dist same,random,...]
 *                                [--ops gatherv,scatterv] [--reps N] [--warmup N] [--root R]
 *                                [--unit-bytes N] [--stat median|min] [--bind-to POLICY]
 *                                [--json FILE]
 *
 * Variants of each case (the same blocks, the same root):
 *
 *   adaptive   gatherv / scatterv(comm, …, { algorithm: 'adaptive' }): tree construction and
 *              data phase, vcoll over MPI point-to-point
 *   native     comm.native.gatherv / scatterv: the library's MPI_Gatherv / MPI_Scatterv
 *   GL2        the right-hand side of Traff18's guideline GL2: MPI_Allreduce of one int (the
 *              largest count), MPI_Gather (MPI_Scatter) of blocks padded to it, and the root's
 *              copies of the blocks from (to) their displacements — the padded buffers of the
 *              other ranks are organised so that they need no copy (Traff18 §4)
 *   gather     MPI_Gather (MPI_Scatter) of the padded blocks alone: for `same` it is the
 *              regular operation of guideline GL1
 *
 * Method of Traff18 §5: `--warmup` untimed executions, then `--reps` timed ones; an MPI_Barrier
 * before each execution; an execution's time is its slowest rank's (MPI_Wtime on each rank);
 * the report gives the median and the minimum over the repetitions. The variants of a case are
 * interleaved repetition by repetition (their order rotates), so that they share the machine's
 * state. Every execution of adaptive, native and GL2 is verified byte for byte (exit 1
 * otherwise).
 *
 * Verdicts (on `--stat`, default the median): GL2 holds for an implementation of gatherv when
 * gatherv(m) ≤ allreduce(1) + gather(p·max m_i), i.e. when it beats the mock-up; GL1 (rows of
 * `same` only) holds when MPI_Gather(m) ≤ gatherv(m).
 *
 * This file is also the rank program that runMpi starts on every rank (its default export).
 */

import Table from 'cli-table3';
import { Command } from 'commander';
import { median } from 'simple-statistics';
import { realpathSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseChoice, parseIntegerListOption, parseIntegerOption } from '../src/cli/options.js';
import { gatherv, scatterv } from '../src/collectives/index.js';
import type { CollectiveInfo } from '../src/collectives/types.js';
import type { Communicator } from '../src/comm/communicator.js';
import type { NativeCollectives } from '../src/comm/native.js';
import { blockOf, firstMismatch, fullBuffer, poison, prefixDispls } from '../src/run/data.js';
import { SEED000_DISTRIBUTIONS, V_OPERATIONS, type VOperation } from '../src/run/spec.js';
import { mpiWorld } from '../src/transports/mpi/world.js';
import { runMpi } from '../src/transports/mpi/run.js';
import { blockSizes, DISTRIBUTION_LABELS, parseDistribution, type DistributionName } from '../src/workloads/distributions.js';

export const VARIANTS = ['adaptive', 'native', 'GL2', 'gather'] as const;
export type Variant = (typeof VARIANTS)[number];
/** The variants whose result is verified (gather / scatter alone moves the padded blocks only). */
const VERIFIED: ReadonlySet<Variant> = new Set(['adaptive', 'native', 'GL2']);

interface BenchCase {
  readonly op: VOperation;
  readonly dist: DistributionName;
  readonly b: number;
}

interface RankArgs {
  readonly cases: readonly BenchCase[];
  readonly root: number;
  readonly unitBytes: number;
  readonly rho: number;
  readonly seed: number;
  readonly reps: number;
  readonly warmup: number;
  /** Rank 0 prints a line per finished (op, b). */
  readonly progress: boolean;
}

interface RankResult {
  readonly rank: number;
  /** times[case][variant][rep]: this rank's time of each timed execution, seconds. */
  readonly times: number[][][];
  /** The first mismatch of each case (undefined: every execution verified). */
  readonly mismatches: (string | undefined)[];
  /** What adaptive reported on this rank, per case (construction rounds, tree height). */
  readonly adaptiveInfo: (CollectiveInfo | undefined)[];
  readonly library: string;
  readonly host: string;
  readonly recvSpinNs: number | undefined;
}

/** One case on one rank: run it, prepare its buffers, check them. */
interface Runner {
  /** Runs variant v once; adaptive resolves with what vcoll reports about the operation. */
  run(v: Variant): Promise<CollectiveInfo | undefined>;
  prepare(v: Variant): void;
  check(v: Variant): string | undefined;
}

function nativeOf(comm: Communicator): NativeCollectives {
  const n = comm.native;
  if (n === undefined) throw new Error('this communicator has no native MPI collectives (run under mpirun with the MPI transport)');
  return n;
}

/** The buffers and the four executions of a gatherv case on this rank. */
function gathervRunner(comm: Communicator, native: NativeCollectives, counts: readonly number[], root: number, u: number): Runner {
  const p = comm.size;
  const me = comm.rank;
  const isRoot = me === root;
  const max = Math.max(...counts);
  const displs = prefixDispls(counts);
  const mine = blockOf(me, counts[me], u);
  // The send buffer is padded (capacity max·u, the block at its start): GL2's gather sends it whole.
  const sendPad = new Uint8Array(max * u);
  sendPad.set(mine);
  const send = sendPad.subarray(0, mine.length);
  const expected = isRoot ? fullBuffer(counts, u) : undefined;
  const recv = isRoot ? new Uint8Array((expected as Uint8Array).length) : undefined;
  const recvPad = isRoot ? new Uint8Array(p * max * u) : null;
  const countsB = isRoot ? Int32Array.from(counts, (c) => c * u) : null;
  const displsB = isRoot ? Int32Array.from(displs, (d) => d * u) : null;
  const maxIn = Int32Array.of(counts[me]);
  const maxOut = new Int32Array(1);
  const args = isRoot ? { root, send, recv, counts, displs, unitBytes: u } : { root, send, unitBytes: u };
  return {
    async run(v) {
      switch (v) {
        case 'adaptive':
          return gatherv(comm, args, { algorithm: 'adaptive' });
        case 'native':
          native.gatherv(send, recv ?? null, countsB, displsB, root);
          return;
        case 'GL2': {
          native.allreduce(maxIn, maxOut, 1, 'i32', 'max');
          const m = maxOut[0] * u;
          native.gather(sendPad.subarray(0, m), recvPad === null ? null : recvPad.subarray(0, p * m), root);
          if (recvPad !== null && recv !== undefined) {
            for (let i = 0; i < p; i++) recv.set(recvPad.subarray(i * m, i * m + counts[i] * u), displs[i] * u);
          }
          return;
        }
        case 'gather':
          native.gather(sendPad, recvPad, root);
          return;
      }
    },
    prepare(v) {
      if (VERIFIED.has(v) && recv !== undefined && expected !== undefined) poison(recv, expected);
    },
    check(v) {
      if (!VERIFIED.has(v)) return undefined;
      return (
        firstMismatch(send, mine, `${v}: rank ${me}'s send buffer (changed)`) ??
        (recv !== undefined && expected !== undefined ? firstMismatch(recv, expected, `${v}: root ${me}'s receive buffer`) : undefined)
      );
    },
  };
}

/** The buffers and the four executions of a scatterv case on this rank. */
function scattervRunner(comm: Communicator, native: NativeCollectives, counts: readonly number[], root: number, u: number): Runner {
  const p = comm.size;
  const me = comm.rank;
  const isRoot = me === root;
  const max = Math.max(...counts);
  const displs = prefixDispls(counts);
  const mine = blockOf(me, counts[me], u);
  const full = isRoot ? fullBuffer(counts, u) : undefined;
  const send = full?.slice();
  const sendPad = isRoot ? new Uint8Array(p * max * u) : null;
  // The receive buffer is padded (capacity max·u, the block at its start): GL2's scatter fills it whole.
  const recvPad = new Uint8Array(max * u);
  const recv = recvPad.subarray(0, mine.length);
  const countsB = isRoot ? Int32Array.from(counts, (c) => c * u) : null;
  const displsB = isRoot ? Int32Array.from(displs, (d) => d * u) : null;
  const maxIn = Int32Array.of(counts[me]);
  const maxOut = new Int32Array(1);
  const args = isRoot ? { root, recv, count: counts[me], send, counts, displs, unitBytes: u } : { root, recv, count: counts[me], unitBytes: u };
  return {
    async run(v) {
      switch (v) {
        case 'adaptive':
          return scatterv(comm, args, { algorithm: 'adaptive' });
        case 'native':
          native.scatterv(send ?? null, countsB, displsB, recv, root);
          return;
        case 'GL2': {
          native.allreduce(maxIn, maxOut, 1, 'i32', 'max');
          const m = maxOut[0] * u;
          if (sendPad !== null && send !== undefined) {
            for (let i = 0; i < p; i++) sendPad.set(send.subarray(displs[i] * u, displs[i] * u + counts[i] * u), i * m);
          }
          native.scatter(sendPad === null ? null : sendPad.subarray(0, p * m), recvPad.subarray(0, m), root);
          return;
        }
        case 'gather':
          native.scatter(sendPad, recvPad, root);
          return;
      }
    },
    prepare(v) {
      if (VERIFIED.has(v)) poison(recv, mine);
    },
    check(v) {
      if (!VERIFIED.has(v)) return undefined;
      return (
        firstMismatch(recv, mine, `${v}: rank ${me}'s receive buffer`) ??
        (send !== undefined && full !== undefined ? firstMismatch(send, full, `${v}: root ${me}'s send buffer (changed)`) : undefined)
      );
    },
  };
}

/**
 * Rank program (every rank): every case, variants interleaved repetition by repetition, an
 * MPI_Barrier before each execution, this rank's MPI_Wtime around it.
 */
export default async function mpiGathervRank(comm: Communicator, args: RankArgs): Promise<RankResult> {
  const world = mpiWorld();
  const native = nativeOf(comm);
  const p = comm.size;
  const times: number[][][] = [];
  const mismatches: (string | undefined)[] = [];
  const adaptiveInfo: (CollectiveInfo | undefined)[] = [];
  const t0 = world.wtime();
  for (let k = 0; k < args.cases.length; k++) {
    const c = args.cases[k];
    const counts = blockSizes(c.dist, { p, b: c.b, rho: args.rho, seed: args.seed });
    const runner = (c.op === 'gatherv' ? gathervRunner : scattervRunner)(comm, native, counts, args.root, args.unitBytes);
    const t: number[][] = VARIANTS.map(() => []);
    let mismatch: string | undefined;
    let info: CollectiveInfo | undefined;
    for (let i = 0; i < args.warmup + args.reps; i++) {
      for (let j = 0; j < VARIANTS.length; j++) {
        const v = (i + j) % VARIANTS.length;
        runner.prepare(VARIANTS[v]);
        native.barrier();
        const start = world.wtime();
        const got = await runner.run(VARIANTS[v]);
        const took = world.wtime() - start;
        info ??= got;
        if (i >= args.warmup) t[v].push(took);
        mismatch ??= runner.check(VARIANTS[v]);
      }
    }
    times.push(t);
    mismatches.push(mismatch);
    adaptiveInfo.push(info);
    const next = args.cases[k + 1];
    if (args.progress && comm.rank === 0 && (next === undefined || next.op !== c.op || next.b !== c.b)) {
      process.stdout.write(`  [${k + 1}/${args.cases.length}] ${c.op} b = ${c.b} done (${(world.wtime() - t0).toFixed(1)} s)\n`);
    }
  }
  native.barrier();
  const ep = world.endpoint as unknown as { recvSpinNs?: number };
  return { rank: comm.rank, times, mismatches, adaptiveInfo, library: world.info.library, host: world.info.host, recvSpinNs: ep.recvSpinNs };
}

// ---------------------------------------------------------------- main

type Stat = 'median' | 'min';

interface Options {
  quick: boolean;
  p: number;
  b?: number[];
  dist?: DistributionName[];
  ops: VOperation[];
  reps?: number;
  warmup?: number;
  root?: number;
  unitBytes: number;
  seed: number;
  rho: number;
  stat: Stat;
  bindTo?: string;
  json?: string;
  progress: boolean;
  timeout: number;
}

interface Summary {
  readonly median: number;
  readonly min: number;
  /** The slowest rank's time of every timed execution, seconds. */
  readonly times: number[];
}

interface CaseReport extends BenchCase {
  readonly counts: number[];
  readonly maxCount: number;
  /** Bytes of all blocks (m) and of the padded instance (m'). */
  readonly bytes: number;
  readonly paddedBytes: number;
  readonly variants: Record<Variant, Summary>;
  readonly mismatch: string | undefined;
  /** What adaptive reported on the root (construction rounds, data-phase tree height). */
  readonly adaptiveInfo: CollectiveInfo | undefined;
  /** GL2 verdicts: whether adaptive / native beat the mock-up (on the chosen statistic). */
  readonly gl2: { readonly adaptive: boolean; readonly native: boolean };
  /** GL1 verdicts for `same`: whether MPI_Gather (MPI_Scatter) ≤ adaptive / native. */
  readonly gl1?: { readonly adaptive: boolean; readonly native: boolean };
}

function summarize(perRank: readonly number[][]): Summary {
  const reps = perRank[0].length;
  const times = Array.from({ length: reps }, (_, i) => Math.max(...perRank.map((t) => t[i])));
  return { median: median(times), min: Math.min(...times), times };
}

const usText = (s: number): string => (s * 1e6 < 100 ? (s * 1e6).toFixed(1) : (s * 1e6).toFixed(0));
const geomean = (xs: readonly number[]): number => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

async function main(): Promise<void> {
  const parseList = parseIntegerListOption('b', 1);
  const program = new Command()
    .name('bench:mpi-gatherv')
    .description("vcoll's adaptive gatherv/scatterv over MPI vs MPI_Gatherv/MPI_Scatterv vs GL2's allreduce + padded gather, one mpirun")
    .option('--quick', 'b = 1,100,10000, 10 repetitions after 2 warm-ups (a smoke test)', false)
    .option('--p <n>', 'MPI processes (default: os.availableParallelism(); more oversubscribes)', parseIntegerOption('p', 1), availableParallelism())
    .option('--b <list>', 'average block sizes in elements (default 1,10,100,1000,10000)', parseList)
    .option('--dist <list>', `distributions (default: Traff18's: ${SEED000_DISTRIBUTIONS.join(',')})`, (v: string) =>
      v.split(',').map((d) => parseDistribution(d, '--dist')),
    )
    .option('--ops <list>', 'operations', (v: string) => v.split(',').map((o) => parseChoice('ops', V_OPERATIONS)(o.trim())), [...V_OPERATIONS])
    .option('--reps <n>', 'timed repetitions per variant and case (default 75, as Traff18; quick 10)', parseIntegerOption('reps', 1))
    .option('--warmup <n>', 'untimed executions first (default 10, as Traff18; quick 2)', parseIntegerOption('warmup', 0))
    .option('--root <r>', 'the root (default ⌊p/2⌋, as Traff18)', parseIntegerOption('root', 0))
    .option('--unit-bytes <n>', 'bytes per element (4: MPI_INT, as Traff18)', parseIntegerOption('unit-bytes', 1), 4)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
    .option('--rho <n>', 'ρ of spikes', parseIntegerOption('rho', 1), 5)
    .option('--stat <s>', 'statistic of the ratios and verdicts: median or min', parseChoice<Stat>('stat', ['median', 'min']), 'median')
    .option('--bind-to <policy>', "mpirun's --bind-to (Open MPI: core, socket, none, …; default: the launcher's own)")
    .option('--json <file>', 'write every measurement to FILE')
    .option('--no-progress', 'no progress lines')
    .option('--timeout <s>', 'kill the MPI job after this many seconds', parseIntegerOption('timeout', 1), 3600);
  program.parse(process.argv);
  const o = program.opts<Options>();
  const bs = o.b ?? (o.quick ? [1, 100, 10000] : [1, 10, 100, 1000, 10000]);
  const dists = o.dist ?? [...SEED000_DISTRIBUTIONS];
  const reps = o.reps ?? (o.quick ? 10 : 75);
  const warmup = o.warmup ?? (o.quick ? 2 : 10);
  const root = o.root ?? Math.floor(o.p / 2);
  if (root >= o.p) throw new Error(`--root ${root} is not a rank of ${o.p} processes`);
  const cases: BenchCase[] = [];
  for (const op of o.ops) for (const b of bs) for (const dist of dists) cases.push({ op, dist, b });
  const args: RankArgs = { cases, root, unitBytes: o.unitBytes, rho: o.rho, seed: o.seed, reps, warmup, progress: o.progress };
  const mpirunArgs = o.bindTo === undefined ? [] : ['--bind-to', o.bindTo];
  const load0 = loadavg()[0];
  const t0 = performance.now();
  if (o.progress) {
    process.stdout.write(`running ${cases.length} cases x ${VARIANTS.length} variants x (${warmup} + ${reps}) executions on ${o.p} MPI processes…\n`);
  }
  const ranks = await runMpi<RankResult>(o.p, new URL(import.meta.url), args, { mpirunArgs, timeoutMs: o.timeout * 1000 });
  const seconds = (performance.now() - t0) / 1000;
  const load1 = loadavg()[0];
  const r0 = ranks[0];
  const stat = o.stat;

  const reports: CaseReport[] = cases.map((c, k) => {
    const counts = blockSizes(c.dist, { p: o.p, b: c.b, rho: o.rho, seed: o.seed });
    const maxCount = Math.max(...counts);
    const variants = Object.fromEntries(VARIANTS.map((v, j) => [v, summarize(ranks.map((r) => r.times[k][j]))])) as Record<Variant, Summary>;
    const mismatch = ranks.map((r) => r.mismatches[k]).find((m) => m !== undefined);
    const gl2 = { adaptive: variants.adaptive[stat] <= variants.GL2[stat], native: variants.native[stat] <= variants.GL2[stat] };
    const gl1 =
      c.dist === 'same' ? { adaptive: variants.gather[stat] <= variants.adaptive[stat], native: variants.gather[stat] <= variants.native[stat] } : undefined;
    const bytes = counts.reduce((a, x) => a + x, 0) * o.unitBytes;
    const adaptiveInfo = ranks[root].adaptiveInfo[k];
    return { ...c, counts, maxCount, bytes, paddedBytes: o.p * maxCount * o.unitBytes, variants, mismatch, adaptiveInfo, gl2, gl1 };
  });

  const out = process.stdout;
  out.write(
    `\ngatherv/scatterv over MPI: ${o.p} processes on ${r0.host} (machine: ${availableParallelism()} cores${o.p > availableParallelism() ? ', oversubscribed' : ''}), ` +
      `root ${root}, ${o.unitBytes}-byte elements, seed ${o.seed}, rho ${o.rho}\n` +
      `${r0.library.split('\n')[0].trim()}; mpirun --bind-to ${o.bindTo ?? '(default)'}; vcoll's blocking-recv spin ${r0.recvSpinNs ?? '?'} ns\n` +
      `per variant and case: ${warmup} warm-up + ${reps} timed executions, MPI_Barrier before each, time = slowest rank's; ` +
      `ratios and verdicts on the ${stat}; ${seconds.toFixed(1)} s; load average ${load0.toFixed(2)} before, ${load1.toFixed(2)} after\n`,
  );
  const ok = reports.every((r) => r.mismatch === undefined);
  const summary = new Table({
    head: ['op', 'b', 'adaptive/native (geomean)', 'adaptive/GL2 (geomean)', 'GL2 held: adaptive', 'GL2 held: native', 'GL1 (same): adaptive, native'],
    style: { head: [], border: [] },
  });
  for (const op of o.ops) {
    const regular = op === 'gatherv' ? 'MPI_Gather' : 'MPI_Scatter';
    const head = [
      'distribution',
      'b',
      'adaptive',
      `MPI_${op === 'gatherv' ? 'Gatherv' : 'Scatterv'}`,
      'GL2 mock-up',
      `${regular} padded`,
      'adapt./native',
      'adapt./GL2',
      'GL2: adaptive',
      'GL2: native',
      'GL1: adapt., native',
    ];
    const t = new Table({ head, style: { head: [], border: [] }, colAligns: head.map((_, i) => (i === 0 ? 'left' : 'right')) });
    const mark = (held: boolean): string => (held ? 'ok' : 'VIOLATED');
    for (const b of bs) {
      const rows = reports.filter((r) => r.op === op && r.b === b);
      for (const r of rows) {
        const v = r.variants;
        t.push([
          DISTRIBUTION_LABELS[r.dist],
          String(b),
          `${usText(v.adaptive[stat])} (${usText(v.adaptive.min)})`,
          `${usText(v.native[stat])} (${usText(v.native.min)})`,
          `${usText(v.GL2[stat])} (${usText(v.GL2.min)})`,
          `${usText(v.gather[stat])} (${usText(v.gather.min)})`,
          (v.adaptive[stat] / v.native[stat]).toFixed(2),
          (v.adaptive[stat] / v.GL2[stat]).toFixed(2),
          mark(r.gl2.adaptive),
          mark(r.gl2.native),
          r.gl1 === undefined ? '' : `${mark(r.gl1.adaptive)}, ${mark(r.gl1.native)}`,
        ]);
      }
      const same = rows.filter((r) => r.gl1 !== undefined);
      summary.push([
        op,
        String(b),
        geomean(rows.map((r) => r.variants.adaptive[stat] / r.variants.native[stat])).toFixed(2),
        geomean(rows.map((r) => r.variants.adaptive[stat] / r.variants.GL2[stat])).toFixed(2),
        `${rows.filter((r) => r.gl2.adaptive).length}/${rows.length}`,
        `${rows.filter((r) => r.gl2.native).length}/${rows.length}`,
        same.map((r) => `${mark(r.gl1?.adaptive === true)}, ${mark(r.gl1?.native === true)}`).join('; '),
      ]);
    }
    out.write(`\n${op}: ${stat} µs (min µs in parentheses); ratios < 1: adaptive faster\n${t.toString()}\n`);
  }
  out.write(
    `\nsummary (${stat}s; GL2 held: cases where gatherv/scatterv beat allreduce(1) + padded gather/scatter; ` +
      `GL1: MPI_Gather/MPI_Scatter(m) <= the irregular operation on 'same')\n${summary.toString()}\n`,
  );
  for (const r of reports) if (r.mismatch !== undefined) out.write(`FAILED ${r.op} ${r.dist} b=${r.b}: ${r.mismatch}\n`);
  out.write(`${ok ? 'every result verified' : 'SOME RESULTS FAILED VERIFICATION'}\n`);

  if (o.json !== undefined) {
    const doc = {
      benchmark: 'bench:mpi-gatherv',
      command: process.argv.slice(2),
      date: new Date().toISOString(),
      node: process.version,
      library: r0.library,
      host: r0.host,
      cores: availableParallelism(),
      p: o.p,
      root,
      unitBytes: o.unitBytes,
      seed: o.seed,
      rho: o.rho,
      reps,
      warmup,
      stat,
      bindTo: o.bindTo ?? null,
      recvSpinNs: r0.recvSpinNs ?? null,
      seconds,
      loadavg: { before: load0, after: load1 },
      timeUnit: 's',
      variants: VARIANTS,
      cases: reports,
      perRank: ranks.map((r) => ({ rank: r.rank, times: r.times })),
    };
    writeFileSync(o.json, `${JSON.stringify(doc, null, 1)}\n`);
    out.write(`measurements written to ${o.json}\n`);
  }
  process.exitCode = ok ? 0 : 1;
}

const self = fileURLToPath(import.meta.url);
const entry = process.argv[1] === undefined ? '' : realpathSync(process.argv[1]);
if (entry === self) await main();
