/**
 * `npm run bench:hier`: the hierarchical gather and gatherv (TraffRougier14) — variants 'zero-copy'
 * (TraffRougier14 §6, Fig. 6), 'reorder' (Fig. 1, §4) and 'flat' (binomial gather / binomial
 * gatherv) — measured side by side in one run:
 *
 *   1. on the simulator's hierarchical model with TraffRougier14 §4's machine, 36 nodes × 16 ranks
 *      (p = 576), ordered placement (rank r on node ⌊r/16⌋) and a random one (the ordered one
 *      shuffled), block sizes from small to large; exact virtual times of one call with the
 *      caches warm (the first call, which builds the node structure, is reported apart: it sends
 *      nothing more, so the difference is 0 in virtual time);
 *   2. on worker threads with ranks grouped into virtual nodes (default 8 ranks as 4×2 and 2×4,
 *      ordered and random), wall clock: the three variants interleaved call by call, each call
 *      between barriers, the slowest rank's time, minimum and median over the repetitions.
 *
 * The simulator's machine (TraffRougier14 §4: two 8-core 2.3 GHz AMD Opteron 6134 per node, Mellanox
 * QDR InfiniBand; our choice of parameters, per byte, in µs, one-ported):
 *   inter-node (QDR InfiniBand, MPI latency ~2 µs, ~3.2 GB/s):  α = 2 µs,   β = 1/3200 µs/B;
 *   intra-node (shared memory, ~0.5 µs, ~4 GB/s):               α = 0.5 µs, β = 1/4000 µs/B;
 *   local copy (memcpy, ~5 GB/s):                               γ = 1/5000 µs/B.
 * Every flag below overrides them.
 *
 * Prints per operation and placement the time of each variant per block size and the ratios
 * flat / zero-copy, flat / reorder and reorder / zero-copy (> 1: the second is faster). Every
 * run is verified byte for byte at the root; exit 1 otherwise.
 *
 *   npm run bench:hier [-- --nodes 36 --per-node 16 --sim-sizes 8,64,512,4096,32768
 *                         --threads-layouts 4x2,2x4 --threads-sizes 1024,65536 --reps 20 --warmup 3
 *                         --root 0 --seed 1 --no-sim --no-threads]
 *
 * This file is also the rank program of the threads part (its default export).
 */
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import Table from 'cli-table3';
import { Command } from 'commander';
import prand from 'pure-rand';
import { parseIntegerListOption, parseIntegerOption, parseNumberOption } from '../src/cli/options.js';
import { barrier } from '../src/collectives/basic/barrier.js';
import {
  hierarchicalGather,
  hierarchicalGatherv,
  HIERARCHICAL_VARIANT_NAMES,
  type HierarchicalVariantName,
} from '../src/collectives/hierarchical/index.js';
import type { Communicator } from '../src/comm/communicator.js';
import { hierarchicalModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { blockOf, firstMismatch, fullBuffer, poison } from '../src/run/data.js';

const VARIANTS = HIERARCHICAL_VARIANT_NAMES;
type Op = 'gather' | 'gatherv';
type PlacementKind = 'ordered' | 'random';

/** One measured case: every rank's count (elements of 1 byte) and the root. */
interface BenchCase {
  readonly op: Op;
  readonly counts: readonly number[];
  readonly root: number;
}

/** nodeOf of `nodes` × `perNode` ranks: consecutive, or that placement shuffled. */
function placement(kind: PlacementKind, nodes: number, perNode: number, seed: number): number[] {
  const out = Array.from({ length: nodes * perNode }, (_, r) => Math.floor(r / perNode));
  if (kind === 'random') {
    const rng = prand.xoroshiro128plus(seed);
    for (let i = out.length - 1; i > 0; i--) {
      const j = prand.unsafeUniformIntDistribution(0, i, rng);
      [out[i], out[j]] = [out[j], out[i]];
    }
  }
  return out;
}

/** gather: b bytes everywhere; gatherv: uniform in [0, 2b] (mean b). */
function countsFor(op: Op, p: number, b: number, seed: number): number[] {
  if (op === 'gather') return new Array<number>(p).fill(b);
  const rng = prand.xoroshiro128plus(seed + b);
  return Array.from({ length: p }, () => prand.unsafeUniformIntDistribution(0, 2 * b, rng));
}

/** The root's receive buffer, allocated once per case (outside the timed calls), and the reference to check it against. */
function rootBuffers(c: BenchCase, rank: number): { recv: Uint8Array; expected: Uint8Array } | undefined {
  if (rank !== c.root) return undefined;
  const expected = fullBuffer(c.counts, 1);
  return { recv: new Uint8Array(expected.length), expected };
}

/** One call of `variant` on this rank, into the root's preallocated `recv`. */
async function callOnce(comm: Communicator, c: BenchCase, variant: HierarchicalVariantName, send: Uint8Array, recv: Uint8Array | undefined): Promise<void> {
  if (c.op === 'gather') await hierarchicalGather(comm, { send, recv, root: c.root }, { variant });
  else await hierarchicalGatherv(comm, { send, recv, root: c.root, counts: comm.rank === c.root ? c.counts : undefined }, { variant });
}

/** After a checked call: whether the root's buffer holds every block (poisoned before the call, so nothing stale passes). */
function rootVerified(bufs: { recv: Uint8Array; expected: Uint8Array } | undefined): boolean {
  return bufs === undefined || firstMismatch(bufs.recv, bufs.expected, 'recv') === undefined;
}

// ---------------------------------------------------------------- threads rank program

interface ThreadsArgs {
  readonly cases: readonly BenchCase[];
  readonly reps: number;
  readonly warmup: number;
}

/** Per case, per variant: this rank's time of every timed call (ms); and whether the root verified. */
interface ThreadsRankResult {
  readonly times: number[][][];
  readonly verified: boolean;
}

export default async function hierBenchRank(comm: Communicator, args: ThreadsArgs): Promise<ThreadsRankResult> {
  let ok = true;
  const times: number[][][] = [];
  for (const c of args.cases) {
    const send = blockOf(comm.rank, c.counts[comm.rank], 1);
    const bufs = rootBuffers(c, comm.rank);
    const perVariant: number[][] = VARIANTS.map(() => []);
    for (let k = 0; k < args.warmup + args.reps; k++) {
      for (let v = 0; v < VARIANTS.length; v++) {
        if (k === 0 && bufs !== undefined) poison(bufs.recv, bufs.expected);
        await barrier(comm);
        const t0 = performance.now();
        await callOnce(comm, c, VARIANTS[v], send, bufs?.recv);
        const t1 = performance.now();
        if (k >= args.warmup) perVariant[v].push(t1 - t0);
        if (k === 0 && !rootVerified(bufs)) ok = false;
      }
    }
    times.push(perVariant);
  }
  return { times, verified: ok };
}

// ---------------------------------------------------------------- main

interface BenchOptions {
  sim: boolean;
  threads: boolean;
  nodes: number;
  perNode: number;
  simSizes: number[];
  threadsLayouts: [number, number][];
  threadsSizes: number[];
  reps: number;
  warmup: number;
  root: number;
  seed: number;
  interAlpha: number;
  interBeta: number;
  intraAlpha: number;
  intraBeta: number;
  gamma: number;
}

interface Row {
  readonly op: Op;
  readonly kind: PlacementKind;
  readonly size: number;
  /** Per variant (VARIANTS order). */
  readonly time: number[];
  /** Per variant: the first call (caches cold). */
  readonly first: number[];
  readonly verified: boolean;
}

const fmtBytes = (b: number): string => (b >= 1 << 20 ? `${b / (1 << 20)} MiB` : b >= 1024 ? `${b / 1024} KiB` : `${b} B`);
const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

async function simRow(o: BenchOptions, op: Op, kind: PlacementKind, size: number): Promise<Row> {
  const nodeOf = placement(kind, o.nodes, o.perNode, o.seed);
  const p = nodeOf.length;
  const root = Math.min(o.root, p - 1);
  const c: BenchCase = { op, counts: countsFor(op, p, size, o.seed), root };
  const model = hierarchicalModel({
    nodeOf,
    intra: { alpha: o.intraAlpha, beta: o.intraBeta },
    inter: { alpha: o.interAlpha, beta: o.interBeta },
    gamma: o.gamma,
  });
  const time: number[] = [];
  const first: number[] = [];
  let verified = true;
  for (const variant of VARIANTS) {
    const res = await runSim(
      p,
      async (comm) => {
        const send = blockOf(comm.rank, c.counts[comm.rank], 1);
        const bufs = rootBuffers(c, comm.rank);
        const clock = comm.clock;
        if (clock === undefined) throw new Error('the simulator has a clock');
        const spans: number[] = [];
        let ok = true;
        for (let k = 0; k < 2; k++) {
          if (bufs !== undefined) poison(bufs.recv, bufs.expected);
          await clock.sync();
          const t0 = clock.now();
          await callOnce(comm, c, variant, send, bufs?.recv);
          ok &&= rootVerified(bufs);
          await clock.sync();
          spans.push(clock.now() - t0);
        }
        return { spans, ok };
      },
      { model },
    );
    first.push(res.results[0].spans[0]);
    time.push(res.results[0].spans[1]);
    verified &&= res.results[root].ok;
  }
  return { op, kind, size, time, first, verified };
}

function printRows(title: string, rows: readonly Row[], unit: string, extra: (r: Row) => string[] = () => [], extraHead: string[] = []): void {
  for (const op of ['gather', 'gatherv'] as const) {
    const mine = rows.filter((r) => r.op === op);
    if (mine.length === 0) continue;
    const head = ['placement', op === 'gather' ? 'block' : 'mean block', ...VARIANTS.map((v) => `${v} (${unit})`), 'flat/zero-copy', 'flat/reorder', 'reorder/zero-copy', ...extraHead];
    const table = new Table({ head, style: { head: [], border: [] } });
    for (const r of mine) {
      const [z, re, f] = r.time;
      table.push([
        r.kind + (r.verified ? '' : ' UNVERIFIED'),
        fmtBytes(r.size),
        ...r.time.map(fmt),
        (f / z).toFixed(2),
        (f / re).toFixed(2),
        (re / z).toFixed(2),
        ...extra(r),
      ]);
    }
    process.stdout.write(`\n${title}: ${op}${op === 'gatherv' ? ' (counts uniform in [0, 2·block])' : ''}\n${table.toString()}\n`);
  }
}

async function simPart(o: BenchOptions): Promise<boolean> {
  const rows: Row[] = [];
  for (const op of ['gather', 'gatherv'] as const) {
    for (const kind of ['ordered', 'random'] as const) {
      for (const size of o.simSizes) {
        process.stderr.write(`sim ${op} ${kind} ${fmtBytes(size)}        \r`);
        rows.push(await simRow(o, op, kind, size));
      }
    }
  }
  process.stderr.write(' '.repeat(60) + '\r');
  const p = o.nodes * o.perNode;
  process.stdout.write(
    `\nsimulator: ${o.nodes} nodes × ${o.perNode} ranks (p = ${p}), root ${Math.min(o.root, p - 1)}, one-ported; ` +
      `inter α = ${o.interAlpha} µs, β = ${o.interBeta.toPrecision(3)} µs/B; intra α = ${o.intraAlpha} µs, β = ${o.intraBeta.toPrecision(3)} µs/B; ` +
      `γ = ${o.gamma.toPrecision(3)} µs/B. Times of one call with warm caches; the first call sends no more messages (no node split).\n`,
  );
  printRows('simulator', rows, 'µs', (r) => [fmt(r.first[0] - r.time[0])], ['first call − warm (µs)']);
  return rows.every((r) => r.verified);
}

async function threadsPart(o: BenchOptions): Promise<boolean> {
  const self = new URL(import.meta.url);
  const rows: Row[] = [];
  const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];
  const medians: Map<Row, number[]> = new Map();
  for (const [nodes, perNode] of o.threadsLayouts) {
    for (const kind of ['ordered', 'random'] as const) {
      const nodeOf = placement(kind, nodes, perNode, o.seed);
      const p = nodeOf.length;
      const cases: BenchCase[] = [];
      for (const op of ['gather', 'gatherv'] as const) {
        for (const size of o.threadsSizes) cases.push({ op, counts: countsFor(op, p, size, o.seed), root: Math.min(o.root, p - 1) });
      }
      process.stderr.write(`threads ${nodes}x${perNode} ${kind}        \r`);
      const ranks = await runThreads<ThreadsRankResult>(p, self, { cases, reps: o.reps, warmup: o.warmup }, { nodes: nodeOf });
      const verified = ranks.every((r) => r.verified);
      cases.forEach((c, i) => {
        // Per repetition the slowest rank; then the minimum and the median over repetitions.
        const slowest = VARIANTS.map((_, v) => Array.from({ length: o.reps }, (_, k) => Math.max(...ranks.map((r) => r.times[i][v][k]))));
        const row: Row = {
          op: c.op,
          kind: `${kind} ${nodes}x${perNode}` as PlacementKind,
          size: o.threadsSizes[i % o.threadsSizes.length],
          time: slowest.map((xs) => 1000 * Math.min(...xs)),
          first: [],
          verified,
        };
        medians.set(row, slowest.map((xs) => 1000 * quantile(xs, 0.5)));
        rows.push(row);
      });
    }
  }
  process.stderr.write(' '.repeat(60) + '\r');
  process.stdout.write(
    `\nworker threads, ranks grouped into virtual nodes (NxM = N nodes of M ranks), wall clock: slowest rank per call, ` +
      `minimum over ${o.reps} calls after ${o.warmup} warm-ups, variants interleaved call by call; ratios of the minima\n`,
  );
  printRows('threads', rows, 'µs', (r) => (medians.get(r) ?? []).map(fmt), VARIANTS.map((v) => `${v} median`));
  return rows.every((r) => r.verified);
}

function layouts(v: string): [number, number][] {
  return v.split(',').map((s) => {
    const m = /^(\d+)x(\d+)$/.exec(s.trim());
    if (m === null) throw new Error(`--threads-layouts: '${s}' is not NxM`);
    return [Number(m[1]), Number(m[2])];
  });
}

async function main(): Promise<void> {
  const program = new Command()
    .name('bench:hier')
    .option('--no-sim', 'skip the simulator part')
    .option('--no-threads', 'skip the worker-threads part')
    .option('--nodes <n>', 'simulator: nodes', parseIntegerOption('nodes', 1), 36)
    .option('--per-node <n>', 'simulator: ranks per node', parseIntegerOption('per-node', 1), 16)
    .option('--sim-sizes <list>', 'simulator: bytes per rank (gatherv: mean)', parseIntegerListOption('sim-sizes', 0), [8, 64, 512, 4096, 32768])
    .option('--threads-layouts <list>', 'threads: NxM virtual nodes (comma list)', layouts, [
      [4, 2],
      [2, 4],
    ])
    .option('--threads-sizes <list>', 'threads: bytes per rank (gatherv: mean)', parseIntegerListOption('threads-sizes', 0), [1024, 65536])
    .option('--reps <n>', 'threads: timed calls per variant', parseIntegerOption('reps', 1), 20)
    .option('--warmup <n>', 'threads: untimed calls per variant', parseIntegerOption('warmup', 0), 3)
    .option('--root <r>', 'root rank', parseIntegerOption('root', 0), 0)
    .option('--seed <n>', 'placement and counts seed', parseIntegerOption('seed', 0), 1)
    .option('--inter-alpha <x>', 'µs per inter-node message', parseNumberOption('inter-alpha'), 2)
    .option('--inter-beta <x>', 'µs per inter-node byte', parseNumberOption('inter-beta'), 1 / 3200)
    .option('--intra-alpha <x>', 'µs per intra-node message', parseNumberOption('intra-alpha'), 0.5)
    .option('--intra-beta <x>', 'µs per intra-node byte', parseNumberOption('intra-beta'), 1 / 4000)
    .option('--gamma <x>', 'µs per locally copied byte', parseNumberOption('gamma'), 1 / 5000)
    .action(async (o: BenchOptions) => {
      process.stdout.write(
        'TraffRougier14: hierarchical gather(v) — zero-copy (indexed-block placement at the root), reorder (intermediate buffer + explicit permutation), flat (binomial); ratio > 1: the second variant is faster\n',
      );
      let ok = true;
      if (o.sim) ok = (await simPart(o)) && ok;
      if (o.threads) ok = (await threadsPart(o)) && ok;
      process.stdout.write(ok ? '\nevery run verified byte for byte\n' : '\nSOME RUNS DELIVERED WRONG DATA\n');
      if (!ok) process.exitCode = 1;
    });
  await program.parseAsync(process.argv);
}

if (isMainThread) await main();
