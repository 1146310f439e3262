/**
 * One rank's part of a `vcoll inter` run (src/run/inter.ts), the same on every transport: join
 * group A (world ranks 0…p−1) or B (the rest) of an intercommunicator, fill this rank's block
 * with a pattern, and run every requested intergroup allgather(v) algorithm `warmup + reps`
 * times, interleaved (round i runs each algorithm once, so a burst of load on a shared machine
 * hits them alike), each run timed between two synchronisations (the simulator's ideal barrier,
 * or a dissemination barrier and the wall clock on threads). The receive buffer is overwritten
 * before every run and every byte is checked after it. Also the worker-threads rank program
 * (default export).
 */
import { Buffer } from 'node:buffer';
import { barrier } from '../collectives/basic/barrier.js';
import { interAllgather, interAllgatherv } from '../collectives/inter/index.js';
import type { InterAllgatherAlgorithm } from '../collectives/inter/types.js';
import type { Communicator } from '../comm/communicator.js';
import { splitIntercomm } from '../comm/intercomm.js';
import { sizeFacts } from '../collectives/allgather/shared-layout.js';

export interface InterRankArgs {
  /** Run in this order in every round. */
  readonly algorithms: readonly InterAllgatherAlgorithm[];
  /** allgatherv (settings 5–8) rather than allgather. */
  readonly vector: boolean;
  /** Bytes of every rank of A ([0]) and of B ([1]). */
  readonly sizes: readonly (readonly number[])[];
  /** Untimed rounds first (default 0). */
  readonly warmup?: number;
  /** Timed rounds (default 1). */
  readonly reps?: number;
}

export interface InterRankResult {
  /** times[a][i]: algorithm a's i-th timed run on this rank (model units on the simulator, seconds on threads). */
  readonly times: number[][];
  /** Every run of algorithm a delivered every byte right. */
  readonly ok: boolean[];
}

const byteOf = (group: number, rank: number, i: number): number => (group * 101 + rank * 31 + i * 7 + 1) & 255;

/** The bytes every rank of a group must hold after a run: the remote blocks back to back, per (frozen) size list and group. */
const EXPECTED = new WeakMap<readonly number[], Map<number, Uint8Array>>();

/**
 * The remote blocks of `group` as every rank of the other group must receive them. Built once
 * per frozen size list and shared by the ranks of this process: on the simulator all P ranks
 * check against one copy (a memcmp each), not P² calls of byteOf.
 */
function expectedRecv(theirs: readonly number[], group: number): Uint8Array {
  let byGroup = EXPECTED.get(theirs);
  if (byGroup === undefined) {
    byGroup = new Map();
    EXPECTED.set(theirs, byGroup);
  }
  let want = byGroup.get(group);
  if (want === undefined) {
    want = new Uint8Array(sizeFacts(theirs).total);
    for (let r = 0, at = 0; r < theirs.length; r++) {
      const bytes = theirs[r]; // one read per block (element reads of a frozen array are slower in V8)
      for (let i = 0; i < bytes; i++) want[at + i] = byteOf(group, r, i);
      at += bytes;
    }
    byGroup.set(group, want);
  }
  return want;
}

function check(recv: Uint8Array, theirs: readonly number[], group: number): boolean {
  const want = expectedRecv(theirs, group);
  return recv.length === want.length && Buffer.compare(recv, want) === 0;
}

function frozen(xs: readonly number[]): readonly number[] {
  return Object.isFrozen(xs) ? xs : Object.freeze([...xs]);
}

export async function interRank(comm: Communicator, args: InterRankArgs): Promise<InterRankResult> {
  const p = args.sizes[0].length;
  const color = comm.rank < p ? 0 : 1;
  const inter = await splitIntercomm(comm, color);
  // frozen, so that the collectives share what they derive from them among the ranks of one
  // process (collectives/allgather/shared-layout.ts); on the simulator they already are (inter.ts)
  const [mine, theirs] = [args.sizes[color], args.sizes[1 - color]].map(frozen);
  const send = new Uint8Array(mine[inter.rank]);
  for (let i = 0; i < send.length; i++) send[i] = byteOf(color, inter.rank, i);
  const recv = new Uint8Array(sizeFacts(theirs).total); // (shared per frozen array: O(1) per rank)
  const clock = comm.clock;
  const now = (): number => (clock !== undefined ? clock.now() : performance.now() / 1000);
  const warmup = args.warmup ?? 0;
  const reps = args.reps ?? 1;
  const times = args.algorithms.map((): number[] => []);
  const ok = args.algorithms.map(() => true);
  for (let round = 0; round < warmup + reps; round++) {
    for (const [a, algorithm] of args.algorithms.entries()) {
      recv.fill(round % 2 === 0 ? 0 : 255); // a byte that never arrives fails the check in one of two rounds
      if (clock !== undefined) await clock.sync();
      else await barrier(comm);
      const t0 = now();
      if (args.vector) await interAllgatherv(inter, { send, recv, counts: theirs }, { algorithm });
      else await interAllgather(inter, { send, recv }, { algorithm });
      const time = now() - t0;
      if (round >= warmup) times[a].push(time);
      if (!check(recv, theirs, 1 - color)) ok[a] = false;
    }
  }
  return { times, ok };
}

export default function interThreadsProgram(comm: Communicator, args: InterRankArgs): Promise<InterRankResult> {
  return interRank(comm, args);
}
