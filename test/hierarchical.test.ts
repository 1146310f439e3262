/**
 * Hierarchical gather and gatherv (src/collectives/hierarchical, TraffRougier14): byte-for-byte
 * correctness against a reference for ordered, permuted and unequal placements, random roots,
 * every variant (simulator and worker threads with virtual nodes); the round bound
 * ⌈log₂N⌉ + ⌈log₂n_max⌉ in the α-only model; what is copied (trace.copies) and the exact γ
 * cost of 'reorder'; the cache (no management traffic after the first call); typed errors.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { MANAGEMENT_TAG } from '../src/comm/agree.js';
import { unslottedTag } from '../src/collectives/call-scope.js';
import {
  BRIDGES_KEPT,
  cachedBridges,
  HIER_TAG,
  HIERARCHICAL_VARIANT_NAMES,
  hierarchicalGather,
  hierarchicalGatherv,
  nodeStructure,
  type HierarchicalVariantName,
} from '../src/collectives/hierarchical/index.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { hierarchicalModel, type CostModel } from '../src/model/cost-model.js';
import { runSim, type SimResult } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { ceilLog2 } from '../src/util/ceil-log.js';
import { BIG } from './helpers/big.js';
import { int, rng } from './helpers/random.js';
import {
  blockOf,
  gatherCase,
  gathervCase,
  mismatch,
  placementOf,
  runCaseRank,
  type HierCase,
  type Placement,
} from './programs/hierarchical-program.js';

const VARIANTS = HIERARCHICAL_VARIANT_NAMES;
const PLACEMENTS: Placement[] = ['ordered', 'ordered-unequal', 'permuted', 'permuted-unequal'];
const HIER_TAGS = new Set<number>([HIER_TAG.local, HIER_TAG.bridge]);

function model(nodeOf: readonly number[], o: { ia?: number; ib?: number; ea?: number; eb?: number; gamma?: number } = {}): CostModel {
  return hierarchicalModel({
    nodeOf,
    intra: { alpha: o.ia ?? 1, beta: o.ib ?? 0 },
    inter: { alpha: o.ea ?? 1, beta: o.eb ?? 0 },
    gamma: o.gamma ?? 0,
  });
}

/** Runs the cases one after the other on one communicator; the root's recv of each, checked. */
async function runCases(nodeOf: readonly number[], cases: readonly HierCase[]): Promise<void> {
  const p = nodeOf.length;
  const res = await runSim(
    p,
    async (comm) => {
      const out: (string | undefined)[] = [];
      for (const c of cases) {
        const { recv } = await runCaseRank(comm, c);
        out.push(comm.rank === c.root ? mismatch(c, recv) : undefined);
      }
      return out;
    },
    { model: model(nodeOf) },
  );
  cases.forEach((c, i) => {
    expect(res.results[c.root][i], `${c.op} ${c.variant} root ${c.root} nodeOf [${nodeOf.join(',')}]`).toBeUndefined();
  });
}

/**
 * One case twice (the first call builds the cache); the virtual time of the second call alone
 * (between two ideal barriers) and its trace window start.
 */
async function timedSecondCall(
  nodeOf: readonly number[],
  c: HierCase,
  m: CostModel,
  calls = 2,
): Promise<{ time: number; t0: number; res: SimResult<{ t0: number; t1: number; bad: string | undefined }> }> {
  const res = await runSim(
    nodeOf.length,
    async (comm: Communicator) => {
      let t0 = 0;
      let bad: string | undefined;
      for (let k = 0; k < calls; k++) {
        await comm.clock?.sync();
        t0 = comm.clock?.now() ?? 0;
        const { recv } = await runCaseRank(comm, c);
        if (comm.rank === c.root) bad = mismatch(c, recv);
      }
      await comm.clock?.sync();
      return { t0, t1: comm.clock?.now() ?? 0, bad };
    },
    { model: m, trace: true, unitBytes: c.unitBytes },
  );
  expect(res.results[c.root].bad).toBeUndefined();
  const { t0, t1 } = res.results[0];
  return { time: t1 - t0, t0, res };
}

const causeOf = (e: unknown): unknown => (e instanceof CommunicationError && e.cause !== undefined ? e.cause : e);

async function failureField(p: PromiseLike<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    const cause = causeOf(e);
    expect(cause).toBeInstanceOf(InvalidArgumentError);
    return (cause as InvalidArgumentError).field;
  }
  throw new Error('expected a rejection');
}

describe('hierarchical gather and gatherv on the simulator: correctness', () => {
  it('gather: every variant, placement, several roots, m = 0, 1, 5, byte for byte', async () => {
    const rnd = rng(11);
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
        for (const variant of VARIANTS) for (const root of roots) for (const m of [0, 1, 5]) cases.push(gatherCase(p, variant, root, m, int(rnd, 0, 99)));
        await runCases(nodeOf, cases);
      }
    }
  });

  it('gatherv: random placements, roots, counts with zeros, gaps and permuted displacements (property)', async () => {
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
          for (const variant of VARIANTS) for (let k = 0; k < 2; k++) cases.push(gathervCase(p, variant, rnd, seed % 97));
          await runCases(nodeOf, cases);
        },
      ),
      { numRuns: BIG ? 150 : 40 },
    );
  });

  it('gatherv with large and uneven blocks: correct, and one message per non-root rank carrying exactly its subtree', async () => {
    const rnd = rng(5);
    for (const kind of PLACEMENTS) {
      const p = 13;
      const nodeOf = placementOf(kind, p, 4, rnd);
      for (const variant of ['zero-copy', 'reorder'] as const) {
        for (const pattern of ['random', 'around 16 KiB', 'powers of two'] as const) {
          const counts = Array.from({ length: p }, (_, i) =>
            pattern === 'random' ? (i % 3 === 0 ? 0 : int(rnd, 2000, 90000)) : pattern === 'around 16 KiB' ? 16384 + (i % 4) - 1 : 64 * 2 ** i,
          );
          const total = counts.reduce((a, x) => a + x, 0);
          const root = int(rnd, 0, p - 1);
          const c: HierCase = { op: 'gatherv', variant, root, counts, unitBytes: 1, recvBytes: total, seed: 3 };
          const x = await timedSecondCall(nodeOf, c, model(nodeOf));
          const second = (x.res.trace?.messages ?? []).filter((msg) => msg.start >= x.t0);
          // One message per non-root rank (its subtree, 8 bytes of size check behind).
          expect(second.map((msg) => msg.from).sort((a, b) => a - b)).toEqual([...Array(p).keys()].filter((r) => r !== root));
          if (pattern !== 'powers of two') continue;
          // Rank i's block is 64·2^i bytes, so a message's size says which ranks it holds: the sender,
          // and exactly the ranks of the messages the sender received — the blocks of a tree.
          const held = (bytes: number): number[] => [...Array(p).keys()].filter((r) => ((bytes - 8) / 64) & (2 ** r));
          const sent = new Map(second.map((msg) => [msg.from, held(msg.bytes)]));
          for (const msg of second) {
            expect((msg.bytes - 8) % 64).toBe(0);
            const fromChildren = second.filter((m2) => m2.to === msg.from).flatMap((m2) => sent.get(m2.from) as number[]);
            expect(sent.get(msg.from)).toEqual([msg.from, ...fromChildren].sort((a, b) => a - b));
          }
        }
      }
    }
  });

  it('consecutive calls with roots on many nodes stay correct and keep at most BRIDGES_KEPT bridges', async () => {
    const p = 40;
    const nodeOf = Array.from({ length: p }, (_, r) => r % 20); // 20 nodes of 2, permuted (round robin)
    const res = await runSim(
      p,
      async (comm) => {
        const bad: (string | undefined)[] = [];
        for (let root = 0; root < p; root += 1) {
          const c = gatherCase(p, 'zero-copy', root, 3, root);
          const { recv } = await runCaseRank(comm, c);
          if (comm.rank === root) bad.push(mismatch(c, recv));
        }
        return { bad, bridges: cachedBridges(comm) };
      },
      { model: model(nodeOf) },
    );
    for (const r of res.results) {
      for (const b of r.bad) expect(b).toBeUndefined();
      expect(r.bridges).toBe(BRIDGES_KEPT);
    }
  });
});

describe('hierarchical gather on the simulator: rounds, copies, cache', () => {
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

  it('α = 1, β = γ = 0: a call takes at most ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds (gather, small and large gatherv)', async () => {
    const rnd = rng(21);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const bound = ceilLog2(s.nodes) + ceilLog2(s.largestNode);
      for (const variant of ['zero-copy', 'reorder'] as const) {
        for (const root of [0, p - 1, int(rnd, 0, p - 1)]) {
          const g = await timedSecondCall(nodeOf, gatherCase(p, variant, root, 4, 1), model(nodeOf));
          expect(g.time, `${kind} p=${p} n=${n} ${variant} root ${root}`).toBeLessThanOrEqual(bound);
          expect(g.time).toBeGreaterThanOrEqual(p > 1 ? 1 : 0);
          for (const maxCount of [50, 8000]) {
            const v = await timedSecondCall(nodeOf, { ...gathervCase(p, variant, rnd, 2, { maxCount }), root }, model(nodeOf));
            expect(v.time, `gatherv ${kind} p=${p} n=${n} ${variant} root ${root} counts ≤ ${maxCount}`).toBeLessThanOrEqual(bound);
          }
        }
      }
    }
  });

  it('α = 1: a regular ordered placement of 2^a nodes × 2^b ranks takes exactly a + b rounds; flat gather ⌈log₂p⌉', async () => {
    for (const [nodes, n] of [
      [4, 4],
      [8, 2],
      [2, 8],
      [36, 16],
    ]) {
      const p = nodes * n;
      const nodeOf = placementOf('ordered', p, n, rng(1));
      const z = await timedSecondCall(nodeOf, gatherCase(p, 'zero-copy', 0, 2, 1), model(nodeOf));
      expect(z.time).toBe(ceilLog2(nodes) + ceilLog2(n));
      const f = await timedSecondCall(nodeOf, gatherCase(p, 'flat', 0, 2, 1), model(nodeOf));
      expect(f.time).toBe(ceilLog2(p));
    }
  });

  it('zero-copy copies only the root\'s own block; reorder copies every other block once; the difference is exactly γ·Σ_{i≠root} m_i', async () => {
    const rnd = rng(33);
    for (const [kind, p, n] of shapes) {
      const nodeOf = placementOf(kind, p, n, rnd);
      const m = model(nodeOf, { ia: 3, ib: 1, ea: 20, eb: 2, gamma: 1 });
      for (const op of ['gather', 'gatherv'] as const) {
        const root = int(rnd, 0, p - 1);
        const base = op === 'gather' ? gatherCase(p, 'zero-copy', root, 5, 7) : { ...gathervCase(p, 'zero-copy', rnd, 7), root };
        const z = await timedSecondCall(nodeOf, base, m);
        const r = await timedSecondCall(nodeOf, { ...base, variant: 'reorder' }, m);
        const ownBytes = base.counts[root] * base.unitBytes;
        const foreign = base.counts.map((c, i) => (i === root ? 0 : c));
        const foreignElements = foreign.reduce((a, x) => a + x, 0);
        const copiesOf = (x: typeof z) => (x.res.trace?.copies ?? []).filter((cp) => cp.start >= x.t0);
        const zc = copiesOf(z);
        expect(zc.map((cp) => [cp.rank, cp.bytes])).toEqual(ownBytes > 0 ? [[root, ownBytes]] : []);
        const rc = copiesOf(r);
        expect(rc.every((cp) => cp.rank === root)).toBe(true);
        const want = [ownBytes, ...foreign.map((c) => c * base.unitBytes)].filter((b) => b > 0).sort((a, b) => a - b);
        expect(rc.map((cp) => cp.bytes).sort((a, b) => a - b)).toEqual(want);
        // No message to oneself (an engine copy) in either.
        for (const x of [z, r]) expect((x.res.trace?.messages ?? []).filter((msg) => msg.from === msg.to)).toEqual([]);
        // toBeCloseTo: times are in units of unitBytes bytes (1-3 here), not always binary fractions.
        expect(r.time - z.time, `${op} ${kind} p=${p}`).toBeCloseTo(foreignElements, 9);
      }
    }
  });

  it('no call sends communicator management messages, only its data (both levels travel on the communicator itself), whatever the root', async () => {
    const rnd = rng(44);
    for (const [kind, p, n] of shapes.slice(0, 5)) {
      const nodeOf = placementOf(kind, p, n, rnd);
      for (const op of ['gather', 'gatherv'] as const) {
        const c = op === 'gather' ? gatherCase(p, 'zero-copy', int(rnd, 0, p - 1), 3, 1) : gathervCase(p, 'reorder', rnd, 1);
        const once = await timedSecondCall(nodeOf, c, model(nodeOf), 1);
        const twice = await timedSecondCall(nodeOf, c, model(nodeOf), 2);
        const mgmt = (x: typeof once) => (x.res.trace?.messages ?? []).filter((msg) => msg.tag >= MANAGEMENT_TAG).length;
        // neither creates a communicator: the node level travels between a node's members
        // and the bridge between leaders, both on the communicator itself
        expect(mgmt(once)).toBe(0);
        expect(mgmt(twice)).toBe(0);
        const second = (twice.res.trace?.messages ?? []).filter((msg) => msg.start >= twice.t0);
        expect(second.every((msg) => HIER_TAGS.has(unslottedTag(msg.tag)))).toBe(true);
        expect(second.length).toBe(once.res.messages - mgmt(once));
        expect(twice.res.messages - once.res.messages).toBe(second.length);
      }
    }
  });

  it('a new root on another node costs no management messages either (the bridge is local knowledge)', async () => {
    const p = 24;
    const nodeOf = placementOf('permuted', p, 4, rng(9));
    const res = await runSim(
      p,
      async (comm) => {
        await hierarchicalGather(comm, { send: blockOf(comm.rank, 2, 0), recv: comm.rank === 0 ? new Uint8Array(2 * p) : undefined, root: 0 });
        await comm.clock?.sync();
        const t0 = comm.clock?.now() ?? 0;
        const root = nodeOf.findIndex((x) => x !== nodeOf[0]);
        await hierarchicalGather(comm, { send: blockOf(comm.rank, 2, 0), recv: comm.rank === root ? new Uint8Array(2 * p) : undefined, root });
        return t0;
      },
      { model: model(nodeOf), trace: true },
    );
    const later = (res.trace?.messages ?? []).filter((msg) => msg.start >= res.results[0]);
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((msg) => HIER_TAGS.has(unslottedTag(msg.tag)))).toBe(true);
  });
});

describe('hierarchical gather and gatherv: typed errors', () => {
  const p = 8;
  const nodeOf = [0, 1, 0, 1, 2, 2, 0, 1];
  const sim = (program: (comm: Communicator) => Promise<unknown>) => runSim(p, program, { model: model(nodeOf) });

  it('rejects a bad variant, root, buffers and options on every rank', async () => {
    const send = new Uint8Array(2);
    const recv = new Uint8Array(2 * p);
    const variant = 'bogus' as HierarchicalVariantName;
    expect(await failureField(sim((c) => hierarchicalGather(c, { send, recv, root: 0 }, { variant })))).toBe('variant');
    expect(await failureField(sim((c) => hierarchicalGather(c, { send, recv, root: p })))).toBe('root');
    expect(await failureField(sim((c) => hierarchicalGather(c, { send, recv: new Uint8Array(3), root: 2 })))).toBe('recv');
    expect(await failureField(sim((c) => hierarchicalGatherv(c, { send, root: 1, recv, counts: [1, 2] })))).toBe('counts');
    expect(
      await failureField(sim((c) => hierarchicalGatherv(c, { send, root: 0, recv, counts: new Array<number>(p).fill(2), displs: [0, 1, 4, 6, 8, 10, 12, 14] }))),
    ).toBe('displs[1]');
  });

  it('gather: a rank whose block is shorter than the others\' is reported (field send)', async () => {
    for (const variant of VARIANTS) {
      const f = await failureField(
        sim((c) => hierarchicalGather(c, { send: new Uint8Array(c.rank === 5 ? 1 : 2), recv: new Uint8Array(2 * p), root: 0 }, { variant })),
      );
      expect(f).toBe('send');
    }
  });

  it('gatherv: a rank whose count disagrees with the root\'s counts is reported at the root (field counts)', async () => {
    for (const variant of ['zero-copy', 'reorder'] as const) {
      const counts = [2, 2, 2, 2, 2, 2, 2, 2];
      const f = await failureField(
        sim((c) =>
          hierarchicalGatherv(
            c,
            { send: new Uint8Array(c.rank === 3 ? 1 : 2), recv: new Uint8Array(2 * p), counts: c.rank === 0 ? counts : undefined, root: 0 },
            { variant },
          ),
        ),
      );
      expect(f).toBe('counts');
    }
  });

  it('gatherv: blocks wrong by amounts that cancel within one message are reported too (size check), not delivered misplaced', async () => {
    // Ranks 3 and 7 share node 1 (leader 1): its message has the right total, 2 + 3 + 1 bytes.
    const counts = [2, 2, 2, 2, 2, 2, 2, 2];
    for (const variant of ['zero-copy', 'reorder'] as const) {
      for (const [plus, minus] of [
        [3, 7],
        [7, 3],
      ]) {
        const size = (r: number): number => (r === plus ? 3 : r === minus ? 1 : 2);
        const run = sim((c) =>
          hierarchicalGatherv(c, { send: new Uint8Array(size(c.rank)), recv: new Uint8Array(2 * p), counts: c.rank === 0 ? counts : undefined, root: 0 }, { variant }),
        );
        await expect(run).rejects.toThrow(/do not match the root's counts/);
        expect(await failureField(run)).toBe('counts');
      }
    }
  });
});

describe('hierarchical gather and gatherv on worker threads with virtual nodes', () => {
  const program = new URL('./programs/hierarchical-program.ts', import.meta.url);

  it('8 ranks as 4×2 ordered and 2×4 permuted, 6 ranks unequal (3+1+2): every variant, byte for byte', async () => {
    const layouts: number[][] = [
      [0, 0, 1, 1, 2, 2, 3, 3],
      [5, 9, 9, 5, 9, 5, 5, 9],
      [2, 0, 2, 1, 0, 0],
    ];
    for (const nodes of layouts) {
      const p = nodes.length;
      const rnd = rng(p * 7 + nodes[1]);
      const cases: HierCase[] = [];
      for (const variant of VARIANTS) {
        cases.push(gatherCase(p, variant, int(rnd, 0, p - 1), 5, 1));
        cases.push(gathervCase(p, variant, rnd, 2));
        cases.push(gathervCase(p, variant, rnd, 3, { maxCount: 12000, unitBytes: 1 }));
      }
      const perRank = await runThreads<(string | undefined)[]>(p, program, cases, { nodes });
      for (const r of perRank) for (const bad of r) expect(bad).toBeUndefined();
    }
  }, 60_000);
});

describe('zero-copy placement: the root receives through a layout (TraffRougier14 §6)', () => {
  it('a message of equal blocks is an indexed-block layout at the ranks′ displacements, unequal ones indexed; the views cover exactly the blocks', async () => {
    const { messageLayout } = await import('../src/collectives/hierarchical/root-target.js');
    const { runs } = await import('../src/layout/index.js');
    const layout = { counts: [3, 3, 3, 3, 0, 2], displs: [9, 0, 3, 20, 30, 6], unitBytes: 1 };
    const equal = messageLayout(layout, [3, 0, 2]);
    expect(equal.kind).toBe('indexedBlock');
    expect(equal.size).toBe(9);
    const r = runs(equal, 0, equal.size);
    expect([...r.offsets]).toEqual([20, 9, 3]);
    expect([...r.lengths]).toEqual([3, 3, 3]);
    const mixed = messageLayout(layout, [5, 4, 1]);
    expect(mixed.kind).toBe('indexed');
    const m = runs(mixed, 0, mixed.size);
    expect([...m.offsets]).toEqual([6, 0]); // rank 4's empty block dropped
    expect([...m.lengths]).toEqual([2, 3]);
  });
});
