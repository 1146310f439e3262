/**
 * On the simulator, the data phase of a persistent plan (planned, then the clocks synced)
 * finishes at exactly the evaluator's time for the plan's tree: optimal, binary and
 * two-block trees (the generic executor), the oblivious binomial tree and the linear star,
 * for gatherv and scatterv, under several models (γ > 0 and Lemma 4's copyAll included),
 * with default, gapped and permuted displacements and interleaved two-block sizes: the root
 * receives into / sends from the blocks' views (vectored), so it never stages or copies
 * anything but its own block.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gathervInit, scattervInit } from '../src/collectives/index.js';
import type { VAlgorithm } from '../src/collectives/types.js';
import { DISTRIBUTIONS, blockSizes } from '../src/workloads/distributions.js';
import type { Communicator } from '../src/comm/communicator.js';
import { linearModel, type CostModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { optimalBinaryTree } from '../src/trees/optimal/binary.js';
import { obliviousTreeFor } from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { optimalPairwiseTree } from '../src/trees/optimal/pairwise.js';
import type { Tree } from '../src/trees/tree.js';
import { twoBlockTree } from '../src/trees/two-block.js';
import { isOrdered } from '../src/trees/tree.js';
import { randomPairwise } from './helpers/models.js';
import { makeDispls, runCaseRank, type DisplLayout, type VCase } from './programs/v-cases.js';
import { int, rng } from './helpers/random.js';

type Op = 'gatherv' | 'scatterv';

interface Placement {
  /** Root displacements (elements); undefined = the prefix sums. */
  readonly displs?: readonly number[];
  /** Root buffer (elements). */
  readonly capacity?: number;
}

/**
 * Virtual duration of start() (all clocks synced before it), slowest rank, for two starts;
 * `copies`: the bytes every rank copied with comm.copy during the timed starts (from the trace).
 */
async function dataPhaseTraced(
  op: Op,
  algorithm: VAlgorithm,
  counts: number[],
  root: number,
  model: CostModel,
  where: Placement = {},
): Promise<{ times: number[]; copies: number[] }> {
  const p = counts.length;
  const total = counts.reduce((a, b) => a + b, 0);
  const capacity = where.capacity ?? total;
  const displs = where.displs;
  const res = await runSim(
    p,
    async (comm: Communicator) => {
      const me = comm.rank;
      const block = new Uint8Array(counts[me]).fill(me & 0xff);
      const plan =
        op === 'gatherv'
          ? await gathervInit(
              comm,
              me === root ? { root, send: block, recv: new Uint8Array(capacity), counts, displs } : { root, send: block },
              { algorithm, model },
            )
          : await scattervInit(
              comm,
              me === root ? { root, recv: block, send: new Uint8Array(capacity), counts, displs } : { root, recv: block },
              { algorithm, model },
            );
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator communicator has no clock');
      const times: number[] = [];
      await clock.sync();
      const from = clock.now();
      for (let k = 0; k < 2; k++) {
        await clock.sync();
        const t0 = clock.now();
        await plan.start();
        times.push(clock.now() - t0);
      }
      return { times, from };
    },
    { model, trace: true },
  );
  const from = res.results[0].from;
  const copies = new Array<number>(p).fill(0);
  for (const c of res.trace?.copies ?? []) if (c.start >= from) copies[c.rank] += c.bytes;
  return { times: [0, 1].map((k) => Math.max(...res.results.map((r) => r.times[k]))), copies };
}

async function dataPhase(op: Op, algorithm: VAlgorithm, counts: number[], root: number, model: CostModel, where: Placement = {}): Promise<number[]> {
  return (await dataPhaseTraced(op, algorithm, counts, root, model, where)).times;
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

/**
 * Counts with at most two values, interleaved as the distribution puts them (so the large
 * and the small blocks' domains are not consecutive ranges: the root's messages are not
 * contiguous in its buffer).
 */
function twoValues(counts: number[], rnd: () => number): number[] {
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  const small = int(rnd, 0, 5);
  const large = small + int(rnd, 1, 40);
  return counts.map((m) => (m > mean ? large : small));
}

const LAYOUTS: DisplLayout[] = ['default', 'gaps', 'permuted'];

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
        fc.constantFrom(...LAYOUTS),
        async (p, dist, mi, seed, layout) => {
          const rnd = rng(seed);
          const model = MODELS[mi];
          let counts = blockSizes(dist, { p, b: int(rnd, 1, 60), seed });
          if (rnd() < 0.3) counts = counts.map((m) => (rnd() < 0.3 ? 0 : m));
          if (algorithm === 'two-block') counts = twoValues(counts, rnd);
          const root = int(rnd, 0, p - 1);
          const where = makeDispls(counts, layout, rnd);
          const want = evaluate(treeOf(algorithm, counts, root, model), counts, model, op === 'gatherv' ? 'gather' : 'scatter').time;
          const { times, copies } = await dataPhaseTraced(op, algorithm, counts, root, model, where);
          expect(times).toEqual([want, want]);
          // the root copies its own block and nothing else (two starts)
          expect(copies[root]).toBe(2 * counts[root]);
        },
      ),
      { numRuns: 25 },
    );
  });

  it.each(['binomial', 'two-block', 'linear'] as VAlgorithm[])(
    '%s with k = 2, 3 ports: at most k operations outstanding, the copy on a port: exactly the k-ported evaluate',
    async (algorithm) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 30 }),
          fc.constantFrom(...DISTRIBUTIONS),
          fc.integer({ min: 2, max: 3 }),
          fc.integer({ min: 0, max: 2 ** 31 - 1 }),
          fc.constantFrom<Op>('gatherv', 'scatterv'),
          async (p, dist, ports, seed, op) => {
            const rnd = rng(seed);
            const model = linearModel({ alpha: int(rnd, 0, 100), beta: 1, gamma: int(rnd, 0, 2), ports, copyAll: rnd() < 0.2 });
            let counts = blockSizes(dist, { p, b: int(rnd, 1, 40), seed });
            if (rnd() < 0.3) counts = counts.map((m) => (rnd() < 0.3 ? 0 : m));
            if (algorithm === 'two-block') counts = twoValues(counts, rnd);
            const root = int(rnd, 0, p - 1);
            const where = makeDispls(counts, int(rnd, 0, 2) === 0 ? 'default' : 'gaps', rnd);
            const want = evaluate(treeOf(algorithm, counts, root, model), counts, model, op === 'gatherv' ? 'gather' : 'scatter').time;
            expect(await dataPhase(op, algorithm, counts, root, model, where)).toEqual([want, want]);
          },
        ),
        { numRuns: 30 },
      );
    },
  );

  it('optimal under a per-pair model (Traff17 Theorem 1 trees)', async () => {
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

  it('p = 1: every algorithm copies the root\'s block once (γ·m₀), as evaluate charges it', async () => {
    // The copy into recv is real (MPI semantics): the simulator and the evaluator both charge it.
    const model = linearModel({ alpha: 10, beta: 1, gamma: 3 });
    const all = linearModel({ alpha: 10, beta: 1, gamma: 3, copyAll: true });
    for (const algorithm of ['linear', 'binomial', 'adaptive', 'optimal', 'binary', 'two-block', 'auto'] as VAlgorithm[]) {
      for (const op of ['gatherv', 'scatterv'] as Op[]) {
        const { times, copies } = await dataPhaseTraced(op, algorithm, [5], 0, model);
        expect(times).toEqual([15, 15]);
        expect(copies).toEqual([10]);
        if (algorithm !== 'adaptive' && algorithm !== 'auto') {
          const tree = treeOf(algorithm, [5], 0, model);
          expect(evaluate(tree, [5], model).time).toBe(15);
          expect(evaluate(tree, [5], all).time).toBe(15);
          expect((await dataPhase(op, algorithm, [5], 0, all))[0]).toBe(15);
        }
      }
    }
  });

  it('linear under copyAll (Traff18 Lemma 4): every rank copies, the root serves in rank order, exactly evaluate', async () => {
    // leaves are ready at γ·m_i: rank 2 before rank 1. The evaluator's star takes them in rank
    // order (21); receives served in arrival order would finish at 20, and scatter sends in
    // rank order at 20 too (the evaluator sends to the last child first, then copies).
    const model = linearModel({ alpha: 0, beta: 1, gamma: 1, copyAll: true });
    const counts = [0, 10, 1];
    const tree = linearTree(counts, model, { root: 0 }).tree;
    for (const op of ['gatherv', 'scatterv'] as Op[]) {
      const want = evaluate(tree, counts, model, op === 'gatherv' ? 'gather' : 'scatter').time;
      expect(want).toBe(21);
      const { times, copies } = await dataPhaseTraced(op, 'linear', counts, 0, model);
      expect(times).toEqual([want, want]);
      // every rank copied its block in each of the two starts
      expect(copies).toEqual(counts.map((m) => 2 * m));
    }
    // without copyAll the leaves copy nothing
    const plain = linearModel({ alpha: 0, beta: 1, gamma: 1 });
    const { copies } = await dataPhaseTraced('gatherv', 'linear', counts, 0, plain);
    expect(copies).toEqual([0, 0, 0]);
  });

  it('two-block with interleaved sizes, γ > 0, gapped and permuted displacements: exactly evaluate, no copy at the root but its own block', async () => {
    // ranks 0, 2, 4 hold 5 elements, 1, 3 hold 1: the large domain {0, 2, 4} is not a
    // consecutive range, so its message reaches root 0 as the blocks' views (vectored).
    const model = linearModel({ alpha: 20, beta: 1, gamma: 1 });
    const counts = [5, 1, 5, 1, 5];
    const placements: Placement[] = [{}, { displs: [1, 7, 9, 15, 17], capacity: 22 }, { displs: [12, 0, 2, 17, 7], capacity: 18 }];
    for (const root of [0, 1, 3]) {
      const tree = twoBlockTree(counts, model, { root }).tree;
      expect(isOrdered(tree)).toBe(false);
      for (const op of ['gatherv', 'scatterv'] as Op[]) {
        const want = evaluate(tree, counts, model, op === 'gatherv' ? 'gather' : 'scatter').time;
        for (const where of placements) {
          const { times, copies } = await dataPhaseTraced(op, 'two-block', counts, root, model, where);
          expect(times).toEqual([want, want]);
          expect(copies[root]).toBe(2 * counts[root]);
        }
      }
    }
  });
});
