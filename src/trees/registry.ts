/**
 * The tree constructions as data: one entry per algorithm, with its paper reference and a
 * uniform `build(sizes, model, options)` call. The CLI, the comparison and the tests
 * enumerate this table; the runtime's generic tree executor will run any of these trees.
 */
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree, obliviousBinomialTree } from './binomial.js';
import { optimalBinaryTree } from './binary.js';
import type { Operation } from './evaluate.js';
import { linearTree } from './linear.js';
import { modelBinomialTree } from './model-binomial.js';
import { traffTree } from './model-traff.js';
import { decreasingRerankTree, exactNonOrderedOptimal } from './non-ordered.js';
import { optimalTree } from './optimal.js';
import { optimalPairwiseTree } from './optimal-pairwise.js';
import { twoBlockTree } from './two-block.js';
import type { BuiltTree } from './types.js';

export interface BuildOptions {
  /** Fixed root; omitted: the construction chooses a best root. */
  readonly root?: number;
  /** Progress of long constructions (the dynamic programs), as work units done of total. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * The operation the tree is for (default 'gather'). Only the model-based constructions of
   * seed 001 depend on it (they predict child → parent for a gather, parent → child for a
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
}

export const TREE_ALGORITHMS: readonly TreeAlgorithm[] = [
  {
    name: 'linear',
    description: 'star: every rank sends its block straight to the root (what Open MPI and MPICH ship)',
    source: 'seed 004 §5.1',
    ordered: true,
    build: (s, m, o) => linearTree(s, m, { root: o?.root }),
  },
  {
    name: 'oblivious',
    description: 'rank-ordered binomial tree, independent of the block sizes',
    source: 'seed 004 §5.1',
    ordered: true,
    build: (s, m, o) => obliviousBinomialTree(s, m, { root: o?.root }),
  },
  {
    name: 'adaptive',
    description: 'data-aware binomial tree: the range with less data sends (Träff 2018)',
    source: 'seed 000 Lemmas 1, 2, 4; seed 004 Proposition 1',
    ordered: true,
    build: (s, m, o) => adaptiveBinomialTree(s, m, { root: o?.root }),
  },
  {
    name: 'optimal',
    description: 'optimal ordered variable-degree tree by dynamic programming, O(p³)',
    source: 'seed 004 Theorem 2',
    ordered: true,
    build: (s, m, o) => optimalTree(s, m, { root: o?.root, mode: 'exact', onProgress: o?.onProgress }),
  },
  {
    name: 'optimal-paper',
    description: "optimal ordered tree with the paper's best-root convention (reproduces seed 004's tables)",
    source: 'seed 004 Theorem 2, Table 1',
    ordered: true,
    build: (s, m, o) => optimalTree(s, m, { root: o?.root, mode: 'paper', onProgress: o?.onProgress }),
  },
  {
    name: 'binary',
    description: 'optimal ordered binary tree by dynamic programming',
    source: 'seed 004 Theorem 3',
    ordered: true,
    build: (s, m, o) => optimalBinaryTree(s, m, { root: o?.root, onProgress: o?.onProgress }),
  },
  {
    name: 'optimal-pairwise',
    description: 'optimal ordered tree under per-pair (non-homogeneous) costs, O(p³) space',
    source: 'seed 004 Theorem 1',
    ordered: true,
    build: (s, m, o) => optimalPairwiseTree(s, m, { root: o?.root }),
  },
  {
    name: 'two-block',
    description: 'two concurrent regular gathers (small and large blocks) and one transfer (TWO_Gatherv)',
    source: 'seed 004 Lemma 2, §5.2',
    ordered: false,
    build: (s, m, o) => twoBlockTree(s, m, { root: o?.root }),
  },
  {
    name: 'rerank',
    description: 'adaptive binomial tree over ranks re-ordered by decreasing block size (non-ordered)',
    source: 'seed 004 §5.1, heuristic of its ref. [19]',
    ordered: false,
    build: (s, m, o) => decreasingRerankTree(s, m, { root: o?.root }),
  },
  {
    name: 'non-ordered-exact',
    description: 'exact optimal non-ordered tree by search over subsets (p ≤ 10)',
    source: 'seed 004 Proposition 2, §4',
    ordered: false,
    build: (s, m, o) => exactNonOrderedOptimal(s, m, { root: o?.root }),
  },
  {
    name: 'model-binomial-min',
    description: 'binomial tree mapped depth-first, each node taking the free process with the least predicted time to its parent (min-first)',
    source: 'seed 001 §2',
    ordered: false,
    build: (s, m, o) => modelBinomialTree(s, m, { root: o?.root, op: o?.op, mapping: 'min-first' }),
  },
  {
    name: 'model-binomial-max',
    description: 'binomial tree mapped depth-first, each node taking the free process with the largest predicted time to its parent (max-first)',
    source: 'seed 001 §2',
    ordered: false,
    build: (s, m, o) => modelBinomialTree(s, m, { root: o?.root, op: o?.op, mapping: 'max-first' }),
  },
  {
    name: 'model-binomial-guarded',
    description: 'the fastest (by the model) of the min-first, max-first and rank-ordered binomial trees: never slower than the oblivious binomial tree',
    source: 'seed 001 §2, with an explicit guard',
    ordered: false,
    build: (s, m, o) => modelBinomialTree(s, m, { root: o?.root, op: o?.op, mapping: 'best', guard: true }),
  },
  {
    name: 'traff',
    description: "Träff's irregular gather/scatter tree with identical links (the model's mean α, β): sort by block, cost-balanced subsets, one representative each",
    source: 'seed 001 §2 (Träff 2004, its ref. [2]), model-oblivious',
    ordered: false,
    build: (s, m, o) => traffTree(s, m, { root: o?.root, op: o?.op, predictor: 'oblivious' }),
  },
  {
    name: 'model-traff',
    description: "model-based Träff tree: subsets balanced in predicted cost to the parent, representative = least predicted time to move its subset's data",
    source: 'seed 001 §2, Fig. 1',
    ordered: false,
    build: (s, m, o) => traffTree(s, m, { root: o?.root, op: o?.op, predictor: 'model' }),
  },
  {
    name: 'model-traff-guarded',
    description: 'the faster (by the model) of the model-based and the original Träff trees: never slower than the original',
    source: 'seed 001 §2, with an explicit guard',
    ordered: false,
    build: (s, m, o) => traffTree(s, m, { root: o?.root, op: o?.op, predictor: 'model', guard: true }),
  },
];

export function findTreeAlgorithm(name: string): TreeAlgorithm | undefined {
  return TREE_ALGORITHMS.find((a) => a.name === name);
}
