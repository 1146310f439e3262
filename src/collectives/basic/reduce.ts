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
 * length: InvalidArgumentError('send') or a truncation CommunicationError).
 */
import { bytesOf, type Communicator } from '../../comm/communicator.js';
import { handled } from '../../comm/request.js';
import { allocLike, resolveOp, type NumericArray, type ReduceOp } from './ops.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { orderedBinomialRole } from './tree.js';
import { checkNumeric, checkRoot, checkSameShape, expectBytes } from './validate.js';
import { beginCall } from '../call-scope.js';


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
  const role = orderedBinomialRole(comm.size, root, rank);
  const nbytes = send.byteLength;
  if (role.children.length === 0 && role.parent >= 0) {
    await comm.send(role.parent, BASIC_TAG.reduce, bytesOf(send));
    return;
  }
  // Children in reduction order: each range adjacent to [lo, hi] combined so far.
  const kids = [...role.children].reverse();
  const parts = kids.map(() => allocLike(send, send.length));
  // Awaited one at a time below: a failure of a later one must not go unhandled meanwhile.
  const ops = kids.map((c, i) => handled(comm.irecv(c.peer, BASIC_TAG.reduce, bytesOf(parts[i]))));
  let acc = recv ?? allocLike(send, send.length);
  if (acc !== send) comm.copy(bytesOf(acc), bytesOf(send));
  let lo = rank;
  for (let i = 0; i < kids.length; i++) {
    const c = kids[i];
    expectBytes(comm, 'send', await ops[i], nbytes);
    if (c.hi < lo) {
      combine(parts[i], acc); // the child's range is lower: parts[i] := parts[i] ⊕ acc
      [acc, parts[i]] = [parts[i], acc];
      lo = c.lo;
    } else {
      combine(acc, parts[i]);
    }
  }
  if (role.parent >= 0) await comm.send(role.parent, BASIC_TAG.reduce, bytesOf(acc));
  else if (recv !== undefined && acc !== recv) comm.copy(bytesOf(recv), bytesOf(acc));
}
