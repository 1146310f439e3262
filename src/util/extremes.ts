/**
 * The largest and smallest of many numbers by a loop: `Math.max(...xs)` passes every element
 * as an argument and overflows the stack for arrays of a few hundred thousand (per-rank
 * results of a simulated run at p = 2^17 and more).
 */

/** The largest f(x) over `xs` (−Infinity for none). */
export function maxOf<T>(xs: readonly T[], f: (x: T) => number): number {
  let m = -Infinity;
  for (const x of xs) {
    const v = f(x);
    if (v > m) m = v;
  }
  return m;
}

/** The smallest f(x) over `xs` (Infinity for none). */
export function minOf<T>(xs: readonly T[], f: (x: T) => number): number {
  let m = Infinity;
  for (const x of xs) {
    const v = f(x);
    if (v < m) m = v;
  }
  return m;
}
