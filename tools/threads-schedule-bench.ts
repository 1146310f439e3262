/**
 * The threads transport's native schedule executor (transports/threads/schedule.ts) against
 * one channel message and against the portable executor: a persistent linear gatherv data
 * phase (compileVSchedule('gatherv', 'linear', counts, { root: 0 }), b bytes per rank), bound
 * with bindSchedule on every rank of runThreads and started back to back.
 *
 *   npx tsx tools/threads-schedule-bench.ts [--p 2,4,8] [--bytes 1,100] [--starts 20000]
 *                                           [--sync 16] [--rounds 5] [--runs 3] [--spin LOADS]
 *                                           [--in-thread]
 *
 * Per p, `runs` separate runThreads runs (fresh workers); in each, per size, `rounds` rounds of
 * every variant in turn (after a warm-up of the same length), the median round per variant:
 *
 *   plan.start()  gathervInit(…, { algorithm: 'linear' }) then `await plan.start()` × starts: the
 *               persistent plan, which runs the same schedule through the same executor
 *   native      every rank: `bound.run()` × starts (the transport's executor), awaited only when
 *               it did not complete within the call (run() returns a request: one already
 *               settled needs no await), with a sync every `sync` starts (the root sends an
 *               empty message to every rank, which waits for it: no rank runs ahead by more,
 *               and no unexpected queue grows without bound), then a barrier; µs per start =
 *               the root's time / starts (syncs and barrier amortized)
 *   native+await  the same, every run awaited (`await bound.run()`: awaiting a settled request,
 *               a thenable, costs some microtask turns)
 *   portable    the same with bindSchedule(…, { portable: true }) (a request and a promise per
 *               operation: schedule/run.ts)
 *   one-way     rank 1: `await comm.send(0, …)` × starts, rank 0: `await comm.recv(1, …)` ×
 *               starts, the same syncs, then the barrier: one channel message of b bytes,
 *               streamed, timed as the schedule is (the other ranks only join the syncs)
 *   ping-pong/2 half a round trip of b bytes between ranks 0 and 1 (tools/pingpong.ts' one-way
 *               latency), for reference
 *
 * Prints, per p and b, every run's µs per start and its ratio to `one-way` of the same run
 * (the target: native ≤ 2x at p = 2), and the spread (min–max) over runs.
 *
 * `--in-thread`: every rank's endpoint in the main thread (no workers, no spinning): the time
 * per start is then the CPU work of all ranks for it, independent of how many cores there are
 * (runThreads with more ranks than cores measures the OS scheduler more than the transport).
 *
 * This file is also the rank program that runThreads loads (its default export).
 */

import { gathervInit } from '../src/collectives/index.js';
import { isMainThread } from 'node:worker_threads';
import { barrier } from '../src/collectives/basic/barrier.js';
import { compileVSchedule } from '../src/collectives/v-schedule.js';
import type { Communicator } from '../src/comm/communicator.js';
import { OpRequest } from '../src/comm/request.js';
import { bindSchedule } from '../src/schedule/run.js';
import { createWorldCommunicator } from '../src/comm/group.js';
import { ThreadsEndpoint } from '../src/transports/threads/endpoint.js';
import { runThreads } from '../src/transports/threads/run.js';
import { bellOf, channelSource, createLayout, failureWordOf } from '../src/transports/threads/shared-layout.js';

interface BenchArgs {
  readonly sizes: readonly number[];
  readonly starts: number;
  readonly rounds: number;
  /** Starts (messages) between two syncs. */
  readonly sync: number;
}

const VARIANTS = ['plan.start()', 'native', 'native+await', 'portable', 'one-way', 'ping-pong/2'] as const;
type Variant = (typeof VARIANTS)[number];

/** Per size: per variant, the median µs per start (or per one-way message) over rounds (rank 0's). */
type BenchResult = Record<Variant, number>[];

const TAG = 11;

/** Round trips of a ping-pong round (fewer: a round trip costs far more than a streamed message). */
const pingPongs = (n: number): number => Math.max(1, Math.floor(n / 20));

const SYNC_TAG = 12;
const NOTHING = new Uint8Array(0);

/**
 * The sync between groups of starts: the root sends an empty message to every other rank,
 * which waits for it (so no rank runs more than `sync` starts ahead of the root, and the
 * root's unexpected queue stays short).
 */
async function syncRanks(comm: Communicator, p: number): Promise<void> {
  if (comm.rank === 0) for (let r = 1; r < p; r++) await comm.send(r, SYNC_TAG, NOTHING);
  else await comm.recv(0, SYNC_TAG, NOTHING);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export default async function bench(comm: Communicator, args: BenchArgs): Promise<BenchResult> {
  const me = comm.rank;
  const p = comm.size;
  const n = args.starts;
  const sync = args.sync;
  const out: BenchResult = [];
  for (const b of args.sizes) {
    const counts = new Array<number>(p).fill(b);
    const rs = compileVSchedule('gatherv', 'linear', counts, { root: 0 }).ranks[me];
    const bufs = rs.buffers.map((x) => new Uint8Array(x.bytes).fill(me + 1));
    const native = bindSchedule(comm, rs, bufs);
    const portable = bindSchedule(comm, rs, bufs, { portable: true });
    const send = new Uint8Array(b).fill(me + 1);
    const plan = await gathervInit(comm, me === 0 ? { root: 0, send, recv: new Uint8Array(p * b), counts } : { root: 0, send }, { algorithm: 'linear' });
    const msg = new Uint8Array(b).fill(me + 1);
    const run = async (v: Variant): Promise<number> => {
      await barrier(comm);
      const t0 = process.hrtime.bigint();
      if (v === 'native' || v === 'portable') {
        const bound = v === 'native' ? native : portable;
        for (let i = 0; i < n; i++) {
          const req = bound.run();
          // A run that completed within the call is not awaited (a request, not a promise:
          // awaiting a thenable costs three microtask turns).
          if (!(req instanceof OpRequest) || req.pending || req.failed) await req;
          if (i % sync === sync - 1) await syncRanks(comm, p);
        }
      } else if (v === 'plan.start()') {
        for (let i = 0; i < n; i++) {
          await plan.start();
          if (i % sync === sync - 1) await syncRanks(comm, p);
        }
      } else if (v === 'native+await') {
        for (let i = 0; i < n; i++) {
          await native.run();
          if (i % sync === sync - 1) await syncRanks(comm, p);
        }
      } else if (v === 'one-way') {
        for (let i = 0; i < n; i++) {
          if (me === 0) await comm.recv(1, TAG, msg);
          else if (me === 1) await comm.send(0, TAG, msg);
          if (i % sync === sync - 1) await syncRanks(comm, p);
        }
      } else {
        const m = pingPongs(n);
        if (me === 0) {
          for (let i = 0; i < m; i++) {
            await comm.send(1, TAG, msg);
            await comm.recv(1, TAG, msg);
          }
        } else if (me === 1) {
          for (let i = 0; i < m; i++) {
            await comm.recv(0, TAG, msg);
            await comm.send(0, TAG, msg);
          }
        }
      }
      await barrier(comm);
      return Number(process.hrtime.bigint() - t0) / 1000 / (v === 'ping-pong/2' ? 2 * pingPongs(n) : n);
    };
    const times: Record<Variant, number[]> = { 'plan.start()': [], native: [], 'native+await': [], portable: [], 'one-way': [], 'ping-pong/2': [] };
    for (const v of VARIANTS) await run(v); // warm-up
    for (let r = 0; r < args.rounds; r++) {
      // the variants in turn, the order rotated per round
      for (let k = 0; k < VARIANTS.length; k++) {
        const v = VARIANTS[(k + r) % VARIANTS.length];
        times[v].push(await run(v));
      }
    }
    const row = {} as Record<Variant, number>;
    for (const v of VARIANTS) row[v] = median(times[v]);
    out.push(row);
  }
  return out;
}

/**
 * p endpoints of the threads transport in this thread (--in-thread), as the workers build them
 * (spinLoads 0: a rank of this thread cannot answer while another spins).
 */
function endpoints(p: number): ThreadsEndpoint[] {
  const layout = createLayout(p, 64 * 1024);
  const words = new Int32Array(layout.bells);
  return Array.from(
    { length: p },
    (_, rank) =>
      new ThreadsEndpoint({
        rank,
        size: p,
        channels: channelSource(layout, rank, words),
        bell: bellOf(layout, rank, undefined, words),
        failure: failureWordOf(layout, words),
        spinLoads: 0,
      }),
  );
}

function option(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
}

async function main(): Promise<void> {
  const ps = option('p', '2,4,8').split(',').map(Number);
  const sizes = option('bytes', '1,100').split(',').map(Number);
  const starts = Number(option('starts', '20000'));
  const rounds = Number(option('rounds', '5'));
  const runs = Number(option('runs', '3'));
  const sync = Number(option('sync', '16'));
  const spin = option('spin', '');
  const options = spin === '' ? {} : { spinLoads: Number(spin) };
  const inThread = process.argv.includes('--in-thread');
  console.log(
    `threads${inThread ? ' (every rank in this one thread: CPU work per start)' : ''}: persistent linear gatherv data phase (root 0), ${starts} starts per round, a sync every ${sync}, median of ${rounds} rounds, ${runs} runs`,
  );
  console.log('µs per start (one-way: per message; ratio: to one-way of the same run)');
  for (const p of ps) {
    const results: BenchResult[] = [];
    for (let k = 0; k < runs; k++) {
      const args: BenchArgs = { sizes, starts, rounds, sync };
      if (inThread) results.push((await Promise.all(endpoints(p).map((ep) => bench(createWorldCommunicator(ep, { endpointChecks: true }), args))))[0]);
      else results.push((await runThreads<BenchResult>(p, new URL(import.meta.url), args, options))[0]);
    }
    sizes.forEach((b, i) => {
      console.log(`\np = ${p}, b = ${b} B per rank`);
      for (const v of VARIANTS) {
        const xs = results.map((r) => r[i][v]);
        const ratios = results.map((r) => r[i][v] / r[i]['one-way']);
        const fmt = (x: number): string => x.toFixed(3);
        console.log(
          `  ${v.padEnd(12)} ${xs.map(fmt).join('  ')}  (spread ${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})   ratio ${ratios.map((x) => x.toFixed(2)).join('  ')}  (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
        );
      }
    });
  }
}

if (isMainThread) await main();
