/**
 * The `mpi-native` variants over MPI (the MPI library's own collectives through the binding),
 * at 1, 2, 3, 4 and 8 processes, one mpirun job per p (test/programs/native-program.ts):
 * - gatherv / scatterv: every root (three random ones at p = 8) × several distributions, with
 *   empty blocks, unitBytes 1 and 8, default / gapped / permuted displacements, in place and
 *   persistent starts: the buffers expected byte for byte (sentinels untouched), and the same
 *   bytes as vcoll's `linear` gives; the same CollectiveInfo on every rank;
 * - gather, scatter, allreduce (sum and max over f64, i32, i64; in place too): the expected
 *   values and the same as algorithm 'vcoll'; barrier: nobody leaves before the last enters;
 *   argument errors of mpi-native (combine function, Uint8ClampedArray, bitwise op on doubles,
 *   an unknown algorithm) on every rank;
 * - intergroup allgather (equal, unequal and empty blocks) and allgatherv (counts with zeros,
 *   gaps, unitBytes 1 and 3) with 'mpi-native' over splitIntercomm, every split size.
 */
import { describe, expect, it } from 'vitest';
import { DISTRIBUTIONS } from '../../src/workloads/distributions.js';
import { runMpi } from '../../src/transports/mpi/run.js';
import { int, rng } from '../helpers/random.js';
import type { BasicCase, NativeArgs, NativeResult } from '../programs/native-program.js';
import type { InterCase } from '../programs/inter-program.js';
import { makeCase, type DisplLayout, type VCase } from '../programs/v-cases.js';

const PROGRAM = new URL('../programs/native-program.ts', import.meta.url);
const LAYOUTS: DisplLayout[] = ['default', 'gaps', 'permuted'];
/** Cases per (root, operation). */
const PER_ROOT = 6;

function rootsOf(p: number, rnd: () => number): number[] {
  if (p <= 4) return Array.from({ length: p }, (_, i) => i);
  const roots = new Set<number>();
  while (roots.size < 3) roots.add(int(rnd, 0, p - 1));
  return [...roots];
}

function vCases(p: number, seed: number): VCase[] {
  const rnd = rng(seed);
  const out: VCase[] = [];
  for (const root of rootsOf(p, rnd)) {
    for (const op of ['gatherv', 'scatterv'] as const) {
      for (let k = 0; k < PER_ROOT; k++) {
        const c = makeCase({
          op,
          algorithm: 'linear',
          p,
          seed: int(rnd, 0, 2 ** 30),
          dist: DISTRIBUTIONS[(k + root * PER_ROOT) % DISTRIBUTIONS.length],
          unitBytes: k % 2 === 0 ? 1 : 8,
          layout: LAYOUTS[k % 3],
          zeros: k % 4 < 2,
          inPlace: k % 3 === 1,
          starts: k === 5 ? 2 : 0,
        });
        out.push({ ...c, root });
      }
    }
    // every block empty
    for (const op of ['gatherv', 'scatterv'] as const) {
      out.push({ ...makeCase({ op, algorithm: 'linear', p, seed: root, dist: 'same', unitBytes: 8, layout: 'default', zeros: false, inPlace: false, starts: 0 }), root, counts: new Array<number>(p).fill(0), displs: undefined, capacity: 2 });
    }
  }
  return out;
}

function basicCases(p: number): BasicCase[] {
  return [
    { root: 0, m: 5, n: 3, seed: 1 },
    { root: p - 1, m: 0, n: 1, seed: 2 },
    { root: p >> 1, m: 70000, n: 1000, seed: 3 },
  ];
}

const arithmetic = (n: number, k: number): number[] => Array.from({ length: n }, (_, i) => Math.ceil((2 * k * (i + 1)) / (n + 1)));

function interCases(size: number): InterCase[] {
  if (size < 2) return [];
  const out: InterCase[] = [];
  for (const p of size <= 4 ? Array.from({ length: size - 1 }, (_, i) => i + 1) : [1, 3, 4]) {
    const q = size - p;
    const eq = (n: number, k: number): number[] => new Array<number>(n).fill(k);
    const algorithm = 'mpi-native';
    out.push(
      { p, q, op: 'allgather', algorithm, sizes: [eq(p, 5), eq(q, 5)] },
      { p, q, op: 'allgather', algorithm, sizes: [eq(p, 4), eq(q, 9)] },
      { p, q, op: 'allgather', algorithm, sizes: [eq(p, 0), eq(q, 3)] },
      { p, q, op: 'allgatherv', algorithm, sizes: [arithmetic(p, 7), arithmetic(q, 3).map((x, i) => (i % 2 === 0 ? 0 : x))] },
      { p, q, op: 'allgatherv', algorithm, sizes: [arithmetic(p, 100), arithmetic(q, 40)], gaps: true, unitBytes: 3 },
    );
  }
  return out;
}

describe('mpi-native variants over MPI', () => {
  it.each([1, 2, 3, 4, 8])(
    'p = %i: gatherv/scatterv as linear and as expected, gather/scatter/allreduce/barrier, argument errors, intergroup allgather(v)',
    async (p) => {
      const args: NativeArgs = {
        v: vCases(p, 600 + p),
        basic: basicCases(p),
        inter: interCases(p),
        barrierSleepMs: p > 1 ? 50 : undefined,
        errors: true,
      };
      const res = await runMpi<NativeResult>(p, PROGRAM, args);
      expect(res).toHaveLength(p);
      const v = args.v ?? [];
      for (const [rank, r] of res.entries()) {
        expect(r.library).toMatch(/Open MPI|MPICH/);
        expect(r.v).toHaveLength(v.length);
        for (const [i, o] of r.v.entries()) {
          const what = `rank ${rank}, case ${i} (${v[i].op}, root ${v[i].root}, u ${v[i].unitBytes}, in place ${v[i].inPlace})`;
          expect(o.native.mismatch, what).toBeUndefined();
          expect(o.vsLinear, what).toBeUndefined();
          expect(o.native.info, what).toEqual({ algorithm: 'mpi-native', constructionRounds: 0, height: p > 1 ? 1 : 0 });
        }
        expect(r.basic).toEqual([]);
        expect(r.inter).toEqual(interCases(p).map(() => null));
        expect(r.errors).toEqual(['op', 'algorithm', 'op', 'algorithm']);
      }
      if (p > 1) {
        const lastEnter = Math.max(...res.map((r) => r.barrier?.enter ?? Infinity));
        const firstExit = Math.min(...res.map((r) => r.barrier?.exit ?? -Infinity));
        // rank p−1 enters 50 ms after the others could: nobody may leave before the last one
        // entered (1 ms for the processes' clocks, performance.timeOrigin + now())
        expect(firstExit).toBeGreaterThanOrEqual(lastEnter - 1);
      }
    },
  );
});
