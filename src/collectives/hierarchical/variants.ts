/**
 * THE table of the hierarchical gather(v) and scatter(v) variants, one row each, like
 * GATHERV_VARIANTS (collectives/v-variants.ts). Derived from it: the union
 * `HierarchicalVariantName` (re-exported by types.ts) and `HIERARCHICAL_VARIANT_NAMES` (row
 * order: what the errors of index.ts, the benchmark and the tests enumerate). The variant says
 * what the root does; the tree of both levels (binomial or adaptive, level-trees.ts) is
 * orthogonal to it (HierarchicalOptions.tree).
 *
 * | name        | paper (docs/papers.md)        | root of the gather                                      | root of the scatter                                 | copies at the root             |
 * | ----------- | ----------------------------- | ------------------------------------------------------- | --------------------------------------------------- | ------------------------------ |
 * | 'zero-copy' | TraffRougier14 §6, Fig. 6     | receives into `recv` through indexed(-block) placements | sends out of `send` through the same placements     | its own block only             |
 * | 'reorder'   | TraffRougier14 §2–§4, Figs. 1–2 | receives into a node-ordered buffer, then permutes    | packs into a node-ordered buffer, then sends slices | its own block + every other one |
 * | 'flat'      | TraffRougier14 §4 (the flat MPI_Gather it compares against) | basic gather / gatherv 'binomial' (tree 'adaptive': gatherv 'adaptive') | basic scatter / scatterv 'binomial' ('adaptive') | its own block (+ interior ranks copy theirs) |
 *
 * The flat gather is the ordered binomial tree of basic/gather.ts (⌈log₂p⌉ rounds, every
 * non-leaf rank copies its block, γ·m); the flat gatherv is the `binomial` gatherv
 * (collectives/gatherv/binomial.ts: the root scatters counts first, ⌈log₂p⌉ rounds, then ⌈log₂p⌉
 * data rounds), chosen because it is the block-size oblivious tree the two-level algorithm uses
 * at each level. The flat scatter and scatterv are their mirrors (basic/scatter.ts, scatterv
 * 'binomial'); with tree 'adaptive' the flat gatherv/scatterv are Traff18's adaptive ones
 * (gatherv/adaptive.ts, scatterv/adaptive.ts), so that each tree has its flat counterpart.
 */
import { reorderSource, zeroCopySource, type RootSource, type SourceInput } from './root-source.js';
import { reorderTarget, zeroCopyTarget, type RootTarget, type TargetInput } from './root-target.js';

export interface HierarchicalVariant<N extends string = HierarchicalVariantName> {
  readonly name: N;
  /** Paper key and section (docs/papers.md). */
  readonly paper: string;
  readonly description: string;
  /** The root's target of the two-level gather; undefined: the flat algorithm runs instead. */
  readonly rootTarget: ((t: TargetInput) => RootTarget) | undefined;
  /** The root's source of the two-level scatter; undefined: the flat algorithm runs instead. */
  readonly rootSource: ((t: SourceInput) => RootSource) | undefined;
}

const ROWS = [
  {
    name: 'zero-copy',
    paper: 'TraffRougier14 §6, Fig. 6',
    description: 'node gather + bridge gather straight into recv (scatter: out of send) through an indexed-block placement (TraffRougier14 §6, Fig. 6)',
    rootTarget: zeroCopyTarget,
    rootSource: zeroCopySource,
  } satisfies HierarchicalVariant<'zero-copy'>,
  {
    name: 'reorder',
    paper: 'TraffRougier14 §2–§4, Figs. 1–2',
    description: 'node gather + bridge gather into a node-ordered buffer, then explicit copies into recv (scatter: packs first; TraffRougier14 Fig. 1, §4)',
    rootTarget: reorderTarget,
    rootSource: reorderSource,
  } satisfies HierarchicalVariant<'reorder'>,
  {
    name: 'flat',
    paper: 'TraffRougier14 §4 (the flat MPI_Gather it compares against)',
    description: 'the non-hierarchical binomial gather(v) / scatter(v) (tree adaptive: the adaptive gatherv/scatterv), for comparison',
    rootTarget: undefined,
    rootSource: undefined,
  } satisfies HierarchicalVariant<'flat'>,
] as const;

/**
 * - 'zero-copy': the bridge gather receives straight into `recv` through an indexed (gather:
 *   indexed-block) placement of each node's blocks (TraffRougier14 §6, Fig. 6); the scatter
 *   sends straight out of `send` through the same placements;
 * - 'reorder': the bridge gather lands in a contiguous intermediate buffer in node order and
 *   the root permutes it into `recv` with explicit copies (TraffRougier14 Fig. 1, Fig. 2, §4);
 *   the scatter packs `send` into such a buffer first;
 * - 'flat': the non-hierarchical gather(v) / scatter(v), for comparison.
 */
export type HierarchicalVariantName = (typeof ROWS)[number]['name'];

/** Every variant, one row each (see the module comment). */
export const HIERARCHICAL_VARIANTS: readonly HierarchicalVariant[] = ROWS;

/** The names, in row order. */
export const HIERARCHICAL_VARIANT_NAMES: readonly HierarchicalVariantName[] = HIERARCHICAL_VARIANTS.map((v) => v.name);
