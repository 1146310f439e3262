/**
 * `npm run bench:mpi-schedule`: the steady state of a persistent gatherv over MPI — many
 * `start()` back to back — against the MPI library's MPI_Gatherv in a C loop, in one mpirun
 * (the same processes, the same communicator, interleaved). Variants, per block size b (bytes
 * per rank, every rank the same):
 *
 *   C loop          MPI_Gatherv back to back in C (binding gathervLoopC): the floor
 *   native from JS  comm.native.gatherv per call (one N-API call each: the mpi-native variant)
 *   linear          gathervInit(…, { algorithm: 'linear' }) then `await plan.start()` per call:
 *                   the compiled schedule run by the MPI transport's native executor (in C)
 *   linear, blocking  the same plan's `startBlocking()` per call (no promise: the thread waits in C)
 *   binomial        the same with the binomial tree (and `binomial, blocking`)
 *   linear, portable  linear's schedule bound with bindSchedule(…, { portable: true }): one
 *                   request per message through the endpoint (what start() was before)
 *
 * Every variant runs `--calls` calls back to back after a barrier, `--runs` times, variants
 * interleaved (their order alternating); the time per call is the root's wall time / calls;
 * the report gives, per variant, the median over runs and the spread (min–max), and the
 * ratio to the C loop. The data of the last call of each run is verified at the root.
 *
 *   npm run bench:mpi-schedule -- [--p 2] [--b 1,100,10000] [--calls 100000] [--runs 5]
 *
 * This file is also the rank program runMpi starts on every rank (its default export).
 */
import Table from 'cli-table3';
import { Command } from 'commander';
import { median } from 'simple-statistics';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseIntegerListOption, parseIntegerOption } from '../src/cli/options.js';
import { gathervInit } from '../src/collectives/index.js';
import { compileVSchedule } from '../src/collectives/v-schedule.js';
import type { Communicator } from '../src/comm/communicator.js';
import type { PersistentCollective } from '../src/collectives/types.js';
import { bindSchedule } from '../src/schedule/run.js';
import { loadMpiBinding } from '../src/transports/mpi/binding.js';
import { runMpi } from '../src/transports/mpi/run.js';
import { mpiWorld } from '../src/transports/mpi/world.js';

export const VARIANTS = ['C loop', 'native from JS', 'linear', 'linear, blocking', 'binomial', 'binomial, blocking', 'linear, portable'] as const;
type Variant = (typeof VARIANTS)[number];

interface RankArgs {
  readonly bs: readonly number[];
  readonly calls: number;
  readonly runs: number;
}

interface RankResult {
  /** [b][variant][run] seconds per call (root only; empty elsewhere). */
  readonly times: number[][][];
  readonly library: string;
  readonly mismatch?: string;
}

function blocking(plan: PersistentCollective): () => void {
  const go = plan.startBlocking;
  if (go === undefined) throw new Error('the plan has no startBlocking: is the MPI binding built with schedules (npm run build:mpi)?');
  return () => go.call(plan);
}

export default async function mpiScheduleRank(comm: Communicator, args: RankArgs): Promise<RankResult> {
  const world = mpiWorld();
  const mpi = loadMpiBinding();
  const loopC = mpi.gathervLoopC;
  if (loopC === undefined) throw new Error('the MPI binding predates gathervLoopC: npm run build:mpi');
  const native = comm.native;
  if (native === undefined) throw new Error('no native collectives: run over MPI');
  const p = comm.size;
  const me = comm.rank;
  const root = 0;
  const times: number[][][] = [];
  let mismatch: string | undefined;
  for (const b of args.bs) {
    const counts = Array.from({ length: p }, () => b);
    const send = new Uint8Array(b).fill(me + 1);
    const recv = me === root ? new Uint8Array(p * b) : undefined;
    const countsI = me === root ? Int32Array.from(counts) : null;
    const displsI = me === root ? Int32Array.from(counts, (_, i) => i * b) : null;
    const gargs = me === root ? { root, send, recv, counts } : { root, send };
    const linear = await gathervInit(comm, gargs, { algorithm: 'linear' });
    const binomial = await gathervInit(comm, gargs, { algorithm: 'binomial' });
    // linear's schedule on the portable executor: a plan tag of its own
    const rs = compileVSchedule('gatherv', 'linear', counts, { root, tag: 1 << 30 | 0x3ff }).ranks[me];
    const bufs = rs.buffers.map((x) => (x.name === 'send' ? send : x.name === 'recv' ? (recv as Uint8Array) : new Uint8Array(x.bytes)));
    const portable = bindSchedule(comm, rs, bufs, { portable: true });
    const run = async (v: Variant, calls: number): Promise<void> => {
      switch (v) {
        case 'C loop':
          loopC(0, send, recv ?? null, countsI, displsI, root, calls);
          return;
        case 'native from JS':
          for (let i = 0; i < calls; i++) native.gatherv(send, recv ?? null, countsI, displsI, root);
          return;
        case 'linear':
          for (let i = 0; i < calls; i++) await linear.start();
          return;
        case 'binomial':
          for (let i = 0; i < calls; i++) await binomial.start();
          return;
        case 'linear, blocking': {
          const go = blocking(linear);
          for (let i = 0; i < calls; i++) go();
          return;
        }
        case 'binomial, blocking': {
          const go = blocking(binomial);
          for (let i = 0; i < calls; i++) go();
          return;
        }
        case 'linear, portable':
          for (let i = 0; i < calls; i++) await portable.run();
          return;
      }
    };
    const perB: number[][] = VARIANTS.map(() => []);
    for (const v of VARIANTS) await run(v, Math.min(1000, args.calls)); // warm-up
    for (let r = 0; r < args.runs; r++) {
      const order = VARIANTS.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const j of order) {
        if (recv !== undefined) recv.fill(0);
        native.barrier();
        const t0 = world.wtime();
        await run(VARIANTS[j], args.calls);
        perB[j].push((world.wtime() - t0) / args.calls);
        if (recv !== undefined) {
          for (let i = 0; i < p * b && mismatch === undefined; i++) {
            if (recv[i] !== Math.floor(i / b) + 1) mismatch = `${VARIANTS[j]}, b = ${b}: byte ${i} is ${recv[i]}`;
          }
        }
      }
    }
    times.push(perB);
  }
  native.barrier();
  return { times: me === root ? times : [], library: world.info.library, ...(mismatch !== undefined ? { mismatch } : {}) };
}

async function main(): Promise<void> {
  const o = new Command()
    .name('bench:mpi-schedule')
    .option('--p <n>', 'MPI processes', parseIntegerOption('p', 2), 2)
    .option('--b <list>', 'bytes per rank', parseIntegerListOption('b', 0), [1, 100, 10000])
    .option('--calls <n>', 'back-to-back calls per run', parseIntegerOption('calls', 1), 100000)
    .option('--runs <n>', 'runs per variant', parseIntegerOption('runs', 1), 5)
    .parse()
    .opts<{ p: number; b: number[]; calls: number; runs: number }>();
  const t0 = performance.now();
  const ranks = await runMpi<RankResult>(o.p, new URL(import.meta.url), { bs: o.b, calls: o.calls, runs: o.runs } satisfies RankArgs, {
    timeoutMs: 600_000,
  });
  const r0 = ranks[0];
  const table = new Table({ head: ['b (bytes/rank)', 'variant', 'µs per call (median)', 'spread (min–max)', 'x C loop'] });
  o.b.forEach((b, k) => {
    const c = median(r0.times[k][0]);
    VARIANTS.forEach((v, j) => {
      const t = r0.times[k][j];
      const m = median(t);
      table.push([b, v, (m * 1e6).toFixed(3), `${(Math.min(...t) * 1e6).toFixed(3)}–${(Math.max(...t) * 1e6).toFixed(3)}`, (m / c).toFixed(2)]);
    });
  });
  console.log(`persistent gatherv over MPI, p = ${o.p}, ${o.calls} back-to-back calls per run, ${o.runs} runs (${r0.library.split('\n')[0]})`);
  console.log(table.toString());
  const bad = ranks.map((r) => r.mismatch).find((m) => m !== undefined);
  console.log(bad === undefined ? 'every verified call correct' : `MISMATCH: ${bad}`);
  console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);
  if (bad !== undefined) process.exitCode = 1;
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
