/**
 * allreduce: x₀ ⊕ x₁ ⊕ … ⊕ x_{p−1} (rank order) into every rank's `recv`, by recursive
 * doubling with the non-power-of-two fold (Thakur, Rabenseifner and Gropp 2005; Chan et al.
 * 2007 as cited by Traff18 §1). With p' the largest power of two ≤ p and q = p − p': ranks
 * 0 … 2q−1 pair up, the even rank handing its vector to the odd one (which becomes new rank
 * r/2), the others become new rank r − q — new ranks keep the rank order; then log₂p' rounds
 * of pairwise exchanges with new rank ⊕ 2^k; finally every odd rank of the fold sends the
 * result back to its even partner. The lower range is always the left operand, so
 * non-commutative operators are correct, and both partners of an exchange compute the same
 * value from the same operands: every rank ends with bit-identical results.
 *
 * Cost (n bytes, full duplex): (log₂p' + 2·[p ≠ p'])(α + βn) plus local combining and two
 * γn copies (send into the work buffer, work buffer into recv); one-ported half duplex: every
 * exchange takes two transfers, 2·log₂p'(α + βn) + 2·[p ≠ p'](α + βn). The data phase is a
 * schedule with combine operations (reduce-schedule.ts), run by the transport's executor.
 */
import type { Communicator } from '../../comm/communicator.js';
import { resolveOp, type NumericArray, type ReduceOp } from './ops.js';
import { allreduceSchedule, runReduceSchedule } from './reduce-schedule.js';
import { scheduleOfShape } from './schedule.js';
import { nativeBytes, nativeOf } from '../native.js';
import { MPI_NATIVE } from '../types.js';
import { basicAlgorithm, nativeElementType, nativeReduceOp, type BasicOptions } from './algorithm.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { checkNumeric, checkSameShape } from './validate.js';
import { beginCall } from '../call-scope.js';

export interface AllreduceArgs<T extends NumericArray> {
  readonly send: T;
  /** Same type and length as `send` (may be `send` itself). */
  readonly recv: T;
  readonly op: ReduceOp<T>;
}

/**
 * `options.algorithm` 'mpi-native': the MPI library's MPI_Allreduce instead (MPI transport
 * only; elsewhere UnavailableError('mpi-transport') on every rank), for a built-in `op` (a
 * combine function: InvalidArgumentError('op')) on an element type MPI has (not
 * Uint8ClampedArray: InvalidArgumentError('algorithm')); `recv` being `send`: MPI_IN_PLACE.
 */
export async function allreduce<T extends NumericArray>(comm: Communicator, args: AllreduceArgs<T>, options?: BasicOptions): Promise<void> {
  comm = beginCall(comm);
  const algorithm = basicAlgorithm(comm, options);
  const send = checkNumeric<T>(comm, 'send', args.send);
  const recv = checkSameShape(comm, 'recv', args.recv, send, 'send');
  if (algorithm === MPI_NATIVE) return nativeAllreduce(comm, send, recv, args.op);
  const combine = resolveOp(args.op, send, comm.rank);
  // the data phase is a schedule (reduce-schedule.ts): one native run per call
  const { size: p, rank } = comm;
  const n = send.byteLength;
  const rs = scheduleOfShape(`allreduce ${p} ${rank} ${n}`, () => allreduceSchedule(p, rank, n, BASIC_TAG.allreduce));
  await runReduceSchedule(comm, rs, send, recv, combine, args.op);
}

/** Whether two views share any byte. */
function overlaps(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}

/** MPI_Allreduce through comm.native: recv being send is MPI_IN_PLACE; a partly overlapping send is copied first (MPI forbids aliasing). */
function nativeAllreduce<T extends NumericArray>(comm: Communicator, send: T, recv: T, op: unknown): void {
  const rank = comm.rank;
  const type = nativeElementType(send, rank);
  const nop = nativeReduceOp(op, send, rank);
  const native = nativeOf(comm, 'allreduce');
  nativeBytes('send', send.length, rank);
  const inPlace = send.buffer === recv.buffer && send.byteOffset === recv.byteOffset;
  const from = inPlace ? null : overlaps(send, recv) ? send.slice() : send;
  native.allreduce(from, recv, send.length, type, nop);
}
