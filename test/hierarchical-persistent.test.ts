/**
 * Persistent hierarchical gatherv and scatterv (hierarchicalGathervInit / hierarchicalScattervInit,
 * collectives/hierarchical/plan.ts) on the simulator:
 * - every variant and tree, ordered / permuted / unequal nodes, several distributions and roots:
 *   three starts of one plan, new data each time, byte for byte on every rank;
 * - both trees: planning sends the sizes over every edge once (and the adaptive constructions);
 *   every start sends exactly the tree's edges that carry data, nothing else (no size checks,
 *   counts or empty messages), and takes exactly the tree's evaluation (predictTwoLevel /
 *   predictTwoLevelScatter: the "data phase" of bench:hier-adaptive);
 * - typed errors: a start before the previous one resolved ('start'), bad arguments at init;
 * - worker threads with virtual nodes (the MPI suite runs the same program).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { unslottedTag } from '../src/collectives/call-scope.js';
import {
  HIER_TAG,
  HIERARCHICAL_TREE_NAMES,
  HIERARCHICAL_VARIANT_NAMES,
  hierarchicalGathervInit,
  hierarchicalScattervInit,
  nodeStructure,
  type HierarchicalPlan,
  type HierarchicalTreeName,
  type HierarchicalVariantName,
  type NodeStructure,
} from '../src/collectives/hierarchical/index.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { hierarchicalModel, type CostModel } from '../src/model/cost-model.js';
import { adaptiveRolesOf, binomialRolesOf, plannedRootCopySlot, predictTwoLevel, predictTwoLevelScatter, rolesTree, tailOrderedTree, type OrderedTree } from '../src/run/hierarchical-predict.js';
import { runSim } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { blockSizes, type DistributionName } from '../src/workloads/distributions.js';
import { int, rng } from './helpers/random.js';
import { subtree } from './helpers/trees.js';
import { asOp, gathervCase, placementOf, runPersistentRank, type HierCase, type Placement } from './programs/hierarchical-program.js';
import { BIG } from './helpers/big.js';

const HIER_TAGS = new Set<number>([HIER_TAG.local, HIER_TAG.bridge]);

function model(nodeOf: readonly number[]): CostModel {
  return hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 0.01 }, inter: { alpha: 10, beta: 0.05 }, gamma: 0.02 });
}

/** Rank r's block at start k. */
function block(r: number, k: number, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (r * 31 + i * 7 + k * 13 + 1) & 255);
}

interface Case {
  readonly op: 'gatherv' | 'scatterv';
  readonly variant: HierarchicalVariantName;
  readonly tree: HierarchicalTreeName;
  readonly root: number;
  readonly counts: readonly number[];
}

interface StartResult {
  readonly bad: string | undefined;
  /** Virtual start and end of every start (ideal barriers around each). */
  readonly t0: number[];
  readonly t1: number[];
}

/** One plan of `c` on this rank and `starts` starts, new data each time; the first wrong byte, if any. */
async function planAndStart(comm: Communicator, c: Case, m: CostModel, starts: number): Promise<StartResult> {
  const p = comm.size;
  const me = comm.rank;
  const isRoot = me === c.root;
  const displs: number[] = [];
  let at = 0;
  for (let r = 0; r < p; r++) {
    displs.push(at);
    at += c.counts[r] + 1; // a gap between blocks
  }
  const full = new Uint8Array(at);
  const own = new Uint8Array(c.counts[me]);
  const options = { variant: c.variant, tree: c.tree, model: m };
  const plan: HierarchicalPlan =
    c.op === 'gatherv'
      ? await hierarchicalGathervInit(comm, isRoot ? { send: own, recv: full, root: c.root, counts: c.counts, displs } : { send: own, root: c.root }, options)
      : await hierarchicalScattervInit(comm, isRoot ? { send: full, recv: own, root: c.root, counts: c.counts, displs } : { recv: own, root: c.root }, options);
  const t0: number[] = [];
  const t1: number[] = [];
  let bad: string | undefined;
  for (let k = 0; k < starts; k++) {
    if (c.op === 'gatherv') {
      own.set(block(me, k, own.length));
      full.fill(0xee);
    } else {
      own.fill(0xee);
      if (isRoot) for (let r = 0; r < p; r++) full.set(block(r, k, c.counts[r]), displs[r]);
    }
    await comm.clock?.sync();
    t0.push(comm.clock?.now() ?? 0);
    await plan.start();
    await comm.clock?.sync();
    t1.push(comm.clock?.now() ?? 0);
    if (bad !== undefined) continue;
    if (c.op === 'scatterv') {
      const want = block(me, k, own.length);
      const i = own.findIndex((x, j) => x !== want[j]);
      if (i >= 0) bad = `start ${k}: rank ${me} byte ${i}`;
    } else if (isRoot) {
      for (let r = 0; r < p && bad === undefined; r++) {
        const want = block(r, k, c.counts[r]);
        const got = full.subarray(displs[r], displs[r] + c.counts[r]);
        const i = got.findIndex((x, j) => x !== want[j]);
        if (i >= 0) bad = `start ${k}: rank ${r}'s block byte ${i} at the root`;
        if (full[displs[r] + c.counts[r]] !== 0xee) bad = `start ${k}: the gap after rank ${r}'s block was written`;
      }
    }
  }
  return { bad, t0, t1 };
}

const shapes: [Placement, number, number][] = [
  ['ordered', 24, 6],
  ['permuted', 20, 4],
  ['permuted-unequal', 23, 5],
  ['ordered-unequal', 17, 4],
];

/** The persistent scatterv's start over `t`: sends by decreasing tail, the root's copy beside the send copySlot picks. */
function scatterPredicted(s: NodeStructure, t: OrderedTree, blockBytes: Float64Array, root: number, reorder: boolean, m: CostModel): number {
  const ordered = tailOrderedTree(t, blockBytes, 1, m);
  return predictTwoLevelScatter({ structure: s, tree: ordered, blockBytes, root, unitBytes: 1, reorder, rootCopyBeside: plannedRootCopySlot(ordered, blockBytes, root, 1, m) }, m);
}

describe('persistent hierarchical gatherv and scatterv', () => {
  it('every variant and tree, placement and several roots: three starts of one plan, new data each, byte for byte on every rank', async () => {
    const rnd = rng(77);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const m = model(nodeOf);
      const cases: Case[] = [];
      for (const op of ['gatherv', 'scatterv'] as const) {
        for (const variant of HIERARCHICAL_VARIANT_NAMES) {
          for (const tree of HIERARCHICAL_TREE_NAMES) {
            const dist = (['spikes', 'random', 'two-blocks', 'increasing'] as DistributionName[])[int(rnd, 0, 3)];
            cases.push({ op, variant, tree, root: int(rnd, 0, p - 1), counts: blockSizes(dist, { p, b: 9, seed: int(rnd, 1, 99) }) });
          }
        }
      }
      const res = await runSim(
        p,
        async (comm) => {
          const out: (string | undefined)[] = [];
          for (const c of cases) out.push((await planAndStart(comm, c, m, 3)).bad);
          return out;
        },
        { model: m },
      );
      res.results.forEach((bad, r) => cases.forEach((c, i) => expect(bad[i], `rank ${r}: ${c.op} ${c.variant} ${c.tree} root ${c.root} ${kind}`).toBeUndefined()));
    }
  });

  it('both trees: every start sends exactly the tree\'s edges that carry data, nothing else, and takes exactly the tree\'s evaluation', async () => {
    const rnd = rng(78);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const m = model(nodeOf);
      for (const tree of HIERARCHICAL_TREE_NAMES) {
        for (const op of ['gatherv', 'scatterv'] as const) {
          for (const variant of ['zero-copy', 'reorder'] as const) {
            const root = int(rnd, 0, p - 1);
            // 'two-blocks': most ranges empty (no message for them); 'spikes': most not
            const dist = int(rnd, 0, 1) === 0 ? 'two-blocks' : 'spikes';
            const counts = blockSizes(dist, { p, b: 20, seed: int(rnd, 1, 99) });
            const c: Case = { op, variant, tree, root, counts };
            const res = await runSim(p, (comm) => planAndStart(comm, c, m, 2), { model: m, trace: true });
            const label = `${tree} ${op} ${variant} ${kind} ${dist} root ${root}`;
            const { t0, t1 } = res.results[0];
            for (const x of res.results) expect(x.bad, label).toBeUndefined();
            const messages = res.trace?.messages ?? [];
            // planning: the sizes over every edge (scatterv: and the tails back up), + the adaptive constructions
            const planning = messages.filter((msg) => msg.start < t0[0]);
            const edges = op === 'gatherv' ? p - 1 : 2 * (p - 1);
            expect(planning.filter((msg) => HIER_TAGS.has(unslottedTag(msg.tag))).length, label).toBe(edges);
            if (tree === 'binomial') expect(planning.length, label).toBe(edges);
            else expect(planning.length, label).toBeGreaterThan(edges);
            const t = rolesTree(s, root, tree === 'adaptive' ? adaptiveRolesOf(s, root, counts, m) : binomialRolesOf(s, root));
            const blockBytes = Float64Array.from(counts);
            const want = wantEdges(op, t, s, root, counts);
            expect(want.length, label).toBeLessThan(p); // empty ranges move nothing, … and some exist in these cases
            const predicted =
              op === 'gatherv'
                ? predictTwoLevel({ structure: s, blockBytes, root, unitBytes: 1, trailerBytes: 0, reorder: variant === 'reorder', tree: t }, m)
                : scatterPredicted(s, t, blockBytes, root, variant === 'reorder', m);
            for (let k = 0; k < 2; k++) {
              const mine = messages.filter((msg) => msg.start >= t0[k] && msg.start < t1[k]);
              expect(mine.map((msg) => `${msg.from}>${msg.to}:${msg.bytes}`).sort(), `${label} start ${k}`).toEqual(want);
              expect(t1[k] - t0[k], `${label} start ${k}`).toBeCloseTo(predicted, 9);
            }
          }
        }
      }
    }
  });

  it('scatterv sends by decreasing tail (Jackson\'s rule): a start takes exactly the gather\'s evaluation over the same tree (root block empty, symmetric model), never more than the one-shot order, often less', async () => {
    const rnd = rng(79);
    let faster = 0;
    let cases = 0;
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const m = model(nodeOf);
      for (const tree of HIERARCHICAL_TREE_NAMES) {
        for (const dist of ['spikes', 'increasing', 'decreasing', 'random'] as DistributionName[]) {
          const root = int(rnd, 0, p - 1);
          const counts = blockSizes(dist, { p, b: 40, seed: int(rnd, 1, 99) });
          counts[root] = 0;
          const label = `${tree} ${kind} ${dist} root ${root}`;
          const res = await runSim(p, (comm) => planAndStart(comm, { op: 'scatterv', variant: 'zero-copy', tree, root, counts }, m, 1), { model: m });
          for (const x of res.results) expect(x.bad, label).toBeUndefined();
          const { t0, t1 } = res.results[0];
          const t = rolesTree(s, root, tree === 'adaptive' ? adaptiveRolesOf(s, root, counts, m) : binomialRolesOf(s, root));
          const blockBytes = Float64Array.from(counts);
          const gather = predictTwoLevel({ structure: s, blockBytes, root, unitBytes: 1, trailerBytes: 0, reorder: false, tree: t }, m);
          const oneShotOrder = predictTwoLevelScatter({ structure: s, tree: t, blockBytes, root, unitBytes: 1, reorder: false }, m);
          expect(t1[0] - t0[0], label).toBeCloseTo(gather, 9);
          expect(t1[0] - t0[0], label).toBeLessThanOrEqual(oneShotOrder + 1e-9);
          if (t1[0] - t0[0] < oneShotOrder - 1e-9) faster++;
          cases++;
        }
      }
    }
    expect(cases).toBe(shapes.length * 8);
    expect(faster).toBeGreaterThan(cases / 4);
  });

  it('random placements, roots, counts with zeros, gaps, permuted displacements and 1–3-byte units, every variant and tree: three starts, byte for byte (property)', async () => {
    const kinds: Placement[] = ['ordered', 'ordered-unequal', 'permuted', 'permuted-unequal'];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: BIG ? 70 : 30 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(...kinds),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async (p, n, kind, seed) => {
          const rnd = rng(seed);
          const nodeOf = placementOf(kind, p, n, rnd);
          const m = hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 0.01 * int(rnd, 0, 3) }, inter: { alpha: int(rnd, 1, 100), beta: 0.05 }, gamma: 0.01 });
          const cases: HierCase[] = [];
          for (const variant of HIERARCHICAL_VARIANT_NAMES) {
            for (const tree of HIERARCHICAL_TREE_NAMES) {
              const c: HierCase = { ...gathervCase(p, variant, rnd, seed % 97, { unitBytes: int(rnd, 1, 3) }), tree, persistent: true };
              cases.push(c, asOp(c, 'scatterv'));
            }
          }
          const res = await runSim(
            p,
            async (comm) => {
              const out: (string | undefined)[] = [];
              for (const c of cases) out.push(...(await runPersistentRank(comm, c, 3, { model: m })));
              return out;
            },
            { model: m },
          );
          res.results.forEach((bad, r) => bad.forEach((x, i) => expect(x, `rank ${r}: ${JSON.stringify(cases[Math.floor(i / 3)])} ${kind}`).toBeUndefined()));
        },
      ),
      { numRuns: BIG ? 100 : 20 },
    );
  });

  it('a start before the previous one resolved is refused (field start), the plan works on; bad arguments are refused at init', async () => {
    const p = 6;
    const nodeOf = [0, 1, 0, 1, 2, 2];
    const m = model(nodeOf);
    const counts = [1, 2, 3, 0, 2, 1];
    const res = await runSim(
      p,
      async (comm) => {
        const recv = new Uint8Array(counts[comm.rank]);
        const plan = await hierarchicalScattervInit(comm, comm.rank === 0 ? { send: new Uint8Array(9), recv, root: 0, counts } : { recv, root: 0 }, { tree: 'adaptive', model: m });
        const first = plan.start();
        const second = await plan.start().then(
          () => 'resolved',
          (e: unknown) => (e instanceof InvalidArgumentError ? e.field : String(e)),
        );
        await first;
        await plan.start();
        return second;
      },
      { model: m },
    );
    expect(res.results).toEqual(new Array<string>(p).fill('start'));
    // the root's counts disagree with rank 3's own count: the root's construction check names them
    const bad = await runSim(
      p,
      (comm) => hierarchicalScattervInit(comm, comm.rank === 0 ? { send: new Uint8Array(9), recv: new Uint8Array(1), root: 0, counts: [1, 2, 3, 1, 2, 0] } : { recv: new Uint8Array(counts[comm.rank]), root: 0 }, { tree: 'adaptive', model: m }),
      { model: m },
    ).then(
      () => undefined,
      (e: unknown) => (e instanceof CommunicationError && e.cause !== undefined ? e.cause : e),
    );
    expect(bad).toBeInstanceOf(InvalidArgumentError);
    expect((bad as InvalidArgumentError).field).toBe('counts');
    const variant = await runSim(p, (comm) => hierarchicalGathervInit(comm, { send: new Uint8Array(1), root: 0, recv: new Uint8Array(6), counts: new Array<number>(p).fill(1) }, { variant: 'nope' as HierarchicalVariantName }), {
      model: m,
    }).then(
      () => undefined,
      (e: unknown) => (e instanceof CommunicationError && e.cause !== undefined ? e.cause : e),
    );
    expect((variant as InvalidArgumentError).field).toBe('variant');
    // counts that disagree with the ranks' own blocks are caught at init, whatever the tree: gatherv at the
    // root (two blocks wrong by amounts that cancel included), scatterv on the rank whose count differs
    const causeOf = (e: unknown): unknown => (e instanceof CommunicationError && e.cause !== undefined ? e.cause : e);
    for (const tree of HIERARCHICAL_TREE_NAMES) {
      for (const own of [
        [1, 2, 3, 1, 2, 1],
        [1, 3, 2, 0, 2, 1],
      ]) {
        const g = await runSim(p, (comm) => hierarchicalGathervInit(comm, { send: new Uint8Array(own[comm.rank]), root: 0, recv: new Uint8Array(9), counts }, { tree, model: m }), {
          model: m,
        }).then(() => undefined, causeOf);
        expect(g, `gatherv ${tree} [${own.join(',')}]`).toMatchObject({ field: 'counts', rank: 0 });
      }
      const sc = await runSim(
        p,
        (comm) => hierarchicalScattervInit(comm, comm.rank === 0 ? { send: new Uint8Array(9), recv: new Uint8Array(1), root: 0, counts } : { recv: new Uint8Array(comm.rank === 4 ? 3 : counts[comm.rank]), root: 0 }, { tree, model: m }),
        { model: m },
      ).then(() => undefined, causeOf);
      expect(sc, `scatterv ${tree}`).toBeInstanceOf(InvalidArgumentError);
      expect(['count', 'counts']).toContain((sc as InvalidArgumentError).field);
    }
  });
});

describe('persistent hierarchical gatherv and scatterv on worker threads with virtual nodes', () => {
  const program = new URL('./programs/hierarchical-program.ts', import.meta.url);

  it('8 ranks as 2×4 permuted, 6 ranks unequal: every variant and tree, one plan started twice, byte for byte', async () => {
    const layouts: number[][] = [
      [5, 9, 9, 5, 9, 5, 5, 9],
      [2, 0, 2, 1, 0, 0],
    ];
    for (const nodes of layouts) {
      const p = nodes.length;
      const rnd = rng(p * 17 + nodes[1]);
      const cases: HierCase[] = [];
      for (const variant of HIERARCHICAL_VARIANT_NAMES) {
        for (const tree of HIERARCHICAL_TREE_NAMES) {
          const v = { ...gathervCase(p, variant, rnd, 3, { maxCount: 5000, unitBytes: 1 }), tree, persistent: true };
          cases.push(v, asOp(v, 'scatterv'));
        }
      }
      const perRank = await runThreads<(string | undefined)[]>(p, program, cases, { nodes });
      for (const r of perRank) {
        expect(r.length).toBe(2 * cases.length);
        for (const bad of r) expect(bad).toBeUndefined();
      }
    }
  }, 120_000);
});


/** Every data message of one start: gatherv child → parent, scatterv parent → child, each edge whose range holds data, exactly its bytes. */
function wantEdges(op: 'gatherv' | 'scatterv', tree: OrderedTree, s: ReturnType<typeof nodeStructure>, root: number, counts: readonly number[]): string[] {
  const out: string[] = [];
  for (let v = 0; v < s.size; v++) {
    if (v === root) continue;
    const bytes = subtree(tree, v).reduce((a, r) => a + counts[r], 0);
    if (bytes === 0) continue;
    out.push(op === 'gatherv' ? `${v}>${tree.parent[v]}:${bytes}` : `${tree.parent[v]}>${v}:${bytes}`);
  }
  return out.sort();
}
