/**
 * Ping-pong latency and bandwidth of the threads transport (runThreads + the world
 * communicator over SPSC SharedArrayBuffer channels) against bare SharedArrayBuffer + Atomics
 * ping-pongs between two worker threads, all measured in the same process.
 *
 *   npm run bench:pingpong -- [--quick] [--runs N] [--rounds N] [--iterations N] [--ring BYTES]
 *                             [--spin LOADS] [--sizes 8,65536,4194304]
 *
 * One-way time = round trip / 2; every figure is the minimum over `rounds` timed rounds inside a
 * run and over `runs` runs (the variants alternate between runs), so that load from other
 * processes inflates it as little as possible: rounds are short (`--iterations` round trips of
 * 8 bytes, fewer for longer messages, ~0.5 ms), so that on a busy machine some of them run
 * without either thread being descheduled. Variants (waiting discipline of both sides):
 *
 *   bare spin              spins on the flag word without bound (never sleeps, never notifies)
 *   bare spin+wait         spins `--spin` loads, then blocks the thread in Atomics.wait;
 *                          Atomics.notify after every store
 *   bare spin+waitAsync    spins `--spin` loads, then awaits Atomics.waitAsync (the thread's
 *                          event loop stays free: the discipline of the transport)
 *   channel                the transport spinning `--spin` loads (runThreads' spinLoads) on the
 *                          rank's doorbell, then sleeping in Atomics.waitAsync
 *   channel, no sleep      the transport with an unbounded spin (spinLoads: Infinity)
 *
 * The bare variants copy the message into one shared buffer and the peer copies it out (two
 * copies per one-way trip, as through a channel's ring). The fair comparison for the goal
 * (≤ 1.5x) is `channel` against `bare spin+waitAsync`; `channel, no sleep` against `bare spin`
 * isolates the transport's own per-message cost.
 *
 * This file is also the rank program that runThreads loads (its default export).
 */

import { isMainThread, Worker } from 'node:worker_threads';
import type { Communicator } from '../src/comm/communicator.js';
import { waitAsync } from '../src/transports/threads/channel.js';
import { defaultSpinLoads } from '../src/transports/threads/endpoint.js';
import { runThreads } from '../src/transports/threads/run.js';

interface Case {
  readonly bytes: number;
  readonly iterations: number;
  readonly warmup: number;
}

interface PingArgs {
  readonly cases: readonly Case[];
  readonly rounds: number;
  /**
   * Shared memory of the interleaved bare ping-pong (flag word at 0, data from byte 64),
   * absent for runs that time the channel alone.
   */
  readonly bare?: { readonly sab: SharedArrayBuffer; readonly spin: number };
}

/** Per case: the minimum mean round trip in ns through the channel, and of the bare loop. */
interface PingResult {
  /** Per case, the ratio channel / bare of each round pair (empty without `args.bare`). */
  readonly paired: number[][];
  readonly channel: number[];
  readonly bare: number[];
}

/**
 * The bare loop run by the same two threads between channel rounds: copy the message into the
 * shared area, bump the flag and notify; wait for the reply spinning `spin` loads, then in
 * Atomics.waitAsync (the waiting discipline of the transport); copy the reply out.
 */
class BarePing {
  private readonly flag: Int32Array;
  private seq = 0;

  constructor(
    private readonly sab: SharedArrayBuffer,
    private readonly spin: number,
  ) {
    this.flag = new Int32Array(sab, 0, 1);
  }

  private async waitFor(target: number): Promise<void> {
    const flag = this.flag;
    for (let i = 0; i < this.spin; i++) if (Atomics.load(flag, 0) === target) return;
    let v: number;
    while ((v = Atomics.load(flag, 0)) !== target) {
      const r = waitAsync(flag, 0, v);
      if (r.async) await r.value;
    }
  }

  private post(value: number): void {
    Atomics.store(this.flag, 0, value);
    Atomics.notify(this.flag, 0);
  }

  /** One timed round of the bare loop; returns the mean round trip in ns. */
  async round(side: number, c: Case): Promise<number> {
    const shared = new Uint8Array(this.sab, 64, Math.max(c.bytes, 1)).subarray(0, c.bytes);
    const local = new Uint8Array(c.bytes).fill(side + 1);
    let t0 = 0n;
    for (let i = 0; i < c.warmup + c.iterations; i++) {
      if (i === c.warmup) t0 = process.hrtime.bigint();
      if (side === 0) {
        shared.set(local);
        this.post(++this.seq);
        await this.waitFor(++this.seq);
        local.set(shared);
      } else {
        await this.waitFor(++this.seq);
        local.set(shared);
        shared.set(local);
        this.post(++this.seq);
      }
    }
    return Number(process.hrtime.bigint() - t0) / c.iterations;
  }
}

/** One timed round through the communicator; returns the mean round trip in ns. */
async function channelRound(comm: Communicator, c: Case, buf: Uint8Array): Promise<number> {
  const peer = 1 - comm.rank;
  let t0 = 0n;
  for (let i = 0; i < c.warmup + c.iterations; i++) {
    if (i === c.warmup) t0 = process.hrtime.bigint();
    if (comm.rank === 0) {
      await comm.send(peer, 0, buf);
      await comm.recv(peer, 0, buf);
    } else {
      await comm.recv(peer, 0, buf);
      await comm.send(peer, 0, buf);
    }
  }
  return Number(process.hrtime.bigint() - t0) / c.iterations;
}

/**
 * Rank program: rank 0 pings rank 1. With `args.bare`, every round times the channel and the
 * bare loop back to back in these same two threads (alternating which goes first), so both
 * see the same cores, placement and machine load.
 */
export default async function pingpong(comm: Communicator, args: PingArgs): Promise<PingResult> {
  const bare = args.bare === undefined ? undefined : new BarePing(args.bare.sab, args.bare.spin);
  const out: PingResult = { paired: [], channel: [], bare: [] };
  for (const c of args.cases) {
    const buf = new Uint8Array(c.bytes).fill(comm.rank + 1);
    let bestChannel = Infinity;
    let bestBare = Infinity;
    const paired: number[] = [];
    for (let round = 0; round < args.rounds; round++) {
      let b = Infinity;
      if (bare !== undefined && round % 2 === 1) b = await bare.round(comm.rank, c);
      const ch = await channelRound(comm, c, buf);
      if (bare !== undefined && round % 2 === 0) b = await bare.round(comm.rank, c);
      bestChannel = Math.min(bestChannel, ch);
      bestBare = Math.min(bestBare, b);
      if (bare !== undefined) paired.push(ch / b);
    }
    out.channel.push(bestChannel);
    out.bare.push(bestBare);
    out.paired.push(paired);
  }
  return out;
}

type BareMode = 'spin' | 'spin+wait' | 'spin+waitAsync';

/**
 * The baseline (CommonJS, eval'd in a worker): a flag word and a data area shared by two
 * workers; each copies its message in, bumps the flag (notifying unless it only spins) and
 * waits for the reply with the given discipline.
 */
const BARE = `
const { workerData, parentPort } = require('node:worker_threads');
const { sab, side, cases, rounds, mode, spin } = workerData;
const flag = new Int32Array(sab, 0, 1);
let seq = 0;
async function waitFor(target) {
  if (mode === 'spin') { while (Atomics.load(flag, 0) !== target); return; }
  for (let i = 0; i < spin; i++) if (Atomics.load(flag, 0) === target) return;
  let v;
  while ((v = Atomics.load(flag, 0)) !== target) {
    if (mode === 'spin+wait') Atomics.wait(flag, 0, v);
    else { const r = Atomics.waitAsync(flag, 0, v); if (r.async) await r.value; }
  }
}
function post(value) {
  Atomics.store(flag, 0, value);
  if (mode !== 'spin') Atomics.notify(flag, 0);
}
// A pending Atomics.waitAsync does not keep a worker alive.
const keepAlive = setInterval(() => {}, 1 << 30);
(async () => {
  const out = [];
  for (const c of cases) {
    const shared = new Uint8Array(sab, 64, Math.max(c.bytes, 1)).subarray(0, c.bytes);
    const local = new Uint8Array(c.bytes).fill(side + 1);
    let best = Infinity;
    for (let round = 0; round < rounds; round++) {
      let t0 = 0n;
      for (let i = 0; i < c.warmup + c.iterations; i++) {
        if (i === c.warmup) t0 = process.hrtime.bigint();
        if (side === 0) {
          shared.set(local); post(++seq);
          await waitFor(++seq);
          local.set(shared);
        } else {
          await waitFor(++seq);
          local.set(shared);
          shared.set(local); post(++seq);
        }
      }
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / c.iterations);
    }
    out.push(best);
  }
  clearInterval(keepAlive);
  parentPort.postMessage(out);
})();
`;

async function bare(mode: BareMode, args: PingArgs, spin: number): Promise<number[]> {
  const max = Math.max(1, ...args.cases.map((c) => c.bytes));
  const sab = new SharedArrayBuffer(64 + max);
  const run = (side: number): Promise<number[]> =>
    new Promise((resolve, reject) => {
      const w = new Worker(BARE, { eval: true, workerData: { sab, side, mode, spin, ...args } });
      w.once('message', (ns: number[]) => {
        resolve(ns);
        void w.terminate();
      });
      w.once('error', reject);
      w.once('exit', (code) => reject(new Error(`bare ${mode} worker exited (${code}) before reporting`)));
    });
  const [ns] = await Promise.all([run(0), run(1)]);
  return ns;
}

async function channel(args: PingArgs, channelBytes: number, spinLoads: number): Promise<PingResult> {
  const [res] = await runThreads<PingResult>(2, new URL(import.meta.url), args, { channelBytes, spinLoads });
  return res;
}

function option(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

function label(bytes: number): string {
  return bytes >= 1 << 20 ? `${bytes >> 20} MiB` : bytes >= 1024 ? `${bytes >> 10} KiB` : `${bytes} B`;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const runs = option('runs', quick ? 1 : 3);
  const rounds = option('rounds', quick ? 4 : 40);
  const perRound = option('iterations', quick ? 200 : 500);
  const channelBytes = option('ring', 64 * 1024);
  const spin = option('spin', defaultSpinLoads());
  const sizesAt = process.argv.indexOf('--sizes');
  const sizes = sizesAt > 0 ? process.argv[sizesAt + 1].split(',').map(Number) : [8, 64 * 1024, 4 * 1024 * 1024];
  // Fewer round trips per round for longer messages (a 4 MiB one-way trip takes ~0.5 ms).
  const cases: Case[] = sizes.map((bytes) => {
    const iterations = Math.max(quick ? 5 : 10, Math.round(perRound / Math.max(1, bytes / 8192)));
    return { bytes, iterations, warmup: Math.max(3, iterations >> 3) };
  });
  const args: PingArgs = { cases, rounds };
  const max = Math.max(1, ...sizes);
  // 'channel' and 'bare, same threads' come from one run: rounds of each alternate in the same
  // two worker threads (the fair comparison: same cores, same moment, same load).
  let interleaved: PingResult | undefined;
  const variants: [string, () => Promise<number[]>][] = [
    ['bare spin', () => bare('spin', args, spin)],
    ['bare spin+wait', () => bare('spin+wait', args, spin)],
    ['bare spin+waitAsync', () => bare('spin+waitAsync', args, spin)],
    [
      'channel',
      async () => {
        interleaved = await channel({ ...args, bare: { sab: new SharedArrayBuffer(64 + max), spin } }, channelBytes, spin);
        interleaved.paired.forEach((rs, c) => paired[c].push(...rs));
        return interleaved.channel;
      },
    ],
    ['bare, same threads', () => Promise.resolve((interleaved as PingResult).bare)],
    ['channel, no sleep', async () => (await channel(args, channelBytes, Infinity)).channel],
  ];
  const best = variants.map(() => cases.map(() => Infinity));
  const paired: number[][] = cases.map(() => []);
  for (let r = 0; r < runs; r++) {
    const order = variants.map((_, i) => i);
    if (r % 2 === 1) {
      // Reverse the order of the runs, keeping 'bare, same threads' right after 'channel'.
      order.reverse();
      const at = order.indexOf(idxOf('channel'));
      order.splice(at - 1, 2, idxOf('channel'), idxOf('bare, same threads'));
    }
    for (const v of order) {
      const ns = await variants[v][1]();
      ns.forEach((t, c) => (best[v][c] = Math.min(best[v][c], t / 2)));
    }
  }
  function idxOf(name: string): number {
    return variants.findIndex(([n]) => n === name);
  }
  console.log(
    `ping-pong, one-way time = round trip / 2, minimum over ${runs} run(s) x ${rounds} round(s) of ${perRound} round trips (8 B); ` +
      `ring ${channelBytes} B; spin budget ${spin} loads`,
  );
  for (let c = 0; c < cases.length; c++) {
    console.log(`\n${label(cases[c].bytes)} (${cases[c].iterations} iterations per round)`);
    console.log('  variant               one-way µs      GB/s');
    for (let v = 0; v < variants.length; v++) {
      const ns = best[v][c];
      console.log(
        `  ${variants[v][0].padEnd(20)} ${(ns / 1000).toFixed(3).padStart(11)} ${(cases[c].bytes / ns).toFixed(3).padStart(9)}`,
      );
    }
    const ratio = (a: string, b: string): string => (best[idxOf(a)][c] / best[idxOf(b)][c]).toFixed(2);
    const sorted = [...paired[c]].sort((x, y) => x - y);
    const median = sorted.length === 0 ? NaN : sorted[sorted.length >> 1];
    console.log(
      `  paired: median over ${sorted.length} round pairs of channel round / bare round (same threads, back to back) = ` +
        `${median.toFixed(2)} (goal <= 1.5; quartiles ${sorted[sorted.length >> 2]?.toFixed(2)}–${sorted[(3 * sorted.length) >> 2]?.toFixed(2)})`,
    );
    console.log(
      `  ratios of minima: channel / bare (spin+waitAsync, same threads) = ${ratio('channel', 'bare, same threads')}` +
        `; channel / bare spin+waitAsync (own threads) = ${ratio('channel', 'bare spin+waitAsync')}` +
        `, channel / bare spin+wait = ${ratio('channel', 'bare spin+wait')}` +
        `, channel no sleep / bare spin = ${ratio('channel, no sleep', 'bare spin')}`,
    );
  }
}

if (isMainThread) await main();
