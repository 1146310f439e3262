/**
 * Adaptive gatherv (src/collectives/gatherv/adaptive.ts) on the simulator: data byte for byte
 * (displacements honoured, nothing outside the blocks written), the data phase of a
 * persistent plan at exactly the evaluator's time of the builder tree, Lemma 1's linear time,
 * the overlapped construction, the root's check of the counts and the persistent form.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADAPTIVE_GATHERV } from '../src/collectives/gatherv/adaptive.js';
import { adaptiveTagKind } from '../src/collectives/adaptive/tags.js';
import { hypercubeRounds } from '../src/collectives/adaptive/hypercube.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { linearModel, type CostModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { adaptiveBinomialTree, type AdaptiveRule } from '../src/trees/adaptive.js';
import { evaluate } from '../src/trees/evaluate.js';
import { int, rng } from './helpers/random.js';
import { checkGathered, gatherSetup, scrambledDispls, type AdaptiveFlags, type Instance } from './programs/adaptive-common.js';
import { BIG } from './helpers/big.js';
import { instanceArb } from './helpers/adaptive-arb.js';

/** fast-check's default size draws arrays of at most ~12 elements whatever maxLength: ask for long ones (p up to maxP). */

/** One-shot gatherv of `inst` on the simulator; returns the root's mismatches and the sim result. */
async function gatherOnce(inst: Instance, model: CostModel, flags: AdaptiveFlags, trace = false) {
  const p = inst.sizes.length;
  const res = await runSim(
    p,
    async (comm) => {
      const s = gatherSetup(comm, inst, model, flags, 1);
      const plan = await ADAPTIVE_GATHERV.init(s.input);
      await plan.start();
      return { bad: s.recv ? checkGathered(inst, s.recv, 1) : [], info: plan.info };
    },
    { model, unitBytes: inst.unitBytes, trace },
  );
  return res;
}

/** Persistent plan: construction (and with overlap one warm-up start), ideal barrier, then one timed start. */
async function timedDataPhase(inst: Instance, model: CostModel, flags: AdaptiveFlags) {
  const p = inst.sizes.length;
  const res = await runSim(
    p,
    async (comm) => {
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator has no clock');
      const s = gatherSetup(comm, inst, model, flags, 1);
      const plan = await ADAPTIVE_GATHERV.init(s.input);
      if (flags.overlap !== false) await plan.start();
      s.refill(2);
      await clock.sync();
      const t0 = clock.now();
      await plan.start();
      const t1 = clock.now();
      return { t0, t1, bad: s.recv ? checkGathered(inst, s.recv, 2) : [] };
    },
    { model, unitBytes: inst.unitBytes },
  );
  const t0 = res.results[0].t0;
  expect(res.results.every((r) => r.t0 === t0)).toBe(true);
  return { time: Math.max(...res.results.map((r) => r.t1)) - t0, rootTime: res.results[inst.root].t1 - t0, bad: res.results[inst.root].bad };
}

function builderModel(model: CostModel, lemma4: boolean | undefined): CostModel {
  const l = model.linear as NonNullable<CostModel['linear']>;
  return lemma4 ? linearModel({ ...l, copyAll: true }) : model;
}


const flagsArb = fc.record({
  lemma4: fc.boolean(),
  overlap: fc.boolean(),
  rule: fc.constantFrom<AdaptiveRule>('exact', 'lemma1'),
  inPlace: fc.boolean(),
});

describe('adaptive gatherv: data', () => {
  it(`gathers every block byte for byte at its displacement, nothing else written (p ≤ ${BIG ? 256 : 64}, random roots, zero blocks, scrambled displs)`, async () => {
    await fc.assert(
      fc.asyncProperty(instanceArb(BIG ? 256 : 64), flagsArb, async (inst, flags) => {
        const model = linearModel({ alpha: 7, beta: 1, gamma: 1 });
        const res = await gatherOnce(inst, model, flags);
        expect(res.results[inst.root].bad).toEqual([]);
        const p = inst.sizes.length;
        expect(res.results[0].info).toEqual({ algorithm: 'adaptive', constructionRounds: p <= 2 ? p - 1 : hypercubeRounds(p) + 1, height: hypercubeRounds(p) });
      }),
      { numRuns: BIG ? 600 : 150, seed: 4711 },
    );
  });

  it('p = 1: the root copies its block (or leaves it in place) and sends nothing', async () => {
    const model = linearModel({ alpha: 10, beta: 1, gamma: 2 });
    for (const inPlace of [false, true]) {
      const res = await gatherOnce({ sizes: [5], root: 0, unitBytes: 2 }, model, { inPlace }, true);
      expect(res.results[0].bad).toEqual([]);
      expect(res.messages).toBe(0);
      expect(res.time).toBe(inPlace ? 0 : 10);
    }
  });

  it('blocks move only as packed rank ranges: every data message carries exactly the blocks of a consecutive range', async () => {
    const rnd = rng(31);
    for (let t = 0; t < (BIG ? 40 : 10); t++) {
      const p = int(rnd, 2, BIG ? 160 : 40);
      const sizes = Array.from({ length: p }, () => int(rnd, 0, 20));
      const inst: Instance = { sizes, root: int(rnd, 0, p - 1), unitBytes: 1 };
      const res = await gatherOnce(inst, linearModel({ alpha: 10, beta: 1, gamma: 1 }), { overlap: t % 2 === 0 }, true);
      const data = (res.trace?.messages ?? []).filter((m) => adaptiveTagKind(m.tag) === 'data');
      const tree = adaptiveBinomialTree(sizes, linearModel({ alpha: 10, beta: 1, gamma: 1 }), { root: inst.root }).tree;
      const nonEmpty = Array.from(tree.parent).filter((q, v) => q >= 0 && subtreeSize(tree.children, v, sizes) > 0).length;
      expect(data.length).toBe(nonEmpty);
      for (const m of data) {
        expect(tree.parent[m.from]).toBe(m.to);
        expect(m.bytes).toBe(subtreeSize(tree.children, m.from, sizes));
      }
      expect(res.results[inst.root].bad).toEqual([]);
    }
  });
});

function subtreeSize(children: ReadonlyArray<readonly number[]>, v: number, sizes: readonly number[]): number {
  let s = sizes[v];
  for (const c of children[v]) s += subtreeSize(children, c, sizes);
  return s;
}

describe('adaptive gatherv: time of the data phase', () => {
  it('persistent plan: the data phase ends at exactly evaluate(builder tree) (random instances, γ > 0, scrambled displs, both rules, Lemma 4, overlap on/off)', async () => {
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
          const { time, rootTime, bad } = await timedDataPhase(inst, model, f);
          expect(bad).toEqual([]);
          const b = adaptiveBinomialTree(inst.sizes, builderModel(model, f.lemma4), { root: inst.root, rule: f.rule });
          const want = evaluate(b.tree, inst.sizes, builderModel(model, f.lemma4), 'gather').time;
          expect(rootTime).toBe(want);
          expect(time).toBe(want);
        },
      ),
      { numRuns: BIG ? 320 : 80, seed: 99 },
    );
  });

  it('Lemma 1 free root (rule lemma1, γ = 0, p = 2^d, blocks > 0): the data phase takes ⌈log₂p⌉α + βΣ_{i≠r} m_i', async () => {
    const rnd = rng(123);
    for (const p of [2, 4, 8, 16, 32, 64, ...(BIG ? [128, 256] : [])]) {
      for (let t = 0; t < 3; t++) {
        const sizes = Array.from({ length: p }, () => int(rnd, 1, t === 2 ? 5000 : 60));
        const alpha = [1, 100, 1000][t];
        const model = linearModel({ alpha, beta: 1, gamma: 0 });
        const r = adaptiveBinomialTree(sizes, model, { rule: 'lemma1' }).root;
        const { time } = await timedDataPhase({ sizes, root: r, unitBytes: 1 }, model, { rule: 'lemma1', overlap: t !== 1 });
        const others = sizes.reduce((a, b) => a + b, 0) - sizes[r];
        expect(time).toBe(Math.log2(p) * alpha + others);
      }
    }
  });

  it('copy position: rank p − 1, alone in round 0, first receives a non-leaf range from its left and copies after it', async () => {
    // p = 7: rank 6 passes through round 0; in round 1 it receives [4, 5] (S = 20 ≤ (1 − γ)·m_6).
    const sizes = [1, 2, 3, 4, 10, 10, 100];
    const model = linearModel({ alpha: 5, beta: 1, gamma: 0.5 });
    const b = adaptiveBinomialTree(sizes, model, { root: 1 });
    expect(b.tree.parent[4] === 6 || b.tree.parent[5] === 6).toBe(true);
    expect(b.tree.copyAt[6]).toBe(1);
    for (const overlap of [true, false]) {
      const { time, bad } = await timedDataPhase({ sizes, root: 1, unitBytes: 1 }, model, { overlap });
      expect(bad).toEqual([]);
      expect(time).toBe(evaluate(b.tree, sizes, model).time);
    }
  });

  it('an MPI root pays at most what the builder says for it (fixed root) and the free root pays the Lemma 1 time', async () => {
    const sizes = [3, 0, 5, 2, 0, 0, 7, 1, 4, 2, 6]; // Traff18 Fig. 1, root 9
    const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const { time } = await timedDataPhase({ sizes, root: 9, unitBytes: 1 }, model, { overlap: false });
    expect(time).toBe(adaptiveBinomialTree(sizes, model, { root: 9 }).time);
  });
});

describe('adaptive gatherv: overlap, persistence, errors', () => {
  it('overlapped construction: the first start already delivers; data messages of a rank start before its construction ends', async () => {
    const p = 32;
    const rnd = rng(8);
    const sizes = Array.from({ length: p }, () => int(rnd, 1, 400));
    const inst: Instance = { sizes, root: 11, unitBytes: 1 };
    const model = linearModel({ alpha: 50, beta: 1, gamma: 0 });
    const over = await gatherOnce(inst, model, { overlap: true }, true);
    const serial = await gatherOnce(inst, model, { overlap: false }, true);
    expect(over.results[inst.root].bad).toEqual([]);
    const msgs = over.trace?.messages ?? [];
    const lastConstruction = Math.max(...msgs.filter((m) => adaptiveTagKind(m.tag) !== 'data').map((m) => m.end));
    const firstData = Math.min(...msgs.filter((m) => adaptiveTagKind(m.tag) === 'data').map((m) => m.start));
    expect(firstData).toBeLessThan(lastConstruction);
    expect(over.time).toBeLessThanOrEqual(serial.time);
  });

  it('persistent: repeated starts gather the current contents without any new construction message', async () => {
    const p = 13;
    const inst: Instance = { sizes: [4, 0, 9, 1, 1, 0, 30, 2, 2, 5, 0, 8, 3], root: 6, unitBytes: 2, displs: scrambledDispls([4, 0, 9, 1, 1, 0, 30, 2, 2, 5, 0, 8, 3], rng(3)) };
    const model = linearModel({ alpha: 5, beta: 1, gamma: 1 });
    for (const overlap of [true, false]) {
      const res = await runSim(
        p,
        async (comm) => {
          const s = gatherSetup(comm, inst, model, { overlap }, 0);
          const plan = await ADAPTIVE_GATHERV.init(s.input);
          const bad: string[] = [];
          for (let salt = 0; salt < 3; salt++) {
            s.refill(salt);
            await plan.start();
            if (s.recv) bad.push(...checkGathered(inst, s.recv, salt));
          }
          return bad;
        },
        { model, unitBytes: 2, trace: true },
      );
      expect(res.results[inst.root]).toEqual([]);
      const msgs = res.trace?.messages ?? [];
      const construction = msgs.filter((m) => adaptiveTagKind(m.tag) !== 'data').length;
      const data = msgs.filter((m) => adaptiveTagKind(m.tag) === 'data').length;
      expect(construction).toBeLessThanOrEqual(4 * (p - 1));
      expect(data % 3).toBe(0);
      expect(data).toBeGreaterThan(0);
    }
  });

  it('a rank whose count disagrees with the root: InvalidArgumentError on counts at the root naming the range, before wrong data lands', async () => {
    const p = 12;
    const sizes = [2, 3, 1, 4, 0, 2, 5, 1, 1, 3, 2, 2];
    for (const overlap of [true, false]) {
      for (const liar of [0, 4, 7, 11]) {
        const root = 5;
        const inst: Instance = { sizes, root, unitBytes: 1 };
        const model = linearModel({ alpha: 3, beta: 1 });
        let rootBuf: Uint8Array | undefined;
        const run = runSim(
          p,
          async (comm) => {
            const s = gatherSetup(comm, inst, model, { overlap }, 1);
            if (comm.rank === root) rootBuf = s.recv;
            // The liar contributes one element more than the root's counts say.
            const input = comm.rank === liar ? { ...s.input, count: sizes[liar] + 1, send: new Uint8Array(sizes[liar] + 1) } : s.input;
            const plan = await ADAPTIVE_GATHERV.init(input);
            await plan.start();
          },
          { model },
        );
        const err = await run.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(CommunicationError);
        const cause = (err as CommunicationError).cause;
        expect(cause).toBeInstanceOf(InvalidArgumentError);
        expect((cause as InvalidArgumentError).field).toBe('counts');
        expect((cause as InvalidArgumentError).rank).toBe(root);
        expect((cause as Error).message).toMatch(new RegExp(`ranks \\d+\\.\\.\\d+`));
        const m = /ranks (\d+)\.\.(\d+)/.exec((cause as Error).message) as RegExpExecArray;
        expect(liar).toBeGreaterThanOrEqual(Number(m[1]));
        expect(liar).toBeLessThanOrEqual(Number(m[2]));
        // Nothing of the offending range reached the root's buffer.
        const off = sizes.slice(0, Number(m[1])).reduce((a, b) => a + b, 0);
        const len = sizes.slice(Number(m[1]), Number(m[2]) + 1).reduce((a, b) => a + b, 0);
        expect(Array.from((rootBuf as Uint8Array).subarray(off, off + len)).every((b) => b === 0xee)).toBe(true);
      }
    }
  });

  /** Runs a gatherv where rank i contributes own[i] elements while the root's counts say sizes[i]. */
  async function gatherWithOwnCounts(sizes: number[], own: number[], root: number, overlap: boolean, lemma4 = false) {
    const p = sizes.length;
    const inst: Instance = { sizes, root, unitBytes: 1 };
    const model = linearModel({ alpha: 3, beta: 1, gamma: 1 });
    let rootBuf: Uint8Array | undefined;
    const err = await runSim(
      p,
      async (comm) => {
        const s = gatherSetup(comm, inst, model, { overlap, lemma4 }, 1);
        if (comm.rank === root) rootBuf = s.recv;
        const me = comm.rank;
        const input = own[me] === sizes[me] ? s.input : { ...s.input, count: own[me], send: new Uint8Array(own[me]).fill(me) };
        const plan = await ADAPTIVE_GATHERV.init(input);
        await plan.start();
        return s.recv ? checkGathered(inst, s.recv, 1) : [];
      },
      { model },
    ).then(
      (res) => res.results.flat(),
      (e: unknown) => e,
    );
    return { err, rootBuf: rootBuf as Uint8Array };
  }

  it('count errors that cancel within a range (totals agree): InvalidArgumentError on counts at the root, never wrong data', async () => {
    // Traff18 Lemma 3 reports only range totals; ranks 2 and 3 disagree with the root but their sum is right
    for (const overlap of [true, false]) {
      const { err, rootBuf } = await gatherWithOwnCounts([2, 2, 5, 2], [2, 2, 4, 3], 0, overlap);
      expect(err).toBeInstanceOf(CommunicationError);
      const cause = (err as CommunicationError).cause as InvalidArgumentError;
      expect(cause).toBeInstanceOf(InvalidArgumentError);
      expect(cause.field).toBe('counts');
      expect(cause.rank).toBe(0);
      expect(cause.message).toMatch(/ranks 2\.\.3/);
      expect(Array.from(rootBuf.subarray(4, 11)).every((b) => b === 0xee)).toBe(true);
    }
  });

  it('random cancelling count errors inside one range are rejected at the root (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 24 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.boolean(),
        fc.boolean(),
        async (p, seed, overlap, lemma4) => {
          const r = rng(seed);
          const sizes = Array.from({ length: p }, () => int(r, 0, 6));
          const root = int(r, 0, p - 1);
          // move 1..3 elements from one non-root rank to another, and maybe a third rank in between
          const ranks = Array.from({ length: p }, (_, i) => i).filter((i) => i !== root);
          if (ranks.length < 2) return;
          const a = ranks[int(r, 0, ranks.length - 1)];
          const b = ranks.filter((i) => i !== a)[int(r, 0, ranks.length - 2)];
          const own = sizes.slice();
          const k = Math.min(own[a], int(r, 1, 3));
          if (k === 0) return;
          own[a] -= k;
          own[b] += k;
          const { err } = await gatherWithOwnCounts(sizes, own, root, overlap, lemma4);
          // never silently wrong data: either an error, and then the root's InvalidArgumentError on counts
          expect(err).toBeInstanceOf(CommunicationError);
          const cause = (err as CommunicationError).cause as InvalidArgumentError;
          expect(cause).toBeInstanceOf(InvalidArgumentError);
          expect(cause.field).toBe('counts');
          expect(cause.rank).toBe(root);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a k-ported model: init waits for the construction (no overlapped first start), the first start is the compiled data phase', async () => {
    const model = linearModel({ alpha: 50, beta: 1, ports: 2 });
    const inst: Instance = { sizes: [1, 5, 2, 0, 9, 3, 3, 7], root: 3, unitBytes: 1 };
    const res = await gatherOnce(inst, model, { overlap: true }, true);
    expect(res.results[inst.root].bad).toEqual([]);
    // every rank sends its data only after its own part of the construction is over
    const msgs = res.trace?.messages ?? [];
    for (let v = 0; v < inst.sizes.length; v++) {
      const mine = msgs.filter((m) => m.from === v || m.to === v);
      const built = Math.max(0, ...mine.filter((m) => adaptiveTagKind(m.tag) !== 'data').map((m) => m.end));
      for (const m of mine) if (adaptiveTagKind(m.tag) === 'data' && m.from === v) expect(m.start).toBeGreaterThanOrEqual(built);
    }
    expect(msgs.some((m) => adaptiveTagKind(m.tag) === 'data')).toBe(true);
  });
});
