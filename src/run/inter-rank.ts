/**
 * One rank's part of a `vcoll inter` run (src/run/inter.ts), the same on every transport: join
 * group A (world ranks 0…p−1) or B (the rest) of an intercommunicator, fill this rank's block
 * with a pattern, time one intergroup allgather(v) between two synchronisations (the
 * simulator's ideal barrier, or a dissemination barrier and the wall clock on threads), and
 * check every byte received. Also the worker-threads rank program (default export).
 */
import { barrier } from '../collectives/basic/barrier.js';
import { interAllgather, interAllgatherv } from '../collectives/inter/index.js';
import type { InterAllgatherAlgorithm } from '../collectives/inter/types.js';
import type { Communicator } from '../comm/communicator.js';
import { splitIntercomm } from '../comm/intercomm.js';

export interface InterRankArgs {
  readonly algorithm: InterAllgatherAlgorithm;
  /** allgatherv (settings 5–8) rather than allgather. */
  readonly vector: boolean;
  /** Bytes of every rank of A ([0]) and of B ([1]). */
  readonly sizes: readonly (readonly number[])[];
}

export interface InterRankResult {
  /** This rank's time: model units on the simulator, seconds on threads. */
  readonly time: number;
  readonly ok: boolean;
}

const byteOf = (group: number, rank: number, i: number): number => (group * 101 + rank * 31 + i * 7 + 1) & 255;

export async function interRank(comm: Communicator, args: InterRankArgs): Promise<InterRankResult> {
  const p = args.sizes[0].length;
  const color = comm.rank < p ? 0 : 1;
  const inter = await splitIntercomm(comm, color);
  const mine = args.sizes[color];
  const theirs = args.sizes[1 - color];
  const send = new Uint8Array(mine[inter.rank]);
  for (let i = 0; i < send.length; i++) send[i] = byteOf(color, inter.rank, i);
  const recv = new Uint8Array(theirs.reduce((a, b) => a + b, 0));
  const clock = comm.clock;
  const now = (): number => (clock !== undefined ? clock.now() : performance.now() / 1000);
  if (clock !== undefined) await clock.sync();
  else await barrier(comm);
  const t0 = now();
  if (args.vector) await interAllgatherv(inter, { send, recv, counts: theirs }, { algorithm: args.algorithm });
  else await interAllgather(inter, { send, recv }, { algorithm: args.algorithm });
  const time = now() - t0;
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
}

export default function interThreadsProgram(comm: Communicator, args: InterRankArgs): Promise<InterRankResult> {
  return interRank(comm, args);
}
