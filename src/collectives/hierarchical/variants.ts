/**
 * The variants of the hierarchical gather and gatherv, as a table like GATHERV_VARIANTS:
 *
 * | name        | node + bridge gather | root                                                  | copies at the root             |
 * | ----------- | -------------------- | ----------------------------------------------------- | ------------------------------ |
 * | 'zero-copy' | two-level.ts         | receives into `recv` through indexed(-block) placements | its own block only             |
 * | 'reorder'   | two-level.ts         | receives into a node-ordered buffer, then permutes    | its own block + every other one |
 * | 'flat'      | —                    | basic gather (binomial) / gatherv 'binomial'           | its own block (+ interior ranks copy theirs) |
 *
 * Seed 002: Fig. 1 and §4 (reorder), §6 and Fig. 6 (zero-copy). The flat gather is the
 * ordered binomial tree of basic/gather.ts (⌈log₂p⌉ rounds, every non-leaf rank copies its
 * block, γ·m); the flat gatherv is the `binomial` gatherv (collectives/gatherv/binomial.ts:
 * the root scatters counts first, ⌈log₂p⌉ rounds, then ⌈log₂p⌉ data rounds), chosen because
 * it is the block-size oblivious tree the two-level algorithm uses at each level.
 */
import { reorderTarget, zeroCopyTarget, type RootTarget, type TargetInput } from './root-target.js';
import type { HierarchicalVariantName } from './types.js';

export interface HierarchicalVariant {
  readonly name: HierarchicalVariantName;
  readonly description: string;
  /** The root's target of the two-level gather; undefined: the flat algorithm runs instead. */
  readonly rootTarget: ((t: TargetInput) => RootTarget) | undefined;
}

export const HIERARCHICAL_VARIANTS: readonly HierarchicalVariant[] = [
  {
    name: 'zero-copy',
    description: 'node gather + bridge gather straight into recv through an indexed-block placement (seed 002 §6, Fig. 6)',
    rootTarget: zeroCopyTarget,
  },
  {
    name: 'reorder',
    description: 'node gather + bridge gather into a node-ordered buffer, then explicit copies into recv (seed 002 Fig. 1, §4)',
    rootTarget: reorderTarget,
  },
  {
    name: 'flat',
    description: 'the non-hierarchical binomial gather / binomial gatherv, for comparison',
    rootTarget: undefined,
  },
];
