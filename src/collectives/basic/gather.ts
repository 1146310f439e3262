/**
 * gather (regular): every rank's block of m bytes (all ranks the same m) lands in the root's
 * `recv` at offset rank·m. Binomial tree (ordered binomial tree of tree.ts; Chan et al. 2007 as
 * cited by Traff18 §1): every subtree is a contiguous range of ranks, so an intermediate rank
 * gathers its range in one buffer (its own block copied in, children's ranges received in
 * place) and sends it on as one message; the root receives straight into `recv` — blocks are
 * in rank order with no reordering copy, whatever the root. Leaves send from `send` itself.
 *
 * Cost (one-ported, γ = 0): ⌈log₂p⌉α + β(p−1)m; exactly kα + β(p−1)m for p = 2^k (every
 * subtree of 2^j ranks completes exactly when its parent is ready for it). Plus γm per
 * non-leaf rank for its own block's copy. The data phase is a schedule (schedule.ts).
 * A rank whose block length differs is detected by its parent (received bytes ≠ expected):
 * InvalidArgumentError('send') there, or a truncation CommunicationError if it sent more.
 *
 * With `{ algorithm: 'mpi-native' }`: the MPI library's MPI_Gather (MPI transport only), cost
 * whatever the library does.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { nativeBytes, nativeOf } from '../native.js';
import { MPI_NATIVE } from '../types.js';
import { basicAlgorithm, type BasicOptions } from './algorithm.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { gatherSchedule, runBasicSchedule, scheduleOfShape } from './schedule.js';
import { checkBytes, checkRoot } from './validate.js';
import { beginCall } from '../call-scope.js';

export interface GatherArgs {
  /** This rank's block (m bytes, the same m on every rank). */
  readonly send: Uint8Array;
  /** Root only: p·m bytes; ignored elsewhere. */
  readonly recv?: Uint8Array;
  readonly root: number;
}

/** gather's arguments checked on one rank (root, send, and at the root recv of p·m bytes); shared with the hierarchical gather. */
export function checkGatherArgs(comm: Communicator, args: GatherArgs): { root: number; send: Uint8Array; recv: Uint8Array | undefined } {
  const root = checkRoot(comm, args.root);
  const send = checkBytes(comm, 'send', args.send);
  const { rank, size: p } = comm;
  const m = send.length;
  let recv: Uint8Array | undefined;
  if (rank === root) {
    recv = checkBytes(comm, 'recv', args.recv);
    if (recv.length !== p * m) {
      throw new InvalidArgumentError('recv', `holds ${recv.length} bytes, p·m = ${p}·${m} = ${p * m} needed`, { rank });
    }
  }
  return { root, send, recv };
}

/**
 * Gathers every rank's block to the root. `options.algorithm` 'mpi-native': the MPI library's
 * MPI_Gather instead (MPI transport only; elsewhere UnavailableError('mpi-transport') on every rank).
 */
export async function gather(comm: Communicator, args: GatherArgs, options?: BasicOptions): Promise<void> {
  comm = beginCall(comm);
  const algorithm = basicAlgorithm(comm, options);
  const { root, send, recv } = checkGatherArgs(comm, args);
  if (algorithm === MPI_NATIVE) {
    const native = nativeOf(comm, 'gather');
    nativeBytes('send', send.length, comm.rank);
    native.gather(send, recv ?? null, root);
    return;
  }
  // the data phase is a schedule (schedule.ts): one native run per call
  const { size: p, rank } = comm;
  const m = send.length;
  const rs = scheduleOfShape(`gather ${p} ${root} ${rank} ${m}`, () => gatherSchedule(p, root, rank, m, BASIC_TAG.gather));
  await runBasicSchedule(comm, rs, { send, recv }, 'send');
}
