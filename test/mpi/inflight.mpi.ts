/**
 * Collectives in flight together over MPI (the same mixes as test/inflight.test.ts on the
 * simulator and threads): two gathervs/scattervs with different roots for every tree algorithm,
 * and random mixes with the building blocks, persistent plans and a split communicator, at
 * p = 2, 3 and 4 under mpirun. Every buffer byte for byte on every rank.
 */
import { describe, expect, it } from 'vitest';
import type { VAlgorithm } from '../../src/collectives/types.js';
import { runMpi } from '../../src/transports/mpi/run.js';
import { randomMixes, twoRoots, type Mix } from '../programs/inflight.js';

const program = new URL('../programs/inflight-program.ts', import.meta.url);
const ALGORITHMS: VAlgorithm[] = ['linear', 'binomial', 'adaptive', 'optimal', 'binary', 'auto'];

describe('collectives in flight together over MPI', () => {
  it.each([2, 3, 4])('p = %i: two roots for every algorithm, and random mixes', async (p) => {
    const mixes: Mix[] = [];
    for (const algorithm of ALGORITHMS) {
      for (const op of ['gatherv', 'scatterv'] as const) mixes.push(twoRoots(op, algorithm, p, p * 7 + ALGORITHMS.indexOf(algorithm)));
    }
    mixes.push(...randomMixes(p, 12, p));
    const perRank = await runMpi<string[][]>(p, program, mixes);
    expect(perRank).toHaveLength(p);
    expect(perRank.flat(2)).toEqual([]);
  });
});
