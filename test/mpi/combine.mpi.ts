/**
 * Combine operations in C (native/vcoll_mpi_combine.c through MpiEndpoint.bindSchedule): the
 * rank program test/programs/combine-program.ts under mpirun. Every built-in operator on every
 * element type it is defined on (71 pairs), with values that wrap, clamp, overflow and give
 * NaN and ±0: single combines against JavaScript's operators (collectives/basic/ops.ts), and
 * reduce / allreduce / exscan over p = 2 and 3 against the portable executor (JS combines) bit
 * for bit and against the rank-order fold. A spy on the endpoint's schedule executor shows
 * that the built-in calls ran natively (none declined) and that a user function is declined
 * (the portable executor runs it); under VCOLL_MPI_SCHEDULES=0 nothing runs natively.
 */
import { describe, expect, it } from 'vitest';
import { runMpi } from '../../src/transports/mpi/run.js';
import { COMBOS, type CombineArgs, type CombineResult } from '../programs/combine-program.js';

const PROGRAM = new URL('../programs/combine-program.ts', import.meta.url);

describe('combine operations in C over MPI', () => {
  it('every built-in operator × element type: combines in C equal JavaScript\'s bit for bit (once and persistent)', async () => {
    expect(COMBOS).toHaveLength(71);
    const out = await runMpi<CombineResult>(2, PROGRAM, { scenario: 'kernels', seed: 11, n: 257 } satisfies CombineArgs);
    for (const r of out) {
      expect(r.problems).toEqual([]);
      // every schedule bound natively (two per pair: once and persistent; 8 of NaN bits on x64), none declined
      expect(r.nativeCombine).toBe(2 * COMBOS.length + (process.arch === 'x64' ? 8 : 0));
      expect(r.declinedCombine).toBe(0);
      expect(r.checks).toBe(2 * COMBOS.length);
      expect(r.nans).toBeGreaterThan(0);
    }
  });

  it.each([2, 3])('reduce, allreduce, exscan: every built-in operator × element type, native = portable = rank-order fold, run in C: p = %i', async (p) => {
    const out = await runMpi<CombineResult>(p, PROGRAM, { scenario: 'collectives', seed: 100 + p, n: 61 } satisfies CombineArgs);
    for (const r of out) {
      expect(r.problems).toEqual([]);
      expect(r.declinedCombine).toBe(0);
      // at least the reduce roots combine: 71 pairs × 3 reduce calls × 2 orders, less those where this rank is no root
      expect(r.nativeCombine).toBeGreaterThan(COMBOS.length);
      // 6 calls × 2 orders per pair; a result on every rank but the non-roots of the 3 reduces
      expect(r.checks).toBeGreaterThanOrEqual(COMBOS.length * 2 * 3);
      expect(r.userNative).toBe(0);
    }
    expect(out.reduce((s, r) => s + r.nans, 0)).toBeGreaterThan(0);
    // the user function was declined wherever a rank combines (the root of the reduce at least)
    expect(out.reduce((s, r) => s + r.userDeclined, 0)).toBeGreaterThanOrEqual(1);
  });

  it('VCOLL_MPI_SCHEDULES=0: the same calls, right, with nothing bound natively', async () => {
    const out = await runMpi<CombineResult>(2, PROGRAM, { scenario: 'collectives', seed: 7, n: 9 } satisfies CombineArgs, { env: { VCOLL_MPI_SCHEDULES: '0' } });
    for (const r of out) {
      expect(r.problems).toEqual([]);
      expect(r.nativeCombine).toBe(0);
      expect(r.declinedCombine).toBe(0);
    }
  });
});
