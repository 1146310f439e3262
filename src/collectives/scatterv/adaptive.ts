/**
 * Adaptive scatterv (Traff18: TUW_Scatterv, Lemmas 1–4, Theorem 1, §3).
 *
 * Construction first (adaptive/construct.ts, Lemma 3 with the MPI root fixed as in Lemma 2):
 * the tree equals `adaptiveBinomialTree(sizes, model, { root, rule })`, the gather tree run
 * backwards. Then the data top-down, each gather root sending to its children in the reverse
 * of the order it joined them: the root straight from its send buffer (a vectored send when
 * the displacements of a range are not contiguous, collectives/placement.ts); an inner rank receives
 * its whole range into an intermediate buffer in rank order, sends the sub-ranges on and
 * copies its own block out at the position the gather copy convention mirrors; a leaf
 * receives straight into its buffer (under Lemma 4 every rank goes through the buffer). An
 * empty range moves no message.
 *
 * `init` runs the construction, `start()` only the data phase (the root cannot start before
 * the tree exists, §3: the construction is not hidden as in gather), compiled into a schedule
 * once the role is known (adaptive/schedule.ts) and run by the transport's executor. Cost: construction
 * ⌈log₂p⌉ rounds of constant-size messages; data phase exactly the evaluator's scatter time
 * of the tree, ⌈log₂p⌉α + βΣ_{i≠r} m_i for the Lemma 1 free root with γ = 0, p = 2^d.
 *
 * k ports (model.ports = k > 1; Theorem 1's k-ported remark): the construction joins groups of
 * k + 1 ranges in ⌈log_{k+1}p⌉ rounds (adaptive/kported-construct.ts) and every rank sends to
 * its children with k outstanding, its copy a message to itself (adaptive/schedule.ts): the data
 * phase ends at exactly the evaluator's k-ported scatter time of the tree.
 */
import { bindPlanSchedule, describeRank, schedulePlan } from '../compiled-plan.js';
import type { PersistentCollective } from '../types.js';
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';
import { constructAdaptive, type AdaptiveRole } from '../adaptive/construct.js';
import { adaptiveContext, adaptiveInfo, rootRangeCheck } from '../adaptive/plan.js';
import { adaptiveScatterSchedule } from '../adaptive/schedule.js';
import { nextPlanTags } from '../adaptive/tags.js';

function initAdaptiveScatterv(input: ScattervPlanInput): Promise<PersistentCollective> {
  try {
    const { comm, root } = input;
    const me = comm.rank;
    const ctx = adaptiveContext(comm, root, input.model, input.adaptive);
    const tags = nextPlanTags(comm);
    const check = me === root ? rootRangeCheck(me, input.counts as readonly number[]) : undefined;
    // a chain, not an async frame: a simulation holds every rank's plan while the constructions run
    return constructAdaptive({ comm, root, count: input.count, ctx, tags, onEvent: check }).then((role: AdaptiveRole) =>
      schedulePlan(comm, adaptiveInfo(comm.size, input.model.ports), bindPlanSchedule(input, adaptiveScatterSchedule({ ...describeRank(input), copyAll: ctx.copyAll }, role, tags.data))),
    );
  } catch (e) {
    return Promise.reject(e);
  }
}

export const ADAPTIVE_SCATTERV: ScattervVariant = {
  name: 'adaptive',
  description: 'Traff18: distributed adaptive binomial tree (Lemma 3, constant-size messages), fixed root (Lemma 2), data top-down after the construction',
  init: initAdaptiveScatterv,
};
