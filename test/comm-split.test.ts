/**
 * comm/: split, splitByNode, intercommunicators and context agreement on the in-memory test
 * endpoint (random delivery order across pairs), with property tests over p up to 48.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Communicator, UNDEFINED } from '../src/comm/communicator.js';
import { createWorldCommunicator, GroupCommunicator } from '../src/comm/group.js';
import { createIntercomm, splitIntercomm } from '../src/comm/intercomm.js';
import { InvalidArgumentError } from '../src/errors.js';
import { runMem } from './comm-endpoint.js';
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
import { BIG } from './helpers/big.js';

const SPLIT_P_MAX = BIG ? 256 : 48;

const colorsAndKeys = fc.integer({ min: 1, max: SPLIT_P_MAX }).chain((p) =>
  fc.record({
    p: fc.constant(p),
    colors: fc.array(fc.constantFrom(UNDEFINED, 0, 1, 2, 5), { minLength: p, maxLength: p }),
    keys: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: p, maxLength: p }),
    seed: fc.integer({ min: 1, max: 1 << 30 }),
  }),
);

function twoColors(p: number, seed: number): (0 | 1)[] {
  const r = rng(seed);
  const colors = Array.from({ length: p }, () => (r() < 0.5 ? 0 : 1) as 0 | 1);
  if (colors.every((c) => c === colors[0])) {
    const i = int(r, 0, p - 1);
    colors[i] = (1 - colors[i]) as 0 | 1;
  }
  return colors;
}

describe('split', () => {
  it(`groups by color, orders by key then rank, UNDEFINED gives null (property, p ≤ ${SPLIT_P_MAX})`, async () => {
    await fc.assert(
      fc.asyncProperty(colorsAndKeys, async ({ p, colors, keys, seed }) => {
        const { results } = await runMem(p, (c) => scenarios.split(c, { colors, keys }), { seed });
        expectSplit(colors, keys, results);
      }),
      { numRuns: BIG ? 250 : 60 },
    );
  });

  it('costs ⌈log₂p⌉ messages per rank (Bruck allgather)', async () => {
    for (const p of [1, 2, 3, 7, 8, 33, ...(BIG ? [128, 255] : [])]) {
      const { messages } = await runMem(p, (c) => c.split(0, 0));
      expect(messages).toBe(p * Math.ceil(Math.log2(p)));
    }
  });

  it('keeps world, child and grandchild traffic with identical tags apart; ANY_SOURCE sees members only', async () => {
    for (const p of [1, 2, 3, 5, 8, 13, 24, ...(BIG ? [64, 100] : [])]) {
      for (const seed of [1, 2, 3]) {
        const { results } = await runMem(p, (c) => scenarios.isolation(c), { seed });
        expectIsolation(p, results);
      }
    }
  });

  it('irecvAlloc over a generic endpoint, messages delivered in random order', async () => {
    const sizes = [0, 3, 1000];
    for (const p of [1, 3, 6]) {
      for (const split of [false, true]) expectAllocRecv(sizes, (await runMem(p, (c) => scenarios.allocRecv(c, { sizes, split }), { seed: p })).results);
    }
  });

  it('an ANY_TAG receive never matches collective or split traffic of its communicator', async () => {
    for (const p of [1, 2, 3, 6, 11]) {
      for (const seed of [1, 2]) expectAnyTag(p, (await runMem(p, (c) => scenarios.anyTag(c), { seed })).results);
    }
  });

  it('two splits started without awaiting get distinct contexts', async () => {
    for (const p of [2, 3, 6, 11]) {
      const { results } = await runMem(p, (c) => scenarios.concurrent(c), { seed: p });
      expectConcurrent(p, results);
    }
  });

  it('every member agrees on the context; communicators sharing a member never share one (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: BIG ? 64 : 24 }),
        fc.array(fc.record({ parent: fc.nat(), colors: fc.integer({ min: 1, max: 4 }), salt: fc.nat(1000) }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.integer({ min: 1, max: 1000 }),
        async (p, steps, seed) => {
          // Step j splits the communicator each rank created at step (parent mod j), or the world.
          const { results } = await runMem(
            p,
            async (world) => {
              const mine: (Communicator | null)[] = [];
              const records: { step: number; ctx: number; members: string }[] = [];
              for (let j = 0; j < steps.length; j++) {
                const s = steps[j];
                const parent = j === 0 || s.parent % (j + 1) === j ? world : mine[s.parent % j];
                if (parent === null) {
                  mine.push(null);
                  continue;
                }
                const color = (world.rank * 7 + s.salt) % s.colors;
                const c = await parent.split(color, (world.rank * 13 + s.salt) % 5);
                mine.push(c);
                const g = c as GroupCommunicator;
                records.push({ step: j, ctx: g.ctx, members: JSON.stringify(g.worldRanks()) });
              }
              return records;
            },
            { seed },
          );
          const byComm = new Map<string, { ctx: Set<number>; members: number[] }>();
          for (const recs of results) {
            for (const r of recs) {
              const id = `${r.step}:${r.members}`;
              const e = byComm.get(id) ?? { ctx: new Set<number>(), members: JSON.parse(r.members) as number[] };
              e.ctx.add(r.ctx);
              byComm.set(id, e);
            }
          }
          const comms = [...byComm.values()];
          for (const c of comms) expect(c.ctx.size).toBe(1);
          expect(comms.every((c) => !c.ctx.has(0))).toBe(true);
          for (let i = 0; i < comms.length; i++) {
            for (let j = i + 1; j < comms.length; j++) {
              if (comms[i].members.some((w) => comms[j].members.includes(w))) {
                expect([...comms[i].ctx][0]).not.toBe([...comms[j].ctx][0]);
              }
            }
          }
        },
      ),
      { numRuns: BIG ? 160 : 40 },
    );
  });

  it('a bad color or key on one rank rejects on every rank, and the parent still works', async () => {
    const cases: [number, number, string][] = [
      [-5, 0, 'color'],
      [1.5, 0, 'color'],
      [Number.NaN, 0, 'color'],
      [0, 2 ** 40, 'key'],
      [0, 0.5, 'key'],
    ];
    for (const [color, key, field] of cases) {
      for (const p of [1, 4, 7]) {
        const badRank = p - 1;
        const { results } = await runMem(p, (c) => scenarios.badSplit(c, { badRank, color, key }));
        expectBadSplit(results, badRank, field);
      }
    }
  });

  it('bad ranks and tags on a sub-communicator are InvalidArgumentErrors naming the field and the rank', async () => {
    const { results } = await runMem(6, (c) => scenarios.badArgs(c));
    expectBadArgs(results);
  });
});

describe('splitByNode', () => {
  it('groups the ranks of each node in rank order', async () => {
    const r = rng(5);
    for (const p of [1, 3, 9, 20]) {
      const nodes = Array.from({ length: p }, () => int(r, 0, 3));
      const { results } = await runMem(p, (c) => scenarios.byNode(c), { nodes });
      expectByNode(nodes, results);
    }
  });
});

describe('intercommunicators', () => {
  for (const how of ['split', 'create'] as const) {
    it(`${how}: remote addressing both ways, wildcard sources, merge, bad remote ranks`, async () => {
      for (const p of [2, 3, 5, 8, 13]) {
        for (const seed of [1, 2]) {
          const colors = twoColors(p, seed * 31 + p);
          const { results } = await runMem(p, (c) => scenarios.inter(c, { colors, how }), { seed });
          expectInter(colors, results, false);
          const same = await runMem(p, (c) => scenarios.inter(c, { colors, how, sameHigh: true }), { seed });
          expectInter(colors, same.results, true);
        }
      }
    });
  }

  it('splitIntercomm rejects on every rank when a group is empty or a color is bad', async () => {
    const empty = await runMem(4, (c) => splitIntercomm(c, 1).then(() => 'resolved', (e: unknown) => e));
    for (const e of empty.results) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).field).toBe('color');
    }
    const bad = await runMem(3, (c) => splitIntercomm(c, (c.rank === 1 ? 2 : 0) as 0 | 1).then(() => 'resolved', (e: unknown) => e));
    for (const e of bad.results) expect((e as InvalidArgumentError).message).toMatch(/rank 1 passed/);
  });

  it('createIntercomm: a bad argument of one group rejects on its every rank, naming the field, and on the remote group when the leaders can still talk', async () => {
    const colors: (0 | 1)[] = [1, 0, 0, 1, 1, 0, 1];
    for (const badGroup of [0, 1] as const) {
      for (const bad of ['peer', 'remoteLeader', 'tag'] as const) {
        const { results } = await runMem(colors.length, (c) => scenarios.badInter(c, { colors, bad, badGroup, remoteIdle: true }));
        expectBadInter(colors, bad, badGroup, true, results);
      }
      for (const bad of ['leaderRange', 'leaderMismatch'] as const) {
        const { results } = await runMem(colors.length, (c) => scenarios.badInter(c, { colors, bad, badGroup, remoteIdle: false }));
        expectBadInter(colors, bad, badGroup, false, results);
      }
    }
  });

  it('createIntercomm rejects a local that is not a vcoll communicator at once', async () => {
    const e = await createIntercomm({} as Communicator, 0, null, 0, 0).then(
      () => 'resolved',
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).field).toBe('local');
  });
});

describe('world communicator', () => {
  it('is the identity over the endpoint and forwards nodeOf', async () => {
    const { results } = await runMem(
      5,
      async (c) => {
        const g = c as GroupCommunicator;
        return [g.rank, g.size, g.ctx, c.nodeOf(4), g.worldRanks().join(',')];
      },
      { nodes: [0, 0, 1, 1, 7] },
    );
    expect(results).toEqual([0, 1, 2, 3, 4].map((r) => [r, 5, 0, 7, '0,1,2,3,4']));
    expect(createWorldCommunicator).toBeTypeOf('function');
  });
});
