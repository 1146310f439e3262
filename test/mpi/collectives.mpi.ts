/**
 * Every vcoll collective over MPI (the native binding under mpirun), unchanged, at 1, 2, 3, 4
 * and 8 processes — the conformance suite of the simulator and threads, checked the same way:
 * - gatherv / scatterv: every algorithm (and auto) × every distribution × every root, with
 *   random unit sizes, displacement layouts (default, gapped, permuted), empty blocks, in place
 *   and persistent starts: byte-exact buffers on every rank, the same algorithm reported;
 * - the building blocks (bcast, gather, scatter, allgather, reduce, allreduce, exscan,
 *   barrier): the same results as worker threads give for the same program and arguments;
 * - allgather / allgatherv: every algorithm, regular and irregular, against the reference;
 * - hierarchical gather / gatherv / scatter / scatterv (gatherv, scatterv persistent too) on virtual nodes (ordered, permuted,
 *   unequal), every variant, binomial and adaptive trees (Traff18's construction on each level);
 * - intergroup allgather / allgatherv, both algorithms, groups of every split of p;
 * - adaptive gatherv / scatterv with large blocks, overlap and persistent starts.
 */
import { describe, expect, it } from 'vitest';
import { DISTRIBUTIONS } from '../../src/workloads/distributions.js';
import {
  ALLGATHER_ALGORITHMS,
  ALLGATHERV_ALGORITHMS,
  GATHERV_VARIANTS,
  HIERARCHICAL_TREE_NAMES,
  HIERARCHICAL_VARIANT_NAMES,
  INTER_ALLGATHER_ALGORITHMS,
  SCATTERV_VARIANTS,
} from '../../src/collectives/index.js';
import { portableAlgorithms, type VAlgorithm } from '../../src/collectives/types.js';
import { runThreads } from '../../src/transports/threads/index.js';
import { runMpi } from '../../src/transports/mpi/run.js';
import { expectedRecv } from '../helpers/blocks.js';
import { int, rng } from '../helpers/random.js';
import type { AdaptiveThreadsArgs, AdaptiveThreadsResult } from '../programs/adaptive-threads.js';
import { makeCase as agCase, type AgCase } from '../programs/allgather-program.js';
import type { BasicArgs, BasicResult } from '../programs/basic-collectives.js';
import { asOp, gatherCase, gathervCase, placementOf, type HierCase, type Placement } from '../programs/hierarchical-program.js';
import type { InterCase, InterResult } from '../programs/inter-program.js';
import { makeCase, type DisplLayout, type RankOutcome, type VCase } from '../programs/v-cases.js';

const program = (name: string): URL => new URL(`../programs/${name}`, import.meta.url);
const SIZES = [1, 2, 3, 4, 8];
const LAYOUTS: DisplLayout[] = ['default', 'gaps', 'permuted'];

/** The variants that run on every transport (not the MPI library's own, which native.mpi.ts covers). */
const portable = (names: readonly VAlgorithm[]): VAlgorithm[] => portableAlgorithms(names);

function vCases(p: number, seed: number): VCase[] {
  const rnd = rng(seed);
  const out: VCase[] = [];
  for (const op of ['gatherv', 'scatterv'] as const) {
    const algorithms = [...portable((op === 'gatherv' ? GATHERV_VARIANTS : SCATTERV_VARIANTS).map((v) => v.name)), 'auto' as const];
    for (const algorithm of algorithms) {
      for (const dist of DISTRIBUTIONS) {
        for (let root = 0; root < p; root++) {
          const c = makeCase({
            op,
            algorithm,
            p,
            seed: int(rnd, 0, 2 ** 30),
            dist,
            unitBytes: [1, 2, 8][int(rnd, 0, 2)],
            layout: LAYOUTS[int(rnd, 0, 2)],
            zeros: rnd() < 0.4,
            inPlace: rnd() < 0.3,
            starts: rnd() < 0.2 ? 2 : 0,
          });
          out.push({ ...c, root });
        }
      }
    }
  }
  return out;
}

describe('gatherv and scatterv over MPI: every algorithm, distribution and root', () => {
  it.each(SIZES)('p = %i', async (p) => {
    const cases = vCases(p, 7000 + p);
    const perRank = await runMpi<RankOutcome[]>(p, program('v-program.ts'), cases);
    expect(perRank).toHaveLength(p);
    cases.forEach((c, i) => {
      for (let r = 0; r < p; r++) {
        expect(perRank[r][i].mismatch, `${c.op} ${c.algorithm} root ${c.root} rank ${r}`).toBeUndefined();
        expect(perRank[r][i].info).toEqual(perRank[c.root][i].info);
      }
      if (c.algorithm !== 'auto') expect(perRank[c.root][i].info.algorithm).toBe(c.algorithm);
    });
  });
});

describe('the building blocks over MPI', () => {
  it.each(SIZES)('p = %i: bcast, gather, scatter, allgather, reduce, allreduce, exscan give what worker threads give; the barrier waits for a late rank', async (p) => {
    const args: BasicArgs = { seed: 90 + p, m: 5, k: 2, slowRank: p - 1, sleepMs: 80 };
    const got = await runMpi<BasicResult>(p, program('basic-collectives.ts'), args);
    const want = await runThreads<BasicResult>(p, program('basic-collectives.ts'), args);
    const lateEnter = got[p - 1].enter;
    for (let r = 0; r < p; r++) {
      const { enter: e1, exit: x1, ...data } = got[r];
      const { enter: e2, exit: x2, ...reference } = want[r];
      void e2;
      void x2;
      expect(data, `rank ${r}`).toEqual(reference);
      expect(x1).toBeGreaterThanOrEqual(lateEnter);
      if (r !== p - 1) expect(lateEnter - e1).toBeGreaterThanOrEqual(40); // the late rank really was late
    }
  });
});

describe('allgather and allgatherv over MPI', () => {
  it.each(SIZES)('p = %i: every algorithm, regular and irregular (gapped, permuted, empty blocks)', async (p) => {
    const counts = Array.from({ length: p }, (_, r) => (r * 5 + 2) % 7);
    const cases: AgCase[] = [
      ...ALLGATHER_ALGORITHMS.map((a) => agCase('allgather', a, new Array<number>(p).fill(6), 1, 'default', p)),
      ...ALLGATHERV_ALGORITHMS.map((a) => agCase('allgatherv', a, counts, 3, 'permuted', p + 1)),
      ...ALLGATHERV_ALGORITHMS.map((a) => agCase('allgatherv', a, counts.map((c) => c * 700), 8, 'gapped', p + 2)),
    ].filter((c) => portableAlgorithms([c.algorithm]).length > 0);
    const out = await runMpi<number[][]>(p, program('allgather-program.ts'), cases);
    cases.forEach((c, i) => {
      const want = [...expectedRecv(c)];
      for (let r = 0; r < p; r++) expect(out[r][i], `${c.api}/${c.algorithm} rank ${r}`).toEqual(want);
    });
  });
});

describe('hierarchical gather, gatherv, scatter and scatterv over MPI with virtual nodes', () => {
  it.each(SIZES)('p = %i: every variant and tree on ordered, permuted and unequal placements', async (p) => {
    const placements: Placement[] = ['ordered', 'permuted', 'ordered-unequal', 'permuted-unequal'];
    for (const kind of placements) {
      const rnd = rng(p * 31 + kind.length);
      const nodes = placementOf(kind, p, 2, rnd);
      const cases: HierCase[] = [];
      for (const variant of HIERARCHICAL_VARIANT_NAMES) {
        for (const tree of HIERARCHICAL_TREE_NAMES) {
          const regular = { ...gatherCase(p, variant, int(rnd, 0, p - 1), 5, 1), tree };
          const small = { ...gathervCase(p, variant, rnd, 2), tree };
          const large = { ...gathervCase(p, variant, rnd, 3, { maxCount: 30000, unitBytes: 1 }), tree };
          cases.push(regular, small, large, asOp(regular, 'scatter'), asOp(small, 'scatterv'), asOp(large, 'scatterv'));
          // persistent: one plan (the adaptive trees' constructions at init), started twice
          cases.push({ ...large, persistent: true }, { ...asOp(small, 'scatterv'), persistent: true });
        }
      }
      const perRank = await runMpi<(string | undefined)[]>(p, program('hierarchical-program.ts'), cases, { nodes });
      for (const r of perRank) for (const bad of r) expect(bad, kind).toBeUndefined();
    }
  });
});

describe('intergroup allgather over MPI', () => {
  it.each(SIZES.filter((p) => p >= 2))('p = %i: both algorithms, every split of the world into two groups', async (p) => {
    const cases: InterCase[] = [];
    for (let a = 1; a < p; a++) {
      const b = p - a;
      const equal = (n: number, k: number): number[] => new Array<number>(n).fill(k);
      for (const algorithm of portableAlgorithms(INTER_ALLGATHER_ALGORITHMS)) {
        cases.push({ p: a, q: b, op: 'allgather', algorithm, sizes: [equal(a, 7), equal(b, 11)] });
        const sizes: [number[], number[]] = [
          Array.from({ length: a }, (_, i) => (i * 3) % 5),
          Array.from({ length: b }, (_, i) => 1 + ((i * 7) % 4) * 3000),
        ];
        cases.push({ p: a, q: b, op: 'allgatherv', algorithm, sizes, gaps: true, unitBytes: 2 });
      }
    }
    const res = await runMpi<InterResult[]>(p, program('inter-batch.ts'), cases);
    for (const rank of res) rank.forEach((r, i) => expect(r.mismatch, JSON.stringify(cases[i])).toBeNull());
  });
});

describe('adaptive gatherv and scatterv over MPI', () => {
  it('p = 8, root 3, zero and large blocks, overlapped gather, three persistent starts', async () => {
    const sizes = [0, 70000, 3, 0, 12, 1, 9000, 5];
    const args: AdaptiveThreadsArgs = { inst: { sizes, root: 3, unitBytes: 2 }, flags: { overlap: true }, repeats: 3, model: { alpha: 100, beta: 1, gamma: 0 } };
    const res = await runMpi<AdaptiveThreadsResult>(8, program('adaptive-threads.ts'), args);
    expect(res.flatMap((r) => r.bad)).toEqual([]);
    expect(res.every((r) => r.constructionRounds === 4)).toBe(true);
  });
});
