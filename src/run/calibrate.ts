/**
 * A quick calibration of the linear model, plus a round latency, on the running transport,
 * with all p ranks running (µs):
 * - α: what a rank pays per small message whose data is already there (rank 1 sends
 *   `overheadMessages` small messages, then after a barrier rank 0 receives them all; median
 *   of 5). That is the cost the one-ported model serialises at a root that receives from many
 *   ranks (linear), where the messages arrive while it works.
 * - round latency: a token passed around all p ranks, each waiting for it (median lap / p,
 *   minus α). That is what a dependent round costs beyond α: with 8 threads on 2 cores a
 *   waiting thread sleeps and must be woken, 100–300 µs against ~1–5 µs for α. A 2-rank
 *   ping-pong on otherwise idle cores measures neither: it spins on two free cores.
 * - β: the line through the one-way times of a ping-pong between ranks 0 and 1 at a small
 *   and a large size (Hockney's fit, two points; the round latency cancels out).
 * - γ: a timed local copy.
 * Rank 0 measures and broadcasts the result, so every rank builds its trees with the same
 * parameters. The round latency goes to auto (CollectiveOptions.auto.roundLatency): the tree
 * algorithms' planning and data rounds each pay it, linear pays it once.
 */
import { barrier, bcast } from '../collectives/basic/index.js';
import type { Communicator } from '../comm/communicator.js';

/** Measured per-byte linear model and round latency, µs. */
export interface Calibration {
  /** Per message: receiving a small message that is already there, µs (the model's α). */
  readonly alphaUs: number;
  /** Per byte, µs. */
  readonly betaUs: number;
  /** Local copy per byte, µs. */
  readonly gammaUs: number;
  /** Per dependent round beyond α: a small message to a rank that waits for it, all p ranks running, µs. */
  readonly roundUs: number;
  readonly smallBytes: number;
  readonly largeBytes: number;
}

export interface CalibrationOptions {
  readonly smallBytes?: number;
  readonly largeBytes?: number;
  /** Round trips at the small size (the large size uses a tenth, at least 5). */
  readonly iterations?: number;
  /** Laps of the token around all ranks (default 40). */
  readonly laps?: number;
  /** Messages of the overhead measurement (default 200; they must fit in a channel). */
  readonly overheadMessages?: number;
}

const TAG = 7;

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function pingpong(comm: Communicator, bytes: number, iterations: number, warmup: number): Promise<number> {
  const buf = new Uint8Array(bytes).fill(comm.rank + 1);
  const peer = 1 - comm.rank;
  let t0 = 0;
  for (let i = 0; i < warmup + iterations; i++) {
    if (i === warmup) t0 = performance.now();
    if (comm.rank === 0) {
      await comm.send(peer, TAG, buf);
      await comm.recv(peer, TAG, buf);
    } else {
      await comm.recv(peer, TAG, buf);
      await comm.send(peer, TAG, buf);
    }
  }
  // one-way time in µs
  return ((performance.now() - t0) * 1000) / iterations / 2;
}

/** Median time per hop of a token passed around all ranks (rank 0's measurement), µs. */
async function ringHop(comm: Communicator, laps: number, warmup: number): Promise<number> {
  const p = comm.size;
  const me = comm.rank;
  const token = new Uint8Array(8);
  const times: number[] = [];
  for (let l = 0; l < warmup + laps; l++) {
    if (me === 0) {
      const t0 = performance.now();
      await comm.send(1, TAG, token);
      await comm.recv(p - 1, TAG, token);
      if (l >= warmup) times.push(((performance.now() - t0) * 1000) / p);
    } else {
      await comm.recv(me - 1, TAG, token);
      await comm.send((me + 1) % p, TAG, token);
    }
  }
  return me === 0 ? median(times) : 0;
}

/** Median receive time per small message already in the channel (rank 1 → rank 0), µs. */
async function receiveOverhead(comm: Communicator, bytes: number, n: number): Promise<number> {
  const buf = new Uint8Array(bytes);
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    // non-blocking sends: a transport that completes sends only when they are received does not deadlock
    const sends = comm.rank === 1 ? Array.from({ length: n }, () => comm.isend(0, TAG, buf)) : [];
    await barrier(comm);
    if (comm.rank === 0) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await comm.recv(1, TAG, buf);
      times.push(((performance.now() - t0) * 1000) / n);
    }
    await comm.waitAll(sends);
    await barrier(comm);
  }
  return comm.rank === 0 ? median(times) : 0;
}

function copyTime(bytes: number, times: number): number {
  const src = new Uint8Array(bytes).fill(3);
  const dst = new Uint8Array(bytes);
  dst.set(src);
  const t0 = performance.now();
  for (let i = 0; i < times; i++) dst.set(src);
  return ((performance.now() - t0) * 1000) / times / bytes;
}

/** Collective over `comm`: every rank returns the same calibration (zeros when p = 1). */
export async function calibrate(comm: Communicator, options: CalibrationOptions = {}): Promise<Calibration> {
  const smallBytes = options.smallBytes ?? 8;
  const largeBytes = options.largeBytes ?? 256 * 1024;
  const iterations = options.iterations ?? 400;
  const laps = options.laps ?? 40;
  const overheadMessages = options.overheadMessages ?? 200;
  const out = new Float64Array(4);
  // every rank has started (worker start-up compiles modules and would steal the cores)
  await barrier(comm);
  if (comm.size >= 2) {
    const hop = await ringHop(comm, laps, Math.max(2, laps >> 3));
    await barrier(comm);
    const alpha = await receiveOverhead(comm, smallBytes, overheadMessages);
    if (comm.rank < 2) {
      const small = await pingpong(comm, smallBytes, iterations, Math.ceil(iterations / 4));
      const bigIters = Math.max(5, Math.ceil(iterations / 10));
      const large = await pingpong(comm, largeBytes, bigIters, 2);
      if (comm.rank === 0) {
        out[0] = alpha;
        out[1] = Math.max(0, (large - small) / (largeBytes - smallBytes));
        out[3] = Math.max(0, hop - alpha);
      }
    }
  }
  if (comm.rank === 0) out[2] = copyTime(largeBytes, 20);
  await bcast(comm, new Uint8Array(out.buffer), 0);
  return { alphaUs: out[0], betaUs: out[1], gammaUs: out[2], roundUs: out[3], smallBytes, largeBytes };
}
