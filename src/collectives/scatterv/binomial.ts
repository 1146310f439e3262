/**
 * Binomial scatterv: the block-size oblivious, rank-ordered binomial tree with the fixed root
 * (Traff18 §2, Lemma 2; `obliviousTreeFor` of src/trees/binomial.ts), run as a scatter: every
 * rank receives its subtree's blocks in one message from its parent and sends each child its
 * range, largest first. The root first scatters its counts down the same tree (⌈log₂p⌉
 * rounds, about ⌈log₂p⌉·α + 4(p − 1)·β per byte; see gatherv/binomial.ts and
 * collectives/tree-exec.ts), so every rank knows the sizes it receives and forwards, and
 * checks its own count against the root's.
 *
 * Data phase: the generic scatter executor (scatterv/tree.ts) on this tree; on the
 * simulator evaluate(obliviousTreeFor(p, root), counts, model, 'scatter').time.
 */
import { BINOMIAL_DESCRIPTION, treeVariant } from '../tree-exec.js';
import type { ScattervVariant } from '../variant.js';
import { treeScatter } from './tree.js';

export const BINOMIAL_SCATTERV: ScattervVariant = treeVariant('binomial', 'scatterv', BINOMIAL_DESCRIPTION, treeScatter);
