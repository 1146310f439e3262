/**
 * Binomial gatherv: the block-size oblivious, rank-ordered binomial tree with the fixed root
 * (Traff18 §2 and Lemma 2: level h = 1, 2, 4, … joins adjacent ranges, the range holding the
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
 * Plan: collectives/tree-exec.ts (binomialCounts, binomialNodeSchedule). Data phase: the generic tree executor
 * (gatherv/tree.ts) on this tree. Cost: evaluate(obliviousTreeFor(p, root), counts,
 * model).time on the simulator, at worst ⌈log₂p⌉(α + β·Σ_{i≠r} m_i) (Traff18 §1).
 */
import { BINOMIAL_DESCRIPTION, treeVariant } from '../tree-exec.js';
import type { GathervVariant } from '../variant.js';
import { treeGather } from './tree.js';

export const BINOMIAL_GATHERV: GathervVariant = treeVariant('binomial', 'gatherv', BINOMIAL_DESCRIPTION, treeGather);
