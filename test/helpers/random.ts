/** Small seeded random numbers for tests (mulberry32): fast, reproducible, no state shared between tests. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform integer in [lo, hi]. */
export const int = (rnd: () => number, lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));

/**
 * Random gatherv/scatterv counts of p ranks for `algorithm`: two sizes for two-block (its
 * restriction), else 0 (a quarter of them) to 40.
 */
export function variantCounts(rnd: () => number, algorithm: string, p: number): number[] {
  if (algorithm === 'two-block') {
    const small = int(rnd, 0, 4);
    const large = small + int(rnd, 1, 30);
    return Array.from({ length: p }, () => (rnd() < 0.4 ? large : small));
  }
  return Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : int(rnd, 1, 40)));
}
