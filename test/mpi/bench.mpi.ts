/**
 * `vcoll bench --transport mpi` (Traff18 §5's method): one mpirun per group of cases, the MPI library's own
 * collectives as an algorithm (mpi-native) and as the guideline references, the model fitted
 * to MPI (predictions in seconds), every execution verified.
 */
import { describe, expect, it } from 'vitest';
import { BENCH_DEFAULTS } from '../../src/harness/bench-defaults.js';
import { runBench } from '../../src/harness/harness.js';

describe('vcoll bench over MPI', () => {
  it.each([2, 3])('p = %i: adaptive and mpi-native against MPI_Gather / MPI_Allreduce references, calibrated, verified', async (p) => {
    const r = await runBench({
      ...BENCH_DEFAULTS,
      transport: 'mpi',
      algorithms: ['adaptive', 'mpi-native'],
      dists: ['same', 'spikes'],
      bs: [1, 1000],
      ps: [p],
      reps: 4,
      warmup: 1,
      references: 'mpi-native',
    });
    expect(r.timeUnit).toBe('s');
    expect(r.calibration?.alpha).toBeGreaterThan(0);
    expect(r.rows.every((x) => x.verified && x.times.length === 4 && x.times.every((t) => t > 0))).toBe(true);
    const names = new Set(r.rows.map((x) => x.name));
    expect([...names].sort()).toEqual(['MPI_Allreduce + MPI_Gather(p·max)', 'MPI_Allreduce + MPI_Scatter(p·max)', 'MPI_Gather(m)', 'MPI_Scatter(m)', 'adaptive', 'mpi-native'].sort());
    expect(r.rows.filter((x) => x.kind === 'algorithm').every((x) => x.predicted !== undefined && x.predicted > 0)).toBe(true);
    // GL2 for every algorithm row, GL1 on `same`.
    expect(r.verdicts).toHaveLength(2 * 2 * 2 * 2 + 2 * 2 * 2);
  });
});
