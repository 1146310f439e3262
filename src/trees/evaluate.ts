/**
 * Exact completion time of a gather or scatter tree under any cost model (Traff17 §2,
 * Definition 2; k-ported with greedy port assignment), in O(p·k). The recurrence lives in
 * `timeline.ts` (`runTimeline`), shared with the drawings' `treeSchedule`; `evaluate` runs
 * it without recording operations, so it allocates only S and C.
 */
import { InvalidArgumentError } from '../errors.js';
import { requireModelFits, type CostModel } from '../model/cost-model.js';
import { runTimeline, type Operation } from './timeline.js';
import { postOrder, type Tree } from './tree.js';

export { PortClock, type Operation } from './timeline.js';

export interface Evaluation {
  /** Completion time of the whole tree. */
  readonly time: number;
  /** Completion time C(v) of the subtree rooted at every rank. */
  readonly completion: Float64Array;
  /** Size S(v) (sum of blocks) of the subtree rooted at every rank. */
  readonly subtreeSize: Float64Array;
}

export function evaluate(
  tree: Tree,
  sizes: ArrayLike<number>,
  model: CostModel,
  operation: Operation = 'gather',
): Evaluation {
  const p = tree.p;
  if (sizes.length !== p) throw new InvalidArgumentError('sizes', `has ${sizes.length} entries, the tree spans ${p} ranks`);
  requireModelFits(model, p);
  const S = new Float64Array(p);
  const C = new Float64Array(p);
  runTimeline(tree, sizes, model, operation, postOrder(tree), S, C);
  return { time: C[tree.root], completion: C, subtreeSize: S };
}

/** Completion time only. */
export function completionTime(tree: Tree, sizes: ArrayLike<number>, model: CostModel, operation: Operation = 'gather'): number {
  return evaluate(tree, sizes, model, operation).time;
}
