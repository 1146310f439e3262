/**
 * Table-filling kernels of the homogeneous optimal ordered-tree DP (Traff17 §3.2,
 * Theorem 2): O(p³) time, O(p²) space, over flat typed arrays. `optimal/homogeneous.ts` validates,
 * calls these and rebuilds the tree; docs/optimal-dp.md explains the recurrence and layout.
 *
 * Notation (docs/MODEL.md): Cs[i][j] = best completion time of an ordered tree over ranks
 * i..j with any root. A tree over [i..j] is peeled at the last receive of its root:
 *   R(k): the root lies in [i..k] and receives the subtree over [k+1..j] last,
 *         max(rest, Cs[k+1][j]) + comm(S(k+1..j)) with rest = Cs[i][k], or γ·m_i when k = i
 *         (root i's copy overlaps its first receive);
 *   L(k): the root lies in [k+1..j] and receives the subtree over [i..k] last,
 *         max(Cs[i][k], rest) + comm(S(i..k)) with rest = Cs[k+1][j] (k < j − 1), and for
 *         k = j − 1 (root j, one child, copy afterwards) Cs[i][j−1] + comm(S(i..j−1)) + γ·m_j.
 * Every value is computed with the same floating-point operations, in the same order, as
 * `evaluate()` would use on the rebuilt tree, so the DP time equals the evaluated time exactly.
 *
 * Layout: Cs is stored as the upper triangle, row-major (row i holds Cs[i][i..p−1]), so
 * Cs[i][k] over k is contiguous. The tables are filled column by column (j ascending, i
 * descending); the column being filled is mirrored in a dense scratch vector so Cs[k+1][j]
 * over k is contiguous too. Choices are stored as small integers relative to i (see CHOICE).
 *
 * Tie order (which split is kept among equal times, docs/MODEL.md "Conventions"): root i
 * with one child first, then L(k) by ascending k, then R(k) by ascending k, then root j
 * with one child.
 */

/** Inputs shared by the kernels; all sizes are integers so every S(a..b) is exact. */
export interface DpInput {
  readonly p: number;
  /** Block sizes m_0..m_{p−1}. */
  readonly m: Float64Array;
  /** Prefix sums: P[i] = m_0 + … + m_{i−1}, length p + 1. */
  readonly P: Float64Array;
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  /** Completion time of a single-rank tree: γ·m_i under copyAll (Traff18 Lemma 4), else 0. */
  readonly leaf: Float64Array;
  /** nz[i] = the first rank t ≥ i with m_t > 0, or p (length p + 1). */
  readonly nz: Int32Array;
}

/** A choice table: Int16 while every offset fits (p ≤ 32767), Int32 otherwise. */
export type ChoiceTable = Int16Array | Int32Array;

/**
 * Encoding of a choice for range [i..j] (always i < j):
 *   +(k − i + 1) for R(k), k in [i..j−1] (k = i: root i, one child so far);
 *   −(k − i + 1) for L(k), k in [i..j−1] (k = j − 1: root j, one child so far).
 */
export const CHOICE = { R: 1, L: -1 } as const;

export type ProgressSink = (done: number, total: number) => void;

/** Number of entries of the upper triangle of a p x p table (diagonal included). */
export function triangleSize(p: number): number {
  return (p * (p + 1)) / 2;
}

/** Index of Cs[i][j] (i ≤ j) in the row-major upper triangle. */
export function triIndex(p: number, i: number, j: number): number {
  return i * p - (i * (i - 1)) / 2 + (j - i);
}

export function newChoiceTable(p: number, n: number): ChoiceTable {
  return p <= 32767 ? new Int16Array(n) : new Int32Array(n);
}

/** Throttled progress reporting in units of inner-loop steps. */
export class Progress {
  private next = 0;
  private readonly step: number;
  constructor(
    private readonly sink: ProgressSink | undefined,
    private readonly total: number,
  ) {
    this.step = Math.max(1, total / 200);
  }
  report(done: number): void {
    if (this.sink === undefined) return;
    if (done >= this.next || done >= this.total) {
      this.next = done + this.step;
      this.sink(Math.min(done, this.total), this.total);
    }
  }
}

/** Work of filling column j of the any-root table from row lo to row j−1: Σ (j − i). */
export function columnWork(lo: number, j: number): number {
  const n = j - lo;
  return n > 0 ? (n * (n + 1)) / 2 : 0;
}

export interface AnyRootTables {
  /** Cs triangle (row-major upper triangle). */
  readonly cs: Float64Array;
  /** Choices of Cs. */
  readonly choice: ChoiceTable;
  /**
   * Paper mode only: choices of N[i][j] (best tree over [i..j] whose root is < j), used when
   * a range's rest must avoid its last rank. Equal to `choice` wherever Cs did not pick root j.
   */
  readonly nChoice: ChoiceTable | undefined;
}

/**
 * Fills Cs (and its choices) for every range, exact (symmetric) rule or the paper's rule
 * (root j of a range takes exactly one message: its whole left range, then the copy).
 */
export function anyRootTables(input: DpInput, mode: 'exact' | 'paper', onProgress?: ProgressSink): AnyRootTables {
  const { p, leaf } = input;
  const n = triangleSize(p);
  const cs = new Float64Array(n);
  const choice = newChoiceTable(p, n);
  const nChoice = mode === 'paper' ? newChoiceTable(p, n) : undefined;
  const col = new Float64Array(p + 1);
  const colN = new Float64Array(p + 1);
  const cR = new Float64Array(p + 1);
  const progress = new Progress(onProgress, sumColumnWork(p, 0));
  let done = 0;
  for (let j = 0; j < p; j++) {
    col[j] = leaf[j];
    cs[triIndex(p, j, j)] = leaf[j];
    fillRightComm(input, cR, j, 0);
    if (mode === 'exact') exactColumn(input, cs, choice, col, cR, j, 0);
    else paperColumn(input, cs, choice, nChoice as ChoiceTable, col, colN, cR, j);
    done += columnWork(0, j);
    progress.report(done);
  }
  return { cs, choice, nChoice };
}

export function sumColumnWork(p: number, lo: number): number {
  let t = 0;
  for (let j = lo; j < p; j++) t += columnWork(lo, j);
  return t;
}

/**
 * Exact rule, column j, rows j−1 down to lo (col[j] must hold Cs[j][j], cR[k] must hold
 * comm(S(k+1..j)) for k in [lo..j−1]). Writes Cs[i][j] into `cs` and `col[i]`, and its choice.
 *
 * For i < k < j − 1 both splits share max(Cs[i][k], Cs[k+1][j]), so only the one with the
 * smaller last message can win: L(k) while S(i..k) ≤ S(k+1..j) (k ≤ h), R(k) after. In the
 * right part L(k) can still tie R(k) (β = 0, rounding); it is checked whenever R(k) is a
 * candidate, so the tie order stays exact.
 */
function exactColumn(
  input: DpInput,
  cs: Float64Array,
  choice: ChoiceTable,
  col: Float64Array,
  cR: Float64Array,
  j: number,
  lo: number,
): void {
  const { p, m, P, alpha, beta, gamma, leaf, nz } = input;
  const Pj1 = P[j + 1];
  const copyJ = gamma * m[j];
  let h = j - 1; // last k with S(i..k) ≤ S(k+1..j); non-increasing as i decreases
  for (let i = j - 1; i >= lo; i--) {
    const base = (i * p - ((i * (i - 1)) >> 1) - i) | 0; // cs[base + k] = Cs[i][k]
    const Pi = P[i];
    const thr = Pi + Pj1;
    while (h >= i && 2 * P[h + 1] > thr) h--;
    const b0 = col[i + 1];
    // root i, one child [i+1..j], copy overlapping
    const vb = Math.max(gamma * m[i], b0) + cR[i];
    let bestL = Infinity;
    let kL = -1;
    let bestR = Infinity;
    let kR = -1;
    if (j - i >= 2) {
      // L(i): leaf i sends to a root in [i+1..j]
      const mi = m[i];
      bestL = Math.max(leaf[i], b0) + (mi > 0 ? alpha + beta * mi : 0);
      kL = i;
      // left part of the interior, k in [i+1..e]: S(i..k) = 0 before nz[i]
      const e = h < j - 2 ? h : j - 2;
      const z = nz[i] - 1 < e ? nz[i] - 1 : e;
      let k = i + 1;
      for (; k <= z; k++) {
        const v = Math.max(cs[base + k], col[k + 1]);
        if (v < bestL) {
          bestL = v;
          kL = k;
        }
      }
      for (; k <= e; k++) {
        const v = Math.max(cs[base + k], col[k + 1]) + (alpha + beta * (P[k + 1] - Pi));
        if (v < bestL) {
          bestL = v;
          kL = k;
        }
      }
      // right part, k in [e+1..j−2]
      let run = bestL < vb ? bestL : vb;
      for (k = e + 1 > i + 1 ? e + 1 : i + 1; k <= j - 2; k++) {
        const mx = Math.max(cs[base + k], col[k + 1]);
        const v = mx + cR[k];
        if (v <= run) {
          run = v;
          if (v < bestR) {
            bestR = v;
            kR = k;
          }
          const sl = P[k + 1] - Pi;
          const vl = mx + (sl > 0 ? alpha + beta * sl : 0);
          if (vl < bestL) {
            bestL = vl;
            kL = k;
          }
        }
      }
      // R(j−1): leaf j sends to the root of [i..j−1]
      const v = Math.max(cs[base + j - 1], leaf[j]) + cR[j - 1];
      if (v < bestR) {
        bestR = v;
        kR = j - 1;
      }
    }
    // root j, one child [i..j−1], copy afterwards
    const s = P[j] - Pi;
    const va = cs[base + j - 1] + (s > 0 ? alpha + beta * s : 0) + copyJ;
    let val: number;
    let code: number;
    if (vb <= bestL && vb <= bestR && vb <= va) {
      val = vb;
      code = 1;
    } else if (bestL <= bestR && bestL <= va) {
      val = bestL;
      code = -(kL - i + 1);
    } else if (bestR <= va) {
      val = bestR;
      code = kR - i + 1;
    } else {
      val = va;
      code = -(j - i);
    }
    cs[base + j] = val;
    choice[base + j] = code;
    col[i] = val;
  }
}

/**
 * The paper's rule, column j: N[i][j] over roots < j (L(k) uses N[k+1][j] as its rest),
 * Cs[i][j] = min(N[i][j], root j with one child). colN mirrors N[·][j].
 */
function paperColumn(
  input: DpInput,
  cs: Float64Array,
  choice: ChoiceTable,
  nChoice: ChoiceTable,
  col: Float64Array,
  colN: Float64Array,
  cR: Float64Array,
  j: number,
): void {
  const { p, m, P, alpha, beta, gamma, leaf, nz } = input;
  const copyJ = gamma * m[j];
  for (let i = j - 1; i >= 0; i--) {
    const base = (i * p - ((i * (i - 1)) >> 1) - i) | 0;
    const Pi = P[i];
    const vb = Math.max(gamma * m[i], col[i + 1]) + cR[i];
    let bestL = Infinity;
    let kL = -1;
    let bestR = Infinity;
    let kR = -1;
    if (j - i >= 2) {
      // L(k), k in [i..j−2]: rest N[k+1][j]
      const mi = m[i];
      bestL = Math.max(leaf[i], colN[i + 1]) + (mi > 0 ? alpha + beta * mi : 0);
      kL = i;
      const z = nz[i] - 1 < j - 2 ? nz[i] - 1 : j - 2;
      let k = i + 1;
      for (; k <= z; k++) {
        const v = Math.max(cs[base + k], colN[k + 1]);
        if (v < bestL) {
          bestL = v;
          kL = k;
        }
      }
      for (; k <= j - 2; k++) {
        const v = Math.max(cs[base + k], colN[k + 1]) + (alpha + beta * (P[k + 1] - Pi));
        if (v < bestL) {
          bestL = v;
          kL = k;
        }
      }
      // R(k), k in [i+1..j−1]: child Cs[k+1][j]
      for (k = i + 1; k <= j - 1; k++) {
        const v = Math.max(cs[base + k], col[k + 1]) + cR[k];
        if (v < bestR) {
          bestR = v;
          kR = k;
        }
      }
    }
    let nv: number;
    let ncode: number;
    if (vb <= bestL && vb <= bestR) {
      nv = vb;
      ncode = 1;
    } else if (bestL <= bestR) {
      nv = bestL;
      ncode = -(kL - i + 1);
    } else {
      nv = bestR;
      ncode = kR - i + 1;
    }
    const s = P[j] - Pi;
    const va = cs[base + j - 1] + (s > 0 ? alpha + beta * s : 0) + copyJ;
    colN[i] = nv;
    nChoice[base + j] = ncode;
    if (nv <= va) {
      cs[base + j] = nv;
      choice[base + j] = ncode;
      col[i] = nv;
    } else {
      cs[base + j] = va;
      choice[base + j] = -(j - i);
      col[i] = va;
    }
  }
}

/** cR[k] = comm(S(k+1..j)) for k in [lo..j−1]. */
export function fillRightComm(input: DpInput, cR: Float64Array, j: number, lo: number): void {
  const { P, alpha, beta } = input;
  const Pj1 = P[j + 1];
  for (let k = lo; k < j; k++) {
    const s = Pj1 - P[k + 1];
    cR[k] = s > 0 ? alpha + beta * s : 0;
  }
}

export interface FixedRootTables {
  readonly root: number;
  /** Cs triangle, filled only for ranges that do not contain the root. */
  readonly cs: Float64Array;
  readonly choice: ChoiceTable;
  readonly nChoice: ChoiceTable | undefined;
  /** F[i][j] for i ≤ root ≤ j at (i)·(p − root) + (j − root): best tree over [i..j] rooted at `root`. */
  readonly f: Float64Array;
  readonly fChoice: ChoiceTable;
}

/** Index of F[i][j] (i ≤ r ≤ j) in the (r+1) x (p−r) rectangle. */
export function fIndex(p: number, r: number, i: number, j: number): number {
  return i * (p - r) + (j - r);
}

/**
 * Fixed root r: Cs over the ranges left and right of r (exact rule), then F over the ranges
 * containing r, whose last receive is always r's:
 *   R(k), k ≥ r: max(F[i][k] (γ·m_r when k = i = r), Cs[k+1][j]) + comm(S(k+1..j));
 *   L(k), k < r: max(Cs[i][k], F[k+1][j]) + comm(S(i..k)); for k + 1 = j = r:
 *                Cs[i][r−1] + comm(S(i..r−1)) + γ·m_r.
 */
export function fixedRootTables(input: DpInput, r: number, onProgress?: ProgressSink): FixedRootTables {
  const { p, m, P, alpha, beta, gamma, leaf, nz } = input;
  const n = triangleSize(p);
  const cs = new Float64Array(n);
  const choice = newChoiceTable(p, n);
  const w = p - r;
  const f = new Float64Array((r + 1) * w);
  const fChoice = newChoiceTable(p, (r + 1) * w);
  const col = new Float64Array(p + 1);
  const colF = new Float64Array(p + 1);
  const cR = new Float64Array(p + 1);
  let total = 0;
  for (let j = 0; j < p; j++) total += columnWork(j < r ? 0 : r + 1, j) + (j >= r ? fColumnWork(r, j) : 0);
  const progress = new Progress(onProgress, total);
  let done = 0;
  const copyR = gamma * m[r];
  for (let j = 0; j < p; j++) {
    col[j] = leaf[j];
    cs[triIndex(p, j, j)] = leaf[j];
    fillRightComm(input, cR, j, j < r ? 0 : r);
    if (j !== r) {
      const lo = j < r ? 0 : r + 1;
      exactColumn(input, cs, choice, col, cR, j, lo);
      done += columnWork(lo, j);
    }
    if (j < r) {
      progress.report(done);
      continue;
    }
    // F column j, rows r down to 0
    for (let i = r; i >= 0; i--) {
      const fi = i * w - r; // f[fi + k] = F[i][k]
      if (i === r && j === r) {
        f[fi + j] = leaf[r];
        colF[r] = leaf[r];
        continue;
      }
      const base = (i * p - ((i * (i - 1)) >> 1) - i) | 0;
      const Pi = P[i];
      // root r = i, one child [r+1..j], copy overlapping
      const vb = i === r ? Math.max(copyR, col[r + 1]) + cR[r] : Infinity;
      // L(k), k in [i..min(r−1, j−2)]: child Cs[i][k], rest F[k+1][j]
      let bestL = Infinity;
      let kL = -1;
      const e = r - 1 < j - 2 ? r - 1 : j - 2;
      if (i <= e) {
        const mi = m[i];
        bestL = Math.max(leaf[i], colF[i + 1]) + (mi > 0 ? alpha + beta * mi : 0);
        kL = i;
        const z = nz[i] - 1 < e ? nz[i] - 1 : e;
        let k = i + 1;
        for (; k <= z; k++) {
          const v = Math.max(cs[base + k], colF[k + 1]);
          if (v < bestL) {
            bestL = v;
            kL = k;
          }
        }
        for (; k <= e; k++) {
          const v = Math.max(cs[base + k], colF[k + 1]) + (alpha + beta * (P[k + 1] - Pi));
          if (v < bestL) {
            bestL = v;
            kL = k;
          }
        }
      }
      // R(k), k in [max(r, i+1)..j−1]: rest F[i][k], child Cs[k+1][j]
      let bestR = Infinity;
      let kR = -1;
      for (let k = r > i + 1 ? r : i + 1; k <= j - 1; k++) {
        const v = Math.max(f[fi + k], col[k + 1]) + cR[k];
        if (v < bestR) {
          bestR = v;
          kR = k;
        }
      }
      // root r = j, one child [i..r−1], copy afterwards
      let va = Infinity;
      if (j === r) {
        const s = P[r] - Pi;
        va = cs[base + r - 1] + (s > 0 ? alpha + beta * s : 0) + copyR;
      }
      let val: number;
      let code: number;
      if (vb <= bestL && vb <= bestR && vb <= va) {
        val = vb;
        code = 1;
      } else if (bestL <= bestR && bestL <= va) {
        val = bestL;
        code = -(kL - i + 1);
      } else if (bestR <= va) {
        val = bestR;
        code = kR - i + 1;
      } else {
        val = va;
        code = -(j - i);
      }
      f[fi + j] = val;
      fChoice[fi + j] = code;
      colF[i] = val;
    }
    done += fColumnWork(r, j);
    progress.report(done);
  }
  return { root: r, cs, choice, nChoice: undefined, f, fChoice };
}

/** Work of F's column j: Σ_{i ≤ r} (j − i). */
export function fColumnWork(r: number, j: number): number {
  return (r + 1) * (j - r) + (r * (r + 1)) / 2;
}
