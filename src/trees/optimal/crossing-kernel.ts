/**
 * Exact speed-up of the homogeneous optimal-tree DP (exact rule) by the single crossing of
 * the max in the recurrence. docs/optimal-dp.md, "The crossing kernel", has the derivation;
 * optimal/kernel.ts has the full-scan kernels that this one must equal cell by cell.
 *
 * For a range [i..j] and an inner split k ∈ K = [i+1..j−2] both candidates share
 * max(A_k, B_k) with A_k = Cs[i][k] (row i) and B_k = Cs[k+1][j] (column j):
 *   L(k) = max(A_k, B_k) + comm(S(i..k)),  R(k) = max(A_k, B_k) + comm(S(k+1..j)).
 * On a sub-range K' of K where row i is nondecreasing and column j is nonincreasing, A − B is
 * nondecreasing, so there is one crossing c: max = B_k for k < c, A_k for k ≥ c. With
 * comm(s) = α + β·s (s > 0) each side becomes a per-row or per-column vector plus a constant:
 *   k < c:  L(k) = (B_k + β·P[k+1]) + (α − β·P[i]),   R(k) = (B_k − β·P[k+1]) + (α + β·P[j+1])
 *   k ≥ c:  L(k) = (A_k + β·P[k+1]) + (α − β·P[i]),   R(k) = (A_k − β·P[k+1]) + (α + β·P[j+1])
 * and comm = 0 where the message is empty (S(i..k) = 0: k < nz[i]; S(k+1..j) = 0: k ≥ lz[j]).
 * Of these eight pieces six are monotone vectors (minimum at one end; the leftmost equal
 * entry by binary search), and two need a range minimum:
 *   B_k + β·P[k+1] over [.., c−1] of column j: a monotone deque per column (i descending);
 *   A_k − β·P[k+1] over [c, ..] of row i:      a monotone deque per row (j ascending).
 * Both deques keep the leftmost minimum, so the tie order of optimal/kernel.ts (root i, L(k)
 * by ascending k, R(k) by ascending k, root j; strictly smaller replaces) is preserved.
 *
 * Exactness:
 * - Monotonicity is not guaranteed (zero blocks, copy conventions). It is tracked at run time:
 *   rowEnd[i] = last k such that Cs[i][i+1..k] is nondecreasing, colStart = first row t such
 *   that Cs[t..j−1][j] is nonincreasing. K' = [max(i+1, colStart−1) .. min(j−2, rowEnd[i])];
 *   the splits of K outside K' are scanned as in the full kernel, and so is the whole cell
 *   when K' is short. A deque whose window moved backwards is rebuilt (counted).
 * - Floating point: the rearranged sums are exact only if every quantity is an integer below
 *   2^53. `crossingEligible` checks that up front (integer α, β, γ ≥ 0 and a bound on every
 *   table value); otherwise optimal/homogeneous.ts uses the full scan. With integers every candidate value
 *   equals the value `evaluate` computes, whatever the order of the additions.
 *
 * Order: cell (i, j) needs column j below it (and that column's state: mirror, deque,
 * colStart) and row i left of it (and that row's state: tracker, deque, last crossing), and
 * nothing else. The best-root driver fills blocks of BLOCK_COLUMNS columns row by row (a
 * row's data stays in cache for a whole block); every order with that property computes each
 * cell with the same operands and operations, so the tables do not depend on the block width,
 * and the two-core kernel (optimal/parallel-kernel.ts) runs the same `cell` on two threads.
 */
import {
  columnWork,
  fColumnWork,
  fillRightComm,
  newChoiceTable,
  Progress,
  sumColumnWork,
  triangleSize,
  triIndex,
  type AnyRootTables,
  type ChoiceTable,
  type DpInput,
  type FixedRootTables,
  type ProgressSink,
} from './kernel.js';

/** Below this many splits in K' a cell is scanned: the searches would cost more. */
const MIN_FAST = 8;

/** Counters of how a run went (tests assert that every path is exercised). */
export interface CrossingStats {
  /** Cells [i..j] with j − i ≥ 3 (an inner split range K exists). */
  cells: number;
  /** Cells computed by the crossing (possibly with a scanned remainder). */
  fastCells: number;
  /** Of those, cells where monotonicity held only on part of K (the rest was scanned). */
  partialCells: number;
  /** Cells scanned in full: K' short or empty (monotonicity broken, or a short range). */
  scanCells: number;
  /** Cells scanned in full although j − i − 2 ≥ MIN_FAST: monotonicity broke. */
  brokenCells: number;
  /** Deque rebuilds because a window moved backwards. */
  dequeRebuilds: number;
  /** Inner splits evaluated by scanning (work actually done the slow way). */
  scannedSplits: number;
}

export function newStats(): CrossingStats {
  return { cells: 0, fastCells: 0, partialCells: 0, scanCells: 0, brokenCells: 0, dequeRebuilds: 0, scannedSplits: 0 };
}

/**
 * True when the crossing kernel is exact for this input: α, β, γ are non-negative integers
 * (sizes are integers already) and every quantity the kernels form stays below 2^53 in
 * magnitude. Every table value is at most the time of a star, (p−1)·α + β·S + γ·max m; a
 * candidate adds at most one message and one copy, a rearranged term at most β·S.
 */
export function crossingEligible(input: DpInput): boolean {
  const { p, m, P, alpha, beta, gamma } = input;
  if (!Number.isInteger(alpha) || !Number.isInteger(beta) || !Number.isInteger(gamma)) return false;
  if (alpha < 0 || beta < 0 || gamma < 0) return false;
  let maxm = 0;
  for (let t = 0; t < p; t++) if (m[t] > maxm) maxm = m[t];
  const bound = (p + 2) * alpha + 3 * beta * P[p] + 2 * gamma * maxm;
  return bound <= 2 ** 51;
}

/**
 * The tables of a run that outlive a column: Cs, its choices, and the per-row state of the
 * crossing (monotonicity tracker, deque, last crossing). Row i's entries are read and written
 * only by the cells of row i, column after column. The two-core kernel
 * (optimal/parallel-kernel.ts) puts them in SharedArrayBuffers.
 */
export interface CrossingTables {
  readonly cs: Float64Array;
  readonly choice: ChoiceTable;
  /** Row deques: entries k − i of row i at rdq[triIndex(i, i) + slot]. */
  readonly rdq: ChoiceTable;
  /** Row state, ROW_STRIDE Int32 per row: the R_* fields of row i at i·ROW_STRIDE. */
  readonly rows: Int32Array;
}

/**
 * Row state fields. R_END: last k with Cs[i][i+1..k] nondecreasing (valid once Cs[i][i+1] is
 * set); R_HEAD, R_TAIL: row i's deque; R_PUSHED: last k pushed on it; R_LO: smallest left
 * bound used since its last rebuild; R_CROSS: row i's last crossing (a hint for the next
 * column). One row's fields share a cache line, and rows 8 apart never do.
 */
const R_END = 0;
const R_HEAD = 1;
const R_TAIL = 2;
const R_PUSHED = 3;
const R_LO = 4;
const R_CROSS = 5;
const ROW_STRIDE = 8;

/**
 * Allocates the tables of a run: on ordinary ArrayBuffers, or on SharedArrayBuffers that a
 * worker thread can map (`shared`). Zero-filled either way.
 */
export function newCrossingTables(p: number, shared: boolean): CrossingTables {
  const n = triangleSize(p);
  const buf = (bytes: number): ArrayBuffer | SharedArrayBuffer => (shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  const choiceTable = (): ChoiceTable => (p <= 32767 ? new Int16Array(buf(2 * n)) : new Int32Array(buf(4 * n)));
  return { cs: new Float64Array(buf(8 * n)), choice: choiceTable(), rdq: choiceTable(), rows: new Int32Array(buf(4 * ROW_STRIDE * p)) };
}

/**
 * Hook of the two-core kernel into CrossingCs.block (optimal/parallel-kernel.ts). Block b holds
 * columns [j0..j1) and is filled row by row from the diagonal down; its progress is the number
 * of rows finished counted from row j1 − 1 (the diagonal entries, set first): after row i,
 * j1 − i. Cell (i, j) reads row i left of j and the row state of row i, written by the cells of
 * row i in earlier columns: the first column of block b fills row i < j0 once block b − 1
 * (which ends at column j0 − 1) has finished j0 − i rows.
 */
export interface BlockSync {
  /** Blocks until block b has finished at least `rows` rows; returns how many it has finished. */
  waitRows(b: number, rows: number): number;
  /** Block b has finished `rows` rows (its writes before this call are visible to waitRows). */
  publish(b: number, rows: number): void;
}

/**
 * Columns filled together, row by row (a block). Any width gives the same tables (each cell
 * sees the same row and column state); a block keeps a row's data in cache for w cells, and
 * on two cores a row's cache lines move between the cores once per block, not once per cell.
 */
export const BLOCK_COLUMNS = 64;

/** Block width for p ranks: BLOCK_COLUMNS, narrower below p = 16·BLOCK_COLUMNS so that a run has 16 blocks (progress reports). */
export function blockWidth(p: number): number {
  return Math.min(BLOCK_COLUMNS, Math.max(1, Math.ceil(p / 16)));
}

/**
 * On two cores, a block fills row i only when the previous block is SYNC_LAG rows further
 * (or done): the threads then rarely wait for each other, and never write the cache lines of
 * the same rows at the same time.
 */
const SYNC_LAG = 32;

/** Int32 fields of a column slot's state (CrossingCs.cst), and its stride. */
const C_START = 0; // colStart: rows [colStart..j−1] of the column are nonincreasing
const C_DL = 1; // column deque: entries cdq[cdl..cdr−1] (indices ascending, values strictly decreasing)
const C_DR = 2;
const C_LO = 3; // window [cLo..cHi] the deque covers; cLo = −1: not started
const C_HI = 4;
const C_STRIDE = 8;

/**
 * Per-run state shared by the any-root and fixed-root drivers: the Cs triangle, its choices,
 * and the monotonicity trackers and deques of the crossing (CrossingTables), plus the state of
 * the columns being filled (up to `width` at a time, in slots), private to the thread that
 * fills them.
 */
export class CrossingCs {
  readonly cs: Float64Array;
  readonly choice: ChoiceTable;
  /** cols[slot][t] mirrors Cs[t][j] of the column j in that slot. */
  readonly cols: Float64Array[];
  /** Column deques (indices k, pushed at the left as i descends), one per slot. */
  readonly cdqs: Int32Array[];
  /** Per slot: C_START, C_DL, C_DR, C_LO, C_HI at slot·C_STRIDE. */
  readonly cst: Int32Array;
  /** lz[j] = last t ≤ j with m_t > 0, or −1. */
  readonly lz: Int32Array;
  readonly rdq: ChoiceTable;
  /** Row state (CrossingTables.rows). */
  readonly rows: Int32Array;
  /** Scratch for scanRange: bestL, kL, bestR, kR. */
  readonly sc = new Float64Array(4);
  readonly stats = newStats();
  /** colStart of the last column filled by `column`: rows [colStart..j−1] of it are nonincreasing. */
  colStart = 0;

  constructor(
    readonly input: DpInput,
    tables: CrossingTables = newCrossingTables(input.p, false),
    width = 1,
  ) {
    const { p, m } = input;
    this.cs = tables.cs;
    this.choice = tables.choice;
    this.rdq = tables.rdq;
    this.rows = tables.rows;
    this.cols = Array.from({ length: width }, () => new Float64Array(p + 1));
    this.cdqs = Array.from({ length: width }, () => new Int32Array(p + 1));
    this.cst = new Int32Array(width * C_STRIDE);
    this.lz = new Int32Array(p);
    for (let t = 0; t < p; t++) this.lz[t] = m[t] > 0 ? t : t > 0 ? this.lz[t - 1] : -1;
  }

  /** The mirror of the column filled by `column` (slot 0). */
  get col(): Float64Array {
    return this.cols[0];
  }

  /** Starts column j in `slot`: Cs[j][j], its mirror, and an empty column state. */
  startColumn(j: number, slot: number): void {
    const { p, leaf } = this.input;
    this.cols[slot][j] = leaf[j];
    this.cs[triIndex(p, j, j)] = leaf[j];
    const s = slot * C_STRIDE;
    this.cst[s + C_START] = j - 1;
    this.cst[s + C_DL] = p;
    this.cst[s + C_DR] = p;
    this.cst[s + C_LO] = -1;
    this.cst[s + C_HI] = -1;
  }

  /**
   * Exact rule, column j, rows j−1 down to lo (slot 0); the same values and choices as
   * optimal/kernel.ts exactColumn (for eligible inputs).
   */
  column(j: number, lo: number): void {
    this.startColumn(j, 0);
    for (let i = j - 1; i >= lo; i--) this.cell(i, j, 0);
    this.colStart = this.cst[C_START];
  }

  /**
   * Columns [j0..j1) (at most `width`), rows from the diagonal down to 0, row by row: cell
   * (i, j) after (i, j−1) and (i+1, j), as `column` would. With `sync` (the two-core kernel;
   * this is block b), each row first waits for block b − 1 to have finished it, and the
   * block's progress is published after every row.
   */
  block(j0: number, j1: number, sync?: BlockSync, b = 0): void {
    for (let j = j0; j < j1; j++) this.startColumn(j, j - j0);
    sync?.publish(b, 1);
    let seen = 0; // rows of block b − 1 known to be finished
    for (let i = j1 - 2; i >= 0; i--) {
      if (sync !== undefined && i < j0) {
        const need = j0 - i + SYNC_LAG < j0 ? j0 - i + SYNC_LAG : j0;
        if (need > seen) seen = sync.waitRows(b - 1, need);
      }
      for (let j = i + 1 > j0 ? i + 1 : j0; j < j1; j++) this.cell(i, j, j - j0);
      sync?.publish(b, j1 - i);
    }
  }

  /** Cs[i][j] and its choice (exact rule), with the column state of `slot` and row i's state. */
  cell(i: number, j: number, slot: number): void {
    const { p, m, P, alpha, beta, gamma, leaf, nz } = this.input;
    const { cs, choice, lz, rdq, rows, cst, sc, stats } = this;
    const col = this.cols[slot];
    const cdq = this.cdqs[slot];
    const so = slot * C_STRIDE;
    let colStart = cst[so + C_START];
    let cdl = cst[so + C_DL];
    let cdr = cst[so + C_DR];
    let cLo = cst[so + C_LO];
    let cHi = cst[so + C_HI];
    const Pj1 = P[j + 1];
    const lzj = lz[j];
    const base = (i * p - ((i * (i - 1)) >> 1) - i) | 0; // cs[base + k] = Cs[i][k]
    const ri = i * ROW_STRIDE; // rows[ri + R_*]: row i's state
    const Pi = P[i];
    const b0 = col[i + 1];
    // root i, one child [i+1..j], copy overlapping
    const vb = Math.max(gamma * m[i], b0) + rightComm(P, alpha, beta, Pj1, i);
    let bestL = Infinity;
    let kL = -1;
    let bestR = Infinity;
    let kR = -1;
    if (j - i >= 2) {
      // L(i): leaf i sends to a root in [i+1..j]
      const mi = m[i];
      bestL = Math.max(leaf[i], b0) + (mi > 0 ? alpha + beta * mi : 0);
      kL = i;
      if (j - i >= 3) {
        stats.cells++;
        const klo = i + 1;
        const khi = j - 2;
        const flo = colStart - 1 > klo ? colStart - 1 : klo;
        const re = rows[ri + R_END];
        const fhi = re < khi ? re : khi;
        sc[0] = bestL;
        sc[1] = kL;
        sc[2] = bestR;
        sc[3] = kR;
        if (fhi - flo + 1 < MIN_FAST) {
          stats.scanCells++;
          if (khi - klo + 1 >= MIN_FAST) stats.brokenCells++;
          scanRange(this, col, base, Pi, Pj1, klo, khi);
          bestL = sc[0];
          kL = sc[1];
          bestR = sc[2];
          kR = sc[3];
        } else {
          stats.fastCells++;
          if (flo > klo || fhi < khi) stats.partialCells++;
          if (flo > klo) {
            scanRange(this, col, base, Pi, Pj1, klo, flo - 1);
            bestL = sc[0];
            kL = sc[1];
            bestR = sc[2];
            kR = sc[3];
          }
          // crossing: first k in [flo..fhi] with A_k ≥ B_k, else fhi + 1. It usually moves
          // right as j grows (row i's last crossing is the hint): walk from the hint, which
          // reads row i and the column sequentially; binary search if it lies left of it.
          let a = rows[ri + R_CROSS];
          if (a < flo) a = flo;
          if (a > fhi + 1) a = fhi + 1;
          if (a > flo && cs[base + a - 1] >= col[a]) {
            let b = a - 1;
            a = flo;
            while (a < b) {
              const mid = (a + b) >> 1;
              if (cs[base + mid] >= col[mid + 1]) b = mid;
              else a = mid + 1;
            }
          } else {
            while (a <= fhi && cs[base + a] < col[a + 1]) a++;
          }
          const c = a;
          rows[ri + R_CROSS] = c;
          const nzi = nz[i];
          // ---- L(k), ascending k: zero message (k < nzi) column side, row side; then
          // comm column side, row side
          let e = nzi - 1 < c - 1 ? nzi - 1 : c - 1;
          if (e >= flo) {
            const v = col[e + 1];
            if (v < bestL) {
              bestL = v;
              // leftmost k in [flo..e] with B_k ≤ v (B nonincreasing)
              let x = flo;
              let y = e;
              while (x < y) {
                const mid = (x + y) >> 1;
                if (col[mid + 1] <= v) y = mid;
                else x = mid + 1;
              }
              kL = x;
            }
          }
          if (c <= fhi && c < nzi) {
            const v = cs[base + c];
            if (v < bestL) {
              bestL = v;
              kL = c;
            }
          }
          const a3 = nzi > flo ? nzi : flo;
          if (a3 <= c - 1) {
            // min of B_k + β·P[k+1] over [a3..c−1]: column deque, window moving left
            const e3 = c - 1;
            if (cLo < 0 || e3 > cHi || a3 > cLo) {
              if (cLo >= 0) stats.dequeRebuilds++;
              cdl = p;
              cdr = p;
              cLo = e3 + 1;
            } else {
              while (cdr > cdl && cdq[cdr - 1] > e3) cdr--;
            }
            cHi = e3;
            for (let k = cLo - 1 < e3 ? cLo - 1 : e3; k >= a3; k--) {
              const x = col[k + 1] + beta * P[k + 1];
              while (cdr > cdl && col[cdq[cdl] + 1] + beta * P[cdq[cdl] + 1] >= x) cdl++;
              cdq[--cdl] = k;
            }
            if (a3 < cLo) cLo = a3;
            const k = cdq[cdr - 1];
            const v = col[k + 1] + (alpha + beta * (P[k + 1] - Pi));
            if (v < bestL) {
              bestL = v;
              kL = k;
            }
          }
          const x4 = nzi > c ? nzi : c;
          if (x4 <= fhi) {
            const v = cs[base + x4] + (alpha + beta * (P[x4 + 1] - Pi));
            if (v < bestL) {
              bestL = v;
              kL = x4;
            }
          }
          // ---- R(k), ascending k: message (k < lzj) column side, row side; then zero
          // message column side, row side
          e = lzj < c ? lzj - 1 : c - 1;
          if (e >= flo) {
            const v = col[e + 1] + rightComm(P, alpha, beta, Pj1, e);
            if (v < bestR) {
              bestR = v;
              // leftmost k in [flo..e] with B_k − β·P[k+1] ≤ that at e (nonincreasing)
              const t = col[e + 1] - beta * P[e + 1];
              let x = flo;
              let y = e;
              while (x < y) {
                const mid = (x + y) >> 1;
                if (col[mid + 1] - beta * P[mid + 1] <= t) y = mid;
                else x = mid + 1;
              }
              kR = x;
            }
          }
          const e2 = lzj - 1 < fhi ? lzj - 1 : fhi;
          if (c <= e2) {
            // min of A_k − β·P[k+1] over [c..e2]: row i's deque, window moving right
            const ro = base + i;
            let head = rows[ri + R_HEAD];
            let tail = rows[ri + R_TAIL];
            let pushed = rows[ri + R_PUSHED];
            if (c < rows[ri + R_LO] || e2 < pushed) {
              stats.dequeRebuilds++;
              head = 0;
              tail = 0;
              pushed = c - 1;
            }
            for (let k = pushed + 1; k <= e2; k++) {
              const x = cs[base + k] - beta * P[k + 1];
              while (tail > head && cs[base + i + rdq[ro + tail - 1]] - beta * P[i + rdq[ro + tail - 1] + 1] > x) tail--;
              rdq[ro + tail++] = k - i;
            }
            while (rdq[ro + head] + i < c) head++;
            rows[ri + R_HEAD] = head;
            rows[ri + R_TAIL] = tail;
            rows[ri + R_PUSHED] = e2;
            rows[ri + R_LO] = c;
            const k = rdq[ro + head] + i;
            const v = cs[base + k] + rightComm(P, alpha, beta, Pj1, k);
            if (v < bestR) {
              bestR = v;
              kR = k;
            }
          }
          const a7 = lzj > flo ? lzj : flo;
          if (a7 <= c - 1) {
            const v = col[c];
            if (v < bestR) {
              bestR = v;
              let x = a7;
              let y = c - 1;
              while (x < y) {
                const mid = (x + y) >> 1;
                if (col[mid + 1] <= v) y = mid;
                else x = mid + 1;
              }
              kR = x;
            }
          }
          const x8 = lzj > c ? lzj : c;
          if (x8 <= fhi) {
            const v = cs[base + x8];
            if (v < bestR) {
              bestR = v;
              kR = x8;
            }
          }
          if (fhi < khi) {
            sc[0] = bestL;
            sc[1] = kL;
            sc[2] = bestR;
            sc[3] = kR;
            scanRange(this, col, base, Pi, Pj1, fhi + 1, khi);
            bestL = sc[0];
            kL = sc[1];
            bestR = sc[2];
            kR = sc[3];
          }
        }
      }
      // R(j−1): leaf j sends to the root of [i..j−1]
      const v = Math.max(cs[base + j - 1], leaf[j]) + rightComm(P, alpha, beta, Pj1, j - 1);
      if (v < bestR) {
        bestR = v;
        kR = j - 1;
      }
    }
    // root j, one child [i..j−1], copy afterwards
    const s = P[j] - Pi;
    const va = cs[base + j - 1] + (s > 0 ? alpha + beta * s : 0) + gamma * m[j];
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
    // monotonicity trackers
    if (j === i + 1) {
      rows[ri + R_END] = j;
      rows[ri + R_HEAD] = 0;
      rows[ri + R_TAIL] = 0;
      rows[ri + R_PUSHED] = i;
      rows[ri + R_LO] = i + 1;
    } else if (rows[ri + R_END] === j - 1 && val >= cs[base + j - 1]) {
      rows[ri + R_END] = j;
    }
    if (colStart === i + 1 && i + 1 < j && val >= col[i + 1]) colStart = i;
    cst[so + C_START] = colStart;
    cst[so + C_DL] = cdl;
    cst[so + C_DR] = cdr;
    cst[so + C_LO] = cLo;
    cst[so + C_HI] = cHi;
  }
}

/** comm(S(k+1..j)) with Pj1 = P[j+1]: the expression of kernel.ts fillRightComm, so the same double. */
function rightComm(P: Float64Array, alpha: number, beta: number, Pj1: number, k: number): number {
  const s = Pj1 - P[k + 1];
  return s > 0 ? alpha + beta * s : 0;
}

/**
 * Scans the inner splits k in [x..y] of cell [i..j] (both L(k) and R(k)), updating the
 * running bests in st.sc with strictly smaller values (ascending k keeps the tie order).
 */
function scanRange(st: CrossingCs, col: Float64Array, base: number, Pi: number, Pj1: number, x: number, y: number): void {
  const { P, alpha, beta } = st.input;
  const { cs, sc } = st;
  let bestL = sc[0];
  let kL = sc[1];
  let bestR = sc[2];
  let kR = sc[3];
  for (let k = x; k <= y; k++) {
    const mx = Math.max(cs[base + k], col[k + 1]);
    const sl = P[k + 1] - Pi;
    const vl = mx + (sl > 0 ? alpha + beta * sl : 0);
    if (vl < bestL) {
      bestL = vl;
      kL = k;
    }
    const vr = mx + rightComm(P, alpha, beta, Pj1, k);
    if (vr < bestR) {
      bestR = vr;
      kR = k;
    }
  }
  if (y >= x) st.stats.scannedSplits += y - x + 1;
  sc[0] = bestL;
  sc[1] = kL;
  sc[2] = bestR;
  sc[3] = kR;
}

export interface CrossingAnyRootTables extends AnyRootTables {
  readonly stats: CrossingStats;
}

/**
 * Cs (exact rule) for every range by the crossing kernel, `width` columns at a time (any width
 * gives the same tables); needs crossingEligible(input).
 */
export function crossingAnyRootTables(input: DpInput, onProgress?: ProgressSink, width = blockWidth(input.p)): CrossingAnyRootTables {
  const { p } = input;
  const st = new CrossingCs(input, undefined, width);
  const progress = new Progress(onProgress, sumColumnWork(p, 0));
  let done = 0;
  for (let j0 = 0; j0 < p; j0 += width) {
    const j1 = Math.min(j0 + width, p);
    st.block(j0, j1);
    for (let j = j0; j < j1; j++) done += columnWork(0, j);
    progress.report(done);
  }
  return { cs: st.cs, choice: st.choice, nChoice: undefined, stats: st.stats };
}

export interface CrossingFixedRootTables extends FixedRootTables {
  readonly stats: CrossingStats;
}

/**
 * Fixed root r by the crossing: Cs over the ranges that avoid r (as crossingAnyRootTables),
 * then F over the ranges that contain r (optimal/kernel.ts fixedRootTables has the
 * recurrence). L(k) pairs row i of Cs with column j of F, R(k) row i of F with column j of
 * Cs; each has one message size, so each side has four pieces (zero or non-zero message,
 * column or row side of its crossing) and one deque: F's column (L) or F's row (R).
 */
export function crossingFixedRootTables(input: DpInput, r: number, onProgress?: ProgressSink): CrossingFixedRootTables {
  const { p, m, P, alpha, beta, gamma, leaf, nz } = input;
  const st = new CrossingCs(input);
  const { cs, col, lz, rows, stats } = st;
  const cR = new Float64Array(p + 1); // comm(S(k+1..j)) of column j
  const w = p - r;
  const f = new Float64Array((r + 1) * w);
  const fChoice = newChoiceTable(p, (r + 1) * w);
  const colF = new Float64Array(p + 1);
  // F row trackers: fRowEnd[i] = last k with F[i][kr0..k] nondecreasing (kr0 = max(r, i+1));
  // row deques at fdq[i·w + slot], entries k − i
  const fRowEnd = new Int32Array(r + 1);
  const fdq = newChoiceTable(p, (r + 1) * w);
  const fHead = new Int32Array(r + 1);
  const fTail = new Int32Array(r + 1);
  const fPushed = new Int32Array(r + 1);
  const fLo = new Int32Array(r + 1);
  const cdq = new Int32Array(p + 1);
  let total = 0;
  for (let j = 0; j < p; j++) total += columnWork(j < r ? 0 : r + 1, j) + (j >= r ? fColumnWork(r, j) : 0);
  const progress = new Progress(onProgress, total);
  let done = 0;
  const copyR = gamma * m[r];
  for (let j = 0; j < p; j++) {
    fillRightComm(input, cR, j, j < r ? 0 : r);
    if (j !== r) {
      const lo = j < r ? 0 : r + 1;
      st.column(j, lo);
      done += columnWork(lo, j);
    } else {
      st.startColumn(j, 0);
    }
    if (j < r) {
      progress.report(done);
      continue;
    }
    const csColStart = j > r ? st.colStart : j; // rows [csColStart..j−1] of Cs column j nonincreasing
    const lzj = lz[j];
    let colFStart = r; // rows [colFStart..r] of F column j nonincreasing
    let cdl = p;
    let cdr = p;
    let cLo = -1;
    let cHi = -1;
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
      // ---- L(k), k in [i..min(r−1, j−2)]: child Cs[i][k], rest F[k+1][j]
      let bestL = Infinity;
      let kL = -1;
      const e = r - 1 < j - 2 ? r - 1 : j - 2;
      if (i <= e) {
        const mi = m[i];
        bestL = Math.max(leaf[i], colF[i + 1]) + (mi > 0 ? alpha + beta * mi : 0);
        kL = i;
        const klo = i + 1;
        if (e >= klo) stats.cells++;
        const flo = colFStart - 1 > klo ? colFStart - 1 : klo;
        const re = rows[i * ROW_STRIDE + R_END];
        const fhi = re < e ? re : e;
        // scan [klo..s1] before the crossing part, [s2..e] after it
        let s1 = e;
        let s2 = e + 1;
        const fast = fhi - flo + 1 >= MIN_FAST;
        if (fast) {
          stats.fastCells++;
          if (flo > klo || fhi < e) stats.partialCells++;
          s1 = flo - 1;
          s2 = fhi + 1;
        } else if (e >= klo) {
          stats.scanCells++;
          if (e - klo + 1 >= MIN_FAST) stats.brokenCells++;
        }
        for (let k = klo; k <= s1; k++) {
          const sl = P[k + 1] - Pi;
          const v = Math.max(cs[base + k], colF[k + 1]) + (sl > 0 ? alpha + beta * sl : 0);
          if (v < bestL) {
            bestL = v;
            kL = k;
          }
        }
        if (s1 >= klo) stats.scannedSplits += s1 - klo + 1;
        if (fast) {
          // crossing: first k in [flo..fhi] with Cs[i][k] ≥ F[k+1][j]
          let a = flo;
          let b = fhi + 1;
          while (a < b) {
            const mid = (a + b) >> 1;
            if (cs[base + mid] >= colF[mid + 1]) b = mid;
            else a = mid + 1;
          }
          const c = a;
          const nzi = nz[i];
          const e1 = nzi - 1 < c - 1 ? nzi - 1 : c - 1;
          if (e1 >= flo) {
            const v = colF[e1 + 1];
            if (v < bestL) {
              bestL = v;
              let x = flo;
              let y = e1;
              while (x < y) {
                const mid = (x + y) >> 1;
                if (colF[mid + 1] <= v) y = mid;
                else x = mid + 1;
              }
              kL = x;
            }
          }
          if (c <= fhi && c < nzi) {
            const v = cs[base + c];
            if (v < bestL) {
              bestL = v;
              kL = c;
            }
          }
          const a3 = nzi > flo ? nzi : flo;
          if (a3 <= c - 1) {
            const e3 = c - 1;
            if (cLo < 0 || e3 > cHi || a3 > cLo) {
              if (cLo >= 0) stats.dequeRebuilds++;
              cdl = p;
              cdr = p;
              cLo = e3 + 1;
            } else {
              while (cdr > cdl && cdq[cdr - 1] > e3) cdr--;
            }
            cHi = e3;
            for (let k = cLo - 1 < e3 ? cLo - 1 : e3; k >= a3; k--) {
              const x = colF[k + 1] + beta * P[k + 1];
              while (cdr > cdl && colF[cdq[cdl] + 1] + beta * P[cdq[cdl] + 1] >= x) cdl++;
              cdq[--cdl] = k;
            }
            if (a3 < cLo) cLo = a3;
            const k = cdq[cdr - 1];
            const v = colF[k + 1] + (alpha + beta * (P[k + 1] - Pi));
            if (v < bestL) {
              bestL = v;
              kL = k;
            }
          }
          const x4 = nzi > c ? nzi : c;
          if (x4 <= fhi) {
            const v = cs[base + x4] + (alpha + beta * (P[x4 + 1] - Pi));
            if (v < bestL) {
              bestL = v;
              kL = x4;
            }
          }
          for (let k = s2; k <= e; k++) {
            const sl = P[k + 1] - Pi;
            const v = Math.max(cs[base + k], colF[k + 1]) + (sl > 0 ? alpha + beta * sl : 0);
            if (v < bestL) {
              bestL = v;
              kL = k;
            }
          }
          stats.scannedSplits += e - s2 + 1;
        }
      }
      // ---- R(k), k in [max(r, i+1)..j−1]: rest F[i][k], child Cs[k+1][j]
      let bestR = Infinity;
      let kR = -1;
      const kr0 = r > i + 1 ? r : i + 1;
      const khi = j - 2;
      if (khi >= kr0) {
        stats.cells++;
        const flo = csColStart - 1 > kr0 ? csColStart - 1 : kr0;
        const fhi = fRowEnd[i] < khi ? fRowEnd[i] : khi;
        let s1 = khi;
        let s2 = khi + 1;
        if (fhi - flo + 1 >= MIN_FAST) {
          stats.fastCells++;
          if (flo > kr0 || fhi < khi) stats.partialCells++;
          s1 = flo - 1;
          s2 = fhi + 1;
        } else {
          stats.scanCells++;
          if (khi - kr0 + 1 >= MIN_FAST) stats.brokenCells++;
        }
        for (let k = kr0; k <= s1; k++) {
          const v = Math.max(f[fi + k], col[k + 1]) + cR[k];
          if (v < bestR) {
            bestR = v;
            kR = k;
          }
        }
        if (s1 >= kr0) stats.scannedSplits += s1 - kr0 + 1;
        if (s1 < khi) {
          let a = flo;
          let b = fhi + 1;
          while (a < b) {
            const mid = (a + b) >> 1;
            if (f[fi + mid] >= col[mid + 1]) b = mid;
            else a = mid + 1;
          }
          const c = a;
          // message (k < lzj), column side: B_k − β·P[k+1] nonincreasing
          const e1 = lzj < c ? lzj - 1 : c - 1;
          if (e1 >= flo) {
            const v = col[e1 + 1] + cR[e1];
            if (v < bestR) {
              bestR = v;
              const t = col[e1 + 1] - beta * P[e1 + 1];
              let x = flo;
              let y = e1;
              while (x < y) {
                const mid = (x + y) >> 1;
                if (col[mid + 1] - beta * P[mid + 1] <= t) y = mid;
                else x = mid + 1;
              }
              kR = x;
            }
          }
          // message, row side: F row i's deque of F[i][k] − β·P[k+1]
          const e2 = lzj - 1 < fhi ? lzj - 1 : fhi;
          if (c <= e2) {
            const ro = i * w;
            let head = fHead[i];
            let tail = fTail[i];
            let pushed = fPushed[i];
            if (c < fLo[i] || e2 < pushed) {
              stats.dequeRebuilds++;
              head = 0;
              tail = 0;
              pushed = c - 1;
            }
            for (let k = pushed + 1; k <= e2; k++) {
              const x = f[fi + k] - beta * P[k + 1];
              while (tail > head && f[fi + i + fdq[ro + tail - 1]] - beta * P[i + fdq[ro + tail - 1] + 1] > x) tail--;
              fdq[ro + tail++] = k - i;
            }
            while (fdq[ro + head] + i < c) head++;
            fHead[i] = head;
            fTail[i] = tail;
            fPushed[i] = e2;
            fLo[i] = c;
            const k = fdq[ro + head] + i;
            const v = f[fi + k] + cR[k];
            if (v < bestR) {
              bestR = v;
              kR = k;
            }
          }
          // no message (k ≥ lzj): column side B_k nonincreasing, row side A_k nondecreasing
          const a7 = lzj > flo ? lzj : flo;
          if (a7 <= c - 1) {
            const v = col[c];
            if (v < bestR) {
              bestR = v;
              let x = a7;
              let y = c - 1;
              while (x < y) {
                const mid = (x + y) >> 1;
                if (col[mid + 1] <= v) y = mid;
                else x = mid + 1;
              }
              kR = x;
            }
          }
          const x8 = lzj > c ? lzj : c;
          if (x8 <= fhi) {
            const v = f[fi + x8];
            if (v < bestR) {
              bestR = v;
              kR = x8;
            }
          }
          for (let k = s2; k <= khi; k++) {
            const v = Math.max(f[fi + k], col[k + 1]) + cR[k];
            if (v < bestR) {
              bestR = v;
              kR = k;
            }
          }
          stats.scannedSplits += khi - s2 + 1;
        }
      }
      if (j - 1 >= kr0) {
        // R(j−1): leaf j sends to r's tree over [i..j−1]
        const v = Math.max(f[fi + j - 1], col[j]) + cR[j - 1];
        if (v < bestR) {
          bestR = v;
          kR = j - 1;
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
      // trackers
      if (j === kr0) {
        fRowEnd[i] = j;
        fHead[i] = 0;
        fTail[i] = 0;
        fPushed[i] = j - 1;
        fLo[i] = j;
      } else if (j > kr0 && fRowEnd[i] === j - 1 && val >= f[fi + j - 1]) {
        fRowEnd[i] = j;
      }
      if (colFStart === i + 1 && val >= colF[i + 1]) colFStart = i;
    }
    done += fColumnWork(r, j);
    progress.report(done);
  }
  return { root: r, cs, choice: st.choice, nChoice: undefined, f, fChoice, stats };
}
