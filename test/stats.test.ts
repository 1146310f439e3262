import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mannWhitney, sampleStats } from '../src/harness/stats.js';
import { invalidField } from './helpers/errors.js';
import { rng } from './helpers/random.js';

/** U of x by definition: pairs x_i > y_j plus half the ties (O(n·m), independent of the merge). */
function bruteU(x: readonly number[], y: readonly number[]): number {
  let u = 0;
  for (const a of x) for (const b of y) u += a > b ? 1 : a === b ? 0.5 : 0;
  return u;
}

/** Run-time-like sample: base + exponential noise (right-skewed, positive). */
function times(seed: number, n: number, base: number, scale: number): number[] {
  const rnd = rng(seed);
  return Array.from({ length: n }, () => base - scale * Math.log(1 - rnd()));
}

describe('sampleStats', () => {
  it('summarises [1, 2, 3, 4] (R type-7 quartiles, n − 1 stddev)', () => {
    // sorted 1 2 3 4; type 7 index h = (n − 1)·q = 3q:
    //   q1: h = 0.75 → 1 + 0.75·(2 − 1) = 1.75;  median: h = 1.5 → 2.5;  q3: h = 2.25 → 3 + 0.25 = 3.25
    // mean 2.5; Σ(x − 2.5)² = 2.25 + 0.25 + 0.25 + 2.25 = 5; sd = √(5/3) = 1.2909944487358056
    const s = sampleStats([4, 1, 3, 2]);
    expect(s.n).toBe(4);
    expect(s.min).toBe(1);
    expect(s.max).toBe(4);
    expect(s.mean).toBe(2.5);
    expect(s.median).toBe(2.5);
    expect(s.q1).toBeCloseTo(1.75, 12);
    expect(s.q3).toBeCloseTo(3.25, 12);
    expect(s.stddev).toBeCloseTo(1.2909944487358056, 12);
  });

  it("matches R's quantile(type = 7) on a textbook sample, not type 6", () => {
    // R: quantile(c(3,6,7,8,8,9,10,13,15,16,20)) → 25%: 7.5, 50%: 9, 75%: 14
    //   (type 7, n = 11: h = 10q → q1 at h = 2.5: 7 + 0.5·(8 − 7) = 7.5; q3 at h = 7.5: 13 + 0.5·(15 − 13) = 14).
    // Type 6 (h = (n + 1)q − 1) would give q1 = x[2] = 7 and q3 = x[8] = 15.
    const s = sampleStats([20, 3, 6, 16, 7, 8, 8, 15, 9, 10, 13]);
    expect(s.q1).toBeCloseTo(7.5, 12);
    expect(s.median).toBe(9);
    expect(s.q3).toBeCloseTo(14, 12);
    // mean = 115 / 11
    expect(s.mean).toBeCloseTo(115 / 11, 12);
  });

  it('gives stddev 0 for one value and for a constant sample (exactly)', () => {
    expect(sampleStats([7])).toEqual({ n: 1, min: 7, max: 7, mean: 7, median: 7, q1: 7, q3: 7, stddev: 0 });
    const c = sampleStats(new Array(30).fill(0.1));
    expect(c.stddev).toBe(0);
    expect(c.mean).toBe(0.1);
    expect(c.q1).toBe(0.1);
  });

  it('does not modify its input', () => {
    const xs = [3, 1, 2];
    sampleStats(xs);
    expect(xs).toEqual([3, 1, 2]);
  });

  it('rejects an empty sample and non-finite values', () => {
    expect(invalidField(() => sampleStats([]))).toBe('xs');
    expect(invalidField(() => sampleStats([1, Number.NaN]))).toBe('xs[1]');
    expect(invalidField(() => sampleStats([Infinity, 1]))).toBe('xs[0]');
    expect(invalidField(() => sampleStats([1, 2, -Infinity]))).toBe('xs[2]');
  });

  it('orders min ≤ q1 ≤ median ≤ q3 ≤ max, min ≤ mean ≤ max, and agrees with a direct type-7 quantile', () => {
    const value = fc.integer({ min: -1_000_000, max: 1_000_000 }).map((v) => v / 64);
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 60 }), (xs) => {
        const s = sampleStats(xs);
        expect(s.min).toBeLessThanOrEqual(s.q1);
        expect(s.q1).toBeLessThanOrEqual(s.median);
        expect(s.median).toBeLessThanOrEqual(s.q3);
        expect(s.q3).toBeLessThanOrEqual(s.max);
        expect(s.mean).toBeGreaterThanOrEqual(s.min);
        expect(s.mean).toBeLessThanOrEqual(s.max);
        expect(s.stddev).toBeGreaterThanOrEqual(0);
        const sorted = [...xs].sort((a, b) => a - b);
        const q = (p: number): number => {
          const h = (sorted.length - 1) * p;
          const lo = Math.floor(h);
          return lo + 1 < sorted.length ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
        };
        expect(s.q1).toBeCloseTo(q(0.25), 9);
        expect(s.median).toBeCloseTo(q(0.5), 9);
        expect(s.q3).toBeCloseTo(q(0.75), 9);
      }),
      { numRuns: 300 },
    );
  });
});

describe('mannWhitney', () => {
  it('x = [4,5,6] above y = [1,2,3]: U = 9, p = 0.0404', () => {
    // U = 3·3 = 9 (every pair x > y); μ = nm/2 = 4.5; no ties: σ² = nm(N+1)/12 = 9·7/12 = 5.25
    // z = (9 − 4.5 − 0.5)/√5.25 = 1.745743; p = 1 − Φ(z) = ½·erfc(z/√2) = 0.040428
    // (SciPy: mannwhitneyu(x, y, alternative='greater', method='asymptotic') → 0.04042779918502612)
    const r = mannWhitney([4, 5, 6], [1, 2, 3]);
    expect(r.u).toBe(9);
    expect(r.z).toBeCloseTo(4 / Math.sqrt(5.25), 12);
    expect(r.pGreater).toBeCloseTo(0.04042779918502612, 6);
    // the other way round: U = 0, z = (0 − 4.5 − 0.5)/√5.25 = −2.182; p = Φ(2.182) = 0.98545
    const back = mannWhitney([1, 2, 3], [4, 5, 6]);
    expect(back.u).toBe(0);
    expect(back.pGreater).toBeGreaterThan(0.98);
  });

  it('x = [1,2,2], y = [2,3] with ties: U = 1, p = 0.9467', () => {
    // pairs: 1 vs 2, 3 → 0; each 2: vs 2 tie (½), vs 3 → 0 ⇒ U = ½ + ½ = 1
    // N = 5, one tie group of t = 3 (the three 2's): Σ(t³ − t) = 24
    // σ² = nm/12 · ((N+1) − 24/(N(N−1))) = 6/12 · (6 − 24/20) = 2.4
    // z = (1 − 3 − 0.5)/√2.4 = −1.613743; p = Φ(1.613743) = 0.946708 (SciPy: 0.9467084152125562)
    const r = mannWhitney([1, 2, 2], [2, 3]);
    expect(r.u).toBe(1);
    expect(r.z).toBeCloseTo(-2.5 / Math.sqrt(2.4), 12);
    expect(r.pGreater).toBeCloseTo(0.9467084152125562, 6);
    expect(mannWhitney([2, 3], [1, 2, 2]).u).toBe(5); // n·m − 1
  });

  it('x = [1,1,2,3,5,8,13], y = [2,3,4,4,4,6]: U = 19, p = 0.6408', () => {
    // U: 1,1 → 0; 2 → ½ (tie with 2); 3 → 1 + ½; 5 → 5; 8 → 6; 13 → 6 ⇒ 19
    // ties (N = 13): 1×2, 2×2, 3×2, 4×3 ⇒ Σ(t³ − t) = 6 + 6 + 6 + 24 = 42
    // σ² = 42/12 · (14 − 42/156) = 48.057692; z = (19 − 21 − 0.5)/σ = −0.360627
    // p = Φ(0.360627) = 0.640811 (SciPy: 0.6408109459692781)
    const r = mannWhitney([1, 1, 2, 3, 5, 8, 13], [2, 3, 4, 4, 4, 6]);
    expect(r.u).toBe(19);
    expect(r.z).toBeCloseTo(-2.5 / Math.sqrt(3.5 * (14 - 42 / 156)), 12);
    expect(r.pGreater).toBeCloseTo(0.6408109459692781, 6);
  });

  it('constant samples (simulator-like repetitions), x all above y: tiny p via the tie correction', () => {
    // n = m = 3: U = 9; ties 3 and 3 ⇒ Σ = 48; σ² = 9/12 · (7 − 48/30) = 4.05
    // z = (9 − 4.5 − 0.5)/√4.05 = 1.987616; p = 0.023427 (SciPy: 0.02342708880193688)
    const small = mannWhitney([5, 5, 5], [3, 3, 3]);
    expect(small.u).toBe(9);
    expect(small.pGreater).toBeCloseTo(0.02342708880193688, 6);
    // n = m = 30: U = 900; Σ = 2·(27000 − 30) = 53940; σ² = 900/12 · (61 − 53940/3540) = 3432.20
    // z = 449.5/58.585 = 7.6726; p = ½·erfc(z/√2) = 8.43e-15 (SciPy: 8.426490974463215e-15)
    const big = mannWhitney(new Array(30).fill(5), new Array(30).fill(3));
    expect(big.u).toBe(900);
    expect(big.pGreater).toBeGreaterThan(0);
    expect(big.pGreater).toBeLessThan(1e-13);
    expect(big.pGreater / 8.426490974463215e-15).toBeCloseTo(1, 1);
    // the other order: U = 0, p = 1 − 8e-15 ≈ 1 (SciPy: 0.9999999999999927)
    const other = mannWhitney(new Array(30).fill(3), new Array(30).fill(5));
    expect(other.u).toBe(0);
    expect(other.pGreater).toBeGreaterThan(0.999999);
  });

  it('identical constant samples (zero variance): U = nm/2, pGreater = 1 in both orders', () => {
    // every value tied: Σ(t³ − t) = N³ − N ⇒ σ² = nm/12 · ((N+1) − (N+1)) = 0;
    // U = nm/2 = μ, so no evidence: z = (μ − μ − ½)/0 = −∞, p = 1
    const a = mannWhitney(new Array(30).fill(2.5), new Array(20).fill(2.5));
    expect(a).toEqual({ u: 300, z: -Infinity, pGreater: 1 });
    const b = mannWhitney(new Array(20).fill(2.5), new Array(30).fill(2.5));
    expect(b).toEqual({ u: 300, z: -Infinity, pGreater: 1 });
    expect(mannWhitney([1], [1])).toEqual({ u: 0.5, z: -Infinity, pGreater: 1 });
  });

  it('a sample against itself is never significant (p just above ½)', () => {
    const x = times(1, 50, 1, 0.2);
    const r = mannWhitney(x, x);
    // U = nm/2 = 1250; no ties across distinct values beyond the pairs: z = −0.5/σ < 0
    expect(r.u).toBe(1250);
    expect(r.z).toBeLessThan(0);
    expect(r.pGreater).toBeGreaterThan(0.5);
    expect(r.pGreater).toBeLessThan(0.51);
  });

  it('large samples: a big shift is detected, the same distribution is not', () => {
    const y = times(11, 2000, 1, 0.1);
    const shifted = times(12, 2000, 1.1, 0.1); // + one noise scale
    const r = mannWhitney(shifted, y);
    expect(r.u).toBe(bruteU(shifted, y));
    expect(r.pGreater).toBeLessThan(1e-10);
    // reversed: the smaller sample is not "greater"
    expect(mannWhitney(y, shifted).pGreater).toBeGreaterThan(0.999);
    const same = times(13, 2000, 1, 0.1);
    const s = mannWhitney(same, y);
    expect(s.u).toBe(bruteU(same, y));
    expect(s.pGreater).toBeGreaterThan(0.05);
  });

  it('rejects "same distribution" at about the rate α (200 seeded pairs, n = m = 30)', () => {
    let rejected = 0;
    for (let k = 0; k < 200; k++) {
      const x = times(1000 + 2 * k, 30, 1, 0.3).map((v) => Math.round(v * 100) / 100); // rounded: ties
      const y = times(1001 + 2 * k, 30, 1, 0.3).map((v) => Math.round(v * 100) / 100);
      if (mannWhitney(x, y).pGreater < 0.05) rejected++;
    }
    // expected ≈ 10 of 200 (slightly fewer with the continuity correction)
    expect(rejected).toBeGreaterThanOrEqual(2);
    expect(rejected).toBeLessThanOrEqual(20);
  });

  it('is fast on several thousand values', () => {
    const x = times(21, 5000, 1, 0.1);
    const y = times(22, 5000, 1, 0.1);
    const t0 = performance.now();
    for (let k = 0; k < 10; k++) mannWhitney(x, y);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('rejects empty samples and non-finite values', () => {
    expect(invalidField(() => mannWhitney([], [1]))).toBe('x');
    expect(invalidField(() => mannWhitney([1], []))).toBe('y');
    expect(invalidField(() => mannWhitney([1, Number.NaN], [1]))).toBe('x[1]');
    expect(invalidField(() => mannWhitney([1], [2, Infinity]))).toBe('y[1]');
  });

  it('U is the pair count, U(x,y) + U(y,x) = n·m, and the two one-sided p-values sum to 1 up to the continuity correction', () => {
    const sample = fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 25 });
    fc.assert(
      fc.property(sample, sample, (x, y) => {
        const xy = mannWhitney(x, y);
        const yx = mannWhitney(y, x);
        expect(xy.u).toBe(bruteU(x, y));
        expect(xy.u + yx.u).toBe(x.length * y.length);
        expect(xy.pGreater).toBeGreaterThanOrEqual(0);
        expect(xy.pGreater).toBeLessThanOrEqual(1);
        const allTied = [...x, ...y].every((v) => v === x[0]);
        if (allTied) {
          expect(xy.pGreater).toBe(1);
          expect(yx.pGreater).toBe(1);
          return;
        }
        // z_xy = (d − ½)/σ, z_yx = (−d − ½)/σ ⇒ z_xy + z_yx = −1/σ, and
        // p_xy + p_yx − 1 = Φ((d + ½)/σ) − Φ((d − ½)/σ) ∈ [0, φ(0)/σ], φ(0) = 1/√(2π)
        const invSigma = -(xy.z + yx.z);
        expect(invSigma).toBeGreaterThan(0);
        const excess = xy.pGreater + yx.pGreater - 1;
        expect(excess).toBeGreaterThanOrEqual(-1e-6);
        expect(excess).toBeLessThanOrEqual(invSigma / Math.sqrt(2 * Math.PI) + 1e-6);
      }),
      { numRuns: 400 },
    );
  });
});
