/**
 * Optimal ordered binary gather/scatter trees (Traff17 §3.3, Theorem 3; docs/MODEL.md
 * "Optimal ordered binary trees").
 *
 * A node has at most two children, each spanning a consecutive range of ranks, and it works
 * in rank order: its left subtree, then its own copy, then its right subtree. Over a range
 * [i..j] the root is one of five cases:
 *   1. root i, one child [i+1..j]: max(γm_i, B[i+1][j]) + comm(S(i+1..j)) (copy overlaps);
 *   2. root j, one child [i..j−1]: B[i][j−1] + comm(S(i..j−1)) + γm_j (copy after);
 *   3. root i, children [i+1..k] then [k+1..j] (copy first, overlapping the first child);
 *   4. root j, children [i..k] then [k+1..j−1], copy last;
 *   5. root r, i < r < j: left [i..r−1], copy, right [r+1..j].
 * B[i][j] is the best over the five cases with any root. A fixed root r only forces the last
 * extension step (the whole range [0..p−1]) to root r: a binary root's children are then
 * determined by its position, so that is also the true optimum among binary trees rooted at r.
 * Ties go to the smallest root (root i, then inner roots ascending, then root j).
 *
 * Case 4 receives the farther range [i..k] first (rank order), so such a node is ordered in
 * the sense that every subtree spans consecutive ranks, but not in the growing form of
 * tree.ts `isOrdered`. This is the convention Traff17's tables imply: all 36 deterministic
 * rows reproduce with it, while receiving [k+1..j−1] first (copy still last) gives lower
 * times that miss the tables (Table 1 Increasing, fixed root: 3910382 instead of 3912715
 * with γ = 0, 3916552 instead of 3917085 with γ = 1).
 *
 * Homogeneous cost (model.linear): O(p³) time in the worst case, O(p²) space (three p×p
 * Float64 tables plus block minima; about 110 MB at p = 2000). The minima over the split are
 * exact but skip blocks of splits by lower bounds (fillHomogeneous): about 1.5–2.5 s at
 * p = 2000 on one core (the plain triple loop takes 15–25 s). Non-homogeneous (per-pair) cost:
 * the table needs the root as a third index, B[i][j][r]: O(p⁴) time, O(p³) space; limited to
 * p ≤ MAX_PAIRWISE_BINARY_P (about 1.5 s at p = 160). One-ported models only. The returned
 * time is the DP value and equals `evaluate(tree, …)` exactly (the DP performs the same
 * floating-point operations, and copyAt is set explicitly).
 */
import { InvalidArgumentError, TooLargeError, VcollError } from '../../errors.js';
import { requireFiniteCosts, requireModelFits, type CostModel } from '../../model/cost-model.js';
import { validateRoot, validateSizes } from '../../model/validate.js';
import { TreeBuilder } from '../tree.js';
import type { BuiltTree, RootOption } from '../types.js';

/** Largest p accepted under a non-homogeneous model (O(p⁴) time, O(p³) space: 8·p³ bytes). */
export const MAX_PAIRWISE_BINARY_P = 160;

/** Largest p accepted under a homogeneous model (3 p×p Float64 tables: 24·p² bytes, 400 MB). */
export const MAX_BINARY_P = 4096;

export interface BinaryTreeOptions extends RootOption {
  /** Called as the table fills: `done` of `total` work units (∝ the plain O(p³) loop). */
  readonly onProgress?: (done: number, total: number) => void;
}

/** A filled DP table: trees for the best root or any fixed root, without refilling. */
export interface BinarySolution {
  readonly p: number;
  /** The optimal tree with the best root (the smallest root on ties). */
  best(): BuiltTree;
  /** The optimal tree with the given root (only the last extension step is forced to it). */
  rooted(root: number): BuiltTree;
}

/** Argument checks shared by the tree builders of this task: a one-ported cost model over p ranks. */
export function checkOneported(model: CostModel, p: number): void {
  if (model === null || typeof model !== 'object' || typeof model.comm !== 'function' || typeof model.copy !== 'function') {
    throw new InvalidArgumentError('model', 'must be a CostModel');
  }
  requireModelFits(model, p);
  if (model.ports !== 1) throw new InvalidArgumentError('model', `the DP is for one-ported models, got ports = ${model.ports}`);
}

/**
 * Fills the binary-tree DP table once; `best()` and `rooted(r)` then rebuild trees in O(p²).
 * Throws TooLargeError('p') above MAX_BINARY_P (homogeneous) or MAX_PAIRWISE_BINARY_P.
 */
export function solveBinary(
  sizes: ArrayLike<number>,
  model: CostModel,
  opts: { readonly onProgress?: (done: number, total: number) => void } = {},
): BinarySolution {
  const m = validateSizes(sizes);
  const p = m.length;
  checkOneported(model, p);
  requireFiniteCosts(model, m);
  const onProgress = opts?.onProgress;
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new InvalidArgumentError('onProgress', 'must be a function');
  }
  if (model.linear !== undefined) {
    if (p > MAX_BINARY_P) throw new TooLargeError('p', `${p} > ${MAX_BINARY_P} (O(p²) memory, O(p³) time)`);
    return homogeneousBinary(m, model, onProgress);
  }
  if (p > MAX_PAIRWISE_BINARY_P) {
    throw new TooLargeError('p', `${p} > ${MAX_PAIRWISE_BINARY_P} for a non-homogeneous model (O(p³) memory, O(p⁴) time)`);
  }
  return pairwiseBinary(m, model, onProgress);
}

/**
 * Optimal ordered binary gather/scatter tree for `sizes` under a one-ported `model`.
 * `opts.root` fixes the root; without it the best root (smallest on ties) is chosen.
 */
export function optimalBinaryTree(sizes: ArrayLike<number>, model: CostModel, opts: BinaryTreeOptions = {}): BuiltTree {
  const n = sizes?.length;
  const root = opts?.root;
  // validate the root before the O(p³) fill
  if (root !== undefined && typeof n === 'number' && n >= 1) validateRoot(root, n);
  const solution = solveBinary(sizes, model, { onProgress: opts?.onProgress });
  return root === undefined ? solution.best() : solution.rooted(root);
}

function rootChecker(p: number): (root: number) => number {
  return (root) => validateRoot(root, p);
}

// ---------------------------------------------------------------------------------------
// Homogeneous: B over ranges, best root per range.

function homogeneousBinary(
  m: Float64Array,
  model: CostModel,
  onProgress: ((done: number, total: number) => void) | undefined,
): BinarySolution {
  const p = m.length;
  const { alpha, beta, gamma } = model.linear!;
  const P = new Float64Array(p + 1);
  for (let v = 0; v < p; v++) P[v + 1] = P[v] + m[v];
  const g = new Float64Array(p); // copy cost of a node with children
  const leaf = new Float64Array(p); // completion time of a leaf
  for (let v = 0; v < p; v++) {
    g[v] = gamma * m[v];
    leaf[v] = model.copyAll ? g[v] : 0;
  }
  const comm = (s: number): number => (s > 0 ? alpha + beta * s : 0);

  const { BT, A4 } = fillHomogeneous(P, g, leaf, alpha, beta, onProgress);
  const B = (i: number, j: number): number => BT[j * p + i];
  const cS = (i: number, j: number): number => comm(P[j + 1] - P[i]);
  const v1 = (i: number, j: number): number => {
    const b = B(i + 1, j);
    return (g[i] > b ? g[i] : b) + cS(i + 1, j);
  };
  const v2 = (i: number, j: number): number => A4[i * p + j - 1] + g[j];
  const v3 = (i: number, k: number, j: number): number => {
    const x = v1(i, k);
    const y = B(k + 1, j);
    return (x > y ? x : y) + cS(k + 1, j);
  };
  const v4 = (i: number, k: number, j: number): number => {
    const x = A4[i * p + k];
    const y = B(k + 1, j - 1);
    return (x > y ? x : y) + cS(k + 1, j - 1) + g[j];
  };
  const v5 = (i: number, r: number, j: number): number => {
    const x = A4[i * p + r - 1] + g[r];
    const y = B(r + 1, j);
    return (x > y ? x : y) + cS(r + 1, j);
  };
  const f: CaseValues = { v1, v2, v3, v4, v5 };
  const check = rootChecker(p);
  return {
    p,
    best: () => reconstruct(p, -1, B, f, model.copy(0, m[0])),
    rooted: (root: number) => reconstruct(p, check(root), B, f, model.copy(0, m[0])),
  };
}

/** Cache blocking of the homogeneous fill: columns per pass, and the two levels of k-blocks. */
const COLS = 32;
const BS = 16;
const SB = 256; // a multiple of BS

/** The k of the last improvement found by scanRange (or -1): the next cell's first guess. */
let scanArg = -1;

function scanRange(
  X: Float64Array, xo: number, Y: Float64Array, yo: number, c: Float64Array, co: number, add: number,
  lo: number, hi: number, best: number,
): number {
  for (let k = lo; k <= hi; k++) {
    const x = X[xo + k];
    const y = Y[yo + k + 1];
    const v = (x > y ? x : y) + c[co + k + 1] + add;
    if (v < best) {
      best = v;
      scanArg = k;
    }
  }
  return best;
}

/**
 * min(best, min over k in [lo..hi] of fl(fl(max(X[xo+k], Y[yo+k+1]) + c[co+k+1]) + add)), exactly.
 * k is split in blocks of BS with lower bounds max(min X, min Y) + c[block end + 1] (c is
 * non-increasing in k; the minima may cover a superset of the block's valid k, which only
 * weakens the bound); a block whose bound is not below the best value so far is skipped,
 * which cannot change the minimum because max, + and their rounding are monotone.
 */
function scanBlocks(
  X: Float64Array, xo: number, Y: Float64Array, yo: number, c: Float64Array, co: number, add: number,
  rowMin: Float64Array, rmo: number, colMin: Float64Array, cmo: number,
  lo: number, hi: number, best: number,
): number {
  const b0 = (lo / BS) | 0;
  const b1 = (hi / BS) | 0;
  if (b0 === b1) return scanRange(X, xo, Y, yo, c, co, add, lo, hi, best);
  for (let b = b0; b <= b1; b++) {
    const x = rowMin[rmo + b];
    const y = colMin[cmo + b];
    const e = b === b1 ? hi + 1 : (b + 1) * BS;
    if ((x > y ? x : y) + c[co + e] + add >= best) continue;
    best = scanRange(X, xo, Y, yo, c, co, add, b === b0 ? lo : b * BS, b === b1 ? hi : b * BS + BS - 1, best);
  }
  return best;
}

/**
 * The same with a second level of bounds over superblocks of SB, after trying `guess` (the
 * best k of the neighbouring cell) so that the bounds prune from the start.
 */
function scanTwoLevel(
  X: Float64Array, xo: number, Y: Float64Array, yo: number, c: Float64Array, co: number, add: number,
  rowMin: Float64Array, rmo: number, colMin: Float64Array, cmo: number,
  rowMin2: Float64Array, rmo2: number, colMin2: Float64Array, cmo2: number,
  lo: number, hi: number, best: number, guess: number,
): number {
  scanArg = -1;
  if (guess >= lo && guess <= hi) best = scanRange(X, xo, Y, yo, c, co, add, guess, guess, best);
  const s0 = (lo / SB) | 0;
  const s1 = (hi / SB) | 0;
  if (s0 === s1) return scanBlocks(X, xo, Y, yo, c, co, add, rowMin, rmo, colMin, cmo, lo, hi, best);
  for (let s = s0; s <= s1; s++) {
    const x = rowMin2[rmo2 + s];
    const y = colMin2[cmo2 + s];
    const e = s === s1 ? hi + 1 : (s + 1) * SB;
    if ((x > y ? x : y) + c[co + e] + add >= best) continue;
    const a = s === s0 ? lo : s * SB;
    const z = s === s1 ? hi : s * SB + SB - 1;
    best = scanBlocks(X, xo, Y, yo, c, co, add, rowMin, rmo, colMin, cmo, a, z, best);
  }
  return best;
}

function lower(A: Float64Array, o: number, v: number): void {
  if (v < A[o]) A[o] = v;
}

/**
 * Fills the homogeneous tables. Returns BT[j·p + i] = B[i][j] and
 * A4[i·p + k] = B[i][k] + comm(S(i..k)).
 *
 * For a range [i..j] the cases 3 and 5 are min over k of max(M[i][k], B[k+1][j]) + comm(S(k+1..j)),
 * where M[i][k] = min(case 1 over [i..k], B[i][k−1] + comm(S(i..k−1)) + γm_k) is how long the
 * root part [i..k] takes before it receives [k+1..j] (root i, or root k between its two
 * subtrees); case 4 is min over k of max(A4[i][k], B[k+1][j−1]) + comm(S(k+1..j−1)) + γm_j.
 * Both minima are exact, but start from the previous cell's best k and skip blocks of k whose
 * lower bound cannot win (see scanBlocks), and columns are processed COLS at a time so that
 * rows stay in the cache: at p = 2000 this is about 10 times faster than the plain triple loop.
 */
function fillHomogeneous(
  P: Float64Array,
  g: Float64Array,
  leaf: Float64Array,
  alpha: number,
  beta: number,
  onProgress: ((done: number, total: number) => void) | undefined,
): { BT: Float64Array; A4: Float64Array } {
  const p = g.length;
  const nb = Math.ceil(p / BS) + 1;
  const nb2 = Math.ceil(p / SB) + 1;
  const BT = new Float64Array(p * p);
  const A4 = new Float64Array(p * p);
  const M = new Float64Array(p * p);
  // block minima: rows of M and A4 over k, columns of B over k + 1
  const minM = new Float64Array(p * nb).fill(Infinity);
  const minA4 = new Float64Array(p * nb).fill(Infinity);
  const colMin = new Float64Array(p * nb).fill(Infinity);
  const minM2 = new Float64Array(p * nb2).fill(Infinity);
  const minA42 = new Float64Array(p * nb2).fill(Infinity);
  const colMin2 = new Float64Array(p * nb2).fill(Infinity);
  // the best k of the last cell computed in each column (cases 3/5 and case 4): first guesses
  const guess35 = new Int32Array(p).fill(-1);
  const guess4 = new Int32Array(p).fill(-1);
  const q = p + 1;
  // CC[(j − j0 + 1)·q + k] = comm(S(k..j)) for the columns j0 − 1 .. j0 + COLS − 1 of a pass
  const CC = new Float64Array((COLS + 1) * q);
  const total = ((p - 1) * p * (2 * p - 1)) / 6;
  let done = 0;

  for (let j0 = 0; j0 < p; j0 += COLS) {
    const jEnd = Math.min(j0 + COLS, p) - 1;
    for (let j = Math.max(j0 - 1, 0); j <= jEnd; j++) {
      const o = (j - j0 + 1) * q;
      for (let k = 0; k <= j; k++) {
        const s = P[j + 1] - P[k];
        CC[o + k] = s > 0 ? alpha + beta * s : 0;
      }
    }
    for (let j = j0; j <= jEnd; j++) {
      const jp = j * p;
      BT[jp + j] = leaf[j];
      A4[jp + j] = leaf[j] + CC[(j - j0 + 1) * q + j];
      if (j > 0) {
        lower(colMin, j * nb + (((j - 1) / BS) | 0), leaf[j]);
        lower(colMin2, j * nb2 + (((j - 1) / SB) | 0), leaf[j]);
      }
      lower(minA4, j * nb + ((j / BS) | 0), A4[jp + j]);
      lower(minA42, j * nb2 + ((j / SB) | 0), A4[jp + j]);
    }
    for (let i = jEnd - 1; i >= 0; i--) {
      const ip = i * p;
      const gi = g[i];
      for (let j = i + 1 > j0 ? i + 1 : j0; j <= jEnd; j++) {
        const jp = j * p;
        const cj = (j - j0 + 1) * q; // comm(S(·..j)) in CC
        const gj = g[j];
        // case 1: root i, one child [i+1..j]; case 2: root j, one child [i..j−1]
        const b1 = BT[jp + i + 1];
        const r1 = (gi > b1 ? gi : b1) + CC[cj + i + 1];
        const a5 = A4[ip + j - 1] + gj;
        const mm = r1 < a5 ? r1 : a5;
        let best = mm;
        if (j - i >= 2) {
          // cases 3 and 5, k in [i+1..j−1]; case 4, k in [i..j−2]
          best = scanTwoLevel(M, ip, BT, jp, CC, cj, 0, minM, i * nb, colMin, j * nb, minM2, i * nb2, colMin2, j * nb2,
            i + 1, j - 1, best, guess35[j]);
          if (scanArg >= 0) guess35[j] = scanArg;
          best = scanTwoLevel(A4, ip, BT, jp - p, CC, cj - q, gj, minA4, i * nb, colMin, (j - 1) * nb, minA42, i * nb2,
            colMin2, (j - 1) * nb2, i, j - 2, best, guess4[j]);
          if (scanArg >= 0) guess4[j] = scanArg;
        }
        BT[jp + i] = best;
        const a4 = best + CC[cj + i];
        A4[ip + j] = a4;
        M[ip + j] = mm;
        const bj = (j / BS) | 0;
        const sj = (j / SB) | 0;
        lower(minM, i * nb + bj, mm);
        lower(minA4, i * nb + bj, a4);
        lower(minM2, i * nb2 + sj, mm);
        lower(minA42, i * nb2 + sj, a4);
        if (i > 0) {
          lower(colMin, j * nb + (((i - 1) / BS) | 0), best);
          lower(colMin2, j * nb2 + (((i - 1) / SB) | 0), best);
        }
      }
    }
    if (onProgress !== undefined) {
      for (let j = j0; j <= jEnd; j++) done += j * j;
      onProgress(done, total);
    }
  }
  return { BT, A4 };
}

// ---------------------------------------------------------------------------------------
// Non-homogeneous: B[i][j][r] with the root as the third index.

function pairwiseBinary(
  m: Float64Array,
  model: CostModel,
  onProgress: ((done: number, total: number) => void) | undefined,
): BinarySolution {
  const p = m.length;
  const P = new Float64Array(p + 1);
  for (let v = 0; v < p; v++) P[v + 1] = P[v] + m[v];
  const g = new Float64Array(p);
  const leaf = new Float64Array(p);
  for (let v = 0; v < p; v++) {
    g[v] = model.copy(v, m[v]);
    leaf[v] = model.copyAll ? g[v] : 0;
  }
  const p2 = p * p;
  // T[i·p² + j·p + r] = best binary tree over [i..j] rooted at r (i ≤ r ≤ j).
  const T = new Float64Array(p * p2).fill(Infinity);
  // R1[i·p + k] = root i with exactly one child, the range [i+1..k] (k > i).
  const R1 = new Float64Array(p2).fill(Infinity);
  // L1[i·p + r] = best left part of root r: min_u B[i][r−1][u] + comm(u → r, S(i..r−1)) (i < r).
  const L1 = new Float64Array(p2).fill(Infinity);
  const at = (i: number, j: number, r: number): number => i * p2 + j * p + r;
  const S = (i: number, j: number): number => P[j + 1] - P[i];

  // Best "wait until x, then receive range [lo..hi] from its best root into r".
  const recvAfter = (x: number, lo: number, hi: number, r: number): number => {
    const s = S(lo, hi);
    const base = lo * p2 + hi * p;
    let best = Infinity;
    for (let w = lo; w <= hi; w++) {
      const a = T[base + w];
      const v = (x > a ? x : a) + model.comm(w, r, s);
      if (v < best) best = v;
    }
    return best;
  };
  const total = (p * (p + 1)) / 2; // ranges
  let done = 0;
  for (let len = 1; len <= p; len++) {
    for (let i = 0; i + len - 1 < p; i++) {
      const j = i + len - 1;
      if (len === 1) {
        T[at(i, i, i)] = leaf[i];
        continue;
      }
      // left part into every possible root r = j of this range: L1[i][j]
      {
        const s = S(i, j - 1);
        let best = Infinity;
        for (let u = i; u <= j - 1; u++) {
          const v = T[at(i, j - 1, u)] + model.comm(u, j, s);
          if (v < best) best = v;
        }
        L1[i * p + j] = best;
      }
      // root i: case 1, case 3
      const c1 = recvAfter(g[i], i + 1, j, i);
      R1[i * p + j] = c1;
      let bi = c1;
      for (let k = i + 1; k <= j - 1; k++) {
        const v = recvAfter(R1[i * p + k], k + 1, j, i);
        if (v < bi) bi = v;
      }
      T[at(i, j, i)] = bi;
      // root j: case 2, case 4
      let bj = L1[i * p + j] + g[j];
      for (let k = i; k <= j - 2; k++) {
        // receive [i..k] first (into j), then [k+1..j−1], then copy
        const s = S(i, k);
        let first = Infinity;
        for (let u = i; u <= k; u++) {
          const v = T[at(i, k, u)] + model.comm(u, j, s);
          if (v < first) first = v;
        }
        const v = recvAfter(first, k + 1, j - 1, j) + g[j];
        if (v < bj) bj = v;
      }
      T[at(i, j, j)] = bj;
      // inner roots: case 5
      for (let r = i + 1; r <= j - 1; r++) {
        T[at(i, j, r)] = recvAfter(L1[i * p + r] + g[r], r + 1, j, r);
      }
    }
    if (onProgress !== undefined) {
      done += p - len + 1;
      onProgress(done, total);
    }
  }

  // best root per range for the reconstruction's children
  const argRoot = (lo: number, hi: number, value: (w: number) => number): { w: number; v: number } => {
    let w = lo;
    let v = value(lo);
    for (let u = lo + 1; u <= hi; u++) {
      const x = value(u);
      if (x < v) {
        v = x;
        w = u;
      }
    }
    return { w, v };
  };
  const rebuild = (fixed: number): BuiltTree => reconstructPairwise(p, model, fixed, T, at, S, g, R1, L1, argRoot);
  const check = rootChecker(p);
  return { p, best: () => rebuild(-1), rooted: (root: number) => rebuild(check(root)) };
}

// ---------------------------------------------------------------------------------------
// Reconstruction (homogeneous): recompute each chosen range's best case in tie order.

interface CaseValues {
  v1(i: number, j: number): number;
  v2(i: number, j: number): number;
  v3(i: number, k: number, j: number): number;
  v4(i: number, k: number, j: number): number;
  v5(i: number, r: number, j: number): number;
}

/** A consecutive range of ranks [lo..hi]. */
interface Range {
  lo: number;
  hi: number;
}

type Choice = { c: 1 | 2 | 5 } | { c: 3 | 4; k: number };

/** The tie-ordered choice for range [i..j] with the given value, optionally with root forced. */
function choose(i: number, j: number, target: number, f: CaseValues, root: number): { root: number; ch: Choice } {
  if (root === -1 || root === i) {
    if (f.v1(i, j) === target) return { root: i, ch: { c: 1 } };
    for (let k = i + 1; k <= j - 1; k++) if (f.v3(i, k, j) === target) return { root: i, ch: { c: 3, k } };
  }
  for (let r = i + 1; r <= j - 1; r++) {
    if ((root === -1 || root === r) && f.v5(i, r, j) === target) return { root: r, ch: { c: 5 } };
  }
  if (root === -1 || root === j) {
    if (f.v2(i, j) === target) return { root: j, ch: { c: 2 } };
    for (let k = i; k <= j - 2; k++) if (f.v4(i, k, j) === target) return { root: j, ch: { c: 4, k } };
  }
  throw new VcollError('INTERNAL', `internal: no case reproduces the value of range [${i}..${j}]`);
}

/** Best value over [0..p−1] per root: returns the chosen root and its value. */
function topValue(p: number, f: CaseValues, fixed: number, B: (i: number, j: number) => number): { root: number; time: number } {
  const j = p - 1;
  const valueOf = (r: number): number => {
    if (r === 0) {
      let v = f.v1(0, j);
      for (let k = 1; k <= j - 1; k++) v = Math.min(v, f.v3(0, k, j));
      return v;
    }
    if (r === j) {
      let v = f.v2(0, j);
      for (let k = 0; k <= j - 2; k++) v = Math.min(v, f.v4(0, k, j));
      return v;
    }
    return f.v5(0, r, j);
  };
  if (fixed >= 0) return { root: fixed, time: valueOf(fixed) };
  const best = B(0, j);
  for (let r = 0; r <= j; r++) if (valueOf(r) === best) return { root: r, time: best };
  throw new VcollError('INTERNAL', 'internal: no root reproduces the optimum');
}

function reconstruct(
  p: number,
  fixed: number,
  B: (i: number, j: number) => number,
  f: CaseValues,
  lonely: number,
): BuiltTree {
  if (p === 1) {
    // the lone root copies its block (as evaluate charges)
    const tree = new TreeBuilder(1, 0).build();
    return { tree, time: lonely, root: 0 };
  }
  const top = topValue(p, f, fixed, B);
  const builder = new TreeBuilder(p, top.root);
  // explicit stack of (range, forced root, target value)
  const stack: { lo: number; hi: number; root: number; target: number }[] = [
    { lo: 0, hi: p - 1, root: top.root, target: top.time },
  ];
  while (stack.length > 0) {
    const { lo, hi, root, target } = stack.pop()!;
    if (lo === hi) continue;
    const { root: r, ch } = choose(lo, hi, target, f, root);
    const sub = (a: number, b: number): Range => ({ lo: a, hi: b });
    let kids: Range[];
    let copyAt: number;
    switch (ch.c) {
      case 1:
        kids = [sub(lo + 1, hi)];
        copyAt = 0;
        break;
      case 2:
        kids = [sub(lo, hi - 1)];
        copyAt = 1;
        break;
      case 3:
        kids = [sub(lo + 1, ch.k), sub(ch.k + 1, hi)];
        copyAt = 0;
        break;
      case 4:
        kids = [sub(lo, ch.k), sub(ch.k + 1, hi - 1)];
        copyAt = 2;
        break;
      default:
        kids = [sub(lo, r - 1), sub(r + 1, hi)];
        copyAt = 1;
    }
    for (const k of kids) {
      const v = B(k.lo, k.hi);
      const c = childRoot(k.lo, k.hi, v, f);
      builder.addChild(r, c);
      stack.push({ lo: k.lo, hi: k.hi, root: c, target: v });
    }
    builder.setCopyAt(r, copyAt);
  }
  return { tree: builder.build(), time: top.time, root: top.root };
}

function childRoot(lo: number, hi: number, v: number, f: CaseValues): number {
  if (lo === hi) return lo;
  return choose(lo, hi, v, f, -1).root;
}

// ---------------------------------------------------------------------------------------
// Reconstruction (non-homogeneous).

function reconstructPairwise(
  p: number,
  model: CostModel,
  fixed: number,
  T: Float64Array,
  at: (i: number, j: number, r: number) => number,
  S: (i: number, j: number) => number,
  g: Float64Array,
  R1: Float64Array,
  L1: Float64Array,
  argRoot: (lo: number, hi: number, value: (w: number) => number) => { w: number; v: number },
): BuiltTree {
  let root = fixed;
  let time: number;
  if (root >= 0) time = T[at(0, p - 1, root)];
  else {
    const b = argRoot(0, p - 1, (r) => T[at(0, p - 1, r)]);
    root = b.w;
    time = b.v;
  }
  if (p === 1) time = g[0]; // the lone root copies its block (as evaluate charges)
  const builder = new TreeBuilder(p, root);
  // the child root u of range [lo..hi] that, received into r after waiting until x, gives target
  const recvRoot = (x: number, lo: number, hi: number, r: number, target: number): number => {
    const s = S(lo, hi);
    for (let w = lo; w <= hi; w++) {
      const a = T[at(lo, hi, w)];
      if ((x > a ? x : a) + model.comm(w, r, s) === target) return w;
    }
    throw new VcollError('INTERNAL', `internal: no child root of [${lo}..${hi}] reproduces ${target}`);
  };
  const firstRoot = (lo: number, hi: number, r: number, target: number): number => {
    const s = S(lo, hi);
    for (let u = lo; u <= hi; u++) if (T[at(lo, hi, u)] + model.comm(u, r, s) === target) return u;
    throw new VcollError('INTERNAL', `internal: no left root of [${lo}..${hi}] reproduces ${target}`);
  };
  const stack: { lo: number; hi: number; r: number }[] = [{ lo: 0, hi: p - 1, r: root }];
  while (stack.length > 0) {
    const { lo, hi, r } = stack.pop()!;
    if (lo === hi) continue;
    const target = T[at(lo, hi, r)];
    const add = (c: number, a: number, b: number): void => {
      builder.addChild(r, c);
      stack.push({ lo: a, hi: b, r: c });
    };
    if (r === lo) {
      // case 1, then case 3 by split
      const w1 = argRoot(lo + 1, hi, (w) => {
        const a = T[at(lo + 1, hi, w)];
        return (g[r] > a ? g[r] : a) + model.comm(w, r, S(lo + 1, hi));
      });
      if (w1.v === target) {
        add(w1.w, lo + 1, hi);
        builder.setCopyAt(r, 0);
        continue;
      }
      let found = false;
      for (let k = lo + 1; k <= hi - 1 && !found; k++) {
        const x = R1[lo * p + k];
        const ws = argRoot(k + 1, hi, (w) => {
          const a = T[at(k + 1, hi, w)];
          return (x > a ? x : a) + model.comm(w, r, S(k + 1, hi));
        });
        if (ws.v !== target) continue;
        const u = recvRoot(g[r], lo + 1, k, r, x);
        add(u, lo + 1, k);
        add(ws.w, k + 1, hi);
        builder.setCopyAt(r, 0);
        found = true;
      }
      if (!found) throw new VcollError('INTERNAL', `internal: root ${r} of [${lo}..${hi}] not reproduced`);
    } else if (r === hi) {
      if (L1[lo * p + r] + g[r] === target) {
        add(firstRoot(lo, hi - 1, r, L1[lo * p + r]), lo, hi - 1);
        builder.setCopyAt(r, 1);
        continue;
      }
      let found = false;
      for (let k = lo; k <= hi - 2 && !found; k++) {
        const s = S(lo, k);
        let first = Infinity;
        for (let u = lo; u <= k; u++) first = Math.min(first, T[at(lo, k, u)] + model.comm(u, r, s));
        const ws = argRoot(k + 1, hi - 1, (w) => {
          const a = T[at(k + 1, hi - 1, w)];
          return (first > a ? first : a) + model.comm(w, r, S(k + 1, hi - 1));
        });
        if (ws.v + g[r] !== target) continue;
        add(firstRoot(lo, k, r, first), lo, k);
        add(ws.w, k + 1, hi - 1);
        builder.setCopyAt(r, 2);
        found = true;
      }
      if (!found) throw new VcollError('INTERNAL', `internal: root ${r} of [${lo}..${hi}] not reproduced`);
    } else {
      const x = L1[lo * p + r] + g[r];
      add(firstRoot(lo, r - 1, r, L1[lo * p + r]), lo, r - 1);
      add(recvRoot(x, r + 1, hi, r, target), r + 1, hi);
      builder.setCopyAt(r, 1);
    }
  }
  return { tree: builder.build(), time, root };
}
