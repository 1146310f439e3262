/**
 * The tree constructions as data: one entry per algorithm, with its paper reference and a
 * uniform `build(sizes, model, options)` call. The CLI, the comparison and the tests
 * enumerate this table; the trees a row of the gatherv/scatterv variant table names
 * (collectives/v-variants.ts) run as collectives, through the generic tree executor.
 */
import { TooLargeError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree, obliviousBinomialTree } from './binomial.js';
import { MAX_BINARY_P, MAX_PAIRWISE_BINARY_P, optimalBinaryTree } from './optimal/binary.js';
import type { Operation } from './evaluate.js';
import { linearTree } from './linear.js';
import { modelBinomialRootSearchLimit, modelBinomialTree } from './model-binomial.js';
import { TRAFF_ROOT_SEARCH_MAX_P, traffTree } from './model-traff.js';
import { EXACT_NON_ORDERED_MAX_P, decreasingRerankTree, exactNonOrderedOptimal } from './non-ordered.js';
import { OPTIMAL_MAX_P, optimalTree } from './optimal/homogeneous.js';
import { MAX_PAIRWISE_P, optimalPairwiseTree } from './optimal/pairwise.js';
import { twoBlockTree } from './two-block.js';
import { degradingTree } from './degrading.js';
import type { BuiltTree } from './types.js';

export interface BuildOptions {
  /** Fixed root; omitted: the construction chooses a best root. */
  readonly root?: number;
  /** Progress of long constructions (the dynamic programs), as work units done of total. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * The operation the tree is for (default 'gather'). Only the model-based constructions of
   * Dichev10 depend on it (they predict child → parent for a gather, parent → child for a
   * scatter); every other tree serves both.
   */
  readonly op?: Operation;
}

export interface TreeAlgorithm {
  readonly name: string;
  readonly description: string;
  /** Where it comes from. */
  readonly source: string;
  /** Whether the trees it builds are ordered (blocks never permuted). */
  readonly ordered: boolean;
  build(sizes: ArrayLike<number>, model: CostModel, options?: BuildOptions): BuiltTree;
  /** The largest p `build` accepts under `model` (it throws TooLargeError above); absent: no limit. */
  readonly limit?: (model: CostModel) => number;
  /** The largest p `build` accepts under `model` with the root omitted (a search over every root), when lower. */
  readonly bestRootLimit?: (model: CostModel) => number;
}

/** The homogeneous DP's limit, or the per-pair DP's (the collectives' `optimal` under a per-pair model). */
const optimalLimit = (model: CostModel): number => (model.linear !== undefined ? OPTIMAL_MAX_P : MAX_PAIRWISE_P);

export const TREE_ALGORITHMS: readonly TreeAlgorithm[] = [
  {
    name: 'linear',
    description: 'star: every rank sends its block straight to the root (what Open MPI and MPICH ship)',
    source: 'Traff17 §5.1',
    ordered: true,
    build: (s, m, o) => linearTree(s, m, { root: o?.root }),
  },
  {
    name: 'oblivious',
    description: 'rank-ordered binomial tree, independent of the block sizes (the tree of the gatherv/scatterv variant `binomial`)',
    source: 'Traff17 §5.1',
    ordered: true,
    build: (s, m, o) => obliviousBinomialTree(s, m, { root: o?.root }),
  },
  {
    name: 'adaptive',
    description: 'data-aware binomial tree: the range with less data sends (Träff 2018)',
    source: 'Traff18 Lemmas 1, 2, 4; Traff17 Proposition 1',
    ordered: true,
    build: (s, m, o) => adaptiveBinomialTree(s, m, { root: o?.root }),
  },
  {
    name: 'degrading',
    description: 'adaptive binomial tree whose late subtrees send their pieces straight to the root (graceful degradation; one-ported, no copyAll)',
    source: 'Traff18 §3 (left undone there), Lemma 2',
    ordered: true,
    build: (s, m, o) => degradingTree(s, m, { root: o?.root }),
  },
  {
    name: 'optimal',
    description: 'optimal ordered variable-degree tree by dynamic programming, O(p³)',
    source: 'Traff17 Theorem 2',
    ordered: true,
    build: (s, m, o) => optimalTree(s, m, { root: o?.root, mode: 'exact', onProgress: o?.onProgress }),
    limit: optimalLimit,
  },
  {
    name: 'optimal-paper',
    description: "optimal ordered tree with the paper's best-root convention (reproduces Traff17's tables)",
    source: 'Traff17 Theorem 2, Table 1',
    ordered: true,
    build: (s, m, o) => optimalTree(s, m, { root: o?.root, mode: 'paper', onProgress: o?.onProgress }),
    limit: optimalLimit,
  },
  {
    name: 'binary',
    description: 'optimal ordered binary tree by dynamic programming',
    source: 'Traff17 Theorem 3',
    ordered: true,
    build: (s, m, o) => optimalBinaryTree(s, m, { root: o?.root, onProgress: o?.onProgress }),
    limit: (m) => (m.linear !== undefined ? MAX_BINARY_P : MAX_PAIRWISE_BINARY_P),
  },
  {
    name: 'optimal-pairwise',
    description: 'optimal ordered tree under per-pair (non-homogeneous) costs, O(p³) space',
    source: 'Traff17 Theorem 1',
    ordered: true,
    build: (s, m, o) => optimalPairwiseTree(s, m, { root: o?.root }),
    limit: () => MAX_PAIRWISE_P,
  },
  {
    name: 'two-block',
    description: 'two concurrent regular gathers (small and large blocks) and one transfer (TWO_Gatherv)',
    source: 'Traff17 Lemma 2, §5.2',
    ordered: false,
    build: (s, m, o) => twoBlockTree(s, m, { root: o?.root }),
  },
  {
    name: 'rerank',
    description: 'adaptive binomial tree over ranks re-ordered by decreasing block size (non-ordered)',
    source: 'Traff17 §5.1, heuristic of its ref. [19]',
    ordered: false,
    build: (s, m, o) => decreasingRerankTree(s, m, { root: o?.root }),
  },
  {
    name: 'non-ordered-exact',
    description: 'exact optimal non-ordered tree by search over subsets (p ≤ 10)',
    source: 'Traff17 Proposition 2, §4',
    ordered: false,
    build: (s, m, o) => exactNonOrderedOptimal(s, m, { root: o?.root }),
    limit: () => EXACT_NON_ORDERED_MAX_P,
  },
  {
    name: 'model-binomial-min',
    description: 'binomial tree mapped depth-first, each node taking the free process with the least predicted time to its parent (min-first)',
    source: 'Dichev10 §2',
    ordered: false,
    build: (s, m, o) => modelBinomialTree(s, m, { root: o?.root, op: o?.op, mapping: 'min-first' }),
    bestRootLimit: modelBinomialRootSearchLimit,
  },
  {
    name: 'model-binomial-max',
    description: 'binomial tree mapped depth-first, each node taking the free process with the largest predicted time to its parent (max-first)',
    source: 'Dichev10 §2',
    ordered: false,
    build: (s, m, o) => modelBinomialTree(s, m, { root: o?.root, op: o?.op, mapping: 'max-first' }),
    bestRootLimit: modelBinomialRootSearchLimit,
  },
  {
    name: 'model-binomial-guarded',
    description: 'the fastest (by the model) of the min-first, max-first and rank-ordered binomial trees: never slower than the oblivious binomial tree',
    source: 'Dichev10 §2, with an explicit guard',
    ordered: false,
    build: (s, m, o) => modelBinomialTree(s, m, { root: o?.root, op: o?.op, mapping: 'best', guard: true }),
    bestRootLimit: modelBinomialRootSearchLimit,
  },
  {
    name: 'traff',
    description: "Träff's irregular gather/scatter tree with identical links (the model's mean α, β): sort by block, cost-balanced subsets, one representative each",
    source: 'Dichev10 §2 (Träff 2004, its ref. [2]), model-oblivious',
    ordered: false,
    build: (s, m, o) => traffTree(s, m, { root: o?.root, op: o?.op, predictor: 'oblivious' }),
    bestRootLimit: () => TRAFF_ROOT_SEARCH_MAX_P,
  },
  {
    name: 'model-traff',
    description: "model-based Träff tree: subsets balanced in predicted cost to the parent, representative = least predicted time to move its subset's data",
    source: 'Dichev10 §2, Fig. 1',
    ordered: false,
    build: (s, m, o) => traffTree(s, m, { root: o?.root, op: o?.op, predictor: 'model' }),
    bestRootLimit: () => TRAFF_ROOT_SEARCH_MAX_P,
  },
  {
    name: 'model-traff-guarded',
    description: 'the faster (by the model) of the model-based and the original Träff trees: never slower than the original',
    source: 'Dichev10 §2, with an explicit guard',
    ordered: false,
    build: (s, m, o) => traffTree(s, m, { root: o?.root, op: o?.op, predictor: 'model', guard: true }),
    bestRootLimit: () => TRAFF_ROOT_SEARCH_MAX_P,
  },
];

export function findTreeAlgorithm(name: string): TreeAlgorithm | undefined {
  return TREE_ALGORITHMS.find((a) => a.name === name);
}

/** How the tree is asked for: `bestRoot` true when the root is omitted (the construction chooses it). */
export interface TreeLimitOptions {
  readonly bestRoot?: boolean;
}

/**
 * The largest p the named tree construction accepts under `model`, or undefined (no limit,
 * or no such construction); with `bestRoot` the limit of choosing the root too (lower for the
 * Dichev10 trees, which try every root). Under a non-homogeneous model `optimal` and
 * `optimal-paper` give the per-pair DP's limit (Traff17 Theorem 1), the tree the collectives
 * build for `optimal` there. Pure and O(1): a caller checks before any work.
 */
export function treeLimit(algorithm: string, model: CostModel, options?: TreeLimitOptions): number | undefined {
  const alg = findTreeAlgorithm(algorithm);
  if (alg === undefined) return undefined;
  const fixed = alg.limit?.(model);
  const search = options?.bestRoot === true ? alg.bestRootLimit?.(model) : undefined;
  if (fixed === undefined) return search;
  return search === undefined ? fixed : Math.min(fixed, search);
}

/** Throws TooLargeError('p') when p exceeds treeLimit(algorithm, model, options); O(1). */
export function checkTreeSize(algorithm: string, p: number, model: CostModel, options?: TreeLimitOptions): void {
  const limit = treeLimit(algorithm, model, options);
  if (limit !== undefined && p > limit) {
    const kind = model.linear !== undefined ? 'homogeneous' : `non-homogeneous (${model.kind})`;
    const how = options?.bestRoot === true ? ' choosing its root' : '';
    throw new TooLargeError('p', `${p} > ${limit} for the '${algorithm}' tree${how} under a ${kind} model`);
  }
}
