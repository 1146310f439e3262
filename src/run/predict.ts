/**
 * The model's prediction for one run: the completion time, by the exact evaluator
 * (src/trees/evaluate.ts), of the tree the algorithm's data phase follows — linear: the star;
 * binomial: the oblivious binomial tree with the root fixed (seed 000 Lemma 2); adaptive:
 * the adaptive binomial tree with the root fixed (seed 000 Lemmas 1–2); optimal, binary,
 * two-block: the trees of seed 004 Theorems 2, 3 and §5.2 for that root — plus, when the run
 * has a round latency (calibrated threads), that latency per level of the tree. The
 * prediction covers the data phase only, not a construction or schedule-distribution phase.
 * On the simulator (no round latency) a persistent data phase takes exactly this time.
 */
import type { VAlgorithm } from '../collectives/types.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree } from '../trees/adaptive.js';
import { optimalBinaryTree } from '../trees/binary.js';
import { obliviousBinomialTree } from '../trees/binomial.js';
import { VcollError } from '../errors.js';
import { evaluate } from '../trees/evaluate.js';
import { linearTree } from '../trees/linear.js';
import { optimalTree } from '../trees/optimal.js';
import { findTreeAlgorithm } from '../trees/registry.js';
import { depths } from '../trees/tree.js';
import { twoBlockTree } from '../trees/two-block.js';
import type { BuiltTree } from '../trees/types.js';
import type { VOperation } from './spec.js';

/** The tree the data phase of `algorithm` follows for these sizes and root. */
export function dataPhaseTree(
  algorithm: Exclude<VAlgorithm, 'auto'>,
  sizes: readonly number[],
  model: CostModel,
  root: number,
  op: VOperation = 'gatherv',
): BuiltTree {
  switch (algorithm) {
    case 'linear':
      return linearTree(sizes, model, { root });
    case 'binomial':
      return obliviousBinomialTree(sizes, model, { root });
    case 'adaptive':
      return adaptiveBinomialTree(sizes, model, { root });
    case 'optimal':
      return optimalTree(sizes, model, { root, mode: 'exact' });
    case 'binary':
      return optimalBinaryTree(sizes, model, { root });
    case 'two-block':
      return twoBlockTree(sizes, model, { root });
    default: {
      // the seed 001 trees (model-binomial-*, traff, model-traff*): built for the operation
      const alg = findTreeAlgorithm(algorithm);
      if (alg === undefined) throw new VcollError('INTERNAL', `no tree construction named ${algorithm}`);
      return alg.build(sizes, model, { root, op: op === 'gatherv' ? 'gather' : 'scatter' });
    }
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
  const built = dataPhaseTree(algorithm, sizes, model, root, op);
  const time = evaluate(built.tree, sizes, model, op === 'gatherv' ? 'gather' : 'scatter').time;
  if (roundLatency === 0) return time;
  let height = 0;
  for (const d of depths(built.tree)) if (d > height) height = d;
  return time + roundLatency * height;
}
