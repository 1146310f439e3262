/**
 * Degrading adaptive gatherv: Traff18's adaptive binomial tree in which late subtrees send
 * their pieces straight to the root — the graceful degradation Traff18 §3 names and leaves
 * undone. The rule and its cost: trees/degrading.ts and trees/degrading-rule.ts.
 *
 * Construction: the distributed construction of Lemma 3 (adaptive/construct.ts) with the
 * degrading rule, then the verdicts (adaptive/verdicts.ts); the tree equals
 * `degradingTree(sizes, model, { root })`. Data: the compiled schedule of the adaptive gatherv
 * (adaptive/schedule.ts) for this rank's role; the root copies its block first and receives its
 * pieces in the order they are ready. Unlike `adaptive`, the data waits for the construction:
 * whether a rank's range goes to its parent is only known once the verdicts reach it.
 *
 * Cost: construction ≤ 2⌈log₂p⌉ + 1 dependent constant-size messages (degradingRounds); data
 * phase exactly the evaluator's time of the degrading tree, never above the adaptive tree's
 * or the star's on the cases measured (docs/algorithms.md).
 */
import type { PersistentCollective } from '../types.js';
import type { GathervPlanInput, GathervVariant } from '../variant.js';
import { degradingPlan } from '../adaptive/degrading.js';
import { adaptiveGatherSchedule } from '../adaptive/schedule.js';

function initDegradingGatherv(input: GathervPlanInput): Promise<PersistentCollective> {
  return degradingPlan(input, adaptiveGatherSchedule);
}

export const DEGRADING_GATHERV: GathervVariant = {
  name: 'degrading',
  description: 'Traff18 §3 graceful degradation: the distributed adaptive tree in which late subtrees send straight to the root',
  init: initDegradingGatherv,
};
