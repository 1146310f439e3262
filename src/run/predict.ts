/**
 * The model's prediction for one run: the completion time, by the exact evaluator
 * (src/trees/evaluate.ts), of the tree the algorithm's data phase follows — linear: the star;
 * binomial: the oblivious binomial tree with the root fixed (seed 000 Lemma 2); adaptive:
 * the adaptive binomial tree with the root fixed (seed 000 Lemmas 1–2); optimal, binary,
 * two-block: the trees of seed 004 Theorems 2 (Theorem 1 under a per-pair model), 3 and §5.2
 * for that root; the seed 001 trees built for the operation — plus, when the run
 * has a round latency (calibrated threads), that latency per level of the tree. The
 * prediction covers the data phase only, not a construction or schedule-distribution phase.
 * On the simulator (no round latency) a persistent data phase takes exactly this time.
 */
import { buildTree } from '../collectives/schedule.js';
import type { VAlgorithm } from '../collectives/types.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree } from '../trees/adaptive.js';
import { obliviousBinomialTree } from '../trees/binomial.js';
import { evaluate } from '../trees/evaluate.js';
import { linearTree } from '../trees/linear.js';
import { treeHeight, type Tree } from '../trees/tree.js';
import type { VOperation } from './spec.js';

/**
 * The tree the data phase of `algorithm` follows for these sizes and root: the binomial
 * family here, every root-built tree (optimal — per-pair DP under a per-pair model —, binary,
 * two-block, the seed 001 trees) through the collectives' own buildTree, so the prediction
 * and the run can never use different trees.
 */
function dataPhaseTree(algorithm: Exclude<VAlgorithm, 'auto'>, sizes: readonly number[], model: CostModel, root: number, op: VOperation): Tree {
  switch (algorithm) {
    case 'linear':
    case 'mpi-native': // the MPI library's MPI_Gatherv / MPI_Scatterv: linear in Open MPI 4.1.4 (coll/basic) and MPICH
      return linearTree(sizes, model, { root }).tree;
    case 'binomial':
      return obliviousBinomialTree(sizes, model, { root }).tree;
    case 'adaptive':
      return adaptiveBinomialTree(sizes, model, { root }).tree;
    default:
      return buildTree(algorithm, sizes, model, root, root, op);
  }
}

/** Predicted completion time of the data phase (model units); `roundLatency` per tree level. */
export function predictTime(
  algorithm: Exclude<VAlgorithm, 'auto'>,
  op: VOperation,
  sizes: readonly number[],
  model: CostModel,
  root: number,
  roundLatency = 0,
): number {
  const tree = dataPhaseTree(algorithm, sizes, model, root, op);
  const time = evaluate(tree, sizes, model, op === 'gatherv' ? 'gather' : 'scatter').time;
  if (roundLatency === 0) return time;
  return time + roundLatency * treeHeight(tree);
}
