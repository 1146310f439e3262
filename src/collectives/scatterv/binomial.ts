/**
 * Binomial scatterv: the block-size oblivious, rank-ordered binomial tree with the fixed root
 * (seed 000 §2, Lemma 2; `obliviousTreeFor` of src/trees/binomial.ts), run as a scatter: every
 * rank receives its subtree's blocks in one message from its parent and sends each child its
 * range, largest first. The root first scatters its counts down the same tree (⌈log₂p⌉
 * rounds, about ⌈log₂p⌉·α + 4(p − 1)·β per byte; see gatherv/binomial.ts), so every rank
 * knows the sizes it receives and forwards, and checks its own count against the root's.
 *
 * Data phase: the generic scatter executor (scatterv/tree.ts) on this tree; on the
 * simulator evaluate(obliviousTreeFor(p, root), counts, model, 'scatter').time.
 */
import { V_TAGS } from '../defaults.js';
import { binomialPlan } from '../gatherv/binomial.js';
import { ceilLog2, nextDataTag, persistentPlan } from '../schedule.js';
import type { PersistentCollective } from '../types.js';
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';
import { scatterExecutor } from './tree.js';

export const BINOMIAL_SCATTERV: ScattervVariant = {
  name: 'binomial',
  description: 'block-size oblivious rank-ordered binomial tree with the fixed root; the root scatters its counts first (⌈log₂p⌉ rounds)',
  async init(input: ScattervPlanInput): Promise<PersistentCollective> {
    const { comm, root } = input;
    const tag = nextDataTag(comm, V_TAGS.dataFirst);
    const node = await binomialPlan(comm, root, input.counts, input.count, input.model.copyAll);
    const info = { algorithm: 'binomial' as const, constructionRounds: ceilLog2(comm.size), height: node.height };
    return persistentPlan(comm, info, scatterExecutor(input, node, tag));
  },
};
