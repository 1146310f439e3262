/**
 * Near-equal cuts: `total` units cut into `n` consecutive parts whose sizes differ by at most
 * one (the first total mod n parts get the extra unit). Kang19's segments (inter/plan.ts) and
 * the pipelined ring's chunks (allgather/pipelined-ring.ts) use them. O(1) each.
 */

/** Size of part `i` when `total` is cut into `n` near-equal parts (the first total mod n get one more). */
export function partSize(total: number, n: number, i: number): number {
  const base = Math.floor(total / n);
  return i < total % n ? base + 1 : base;
}

/** Start of part `i` (0 ≤ i ≤ n; part n starts at `total`) of the near-equal cut of `total` into `n`. */
export function partStart(total: number, n: number, i: number): number {
  const base = Math.floor(total / n);
  const r = total % n;
  return i * base + Math.min(i, r);
}

/** The part holding index x (0 ≤ x < total) of the near-equal cut of `total` into `n`. */
export function partOf(total: number, n: number, x: number): number {
  const base = Math.floor(total / n);
  const r = total % n;
  const big = r * (base + 1);
  return x < big ? Math.floor(x / (base + 1)) : r + Math.floor((x - big) / base);
}
