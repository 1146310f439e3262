/**
 * Statistics of benchmark samples (Traff18 §5's method): the summary of one sample of run times
 * (`SampleStats` of src/harness/results.ts) and the one-sided Wilcoxon rank-sum /
 * Mann–Whitney U test the guideline checks use (src/harness/guidelines.ts).
 *
 * Method (Traff18 §5; checked as PGChecker does): Hunold & Carpen-Amarie's PGChecker judges
 * a performance guideline "left ≤ right" violated when a Wilcoxon rank-sum test on the two
 * run-time distributions finds the left side significantly slower. The test here is the
 * large-sample form of that test (as R's `wilcox.test(x, y, alternative = "greater",
 * exact = FALSE, correct = TRUE)` and SciPy's `mannwhitneyu(..., method = "asymptotic")`):
 * normal approximation, variance corrected for ties, continuity correction 0.5.
 *
 * Library: `simple-statistics` (7.12). Its `quantileSorted` interpolates linearly between
 * order statistics at index (n − 1)·p — R's type 7 (also numpy's default), which is exactly
 * what `SampleStats` asks for; older releases of the library (≤ 7.8) used a different,
 * non-interpolating rule, so the tests pin the type-7 values. Φ comes from its
 * `errorFunction` (Numerical Recipes' erfc approximation, relative error < 1.2·10⁻⁷), not
 * from `cumulativeStdNormalProbability`, which is a lookup table in steps of 0.01 rounded
 * to 4 digits and saturating at z = 3.09 (p-values would never go below 0.001).
 */
import { errorFunction, mean, quantileSorted, sampleStandardDeviation } from 'simple-statistics';
import { InvalidArgumentError } from '../errors.js';
import type { SampleStats } from './results.js';

/** Throws unless `xs` is a non-empty array of finite numbers (`field` names it in the error). */
function checkSample(xs: readonly number[], field: string): void {
  if (xs.length === 0) throw new InvalidArgumentError(field, 'the sample is empty');
  for (let i = 0; i < xs.length; i++) {
    const v = xs[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new InvalidArgumentError(`${field}[${i}]`, `expected a finite number, got ${String(v)}`);
    }
  }
}

const ascending = (a: number, b: number): number => a - b;

/**
 * Summary of one sample: n, min, max, mean, median and quartiles (R type 7: linear
 * interpolation between the order statistics at index (n − 1)·q), sample standard deviation
 * (n − 1 in the denominator; 0 for n = 1, and exactly 0 when every value is the same).
 * Throws InvalidArgumentError('xs') on an empty sample, ('xs[i]') on a non-finite value.
 */
export function sampleStats(xs: readonly number[]): SampleStats {
  checkSample(xs, 'xs');
  const sorted = [...xs].sort(ascending);
  const n = sorted.length;
  const min = sorted[0];
  const max = sorted[n - 1];
  // A constant sample: the library's two-pass variance can leave rounding noise (its mean of
  // n copies of 0.1 is not exactly 0.1); the exact answer is 0.
  const stddev = n === 1 || min === max ? 0 : sampleStandardDeviation(sorted);
  return {
    n,
    min,
    max,
    mean: min === max ? min : mean(sorted),
    median: quantileSorted(sorted, 0.5),
    q1: quantileSorted(sorted, 0.25),
    q3: quantileSorted(sorted, 0.75),
    stddev,
  };
}

/** Result of the one-sided Mann–Whitney U test that x is stochastically greater than y. */
export interface MannWhitneyResult {
  /** U of x: the pairs (i, j) with x_i > y_j, plus half of those with x_i = y_j (0 ≤ u ≤ n·m). */
  readonly u: number;
  /**
   * (u − n·m/2 − 0.5) / σ_U, σ_U tie-corrected; ±Infinity when σ_U = 0 (every value tied,
   * see `mannWhitney`).
   */
  readonly z: number;
  /** P(Z ≥ z) for a standard normal Z: the one-sided p-value of "x is greater than y". */
  readonly pGreater: number;
}

/** P(Z ≥ z) for a standard normal Z. */
function upperTail(z: number): number {
  if (z === Infinity) return 0;
  if (z === -Infinity) return 1;
  // errorFunction(t) = 1 − erfc(|t|) for t ≥ 0: for large z the difference loses relative
  // precision but stays within ~1e-16 absolutely, which is all a p-value needs.
  return Math.min(1, Math.max(0, 0.5 * (1 - errorFunction(z / Math.SQRT2))));
}

/**
 * One-sided Wilcoxon rank-sum / Mann–Whitney U test of "x is stochastically greater than y"
 * (H₁: P(X > Y) + ½·P(X = Y) > ½), by the normal approximation:
 *
 *   U   = #{(i, j): x_i > y_j} + ½·#{(i, j): x_i = y_j}          (= R₁ − n(n+1)/2)
 *   μ_U = n·m/2
 *   σ²_U = n·m/12 · ((N + 1) − Σ_k (t_k³ − t_k) / (N(N − 1))),    N = n + m,
 *          t_k the sizes of the groups of tied values (over both samples)
 *   z   = (U − μ_U − ½) / σ_U                                     (continuity correction)
 *   pGreater = P(Z ≥ z) = 1 − Φ(z)
 *
 * Ties: values tied across or within the samples count half (midranks) and shrink σ_U. Two
 * constant samples (a deterministic simulator repeats the same time every repetition) are
 * therefore decided by the tie-corrected variance, e.g. x = 3 × [5], y = 3 × [3] gives U = 9,
 * σ_U² = 4.05, z = 1.988, p = 0.023; with 30 repetitions each p ≈ 10⁻¹⁴.
 *
 * Zero variance: σ_U = 0 exactly when every one of the N values is the same (then
 * U = n·m/2 necessarily: no evidence either way). The continuity-corrected z is then
 * (U − μ_U − ½)/0: −Infinity with pGreater = 1 when U ≤ μ_U, +Infinity with pGreater = 0
 * otherwise (kept for completeness; it cannot happen with exact arithmetic). So identical
 * samples never look "significantly greater".
 *
 * Cost: O(n log n + m log m) (both samples sorted, one merge over the distinct values);
 * counts stay integers (exact in doubles far beyond thousands of values).
 * Throws InvalidArgumentError ('x', 'y', or 'x[i]' / 'y[j]') on an empty sample or a
 * non-finite value.
 */
export function mannWhitney(x: readonly number[], y: readonly number[]): MannWhitneyResult {
  checkSample(x, 'x');
  checkSample(y, 'y');
  const xs = [...x].sort(ascending);
  const ys = [...y].sort(ascending);
  const n = xs.length;
  const m = ys.length;
  const total = n + m;

  // Merge over the distinct values v, ascending: the x's equal to v beat every y below v and
  // tie with the y's equal to v.
  let twiceU = 0; // 2U: an integer
  let tieSum = 0; // Σ (t³ − t)
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const v = j >= m || (i < n && xs[i] <= ys[j]) ? xs[i] : ys[j];
    let cx = 0;
    let cy = 0;
    while (i < n && xs[i] === v) {
      i++;
      cx++;
    }
    while (j < m && ys[j] === v) {
      j++;
      cy++;
    }
    // j − cy y's lie below v.
    twiceU += cx * (2 * (j - cy) + cy);
    const t = cx + cy;
    tieSum += t * t * t - t;
  }
  const u = twiceU / 2;
  const meanU = (n * m) / 2;
  const variance = ((n * m) / 12) * (total + 1 - tieSum / (total * (total - 1)));
  if (!(variance > 0)) {
    return u <= meanU ? { u, z: -Infinity, pGreater: 1 } : { u, z: Infinity, pGreater: 0 };
  }
  const z = (u - meanU - 0.5) / Math.sqrt(variance);
  return { u, z, pGreater: upperTail(z) };
}
