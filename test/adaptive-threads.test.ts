/** Adaptive gatherv/scatterv on worker threads (p ≤ 8): the same code as on the simulator, verified. */
import { describe, expect, it } from 'vitest';
import { runThreads } from '../src/transports/threads/index.js';
import { rng } from './helpers/random.js';
import { scrambledDispls } from './programs/adaptive-common.js';
import type { AdaptiveThreadsArgs, AdaptiveThreadsResult } from './programs/adaptive-threads.js';

const program = new URL('./programs/adaptive-threads.ts', import.meta.url);

describe('adaptive gatherv/scatterv on worker threads', () => {
  it('p = 8, root 3, zero and large blocks, overlapped gather, three persistent starts', async () => {
    const sizes = [0, 70000, 3, 0, 12, 1, 9000, 5];
    const args: AdaptiveThreadsArgs = { inst: { sizes, root: 3, unitBytes: 2 }, flags: { overlap: true }, repeats: 3, model: { alpha: 100, beta: 1, gamma: 0 } };
    const res = await runThreads<AdaptiveThreadsResult>(8, program, args);
    expect(res.map((r) => r.rank)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(res.flatMap((r) => r.bad)).toEqual([]);
    expect(res.every((r) => r.constructionRounds === 4)).toBe(true);
  }, 60_000);

  it('p = 5, root 4, Lemma 4, rule lemma1, scrambled displacements, no overlap', async () => {
    const sizes = [7, 0, 130, 2, 40];
    const args: AdaptiveThreadsArgs = {
      inst: { sizes, root: 4, unitBytes: 4, displs: scrambledDispls(sizes, rng(11)) },
      flags: { overlap: false, lemma4: true, rule: 'lemma1' },
      repeats: 2,
      model: { alpha: 10, beta: 1, gamma: 1 },
    };
    const res = await runThreads<AdaptiveThreadsResult>(5, program, args);
    expect(res.flatMap((r) => r.bad)).toEqual([]);
  }, 60_000);
});
