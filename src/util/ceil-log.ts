/**
 * Integer logarithms rounded up: the round counts of doubling (binomial, hypercube) and
 * (k+1)-ary fan-in schemes. Exact integer arithmetic, no floating-point log.
 */

/** ⌈log_base p⌉ (0 for p ≤ 1; base ≥ 2): the smallest r with base^r ≥ p. O(log p). */
export function ceilLog(p: number, base: number): number {
  let r = 0;
  for (let w = 1; w < p; w *= base) r++;
  return r;
}

/** ⌈log₂ p⌉ (0 for p ≤ 1). */
export function ceilLog2(p: number): number {
  return ceilLog(p, 2);
}
