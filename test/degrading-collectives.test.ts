/**
 * Degrading gatherv and scatterv (src/collectives/{gatherv,scatterv}/degrading.ts) on the
 * simulator: the distributed construction with the verdicts gives every rank exactly its place
 * in `degradingTree` (the central builder), the data phase of a persistent plan ends at exactly
 * the evaluator's time of that tree (gather and scatter; linear and per-pair models), the
 * verdicts' messages are what the rule says, and bad input fails with typed errors on every rank.
 * Data byte for byte on every transport: v-conformance (sim), collectives-threads, the MPI suite.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { degradingContext, degradingRole } from '../src/collectives/adaptive/degrading.js';
import { nextPlanTags } from '../src/collectives/adaptive/tags.js';
import { adaptiveTagKind } from '../src/collectives/adaptive/tags.js';
import { DEGRADING_GATHERV } from '../src/collectives/gatherv/degrading.js';
import { DEGRADING_SCATTERV } from '../src/collectives/scatterv/degrading.js';
import { InvalidArgumentError } from '../src/errors.js';
import { linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { degradingTree } from '../src/trees/degrading.js';
import { evaluate } from '../src/trees/evaluate.js';
import { blockSizes, type DistributionName } from '../src/workloads/distributions.js';
import { BIG } from './helpers/big.js';
import { instanceArb } from './helpers/adaptive-arb.js';
import { int, rng } from './helpers/random.js';
import { checkGathered, checkScattered, gatherSetup, scatterSetup, type Instance } from './programs/adaptive-common.js';

/** Every rank's role from the distributed construction: its parent and its children in order. */
async function distributedTree(inst: Instance, model: CostModel) {
  const p = inst.sizes.length;
  const res = await runSim(
    p,
    async (comm) => {
      const s = gatherSetup(comm, inst, model, { overlap: false });
      const ctx = degradingContext(comm, inst.root, model, s.input.adaptive);
      const role = await degradingRole(s.input, ctx, nextPlanTags(comm));
      return { parent: role.parent?.peer ?? -1, children: role.children.map((c) => c.peer) };
    },
    { model, unitBytes: inst.unitBytes, trace: true },
  );
  return { parent: res.results.map((r) => r.parent), children: res.results.map((r) => r.children), messages: res.trace?.messages ?? [] };
}

/** Persistent plan of `op`: planning, ideal barrier, one timed start; the root's and the last rank's end. */
async function timedDataPhase(op: 'gatherv' | 'scatterv', inst: Instance, model: CostModel) {
  const p = inst.sizes.length;
  const res = await runSim(
    p,
    async (comm) => {
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator has no clock');
      if (op === 'gatherv') {
        const s = gatherSetup(comm, inst, model, { overlap: false }, 1);
        const plan = await DEGRADING_GATHERV.init(s.input);
        await clock.sync();
        const t0 = clock.now();
        await plan.start();
        return { t0, t1: clock.now(), bad: s.recv ? checkGathered(inst, s.recv, 1) : [], info: plan.info };
      }
      const s = scatterSetup(comm, inst, model, { overlap: false }, 1);
      const plan = await DEGRADING_SCATTERV.init(s.input);
      await clock.sync();
      const t0 = clock.now();
      await plan.start();
      return { t0, t1: clock.now(), bad: checkScattered(comm.rank, s.recv, 1), info: plan.info };
    },
    { model, unitBytes: inst.unitBytes },
  );
  const t0 = res.results[0].t0;
  return {
    time: Math.max(...res.results.map((r) => r.t1)) - t0,
    rootTime: res.results[inst.root].t1 - t0,
    bad: res.results.flatMap((r) => r.bad),
    info: res.results[inst.root].info,
  };
}

/** Instances where late partners open (large α against the data, spikes and ramps), and plain ones. */
function gridInstances(): { inst: Instance; model: CostModel }[] {
  const out: { inst: Instance; model: CostModel }[] = [];
  const dists: DistributionName[] = ['spikes', 'increasing', 'decreasing', 'random', 'two-blocks-small', 'same'];
  for (const p of [5, 17, 64]) {
    for (const dist of dists) {
      for (const b of [1, 100, 1000]) {
        for (const alpha of [1, 100]) {
          for (const root of [0, p >> 1, p - 1]) {
            out.push({ inst: { sizes: blockSizes(dist, { p, b }), root, unitBytes: 1 }, model: linearModel({ alpha, beta: 1, gamma: alpha === 1 ? 0 : 1 }) });
          }
        }
      }
    }
  }
  return out;
}

describe('degrading construction: every rank gets its place in degradingTree', () => {
  it('parents and children (in order) equal the central builder over a grid where partners open; at most one verdict per rank, from its construction parent', async () => {
    let opened = 0;
    let verdictCount = 0;
    for (const { inst, model } of gridInstances()) {
      const want = degradingTree(inst.sizes, model, { root: inst.root });
      const got = await distributedTree(inst, model);
      expect(got.parent).toEqual(Array.from(want.tree.parent));
      expect(got.children).toEqual(want.tree.children.map((c) => [...c]));
      opened += want.stats.opened;
      // a verdict goes down a construction edge: its receiver ends under the sender (confirmed) or under the root
      const verdicts = got.messages.filter((m) => adaptiveTagKind(m.tag) === 'verdict');
      const seen = new Set<number>();
      for (const m of verdicts) {
        expect(m.bytes).toBe(16);
        expect(seen.has(m.to)).toBe(false);
        seen.add(m.to);
        expect([m.from, inst.root]).toContain(want.tree.parent[m.to]);
      }
      verdictCount += verdicts.length;
    }
    expect(opened).toBeGreaterThan(20);
    expect(verdictCount).toBeGreaterThan(100);
  }, 120_000);

  it('random instances (zero blocks, any root, α 0…10^4, γ 0…2), and per-pair models', async () => {
    await fc.assert(
      fc.asyncProperty(instanceArb(BIG ? 160 : 48), fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(0, 1, 2), async (inst, alpha, gamma) => {
        const model = linearModel({ alpha, beta: 1, gamma });
        const want = degradingTree(inst.sizes, model, { root: inst.root });
        const got = await distributedTree(inst, model);
        expect(got.parent).toEqual(Array.from(want.tree.parent));
        expect(got.children).toEqual(want.tree.children.map((c) => [...c]));
      }),
      { numRuns: BIG ? 300 : 60, seed: 21 },
    );
    const rnd = rng(5);
    for (let t = 0; t < 12; t++) {
      const p = int(rnd, 2, 24);
      const matrix = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, lo, hi)));
      const model = pairwiseModel({ alpha: matrix(0, 2000), beta: matrix(1, 3), gamma: 1 });
      const inst = { sizes: Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 300))), root: int(rnd, 0, p - 1), unitBytes: 1 };
      const want = degradingTree(inst.sizes, model, { root: inst.root });
      const got = await distributedTree(inst, model);
      expect(got.parent).toEqual(Array.from(want.tree.parent));
      expect(got.children).toEqual(want.tree.children.map((c) => [...c]));
    }
  }, 120_000);
});

describe('degrading gatherv and scatterv: time of the data phase', () => {
  it('a persistent plan ends at exactly evaluate(degradingTree) — gather and scatter, over the grid', async () => {
    for (const { inst, model } of gridInstances().filter((_, k) => k % 3 === 0)) {
      const tree = degradingTree(inst.sizes, model, { root: inst.root }).tree;
      for (const op of ['gatherv', 'scatterv'] as const) {
        const { time, rootTime, bad, info } = await timedDataPhase(op, inst, model);
        expect(bad).toEqual([]);
        expect(info.algorithm).toBe('degrading');
        const want = evaluate(tree, inst.sizes, model, op === 'gatherv' ? 'gather' : 'scatter').time;
        expect(op === 'gatherv' ? rootTime : time).toBe(want);
      }
    }
  }, 120_000);

  it('random instances with scrambled displacements and 4-byte units, linear and per-pair models', async () => {
    await fc.assert(
      fc.asyncProperty(instanceArb(BIG ? 96 : 32), fc.integer({ min: 0, max: 3000 }), fc.constantFrom('gatherv' as const, 'scatterv' as const), async (inst, alpha, op) => {
        const model = linearModel({ alpha, beta: 1, gamma: 1 });
        const tree = degradingTree(inst.sizes, model, { root: inst.root }).tree;
        const { time, rootTime, bad } = await timedDataPhase(op, inst, model);
        expect(bad).toEqual([]);
        expect(op === 'gatherv' ? rootTime : time).toBe(evaluate(tree, inst.sizes, model, op === 'gatherv' ? 'gather' : 'scatter').time);
      }),
      { numRuns: BIG ? 200 : 40, seed: 8 },
    );
  }, 120_000);
});

describe('degrading: bad input', () => {
  const inst: Instance = { sizes: [3, 0, 5, 2, 9, 1], root: 2, unitBytes: 1 };

  async function failures(model: CostModel, flags: { lemma4?: boolean; rule?: 'exact' | 'lemma1' }) {
    const res = await runSim(
      inst.sizes.length,
      async (comm) => {
        const s = gatherSetup(comm, inst, model, { ...flags, overlap: false });
        try {
          await DEGRADING_GATHERV.init(s.input);
          return undefined;
        } catch (e) {
          return e;
        }
      },
      { model },
    );
    return res.results;
  }

  it('copyAll, Lemma 4, the Lemma 1 rule and k ports: InvalidArgumentError on every rank, nothing sent', async () => {
    const cases: [CostModel, { lemma4?: boolean; rule?: 'exact' | 'lemma1' }, string][] = [
      [linearModel({ alpha: 1, beta: 1, copyAll: true }), {}, 'model'],
      [linearModel({ alpha: 1, beta: 1 }), { lemma4: true }, 'adaptive.lemma4'],
      [linearModel({ alpha: 1, beta: 1 }), { rule: 'lemma1' }, 'adaptive.rule'],
      [linearModel({ alpha: 1, beta: 1, ports: 2 }), {}, 'model'],
    ];
    for (const [model, flags, field] of cases) {
      const errs = await failures(model, flags);
      for (const [rank, e] of errs.entries()) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect(e).toMatchObject({ field, rank });
      }
    }
  });

  it("a rank whose own count disagrees with the root's counts: the root's InvalidArgumentError names the range", async () => {
    const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const res = await runSim(
      inst.sizes.length,
      async (comm) => {
        const wrong: Instance = { ...inst, sizes: inst.sizes.map((s, i) => (i === 4 && comm.rank === 4 ? s + 1 : s)) };
        const s = gatherSetup(comm, wrong, model, { overlap: false });
        return DEGRADING_GATHERV.init(s.input).then(
          () => undefined,
          (e: unknown) => e,
        );
      },
      { model, timeoutMs: 5_000 },
    ).catch((e: unknown) => ({ results: [e] }));
    const rootErr = res.results.find((e) => e instanceof InvalidArgumentError);
    expect(rootErr).toMatchObject({ field: 'counts', rank: inst.root });
  });
});
