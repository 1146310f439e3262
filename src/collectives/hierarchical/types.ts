/**
 * Public shapes of the hierarchical gather and gatherv (TraffRougier14 §2–§4, §6): arguments (MPI
 * semantics, as the flat gather and gatherv), the variant names, the options and what a call
 * reports. Tags: COLLECTIVE_TAG + 0x460 … + 0x46f (HIER_TAG, the 'hierarchical' row of comm/tags.ts).
 */
import { namedTags } from '../../comm/tags.js';
import type { NodeStructure } from './structure.js';
import type { HierarchicalVariantName } from './variants.js';

// The variant names are derived from the table (variants.ts, where HIERARCHICAL_VARIANT_NAMES
// is: two-level.ts imports HIER_TAG from here, so this file imports nothing but types from the table).
export type { HierarchicalVariantName } from './variants.js';

export interface HierarchicalOptions {
  /** Default 'zero-copy'. Every rank must pass the same. */
  readonly variant?: HierarchicalVariantName;
  /**
   * The communicator's node structure, `nodeStructure(comm.size, (r) => comm.nodeOf(r))`,
   * computed once by the caller and passed to every rank (the same object): the ranks of a
   * simulation then share it instead of each computing it (O(p) per rank, O(p²) in all; at
   * p = 2^15 that is gigabytes). Optional: without it each communicator computes its own on
   * its first call. Checked on every rank for its size and that rank's own entries (O(1):
   * an InvalidArgumentError on 'structure'); beyond that it must describe `comm.nodeOf`, or
   * the call fails or hangs as with ranks passing different arguments.
   */
  readonly structure?: NodeStructure;
}

/** Regular gather: every rank's block has the same length m. */
export interface HierarchicalGatherArgs {
  /** This rank's block (m bytes, the same m on every rank). */
  readonly send: Uint8Array;
  /** Root only: p·m bytes; rank i's block lands at i·m. Ignored elsewhere. */
  readonly recv?: Uint8Array;
  readonly root: number;
}

/** Irregular gather (MPI_Gatherv): counts, displs and recv are significant at the root only. */
export interface HierarchicalGathervArgs {
  /** This rank's block: its count is send.length / unitBytes elements. */
  readonly send: Uint8Array;
  /** Root only: the receive buffer. */
  readonly recv?: Uint8Array;
  /** Root only: elements per rank. */
  readonly counts?: readonly number[];
  /** Root only: element offsets in `recv` (default: the prefix sums of counts). */
  readonly displs?: readonly number[];
  /** Bytes per element (default 1), the same on every rank. */
  readonly unitBytes?: number;
  readonly root: number;
}

/** What a rank learns about the call it took part in. */
export interface HierarchicalInfo {
  readonly variant: HierarchicalVariantName;
  /** N: nodes of the communicator. */
  readonly nodes: number;
  /** n_max: ranks on the largest node. */
  readonly largestNode: number;
  /**
   * The round bound of the two-level algorithm, ⌈log₂N⌉ + ⌈log₂n_max⌉ ('flat': the tree's
   * ⌈log₂p⌉ data rounds, plus ⌈log₂p⌉ count-scatter rounds for gatherv).
   */
  readonly rounds: number;
}

/** Tags of the two levels (the local level runs on the node communicator, the bridge on the caller's). */
export const HIER_TAG = namedTags('hierarchical');
