/**
 * exscan: exclusive prefix reduction, rank r > 0 gets x₀ ⊕ … ⊕ x_{r−1} in `recv`; rank 0's
 * `recv` is left untouched (undefined per MPI). Recursive doubling in ⌈log₂p⌉ rounds (the
 * MPICH algorithm; Chan et al. 2007 as cited by Traff18 §1): in round k a rank exchanges its
 * partial reduction over its aligned group of 2^k ranks with rank ⊕ 2^k (if that rank exists);
 * a rank whose partner is lower folds the partner's value into both its partial reduction
 * and its prefix. The lower range is always the left operand: non-commutative operators are
 * correct.
 *
 * Cost (n bytes, full duplex): ⌈log₂p⌉(α + βn) plus local combining and γn copies (send into
 * the work buffer, one per round that extends the prefix, the prefix into recv); one-ported
 * half duplex: every exchange takes two transfers. The data phase is a schedule with combine
 * operations (reduce-schedule.ts), run by the transport's executor.
 */
import type { Communicator } from '../../comm/communicator.js';
import { resolveOp, type NumericArray, type ReduceOp } from './ops.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { checkNumeric, checkSameShape } from './validate.js';
import { exscanSchedule, runReduceSchedule } from './reduce-schedule.js';
import { scheduleOfShape } from './schedule.js';
import { beginCall } from '../call-scope.js';

export interface ExscanArgs<T extends NumericArray> {
  readonly send: T;
  /** Same type and length as `send`; may be omitted at rank 0 (not written there). */
  readonly recv?: T;
  readonly op: ReduceOp<T>;
}

export async function exscan<T extends NumericArray>(comm: Communicator, args: ExscanArgs<T>): Promise<void> {
  comm = beginCall(comm);
  const send = checkNumeric<T>(comm, 'send', args.send);
  const { rank, size: p } = comm;
  const recv = rank === 0 && args.recv === undefined ? undefined : checkSameShape(comm, 'recv', args.recv, send, 'send');
  const combine = resolveOp(args.op, send, rank);
  const tag = BASIC_TAG.exscan;
  const nbytes = send.byteLength;
  if (p === 1) return;
  // the data phase is a schedule (reduce-schedule.ts): one native run per call
  const hasRecv = recv !== undefined;
  const rs = scheduleOfShape(`exscan ${p} ${rank} ${nbytes} ${hasRecv ? 1 : 0}`, () => exscanSchedule(p, rank, nbytes, tag, hasRecv));
  await runReduceSchedule(comm, rs, send, recv, combine, args.op);
}
