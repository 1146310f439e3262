/**
 * Degrading adaptive scatterv: the degrading tree (trees/degrading.ts; Traff18 §3's graceful
 * degradation) run backwards — the root sends its pieces in the reverse of the gather's ready
 * order (its own block copied last), every other rank as in adaptive scatterv.
 *
 * Construction as the degrading gatherv's (adaptive/degrading.ts: ≤ 2⌈log₂p⌉ + 1 dependent
 * constant-size messages), then the data phase compiled into a schedule
 * (adaptive/schedule.ts): exactly the evaluator's scatter time of the tree.
 */
import type { PersistentCollective } from '../types.js';
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';
import { degradingPlan } from '../adaptive/degrading.js';
import { adaptiveScatterSchedule } from '../adaptive/schedule.js';

function initDegradingScatterv(input: ScattervPlanInput): Promise<PersistentCollective> {
  return degradingPlan(input, adaptiveScatterSchedule);
}

export const DEGRADING_SCATTERV: ScattervVariant = {
  name: 'degrading',
  description: 'the degrading adaptive tree (Traff18 §3 graceful degradation) run backwards, data top-down after the construction',
  init: initDegradingScatterv,
};
