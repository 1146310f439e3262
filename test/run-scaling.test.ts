/**
 * The run harness's cost is linear in the work: a simulated run builds its block-size
 * distribution once per process (workloads/distributions.ts sharedBlockSizes), not once per
 * simulated rank, which cost O(p²) in all (counted, not timed).
 */
import { describe, expect, it } from 'vitest';
import { runCase } from '../src/run/job.js';
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
