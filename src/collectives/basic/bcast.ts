/**
 * bcast: broadcast of `buf` from `root`. Every rank passes a buffer of the same length; a
 * shorter message than expected is an InvalidArgumentError('buf'), a longer one a truncation
 * CommunicationError on the receiver.
 *
 * - 'binomial' (default): the ordered binomial tree of tree.ts (Chan et al. 2007 as cited by
 *   seed 000 §1). Every rank receives the whole buffer once from its parent, then sends it to
 *   its children, largest subtree first. Cost (one-ported, m bytes): ⌈log₂p⌉(α + βm);
 *   exactly k(α + βm) for p = 2^k.
 * - 'scatter-allgather' (long messages; van de Geijn, as surveyed by Chan et al. 2007): the
 *   buffer is cut into p pieces of ⌈m/p⌉ bytes (the last ones padded), the root scatters them
 *   (binomial, scatter.ts) and every rank allgathers them (allgather.ts). Cost (full duplex,
 *   γ = 0): 2⌈log₂p⌉α + 2β(p−1)⌈m/p⌉ ≈ 2⌈log₂p⌉α + 2βm, against ⌈log₂p⌉βm for the tree; plus
 *   the copies in and out of the padded buffer when p does not divide m.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { allgather } from './allgather.js';
import { scatter } from './scatter.js';
import { BASIC_TAG } from './tags.js';
import { orderedBinomialRole } from './tree.js';
import { checkBytes, checkRoot, expectBytes } from './validate.js';
import { beginCall } from '../call-scope.js';

export type BcastAlgorithm = 'binomial' | 'scatter-allgather';

export interface BcastOptions {
  /** Default 'binomial'; every rank must pass the same. */
  readonly algorithm?: BcastAlgorithm;
}

export async function bcast(comm: Communicator, buf: Uint8Array, root: number, options?: BcastOptions): Promise<void> {
  comm = beginCall(comm);
  checkRoot(comm, root);
  checkBytes(comm, 'buf', buf);
  const algorithm = options?.algorithm ?? 'binomial';
  if (algorithm === 'scatter-allgather') return scatterAllgather(comm, buf, root);
  if (algorithm !== 'binomial') {
    throw new InvalidArgumentError('algorithm', `must be 'binomial' or 'scatter-allgather', got ${String(algorithm)}`, { rank: comm.rank });
  }
  const role = orderedBinomialRole(comm.size, root, comm.rank);
  if (role.parent >= 0) {
    const st = await comm.recv(role.parent, BASIC_TAG.bcast, buf);
    expectBytes(comm, 'buf', st, buf.length);
  }
  for (const c of role.children) await comm.send(c.peer, BASIC_TAG.bcast, buf);
}

async function scatterAllgather(comm: Communicator, buf: Uint8Array, root: number): Promise<void> {
  const p = comm.size;
  const piece = Math.ceil(buf.length / p);
  const exact = piece * p === buf.length;
  // The p pieces back to back: `buf` itself when p divides its length, else a padded copy.
  const whole = exact ? buf : new Uint8Array(piece * p);
  if (!exact && comm.rank === root) comm.copy(whole.subarray(0, buf.length), buf);
  const mine = new Uint8Array(piece);
  await scatter(comm, { send: comm.rank === root ? whole : undefined, recv: mine, root });
  await allgather(comm, { send: mine, recv: whole });
  if (!exact && comm.rank !== root) comm.copy(buf, whole.subarray(0, buf.length));
}
