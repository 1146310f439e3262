/**
 * Exhaustive search over all ordered gather/scatter trees for small p: the ground truth the
 * dynamic programs (Traff17 §3, Theorems 1–2) are tested against. Trees are enumerated as
 * structures, by the definition of an ordered tree (Traff17 Definition 3 in the growing
 * form of `isOrdered`): a root starts with its own segment [r..r] and grows it, one receive at
 * a time, by an adjacent range on its left or right whose ranks form an ordered subtree with
 * any root. Each tree is built with `TreeBuilder` (ordered copy convention) and timed with
 * `evaluate`, so no recurrence is involved.
 *
 * Cost: there are 2^(p−1)·Catalan(p−1) ordered trees over p ranks with any root
 * (1, 2, 8, 40, 224, 1344, 8448, 54912, 366080 for p = 1..9), each evaluated in O(p).
 * Works for every cost model `evaluate` supports (pairwise, k-ported too).
 */
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import { requireFiniteCosts, requireModelFits, type CostModel } from '../model/cost-model.js';
import { validateRoot, validateSizes } from '../model/validate.js';
import { evaluate } from './evaluate.js';
import { TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree } from './types.js';

/** Largest p the exhaustive search accepts (366080 trees with any root at p = 9). */
export const BRUTE_FORCE_MAX_P = 9;

/** (parent, child) pairs; a parent's children appear in receive order. */
type Edges = ReadonlyArray<readonly [number, number]>;

/** All ordered subtrees over [lo..hi] rooted at r. */
function* subtrees(lo: number, hi: number, r: number): Generator<Edges> {
  yield* grow(lo, hi, r, r, r);
}

/** All ways for r, whose segment is [a..b], to grow it to [lo..hi]. */
function* grow(lo: number, hi: number, r: number, a: number, b: number): Generator<Edges> {
  if (a === lo && b === hi) {
    yield [];
    return;
  }
  // next receive: a range [c..a−1] on the left
  for (let c = a - 1; c >= lo; c--) {
    for (let q = c; q <= a - 1; q++) {
      for (const sub of subtrees(c, a - 1, q)) {
        for (const rest of grow(lo, hi, r, c, b)) yield [[r, q], ...sub, ...rest];
      }
    }
  }
  // or a range [b+1..d] on the right
  for (let d = b + 1; d <= hi; d++) {
    for (let q = b + 1; q <= d; q++) {
      for (const sub of subtrees(b + 1, d, q)) {
        for (const rest of grow(lo, hi, r, a, d)) yield [[r, q], ...sub, ...rest];
      }
    }
  }
}

/** Every ordered tree over p ranks (rooted at `root`, or at every root in turn). */
export function* orderedTrees(p: number, root?: number): Generator<Tree> {
  if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be an integer >= 1, got ${p}`);
  if (p > BRUTE_FORCE_MAX_P) throw new TooLargeError('p', `enumeration is limited to p ≤ ${BRUTE_FORCE_MAX_P}, got ${p}`);
  const roots = root === undefined ? Array.from({ length: p }, (_, r) => r) : [validateRoot(root, p)];
  for (const r of roots) {
    for (const edges of subtrees(0, p - 1, r)) {
      const b = new TreeBuilder(p, r);
      for (const [u, v] of edges) b.addChild(u, v);
      yield b.build();
    }
  }
}

/**
 * The fastest ordered tree by exhaustive search (p ≤ BRUTE_FORCE_MAX_P). With `root`
 * omitted every root is tried; ties keep the first tree found (roots in increasing order).
 */
export function bruteForceOrderedOptimal(sizes: ArrayLike<number>, model: CostModel, root?: number): BuiltTree {
  const m = validateSizes(sizes);
  const p = m.length;
  requireModelFits(model, p);
  requireFiniteCosts(model, m);
  if (p > BRUTE_FORCE_MAX_P) {
    throw new TooLargeError('p', `exhaustive search is limited to p ≤ ${BRUTE_FORCE_MAX_P}, got ${p}`);
  }
  const r = root === undefined ? undefined : validateRoot(root, p);
  let best: BuiltTree | undefined;
  for (const tree of orderedTrees(p, r)) {
    const time = evaluate(tree, m, model).time;
    if (best === undefined || time < best.time) best = { tree, time, root: tree.root };
  }
  return best as BuiltTree;
}
