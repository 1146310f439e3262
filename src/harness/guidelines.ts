/**
 * Verdicts on the performance guidelines of irregular collectives (Traff18 §4) from the
 * rows of a bench run (src/harness/results.ts):
 *
 *   GL1  gather(m) ≤ gatherv(m)                      (scatter(m) ≤ scatterv(m)), on `same` blocks
 *   GL2  gatherv(m) ≤ allreduce(1) + gather(p·max m_i)   (likewise for scatterv)
 *
 * judged as Hunold & Carpen-Amarie's PGChecker does: a guideline "left ≤ right" is violated
 * on a case when a one-sided Wilcoxon rank-sum (Mann–Whitney U) test on the two run-time
 * distributions finds the left side's times significantly larger at level α
 * (src/harness/stats.ts: normal approximation, tie- and continuity-corrected). Not violated is
 * reported as 'held' — i.e. "no significant evidence of a violation", not a proof of ≤.
 *
 * Pure: no printing (the CLI formats the verdicts).
 */
import { InvalidArgumentError } from '../errors.js';
import type { BenchRow, Guideline, GuidelineVerdict } from './results.js';
import { mannWhitney } from './stats.js';

/** The case a row belongs to: (op, dist, b, p). */
function caseKey(row: BenchRow): string {
  return JSON.stringify([row.op, row.dist, row.b, row.p]);
}

interface References {
  gl1?: number;
  gl2?: number;
}

/**
 * One verdict per guideline and algorithm row, in the order of the rows, GL1 before GL2 for
 * the same algorithm row:
 *   GL1 (only on dist 'same'): left the case's 'gl1' row (the regular operation), right the
 *       algorithm row; violated when the regular operation is significantly slower.
 *   GL2: left the algorithm row, right the case's 'gl2' row (allreduce + padded regular
 *       operation); violated when the algorithm is significantly slower than the mock-up.
 * A case is (op, dist, b, p); a guideline whose reference row the case lacks gets no verdict
 * (no reference rows at all — `references: 'none'` — gives no verdicts). Should a case hold
 * more than one reference row of a kind, the first one counts.
 *
 * Rows that failed verification (`verified === false`) are judged like the others: their
 * times are still measurements, and the caller reports verification separately.
 *
 * Throws InvalidArgumentError('alpha') unless 0 < alpha < 1, and
 * InvalidArgumentError('rows[i].times…') when a row the tests need has no times or a
 * non-finite one.
 */
export function evaluateGuidelines(rows: readonly BenchRow[], alpha = 0.05): GuidelineVerdict[] {
  if (typeof alpha !== 'number' || !(alpha > 0 && alpha < 1)) {
    throw new InvalidArgumentError('alpha', `expected a significance level in (0, 1), got ${String(alpha)}`);
  }

  const refs = new Map<string, References>();
  rows.forEach((row, index) => {
    if (row.kind === 'algorithm') return;
    const key = caseKey(row);
    const entry = refs.get(key) ?? {};
    if (entry[row.kind] === undefined) entry[row.kind] = index;
    refs.set(key, entry);
  });

  const verdicts: GuidelineVerdict[] = [];
  rows.forEach((row, index) => {
    if (row.kind !== 'algorithm') return;
    const entry = refs.get(caseKey(row));
    if (entry === undefined) return;
    if (row.dist === 'same' && entry.gl1 !== undefined) {
      verdicts.push(judge('GL1', rows, entry.gl1, index, row, alpha));
    }
    if (entry.gl2 !== undefined) {
      verdicts.push(judge('GL2', rows, index, entry.gl2, row, alpha));
    }
  });
  return verdicts;
}

/** The verdict of "rows[lhs] ≤ rows[rhs]" for the algorithm row `alg`. */
function judge(
  guideline: Guideline,
  rows: readonly BenchRow[],
  lhsIndex: number,
  rhsIndex: number,
  alg: BenchRow,
  alpha: number,
): GuidelineVerdict {
  const lhs = rows[lhsIndex];
  const rhs = rows[rhsIndex];
  let test: ReturnType<typeof mannWhitney>;
  try {
    test = mannWhitney(lhs.times, rhs.times);
  } catch (e) {
    if (!(e instanceof InvalidArgumentError)) throw e;
    // Name the row: the test's 'x…' is the left row's times, 'y…' the right one's.
    const index = e.field.startsWith('x') ? lhsIndex : rhsIndex;
    throw new InvalidArgumentError(`rows[${index}].times${e.field.slice(1)}`, e.detail, { cause: e });
  }
  const lhsMedian = lhs.stats.median;
  const rhsMedian = rhs.stats.median;
  const ratio = rhsMedian === 0 ? (lhsMedian > 0 ? Infinity : 1) : lhsMedian / rhsMedian;
  return {
    guideline,
    op: alg.op,
    algorithm: alg.algorithm,
    dist: alg.dist,
    b: alg.b,
    p: alg.p,
    lhs: lhs.name,
    rhs: rhs.name,
    lhsMedian,
    rhsMedian,
    ratio,
    u: test.u,
    pValue: test.pGreater,
    alpha,
    verdict: test.pGreater < alpha ? 'violated' : 'held',
  };
}
