/**
 * Communicators on the virtual-time simulator (runSim builds every rank's world communicator
 * with createWorldCommunicator): the shared scenarios, splitByNode with a hierarchical model's
 * nodes, the traced context ids, and the virtual cost of split.
 */
import { describe, expect, it } from 'vitest';
import { COLLECTIVE_TAG, UNDEFINED } from '../src/comm/communicator.js';
import { hierarchicalModel, linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/run.js';
import {
  expectAllocRecv,
  expectAnyTag,
  expectBadArgs,
  expectBadInter,
  expectBadSplit,
  expectByNode,
  expectConcurrent,
  expectInter,
  expectIsolation,
  expectSplit,
} from './comm-expect.js';
import { scenarios } from './programs/comm-scenarios.js';
import { int, rng } from './helpers/random.js';

const model = linearModel({ alpha: 10, beta: 1 });

describe('communicators on the simulator', () => {
  it('split with random colors and keys, p up to 64', async () => {
    const r = rng(3);
    for (const p of [1, 2, 5, 17, 64]) {
      const colors = Array.from({ length: p }, () => [UNDEFINED, 0, 1, 4][int(r, 0, 3)]);
      const keys = Array.from({ length: p }, () => int(r, -3, 3));
      const { results } = await runSim(p, (c) => scenarios.split(c, { colors, keys }), { model });
      expectSplit(colors, keys, results);
    }
  });

  it('world / split / nested split traffic with one tag never mixes; concurrent splits', async () => {
    for (const p of [1, 4, 9, 32]) {
      expectIsolation(p, (await runSim(p, (c) => scenarios.isolation(c), { model })).results);
      expectConcurrent(p, (await runSim(p, (c) => scenarios.concurrent(c), { model })).results);
    }
  });

  it('bad split arguments and bad ranks are typed errors on every rank', async () => {
    expectBadSplit((await runSim(5, (c) => scenarios.badSplit(c, { badRank: 3, color: 0, key: 2 ** 33 }), { model })).results, 3, 'key');
    expectBadArgs((await runSim(6, (c) => scenarios.badArgs(c), { model })).results);
  });

  it('irecvAlloc: posted before and after the message, ANY_SOURCE, to oneself, maxBytes; world and split', async () => {
    const sizes = [0, 1, 64, 5000, 70000];
    for (const p of [1, 2, 5]) {
      expectAllocRecv(sizes, (await runSim(p, (c) => scenarios.allocRecv(c, { sizes }), { model })).results);
      expectAllocRecv(sizes, (await runSim(p, (c) => scenarios.allocRecv(c, { sizes, split: true }), { model })).results);
    }
  });

  it('an ANY_TAG receive pending during bcast, barrier and split gets the user message, not theirs', async () => {
    for (const p of [1, 2, 5, 8]) {
      expectAnyTag(p, (await runSim(p, (c) => scenarios.anyTag(c), { model })).results);
      // On a split communicator as well.
      const sub = await runSim(p, async (c) => scenarios.anyTag((await c.split(c.rank % 2, 0)) as typeof c), { model });
      for (const parity of [0, 1]) {
        const group = sub.results.filter((_, r) => r % 2 === parity);
        if (group.length > 0) expectAnyTag(group.length, group);
      }
    }
  });

  it('createIntercomm with a bad argument: typed errors and no deadlock (the simulator reports any)', async () => {
    const colors: (0 | 1)[] = [0, 1, 1, 0, 1, 0, 0, 1, 1];
    for (const badGroup of [0, 1] as const) {
      for (const bad of ['peer', 'remoteLeader', 'tag'] as const) {
        const { results } = await runSim(colors.length, (c) => scenarios.badInter(c, { colors, bad, badGroup, remoteIdle: true }), { model });
        expectBadInter(colors, bad, badGroup, true, results);
      }
      for (const bad of ['leaderRange', 'leaderMismatch'] as const) {
        const { results } = await runSim(colors.length, (c) => scenarios.badInter(c, { colors, bad, badGroup, remoteIdle: false }), { model });
        expectBadInter(colors, bad, badGroup, false, results);
      }
    }
  });

  it('splitByNode groups ranks by the hierarchical model’s nodes', async () => {
    const nodeOf = [2, 2, 0, 1, 0, 2, 1, 1, 0, 3];
    const hm = hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 0.1 }, inter: { alpha: 50, beta: 1 } });
    expectByNode(nodeOf, (await runSim(nodeOf.length, (c) => scenarios.byNode(c), { model: hm })).results);
  });

  it('intercommunicators: split and create, merge', async () => {
    const colors: (0 | 1)[] = [0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0];
    for (const how of ['split', 'create'] as const) {
      expectInter(colors, (await runSim(colors.length, (c) => scenarios.inter(c, { colors, how }), { model })).results, false);
      expectInter(
        colors,
        (await runSim(colors.length, (c) => scenarios.inter(c, { colors, how, sameHigh: true }), { model })).results,
        true,
      );
    }
  });

  it('split costs ⌈log₂p⌉α + 32(p−1)β on full-duplex ports, in the parent’s collective context on reserved tags', async () => {
    for (const p of [2, 3, 8, 13]) {
      const res = await runSim(p, (c) => c.split(c.rank % 2, 0).then(() => c.clock?.now()), {
        model,
        ports: 'full-duplex',
        trace: true,
      });
      expect(res.time).toBe(Math.ceil(Math.log2(p)) * 10 + 32 * (p - 1));
      expect(res.results.every((t) => t === res.time)).toBe(true);
      const msgs = res.trace?.messages ?? [];
      expect(msgs.length).toBe(p * Math.ceil(Math.log2(p)));
      for (const m of msgs) {
        // The world's (context id 0) traffic of collective tags: endpoint context 2·0 + 1.
        expect(m.ctx).toBe(1);
        expect(m.tag).toBeGreaterThanOrEqual(COLLECTIVE_TAG + 2 ** 20 - 16);
      }
    }
  });

  it('a child communicator’s messages carry its own context in the trace', async () => {
    const res = await runSim(
      6,
      async (c) => {
        const child = (await c.split(c.rank % 3, 0)) as typeof c;
        await Promise.all([child.isend((child.rank + 1) % child.size, 5, new Uint8Array(3)), child.irecv(-1, 5, new Uint8Array(3))]);
      },
      { model, trace: true },
    );
    const user = (res.trace?.messages ?? []).filter((m) => m.tag === 5);
    expect(user.length).toBe(6);
    const ctxs = new Set(user.map((m) => m.ctx));
    expect(ctxs.size).toBe(1);
    // User tags travel in the even endpoint context 2c of the child's context id c ≥ 1.
    const [ctx] = [...ctxs];
    expect(ctx % 2).toBe(0);
    expect(ctx).toBeGreaterThan(1);
    for (const m of user) expect(m.from % 3).toBe(m.to % 3);
  });
});
