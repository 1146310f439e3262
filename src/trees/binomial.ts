/**
 * Binomial gather/scatter trees over the ordered hypercube (Traff18 §2, Traff17 §5.1
 * "Oblivious"/"Adaptive", docs/MODEL.md "Binomial trees over the ordered hypercube").
 *
 * Oblivious (this file): the standard rank-ordered binomial tree. Level h = 1, 2, 4, …
 * joins [lo..lo+h−1] and [lo+h..min(lo+2h, p)−1]; the range containing the root r
 * receives, otherwise the upper range's root receives (range roots not containing r are the
 * last ranks of their ranges). The tree depends only on p and r, never on the block sizes.
 * Receives come in level order; the ordered copy convention places the local copy
 * (under `model.copyAll`, Traff18 Lemma 4, every rank copies first).
 * Cost: O(p) time and space for a fixed root.
 *
 * Best root (root omitted): Traff17's tables search only the natural roots
 * {0, 1, 3, 7, …, 2^j − 1 < p, p − 1} (default, reproduces the tables; O(p log p));
 * `searchAllRoots: true` tries every root (O(p²)) and may find lower times. Ties go to the
 * lowest rank.
 *
 * The adaptive construction lives in adaptive.ts and is re-exported here.
 */
import { InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { evaluate } from './evaluate.js';
import { prepareProblem } from './linear.js';
import { TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

export {
  adaptiveBinomialTree,
  adaptiveRounds,
  roundsFor,
  type AdaptiveJoin,
  type AdaptiveOptions,
  type AdaptiveRule,
  type AdaptiveSchedule,
} from './adaptive.js';

export interface ObliviousOptions extends RootOption {
  /** Best root over every rank instead of the natural roots {0, 1, 3, …, 2^j − 1, p − 1}. */
  readonly searchAllRoots?: boolean;
}

/** The rank-ordered binomial tree with root r (p − 1 gives the natural, root-free tree). */
export function obliviousTreeFor(p: number, r: number, copyAll = false): Tree {
  const b = new TreeBuilder(p, r);
  const rootAt = Int32Array.from({ length: p }, (_, i) => i); // root of the range starting at lo
  for (let h = 1; h < p; h *= 2) {
    for (let lo = 0; lo + h < p; lo += 2 * h) {
      const rl = rootAt[lo];
      const ru = rootAt[lo + h];
      if (r >= lo && r < lo + h) {
        b.addChild(rl, ru);
      } else {
        b.addChild(ru, rl);
        rootAt[lo] = ru;
      }
    }
  }
  if (copyAll) for (let v = 0; v < p; v++) b.setCopyAt(v, 0);
  return b.build();
}

/** The natural roots {0, 1, 3, 7, …, 2^j − 1 < p, p − 1}, increasing. */
export function naturalRoots(p: number): number[] {
  const out = [0];
  for (let x = 1; x < p; x = 2 * x + 1) out.push(x);
  if (out[out.length - 1] !== p - 1) out.push(p - 1);
  return out;
}

/**
 * Oblivious (problem-independent) binomial tree. `opts.root` given: that root; omitted:
 * the best natural root (or the best of all roots with `searchAllRoots`), ties to the
 * lowest rank.
 */
export function obliviousBinomialTree(sizes: ArrayLike<number>, model: CostModel, opts?: ObliviousOptions): BuiltTree {
  const { m, p, root } = prepareProblem(sizes, model, opts);
  const all = opts?.searchAllRoots ?? false;
  if (typeof all !== 'boolean') throw new InvalidArgumentError('searchAllRoots', 'must be a boolean');
  const candidates = root !== undefined ? [root] : all ? Array.from({ length: p }, (_, i) => i) : naturalRoots(p);
  let best: BuiltTree | undefined;
  for (const r of candidates) {
    const tree = obliviousTreeFor(p, r, model.copyAll);
    const time = evaluate(tree, m, model, 'gather').time;
    if (best === undefined || time < best.time) best = { tree, time, root: r };
  }
  return best as BuiltTree;
}
