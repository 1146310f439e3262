/**
 * Binomial gatherv: the block-size oblivious, rank-ordered binomial tree with the fixed root
 * (seed 000 §2 and Lemma 2: level h = 1, 2, 4, … joins adjacent ranges, the range holding the
 * root receives; `obliviousTreeFor` of src/trees/binomial.ts). Every subtree is a consecutive
 * range of ranks, so blocks arrive in rank order and nothing is reordered; the root receives
 * straight into recv when the displacements keep each child's range contiguous.
 *
 * Non-root ranks do not know the sizes of their children's subtrees. The root tells them:
 * it scatters its counts down the same binomial tree (each rank receives the counts of its
 * own subtree range, one Int32 per rank), ⌈log₂p⌉ rounds (constructionRounds) in which the
 * root sends 4(p − 1) bytes in ⌈log₂p⌉ messages: about ⌈log₂p⌉·α + 4(p − 1)·β per byte on
 * the critical path. (The alternative, children reporting subtree totals upwards with
 * constant-size messages, costs the same rounds but leaves a rank whose count disagrees with
 * the root undetectable by rank; here every rank checks its own count against the root's
 * entry and throws InvalidArgumentError('count').) A persistent plan pays this once.
 *
 * Data phase: the generic tree executor (gatherv/tree.ts) on this tree. Cost:
 * evaluate(obliviousTreeFor(p, root), counts, model).time on the simulator, at worst
 * ⌈log₂p⌉(α + β·Σ_{i≠r} m_i) (seed 000 §1).
 */
import { V_TAGS } from '../defaults.js';
import { binomialNode, binomialSchedule, ceilLog2, checkOwnCount, nextDataTag, persistentPlan, scatterFixed } from '../schedule.js';
import type { Communicator } from '../../comm/communicator.js';
import type { PersistentCollective } from '../types.js';
import type { GathervPlanInput, GathervVariant } from '../variant.js';
import { gatherExecutor } from './tree.js';
import type { NodeSchedule } from '../schedule.js';

/**
 * This rank's schedule in the binomial tree: the root scatters its counts down the tree.
 * Shared by binomial gatherv and scatterv.
 */
export async function binomialPlan(
  comm: Communicator,
  root: number,
  counts: readonly number[] | undefined,
  ownCount: number,
  copyAll: boolean,
): Promise<NodeSchedule> {
  const p = comm.size;
  const me = comm.rank;
  let rangeCounts: ArrayLike<number>;
  if (p === 1) {
    rangeCounts = counts ?? [ownCount];
  } else {
    const all = me === root ? Int32Array.from(counts as readonly number[]) : undefined;
    rangeCounts = await scatterFixed(comm, binomialNode(p, root, me), 1, all, V_TAGS.counts);
  }
  const node = binomialSchedule(p, root, me, rangeCounts, copyAll);
  checkOwnCount(comm, ownCount, node);
  return node;
}

export const BINOMIAL_GATHERV: GathervVariant = {
  name: 'binomial',
  description: 'block-size oblivious rank-ordered binomial tree with the fixed root; the root scatters its counts first (⌈log₂p⌉ rounds)',
  async init(input: GathervPlanInput): Promise<PersistentCollective> {
    const { comm, root } = input;
    const tag = nextDataTag(comm, V_TAGS.dataFirst);
    const node = await binomialPlan(comm, root, input.counts, input.count, input.model.copyAll);
    const info = { algorithm: 'binomial' as const, constructionRounds: ceilLog2(comm.size), height: node.height };
    return persistentPlan(comm, info, gatherExecutor(input, node, tag));
  },
};
