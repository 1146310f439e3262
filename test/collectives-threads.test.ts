/**
 * gatherv/scatterv on worker threads (real parallel execution over SharedArrayBuffer
 * channels): p 1..8, every algorithm, both operations, random roots, distributions with
 * empty blocks, unitBytes, permuted displacements, persistent plans — byte-exact results on
 * every rank, the same algorithm reported everywhere.
 */
import { describe, expect, it } from 'vitest';
import { DISTRIBUTIONS } from '../src/workloads/distributions.js';
import { GATHERV_VARIANTS, portableVariants } from '../src/collectives/index.js';
import type { VAlgorithm } from '../src/collectives/types.js';
import { runThreads } from '../src/transports/threads/index.js';
import { int, rng } from './helpers/random.js';
import { makeCase, type DisplLayout, type RankOutcome, type VCase } from './programs/v-cases.js';

const program = new URL('./programs/v-program.ts', import.meta.url);
const ALGORITHMS: VAlgorithm[] = [...portableVariants(GATHERV_VARIANTS).map((v) => v.name), 'auto'];
const LAYOUTS: DisplLayout[] = ['default', 'gaps', 'permuted'];

function casesFor(p: number, seed: number): VCase[] {
  const rnd = rng(seed);
  const out: VCase[] = [];
  for (const algorithm of ALGORITHMS) {
    for (const op of ['gatherv', 'scatterv'] as const) {
      out.push(
        makeCase({
          op,
          algorithm,
          p,
          seed: int(rnd, 0, 2 ** 30),
          dist: DISTRIBUTIONS[int(rnd, 0, DISTRIBUTIONS.length - 1)],
          unitBytes: [1, 2, 8][int(rnd, 0, 2)],
          layout: LAYOUTS[int(rnd, 0, 2)],
          zeros: rnd() < 0.5,
          inPlace: rnd() < 0.3,
          starts: rnd() < 0.4 ? 2 : 0,
        }),
      );
    }
  }
  return out;
}

describe('gatherv/scatterv on worker threads', () => {
  it.each([1, 2, 3, 5, 8])('p = %i: every algorithm, both operations, byte-exact', async (p) => {
    const cases = casesFor(p, 1000 + p);
    const perRank = await runThreads<RankOutcome[]>(p, program, cases);
    expect(perRank).toHaveLength(p);
    cases.forEach((c, i) => {
      for (let r = 0; r < p; r++) {
        expect(perRank[r][i].mismatch, `${c.op} ${c.algorithm} rank ${r}`).toBeUndefined();
        expect(perRank[r][i].info).toEqual(perRank[c.root][i].info);
      }
      if (c.algorithm !== 'auto') expect(perRank[c.root][i].info.algorithm).toBe(c.algorithm);
    });
  }, 60_000);

  it('larger blocks than a channel ring (64 KiB) go through', async () => {
    const c = makeCase({ op: 'gatherv', algorithm: 'optimal', p: 4, seed: 3, dist: 'same', unitBytes: 8, layout: 'permuted', zeros: false, inPlace: false, starts: 0 });
    const big: VCase = { ...c, counts: [20000, 5, 30000, 12000], capacity: 62012, displs: [42010, 0, 6, 30006], algorithm: 'binary' };
    const scatter: VCase = { ...big, op: 'scatterv', algorithm: 'two-block', counts: [20000, 20000, 5, 5], displs: undefined, capacity: 40010 };
    const perRank = await runThreads<RankOutcome[]>(4, program, [big, scatter]);
    for (const r of perRank) for (const o of r) expect(o.mismatch).toBeUndefined();
  }, 60_000);
});
