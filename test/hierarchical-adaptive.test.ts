/**
 * Adaptive levels of the hierarchical gather(v) and scatter(v) (HierarchicalOptions.tree
 * 'adaptive': Traff18's adaptive binomial trees over the members' blocks on each node and over
 * the node totals on the bridge, Traff18 §6 "in a hierarchical fashion"):
 * - data byte for byte on every rank, every distribution of Traff18 (SEED000_DISTRIBUTIONS) and
 *   zero blocks, ordered / permuted / unequal nodes, every root kind, every variant;
 * - the data messages form exactly the trees the centralised replay of the construction's
 *   decisions gives (src/run/hierarchical-predict.ts adaptiveRolesOf over level-trees.ts
 *   adaptiveLevelTree), each carrying exactly its range (plus the size check / node checks);
 *   the construction's messages travel on the adaptive range's tags, a bounded number of them;
 * - the regular gather and scatter build their trees with no message, and take exactly the
 *   two-level evaluation; gatherv and scatterv take at least their data phase's;
 * - 'flat' + 'adaptive' is Traff18's flat adaptive gatherv/scatterv;
 * - typed errors: counts that differ from the root's (also when they cancel inside a node),
 *   a model of another size or with more ports, on the ranks that see them;
 * - worker threads with virtual nodes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { adaptiveTagKind } from '../src/collectives/adaptive/tags.js';
import { constructionRounds } from '../src/collectives/adaptive/construct.js';
import { unslottedTag } from '../src/collectives/call-scope.js';
import {
  HIER_TAG,
  HIERARCHICAL_VARIANT_NAMES,
  hierarchicalGather,
  hierarchicalGatherv,
  hierarchicalScatterv,
  nodeStructure,
} from '../src/collectives/hierarchical/index.js';
import { adaptiveLevelTree } from '../src/collectives/hierarchical/level-trees.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { hierarchicalModel, linearModel, type CostModel } from '../src/model/cost-model.js';
import { adaptiveRolesOf, predictTwoLevel, predictTwoLevelScatter, rolesTree } from '../src/run/hierarchical-predict.js';
import { SEED000_DISTRIBUTIONS } from '../src/run/spec.js';
import { runSim, type SimResult } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { ceilLog2 } from '../src/util/ceil-log.js';
import { blockSizes } from '../src/workloads/distributions.js';
import { BIG } from './helpers/big.js';
import { int, rng } from './helpers/random.js';
import { subtree } from './helpers/trees.js';
import { asOp, gatherCase, gathervCase, placementOf, runCaseRank, type HierCase, type Placement } from './programs/hierarchical-program.js';

const PLACEMENTS: Placement[] = ['ordered', 'ordered-unequal', 'permuted', 'permuted-unequal'];
const HIER_TAGS = new Set<number>([HIER_TAG.local, HIER_TAG.bridge]);

function model(nodeOf: readonly number[], o: { ia?: number; ib?: number; ea?: number; eb?: number; gamma?: number } = {}): CostModel {
  return hierarchicalModel({ nodeOf, intra: { alpha: o.ia ?? 1, beta: o.ib ?? 0.01 }, inter: { alpha: o.ea ?? 10, beta: o.eb ?? 0.05 }, gamma: o.gamma ?? 0 });
}

const adaptive = (c: HierCase): HierCase => ({ ...c, tree: 'adaptive' });

/** A gatherv/scatterv case of distribution `dist` (mean b), default displacements. */
function distCase(op: 'gatherv' | 'scatterv', p: number, dist: (typeof SEED000_DISTRIBUTIONS)[number], b: number, root: number, seed: number): HierCase {
  const counts = blockSizes(dist, { p, b, seed });
  const total = counts.reduce((a, x) => a + x, 0);
  return { op, variant: 'zero-copy', tree: 'adaptive', root, counts, unitBytes: 1, recvBytes: total, seed };
}

async function runCases(nodeOf: readonly number[], cases: readonly HierCase[], m: CostModel = model(nodeOf)): Promise<void> {
  const res = await runSim(
    nodeOf.length,
    async (comm) => {
      const out: (string | undefined)[] = [];
      for (const c of cases) out.push((await runCaseRank(comm, c, { model: m })).bad);
      return out;
    },
    { model: m },
  );
  res.results.forEach((bad, r) => cases.forEach((c, i) => expect(bad[i], `rank ${r}: ${c.op} ${c.variant} root ${c.root} nodeOf [${nodeOf.join(',')}]`).toBeUndefined()));
}

/** One case `calls` times; the virtual time of the last call alone, its start, the trace. */
async function lastCall(nodeOf: readonly number[], c: HierCase, m: CostModel, calls = 2): Promise<{ time: number; t0: number; res: SimResult<{ t0: number; t1: number }> }> {
  const res = await runSim(
    nodeOf.length,
    async (comm: Communicator) => {
      let t0 = 0;
      for (let k = 0; k < calls; k++) {
        await comm.clock?.sync();
        t0 = comm.clock?.now() ?? 0;
        const { bad } = await runCaseRank(comm, c, { model: m });
        if (bad !== undefined) throw new Error(bad);
      }
      await comm.clock?.sync();
      return { t0, t1: comm.clock?.now() ?? 0 };
    },
    { model: m, trace: true, unitBytes: c.unitBytes },
  );
  const { t0, t1 } = res.results[0];
  return { time: t1 - t0, t0, res };
}


const causeOf = (e: unknown): unknown => (e instanceof CommunicationError && e.cause !== undefined ? e.cause : e);

async function failure(p: PromiseLike<unknown>): Promise<InvalidArgumentError> {
  try {
    await p;
  } catch (e) {
    const cause = causeOf(e);
    expect(cause).toBeInstanceOf(InvalidArgumentError);
    return cause as InvalidArgumentError;
  }
  throw new Error('expected a rejection');
}

describe('adaptive levels: correctness on the simulator', () => {
  it("every distribution of Traff18, gatherv and scatterv, ordered / permuted / unequal nodes, roots at a node's first, last and any rank", async () => {
    const rnd = rng(51);
    for (const kind of PLACEMENTS) {
      for (const [p, n] of [
        [24, 4],
        [17, 5],
        [9, 1],
        [8, 8],
      ]) {
        const nodeOf = placementOf(kind, p, n, rnd);
        const s = nodeStructure(p, (r) => nodeOf[r]);
        const members = s.members[int(rnd, 0, s.nodes - 1)];
        const roots = [...new Set([0, p - 1, members[0], members[members.length - 1], int(rnd, 0, p - 1)])];
        const cases: HierCase[] = [];
        for (const dist of SEED000_DISTRIBUTIONS) {
          const root = roots[cases.length % roots.length];
          for (const op of ['gatherv', 'scatterv'] as const) cases.push(distCase(op, p, dist, 1 + int(rnd, 0, 40), root, int(rnd, 0, 99)));
        }
        await runCases(nodeOf, cases);
      }
    }
  });

  it('gatherv and scatterv: random counts with zeros, gaps and permuted displacements, every variant (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: BIG ? 70 : 36 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(...PLACEMENTS),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async (p, n, kind, seed) => {
          const rnd = rng(seed);
          const nodeOf = placementOf(kind, p, n, rnd);
          const cases: HierCase[] = [];
          for (const variant of HIERARCHICAL_VARIANT_NAMES) {
            const c = adaptive(gathervCase(p, variant, rnd, seed % 97));
            cases.push(c, asOp(c, 'scatterv'));
            cases.push(adaptive(gatherCase(p, variant, c.root, int(rnd, 0, 6), 1)), asOp(adaptive(gatherCase(p, variant, c.root, 3, 2)), 'scatter'));
          }
          await runCases(nodeOf, cases, model(nodeOf, { ia: 1, ib: 0.01 * int(rnd, 0, 3), ea: int(rnd, 1, 100), eb: 0.05 }));
        },
      ),
      { numRuns: BIG ? 100 : 25 },
    );
  });

  it('zero blocks everywhere, or one block only: correct, and the scatterv moves no empty node-level message', async () => {
    const p = 15;
    const nodeOf = placementOf('permuted-unequal', p, 4, rng(3));
    const cases: HierCase[] = [];
    for (const op of ['gatherv', 'scatterv'] as const) {
      cases.push({ op, variant: 'zero-copy', tree: 'adaptive', root: 4, counts: new Array<number>(p).fill(0), unitBytes: 2, recvBytes: 0, seed: 1 });
      cases.push({ op, variant: 'reorder', tree: 'adaptive', root: 0, counts: Array.from({ length: p }, (_, i) => (i === 11 ? 5 : 0)), unitBytes: 3, recvBytes: 15, seed: 1 });
    }
    await runCases(nodeOf, cases);
    const none = await lastCall(nodeOf, cases[2], model(nodeOf));
    const data = (none.res.trace?.messages ?? []).filter((msg) => msg.start >= none.t0 && unslottedTag(msg.tag) === HIER_TAG.local);
    expect(data).toEqual([]);
  });
});

describe('adaptive levels: the trees, the construction, the model time', () => {
  const shapes: [Placement, number, number][] = [
    ['ordered', 32, 8],
    ['permuted', 36, 6],
    ['ordered-unequal', 30, 4],
    ['permuted-unequal', 33, 5],
    ['ordered', 12, 1],
  ];

  it('the data messages are exactly the edges of the adaptive trees the construction decides (centralised replay), each carrying its range', async () => {
    const rnd = rng(61);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const m = model(nodeOf, { ia: 1, ib: 0.02, ea: 12, eb: 0.1 });
      for (const dist of ['spikes', 'increasing', 'two-blocks', 'random'] as const) {
        const root = int(rnd, 0, p - 1);
        for (const op of ['gatherv', 'scatterv'] as const) {
          const c = distCase(op, p, dist, 40, root, 5);
          const x = await lastCall(nodeOf, c, m);
          const tree = rolesTree(s, root, adaptiveRolesOf(s, root, c.counts, m));
          const data = (x.res.trace?.messages ?? []).filter((msg) => msg.start >= x.t0 && HIER_TAGS.has(unslottedTag(msg.tag)));
          const got = data.map((msg) => `${msg.from}>${msg.to}:${msg.bytes}`).sort();
          const want: string[] = [];
          for (let v = 0; v < p; v++) {
            if (v === root) continue;
            const under = subtree(tree, v);
            const bytes = under.reduce((a, r) => a + c.counts[r], 0);
            const bridge = s.nodeIndex[tree.parent[v]] !== s.nodeIndex[v];
            const nodes = new Set(under.map((r) => s.nodeIndex[r])).size;
            if (op === 'gatherv') want.push(`${v}>${tree.parent[v]}:${bytes + 8}`);
            else if (bridge) want.push(`${tree.parent[v]}>${v}:${bytes + 4 * nodes}`);
            else if (bytes > 0) want.push(`${tree.parent[v]}>${v}:${bytes}`);
          }
          expect(got, `${op} ${dist} ${kind} p=${p} root ${root}`).toEqual(want.sort());
          // the rest is the two constructions: exchanges and notifications of the adaptive range's tags
          const rest = (x.res.trace?.messages ?? []).filter((msg) => msg.start >= x.t0 && !HIER_TAGS.has(unslottedTag(msg.tag)));
          expect(rest.every((msg) => adaptiveTagKind(msg.tag) === 'exchange' || adaptiveTagKind(msg.tag) === 'notify')).toBe(true);
          // per level of n ranks: ≤ 2 records per pair of ranges per round, ≤ 1 notification per range per round
          let bound = 0;
          for (const members of s.members) bound += 3 * members.length * ceilLog2(members.length);
          bound += 3 * s.nodes * ceilLog2(s.nodes);
          expect(rest.length).toBeLessThanOrEqual(bound);
          expect(rest.length).toBeGreaterThan(0);
        }
      }
    }
  });

  it('the regular gather and scatter build their adaptive trees with no message and take exactly the two-level evaluation', async () => {
    const rnd = rng(62);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const m = model(nodeOf, { ia: 2, ib: 0.5, ea: 30, eb: 1, gamma: 0.2 });
      for (const variant of ['zero-copy', 'reorder'] as const) {
        const root = int(rnd, 0, p - 1);
        const mBytes = 1 + int(rnd, 0, 9);
        const blockBytes = new Array<number>(p).fill(mBytes);
        const tree = rolesTree(s, root, adaptiveRolesOf(s, root, blockBytes, m));
        const g = await lastCall(nodeOf, adaptive(gatherCase(p, variant, root, mBytes, 3)), m);
        expect(g.res.messages).toBe(2 * (p - 1));
        const want = predictTwoLevel({ structure: s, blockBytes, root, unitBytes: 1, trailerBytes: 0, reorder: variant === 'reorder', tree }, m);
        expect(g.time).toBeCloseTo(want, 9);
        const sc = await lastCall(nodeOf, asOp(adaptive(gatherCase(p, variant, root, mBytes, 3)), 'scatter'), m);
        expect(sc.res.messages).toBe(2 * (p - 1));
        expect(sc.time).toBeCloseTo(predictTwoLevelScatter({ structure: s, tree, blockBytes, root, unitBytes: 1, reorder: variant === 'reorder' }, m), 9);
      }
    }
  });

  it('gatherv and scatterv take their data phase and at most the constructions\' rounds more (α only: every message costs 1)', async () => {
    const rnd = rng(63);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const m = model(nodeOf, { ia: 1, ib: 0, ea: 1, eb: 0 });
      const root = int(rnd, 0, p - 1);
      for (const op of ['gatherv', 'scatterv'] as const) {
        const c = distCase(op, p, 'bucket', 20, root, 9);
        const x = await lastCall(nodeOf, c, m);
        const data = ceilLog2(s.nodes) + ceilLog2(s.largestNode);
        // a construction round: two records over one half-duplex pair, one notification
        const construction = 3 * (constructionRounds(s.largestNode) + constructionRounds(s.nodes));
        expect(x.time, `${op} ${kind}`).toBeGreaterThanOrEqual(1);
        expect(x.time, `${op} ${kind}`).toBeLessThanOrEqual(data + construction);
      }
    }
  });

  it("every rank on one node: the node level's data edges are exactly adaptiveLevelTree's (the construction's decisions replayed)", async () => {
    // one node: the node level is the whole communicator (the caller's model), its tree's edges the data messages
    const p = 19;
    const nodeOf = new Array<number>(p).fill(0);
    const m = linearModel({ alpha: 10, beta: 1, gamma: 0 });
    const counts = blockSizes('spikes', { p, b: 30, seed: 4 });
    for (const root of [0, 7, 18]) {
      const t = adaptiveLevelTree(counts, m, root);
      const x = await lastCall(nodeOf, { op: 'gatherv', variant: 'zero-copy', tree: 'adaptive', root, counts, unitBytes: 1, recvBytes: counts.reduce((a, b) => a + b, 0), seed: 1 }, m);
      const edges = (x.res.trace?.messages ?? []).filter((msg) => msg.start >= x.t0 && unslottedTag(msg.tag) === HIER_TAG.local).map((msg) => `${msg.from}>${msg.to}`).sort();
      const want = [...Array(p).keys()].filter((v) => v !== root).map((v) => `${v}>${t.parent[v]}`).sort();
      expect(edges).toEqual(want);
    }
  });

  it("'flat' with tree 'adaptive' is Traff18's flat adaptive gatherv/scatterv (its construction rounds, its data on the adaptive range's tags)", async () => {
    const p = 12;
    const nodeOf = placementOf('ordered', p, 3, rng(1));
    const m = model(nodeOf);
    const c = { ...gathervCase(p, 'flat', rng(9), 4), tree: 'adaptive' as const };
    for (const op of ['gatherv', 'scatterv'] as const) {
      const res = await runSim(p, async (comm) => (await runCaseRank(comm, asOp(c, op), { model: m })), { model: m, trace: true });
      for (const r of res.results) expect(r.bad).toBeUndefined();
      const info = res.results[c.root].info;
      expect(info).toMatchObject({ variant: 'flat', tree: 'adaptive', constructionRounds: constructionRounds(p), rounds: constructionRounds(p) + ceilLog2(p) });
      expect((res.trace?.messages ?? []).every((msg) => adaptiveTagKind(msg.tag) !== undefined)).toBe(true);
    }
  });

  it('info: the data round bound plus both levels\' construction rounds', async () => {
    const p = 30;
    const nodeOf = placementOf('ordered-unequal', p, 4, rng(2));
    const s = nodeStructure(p, (r) => nodeOf[r]);
    const m = model(nodeOf);
    const res = await runSim(p, async (comm) => (await runCaseRank(comm, adaptive(gathervCase(p, 'zero-copy', rng(3), 1)), { model: m })).info, { model: m });
    const construction = constructionRounds(s.largestNode) + constructionRounds(s.nodes);
    expect(res.results[0]).toEqual({ variant: 'zero-copy', tree: 'adaptive', nodes: s.nodes, largestNode: s.largestNode, rounds: ceilLog2(s.nodes) + ceilLog2(s.largestNode) + construction, constructionRounds: construction });
  });
});

describe('adaptive levels: typed errors on the ranks that see them', () => {
  const p = 8;
  const nodeOf = [0, 1, 0, 1, 2, 2, 0, 1];
  const m = model(nodeOf);
  const sim = (program: (comm: Communicator) => Promise<unknown>) => runSim(p, program, { model: m });
  const counts = [2, 2, 2, 2, 2, 2, 2, 2];

  it('gatherv: a count that differs from the root\'s, alone or cancelling inside a node, is reported at the root (field counts)', async () => {
    for (const variant of ['zero-copy', 'reorder'] as const) {
      for (const size of [(r: number) => (r === 3 ? 1 : 2), (r: number) => (r === 3 ? 5 : 2), (r: number) => (r === 3 ? 3 : r === 7 ? 1 : 2), (r: number) => (r === 2 ? 3 : r === 6 ? 1 : 2)]) {
        const e = await failure(
          sim((c) => hierarchicalGatherv(c, { send: new Uint8Array(size(c.rank)), recv: new Uint8Array(2 * p), counts: c.rank === 0 ? counts : undefined, root: 0 }, { variant, tree: 'adaptive', model: m })),
        );
        expect(e.field).toBe('counts');
        expect(e.rank).toBe(0);
      }
    }
  });

  it('scatterv: a count that differs is reported at the root (its node, or a total across nodes: counts) or at the leader of its node (cancelling inside it: count)', async () => {
    const run = (size: (r: number) => number) =>
      failure(sim((c) => hierarchicalScatterv(c, { send: new Uint8Array(2 * p), recv: new Uint8Array(size(c.rank)), counts: c.rank === 0 ? counts : undefined, root: 0 }, { tree: 'adaptive', model: m })));
    // rank 2 on the root's node
    expect(await run((r) => (r === 2 ? 3 : 2))).toMatchObject({ field: 'counts', rank: 0 });
    // node 1 (ranks 1, 3, 7) with one more element
    expect(await run((r) => (r === 3 ? 3 : 2))).toMatchObject({ field: 'counts', rank: 0 });
    // ranks 1 and 3 of node 1: the total agrees, the split does not; its leader (rank 7, its last member) sees it
    expect(await run((r) => (r === 1 ? 3 : r === 3 ? 1 : 2))).toMatchObject({ field: 'count', rank: 7 });
    // the same on the root's node (ranks 2 and 6): the root sees it
    expect(await run((r) => (r === 2 ? 3 : r === 6 ? 1 : 2))).toMatchObject({ field: 'counts', rank: 0 });
  });

  it('ranks that disagree on the model fail with InvalidArgumentError on model naming the caller\'s ranks, not with inconsistent trees', async () => {
    // node 0 = ranks 0, 2, 5, 7 (the root's); node 1 = ranks 1, 3, 4, 6 (leader 6)
    const nodes = [0, 1, 0, 1, 1, 0, 1, 0];
    const q = nodes.length;
    const counts = [3, 1, 4, 1, 5, 9, 2, 6];
    const good = hierarchicalModel({ nodeOf: nodes, intra: { alpha: 1, beta: 0.1 }, inter: { alpha: 10, beta: 1 } });
    const cases = [
      { odd: 5, model: hierarchicalModel({ nodeOf: nodes, intra: { alpha: 2, beta: 0.1 }, inter: { alpha: 10, beta: 1 } }), names: ['rank 5 (member 2 of node 0)'], ranks: [0, 2, 5, 7] },
      { odd: 6, model: hierarchicalModel({ nodeOf: nodes, intra: { alpha: 1, beta: 0.1 }, inter: { alpha: 20, beta: 1 } }), names: ['rank 6 (the leader of node 1 on the bridge)', 'rank 0 (the leader of node 0 on the bridge)'], ranks: [0, 6] },
    ];
    for (const c of cases) {
      for (const op of ['gatherv', 'scatterv'] as const) {
        const err = await runSim(
          q,
          (comm) => {
            const me = comm.rank;
            const options = { tree: 'adaptive' as const, model: me === c.odd ? c.model : good };
            const total = counts.reduce((a, x) => a + x, 0);
            return op === 'gatherv'
              ? hierarchicalGatherv(comm, me === 0 ? { send: new Uint8Array(counts[0]), recv: new Uint8Array(total), counts, root: 0 } : { send: new Uint8Array(counts[me]), root: 0 }, options)
              : hierarchicalScatterv(comm, me === 0 ? { send: new Uint8Array(total), recv: new Uint8Array(counts[0]), counts, root: 0 } : { recv: new Uint8Array(counts[me]), root: 0 }, options);
          },
          { model: good },
        ).then(
          () => undefined,
          (e: unknown) => e,
        );
        const what = `${op}, rank ${c.odd}'s model differs`;
        const cause = (err as { cause?: unknown }).cause;
        expect(cause, what).toBeInstanceOf(InvalidArgumentError);
        expect((cause as InvalidArgumentError).field, what).toBe('model');
        const message = (cause as Error).message;
        expect(c.names.some((n) => message.includes(n)), `${what}: ${message}`).toBe(true);
        // the error's rank is one of the caller's ranks on that level (before: the level's own index)
        expect(c.ranks, what).toContain((cause as InvalidArgumentError).rank);
      }
    }
  });

  it('a model for another number of ranks or with more ports is refused on every rank (field model)', async () => {
    for (const bad of [model([0, 1, 2]), hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 1 }, inter: { alpha: 1, beta: 1 }, ports: 3 })]) {
      const res = await runSim(
        p,
        async (comm) => {
          try {
            await hierarchicalGather(comm, { send: new Uint8Array(1), recv: comm.rank === 0 ? new Uint8Array(p) : undefined, root: 0 }, { tree: 'adaptive', model: bad });
            return 'resolved';
          } catch (e) {
            return e instanceof InvalidArgumentError ? e.field : String(e);
          }
        },
        { model: m },
      );
      expect(res.results).toEqual(new Array<string>(p).fill('model'));
    }
  });
});

describe('adaptive levels on worker threads with virtual nodes', () => {
  const program = new URL('./programs/hierarchical-program.ts', import.meta.url);

  it('8 ranks as 4×2 and 2×4 permuted, 6 ranks unequal: gather(v) and scatter(v) over adaptive trees, every variant, byte for byte', async () => {
    const layouts: number[][] = [
      [0, 0, 1, 1, 2, 2, 3, 3],
      [5, 9, 9, 5, 9, 5, 5, 9],
      [2, 0, 2, 1, 0, 0],
    ];
    for (const nodes of layouts) {
      const p = nodes.length;
      const rnd = rng(p * 13 + nodes[1]);
      const cases: HierCase[] = [];
      for (const variant of HIERARCHICAL_VARIANT_NAMES) {
        const v = adaptive(gathervCase(p, variant, rnd, 2));
        const large = adaptive(gathervCase(p, variant, rnd, 3, { maxCount: 12000, unitBytes: 1 }));
        const regular = adaptive(gatherCase(p, variant, int(rnd, 0, p - 1), 5, 1));
        cases.push(v, asOp(v, 'scatterv'), large, asOp(large, 'scatterv'), regular, asOp(regular, 'scatter'));
      }
      const perRank = await runThreads<(string | undefined)[]>(p, program, cases, { nodes });
      for (const r of perRank) for (const bad of r) expect(bad).toBeUndefined();
    }
  }, 120_000);
});
