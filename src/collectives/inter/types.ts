/**
 * The public shapes of the intergroup allgather / allgatherv collectives on an
 * intercommunicator (MPI semantics, Kang19 §2.1 and §4.1). Groups A (this side) and B (the
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
import type { InterCommunicator } from '../../comm/intercomm.js';
import { namedTags } from '../../comm/tags.js';
import type { AllgatherArgs, AllgathervArgs } from '../allgather/types.js';
import type { InterAllgatherAlgorithm } from './variants.js';

/**
 * The algorithms, derived from the table (variants.ts, where INTER_ALLGATHER_ALGORITHMS is: the
 * algorithm files import INTER_TAGS from here, so this file imports nothing but types from the
 * table). 'mpi-native': the MPI library's own MPI_Allgather / MPI_Allgatherv on an MPI
 * intercommunicator (`inter.native`, the MPI transport only; elsewhere UnavailableError on every
 * rank of both groups). Enumerations over the simulator or threads take `portableAlgorithms(…)`.
 */
export type { InterAllgatherAlgorithm } from './variants.js';

/** As allgather's arguments; `recv` holds the REMOTE group's blocks (remoteSize·k′ bytes). */
export type InterAllgatherArgs = AllgatherArgs;

/**
 * As allgatherv's arguments, but `counts` (elements) and `displs` describe the REMOTE group's
 * blocks in `recv`; `unitBytes` (default 1) must be the same in both groups.
 */
export type InterAllgathervArgs = AllgathervArgs;

export interface InterOptions {
  /**
   * 'segmented' (default): Kang19 Algorithm 1 / Algorithm 2; 'root-gathering': what MPICH and
   * Open MPI ship, written over point-to-point; 'mpi-native': the MPI library's own call (MPI transport only).
   */
  readonly algorithm?: InterAllgatherAlgorithm;
}

/** interAllgather's checked arguments, as an algorithm (a row of variants.ts) receives them. */
export interface InterAllgatherInput {
  readonly inter: InterCommunicator;
  readonly send: Uint8Array;
  readonly recv: Uint8Array;
  /** Bytes of every remote block: recv.length / remoteSize. */
  readonly k: number;
}

/** interAllgatherv's checked arguments, as an algorithm (a row of variants.ts) receives them. */
export interface InterAllgathervInput {
  readonly inter: InterCommunicator;
  readonly send: Uint8Array;
  readonly recv: Uint8Array;
  /** The remote group's counts and displacements (elements of unitBytes bytes, validated). */
  readonly counts: readonly number[];
  readonly displs: readonly number[];
  readonly unitBytes: number;
  /** The same in bytes: every remote block's length and its offset in recv. */
  readonly bytes: readonly number[];
  readonly offsets: readonly number[];
}

export const INTER_TAGS = namedTags('inter');
