import { describe, expect, it } from 'vitest';
import type { DistributionName } from '../src/workloads/distributions.js';
import { evaluateGuidelines } from '../src/harness/guidelines.js';
import type { BenchRow, RowKind } from '../src/harness/results.js';
import { sampleStats } from '../src/harness/stats.js';
import { InvalidArgumentError } from '../src/errors.js';
import type { VOperation } from '../src/run/spec.js';
import { invalidField } from './helpers/errors.js';

interface RowSpec {
  kind: RowKind;
  name: string;
  times: number[];
  op?: VOperation;
  dist?: DistributionName;
  b?: number;
  p?: number;
  algorithm?: string;
  verified?: boolean;
}

function row(s: RowSpec): BenchRow {
  return {
    op: s.op ?? 'gatherv',
    kind: s.kind,
    name: s.name,
    algorithm: s.algorithm ?? (s.kind === 'algorithm' ? s.name : 'vcoll'),
    dist: s.dist ?? 'same',
    b: s.b ?? 100,
    p: s.p ?? 8,
    root: 4,
    size: 800,
    maxBlock: 100,
    verified: s.verified ?? true,
    mismatches: [],
    times: s.times,
    stats: sampleStats(s.times),
    messages: 7,
    bytes: 2800,
  };
}

const fill = (n: number, v: number): number[] => new Array(n).fill(v);
/** 1, 2, …, n scaled: distinct values. */
const ramp = (n: number, base: number, step: number): number[] => Array.from({ length: n }, (_, i) => base + i * step);

describe('evaluateGuidelines', () => {
  it('GL2 violated: the algorithm is slower than allreduce + padded gather', () => {
    // alg 30 × 2.0 vs mock-up 30 × 1.0: U = 900, p ≈ 8.4e-15 (constant samples, see stats.test.ts)
    const rows = [
      row({ kind: 'algorithm', name: 'linear', times: fill(30, 2), dist: 'random' }),
      row({ kind: 'gl2', name: 'allreduce + gather(p·max)', times: fill(30, 1), dist: 'random' }),
    ];
    const v = evaluateGuidelines(rows);
    expect(v).toHaveLength(1);
    expect(v[0]).toEqual({
      guideline: 'GL2',
      op: 'gatherv',
      algorithm: 'linear',
      dist: 'random',
      b: 100,
      p: 8,
      lhs: 'linear',
      rhs: 'allreduce + gather(p·max)',
      lhsMedian: 2,
      rhsMedian: 1,
      ratio: 2,
      u: 900,
      pValue: v[0].pValue,
      alpha: 0.05,
      verdict: 'violated',
    });
    expect(v[0].pValue).toBeLessThan(1e-13);
  });

  it('GL2 held: the algorithm is faster, or indistinguishable', () => {
    const faster = evaluateGuidelines([
      row({ kind: 'algorithm', name: 'binomial', times: ramp(20, 1, 0.01), dist: 'spikes' }),
      row({ kind: 'gl2', name: 'mock', times: ramp(20, 2, 0.01), dist: 'spikes' }),
    ]);
    expect(faster).toHaveLength(1);
    expect(faster[0].verdict).toBe('held');
    expect(faster[0].u).toBe(0);
    expect(faster[0].pValue).toBeGreaterThan(0.99);
    expect(faster[0].ratio).toBeCloseTo(1.095 / 2.095, 12);

    // identical constant samples: every value tied, p = 1, ratio 1
    const tied = evaluateGuidelines([
      row({ kind: 'algorithm', name: 'binomial', times: fill(10, 3), dist: 'spikes' }),
      row({ kind: 'gl2', name: 'mock', times: fill(10, 3), dist: 'spikes' }),
    ]);
    expect(tied[0]).toMatchObject({ verdict: 'held', pValue: 1, u: 50, ratio: 1 });
  });

  it('the verdict follows alpha: p = 0.0404 is violated at 0.05, held at 0.01', () => {
    // lhs [4,5,6] vs rhs [1,2,3]: U = 9, p = 0.040428 (hand-computed in stats.test.ts)
    const rows = [
      row({ kind: 'gl2', name: 'mock', times: [1, 2, 3], dist: 'bucket' }),
      row({ kind: 'algorithm', name: 'binary', times: [4, 5, 6], dist: 'bucket' }),
    ];
    const at5 = evaluateGuidelines(rows, 0.05);
    expect(at5[0]).toMatchObject({ guideline: 'GL2', u: 9, verdict: 'violated', alpha: 0.05 });
    expect(at5[0].pValue).toBeCloseTo(0.04042779918502612, 6);
    expect(evaluateGuidelines(rows, 0.01)[0]).toMatchObject({ verdict: 'held', alpha: 0.01 });
  });

  it("GL1 only on 'same' blocks, before GL2; sides: gl1 row left, algorithm right", () => {
    const same = { dist: 'same' as const };
    const rnd = { dist: 'random' as const };
    const rows = [
      row({ kind: 'algorithm', name: 'linear', times: fill(30, 1), ...same }),
      row({ kind: 'gl1', name: 'gather(m)', times: fill(30, 2), ...same }), // regular slower: GL1 violated
      row({ kind: 'gl2', name: 'mock', times: fill(30, 3), ...same }), // GL2 held
      row({ kind: 'algorithm', name: 'linear', times: fill(30, 1), ...rnd }),
      row({ kind: 'gl1', name: 'gather(m)', times: fill(30, 2), ...rnd }), // not 'same': no GL1
      row({ kind: 'gl2', name: 'mock', times: fill(30, 3), ...rnd }),
    ];
    const v = evaluateGuidelines(rows);
    expect(v.map((x) => [x.guideline, x.dist, x.verdict])).toEqual([
      ['GL1', 'same', 'violated'],
      ['GL2', 'same', 'held'],
      ['GL2', 'random', 'held'],
    ]);
    expect(v[0]).toMatchObject({ lhs: 'gather(m)', rhs: 'linear', lhsMedian: 2, rhsMedian: 1, ratio: 2, u: 900 });
    expect(v[1]).toMatchObject({ lhs: 'linear', rhs: 'mock', lhsMedian: 1, rhsMedian: 3, u: 0 });
    expect(v[1].ratio).toBeCloseTo(1 / 3, 12);
  });

  it('GL1 held when the regular operation is not slower', () => {
    const v = evaluateGuidelines([
      row({ kind: 'gl1', name: 'scatter(m)', times: ramp(25, 1, 0.001), op: 'scatterv' }),
      row({ kind: 'algorithm', name: 'binomial', times: ramp(25, 1.5, 0.001), op: 'scatterv' }),
    ]);
    expect(v).toHaveLength(1);
    expect(v[0]).toMatchObject({ guideline: 'GL1', op: 'scatterv', verdict: 'held', u: 0 });
  });

  it('one verdict per algorithm row, in row order; cases are (op, dist, b, p)', () => {
    const rows = [
      row({ kind: 'algorithm', name: 'a1', times: fill(5, 1), b: 10 }),
      row({ kind: 'algorithm', name: 'a2', times: fill(5, 9), b: 10 }),
      row({ kind: 'gl2', name: 'mock b=10', times: fill(5, 5), b: 10 }),
      row({ kind: 'algorithm', name: 'a1', times: fill(5, 1), b: 20 }), // no reference of b = 20
      row({ kind: 'algorithm', name: 'a1', times: fill(5, 1), b: 10, p: 16 }), // nor of p = 16
      row({ kind: 'algorithm', name: 'a1', times: fill(5, 1), b: 10, op: 'scatterv' }), // nor of scatterv
    ];
    const v = evaluateGuidelines(rows);
    expect(v.map((x) => [x.guideline, x.algorithm, x.b, x.rhs, x.verdict])).toEqual([
      ['GL2', 'a1', 10, 'mock b=10', 'held'],
      ['GL2', 'a2', 10, 'mock b=10', 'violated'],
    ]);
  });

  it('missing reference rows give no verdicts', () => {
    expect(evaluateGuidelines([])).toEqual([]);
    // algorithms only (references: 'none')
    expect(
      evaluateGuidelines([row({ kind: 'algorithm', name: 'linear', times: [1, 2] }), row({ kind: 'algorithm', name: 'binomial', times: [3, 4] })]),
    ).toEqual([]);
    // 'same' with only a gl2 row: GL2 only; with only a gl1 row: GL1 only
    const onlyGl2 = evaluateGuidelines([row({ kind: 'algorithm', name: 'x', times: [1, 2] }), row({ kind: 'gl2', name: 'm', times: [1, 2] })]);
    expect(onlyGl2.map((x) => x.guideline)).toEqual(['GL2']);
    const onlyGl1 = evaluateGuidelines([row({ kind: 'algorithm', name: 'x', times: [1, 2] }), row({ kind: 'gl1', name: 'g', times: [1, 2] })]);
    expect(onlyGl1.map((x) => x.guideline)).toEqual(['GL1']);
    // reference rows without an algorithm row
    expect(evaluateGuidelines([row({ kind: 'gl1', name: 'g', times: [1] }), row({ kind: 'gl2', name: 'm', times: [1] })])).toEqual([]);
  });

  it('judges unverified rows too', () => {
    const v = evaluateGuidelines([
      row({ kind: 'algorithm', name: 'broken', times: fill(30, 2), verified: false, dist: 'random' }),
      row({ kind: 'gl2', name: 'mock', times: fill(30, 1), dist: 'random' }),
    ]);
    expect(v).toHaveLength(1);
    expect(v[0].verdict).toBe('violated');
  });

  it('ratio with a zero right median: Infinity when the left is positive, else 1', () => {
    const zeroRhs = evaluateGuidelines([
      row({ kind: 'algorithm', name: 'x', times: [1, 1], dist: 'random' }),
      row({ kind: 'gl2', name: 'm', times: [0, 0], dist: 'random' }),
    ]);
    expect(zeroRhs[0].ratio).toBe(Infinity);
    const bothZero = evaluateGuidelines([
      row({ kind: 'algorithm', name: 'x', times: [0, 0], dist: 'random' }),
      row({ kind: 'gl2', name: 'm', times: [0, 0], dist: 'random' }),
    ]);
    expect(bothZero[0].ratio).toBe(1);
  });

  it('validates alpha', () => {
    const rows = [row({ kind: 'algorithm', name: 'x', times: [1] }), row({ kind: 'gl2', name: 'm', times: [1] })];
    for (const bad of [0, 1, -0.1, 1.5, Number.NaN, Infinity]) {
      expect(invalidField(() => evaluateGuidelines(rows, bad))).toBe('alpha');
    }
    expect(evaluateGuidelines(rows, 0.5)).toHaveLength(1);
  });

  it('names the row whose times cannot be tested', () => {
    const ok = row({ kind: 'algorithm', name: 'x', times: [1, 2], dist: 'random' });
    const empty: BenchRow = { ...row({ kind: 'gl2', name: 'm', times: [1], dist: 'random' }), times: [] };
    expect(invalidField(() => evaluateGuidelines([ok, empty]))).toBe('rows[1].times');
    const nan: BenchRow = { ...ok, times: [1, Number.NaN] };
    const ref = row({ kind: 'gl2', name: 'm', times: [1], dist: 'random' });
    try {
      evaluateGuidelines([ref, nan]);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).field).toBe('rows[1].times[1]');
    }
  });
});
