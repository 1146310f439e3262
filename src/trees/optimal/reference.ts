/**
 * A straightforward implementation of the homogeneous optimal-tree recurrences of
 * docs/MODEL.md (Traff17 Theorem 2), written for clarity, not speed: nested arrays, one
 * candidate at a time, ranges by increasing length. The reference the optimized kernels
 * (src/trees/optimal/kernel.ts) are tested and benchmarked against (test/optimal*.test.ts,
 * tools/dp.ts). O(p³) time, O(p²) space.
 *
 * Candidates of a range [i..j] are tried in the tie order of docs/MODEL.md — root i with one
 * child, then L(k) (root right of k, receives [i..k] last) by ascending k, then R(k) (root
 * left of k+1, receives [k+1..j] last) by ascending k, then root j with one child — and a
 * later candidate replaces the best only when strictly smaller.
 */
export interface NaiveParams {
  alpha: number;
  beta: number;
  gamma: number;
  copyAll?: boolean;
}

export interface NaiveResult {
  time: number;
  root: number;
}

export function naiveOptimal(
  sizes: readonly number[],
  prm: NaiveParams,
  opts: { mode?: 'exact' | 'paper'; root?: number; paperSubtreesForFixedRoot?: boolean } = {},
): NaiveResult {
  const p = sizes.length;
  const { alpha, beta, gamma } = prm;
  // With a fixed root both modes use the symmetric rule (docs/MODEL.md, Conventions); the
  // flag builds F over paper-rule subtrees instead, to show that this does not match.
  const paper = opts.mode === 'paper' && (opts.root === undefined || opts.paperSubtreesForFixedRoot === true);
  const P: number[] = [0];
  for (const x of sizes) P.push(P[P.length - 1] + x);
  const S = (a: number, b: number): number => P[b + 1] - P[a];
  const comm = (s: number): number => (s > 0 ? alpha + beta * s : 0);
  const leaf = (i: number): number => (prm.copyAll ? gamma * sizes[i] : 0);
  // C[i][j]: best over [i..j]; N[i][j]: best with root < j (paper); rootC/rootN: its root
  const C: number[][] = [];
  const N: number[][] = [];
  const rootC: number[][] = [];
  const rootN: number[][] = [];
  for (let i = 0; i < p; i++) {
    C.push(new Array<number>(p).fill(NaN));
    N.push(new Array<number>(p).fill(NaN));
    rootC.push(new Array<number>(p).fill(-1));
    rootN.push(new Array<number>(p).fill(-1));
    C[i][i] = leaf(i);
    rootC[i][i] = i;
  }
  for (let len = 2; len <= p; len++) {
    for (let i = 0; i + len - 1 < p; i++) {
      const j = i + len - 1;
      let best = Math.max(gamma * sizes[i], C[i + 1][j]) + comm(S(i + 1, j));
      let root = i;
      for (let k = i; k <= j - 2; k++) {
        const rest = paper ? N[k + 1][j] : C[k + 1][j];
        const v = Math.max(C[i][k], rest) + comm(S(i, k));
        if (v < best) {
          best = v;
          root = paper ? rootN[k + 1][j] : rootC[k + 1][j];
        }
      }
      for (let k = i + 1; k <= j - 1; k++) {
        const v = Math.max(C[i][k], C[k + 1][j]) + comm(S(k + 1, j));
        if (v < best) {
          best = v;
          root = rootC[i][k];
        }
      }
      N[i][j] = best;
      rootN[i][j] = root;
      const z = C[i][j - 1] + comm(S(i, j - 1)) + gamma * sizes[j];
      if (z < best) {
        best = z;
        root = j;
      }
      C[i][j] = best;
      rootC[i][j] = root;
    }
  }
  if (opts.root === undefined) return { time: C[0][p - 1], root: rootC[0][p - 1] };
  // fixed root r: F over ranges containing r, always communicating with r (symmetric rule)
  const r = opts.root;
  const F: number[][] = [];
  for (let i = 0; i < p; i++) F.push(new Array<number>(p).fill(NaN));
  F[r][r] = leaf(r);
  for (let len = 2; len <= p; len++) {
    for (let i = Math.max(0, r - len + 1); i <= r && i + len - 1 < p; i++) {
      const j = i + len - 1;
      let best = Infinity;
      if (i === r) best = Math.max(gamma * sizes[r], C[r + 1][j]) + comm(S(r + 1, j));
      for (let k = i; k <= Math.min(r - 1, j - 2); k++) {
        const v = Math.max(C[i][k], F[k + 1][j]) + comm(S(i, k));
        if (v < best) best = v;
      }
      for (let k = Math.max(r, i + 1); k <= j - 1; k++) {
        const v = Math.max(F[i][k], C[k + 1][j]) + comm(S(k + 1, j));
        if (v < best) best = v;
      }
      if (j === r) {
        const z = C[i][r - 1] + comm(S(i, r - 1)) + gamma * sizes[r];
        if (z < best) best = z;
      }
      F[i][j] = best;
    }
  }
  return { time: F[0][p - 1], root: r };
}
