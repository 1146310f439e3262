/**
 * Defaults of the irregular collectives.
 *
 * DEFAULT_MODEL: the model trees are built for when the caller gives none,
 * linearModel({ alpha: 100, beta: 1, gamma: 0 }), per element. α = 100β is the start-up to
 * per-element ratio of Traff17's Table 1 (the papers' main setting: a start-up costs as
 * much as sending 100 elements), which is the regime where the choice of tree matters.
 * γ = 0 because a local copy (memcpy) is much cheaper than moving the same bytes through
 * the network, and Traff18's Lemma 1 analysis leaves it out; pass a model with γ > 0 to
 * account for it (Traff18 Lemma 4).
 *
 * V_TAGS: the tags gatherv/scatterv use, inside the range reserved for collectives
 * (COLLECTIVE_TAG … COLLECTIVE_TAG + 2²⁰ − 1). Each message kind has its own tag so a
 * schedule message can never be matched by a data receive. Ranges used: COLLECTIVE_TAG + 0x300 … + 0x3ff
 * (the 'v-plan' and 'v-data' rows of the tag table, comm/tags.ts).
 */
import { firstTag, namedTags } from '../comm/tags.js';
import { linearModel, type CostModel } from '../model/cost-model.js';

export const DEFAULT_MODEL: CostModel = linearModel({ alpha: 100, beta: 1, gamma: 0 });

const PLANNING = namedTags('v-plan');

export const V_TAGS = Object.freeze({
  /** Binomial: the root's counts scattered down the binomial tree. */
  counts: PLANNING.counts,
  /** Tree executor: fixed-width schedule records. */
  schedule: PLANNING.schedule,
  /** Tree executor: the variable-length part (children lists). */
  scheduleChildren: PLANNING.scheduleChildren,
  /** Data blocks: plan s uses dataFirst + (s mod 128) (node-schedule.ts, nextDataTag). */
  dataFirst: firstTag('v-data'),
});
