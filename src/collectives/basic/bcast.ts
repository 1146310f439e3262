/**
 * bcast: binomial-tree broadcast of `buf` from `root` (the ordered binomial tree of tree.ts,
 * Chan et al. 2007 as cited by seed 000 §1). Every rank receives the whole buffer once from its
 * parent, then sends it to its children, largest subtree first.
 *
 * Cost (one-ported, message of m bytes): ⌈log₂p⌉(α + βm); exactly k(α + βm) for p = 2^k.
 * (The scatter-allgather variant for long messages, (log p)α + 2βm, is not implemented.)
 * Every rank passes a buffer of the same length; a shorter message than expected is an
 * InvalidArgumentError('buf'), a longer one a truncation CommunicationError on the receiver.
 */
import type { Communicator } from '../../comm/communicator.js';
import { BASIC_TAG } from './tags.js';
import { orderedBinomialRole } from './tree.js';
import { checkBytes, checkRoot, expectBytes } from './validate.js';

export async function bcast(comm: Communicator, buf: Uint8Array, root: number): Promise<void> {
  checkRoot(comm, root);
  checkBytes(comm, 'buf', buf);
  const role = orderedBinomialRole(comm.size, root, comm.rank);
  if (role.parent >= 0) {
    const st = await comm.recv(role.parent, BASIC_TAG.bcast, buf);
    expectBytes(comm, 'buf', st, buf.length);
  }
  for (const c of role.children) await comm.send(c.peer, BASIC_TAG.bcast, buf);
}
