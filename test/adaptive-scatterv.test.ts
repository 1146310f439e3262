/**
 * Adaptive scatterv (src/collectives/scatterv/adaptive.ts) on the simulator: every rank gets
 * its block byte for byte, the data phase of a persistent plan ends at exactly the
 * evaluator's scatter time of the builder tree, Lemma 1's linear time, the root's check of
 * the counts before any data moves, and the persistent form.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADAPTIVE_SCATTERV } from '../src/collectives/scatterv/adaptive.js';
import { adaptiveTagKind } from '../src/collectives/adaptive/tags.js';
import { hypercubeRounds } from '../src/collectives/adaptive/hypercube.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { linearModel, type CostModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { adaptiveBinomialTree, type AdaptiveRule } from '../src/trees/adaptive.js';
import { evaluate } from '../src/trees/evaluate.js';
import { int, rng } from './helpers/random.js';
import { checkScattered, scatterSetup, scrambledDispls, SENTINEL, type AdaptiveFlags, type Instance } from './programs/adaptive-common.js';
import { BIG } from './helpers/big.js';
import { instanceArb } from './helpers/adaptive-arb.js';

/** fast-check's default size draws arrays of at most ~12 elements whatever maxLength: ask for long ones (p up to maxP). */

async function scatterOnce(inst: Instance, model: CostModel, flags: AdaptiveFlags, trace = false) {
  return runSim(
    inst.sizes.length,
    async (comm) => {
      const s = scatterSetup(comm, inst, model, flags, 1);
      const plan = await ADAPTIVE_SCATTERV.init(s.input);
      await plan.start();
      return { bad: checkScattered(comm.rank, s.recv, 1), info: plan.info };
    },
    { model, unitBytes: inst.unitBytes, trace },
  );
}

async function timedDataPhase(inst: Instance, model: CostModel, flags: AdaptiveFlags) {
  const res = await runSim(
    inst.sizes.length,
    async (comm) => {
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator has no clock');
      const s = scatterSetup(comm, inst, model, flags, 1);
      const plan = await ADAPTIVE_SCATTERV.init(s.input);
      s.refill(2);
      await clock.sync();
      const t0 = clock.now();
      await plan.start();
      return { t0, t1: clock.now(), bad: checkScattered(comm.rank, s.recv, 2) };
    },
    { model, unitBytes: inst.unitBytes },
  );
  const t0 = res.results[0].t0;
  expect(res.results.every((r) => r.t0 === t0)).toBe(true);
  return { time: Math.max(...res.results.map((r) => r.t1)) - t0, bad: res.results.flatMap((r) => r.bad) };
}


const flagsArb = fc.record({
  lemma4: fc.boolean(),
  rule: fc.constantFrom<AdaptiveRule>('exact', 'lemma1'),
  inPlace: fc.boolean(),
});

describe('adaptive scatterv: data', () => {
  it(`every rank receives its block byte for byte (p ≤ ${BIG ? 256 : 64}, random roots, zero blocks, scrambled displs, in place)`, async () => {
    await fc.assert(
      fc.asyncProperty(instanceArb(BIG ? 256 : 64), flagsArb, async (inst, flags) => {
        const res = await scatterOnce(inst, linearModel({ alpha: 7, beta: 1, gamma: 1 }), flags);
        expect(res.results.flatMap((r) => r.bad)).toEqual([]);
        const p = inst.sizes.length;
        expect(res.results[p - 1].info).toEqual({ algorithm: 'adaptive', constructionRounds: p <= 2 ? p - 1 : hypercubeRounds(p) + 1, height: hypercubeRounds(p) });
      }),
      { numRuns: BIG ? 600 : 150, seed: 1234 },
    );
  });

  it('data messages go down the builder tree, each carrying exactly its subtree’s blocks, after the construction', async () => {
    const rnd = rng(77);
    for (let t = 0; t < (BIG ? 40 : 10); t++) {
      const p = int(rnd, 2, BIG ? 160 : 40);
      const sizes = Array.from({ length: p }, () => int(rnd, 0, 20));
      const inst: Instance = { sizes, root: int(rnd, 0, p - 1), unitBytes: 1 };
      const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
      const res = await scatterOnce(inst, model, {}, true);
      const msgs = res.trace?.messages ?? [];
      const data = msgs.filter((m) => adaptiveTagKind(m.tag) === 'data');
      const tree = adaptiveBinomialTree(sizes, model, { root: inst.root }).tree;
      const sub = (v: number): number => tree.children[v].reduce((a, c) => a + sub(c), sizes[v]);
      expect(data.length).toBe(Array.from(tree.parent).filter((q, v) => q >= 0 && sub(v) > 0).length);
      for (const m of data) {
        expect(tree.parent[m.to]).toBe(m.from);
        expect(m.bytes).toBe(sub(m.to));
      }
      // The root sends its children their ranges in the reverse of the order it received them in the gather tree.
      const fromRoot = data.filter((m) => m.from === inst.root).map((m) => m.to);
      expect(fromRoot).toEqual([...tree.children[inst.root]].reverse().filter((c) => sub(c) > 0));
      expect(res.results.flatMap((r) => r.bad)).toEqual([]);
    }
  });
});

describe('adaptive scatterv: time of the data phase', () => {
  it('persistent plan: the data phase ends at exactly evaluate(builder tree, scatter) (γ > 0, scrambled displs, both rules, Lemma 4)', async () => {
    await fc.assert(
      fc.asyncProperty(
        instanceArb(BIG ? 192 : 48),
        flagsArb,
        fc.constantFrom(0, 1, 3),
        fc.constantFrom(1, 2),
        fc.constantFrom(0, 0.5, 1),
        async (inst, flags, alpha, beta, gamma) => {
          const f = { ...flags, inPlace: false };
          const model = linearModel({ alpha, beta, gamma });
          const bm = f.lemma4 ? linearModel({ alpha, beta, gamma, copyAll: true }) : model;
          const { time, bad } = await timedDataPhase(inst, model, f);
          expect(bad).toEqual([]);
          const b = adaptiveBinomialTree(inst.sizes, bm, { root: inst.root, rule: f.rule });
          expect(time).toBe(evaluate(b.tree, inst.sizes, bm, 'scatter').time);
        },
      ),
      { numRuns: BIG ? 320 : 80, seed: 7 },
    );
  });

  it('copy position mirrored: rank p − 1 whose first gather child lies to its left copies its block before sending it on', async () => {
    const sizes = [1, 2, 3, 4, 10, 10, 100];
    const model = linearModel({ alpha: 5, beta: 1, gamma: 0.5 });
    const b = adaptiveBinomialTree(sizes, model, { root: 1 });
    expect(b.tree.copyAt[6]).toBe(1);
    const { time, bad } = await timedDataPhase({ sizes, root: 1, unitBytes: 1 }, model, {});
    expect(bad).toEqual([]);
    expect(time).toBe(evaluate(b.tree, sizes, model, 'scatter').time);
  });

  it('Lemma 1 free root (rule lemma1, γ = 0, p = 2^d, blocks > 0): the data phase takes ⌈log₂p⌉α + βΣ_{i≠r} m_i', async () => {
    const rnd = rng(321);
    for (const p of [2, 4, 8, 16, 32, 64, ...(BIG ? [128, 256] : [])]) {
      for (const alpha of [1, 100, 1000]) {
        const sizes = Array.from({ length: p }, () => int(rnd, 1, alpha === 1000 ? 5000 : 60));
        const model = linearModel({ alpha, beta: 1, gamma: 0 });
        const r = adaptiveBinomialTree(sizes, model, { rule: 'lemma1' }).root;
        const { time } = await timedDataPhase({ sizes, root: r, unitBytes: 1 }, model, { rule: 'lemma1' });
        expect(time).toBe(Math.log2(p) * alpha + sizes.reduce((a, b) => a + b, 0) - sizes[r]);
      }
    }
  });
});

describe('adaptive scatterv: persistence and errors', () => {
  it('persistent: repeated starts deliver the current send buffer, construction messages only once', async () => {
    const sizes = [4, 0, 9, 1, 1, 0, 30, 2, 2, 5, 0, 8, 3];
    const p = sizes.length;
    const inst: Instance = { sizes, root: 2, unitBytes: 3, displs: scrambledDispls(sizes, rng(5)) };
    const model = linearModel({ alpha: 5, beta: 1, gamma: 1 });
    const res = await runSim(
      p,
      async (comm) => {
        const s = scatterSetup(comm, inst, model, {}, 0);
        const plan = await ADAPTIVE_SCATTERV.init(s.input);
        const bad: string[] = [];
        for (let salt = 0; salt < 3; salt++) {
          s.refill(salt);
          await plan.start();
          bad.push(...checkScattered(comm.rank, s.recv, salt));
        }
        return bad;
      },
      { model, unitBytes: 3, trace: true },
    );
    expect(res.results.flat()).toEqual([]);
    const msgs = res.trace?.messages ?? [];
    expect(msgs.filter((m) => adaptiveTagKind(m.tag) === 'exchange').length).toBe(2 * (p - 1));
    expect(msgs.filter((m) => adaptiveTagKind(m.tag) === 'data').length % 3).toBe(0);
  });

  it('receive counts that cancel within a range (totals agree): InvalidArgumentError on counts at the root, no data sent', async () => {
    const model = linearModel({ alpha: 3, beta: 1 });
    for (const [sizes, own, root] of [
      [[2, 2, 5, 2], [2, 2, 4, 3], 0],
      [[3, 1, 4, 1, 5, 9, 2, 6], [3, 1, 4, 1, 6, 9, 1, 6], 1],
      [[3, 1, 4, 1, 5, 9, 2, 6], [3, 2, 4, 1, 5, 7, 2, 7], 4],
    ] as const) {
      const p = sizes.length;
      const bufs: Uint8Array[] = [];
      const err = await runSim(
        p,
        async (comm) => {
          const me = comm.rank;
          const s = scatterSetup(comm, { sizes: [...sizes], root, unitBytes: 1 }, model, {}, 1);
          const recv = own[me] === sizes[me] ? s.recv : new Uint8Array(own[me]).fill(SENTINEL);
          bufs[me] = recv;
          const plan = await ADAPTIVE_SCATTERV.init({ ...s.input, count: own[me], recv });
          await plan.start();
        },
        { model },
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CommunicationError);
      const cause = (err as CommunicationError).cause as InvalidArgumentError;
      expect(cause).toBeInstanceOf(InvalidArgumentError);
      expect(cause.field).toBe('counts');
      expect(cause.rank).toBe(root);
      bufs.forEach((b, r) => {
        if (r !== root) expect(Array.from(b).every((x) => x === SENTINEL)).toBe(true);
      });
    }
  });

  it('a rank whose count disagrees with the root: InvalidArgumentError on counts at the root, before any block is sent', async () => {
    const sizes = [2, 3, 1, 4, 0, 2, 5, 1, 1, 3, 2, 2];
    const p = sizes.length;
    const root = 8;
    for (const liar of [0, 4, 9, 11]) {
      const bufs: Uint8Array[] = [];
      const err = await runSim(
        p,
        async (comm) => {
          const s = scatterSetup(comm, { sizes, root, unitBytes: 1 }, linearModel({ alpha: 1, beta: 1 }), {}, 1);
          const recv = comm.rank === liar ? new Uint8Array(sizes[liar] + 2).fill(SENTINEL) : s.recv;
          bufs[comm.rank] = recv;
          const input = comm.rank === liar ? { ...s.input, count: sizes[liar] + 2, recv } : s.input;
          const plan = await ADAPTIVE_SCATTERV.init(input);
          await plan.start();
        },
        { model: linearModel({ alpha: 1, beta: 1 }) },
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CommunicationError);
      const cause = (err as CommunicationError).cause as InvalidArgumentError;
      expect(cause).toBeInstanceOf(InvalidArgumentError);
      expect(cause.field).toBe('counts');
      expect(cause.rank).toBe(root);
      // The check runs during the construction: no rank received any data.
      bufs.forEach((b, r) => {
        if (r !== root) expect(Array.from(b).every((x) => x === SENTINEL)).toBe(true);
      });
    }
  });
});
