/**
 * One intergroup allgather(v) case as a rank program (simulator and worker threads): ranks
 * 0 … p−1 form group 0, p … p+q−1 group 1 (splitIntercomm); every byte is a fixed function of
 * (group, rank, offset); recv sits inside sentinel bytes (and, for allgatherv with `gaps`,
 * displacements leave sentinel gaps). Returns the first mismatch (or null) and the virtual time.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { splitIntercomm } from '../../src/comm/intercomm.js';
import { interAllgather, interAllgatherv, type InterAllgatherAlgorithm } from '../../src/collectives/inter/index.js';

export interface InterCase {
  readonly p: number;
  readonly q: number;
  readonly op: 'allgather' | 'allgatherv';
  readonly algorithm: InterAllgatherAlgorithm;
  /** Elements of every rank's block, per group ([group 0 sizes, group 1 sizes]); allgather: all equal. */
  readonly sizes: readonly [readonly number[], readonly number[]];
  readonly unitBytes?: number;
  /** allgatherv: leave a gap of (j mod 3) elements before remote block j. */
  readonly gaps?: boolean;
}

export interface InterResult {
  readonly mismatch: string | null;
  /** Virtual time of the collective (simulator), else 0. */
  readonly time: number;
}

export const SENTINEL = 0xe7;
const PAD = 5;

export function dataByte(group: number, rank: number, offset: number): number {
  return (group * 101 + rank * 37 + offset * 11 + ((offset >> 8) * 3) + 1) & 255;
}

export default async function interProgram(comm: Communicator, c: InterCase): Promise<InterResult> {
  const group = comm.rank < c.p ? 0 : 1;
  const inter = await splitIntercomm(comm, group as 0 | 1);
  const unit = c.unitBytes ?? 1;
  const r = inter.rank;
  const myCount = c.sizes[group][r];
  const send = new Uint8Array(myCount * unit);
  for (let b = 0; b < send.length; b++) send[b] = dataByte(group, r, b);
  const remote = c.sizes[1 - group];
  const displs: number[] = [];
  let at = 0;
  for (let j = 0; j < remote.length; j++) {
    if (c.gaps === true) at += j % 3;
    displs.push(at);
    at += remote[j];
  }
  const big = new Uint8Array(at * unit + 2 * PAD).fill(SENTINEL);
  const recv = big.subarray(PAD, PAD + at * unit);
  const clock = comm.clock;
  if (clock !== undefined) await clock.sync();
  const t0 = clock?.now() ?? 0;
  if (c.op === 'allgather') await interAllgather(inter, { send, recv }, { algorithm: c.algorithm });
  else await interAllgatherv(inter, { send, recv, counts: remote, displs: c.gaps === true ? displs : undefined, unitBytes: unit }, { algorithm: c.algorithm });
  if (clock !== undefined) await clock.sync();
  const time = (clock?.now() ?? 0) - t0;
  // Expected image of big.
  const want = new Uint8Array(big.length).fill(SENTINEL);
  for (let j = 0; j < remote.length; j++) {
    for (let b = 0; b < remote[j] * unit; b++) want[PAD + displs[j] * unit + b] = dataByte(1 - group, j, b);
  }
  for (let i = 0; i < big.length; i++) {
    if (big[i] !== want[i]) return { mismatch: `group ${group} rank ${r}: byte ${i - PAD} is ${big[i]}, expected ${want[i]}`, time };
  }
  return { mismatch: null, time };
}
