/**
 * Public shapes of the hierarchical gather, gatherv, scatter and scatterv (TraffRougier14 §2–§4,
 * §6; adaptive levels: Traff18 §2–§3): arguments (MPI semantics, as the flat gather(v) and
 * scatter(v)), the variant and tree names, the options and what a call reports. Tags:
 * COLLECTIVE_TAG + 0x460 … + 0x46f (HIER_TAG, the 'hierarchical' row of comm/tags.ts) for the
 * data of both levels; the adaptive trees' constructions use two plans of the 'adaptive' range
 * (collectives/adaptive/tags.ts), one per level.
 */
import { namedTags } from '../../comm/tags.js';
import type { CostModel } from '../../model/cost-model.js';
import type { NodeStructure } from './structure.js';
import type { HierarchicalVariantName } from './variants.js';

// The variant names are derived from the table (variants.ts, where HIERARCHICAL_VARIANT_NAMES
// is: two-level.ts imports HIER_TAG from here, so this file imports nothing but types from the table).
export type { HierarchicalVariantName } from './variants.js';

/**
 * The tree of both levels (TraffRougier14's node and bridge levels):
 * - 'binomial' (default): Traff18 §2's binomial tree over the ordered hypercube, over a node's
 *   members and over the nodes (hypercube-role.ts; a node's leader is its last member unless
 *   the root is on it), oblivious of the block sizes;
 * - 'adaptive': Traff18's adaptive binomial tree, over the members' blocks on a node and over
 *   the nodes' totals on the bridge, built by Traff18's distributed construction (Lemma 3,
 *   Lemma 2's fixed root) on each level — gatherv/scatterv; the regular gather/scatter, whose
 *   block sizes every rank knows, computes the same trees locally with no message (Traff18
 *   Theorem 1's remark).
 */
export type HierarchicalTreeName = 'binomial' | 'adaptive';

/** Every tree name, in the order the CLI and the benchmarks list them. */
export const HIERARCHICAL_TREE_NAMES: readonly HierarchicalTreeName[] = ['binomial', 'adaptive'];

export interface HierarchicalOptions {
  /** Default 'zero-copy'. Every rank must pass the same. */
  readonly variant?: HierarchicalVariantName;
  /**
   * The tree of both levels, orthogonal to the variant (default 'binomial'). Every rank must
   * pass the same. With variant 'flat', 'adaptive' runs Traff18's flat adaptive gatherv /
   * scatterv (the variant table's 'adaptive') instead of the binomial one.
   */
  readonly tree?: HierarchicalTreeName;
  /**
   * The cost model the call plans in, per element (the regular gather/scatter: per byte), over
   * the communicator's ranks, one-ported (default: collectives/defaults.ts DEFAULT_MODEL).
   * Tree 'adaptive': its costs between a node's members decide the node-level trees and its
   * costs between the leaders the bridge tree; no local copy is charged (below the root the
   * hierarchical data phases copy nothing of their own). Both trees: a persistent scatterv
   * (hierarchicalScattervInit) orders every rank's sends by it (planned-scatter.ts). The
   * one-shot binomial calls do not use it. Every rank must pass the same.
   */
  readonly model?: CostModel;
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

/** Regular scatter: every rank's block has the same length m. */
export interface HierarchicalScatterArgs {
  /** Root only: p·m bytes; rank i's block is send[i·m …]. Ignored elsewhere. */
  readonly send?: Uint8Array;
  /** This rank's block (m bytes, the same m on every rank). */
  readonly recv: Uint8Array;
  readonly root: number;
}

/** Irregular scatter (MPI_Scatterv): send, counts and displs are significant at the root only. */
export interface HierarchicalScattervArgs {
  /** Root only: the send buffer. */
  readonly send?: Uint8Array;
  /** Where this rank's block goes: its count is recv.length / unitBytes elements, or `count`. */
  readonly recv: Uint8Array;
  /** This rank's count in elements (default recv.length / unitBytes): MPI_Scatterv's recvcount. */
  readonly count?: number;
  /** Root only: elements per rank. */
  readonly counts?: readonly number[];
  /** Root only: element offsets in `send` (default: the prefix sums of counts). */
  readonly displs?: readonly number[];
  /** Bytes per element (default 1), the same on every rank. */
  readonly unitBytes?: number;
  readonly root: number;
}

/** What a rank learns about the call it took part in. */
export interface HierarchicalInfo {
  readonly variant: HierarchicalVariantName;
  /** The tree of both levels (HierarchicalOptions.tree). */
  readonly tree: HierarchicalTreeName;
  /** N: nodes of the communicator. */
  readonly nodes: number;
  /** n_max: ranks on the largest node. */
  readonly largestNode: number;
  /**
   * The round bound of the two-level algorithm, ⌈log₂N⌉ + ⌈log₂n_max⌉ ('flat': the tree's
   * ⌈log₂p⌉ data rounds, plus ⌈log₂p⌉ count-scatter rounds for gatherv).
   */
  readonly rounds: number;
  /**
   * Rounds of the trees' distributed construction before or beside the data (Traff18 Lemma 3):
   * tree 'adaptive' of gatherv/scatterv, (⌈log₂n_max⌉ + 1) + (⌈log₂N⌉ + 1) (node level, then
   * the bridge over the node totals; 'flat': the flat adaptive construction's); 0 otherwise.
   */
  readonly constructionRounds: number;
}

/** Tags of the two levels' data (both travel on the caller's communicator: between a node's members, between the leaders). */
export const HIER_TAG = namedTags('hierarchical');
