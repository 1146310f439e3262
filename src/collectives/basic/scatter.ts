/**
 * scatter (regular): the root's `send` holds p blocks of m bytes in rank order; block i lands
 * in rank i's `recv` (m bytes, the same m on every rank). Binomial tree (ordered binomial tree
 * of tree.ts; Chan et al. 2007 as cited by Traff18 §1): the root sends every child its
 * subtree's contiguous range straight out of `send`; an intermediate rank receives its range
 * in one buffer, forwards sub-ranges, largest first, and copies its own block out; a leaf
 * receives straight into `recv`.
 *
 * Cost (one-ported, γ = 0): ⌈log₂p⌉α + β(p−1)m; exactly kα + β(p−1)m for p = 2^k. Plus γm
 * per non-leaf rank for its own block's copy. The data phase is a schedule (schedule.ts).
 * A rank whose `recv` length differs from its parent's is detected on that rank:
 * InvalidArgumentError('recv') if it got fewer bytes, a truncation CommunicationError if more.
 *
 * With `{ algorithm: 'mpi-native' }`: the MPI library's MPI_Scatter (MPI transport only), cost
 * whatever the library does.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { nativeBytes, nativeOf } from '../native.js';
import { MPI_NATIVE } from '../types.js';
import { basicAlgorithm, type BasicOptions } from './algorithm.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { runBasicSchedule, scatterSchedule, scheduleOfShape } from './schedule.js';
import { checkBytes, checkRoot } from './validate.js';
import { beginCall } from '../call-scope.js';

export interface ScatterArgs {
  /** Root only: p·m bytes; ignored elsewhere. */
  readonly send?: Uint8Array;
  /** This rank's block (m bytes, the same m on every rank). */
  readonly recv: Uint8Array;
  readonly root: number;
}

/**
 * Scatters the root's blocks. `options.algorithm` 'mpi-native': the MPI library's MPI_Scatter
 * instead (MPI transport only; elsewhere UnavailableError('mpi-transport') on every rank).
 */
export async function scatter(comm: Communicator, args: ScatterArgs, options?: BasicOptions): Promise<void> {
  comm = beginCall(comm);
  const algorithm = basicAlgorithm(comm, options);
  const root = checkRoot(comm, args.root);
  const recv = checkBytes(comm, 'recv', args.recv);
  const { rank, size: p } = comm;
  const m = recv.length;
  let send: Uint8Array | undefined;
  if (rank === root) {
    send = checkBytes(comm, 'send', args.send);
    if (send.length !== p * m) {
      throw new InvalidArgumentError('send', `holds ${send.length} bytes, p·m = ${p}·${m} = ${p * m} expected`, { rank });
    }
  }
  if (algorithm === MPI_NATIVE) {
    const native = nativeOf(comm, 'scatter');
    nativeBytes('recv', m, rank);
    native.scatter(send ?? null, recv, root);
    return;
  }
  // the data phase is a schedule (schedule.ts): one native run per call
  const rs = scheduleOfShape(`scatter ${p} ${root} ${rank} ${m}`, () => scatterSchedule(p, root, rank, m, BASIC_TAG.scatter));
  await runBasicSchedule(comm, rs, { send, recv }, 'recv');
}
