/**
 * The model's prediction for one run: the completion time, by the exact evaluator
 * (src/trees/evaluate.ts), of the tree the algorithm's data phase follows (its row's
 * `dataTree` in collectives/v-variants.ts: linear and mpi-native the star; binomial the
 * oblivious binomial tree with the root fixed; adaptive the adaptive binomial tree with the
 * root fixed; the root-built trees for that root and operation) — plus, when the run
 * has a round latency (calibrated threads), that latency per level of the tree. The
 * prediction covers the data phase only, not a construction or schedule-distribution phase.
 * On the simulator (no round latency) a persistent data phase takes exactly this time.
 */
import type { VAlgorithm } from '../collectives/types.js';
import { variantRow } from '../collectives/v-variants.js';
import { InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { evaluate } from '../trees/evaluate.js';
import { treeHeight, type Tree } from '../trees/tree.js';
import type { VOperation } from './spec.js';

/**
 * The tree the data phase of `algorithm` follows for these sizes and root: its row's
 * `dataTree` in the variant table (collectives/v-variants.ts) — the root-built trees through
 * the collectives' own construction — so the prediction and the run can never use different trees.
 */
function dataPhaseTree(algorithm: Exclude<VAlgorithm, 'auto'>, sizes: readonly number[], model: CostModel, root: number, op: VOperation): Tree {
  const row = variantRow(algorithm);
  if (row === undefined) throw new InvalidArgumentError('algorithm', `no gatherv/scatterv variant named '${String(algorithm)}'`);
  return row.dataTree(sizes, model, root, op).tree;
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
