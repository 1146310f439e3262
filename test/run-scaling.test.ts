/**
 * The run harness's cost is linear in the work: a simulated run builds its block-size
 * distribution once per process (workloads/distributions.ts sharedBlockSizes), not once per
 * simulated rank, which cost O(p²) in all, and its ranks' blocks and own buffers are views of
 * one shared reference and arena, not per-rank copies (counted, not timed).
 */
import { describe, expect, it } from 'vitest';
import { blockOf, blocksBuilt, fullBuffer, rankView, sharedCaseData } from '../src/run/data.js';
import { runCase, summarize } from '../src/run/job.js';
import { runCaseOnRank, VIRTUAL_TIMER, type RankCaseResult } from '../src/run/rank.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { CASE_DEFAULTS } from '../src/run/spec.js';
import { blockSizes, blockSizesBuilt, sharedBlockSizes } from '../src/workloads/distributions.js';

describe('the run harness builds the distribution once, whatever p', () => {
  it('sharedBlockSizes: one build per (distribution, p, b, ρ, seed), the same sizes as blockSizes', () => {
    const params = { p: 37, b: 11, rho: 3, seed: 9 };
    const before = blockSizesBuilt();
    const a = sharedBlockSizes('spikes', params);
    const b = sharedBlockSizes('spikes', { ...params });
    expect(b).toBe(a);
    expect(blockSizesBuilt() - before).toBe(1);
    expect([...a]).toEqual(blockSizes('spikes', params));
    // another seed is another distribution
    expect(sharedBlockSizes('spikes', { ...params, seed: 10 })).not.toBe(a);
    expect(() => sharedBlockSizes('spikes', { ...params, p: 0 })).toThrow(/p/);
  });

  for (const algorithm of ['linear', 'binomial', 'adaptive'] as const) {
    it(`${algorithm} gatherv and scatterv on the simulator: a constant number of builds at p = 16 and at p = 256`, async () => {
      const builds = async (p: number, op: 'gatherv' | 'scatterv'): Promise<number> => {
        const before = blockSizesBuilt();
        const report = await runCase('sim', p, { ...CASE_DEFAULTS, op, algorithm, dist: 'random', b: 3, seed: 1000 + p, reps: 1, warmup: 0 });
        expect(report.verified).toBe(true);
        return blockSizesBuilt() - before;
      };
      for (const op of ['gatherv', 'scatterv'] as const) {
        const small = await builds(16, op);
        const large = await builds(256, op);
        expect(small).toBeLessThanOrEqual(2);
        expect(large).toBe(small);
      }
    });
  }
});

describe('simulated ranks hold views of one shared reference and arena, not copies of their own', () => {
  for (const op of ['gatherv', 'scatterv'] as const) {
    it(`${op}: no per-rank block is built on the simulator (one fullBuffer for all); on a rank of its own process, one`, async () => {
      for (const p of [16, 256]) {
        const before = blocksBuilt();
        const report = await runCase('sim', p, { ...CASE_DEFAULTS, op, algorithm: 'binomial', dist: 'random', b: 3, seed: 7, reps: 2, warmup: 1 });
        expect(report.verified).toBe(true);
        expect(blocksBuilt() - before, `p = ${p}`).toBe(0);
      }
      // what a worker thread or an MPI process does (no shared data): its own block, built once
      const c = { ...CASE_DEFAULTS, op, algorithm: 'linear' as const, dist: 'random' as const, b: 3, seed: 7 };
      const before = blocksBuilt();
      const sim = await runSim(4, (comm) => runCaseOnRank(comm, c, VIRTUAL_TIMER), { model: linearModel(c.model) });
      expect(sim.results.every((r) => r.mismatch === undefined)).toBe(true);
      expect(blocksBuilt() - before).toBe(4); // one per rank
    });
  }

  it('the shared data: every rank’s block is its view of the reference; the arena is another buffer of the same layout', () => {
    const counts = [3, 0, 5, 1];
    const shared = sharedCaseData(counts, 2);
    expect([...shared.offsets]).toEqual([0, 6, 6, 16, 18]);
    expect(shared.reference).toEqual(fullBuffer(counts, 2));
    expect(shared.arena.buffer).not.toBe(shared.reference.buffer);
    for (let r = 0; r < counts.length; r++) {
      const v = rankView(shared, shared.reference, r);
      expect(v.buffer).toBe(shared.reference.buffer);
      expect(v).toEqual(blockOf(r, counts[r], 2));
    }
  });
});

describe('summaries of many ranks', () => {
  it('summarize takes the slowest rank of 300,000 without spreading them as arguments (Math.max(...xs) overflows the stack there)', () => {
    const p = 300_000;
    const info = { algorithm: 'linear', constructionRounds: 0, height: 1 } as const;
    const ranks: RankCaseResult[] = Array.from({ length: p }, (_, rank) => ({
      rank,
      mismatch: undefined,
      times: [rank === 123_456 ? 50 : 1, rank === 7 ? 40 : 2],
      planTime: rank === 299_999 ? 9 : 0,
      messages: 1,
      bytes: 3,
      planMessages: 0,
      planBytes: 0,
      info,
    }));
    const report = summarize('sim', p, { ...CASE_DEFAULTS, algorithm: 'linear', persistent: true, reps: 2 }, ranks, 'model');
    expect(report.time).toBe(40);
    expect(report.messages).toBe(p);
    expect(report.bytes).toBe(3 * p);
  });
});

