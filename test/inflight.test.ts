/**
 * Collectives in flight together on one communicator (issued in the same order on every rank,
 * as MPI requires of nonblocking collectives): every one completes with the right data on
 * the simulator and on worker threads, whatever order the transport completes their messages
 * in — one-shot, persistent (several plans started together), mixed with building blocks,
 * and on a split communicator while the parent runs its own mix.
 */
import { describe, expect, it } from 'vitest';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { randomItems, randomMixes, runMixRank, twoRoots, type Mix } from './programs/inflight.js';
import type { VAlgorithm } from '../src/collectives/types.js';

const program = new URL('./programs/inflight-program.ts', import.meta.url);

const ALGORITHMS: VAlgorithm[] = ['linear', 'binomial', 'adaptive', 'optimal', 'binary', 'auto'];

describe('collectives in flight together on the simulator', () => {
  it.each(ALGORITHMS)('%s: two gathervs and two scattervs with different roots', async (algorithm) => {
    for (const op of ['gatherv', 'scatterv'] as const) {
      const mix = twoRoots(op, algorithm, 6, 7);
      const res = await runSim(6, (comm) => runMixRank(comm, mix), { model: linearModel({ alpha: 20, beta: 1, gamma: 0 }) });
      expect(res.results.flat()).toEqual([]);
    }
  });

  it('random mixes of gatherv, scatterv, bcast, allgatherv, allreduce and barrier (one-shot, persistent, on a split communicator)', async () => {
    for (let seed = 1; seed <= 24; seed++) {
      const p = 2 + (seed % 9);
      const persistent = seed % 3 === 0;
      const mix: Mix = {
        p,
        items: randomItems(p, 2 + (seed % 5), seed, persistent),
        starts: persistent ? 3 : 0,
        ...(seed % 4 === 1 ? { sub: { p: Math.ceil(p / 2), items: randomItems(Math.ceil(p / 2), 3, seed + 100, false), starts: 0 } } : {}),
      };
      const res = await runSim(p, (comm) => runMixRank(comm, mix), { model: linearModel({ alpha: 10 + seed, beta: 1, gamma: 0 }) });
      expect(res.results.flat(), `seed ${seed}`).toEqual([]);
    }
  });
});

describe('collectives in flight together on worker threads', () => {
  it('two gathervs/scattervs with roots 0 and 5 at p = 6, every tree algorithm, repeated', { timeout: 120_000 }, async () => {
    const mixes: Mix[] = [];
    for (let rep = 0; rep < 4; rep++) {
      for (const algorithm of ALGORITHMS) {
        for (const op of ['gatherv', 'scatterv'] as const) mixes.push(twoRoots(op, algorithm, 6, rep * 31 + ALGORITHMS.indexOf(algorithm)));
      }
    }
    const perRank = await runThreads<string[][]>(6, program, mixes);
    expect(perRank.flat(2)).toEqual([]);
  });

  it('random mixes (one-shot, persistent, on a split communicator)', { timeout: 120_000 }, async () => {
    const perRank = await runThreads<string[][]>(5, program, randomMixes(5, 16, 1));
    expect(perRank.flat(2)).toEqual([]);
  });
});
