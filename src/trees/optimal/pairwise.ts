/**
 * Optimal ordered variable-degree gather/scatter trees under a non-homogeneous (per-pair)
 * cost model (Traff17 §3.2, Theorem 1; docs/MODEL.md).
 *
 * Because comm depends on the (child root, parent) pair, the table needs the root as a third
 * index: C[i][j][r] = the best ordered tree over the ranks [i..j] rooted at r. An ordered tree
 * grows its root's segment by adjacent ranges (tree.ts `isOrdered`), so its last receive is
 * either the range right of the segment or the range left of it:
 *   right: C[i][j][r] = max(C[i][k][r], C[k+1][j][w]) + comm(w → r, S(k+1..j)), r ≤ k < j, w in (k..j];
 *   left:  C[i][j][r] = max(C[k+1][j][r], C[i][k][w]) + comm(w → r, S(i..k)),   i ≤ k < r, w in [i..k];
 * minimised over k and w. The first receive of r places its copy by the ordered convention:
 * from the right, the copy overlaps the wait (the singleton's "C" is γ·m_r); from the left,
 * the copy follows the receive (C[i][k][w] + comm + γ·m_r). A leaf costs 0 (γ·m_v under
 * copyAll). This is the true optimum over ordered trees (the symmetric rule of MODEL.md: the
 * last rank may grow leftwards through several children).
 *
 * Cost: O(p³) space (Float64 tables C and K and an Int32 table of sorted roots: 20·p³ bytes,
 * 82 MB at p = 160) and O(p⁵) time in the worst case: every (i, j, r, k) may try every child
 * root w (Traff17's bound for Theorem 1 was lost in extraction; the coupling
 * max(C[i][k][r], C[k+1][j][w]) prevents separating the minima over k and w exactly). In practice the child roots of a range
 * are tried in increasing order of completion time, with K[range][r] (the cheapest transfer
 * from the range to r, precomputed in O(p⁴)) as a lower bound on the transfer, so a split whose
 * bound cannot beat the best value so far is skipped and a scan stops early. Measured
 * (random 50..200 + 1..3·s matrices, sizes 1..1000): p = 96 0.5 s, p = 128 2.6 s, p = 160 2.8 s,
 * p = 200 9.5 s (about p⁵/500 transfers evaluated). p is limited to MAX_PAIRWISE_P. One-ported
 * models only; any CostModel (pairwise, hierarchical, linear) whose transfers cost ≥ 0. The
 * returned time is the DP value and equals `evaluate(tree, …)` exactly.
 *
 * The same engine (`solveOrderedRanges`) builds the ordered broadcast/reduction trees of
 * broadcast.ts (Theorem 4), with every edge carrying the same m units and no copy.
 */
import { InvalidArgumentError, TooLargeError, VcollError } from '../../errors.js';
import { requireFiniteCosts, type CostModel } from '../../model/cost-model.js';
import { validateRoot, validateSizes } from '../../model/validate.js';
import { checkOneported } from './binary.js';
import { TreeBuilder } from '../tree.js';
import type { BuiltTree, RootOption } from '../types.js';

/** Largest p of the per-pair DP: the tables take 20·p³ bytes (82 MB, about 3 s at p = 160). */
export const MAX_PAIRWISE_P = 160;

/** What the ordered-range DP needs to know about a problem. */
export interface OrderedRangeSpec {
  readonly p: number;
  /** Completion time of a leaf v. */
  readonly leaf: Float64Array;
  /** Copy time of a node v that has children (0 when there is no copy). */
  readonly copy: Float64Array;
  /** Time of the transfer from w, root of the range [lo..hi], to its parent r. Must be ≥ 0. */
  readonly cost: (w: number, r: number, lo: number, hi: number) => number;
}

/** A filled table: the completion time of every rooted range, and tree reconstruction. */
export interface OrderedRangeSolution {
  readonly p: number;
  /** C(i, j, r): the best tree over [i..j] rooted at r (i ≤ r ≤ j). */
  value(i: number, j: number, r: number): number;
  /** The optimal tree over all p ranks with the best root (smallest on ties). */
  best(): BuiltTree;
  /** The optimal tree over all p ranks rooted at `root`. */
  rooted(root: number): BuiltTree;
}

/**
 * Fills C[i][j][r] for every range and root (see the header) and returns a solution that
 * rebuilds trees. The children of each node are in gather (receive) order and copyAt is set
 * explicitly by the ordered convention.
 */
export function solveOrderedRanges(spec: OrderedRangeSpec): OrderedRangeSolution {
  const { p, leaf, copy, cost } = spec;
  const p2 = p * p;
  // C[(i·p + j)·p + r]; ord[(i·p + j)·p + t] = the roots of [i..j] by increasing C, t < j − i + 1;
  // K[(i·p + j)·p + r] = min over w in [i..j] of cost(w, r, i, j), for r outside [i..j]
  const C = new Float64Array(p * p2).fill(Infinity);
  const ord = new Int32Array(p * p2);
  const K = new Float64Array(p * p2);
  const keys = new Float64Array(p);
  const idx: number[] = [];

  for (let len = 1; len <= p; len++) {
    for (let i = 0; i + len <= p; i++) {
      const j = i + len - 1;
      const ij = (i * p + j) * p;
      if (len === 1) {
        C[ij + i] = leaf[i];
      } else {
        for (let r = i; r <= j; r++) C[ij + r] = bestRooted(i, j, r);
      }
      // roots of [i..j] by increasing completion time (ties by rank)
      idx.length = 0;
      for (let r = i; r <= j; r++) {
        idx.push(r);
        keys[r] = C[ij + r];
      }
      idx.sort((x, y) => keys[x] - keys[y] || x - y);
      for (let t = 0; t < len; t++) ord[ij + t] = idx[t];
      // cheapest transfer out of [i..j] to every rank outside it
      if (len < p) {
        for (let r = 0; r < p; r++) {
          if (r >= i && r <= j) continue;
          let k = Infinity;
          for (let w = i; w <= j; w++) {
            const c = cost(w, r, i, j);
            if (c < k) k = c;
          }
          K[ij + r] = k;
        }
      }
    }
  }

  /**
   * C[i][j][r] for i < j. Every candidate is max(prev, a) + cost (or a + cost + copy for a first
   * receive from the left) with a the child's completion: with child roots tried by increasing
   * a and the cheapest transfer K of the child range as a lower bound on cost, a split is skipped
   * and a scan over child roots stops as soon as the bound reaches the best value so far.
   */
  function bestRooted(i: number, j: number, r: number): number {
    let best = Infinity;
    // right: the last receive is [k+1..j]; before it the tree over [i..k] rooted r
    for (let k = r; k < j; k++) {
      const prev = i === r && k === r ? copy[r] : C[(i * p + k) * p + r];
      const cb = ((k + 1) * p + j) * p;
      const kmin = K[cb + r];
      const a0 = C[cb + ord[cb]];
      if ((prev > a0 ? prev : a0) + kmin >= best) continue;
      const n = j - k;
      for (let t = 0; t < n; t++) {
        const w = ord[cb + t];
        const a = C[cb + w];
        const x = prev > a ? prev : a;
        if (x + kmin >= best) break;
        const v = x + cost(w, r, k + 1, j);
        if (v < best) best = v;
      }
    }
    // left: the last receive is [i..k]; before it the tree over [k+1..j] rooted r
    const g = copy[r];
    for (let k = r - 1; k >= i; k--) {
      const cb = (i * p + k) * p;
      const kmin = K[cb + r];
      const n = k - i + 1;
      if (k + 1 === r && j === r) {
        // r's first receive, from the left: the copy follows it
        if (C[cb + ord[cb]] + kmin + g >= best) continue;
        for (let t = 0; t < n; t++) {
          const w = ord[cb + t];
          const a = C[cb + w];
          if (a + kmin + g >= best) break;
          const v = a + cost(w, r, i, k) + g;
          if (v < best) best = v;
        }
        continue;
      }
      const prev = C[((k + 1) * p + j) * p + r];
      const a0 = C[cb + ord[cb]];
      if ((prev > a0 ? prev : a0) + kmin >= best) continue;
      for (let t = 0; t < n; t++) {
        const w = ord[cb + t];
        const a = C[cb + w];
        const x = prev > a ? prev : a;
        if (x + kmin >= best) break;
        const v = x + cost(w, r, i, k);
        if (v < best) best = v;
      }
    }
    return best;
  }

  const value = (i: number, j: number, r: number): number => C[(i * p + j) * p + r];

  /** The (side, k, w) of the last receive of [i..j] rooted r that reproduces its value. */
  const lastStep = (i: number, j: number, r: number): { lo: number; hi: number; w: number } => {
    const target = value(i, j, r);
    for (let k = r; k < j; k++) {
      const prev = i === r && k === r ? copy[r] : value(i, k, r);
      for (let w = k + 1; w <= j; w++) {
        const a = value(k + 1, j, w);
        if ((prev > a ? prev : a) + cost(w, r, k + 1, j) === target) return { lo: k + 1, hi: j, w };
      }
    }
    for (let k = r - 1; k >= i; k--) {
      const single = k + 1 === r && j === r;
      const prev = single ? 0 : value(k + 1, j, r);
      for (let w = i; w <= k; w++) {
        const a = value(i, k, w);
        const v = single ? a + cost(w, r, i, k) + copy[r] : (prev > a ? prev : a) + cost(w, r, i, k);
        if (v === target) return { lo: i, hi: k, w };
      }
    }
    throw new VcollError('INTERNAL', `no last receive reproduces the value of [${i}..${j}] rooted at ${r}`);
  };

  const rebuild = (root: number): BuiltTree => {
    const builder = new TreeBuilder(p, root);
    const stack: [number, number, number][] = [[0, p - 1, root]];
    while (stack.length > 0) {
      const [lo0, hi0, r] = stack.pop()!;
      let lo = lo0;
      let hi = hi0;
      const kids: number[] = [];
      // unwind the extension steps from the last receive back to the singleton {r}
      while (lo < hi) {
        const step = lastStep(lo, hi, r);
        kids.push(step.w);
        stack.push([step.lo, step.hi, step.w]);
        if (step.lo === lo) lo = step.hi + 1;
        else hi = step.lo - 1;
      }
      kids.reverse();
      for (const c of kids) builder.addChild(r, c);
      builder.setCopyAt(r, kids.length > 0 && kids[0] < r ? 1 : 0);
    }
    return { tree: builder.build(), time: p === 1 ? copy[0] : value(0, p - 1, root), root }; // p = 1: the root's copy
  };

  return {
    p,
    value,
    best: () => {
      let root = 0;
      for (let r = 1; r < p; r++) if (value(0, p - 1, r) < value(0, p - 1, root)) root = r;
      return rebuild(root);
    },
    rooted: (root: number) => rebuild(validateRoot(root, p)),
  };
}

/**
 * Optimal ordered variable-degree gather/scatter tree under any one-ported cost model,
 * with comm depending on the (sender, receiver) pair (Theorem 1). `opts.root` fixes the
 * root; without it the best root (the smallest on ties) is chosen.
 * Throws TooLargeError('p') above MAX_PAIRWISE_P.
 */
export function optimalPairwiseTree(sizes: ArrayLike<number>, model: CostModel, opts: RootOption = {}): BuiltTree {
  const m = validateSizes(sizes);
  const p = m.length;
  checkOneported(model, p);
  requireFiniteCosts(model, m);
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts', 'must be an object');
  const root = opts.root === undefined ? -1 : validateRoot(opts.root, p);
  if (p > MAX_PAIRWISE_P) {
    throw new TooLargeError('p', `${p} > ${MAX_PAIRWISE_P} for the per-pair DP (O(p³) memory, O(p⁵) worst-case time)`);
  }
  const P = new Float64Array(p + 1);
  for (let v = 0; v < p; v++) P[v + 1] = P[v] + m[v];
  const copy = new Float64Array(p);
  const leaf = new Float64Array(p);
  for (let v = 0; v < p; v++) {
    copy[v] = model.copy(v, m[v]);
    leaf[v] = model.copyAll ? copy[v] : 0;
  }
  const solution = solveOrderedRanges({
    p,
    leaf,
    copy,
    cost: (w, r, lo, hi) => model.comm(w, r, P[hi + 1] - P[lo]),
  });
  return root < 0 ? solution.best() : solution.rooted(root);
}
