/**
 * The k-ported adaptive gatherv/scatterv (Traff18 §2, Theorem 1's k-ported remark;
 * src/collectives/adaptive/kported-construct.ts, kported-decide.ts, schedule.ts) on the
 * simulator, k ∈ {2, 3, 4}:
 * - every rank's role (parent, children in order, copy position) is the central builder's
 *   `adaptiveBinomialTree(sizes, model, { root, rule })`, bit for bit (the final record's time
 *   too), both rules, Lemma 4, linear and per-pair models, zero blocks, any root;
 * - construction messages are constant-size (48 + 8k-byte records, 16 + 24k-byte
 *   notifications), ⌈log_{k+1}p⌉ rounds of exchanges within groups of ≤ k + 1 ranges and a
 *   causal depth of at most constructionRounds;
 * - the data phase of a persistent plan ends at exactly evaluate(tree, sizes, model, op) for
 *   gather and scatter, and delivers every block byte for byte (scrambled displacements, unit
 *   1 or 4 bytes).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator, Status } from '../src/comm/communicator.js';
import { constructAdaptive, constructionRounds, type AdaptiveRole } from '../src/collectives/adaptive/construct.js';
import { groupOf, hypercubeRounds } from '../src/collectives/adaptive/hypercube.js';
import { notifyBytesK } from '../src/collectives/adaptive/kported-construct.js';
import { recordBytesK } from '../src/collectives/adaptive/kported-decide.js';
import { adaptiveContext, roleTree } from '../src/collectives/adaptive/plan.js';
import { adaptiveTagKind, nextPlanTags } from '../src/collectives/adaptive/tags.js';
import { ADAPTIVE_GATHERV } from '../src/collectives/gatherv/adaptive.js';
import { ADAPTIVE_SCATTERV } from '../src/collectives/scatterv/adaptive.js';
import { DEGRADING_GATHERV } from '../src/collectives/gatherv/degrading.js';
import { InvalidArgumentError, type CommunicationError } from '../src/errors.js';
import { linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { adaptiveBinomialTree, type AdaptiveRule } from '../src/trees/adaptive.js';
import { evaluate } from '../src/trees/evaluate.js';
import type { Tree } from '../src/trees/tree.js';
import { BIG } from './helpers/big.js';
import { instanceArb } from './helpers/adaptive-arb.js';
import { int, rng } from './helpers/random.js';
import { checkGathered, checkScattered, gatherSetup, scatterSetup, type AdaptiveFlags, type Instance } from './programs/adaptive-common.js';

const KS = [2, 3, 4] as const;

/** A cost model of the instance: homogeneous linear or per pair (Hockney), k ports, with or without copyAll. */
interface ModelSpec {
  readonly kind: 'linear' | 'pairwise';
  readonly k: number;
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  readonly seed: number;
}

function makeModel(s: ModelSpec, p: number, copyAll: boolean): CostModel {
  if (s.kind === 'linear') return linearModel({ alpha: s.alpha, beta: s.beta, gamma: s.gamma, ports: s.k, copyAll });
  const rnd = rng(s.seed);
  const mat = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => lo + (hi - lo) * rnd()));
  const gamma = Array.from({ length: p }, () => s.gamma * rnd());
  return pairwiseModel({ alpha: mat(0, 2 * s.alpha + 1), beta: mat(0.25, 2 * s.beta + 0.25), gamma, ports: s.k, copyAll });
}

const specArb = fc.record({
  kind: fc.constantFrom<'linear' | 'pairwise'>('linear', 'pairwise'),
  k: fc.constantFrom(...KS),
  alpha: fc.constantFrom(0, 1, 3, 10, 2.5),
  beta: fc.constantFrom(1, 0.5, 2),
  gamma: fc.constantFrom(0, 0.5, 1, 2),
  seed: fc.nat(),
});

const flagsArb = fc.record({
  lemma4: fc.boolean(),
  overlap: fc.boolean(),
  rule: fc.constantFrom<AdaptiveRule>('exact', 'lemma1'),
});

/** The model the plan is given (copyAll only by the model when `byModel`), and the one the builder and evaluate use. */
function models(spec: ModelSpec, p: number, lemma4: boolean, byModel: boolean): { plan: CostModel; builder: CostModel } {
  const builder = makeModel(spec, p, lemma4);
  return { plan: byModel ? builder : makeModel(spec, p, false), builder };
}

function expectSameTree(got: Tree, want: Tree): void {
  expect(got.root).toBe(want.root);
  expect(Array.from(got.parent)).toEqual(Array.from(want.parent));
  expect(got.children.map((k) => [...k])).toEqual(want.children.map((k) => [...k]));
  expect(Array.from(got.copyAt)).toEqual(Array.from(want.copyAt));
}

/** Every rank's role from the construction alone, on the simulator (k-ported: the model's ports). */
async function construct(sizes: readonly number[], root: number, model: CostModel, flags: AdaptiveFlags, trace = false, wrap?: (c: Communicator) => Communicator) {
  return runSim(
    sizes.length,
    async (world) => {
      const comm = wrap ? wrap(world) : world;
      const ctx = adaptiveContext(comm, root, model, { lemma4: flags.lemma4 ?? false, rule: flags.rule ?? 'exact' });
      return constructAdaptive({ comm, root, count: sizes[comm.rank], ctx, tags: nextPlanTags(comm) });
    },
    { model, trace },
  );
}

function checkRoles(roles: readonly AdaptiveRole[], sizes: readonly number[], root: number, builder: CostModel, rule: AdaptiveRule): void {
  const b = adaptiveBinomialTree(sizes, builder, { root, rule });
  expectSameTree(roleTree(roles, builder.copyAll), b.tree);
  for (const r of roles) {
    for (const c of r.children) {
      const child = roles[c.peer];
      expect(child.parent?.peer).toBe(r.rank);
      expect([child.parent?.lo, child.parent?.hi, child.parent?.size, child.parent?.round]).toEqual([c.lo, c.hi, c.size, c.round]);
      let sum = 0;
      for (let i = c.lo; i <= c.hi; i++) sum += sizes[i];
      expect(c.size).toBe(sum);
    }
  }
  expect(roles[root].parent).toBeUndefined();
  const fin = roles[roles.length - 1].final;
  expect(fin?.time).toBe(b.time); // bit for bit
  expect(fin?.gatherRoot).toBe(root);
  expect(fin?.total).toBe(sizes.reduce((x, y) => x + y, 0));
}

describe('k-ported adaptive construction: the distributed tree is the builder tree', () => {
  it(`equals adaptiveBinomialTree on random instances (k = 2, 3, 4; p ≤ ${BIG ? 200 : 70}; both rules, Lemma 4, per-pair models, zero blocks)`, async () => {
    await fc.assert(
      fc.asyncProperty(instanceArb(BIG ? 200 : 70), specArb, flagsArb, fc.boolean(), async (inst, spec, flags, byModel) => {
        const p = inst.sizes.length;
        const m = models(spec, p, flags.lemma4, byModel);
        const { results } = await construct(inst.sizes, inst.root, m.plan, { lemma4: flags.lemma4 && !byModel, rule: flags.rule });
        checkRoles(results, inst.sizes, inst.root, m.builder, flags.rule);
      }),
      { numRuns: BIG ? 400 : 100, seed: 20251127 },
    );
  });

  it('covers every p from 1 to 40 with four roots, k = 2, 3, 4, on ties (equal blocks, α only) and on random blocks', async () => {
    const rnd = rng(17);
    for (const k of KS) {
      for (let p = 1; p <= 40; p++) {
        const sizes = Array.from({ length: p }, () => (p % 2 === 0 ? 5 : rnd() < 0.2 ? 0 : int(rnd, 1, 50)));
        for (const root of new Set([0, p - 1, Math.floor(p / 2), int(rnd, 0, p - 1)])) {
          const rule: AdaptiveRule = (p + root) % 3 === 0 ? 'lemma1' : 'exact';
          const model = linearModel({ alpha: 20, beta: p % 2 === 0 ? 0 : 1, gamma: (p % 3) / 2, ports: k, copyAll: p % 5 === 0 });
          const { results } = await construct(sizes, root, model, { rule });
          checkRoles(results, sizes, root, model, rule);
        }
      }
    }
  });

  it(`larger p (${BIG ? '1000 and 4100' : '1000'}): the same tree, k = 2, 3, 4, per-pair model included`, async () => {
    const rnd = rng(4100);
    for (const p of BIG ? [1000, 4100] : [1000]) {
      for (const k of KS) {
        const sizes = Array.from({ length: p }, () => (rnd() < 0.1 ? 0 : int(rnd, 1, 10_000)));
        const root = int(rnd, 0, p - 1);
        const spec: ModelSpec = { kind: k === 3 ? 'pairwise' : 'linear', k, alpha: 50, beta: 1, gamma: 0.5, seed: k };
        const model = makeModel(spec, p, k === 4);
        const { results } = await construct(sizes, root, model, { rule: k === 2 ? 'lemma1' : 'exact' });
        checkRoles(results, sizes, root, model, k === 2 ? 'lemma1' : 'exact');
      }
    }
  });

  it('messages are constant-size: records of 48 + 8k bytes, notifications of 16 + 24k bytes; groups exchange all-to-all; depth ≤ constructionRounds', async () => {
    const rnd = rng(2025);
    for (const k of KS) {
      for (const p of [2, 3, 4, 5, 9, 16, 17, 27, 50, 64, 81, ...(BIG ? [125, 243, 256] : [])]) {
        for (const big of [false, true]) {
          const sizes = Array.from({ length: p }, () => (big ? int(rnd, 0, 1_000_000) : int(rnd, 0, 3)));
          const root = int(rnd, 0, p - 1);
          const model = linearModel({ alpha: 100, beta: 1, gamma: 1, ports: k });
          const probe = lamportProbe();
          const res = await construct(sizes, root, model, { rule: 'exact' }, true, probe.wrap);
          checkRoles(res.results, sizes, root, model, 'exact');
          const msgs = res.trace?.messages ?? [];
          const exchanges = msgs.filter((m) => adaptiveTagKind(m.tag) === 'exchange');
          const notes = msgs.filter((m) => adaptiveTagKind(m.tag) === 'notify');
          expect(exchanges.length + notes.length).toBe(msgs.length);
          expect(exchanges.every((m) => m.bytes === recordBytesK(k))).toBe(true);
          expect(notes.every((m) => m.bytes === notifyBytesK(k))).toBe(true);
          // every group of n ranges in every round: n(n − 1) records
          let want = 0;
          const D = hypercubeRounds(p, k);
          for (let t = 0, width = 1; t < D; t++, width *= k + 1) {
            for (let first = 0; first * width < p; first += k + 1) {
              const n = groupOf(first * width, width, k, p).n;
              want += n * (n - 1);
            }
          }
          expect(exchanges.length).toBe(want);
          // at most one notification per range that joins (p − 1 sending ranges, their receivers once per round)
          expect(notes.length).toBeLessThanOrEqual(2 * (p - 1));
          expect(probe.depth()).toBeLessThanOrEqual(constructionRounds(p, k));
          expect(probe.depth()).toBeGreaterThanOrEqual(D);
          expect(D).toBe(Math.ceil(Math.log(p) / Math.log(k + 1) - 1e-9));
        }
      }
    }
  });

  it('ranks with different port counts fail with InvalidArgumentError on model (or a typed error), not an inconsistent tree', async () => {
    const sizes = [3, 1, 4, 1, 5, 9, 2, 6, 5];
    const err = await runSim(
      9,
      async (comm) => {
        const model = linearModel({ alpha: 10, beta: 1, gamma: 1, ports: comm.rank === 4 ? 3 : 2 });
        const ctx = adaptiveContext(comm, 2, model, {});
        return constructAdaptive({ comm, root: 2, count: sizes[comm.rank], ctx, tags: nextPlanTags(comm) });
      },
      { model: linearModel({ alpha: 10, beta: 1, ports: 2 }) },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as CommunicationError).cause).toBeInstanceOf(InvalidArgumentError);
    expect(((err as CommunicationError).cause as InvalidArgumentError).field).toBe('model');
  });

  it('the degrading rule stays one-ported: InvalidArgumentError on model', async () => {
    const model = linearModel({ alpha: 1, beta: 1, ports: 2 });
    const err = await runSim(
      3,
      async (comm) => {
        const s = gatherSetup(comm, { sizes: [1, 1, 1], root: 0, unitBytes: 1 }, model);
        await DEGRADING_GATHERV.init(s.input);
      },
      { model },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(((err as CommunicationError).cause as InvalidArgumentError).field).toBe('model');
  });
});

/** Lamport depth of the construction messages (every rank's communicator wrapped). */
function lamportProbe() {
  const queues = new Map<string, number[]>();
  const clock = new Map<number, number>();
  let maxDepth = 0;
  const isConstruction = (tag: number) => {
    const k = adaptiveTagKind(tag);
    return k === 'exchange' || k === 'notify';
  };
  const wrap = (comm: Communicator): Communicator => {
    const me = comm.rank;
    const isend = (dest: number, tag: number, data: Uint8Array): PromiseLike<void> => {
      if (isConstruction(tag)) {
        const depth = (clock.get(me) ?? 0) + 1;
        maxDepth = Math.max(maxDepth, depth);
        const key = `${me}>${dest}#${tag}`;
        const q = queues.get(key) ?? [];
        q.push(depth);
        queues.set(key, q);
      }
      return comm.isend(dest, tag, data);
    };
    const irecv = (source: number, tag: number, into: Uint8Array): PromiseLike<Status> =>
      comm.irecv(source, tag, into).then((st) => {
        if (isConstruction(st.tag)) {
          const depth = queues.get(`${st.source}>${me}#${st.tag}`)?.shift();
          if (depth === undefined) throw new Error('unmatched construction message');
          clock.set(me, Math.max(clock.get(me) ?? 0, depth));
        }
        return st;
      });
    return new Proxy(comm, {
      get(target, prop) {
        if (prop === 'isend' || prop === 'send') return isend;
        if (prop === 'irecv' || prop === 'recv') return irecv;
        if (prop === 'bindValidatedSchedule') return undefined;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  return { wrap, depth: () => maxDepth };
}

/**
 * A persistent plan on the simulator: init (and one warm-up start), an ideal barrier, one timed
 * start. Returns the data phase's time (slowest rank) and the data mismatches.
 */
async function timedStart(op: 'gather' | 'scatter', inst: Instance, model: CostModel, flags: AdaptiveFlags) {
  const res = await runSim(
    inst.sizes.length,
    async (comm) => {
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator has no clock');
      if (op === 'gather') {
        const s = gatherSetup(comm, inst, model, flags, 1);
        const plan = await ADAPTIVE_GATHERV.init(s.input);
        await plan.start();
        const first = s.recv ? checkGathered(inst, s.recv, 1) : [];
        s.refill(2);
        await clock.sync();
        const t0 = clock.now();
        await plan.start();
        return { t0, t1: clock.now(), info: plan.info, bad: [...first, ...(s.recv ? checkGathered(inst, s.recv, 2) : [])] };
      }
      const s = scatterSetup(comm, inst, model, flags, 1);
      const plan = await ADAPTIVE_SCATTERV.init(s.input);
      await plan.start();
      const first = checkScattered(comm.rank, s.recv, 1);
      s.refill(2);
      await clock.sync();
      const t0 = clock.now();
      await plan.start();
      return { t0, t1: clock.now(), info: plan.info, bad: [...first, ...checkScattered(comm.rank, s.recv, 2)] };
    },
    { model, unitBytes: inst.unitBytes },
  );
  const t0 = res.results[0].t0;
  expect(res.results.every((r) => r.t0 === t0)).toBe(true);
  return { time: Math.max(...res.results.map((r) => r.t1)) - t0, bad: res.results.flatMap((r) => r.bad), info: res.results[0].info };
}

describe('k-ported adaptive gatherv/scatterv: the data phase is the evaluator\'s, the data byte for byte', () => {
  for (const op of ['gather', 'scatter'] as const) {
    it(`${op}: a persistent start ends at exactly evaluate(builder tree, '${op}') (k = 2, 3, 4; linear and per-pair; scrambled displs; unit 1/4; Lemma 4)`, async () => {
      await fc.assert(
        fc.asyncProperty(instanceArb(BIG ? 160 : 48), specArb, flagsArb, fc.boolean(), async (inst, spec, flags, byModel) => {
          const p = inst.sizes.length;
          const m = models(spec, p, flags.lemma4, byModel);
          const { time, bad, info } = await timedStart(op, inst, m.plan, { ...flags, lemma4: flags.lemma4 && !byModel, inPlace: false });
          expect(bad).toEqual([]);
          const b = adaptiveBinomialTree(inst.sizes, m.builder, { root: inst.root, rule: flags.rule });
          expect(time).toBe(evaluate(b.tree, inst.sizes, m.builder, op).time);
          expect(info).toEqual({ algorithm: 'adaptive', constructionRounds: constructionRounds(p, spec.k), height: hypercubeRounds(p, spec.k) });
        }),
        { numRuns: BIG ? 300 : 70, seed: op === 'gather' ? 31337 : 4242 },
      );
    });
  }

  it('one-shot calls deliver in place too (gather and scatter, k = 2, 3)', async () => {
    await fc.assert(
      fc.asyncProperty(instanceArb(40), fc.constantFrom(2, 3), fc.boolean(), async (inst, k, overlap) => {
        const model = linearModel({ alpha: 7, beta: 1, gamma: 1, ports: k });
        const flags = { overlap, inPlace: true };
        const g = await runSim(
          inst.sizes.length,
          async (comm) => {
            const s = gatherSetup(comm, inst, model, flags, 1);
            await (await ADAPTIVE_GATHERV.init(s.input)).start();
            return s.recv ? checkGathered(inst, s.recv, 1) : [];
          },
          { model, unitBytes: inst.unitBytes },
        );
        expect(g.results.flat()).toEqual([]);
        const sc = await runSim(
          inst.sizes.length,
          async (comm) => {
            const s = scatterSetup(comm, inst, model, flags, 1);
            await (await ADAPTIVE_SCATTERV.init(s.input)).start();
            return comm.rank === inst.root ? [] : checkScattered(comm.rank, s.recv, 1);
          },
          { model, unitBytes: inst.unitBytes },
        );
        expect(sc.results.flat()).toEqual([]);
      }),
      { numRuns: 30, seed: 5 },
    );
  });

  it('k ports make the data phase faster than one port on a spiky instance (Traff18 Theorem 1: ⌈log_{k+1}p⌉ rounds)', async () => {
    const p = 27;
    const sizes = Array.from({ length: p }, (_, i) => (i % 5 === 0 ? 200 : 3));
    const inst: Instance = { sizes, root: 13, unitBytes: 1 };
    const times: number[] = [];
    for (const k of [1, 2]) {
      const model = linearModel({ alpha: 100, beta: 1, gamma: 0, ports: k });
      const { time, bad } = await timedStart('gather', inst, model, { overlap: false });
      expect(bad).toEqual([]);
      expect(time).toBe(evaluate(adaptiveBinomialTree(sizes, model, { root: 13 }).tree, sizes, model).time);
      times.push(time);
    }
    expect(times[1]).toBeLessThan(times[0]);
  });
});
