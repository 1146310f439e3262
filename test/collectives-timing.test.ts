/**
 * On the simulator, the data phase of a persistent plan (planned, then the clocks synced)
 * finishes at exactly the evaluator's time for the plan's tree: optimal, binary and
 * two-block trees (the generic executor), the oblivious binomial tree and the linear star,
 * for gatherv and scatterv, under several models (γ > 0 and Lemma 4's copyAll included).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gathervInit, scattervInit } from '../src/collectives/index.js';
import type { VAlgorithm } from '../src/collectives/types.js';
import { DISTRIBUTIONS, blockSizes } from '../src/bench/distributions.js';
import type { Communicator } from '../src/comm/communicator.js';
import { linearModel, type CostModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { optimalBinaryTree } from '../src/trees/binary.js';
import { obliviousTreeFor } from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import { optimalTree } from '../src/trees/optimal.js';
import { optimalPairwiseTree } from '../src/trees/optimal-pairwise.js';
import type { Tree } from '../src/trees/tree.js';
import { twoBlockTree } from '../src/trees/two-block.js';
import { isOrdered } from '../src/trees/tree.js';
import { randomPairwise } from './helpers/models.js';
import { runCaseRank, type VCase } from './programs/v-cases.js';
import { int, rng } from './helpers/random.js';

type Op = 'gatherv' | 'scatterv';

/** Virtual duration of start() (all clocks synced before it), per rank, and after a second start(). */
async function dataPhase(op: Op, algorithm: VAlgorithm, counts: number[], root: number, model: CostModel): Promise<number[]> {
  const p = counts.length;
  const res = await runSim(
    p,
    async (comm: Communicator) => {
      const me = comm.rank;
      const block = new Uint8Array(counts[me]).fill(me & 0xff);
      const total = counts.reduce((a, b) => a + b, 0);
      const plan =
        op === 'gatherv'
          ? await gathervInit(
              comm,
              me === root ? { root, send: block, recv: new Uint8Array(total), counts } : { root, send: block },
              { algorithm, model },
            )
          : await scattervInit(
              comm,
              me === root ? { root, recv: block, send: new Uint8Array(total), counts } : { root, recv: block },
              { algorithm, model },
            );
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator communicator has no clock');
      const times: number[] = [];
      for (let k = 0; k < 2; k++) {
        await clock.sync();
        const t0 = clock.now();
        await plan.start();
        times.push(clock.now() - t0);
      }
      return times;
    },
    { model },
  );
  return [0, 1].map((k) => Math.max(...res.results.map((t) => t[k])));
}

const MODELS: CostModel[] = [
  linearModel({ alpha: 100, beta: 1, gamma: 0 }),
  linearModel({ alpha: 10, beta: 1, gamma: 1 }),
  linearModel({ alpha: 1000, beta: 2, gamma: 3 }),
  linearModel({ alpha: 0, beta: 1, gamma: 1 }),
  linearModel({ alpha: 50, beta: 1, gamma: 1, copyAll: true }),
];

function treeOf(algorithm: VAlgorithm, counts: number[], root: number, model: CostModel): Tree {
  switch (algorithm) {
    case 'optimal':
      return model.linear !== undefined ? optimalTree(counts, model, { root }).tree : optimalPairwiseTree(counts, model, { root }).tree;
    case 'binary':
      return optimalBinaryTree(counts, model, { root }).tree;
    case 'two-block':
      return twoBlockTree(counts, model, { root }).tree;
    case 'binomial':
      return obliviousTreeFor(counts.length, root, model.copyAll);
    case 'linear':
      return linearTree(counts, model, { root }).tree;
    default:
      throw new Error(algorithm);
  }
}

/** Counts with at most two values; the small one is 0 when the model copies (γ > 0), so the root never stages. */
function twoValues(counts: number[], model: CostModel, rnd: () => number): number[] {
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  const gamma = model.linear?.gamma ?? 1;
  const small = gamma > 0 ? 0 : int(rnd, 0, 5);
  const large = small + int(rnd, 1, 40);
  return counts.map((m) => (m > mean ? large : small));
}

describe('the data phase on the simulator takes exactly evaluate(tree).time', () => {
  const cases: [VAlgorithm, Op][] = [];
  for (const a of ['optimal', 'binary', 'two-block', 'binomial', 'linear'] as VAlgorithm[]) for (const op of ['gatherv', 'scatterv'] as Op[]) cases.push([a, op]);

  it.each(cases)('%s %s', async (algorithm, op) => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 40 }),
        fc.constantFrom(...DISTRIBUTIONS),
        fc.integer({ min: 0, max: MODELS.length - 1 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async (p, dist, mi, seed) => {
          const rnd = rng(seed);
          // linear is the MPI libraries' algorithm: leaves never copy, so not Lemma 4's copyAll
          const model = algorithm === 'linear' && MODELS[mi].copyAll ? MODELS[0] : MODELS[mi];
          let counts = blockSizes(dist, { p, b: int(rnd, 1, 60), seed });
          if (rnd() < 0.3) counts = counts.map((m) => (rnd() < 0.3 ? 0 : m));
          if (algorithm === 'two-block') counts = twoValues(counts, model, rnd);
          const root = int(rnd, 0, p - 1);
          const want = evaluate(treeOf(algorithm, counts, root, model), counts, model, op === 'gatherv' ? 'gather' : 'scatter').time;
          const got = await dataPhase(op, algorithm, counts, root, model);
          expect(got).toEqual([want, want]);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('optimal under a per-pair model (seed 004 Theorem 1 trees)', async () => {
    const rnd = rng(11);
    for (let trial = 0; trial < 6; trial++) {
      const p = int(rnd, 2, 12);
      const model = randomPairwise(p, rnd);
      const counts = Array.from({ length: p }, () => int(rnd, 0, 30));
      const root = int(rnd, 0, p - 1);
      for (const op of ['gatherv', 'scatterv'] as Op[]) {
        const want = evaluate(treeOf('optimal', counts, root, model), counts, model, op === 'gatherv' ? 'gather' : 'scatter').time;
        expect(await dataPhase(op, 'optimal', counts, root, model)).toEqual([want, want]);
      }
    }
  });

  it('binary trees that are not ordered (a root with two left children) run exactly too', async () => {
    const cases: [number[], number, { alpha: number; beta: number; gamma: number }][] = [
      [[0, 16, 30, 30, 8, 18, 22], 2, { alpha: 100, beta: 1, gamma: 1 }],
      [[23, 5, 22, 14, 23, 30], 1, { alpha: 76, beta: 1, gamma: 0 }],
      [[26, 7, 30, 22, 12, 9, 20], 6, { alpha: 93, beta: 1, gamma: 2 }],
    ];
    for (const [counts, root, params] of cases) {
      const model = linearModel(params);
      const tree = optimalBinaryTree(counts, model, { root }).tree;
      expect(isOrdered(tree)).toBe(false);
      for (const op of ['gatherv', 'scatterv'] as Op[]) {
        const want = evaluate(tree, counts, model, op === 'gatherv' ? 'gather' : 'scatter').time;
        expect(await dataPhase(op, 'binary', counts, root, model)).toEqual([want, want]);
        const c: VCase = {
          op,
          algorithm: 'binary',
          p: counts.length,
          root,
          counts,
          displs: undefined,
          capacity: counts.reduce((a, b) => a + b, 0),
          unitBytes: 2,
          inPlace: false,
          model: { ...params, copyAll: false },
          starts: 2,
        };
        const res = await runSim(c.p, (comm) => runCaseRank(comm, c), { model, unitBytes: 2 });
        for (const r of res.results) expect(r.mismatch).toBeUndefined();
      }
    }
  });

  it('a staged two-block root pays at most γ per staged element more (gather)', async () => {
    // ranks 0, 2, 4 hold 5 elements, 1, 3 hold 1: the large domain {0, 2, 4} is not
    // contiguous at root 0, so the root copies out what it receives from that domain.
    const model = linearModel({ alpha: 20, beta: 1, gamma: 1 });
    const counts = [5, 1, 5, 1, 5];
    const tree = twoBlockTree(counts, model, { root: 0 }).tree;
    const want = evaluate(tree, counts, model, 'gather').time;
    const [got] = await dataPhase('gatherv', 'two-block', counts, 0, model);
    expect(got).toBeGreaterThan(want);
    expect(got - want).toBeLessThanOrEqual(counts.reduce((a, b) => a + b, 0) - counts[0]);
  });
});
