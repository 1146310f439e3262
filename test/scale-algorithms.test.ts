/**
 * Work counts that keep the algorithms of the 2^20-rank simulations linear in their work
 * (counted, not timed, so a regression cannot hide in a fast machine):
 * - the hierarchical gathers with a node structure the caller shares (HierarchicalOptions.
 *   structure): each rank asks `nodeOf` O(1) times, not p times (p ranks computing the
 *   structure each were O(p²): 14.5 GB at p = 2^15); the bridge's leaders and the root's
 *   rank sequences are views of the shared structure, not per-rank copies;
 * - the two-block tree's join: one tree build and one evaluation per join (plus a build when
 *   another transfer position wins), whatever p (a build and an evaluation per position,
 *   O(p log p), before);
 * - the allgathers' messages of blocks adjacent in recv are one range each, not one per block:
 *   a rank's recursive-doubling schedule holds O(log p) ranges, not O(p) (root gathering's
 *   scatter-allgather broadcast over a group of 2^11 ranks took 3.1 GB before, 0.7 GB after);
 * - Kang19's settings at 2^17 ranks and more: no Math.max(...) over a group (stack overflow);
 *   Algorithm 1's and 2's group-wide counts built once per group, not once per rank.
 */
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { ForwardingCommunicator } from '../src/comm/forwarding.js';
import { hierarchicalGather, hierarchicalGatherv, nodeStructure, type NodeStructure } from '../src/collectives/hierarchical/index.js';
import { bridgeFor, checkStructure } from '../src/collectives/hierarchical/structure.js';
import { InvalidArgumentError, TooLargeError } from '../src/errors.js';
import { hierarchicalModel, linearModel } from '../src/model/cost-model.js';
import { firstMismatch, fullBuffer, blockOf } from '../src/run/data.js';
import { interSetting } from '../src/run/inter-settings.js';
import { checkInterRanks } from '../src/run/inter.js';
import { compileAllgatherSchedule } from '../src/collectives/allgather/schedule.js';
import { GROUP_ARRAYS_BUILT, segmentedRankPlan, vRecvPlan, prefixSums } from '../src/collectives/inter/plan.js';
import { runSim } from '../src/transports/sim/index.js';
import { evaluate } from '../src/trees/evaluate.js';
import { JOIN_WORK, twoBlockTree } from '../src/trees/two-block.js';
import { blockSizes } from '../src/workloads/distributions.js';

/** Counts this rank's nodeOf calls (everything else forwarded). */
class NodeOfCounter extends ForwardingCommunicator {
  calls = 0;

  protected wrap(sub: Communicator): Communicator {
    return sub;
  }

  override nodeOf(rank: number): number {
    this.calls++;
    return this.inner.nodeOf(rank);
  }
}

/** nodes × perNode ranks, rank r on node ⌊r / perNode⌋ shuffled by a fixed permutation (odd stride). */
function placement(nodes: number, perNode: number): number[] {
  const p = nodes * perNode;
  const out = new Array<number>(p);
  for (let r = 0; r < p; r++) out[(r * 7 + 3) % p] = 10 + 3 * Math.floor(r / perNode);
  return out;
}

describe('hierarchical gathers with a shared node structure', () => {
  const nodes = 8;
  const perNode = 8;
  const nodeOf = placement(nodes, perNode);
  const p = nodeOf.length;
  const model = hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 0.5 }, inter: { alpha: 3, beta: 1 }, gamma: 0.25 });

  async function run(structure: NodeStructure | undefined): Promise<{ calls: number[]; ok: boolean[]; times: number[] }> {
    const counts = Array.from({ length: p }, (_, i) => (i * 5) % 7);
    const res = await runSim(
      p,
      async (world) => {
        const comm = new NodeOfCounter(world);
        const root = 13;
        let ok = true;
        const times: number[] = [];
        for (const op of ['gather', 'gatherv', 'gather', 'gatherv'] as const) {
          const c = op === 'gather' ? new Array<number>(p).fill(3) : counts;
          const expected = comm.rank === root ? fullBuffer(c, 1) : undefined;
          const recv = expected === undefined ? undefined : new Uint8Array(expected.length);
          const send = blockOf(comm.rank, c[comm.rank], 1);
          await world.clock?.sync();
          const t0 = world.clock?.now() ?? 0;
          if (op === 'gather') await hierarchicalGather(comm, { send, recv, root }, { structure });
          else await hierarchicalGatherv(comm, { send, recv, root, counts: comm.rank === root ? c : undefined }, { structure });
          await world.clock?.sync();
          times.push((world.clock?.now() ?? 0) - t0);
          if (recv !== undefined && expected !== undefined && firstMismatch(recv, expected, 'recv') !== undefined) ok = false;
        }
        return { calls: comm.calls, ok, times };
      },
      { model },
    );
    return { calls: res.results.map((r) => r.calls), ok: res.results.map((r) => r.ok), times: res.results[0].times };
  }

  it('each rank asks nodeOf O(1) times, not p times, and the times are those of the unshared run', async () => {
    const shared = await run(nodeStructure(p, (r) => nodeOf[r]));
    const own = await run(undefined);
    expect(shared.ok.every(Boolean)).toBe(true);
    expect(own.ok.every(Boolean)).toBe(true);
    // the check of the shared structure: this rank's node and its leader's, on the first call only
    expect(Math.max(...shared.calls)).toBeLessThanOrEqual(2);
    // without it every communicator computes its own: p calls (the O(p²) of a simulation)
    expect(Math.min(...own.calls)).toBe(p);
    expect(shared.times).toEqual(own.times);
  });

  it('a bridge shares the structure: leaders and the root node’s rank sequences are views, not copies', () => {
    const s = nodeStructure(p, (r) => nodeOf[r]);
    const rootNode = s.nodeIndex[13];
    const atRoot = bridgeFor(s, rootNode, rootNode);
    expect(atRoot.leaders).toBe(s.leaders);
    for (const ranks of atRoot.childRanks) expect(ranks.buffer).toBe(s.order.buffer);
    expect(atRoot.childRanks.reduce((n, r) => n + r.length, 0)).toBe(p - s.members[rootNode].length);
    const elsewhere = bridgeFor(s, rootNode, (rootNode + 1) % s.nodes);
    expect(elsewhere.leaders).toBe(s.leaders);
    expect(elsewhere.childRanks).toEqual([]);
    // members are the node's ranks ascending, node by node in the order of their lowest rank
    expect(Array.from(s.order)).toEqual(s.members.flatMap((m) => Array.from(m)));
    for (const m of s.members) expect(Array.from(m)).toEqual([...m].sort((a, b) => a - b));
  });

  it('a structure of another size is refused on every rank, one that misplaces a rank on that rank (field structure)', async () => {
    const wrongSize = nodeStructure(p - 1, (r) => nodeOf[r]);
    const res = await runSim(
      p,
      async (comm) => {
        try {
          await hierarchicalGather(comm, { send: new Uint8Array(1), recv: comm.rank === 0 ? new Uint8Array(p) : undefined, root: 0 }, { structure: wrongSize });
          return 'resolved';
        } catch (e) {
          return e instanceof InvalidArgumentError ? e.field : String(e);
        }
      },
      { model },
    );
    expect(res.results.every((r) => r === 'structure')).toBe(true);
    // every rank checks its own entries (O(1)): ranks a shifted partition puts with a leader of another node refuse
    const shifted = nodeStructure(p, (r) => nodeOf[(r + 1) % p]);
    const refused = Array.from({ length: p }, (_, r) => {
      try {
        checkStructure(shifted, p, r, (x) => nodeOf[x]);
        return false;
      } catch (e) {
        return e instanceof InvalidArgumentError && e.field === 'structure';
      }
    });
    expect(refused.filter(Boolean).length).toBeGreaterThan(0);
    expect(() => checkStructure(nodeStructure(p, (r) => nodeOf[r]), p, 5, (x) => nodeOf[x])).not.toThrow();
  });
});

describe('two-block tree: the join evaluates once', () => {
  it('one evaluation per join and at most two builds, whatever p', () => {
    const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });
    for (const p of [64, 1024, 16384]) {
      const sizes = blockSizes('spikes', { p, b: 100, rho: 5, seed: 3 });
      for (const root of [undefined, 0, p - 1]) {
        JOIN_WORK.builds = 0;
        JOIN_WORK.evaluations = 0;
        const t = twoBlockTree(sizes, model, { root });
        expect(JOIN_WORK.evaluations, `p = ${p} root ${String(root)}`).toBe(2);
        expect(JOIN_WORK.builds).toBeLessThanOrEqual(4);
        expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
      }
    }
  });
});

describe("Kang19's settings at scale", () => {
  it('arithmetic groups of 2^17 ranks and more (Math.max over a spread would overflow the stack)', () => {
    const s = interSetting(6, 2 ** 18 + 2, 1000);
    expect(s.p).toBe(2 ** 17 + 1);
    expect(s.kA).toBe(1000);
    expect(s.kB).toBe(1000);
  });

  it('a run that cannot fit in memory is refused at once, naming --ranks (fixed + per-rank + receive-buffer estimate)', () => {
    const saved = process.env.VCOLL_MAX_MEMORY;
    process.env.VCOLL_MAX_MEMORY = '8G';
    try {
      expect(() => checkInterRanks(64)).not.toThrow();
      expect(() => checkInterRanks(2 ** 16, '--ranks')).toThrow(TooLargeError);
      expect(() => checkInterRanks(2 ** 16, '--ranks')).toThrow(/--ranks.*intergroup settings on 65536 simulated ranks/);
    } finally {
      if (saved === undefined) delete process.env.VCOLL_MAX_MEMORY;
      else process.env.VCOLL_MAX_MEMORY = saved;
    }
  });

  it("Algorithm 1's and 2's final-stage counts: built once per group and shared by its ranks", () => {
    const before = GROUP_ARRAYS_BUILT.count;
    const plansA = Array.from({ length: 300 }, (_, r) => segmentedRankPlan(300, 77, 5, 9, r));
    const plansB = Array.from({ length: 77 }, (_, r) => segmentedRankPlan(77, 300, 9, 5, r));
    expect(GROUP_ARRAYS_BUILT.count - before).toBe(2);
    expect(plansA.every((x) => x.counts === plansA[0].counts && x.displs === plansA[0].displs)).toBe(true);
    expect(plansB.every((x) => x.counts === plansB[0].counts)).toBe(true);
    const bytes = Array.from({ length: 50 }, (_, i) => (i * 7) % 11);
    const pre = prefixSums(bytes);
    const v = Array.from({ length: 40 }, (_, r) => vRecvPlan(bytes, pre, 40, r));
    expect(v.every((x) => x.counts === v[0].counts)).toBe(true);
    expect(GROUP_ARRAYS_BUILT.count - before).toBe(3);
  });
});

describe('allgather schedules: adjacent blocks travel as one range', () => {
  it('a recursive-doubling rank holds O(log p) ranges, not O(p) (per round: one received, at most three sent: the own block from send in between)', () => {
    for (const p of [64, 1024]) {
      const world = compileAllgatherSchedule('recursive-doubling', new Array<number>(p).fill(3));
      const ranges = (r: number): number => world.ranks[r].steps.reduce((n, st) => n + st.ops.reduce((m, op) => m + ('data' in op ? op.data.length : 0), 0), 0);
      for (const r of [0, 1, p - 1]) expect(ranges(r), `p = ${p} rank ${r}`).toBeLessThanOrEqual(4 * Math.log2(p) + 2);
    }
  });
});
