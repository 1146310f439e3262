/**
 * Hierarchical scatter and scatterv (src/collectives/hierarchical, the mirror of TraffRougier14's
 * two-level gather): every rank's block checked byte for byte (sentinels around it), the root's
 * send buffer unchanged, for ordered, permuted and unequal placements, any root, every variant
 * and both trees (simulator and worker threads with virtual nodes); zero blocks, gaps and
 * permuted displacements; one message per tree edge carrying exactly its subtree (and the
 * scatterv's counts); the round bound ⌈log₂N⌉ + ⌈log₂n_max⌉ in the α-only model; the simulated
 * time equal to the two-level evaluation (src/run/hierarchical-predict.ts); what is copied and
 * the exact γ cost of 'reorder'; no management traffic; typed errors on the ranks that see them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { MANAGEMENT_TAG } from '../src/comm/agree.js';
import { unslottedTag } from '../src/collectives/call-scope.js';
import {
  HIER_TAG,
  HIERARCHICAL_TREE_NAMES,
  HIERARCHICAL_VARIANT_NAMES,
  hierarchicalScatter,
  hierarchicalScatterv,
  nodeStructure,
  type HierarchicalTreeName,
  type HierarchicalVariantName,
} from '../src/collectives/hierarchical/index.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { hierarchicalModel, type CostModel } from '../src/model/cost-model.js';
import { adaptiveRolesOf, binomialRolesOf, predictTwoLevelScatter, rolesTree } from '../src/run/hierarchical-predict.js';
import { runSim, type SimResult } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { ceilLog2 } from '../src/util/ceil-log.js';
import { SEED000_DISTRIBUTIONS } from '../src/run/spec.js';
import { blockSizes } from '../src/workloads/distributions.js';
import { BIG } from './helpers/big.js';
import { int, rng } from './helpers/random.js';
import { asOp, gatherCase, gathervCase, placementOf, runCaseRank, type HierCase, type Placement } from './programs/hierarchical-program.js';

const VARIANTS = HIERARCHICAL_VARIANT_NAMES;
const TREES = HIERARCHICAL_TREE_NAMES;
const PLACEMENTS: Placement[] = ['ordered', 'ordered-unequal', 'permuted', 'permuted-unequal'];
const HIER_TAGS = new Set<number>([HIER_TAG.local, HIER_TAG.bridge]);

function model(nodeOf: readonly number[], o: { ia?: number; ib?: number; ea?: number; eb?: number; gamma?: number } = {}): CostModel {
  return hierarchicalModel({ nodeOf, intra: { alpha: o.ia ?? 1, beta: o.ib ?? 0 }, inter: { alpha: o.ea ?? 1, beta: o.eb ?? 0 }, gamma: o.gamma ?? 0 });
}

const scatterCase = (p: number, variant: HierarchicalVariantName, root: number, m: number, seed: number): HierCase => asOp(gatherCase(p, variant, root, m, seed), 'scatter');
const scattervCase = (p: number, variant: HierarchicalVariantName, rnd: () => number, seed: number, opts?: Parameters<typeof gathervCase>[4]): HierCase =>
  asOp(gathervCase(p, variant, rnd, seed, opts), 'scatterv');

/** Runs the cases one after the other on one communicator (the adaptive trees built for `m`); every rank's verdict. */
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
  res.results.forEach((bad, r) =>
    cases.forEach((c, i) => expect(bad[i], `rank ${r}: ${c.op} ${c.variant} ${c.tree ?? 'binomial'} root ${c.root} nodeOf [${nodeOf.join(',')}]`).toBeUndefined()),
  );
}

/** One case `calls` times (the first builds the cache); the virtual time of the last call alone (between ideal barriers) and its start. */
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

/** The two-level evaluation of a scatter case on the simulator's model `m` (src/run/hierarchical-predict.ts). */
function predicted(nodeOf: readonly number[], c: HierCase, m: CostModel): number {
  const s = nodeStructure(nodeOf.length, (r) => nodeOf[r]);
  const u = c.unitBytes;
  const blockBytes = c.counts.map((x) => x * u);
  const regular = c.op === 'scatter';
  const rolesOf = (c.tree ?? 'binomial') === 'binomial' ? binomialRolesOf(s, c.root) : adaptiveRolesOf(s, c.root, regular ? blockBytes : c.counts, m);
  const headers = c.op === 'scatterv' && (c.tree ?? 'binomial') === 'binomial';
  return predictTwoLevelScatter(
    {
      structure: s,
      tree: rolesTree(s, c.root, rolesOf),
      blockBytes,
      root: c.root,
      unitBytes: u,
      reorder: c.variant === 'reorder',
      interiorCopies: headers,
      ...(c.op === 'scatterv' ? { rootCopyBeside: 'last' as const } : {}),
      ...(headers ? { extraBytes: (_c: number, ranks: number) => (ranks > 1 ? 4 * ranks : 0) } : {}),
    },
    m,
  );
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

describe('hierarchical scatter and scatterv on the simulator: correctness', () => {
  it('scatter: every variant and tree, placement, several roots, m = 0, 1, 5, byte for byte on every rank', async () => {
    const rnd = rng(12);
    for (const kind of PLACEMENTS) {
      for (const [p, n] of [
        [1, 1],
        [5, 2],
        [12, 4],
        [23, 3],
        [16, 16],
        [9, 1],
      ]) {
        const nodeOf = placementOf(kind, p, n, rnd);
        const roots = [...new Set([0, p - 1, int(rnd, 0, p - 1)])];
        const cases: HierCase[] = [];
        for (const variant of VARIANTS) {
          for (const tree of TREES) for (const root of roots) for (const m of [0, 1, 5]) cases.push({ ...scatterCase(p, variant, root, m, int(rnd, 0, 99)), tree });
        }
        await runCases(nodeOf, cases);
      }
    }
  });

  it('scatterv: random placements, roots, counts with zeros, gaps and permuted displacements, every variant and tree (property)', async () => {
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
          for (const variant of VARIANTS) for (const tree of TREES) cases.push({ ...scattervCase(p, variant, rnd, seed % 97), tree });
          await runCases(nodeOf, cases, model(nodeOf, { ia: 1, ib: 0.01, ea: 10, eb: 0.05 }));
        },
      ),
      { numRuns: BIG ? 120 : 30 },
    );
  });

  it("every distribution of Traff18, ordered / permuted / unequal nodes, roots at a node's first, last and any rank, every variant (binomial tree)", async () => {
    const rnd = rng(13);
    for (const kind of PLACEMENTS) {
      const p = 21;
      const nodeOf = placementOf(kind, p, 4, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const members = s.members[int(rnd, 0, s.nodes - 1)];
      const roots = [...new Set([0, p - 1, members[0], members[members.length - 1], int(rnd, 0, p - 1)])];
      const cases: HierCase[] = [];
      for (const dist of SEED000_DISTRIBUTIONS) {
        const counts = blockSizes(dist, { p, b: 1 + int(rnd, 0, 30), seed: 3 });
        const root = roots[cases.length % roots.length];
        for (const variant of VARIANTS) cases.push({ op: 'scatterv', variant, root, counts, unitBytes: 2, recvBytes: 2 * counts.reduce((a, x) => a + x, 0), seed: 5 });
      }
      await runCases(nodeOf, cases);
    }
  });

  it('every rank with a zero block, and only zero blocks: nothing delivered, nothing wrong', async () => {
    const p = 13;
    const nodeOf = placementOf('permuted-unequal', p, 4, rng(2));
    const cases: HierCase[] = [];
    for (const variant of VARIANTS) {
      for (const tree of TREES) {
        cases.push({ op: 'scatterv', variant, tree, root: 5, counts: new Array<number>(p).fill(0), unitBytes: 3, recvBytes: 0, seed: 1 });
        cases.push({ op: 'scatterv', variant, tree, root: 0, counts: Array.from({ length: p }, (_, i) => (i === 7 ? 9 : 0)), unitBytes: 2, recvBytes: 18, seed: 1 });
      }
    }
    await runCases(nodeOf, cases);
  });

  it('binomial scatterv: one message per non-root rank, its subtree\'s blocks behind 4 bytes per rank of an inner subtree', async () => {
    const rnd = rng(6);
    for (const kind of PLACEMENTS) {
      const p = 13;
      const nodeOf = placementOf(kind, p, 4, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      for (const variant of ['zero-copy', 'reorder'] as const) {
        // rank i's block is 64·2^i bytes: a message's size says which ranks it holds
        const counts = Array.from({ length: p }, (_, i) => 64 * 2 ** i);
        const total = counts.reduce((a, x) => a + x, 0);
        const root = int(rnd, 0, p - 1);
        const c: HierCase = { op: 'scatterv', variant, root, counts, unitBytes: 1, recvBytes: total, seed: 3 };
        const x = await lastCall(nodeOf, c, model(nodeOf));
        const last = (x.res.trace?.messages ?? []).filter((msg) => msg.start >= x.t0);
        expect(last.map((msg) => msg.to).sort((a, b) => a - b)).toEqual([...Array(p).keys()].filter((r) => r !== root));
        const tree = rolesTree(s, root, binomialRolesOf(s, root));
        for (const msg of last) {
          expect(tree.parent[msg.to]).toBe(msg.from);
          // the subtree of msg.to: its ranks, whose blocks the message holds
          const under: number[] = [];
          const stack = [msg.to];
          while (stack.length > 0) {
            const v = stack.pop() as number;
            under.push(v);
            for (let j = tree.first[v]; j < tree.first[v + 1]; j++) stack.push(tree.kids[j]);
          }
          const blocks = under.reduce((a, r) => a + counts[r], 0);
          expect(msg.bytes).toBe(blocks + (under.length > 1 ? 4 * under.length : 0));
        }
      }
    }
  });
});

describe('hierarchical scatter on the simulator: rounds, model time, copies, traffic', () => {
  const shapes: [Placement, number, number][] = [
    ['ordered', 16, 4],
    ['ordered', 64, 8],
    ['ordered', 36, 6],
    ['permuted', 48, 16],
    ['ordered-unequal', 30, 4],
    ['permuted-unequal', 33, 5],
    ['permuted', 20, 1],
    ['ordered', 7, 7],
  ];

  it('α = 1, β = γ = 0: a call takes at most ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds (scatter, small and large scatterv, both trees of the scatter)', async () => {
    const rnd = rng(22);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const bound = ceilLog2(s.nodes) + ceilLog2(s.largestNode);
      for (const variant of ['zero-copy', 'reorder'] as const) {
        for (const root of [0, p - 1, int(rnd, 0, p - 1)]) {
          for (const tree of TREES) {
            const g = await lastCall(nodeOf, { ...scatterCase(p, variant, root, 4, 1), tree }, model(nodeOf));
            expect(g.time, `${kind} p=${p} n=${n} ${variant} ${tree} root ${root}`).toBeLessThanOrEqual(bound);
            expect(g.time).toBeGreaterThanOrEqual(p > 1 ? 1 : 0);
          }
          for (const maxCount of [50, 8000]) {
            const v = await lastCall(nodeOf, { ...scattervCase(p, variant, rnd, 2, { maxCount }), root }, model(nodeOf));
            expect(v.time, `scatterv ${kind} p=${p} n=${n} ${variant} root ${root} counts ≤ ${maxCount}`).toBeLessThanOrEqual(bound);
          }
        }
      }
    }
  });

  it('α = 1: a regular ordered placement of 2^a nodes × 2^b ranks takes exactly a + b rounds', async () => {
    for (const [nodes, n] of [
      [4, 4],
      [8, 2],
      [2, 8],
      [36, 16],
    ]) {
      const p = nodes * n;
      const nodeOf = placementOf('ordered', p, n, rng(1));
      const z = await lastCall(nodeOf, scatterCase(p, 'zero-copy', 0, 2, 1), model(nodeOf));
      expect(z.time).toBe(ceilLog2(nodes) + ceilLog2(n));
    }
  });

  it('the simulated time equals the two-level evaluation: scatter (both trees) and binomial scatterv, zero-copy and reorder, any placement and root', async () => {
    const rnd = rng(34);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const m = model(nodeOf, { ia: 3, ib: 0.5, ea: 20, eb: 2, gamma: 0.25 });
      for (const variant of ['zero-copy', 'reorder'] as const) {
        const root = int(rnd, 0, p - 1);
        const cases: HierCase[] = [
          scatterCase(p, variant, root, 5, 7),
          { ...scatterCase(p, variant, root, 3, 7), tree: 'adaptive' },
          { ...scattervCase(p, variant, rnd, 7, { unitBytes: 2 }), root },
          { ...scattervCase(p, variant, rnd, 8, { maxCount: 3000 }), root: p - 1 },
        ];
        for (const c of cases) {
          const x = await lastCall(nodeOf, c, m);
          const want = predicted(nodeOf, c, m);
          expect(Math.abs(x.time - want), `${c.op} ${variant} ${c.tree ?? 'binomial'} ${kind} p=${p} root ${c.root}: ${x.time} vs ${want}`).toBeLessThanOrEqual(1e-9 * Math.max(1, want));
        }
      }
    }
  });

  it("zero-copy copies only the root's own block (scatterv: and each inner rank's own block out of its message); reorder copies every other block once more, exactly γ·Σ_{i≠root} m_i", async () => {
    const rnd = rng(35);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const m = model(nodeOf, { ia: 3, ib: 1, ea: 20, eb: 2, gamma: 1 });
      const root = int(rnd, 0, p - 1);
      for (const op of ['scatter', 'scatterv'] as const) {
        const base = op === 'scatter' ? scatterCase(p, 'zero-copy', root, 5, 7) : { ...scattervCase(p, 'zero-copy', rnd, 7), root };
        const s = nodeStructure(p, (r) => nodeOf[r]);
        const tree = rolesTree(s, root, binomialRolesOf(s, root));
        const inner = (r: number): boolean => r !== root && tree.first[r + 1] > tree.first[r];
        const z = await lastCall(nodeOf, base, m);
        const r = await lastCall(nodeOf, { ...base, variant: 'reorder' }, m);
        const copiesOf = (x: typeof z) => (x.res.trace?.copies ?? []).filter((cp) => cp.start >= x.t0);
        const bytes = (i: number): number => base.counts[i] * base.unitBytes;
        const own = (extra: number[]): [number, number][] =>
          [root, ...(op === 'scatterv' ? [...Array(p).keys()].filter(inner) : []), ...extra].filter((i) => bytes(i) > 0).map((i): [number, number] => [i, bytes(i)]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        const sorted = (x: typeof z) => copiesOf(x).map((cp): [number, number] => [cp.rank, cp.bytes]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        expect(sorted(z)).toEqual(own([]));
        // reorder: the root also packs every other block (one copy each, at the root)
        const packed = [...Array(p).keys()].filter((i) => i !== root && bytes(i) > 0);
        expect(sorted(r)).toEqual([...own([]), ...packed.map((i): [number, number] => [root, bytes(i)])].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
        for (const x of [z, r]) expect((x.res.trace?.messages ?? []).filter((msg) => msg.from === msg.to)).toEqual([]);
        const foreign = base.counts.reduce((a, c, i) => a + (i === root ? 0 : c), 0);
        expect(r.time - z.time, `${op} ${kind} p=${p}`).toBeCloseTo(foreign, 9);
      }
    }
  });

  it('no call sends communicator management messages, only its data on the two levels\' tags, whatever the root', async () => {
    const rnd = rng(45);
    for (const [kind, p, n] of shapes.slice(0, 5)) {
      const nodeOf = placementOf(kind, p, n, rnd);
      for (const c of [scatterCase(p, 'zero-copy', int(rnd, 0, p - 1), 3, 1), scattervCase(p, 'reorder', rnd, 1), { ...scatterCase(p, 'zero-copy', 0, 3, 1), tree: 'adaptive' as const }]) {
        const once = await lastCall(nodeOf, c, model(nodeOf), 1);
        const twice = await lastCall(nodeOf, c, model(nodeOf), 2);
        const all = [...(once.res.trace?.messages ?? []), ...(twice.res.trace?.messages ?? [])];
        expect(all.filter((msg) => msg.tag >= MANAGEMENT_TAG)).toEqual([]);
        const last = (twice.res.trace?.messages ?? []).filter((msg) => msg.start >= twice.t0);
        expect(last.every((msg) => HIER_TAGS.has(unslottedTag(msg.tag)))).toBe(true);
        // one message per non-root rank in every call
        expect(once.res.messages).toBe(p - 1);
        expect(twice.res.messages).toBe(2 * (p - 1));
      }
    }
  });
});

describe('hierarchical scatter and scatterv: typed errors on the ranks that see them', () => {
  const p = 8;
  const nodeOf = [0, 1, 0, 1, 2, 2, 0, 1];
  const sim = (program: (comm: Communicator) => Promise<unknown>) => runSim(p, program, { model: model(nodeOf) });

  it('rejects a bad variant, tree, root, model, buffers and options on every rank', async () => {
    const recv = new Uint8Array(2);
    const send = new Uint8Array(2 * p);
    const everyRank = async (program: (comm: Communicator) => Promise<unknown>, field: string): Promise<void> => {
      const res = await runSim(
        p,
        async (comm) => {
          try {
            await program(comm);
            return 'resolved';
          } catch (e) {
            return e instanceof InvalidArgumentError ? `${e.field} @${e.rank}` : String(e);
          }
        },
        { model: model(nodeOf) },
      );
      expect(res.results).toEqual([...Array(p).keys()].map((r) => `${field} @${r}`));
    };
    await everyRank((c) => hierarchicalScatter(c, { send, recv, root: 0 }, { variant: 'bogus' as HierarchicalVariantName }), 'variant');
    await everyRank((c) => hierarchicalScatter(c, { send, recv, root: 0 }, { tree: 'bogus' as HierarchicalTreeName }), 'tree');
    await everyRank((c) => hierarchicalScatterv(c, { send, recv, root: 0 }, { tree: 'bogus' as HierarchicalTreeName }), 'tree');
    await everyRank((c) => hierarchicalScatter(c, { send, recv, root: p }), 'root');
    await everyRank((c) => hierarchicalScatterv(c, { send, recv, root: -1 }), 'root');
    await everyRank((c) => hierarchicalScatterv(c, { send, recv, root: 0, counts: new Array<number>(p).fill(2) }, { tree: 'adaptive', model: model([0, 1]) }), 'model');
    await everyRank(
      (c) => hierarchicalScatter(c, { send, recv, root: 0 }, { tree: 'adaptive', model: hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 1 }, inter: { alpha: 1, beta: 1 }, ports: 2 }) }),
      'model',
    );
    await everyRank((c) => hierarchicalScatterv(c, { send, recv: 'no' as unknown as Uint8Array, root: 0, counts: new Array<number>(p).fill(2) }), 'recv');
    await everyRank((c) => hierarchicalScatter(c, { send, recv, root: 0 }, 7 as unknown as undefined), 'options');
    // the root's arguments: only the root sees them
    expect((await failure(sim((c) => hierarchicalScatter(c, { send: new Uint8Array(3), recv, root: 2 })))).field).toBe('send');
    expect((await failure(sim((c) => hierarchicalScatterv(c, { send, recv, root: 1, counts: [1, 2] })))).field).toBe('counts');
    expect(
      (await failure(sim((c) => hierarchicalScatterv(c, { send, recv, root: 0, counts: new Array<number>(p).fill(2), displs: [0, 1, 4, 6, 8, 10, 12, 14] })))).field,
    ).toBe('displs[1]');
  });

  it("scatter: a rank whose block is shorter or longer than the others' is reported on that rank (field recv)", async () => {
    for (const variant of ['zero-copy', 'reorder'] as const) {
      for (const tree of TREES) {
        for (const mine of [1, 3]) {
          const e = await failure(sim((c) => hierarchicalScatter(c, { send: new Uint8Array(2 * p), recv: new Uint8Array(c.rank === 5 ? mine : 2), root: 0 }, { variant, tree })));
          expect(e.field, `${variant} ${tree} ${mine}`).toBe('recv');
          expect(e.rank).toBe(5);
        }
      }
    }
  });

  it("scatterv, binomial: a rank whose count differs from the root's counts is reported on that rank (field count), leaf or inner", async () => {
    const counts = [2, 2, 2, 2, 2, 2, 2, 2];
    const s = nodeStructure(p, (r) => nodeOf[r]);
    const tree = rolesTree(s, 0, binomialRolesOf(s, 0));
    const leaf = [...Array(p).keys()].find((r) => r !== 0 && tree.first[r + 1] === tree.first[r]) as number;
    const inner = [...Array(p).keys()].find((r) => r !== 0 && tree.first[r + 1] > tree.first[r]) as number;
    for (const variant of ['zero-copy', 'reorder'] as const) {
      for (const wrong of [leaf, inner]) {
        for (const mine of [1, 3]) {
          const e = await failure(
            sim((c) => hierarchicalScatterv(c, { send: new Uint8Array(2 * p), recv: new Uint8Array(c.rank === wrong ? mine : 2), counts: c.rank === 0 ? counts : undefined, root: 0 }, { variant })),
          );
          expect(e.field, `rank ${wrong} count ${mine}`).toBe('count');
          expect(e.rank).toBe(wrong);
        }
      }
    }
  });
});

describe('hierarchical scatter and scatterv on worker threads with virtual nodes', () => {
  const program = new URL('./programs/hierarchical-program.ts', import.meta.url);

  it('8 ranks as 4×2 ordered and 2×4 permuted, 6 ranks unequal (3+1+2): every variant and tree, byte for byte on every rank', async () => {
    const layouts: number[][] = [
      [0, 0, 1, 1, 2, 2, 3, 3],
      [5, 9, 9, 5, 9, 5, 5, 9],
      [2, 0, 2, 1, 0, 0],
    ];
    for (const nodes of layouts) {
      const p = nodes.length;
      const rnd = rng(p * 11 + nodes[1]);
      const cases: HierCase[] = [];
      for (const variant of VARIANTS) {
        for (const tree of TREES) {
          cases.push({ ...scatterCase(p, variant, int(rnd, 0, p - 1), 5, 1), tree });
          cases.push({ ...scattervCase(p, variant, rnd, 2), tree });
          cases.push({ ...scattervCase(p, variant, rnd, 3, { maxCount: 12000, unitBytes: 1 }), tree });
        }
      }
      const perRank = await runThreads<(string | undefined)[]>(p, program, cases, { nodes });
      for (const r of perRank) for (const bad of r) expect(bad).toBeUndefined();
    }
  }, 120_000);

  it('every distribution of Traff18 on 6 ranks of unequal nodes (3+1+2): scatterv on both trees, byte for byte on every rank', async () => {
    const nodes = [2, 0, 2, 1, 0, 0];
    const p = nodes.length;
    const cases: HierCase[] = [];
    for (const dist of SEED000_DISTRIBUTIONS) {
      const counts = blockSizes(dist, { p, b: 40, seed: 2 });
      for (const tree of TREES) cases.push({ op: 'scatterv', variant: 'zero-copy', tree, root: cases.length % p, counts, unitBytes: 1, recvBytes: counts.reduce((a, x) => a + x, 0), seed: 4 });
    }
    const perRank = await runThreads<(string | undefined)[]>(p, program, cases, { nodes });
    for (const r of perRank) for (const bad of r) expect(bad).toBeUndefined();
  }, 120_000);
});
