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
 * half duplex: every exchange takes two transfers.
 */
import { bytesOf, type Communicator } from '../../comm/communicator.js';
import { allocLike, resolveOp, type NumericArray, type ReduceOp } from './ops.js';
import { sendrecv } from './sendrecv.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { checkNumeric, checkSameShape, expectBytes } from './validate.js';
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
  let partial = allocLike(send, send.length);
  let tmp = allocLike(send, send.length);
  let scratch = allocLike(send, send.length);
  let prefix: T | undefined;
  comm.copy(bytesOf(partial), bytesOf(send));
  for (let mask = 1; mask < p; mask *= 2) {
    const dst = rank ^ mask;
    if (dst >= p) continue;
    expectBytes(comm, 'send', await sendrecv(comm, tag, dst, bytesOf(partial), dst, bytesOf(tmp)), nbytes);
    if (dst < rank) {
      // tmp is the reduction over the group just below this rank's group.
      if (prefix === undefined) {
        prefix = allocLike(send, send.length);
        comm.copy(bytesOf(prefix), bytesOf(tmp));
      } else {
        comm.copy(bytesOf(scratch), bytesOf(tmp));
        combine(scratch, prefix);
        [prefix, scratch] = [scratch, prefix];
      }
      combine(tmp, partial);
      [partial, tmp] = [tmp, partial];
    } else {
      combine(partial, tmp);
    }
  }
  if (recv !== undefined && prefix !== undefined) comm.copy(bytesOf(recv), bytesOf(prefix));
}
