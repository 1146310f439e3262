/**
 * The public shapes of the intergroup allgather / allgatherv collectives on an
 * intercommunicator (MPI semantics, seed 003 §2.1 and §4.1). Groups A (this side) and B (the
 * remote side) are symmetric in the API: every rank passes its own block and receives the
 * REMOTE group's blocks, in remote rank order.
 *
 * interAllgather: `send` is this rank's block (k bytes, the same k in the local group; the
 * two groups may use different sizes); `recv` receives remoteSize·k' bytes (k' the remote
 * group's block size, = recv.length / remoteSize), remote block i at i·k'.
 *
 * interAllgatherv: `send` is this rank's block (any size); `counts` are the REMOTE group's
 * counts (elements, the same array on every rank of this group, as MPI's recvcounts);
 * remote block i lands at displs[i]·unitBytes. A rank does not know its own group's counts
 * (MPI does not pass them): algorithms that need them compute them (allreduce, exscan).
 *
 * Tags: COLLECTIVE_TAG + 0x420 … + 0x43f (INTER_TAGS, the 'inter' row of comm/tags.ts).
 */
import { namedTags } from '../../comm/tags.js';
import type { AllgatherArgs, AllgathervArgs } from '../allgather/types.js';
import { MPI_NATIVE, type NativeAlgorithm } from '../types.js';

/**
 * 'mpi-native': the MPI library's own MPI_Allgather / MPI_Allgatherv on an MPI
 * intercommunicator (`inter.native`, the MPI transport only; elsewhere UnavailableError on every
 * rank of both groups). Enumerations over the simulator or threads take `portableAlgorithms(…)`.
 */
export type InterAllgatherAlgorithm = 'root-gathering' | 'segmented' | NativeAlgorithm;
export const INTER_ALLGATHER_ALGORITHMS: readonly InterAllgatherAlgorithm[] = ['root-gathering', 'segmented', MPI_NATIVE];

/** As allgather's arguments; `recv` holds the REMOTE group's blocks (remoteSize·k′ bytes). */
export type InterAllgatherArgs = AllgatherArgs;

/**
 * As allgatherv's arguments, but `counts` (elements) and `displs` describe the REMOTE group's
 * blocks in `recv`; `unitBytes` (default 1) must be the same in both groups.
 */
export type InterAllgathervArgs = AllgathervArgs;

export interface InterOptions {
  /**
   * 'segmented' (default): seed 003 Algorithm 1 / Algorithm 2; 'root-gathering': what MPICH and
   * Open MPI ship, written over point-to-point; 'mpi-native': the MPI library's own call (MPI transport only).
   */
  readonly algorithm?: InterAllgatherAlgorithm;
}

export const INTER_TAGS = namedTags('inter');
