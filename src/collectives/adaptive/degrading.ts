/**
 * What the degrading gatherv and scatterv share (collectives/gatherv/degrading.ts,
 * scatterv/degrading.ts): the join context with the degrading rule, and a rank's role in the
 * degrading tree — the construction's rounds with the rule (construct.ts), then the verdicts
 * (verdicts.ts) on every rank but the root, which builds the same tree from its counts
 * (trees/degrading.ts, the same decisions: trees/degrading-rule.ts) and takes its children in
 * the order they are ready.
 *
 * Cost: ⌈log₂p⌉ construction rounds of 56-byte records and notifications, then a chain of at
 * most ⌈log₂p⌉ 16-byte verdicts: at most 2⌈log₂p⌉ + 1 dependent messages (degradingRounds).
 * Local work O(κ log κ) per rank; O(p log p) at the root (its tree).
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import type { CostModel } from '../../model/cost-model.js';
import { degradingTree } from '../../trees/degrading.js';
import { degradingCosts } from '../../trees/degrading-rule.js';
import { bindPlanSchedule, describeRank, schedulePlan } from '../compiled-plan.js';
import type { RankSchedule, VRankDescription } from '../schedule-builder.js';
import type { AdaptiveVariantOptions, CollectiveInfo, PersistentCollective } from '../types.js';
import { onePorted, type GathervPlanInput, type ScattervPlanInput, type VPlanInput } from '../variant.js';
import { constructAdaptive, constructionRounds, type AdaptiveRole } from './construct.js';
import type { JoinContext } from './decide.js';
import { hypercubeRounds } from './hypercube.js';
import { adaptiveContext, rootRangeCheck } from './plan.js';
import { roleOfTree } from './schedule.js';
import { nextPlanTags, type AdaptiveTags } from './tags.js';
import { settleDegradingRole } from './verdicts.js';

/** The degrading tree's root copies its own block first (trees/degrading.ts). */
const DEGRADING_ROOT_COPY_AT = 0;

/** The degrading rule decides one-ported joins (trees/degrading-rule.ts): the variant table's restriction. */
export const DEGRADING_ONE_PORTED = onePorted('degrading gatherv/scatterv build one-ported trees (the degrading rule, Traff18 §3)');

/**
 * The join context of a degrading plan: adaptive's (the model's size), with the degrading
 * rule, for one-ported models only. A k-ported model, Traff18 Lemma 4's every-rank-copies
 * convention and the Lemma 1 rule are not the degrading tree's: InvalidArgumentError on every
 * rank.
 */
export function degradingContext(comm: Communicator, root: number, model: CostModel, options: AdaptiveVariantOptions): JoinContext {
  const ports = DEGRADING_ONE_PORTED.why({ p: comm.size, model });
  if (ports !== undefined) throw DEGRADING_ONE_PORTED.error(ports, comm.rank);
  const ctx = adaptiveContext(comm, root, model, options);
  if (ctx.copyAll) {
    const field = model.copyAll ? 'model' : 'adaptive.lemma4';
    throw new InvalidArgumentError(field, 'degrading builds its tree under the ordered copy convention; copyAll (Traff18 Lemma 4) is not supported', { rank: comm.rank });
  }
  if (ctx.rule !== 'exact') {
    throw new InvalidArgumentError('adaptive.rule', `degrading decides its joins by the exact rule; got '${ctx.rule}'`, { rank: comm.rank });
  }
  return { ...ctx, degrading: degradingCosts(model, root) };
}

/** Longest chain of dependent messages: the construction's, then ⌈log₂p⌉ verdicts. */
export function degradingRounds(p: number): number {
  return constructionRounds(p) + (p > 2 ? hypercubeRounds(p) : 0);
}

export function degradingInfo(p: number): CollectiveInfo {
  return { algorithm: 'degrading', constructionRounds: degradingRounds(p), height: hypercubeRounds(p) };
}

/**
 * This rank's role in the degrading tree. The root checks every range that reaches it against
 * its counts (rootRangeCheck, before any data moves) and then builds the tree from them.
 */
export function degradingRole(input: VPlanInput, ctx: JoinContext, tags: AdaptiveTags): Promise<AdaptiveRole> {
  const { comm, root, count } = input;
  const isRoot = comm.rank === root;
  const check = isRoot ? rootRangeCheck(root, input.counts as readonly number[]) : undefined;
  return constructAdaptive({ comm, root, count, ctx, tags, onEvent: check }).then((role) => {
    if (!isRoot) return settleDegradingRole(comm, role, ctx.degrading as NonNullable<JoinContext['degrading']>, tags.verdict);
    const counts = input.counts as readonly number[];
    const own = roleOfTree(degradingTree(counts, input.model, { root }).tree, counts, root);
    return { ...own, final: role.final };
  });
}

/** A rank's data-phase schedule for its role (adaptive/schedule.ts's gather or scatter). */
export type RoleSchedule = (d: VRankDescription, role: AdaptiveRole, tag: number, rootCopyAt?: number) => RankSchedule;

/** The degrading plan of gatherv or scatterv: the role, then `schedule` compiled for it. */
export function degradingPlan(input: GathervPlanInput | ScattervPlanInput, schedule: RoleSchedule): Promise<PersistentCollective> {
  try {
    const { comm, root } = input;
    const ctx = degradingContext(comm, root, input.model, input.adaptive);
    const tags = nextPlanTags(comm);
    return degradingRole(input, ctx, tags).then((role) =>
      schedulePlan(comm, degradingInfo(comm.size), bindPlanSchedule(input, schedule({ ...describeRank(input), copyAll: false }, role, tags.data, DEGRADING_ROOT_COPY_AT))),
    );
  } catch (e) {
    return Promise.reject(e);
  }
}
