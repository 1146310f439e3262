/**
 * A quick calibration of the linear model on the running transport: a ping-pong between
 * ranks 0 and 1 at a small and a large message size gives α (one-way latency) and β (time per
 * byte) as the line through the two one-way times (Hockney's fit, two points); a timed local
 * copy gives γ per byte. The other ranks wait in a barrier meanwhile. Rank 0 measures and broadcasts the result, so every rank builds its
 * trees with the same parameters. Times in microseconds.
 */
import { barrier, bcast } from '../collectives/basic/index.js';
import type { Communicator } from '../comm/communicator.js';

/** Measured per-byte linear model, µs. */
export interface Calibration {
  /** One-way start-up latency, µs. */
  readonly alphaUs: number;
  /** Per byte, µs. */
  readonly betaUs: number;
  /** Local copy per byte, µs. */
  readonly gammaUs: number;
  readonly smallBytes: number;
  readonly largeBytes: number;
}

export interface CalibrationOptions {
  readonly smallBytes?: number;
  readonly largeBytes?: number;
  /** Round trips at the small size (the large size uses a tenth, at least 5). */
  readonly iterations?: number;
}

const TAG = 7;

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
  const out = new Float64Array(3);
  // every rank has started (worker start-up compiles modules and would steal the cores)
  await barrier(comm);
  if (comm.rank < 2 && comm.size >= 2) {
    const small = await pingpong(comm, smallBytes, iterations, Math.ceil(iterations / 4));
    const bigIters = Math.max(5, Math.ceil(iterations / 10));
    const large = await pingpong(comm, largeBytes, bigIters, 2);
    if (comm.rank === 0) {
      const beta = Math.max(0, (large - small) / (largeBytes - smallBytes));
      out[0] = Math.max(0, small - beta * smallBytes);
      out[1] = beta;
    }
  }
  if (comm.rank === 0) out[2] = copyTime(largeBytes, 20);
  await bcast(comm, new Uint8Array(out.buffer), 0);
  return { alphaUs: out[0], betaUs: out[1], gammaUs: out[2], smallBytes, largeBytes };
}
