/**
 * `vcoll inter`: seed 003's intergroup allgather / allgatherv settings (src/run/inter-settings.ts)
 * on the simulator: root gathering (what MPICH and Open MPI ship) against the paper's
 * Algorithm 1 (allgather) or Algorithm 2 (allgatherv), both verified byte for byte on every rank,
 * timed as the slowest rank between two ideal barriers.
 *
 * Model: homogeneous, full duplex (one send and one receive at a time, seed 003 §2): α = t_s per
 * message, β = t_w per byte. Scale: the simulator moves real bytes, and p·q·8 MiB does not fit in
 * memory; every block is simulated with ⌈bytes/scale⌉ real bytes and β·scale per real byte, so
 * the transfer terms keep their logical size (α terms are unchanged). `scale` is the smallest
 * power of two that keeps the run's buffers under `maxBytes` (reported).
 */
import type { Communicator } from '../comm/communicator.js';
import { splitIntercomm } from '../comm/intercomm.js';
import { interAllgather, interAllgatherv } from '../collectives/inter/index.js';
import type { InterAllgatherAlgorithm } from '../collectives/inter/types.js';
import { InvalidArgumentError } from '../errors.js';
import { linearModel } from '../model/cost-model.js';
import { runSim } from '../transports/sim/index.js';
import { expectedRatio, interSetting, type InterSettingNumber } from './inter-settings.js';

export interface InterRunOptions {
  readonly setting: InterSettingNumber;
  /** p + q. */
  readonly ranks: number;
  /** Bytes per rank of the larger block. */
  readonly size: number;
  /** Start-up time per message (model units). */
  readonly alpha: number;
  /** Time per byte (model units). */
  readonly beta: number;
  /** Bytes of all receive buffers together above which blocks are scaled down (default 128 MiB). */
  readonly maxBytes?: number;
}

/** The JSON contract of `vcoll inter --format json` (issue 4), plus context fields. */
export interface InterReport {
  readonly setting: InterSettingNumber;
  readonly p: number;
  readonly q: number;
  readonly kA: number;
  readonly kB: number;
  /** Virtual time of the root-gathering algorithm (slowest rank). */
  readonly rootGathering: number;
  /** Virtual time of Algorithm 1 (settings 1–4) or Algorithm 2 (5–8). */
  readonly algorithm: number;
  /** rootGathering / algorithm. */
  readonly ratio: number;
  /** Seed 003 Eq. (5) for these block sizes. */
  readonly expected: number;
  readonly verified: boolean;
  readonly size: number;
  readonly scale: number;
  readonly model: { readonly alpha: number; readonly beta: number; readonly ports: 'full-duplex' };
}

const byteOf = (group: number, rank: number, i: number): number => (group * 101 + rank * 31 + i * 7 + 1) & 255;

function pattern(group: number, rank: number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = byteOf(group, rank, i);
  return out;
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/** One run of `algorithm` on the simulator; returns the slowest rank's time and whether every rank's data was right. */
async function simulate(
  algorithm: InterAllgatherAlgorithm,
  vector: boolean,
  sizes: readonly (readonly number[])[],
  alpha: number,
  beta: number,
): Promise<{ time: number; verified: boolean }> {
  const p = sizes[0].length;
  const q = sizes[1].length;
  const model = linearModel({ alpha, beta, gamma: 0 });
  const res = await runSim(
    p + q,
    async (comm: Communicator) => {
      const color = comm.rank < p ? 0 : 1;
      const inter = await splitIntercomm(comm, color);
      const mine = sizes[color];
      const theirs = sizes[1 - color];
      const send = pattern(color, inter.rank, mine[inter.rank]);
      const recv = new Uint8Array(sum(theirs));
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator communicator has no clock');
      await clock.sync();
      const t0 = clock.now();
      if (vector) await interAllgatherv(inter, { send, recv, counts: theirs }, { algorithm });
      else await interAllgather(inter, { send, recv }, { algorithm });
      const time = clock.now() - t0;
      let ok = true;
      let at = 0;
      for (let r = 0; r < theirs.length && ok; r++) {
        for (let i = 0; i < theirs[r]; i++) {
          if (recv[at + i] !== byteOf(1 - color, r, i)) {
            ok = false;
            break;
          }
        }
        at += theirs[r];
      }
      return { time, ok };
    },
    { model, ports: 'full-duplex' },
  );
  return { time: Math.max(...res.results.map((r) => r.time)), verified: res.results.every((r) => r.ok) };
}

export async function runInter(o: InterRunOptions): Promise<InterReport> {
  if (!(o.alpha >= 0)) throw new InvalidArgumentError('alpha', `must be >= 0, got ${o.alpha}`);
  if (!(o.beta >= 0)) throw new InvalidArgumentError('beta', `must be >= 0, got ${o.beta}`);
  const s = interSetting(o.setting, o.ranks, o.size);
  const maxBytes = o.maxBytes ?? 128 * 2 ** 20;
  const logical = s.p * sum(s.sizesB) + s.q * sum(s.sizesA);
  let scale = 1;
  while (logical / scale > maxBytes) scale *= 2;
  const real = [s.sizesA, s.sizesB].map((xs) => xs.map((x) => Math.ceil(x / scale)));
  const beta = o.beta * scale;
  const root = await simulate('root-gathering', s.vector, real, o.alpha, beta);
  const alg = await simulate('segmented', s.vector, real, o.alpha, beta);
  return {
    setting: s.setting,
    p: s.p,
    q: s.q,
    kA: s.kA,
    kB: s.kB,
    rootGathering: root.time,
    algorithm: alg.time,
    ratio: alg.time > 0 ? root.time / alg.time : 1,
    expected: expectedRatio(s.sizesA, s.sizesB),
    verified: root.verified && alg.verified,
    size: o.size,
    scale,
    model: { alpha: o.alpha, beta: o.beta, ports: 'full-duplex' },
  };
}
