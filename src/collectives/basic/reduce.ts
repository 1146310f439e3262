/**
 * reduce: x₀ ⊕ x₁ ⊕ … ⊕ x_{p−1} (rank order) into the root's `recv`, over the ordered binomial
 * tree of tree.ts (Chan et al. 2007 as cited by Traff18 §1). Every subtree is a contiguous
 * range of ranks; a rank combines its children's partial results with its own in the reverse
 * order of a broadcast, each time a range adjacent to what it holds, lower range as the left
 * operand — so non-commutative operators are correct for every root, with no extra message.
 *
 * Cost (one-ported, n bytes): ⌈log₂p⌉(α + βn) plus the local combining (not charged by the
 * simulator) and a γn copy of `send` on every non-leaf rank (and one more at the root when
 * it had to combine into a buffer other than `recv`). Leaves send `send` itself.
 * Every rank passes arrays of the same type and length (a receiver sees a different byte
 * length: InvalidArgumentError('send') or a truncation CommunicationError). The data phase
 * is a schedule with combine operations (reduce-schedule.ts), run by the transport's executor.
 */
import type { Communicator } from '../../comm/communicator.js';
import { resolveOp, type NumericArray, type ReduceOp } from './ops.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { checkNumeric, checkRoot, checkSameShape } from './validate.js';
import { beginCall } from '../call-scope.js';
import { reduceSchedule, runReduceSchedule } from './reduce-schedule.js';
import { scheduleOfShape } from './schedule.js';

export interface ReduceArgs<T extends NumericArray> {
  readonly send: T;
  /** Root only: same type and length as `send` (may be `send` itself); ignored elsewhere. */
  readonly recv?: T;
  readonly root: number;
  readonly op: ReduceOp<T>;
}

export async function reduce<T extends NumericArray>(comm: Communicator, args: ReduceArgs<T>): Promise<void> {
  comm = beginCall(comm);
  const root = checkRoot(comm, args.root);
  const send = checkNumeric<T>(comm, 'send', args.send);
  const combine = resolveOp(args.op, send, comm.rank);
  const rank = comm.rank;
  const recv = rank === root ? checkSameShape(comm, 'recv', args.recv, send, 'send') : undefined;
  const inPlace = recv === send;
  // the data phase is a schedule (reduce-schedule.ts): one native run per call
  const p = comm.size;
  const n = send.byteLength;
  const rs = scheduleOfShape(`reduce ${p} ${root} ${rank} ${n} ${inPlace ? 1 : 0}`, () => reduceSchedule(p, root, rank, n, BASIC_TAG.reduce, inPlace));
  await runReduceSchedule(comm, rs, send, recv, combine, args.op);
}
