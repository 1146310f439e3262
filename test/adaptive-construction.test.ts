/**
 * The distributed construction of Traff18 Lemma 3 (src/collectives/adaptive): the tree the
 * ranks build equals the centralised builder's, messages are constant-size, and the longest
 * chain of dependent construction messages is at most 2⌈log₂p⌉.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator, Status } from '../src/comm/communicator.js';
import { constructAdaptive, constructionRounds, type AdaptiveRole } from '../src/collectives/adaptive/construct.js';
import { decideJoin, leafRecord, RECORD_BYTES, type JoinContext } from '../src/collectives/adaptive/decide.js';
import { hypercubeRounds } from '../src/collectives/adaptive/hypercube.js';
import { adaptiveContext, roleTree } from '../src/collectives/adaptive/plan.js';
import { adaptiveTagKind, nextPlanTags } from '../src/collectives/adaptive/tags.js';
import { InvalidArgumentError } from '../src/errors.js';
import { ForwardingCommunicator } from '../src/comm/forwarding.js';
import { linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { runSim, type PortSetting } from '../src/transports/sim/index.js';
import { adaptiveBinomialTree, type AdaptiveRule } from '../src/trees/adaptive.js';
import { evaluate } from '../src/trees/evaluate.js';
import type { Tree } from '../src/trees/tree.js';
import { int, rng } from './helpers/random.js';
import { BIG } from './helpers/big.js';

/** fast-check's default size draws arrays of at most ~12 elements whatever maxLength: ask for long ones (p up to maxP). */
const ARRAY_SIZE = { size: BIG ? ('large' as const) : ('medium' as const) };

interface Case {
  sizes: number[];
  root: number;
  rule: AdaptiveRule;
  lemma4: boolean;
  model: CostModel;
}

/** Runs the construction on the simulator and returns every rank's role (and the trace). */
async function construct(c: Case, opts: { ports?: PortSetting; trace?: boolean; wrap?: (comm: Communicator) => Communicator } = {}) {
  const p = c.sizes.length;
  const res = await runSim(
    p,
    async (world) => {
      const comm = opts.wrap ? opts.wrap(world) : world;
      const ctx = adaptiveContext(comm, c.root, c.model, { lemma4: c.lemma4, rule: c.rule });
      return constructAdaptive({ comm, root: c.root, count: c.sizes[comm.rank], ctx, tags: nextPlanTags(comm) });
    },
    { model: linearModel({ alpha: 10, beta: 1 }), ports: opts.ports, trace: opts.trace },
  );
  return res;
}

function builderTree(c: Case): { tree: Tree; time: number } {
  const l = c.model.linear;
  const model = c.lemma4 && l !== undefined ? linearModel({ ...l, copyAll: true }) : c.model;
  return adaptiveBinomialTree(c.sizes, model, { root: c.root, rule: c.rule });
}

function expectSameTree(got: Tree, want: Tree): void {
  expect(got.root).toBe(want.root);
  expect(Array.from(got.parent)).toEqual(Array.from(want.parent));
  expect(got.children.map((k) => [...k])).toEqual(want.children.map((k) => [...k]));
  expect(Array.from(got.copyAt)).toEqual(Array.from(want.copyAt));
}

function checkRoles(roles: AdaptiveRole[], c: Case): void {
  const tree = roleTree(roles, c.lemma4);
  expectSameTree(tree, builderTree(c).tree);
  // Both sides of every edge agree: the child's parent event names its receiver, same range, same size.
  for (const r of roles) {
    for (const k of r.children) {
      const child = roles[k.peer];
      expect(child.parent).toBeDefined();
      expect(child.parent?.peer).toBe(r.rank);
      expect([child.parent?.lo, child.parent?.hi, child.parent?.size, child.parent?.round]).toEqual([k.lo, k.hi, k.size, k.round]);
      let sum = 0;
      for (let i = k.lo; i <= k.hi; i++) sum += c.sizes[i];
      expect(k.size).toBe(sum);
    }
  }
  expect(roles[c.root].parent).toBeUndefined();
  // The fixed root of the whole range ends with the tree's completion time and total.
  const fin = roles[roles.length - 1].final;
  expect(fin?.time).toBe(builderTree(c).time);
  expect(fin?.total).toBe(c.sizes.reduce((a, b) => a + b, 0));
  expect(fin?.gatherRoot).toBe(c.root);
  expect(roles.slice(0, -1).every((r) => r.final === undefined)).toBe(true);
}

/**
 * The simulator's communicator without its clock: the construction then binds a schedule per
 * round (its path on real transports) instead of plain requests, run by the portable executor.
 */
class Clockless extends ForwardingCommunicator {
  override get clock(): undefined {
    return undefined;
  }
  protected wrap(sub: Communicator): Communicator {
    return new Clockless(sub);
  }
}

const sizeArb = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 400 }));
const caseArb = (maxP: number) =>
  fc
    .record({
      sizes: fc.array(sizeArb, { minLength: 1, maxLength: maxP, ...ARRAY_SIZE }),
      rootSeed: fc.nat(),
      rule: fc.constantFrom<AdaptiveRule>('exact', 'lemma1'),
      lemma4: fc.boolean(),
      alpha: fc.constantFrom(0, 1, 10, 100, 2.5),
      beta: fc.constantFrom(1, 0.5, 3),
      gamma: fc.constantFrom(0, 1, 0.25, 2),
    })
    .map(
      (r): Case => ({
        sizes: r.sizes,
        root: r.rootSeed % r.sizes.length,
        rule: r.rule,
        lemma4: r.lemma4,
        model: linearModel({ alpha: r.alpha, beta: r.beta, gamma: r.gamma }),
      }),
    );

describe('adaptive construction: the distributed tree is the builder tree', () => {
  it(`equals adaptiveBinomialTree(sizes, model, {root, rule}) on random instances (p ≤ ${BIG ? 256 : 64}, both rules, Lemma 4, zero blocks)`, async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(BIG ? 256 : 64), async (c) => {
        const { results } = await construct(c);
        checkRoles(results, c);
      }),
      { numRuns: BIG ? 500 : 120, seed: 20240611 },
    );
  });

  it('builds the same tree through schedules (a communicator without a clock, as on real transports), p ≤ 40', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(40), async (c) => {
        const { results } = await construct(c, { wrap: (comm) => new Clockless(comm) });
        checkRoles(results, c);
      }),
      { numRuns: 30, seed: 20261126 },
    );
  });

  it(`covers every p from 1 to ${BIG ? 100 : 40} and four roots for one distribution of sizes each`, async () => {
    const rnd = rng(7);
    for (let p = 1; p <= (BIG ? 100 : 40); p++) {
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 50)));
      for (const root of [0, p - 1, Math.floor(p / 2), int(rnd, 0, p - 1)]) {
        const c: Case = { sizes, root, rule: p % 2 === 0 ? 'exact' : 'lemma1', lemma4: p % 3 === 0, model: linearModel({ alpha: 20, beta: 1, gamma: 1 }) };
        const { results } = await construct(c);
        checkRoles(results, c);
      }
    }
  });

  it('equals the builder under a per-pair (Hockney) model too', async () => {
    const rnd = rng(99);
    for (let t = 0; t < 8; t++) {
      const p = int(rnd, 2, 24);
      const mat = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, lo, hi)));
      const model = pairwiseModel({ alpha: mat(1, 60), beta: mat(1, 4), gamma: 1 });
      const c: Case = { sizes: Array.from({ length: p }, () => int(rnd, 0, 30)), root: int(rnd, 0, p - 1), rule: 'exact', lemma4: false, model };
      const { results } = await construct(c);
      checkRoles(results, c);
    }
  });

  it('the decision is the builder join: the receiving side gives the smaller exact completion time (Fig. 1 instance)', () => {
    // Traff18 Fig. 1: p = 11, root 9.
    const sizes = [3, 0, 5, 2, 0, 0, 7, 1, 4, 2, 6];
    const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const ctx: JoinContext = { model, rule: 'exact', copyAll: false, root: 9 };
    // Round 0 join of ranks 0 and 1: rank 1 (empty) receiving from rank 0 (3 elements) costs 10 + 3 + copy 0,
    // rank 0 receiving rank 1's empty block costs only its copy 3: rank 0 receives.
    const d = decideJoin(leafRecord(0, 3, ctx), leafRecord(1, 0, ctx), 0, 0, 1, ctx);
    expect(d.rightReceives).toBe(false);
    expect(d.joined).toEqual({ gatherRoot: 0, total: 3, time: 3, received: true, rootBlock: 3, kids: 1, busy: 0 });
    const b = adaptiveBinomialTree(sizes, model, { root: 9 });
    expect(b.tree.children[0]).toContain(1);
    expect(evaluate(b.tree, sizes, model).time).toBe(b.time);
  });

  it('ranks that disagree on the model, rule or root fail with InvalidArgumentError on model instead of building inconsistent trees', async () => {
    const sizes = [3, 1, 4, 1, 5, 9, 2, 6];
    const base = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const variants: { name: string; model: CostModel; rule: AdaptiveRule; root: number }[] = [
      { name: 'model', model: linearModel({ alpha: 11, beta: 1, gamma: 1 }), rule: 'exact', root: 2 },
      { name: 'rule', model: base, rule: 'lemma1', root: 2 },
      { name: 'root', model: base, rule: 'exact', root: 3 },
    ];
    for (const [odd, clockless] of variants.flatMap((v) => [[v, false] as const, [v, true] as const])) {
      const err = await runSim(
        8,
        async (world) => {
          // with and without the clock: plain requests, or a schedule per round (real transports)
          const comm = clockless ? new Clockless(world) : world;
          const me = comm.rank === 6 ? odd : { model: base, rule: 'exact' as AdaptiveRule, root: 2 };
          const ctx = adaptiveContext(comm, me.root, me.model, { lemma4: false, rule: me.rule });
          return constructAdaptive({ comm, root: me.root, count: sizes[comm.rank], ctx, tags: nextPlanTags(comm) });
        },
        { model: base },
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      const cause = (err as { cause?: unknown }).cause;
      expect(cause, `${odd.name}${clockless ? ' (schedules)' : ''}`).toBeInstanceOf(InvalidArgumentError);
      expect((cause as InvalidArgumentError).field).toBe('model');
    }
  });

  it('accepts k-ported models (the k-ported construction: test/adaptive-kported.test.ts), rejects unknown rules with typed errors', () => {
    const comm = { rank: 2, size: 4 } as Communicator;
    const k2 = linearModel({ alpha: 1, beta: 1, ports: 2 });
    expect(adaptiveContext(comm, 0, k2, {}).model.ports).toBe(2);
    const bad = { rule: 'fastest' } as unknown as { rule: AdaptiveRule };
    expect(() => adaptiveContext(comm, 0, linearModel({ alpha: 1, beta: 1 }), bad)).toThrow(/adaptive\.rule/);
  });
});

/** Lamport depth of construction messages, measured by wrapping every rank's communicator. */
function lamportProbe() {
  const queues = new Map<string, number[]>();
  const clock = new Map<number, number>();
  let maxDepth = 0;
  let sends = 0;
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
        sends++;
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
        // the probe sees messages through isend/irecv: schedules run by the portable executor
        if (prop === 'bindValidatedSchedule') return undefined;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  return { wrap, depth: () => maxDepth, sends: () => sends };
}

/**
 * Longest chain in the trace where each message starts after the previous one, addressed to
 * its sender, ended (an over-approximation of dependency: it also links messages that merely
 * happened in that order).
 */
function traceDepth(msgs: { from: number; to: number; start: number; end: number }[]): number {
  const sorted = [...msgs].sort((a, b) => a.start - b.start);
  const depth: number[] = [];
  let best = 0;
  for (let i = 0; i < sorted.length; i++) {
    let d = 1;
    for (let j = 0; j < sorted.length; j++) {
      if (j !== i && depth[j] !== undefined && sorted[j].to === sorted[i].from && sorted[j].end <= sorted[i].start) d = Math.max(d, depth[j] + 1);
    }
    depth[i] = d;
    best = Math.max(best, d);
  }
  return best;
}

describe('adaptive construction: constant-size messages in at most 2⌈log₂p⌉ dependent rounds', () => {
  it('every construction message is at most 48 bytes, whatever p and the counts; chains ≤ ⌈log₂p⌉ + 1', async () => {
    const rnd = rng(2024);
    for (const p of [1, 2, 3, 5, 8, 13, 16, 31, 32, 50, 64, ...(BIG ? [127, 128, 200, 256] : [])]) {
      for (const big of [false, true]) {
        const sizes = Array.from({ length: p }, () => (big ? int(rnd, 0, 1_000_000) : int(rnd, 0, 3)));
        const c: Case = { sizes, root: int(rnd, 0, p - 1), rule: 'exact', lemma4: false, model: linearModel({ alpha: 100, beta: 1, gamma: 1 }) };
        const probe = lamportProbe();
        const res = await construct(c, { trace: true, wrap: probe.wrap });
        checkRoles(res.results, c);
        const msgs = res.trace?.messages ?? [];
        const D = hypercubeRounds(p);
        expect(msgs.every((m) => adaptiveTagKind(m.tag) === 'exchange' || adaptiveTagKind(m.tag) === 'notify')).toBe(true);
        expect(Math.max(0, ...msgs.map((m) => m.bytes))).toBeLessThanOrEqual(RECORD_BYTES);
        // Per round: two exchange messages per pair of ranges, at most one notification per range.
        const exchanges = msgs.filter((m) => adaptiveTagKind(m.tag) === 'exchange').length;
        expect(exchanges).toBe(2 * (p - 1));
        expect(msgs.length - exchanges).toBeLessThanOrEqual(2 * (p - 1));
        expect(probe.sends()).toBe(msgs.length);
        // Causal depth (Lamport clocks over the messages): ⌈log₂p⌉ exchanges + one notification.
        expect(probe.depth()).toBeLessThanOrEqual(constructionRounds(p));
        expect(constructionRounds(p)).toBeLessThanOrEqual(2 * D);
        if (p >= 2) expect(probe.depth()).toBeGreaterThanOrEqual(D);
      }
    }
  });

  it('trace chains (each message starting after one its sender received ended) stay ≤ 2⌈log₂p⌉ on the telephone model', async () => {
    const rnd = rng(5);
    for (const p of [4, 7, 16, 33, 64, ...(BIG ? [129, 256] : [])]) {
      const sizes = Array.from({ length: p }, () => int(rnd, 0, 100));
      const c: Case = { sizes, root: int(rnd, 0, p - 1), rule: 'exact', lemma4: false, model: linearModel({ alpha: 100, beta: 1 }) };
      const res = await construct(c, { trace: true, ports: 'full-duplex' });
      const d = traceDepth(res.trace?.messages ?? []);
      expect(d).toBeGreaterThanOrEqual(hypercubeRounds(p));
      expect(d).toBeLessThanOrEqual(2 * hypercubeRounds(p));
    }
  });

  it('the number of construction messages does not depend on the counts (only on who gathers)', async () => {
    const p = 32;
    const c1: Case = { sizes: Array.from({ length: p }, () => 1), root: 5, rule: 'exact', lemma4: false, model: linearModel({ alpha: 1, beta: 1 }) };
    const c2: Case = { ...c1, sizes: Array.from({ length: p }, (_, i) => i * 100_000) };
    const t1 = (await construct(c1, { trace: true })).trace?.messages ?? [];
    const t2 = (await construct(c2, { trace: true })).trace?.messages ?? [];
    for (const t of [t1, t2]) {
      expect(t.length).toBeLessThanOrEqual(4 * (p - 1));
      expect(new Set(t.map((m) => m.bytes)).size).toBeLessThanOrEqual(2);
    }
  });
});
