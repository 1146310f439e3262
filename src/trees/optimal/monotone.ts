/**
 * HEURISTIC variant of the homogeneous optimal-tree DP (Traff17 Theorem 2): Knuth-style
 * pruning by monotonicity of the best split, the open question of Traff17 §7. The split
 * of a range [i..j] — the boundary k between the root's last child and the rest — is
 * searched only in the window [K(i, j−1) .. K(i+1, j)] of the neighbouring ranges' splits
 * (plus the two one-child cases), which makes the table O(p²) amortized instead of O(p³).
 *
 * The monotonicity does NOT hold in general (docs/optimal-dp.md has counterexamples, the
 * smallest with p = 4, and the measured error), so the result may be slower than the
 * optimum; it is still a valid ordered tree and its reported time is its exact evaluated
 * time. Exact (symmetric) rule only; best root and fixed root.
 */
import { CHOICE, triangleSize, triIndex, type AnyRootTables, type ChoiceTable, type DpInput, type FixedRootTables } from './kernel.js';

function newChoice(p: number, n: number): ChoiceTable {
  return p <= 32767 ? new Int16Array(n) : new Int32Array(n);
}

/** Split boundary k of a stored choice code of range [i..j]. */
function splitOf(code: number, i: number): number {
  return code > 0 ? i + code - 1 : i - code - 1;
}

interface Cell {
  val: number;
  code: number;
}

/**
 * Best candidate of range [i..j] among: root `i` with one child (when allowed), L(k) for k
 * in [lLo..lHi], R(k) for k in [rLo..rHi], root `j` with one child (when allowed); tie order
 * as in the exact kernels. `restL(k)` is the rest of L(k) (range [k+1..j]), `restR(k)` the
 * rest of R(k) (range [i..k]), `childL(k)` = Cs[i][k], `childR(k)` = Cs[k+1][j].
 */
function bestCell(
  input: DpInput,
  i: number,
  j: number,
  vb: number,
  lLo: number,
  lHi: number,
  childL: (k: number) => number,
  restL: (k: number) => number,
  rLo: number,
  rHi: number,
  restR: (k: number) => number,
  childR: (k: number) => number,
  va: number,
  out: Cell,
): void {
  const { P, alpha, beta } = input;
  let bestL = Infinity;
  let kL = -1;
  for (let k = lLo; k <= lHi; k++) {
    const s = P[k + 1] - P[i];
    const v = Math.max(childL(k), restL(k)) + (s > 0 ? alpha + beta * s : 0);
    if (v < bestL) {
      bestL = v;
      kL = k;
    }
  }
  let bestR = Infinity;
  let kR = -1;
  for (let k = rLo; k <= rHi; k++) {
    const s = P[j + 1] - P[k + 1];
    const v = Math.max(restR(k), childR(k)) + (s > 0 ? alpha + beta * s : 0);
    if (v < bestR) {
      bestR = v;
      kR = k;
    }
  }
  if (vb <= bestL && vb <= bestR && vb <= va) {
    out.val = vb;
    out.code = CHOICE.R;
  } else if (bestL <= bestR && bestL <= va) {
    out.val = bestL;
    out.code = -(kL - i + 1);
  } else if (bestR <= va) {
    out.val = bestR;
    out.code = kR - i + 1;
  } else {
    out.val = va;
    out.code = -(j - i);
  }
}

/** Cs over ranges [i..j] with lo ≤ i ≤ j ≤ hi by the window heuristic (column j, rows descending). */
function windowColumn(input: DpInput, cs: Float64Array, choice: ChoiceTable, j: number, lo: number, cell: Cell): void {
  const { p, m, P, alpha, beta, gamma, leaf } = input;
  const at = (a: number, b: number): number => cs[triIndex(p, a, b)];
  for (let i = j - 1; i >= lo; i--) {
    const idx = triIndex(p, i, j);
    let s = P[j + 1] - P[i + 1];
    const vb = Math.max(gamma * m[i], at(i + 1, j)) + (s > 0 ? alpha + beta * s : 0);
    s = P[j] - P[i];
    const va = at(i, j - 1) + (s > 0 ? alpha + beta * s : 0) + gamma * m[j];
    let kLo = i;
    let kHi = j - 1;
    if (j - i >= 2) {
      const a = splitOf(choice[triIndex(p, i, j - 1)], i);
      const b = splitOf(choice[triIndex(p, i + 1, j)], i + 1);
      kLo = Math.min(a, b);
      kHi = Math.max(a, b);
    }
    bestCell(
      input,
      i,
      j,
      vb,
      kLo,
      Math.min(kHi, j - 2),
      (k) => (k === i ? leaf[i] : at(i, k)),
      (k) => at(k + 1, j),
      Math.max(kLo, i + 1),
      kHi,
      (k) => at(i, k),
      (k) => at(k + 1, j),
      va,
      cell,
    );
    cs[idx] = cell.val;
    choice[idx] = cell.code;
  }
}

/** Best-root tables by the window heuristic (exact rule). */
export function monotoneAnyRootTables(input: DpInput): AnyRootTables {
  const { p, leaf } = input;
  const n = triangleSize(p);
  const cs = new Float64Array(n);
  const choice = newChoice(p, n);
  const cell: Cell = { val: 0, code: 0 };
  for (let j = 0; j < p; j++) {
    cs[triIndex(p, j, j)] = leaf[j];
    windowColumn(input, cs, choice, j, 0, cell);
  }
  return { cs, choice, nChoice: undefined };
}

/** Fixed-root tables by the window heuristic (side triangles and F both windowed). */
export function monotoneFixedRootTables(input: DpInput, r: number): FixedRootTables {
  const { p, m, P, alpha, beta, gamma, leaf } = input;
  const n = triangleSize(p);
  const cs = new Float64Array(n);
  const choice = newChoice(p, n);
  const w = p - r;
  const f = new Float64Array((r + 1) * w);
  const fChoice = newChoice(p, (r + 1) * w);
  const cell: Cell = { val: 0, code: 0 };
  const at = (a: number, b: number): number => cs[triIndex(p, a, b)];
  const fi = (a: number, b: number): number => a * w + (b - r);
  for (let j = 0; j < p; j++) {
    cs[triIndex(p, j, j)] = leaf[j];
    if (j !== r) windowColumn(input, cs, choice, j, j < r ? 0 : r + 1, cell);
    if (j < r) continue;
    for (let i = r; i >= 0; i--) {
      if (i === r && j === r) {
        f[fi(r, r)] = leaf[r];
        continue;
      }
      let vb = Infinity;
      if (i === r) {
        const s = P[j + 1] - P[r + 1];
        vb = Math.max(gamma * m[r], at(r + 1, j)) + (s > 0 ? alpha + beta * s : 0);
      }
      let va = Infinity;
      if (j === r) {
        const s = P[r] - P[i];
        va = at(i, r - 1) + (s > 0 ? alpha + beta * s : 0) + gamma * m[r];
      }
      let kLo = i;
      let kHi = j - 1;
      if (j - 1 >= r && i + 1 <= r && j - i >= 2) {
        const a = splitOf(fChoice[fi(i, j - 1)], i);
        const b = splitOf(fChoice[fi(i + 1, j)], i + 1);
        kLo = Math.min(a, b);
        kHi = Math.max(a, b);
      }
      bestCell(
        input,
        i,
        j,
        vb,
        Math.max(kLo, i),
        Math.min(kHi, r - 1, j - 2),
        (k) => (k === i ? leaf[i] : at(i, k)),
        (k) => f[fi(k + 1, j)],
        Math.max(kLo, r, i + 1),
        Math.min(kHi, j - 1),
        (k) => f[fi(i, k)],
        (k) => at(k + 1, j),
        va,
        cell,
      );
      f[fi(i, j)] = cell.val;
      fChoice[fi(i, j)] = cell.code;
    }
  }
  return { root: r, cs, choice, nChoice: undefined, f, fChoice };
}
