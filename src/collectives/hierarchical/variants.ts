/**
 * THE table of the hierarchical gather and gatherv variants, one row each, like GATHERV_VARIANTS
 * (collectives/v-variants.ts). Derived from it: the union `HierarchicalVariantName` (re-exported
 * by types.ts) and `HIERARCHICAL_VARIANT_NAMES` (row order: what the errors of index.ts, the
 * benchmark and the tests enumerate).
 *
 * | name        | paper (docs/papers.md)        | node + bridge gather | root                                                    | copies at the root             |
 * | ----------- | ----------------------------- | -------------------- | ------------------------------------------------------- | ------------------------------ |
 * | 'zero-copy' | TraffRougier14 §6, Fig. 6     | two-level.ts         | receives into `recv` through indexed(-block) placements | its own block only             |
 * | 'reorder'   | TraffRougier14 §2–§4, Figs. 1–2 | two-level.ts       | receives into a node-ordered buffer, then permutes      | its own block + every other one |
 * | 'flat'      | TraffRougier14 §4 (the flat MPI_Gather it compares against) | — | basic gather (binomial) / gatherv 'binomial'   | its own block (+ interior ranks copy theirs) |
 *
 * The flat gather is the ordered binomial tree of basic/gather.ts (⌈log₂p⌉ rounds, every
 * non-leaf rank copies its block, γ·m); the flat gatherv is the `binomial` gatherv
 * (collectives/gatherv/binomial.ts: the root scatters counts first, ⌈log₂p⌉ rounds, then ⌈log₂p⌉
 * data rounds), chosen because it is the block-size oblivious tree the two-level algorithm uses
 * at each level.
 */
import { reorderTarget, zeroCopyTarget, type RootTarget, type TargetInput } from './root-target.js';

export interface HierarchicalVariant<N extends string = HierarchicalVariantName> {
  readonly name: N;
  /** Paper key and section (docs/papers.md). */
  readonly paper: string;
  readonly description: string;
  /** The root's target of the two-level gather; undefined: the flat algorithm runs instead. */
  readonly rootTarget: ((t: TargetInput) => RootTarget) | undefined;
}

const ROWS = [
  {
    name: 'zero-copy',
    paper: 'TraffRougier14 §6, Fig. 6',
    description: 'node gather + bridge gather straight into recv through an indexed-block placement (TraffRougier14 §6, Fig. 6)',
    rootTarget: zeroCopyTarget,
  } satisfies HierarchicalVariant<'zero-copy'>,
  {
    name: 'reorder',
    paper: 'TraffRougier14 §2–§4, Figs. 1–2',
    description: 'node gather + bridge gather into a node-ordered buffer, then explicit copies into recv (TraffRougier14 Fig. 1, §4)',
    rootTarget: reorderTarget,
  } satisfies HierarchicalVariant<'reorder'>,
  {
    name: 'flat',
    paper: 'TraffRougier14 §4 (the flat MPI_Gather it compares against)',
    description: 'the non-hierarchical binomial gather / binomial gatherv, for comparison',
    rootTarget: undefined,
  } satisfies HierarchicalVariant<'flat'>,
] as const;

/**
 * - 'zero-copy': the bridge gather receives straight into `recv` through an indexed (gather:
 *   indexed-block) placement of each node's blocks (TraffRougier14 §6, Fig. 6);
 * - 'reorder': the bridge gather lands in a contiguous intermediate buffer in node order and
 *   the root permutes it into `recv` with explicit copies (TraffRougier14 Fig. 1, Fig. 2, §4);
 * - 'flat': the non-hierarchical gather / binomial gatherv, for comparison.
 */
export type HierarchicalVariantName = (typeof ROWS)[number]['name'];

/** Every variant, one row each (see the module comment). */
export const HIERARCHICAL_VARIANTS: readonly HierarchicalVariant[] = ROWS;

/** The names, in row order. */
export const HIERARCHICAL_VARIANT_NAMES: readonly HierarchicalVariantName[] = HIERARCHICAL_VARIANTS.map((v) => v.name);
