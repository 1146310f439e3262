/**
 * Bad input to gatherv/scatterv: a typed error on the rank(s) that can see it, and no hang
 * anywhere (the transports fail the other ranks fast and the run rejects naming the rank).
 */
import { describe, expect, it } from 'vitest';
import { gatherv, scatterv, GATHERV_VARIANTS, portableVariants, SCATTERV_VARIANTS } from '../src/collectives/index.js';
import type { CollectiveOptions, GathervArgs, ScattervArgs, VAlgorithm } from '../src/collectives/types.js';
import type { Communicator } from '../src/comm/communicator.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { uniformPairwise } from './helpers/models.js';
import { makeCase, runCaseRank, type VCase } from './programs/v-cases.js';

const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });

/** The run must reject; returns the failing rank and the typed error it threw. */
async function failure(p: number, program: (comm: Communicator) => Promise<unknown>): Promise<{ rank: number; error: InvalidArgumentError }> {
  let caught: unknown;
  try {
    await runSim(p, program, { model });
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(CommunicationError);
  const e = caught as CommunicationError;
  expect(e.cause).toBeInstanceOf(InvalidArgumentError);
  const error = e.cause as InvalidArgumentError;
  expect(error.rank).toBe(e.rank);
  return { rank: e.rank as number, error };
}

/** Every rank runs `call` and reports the field of the InvalidArgumentError it got (or 'ok'). */
async function fieldsOnEveryRank(p: number, call: (comm: Communicator) => Promise<unknown>): Promise<string[]> {
  const res = await runSim(
    p,
    async (comm) => {
      try {
        await call(comm);
        return 'ok';
      } catch (e) {
        if (e instanceof InvalidArgumentError && e.rank === comm.rank) return e.field;
        throw e;
      }
    },
    { model },
  );
  return res.results;
}

const p = 5;
const root = 2;
const counts = [3, 0, 2, 4, 1];
const total = 10;

function gArgs(comm: Communicator, over: Partial<GathervArgs> = {}): GathervArgs {
  const me = comm.rank;
  const base: GathervArgs =
    me === root ? { root, send: new Uint8Array(counts[me]), recv: new Uint8Array(total), counts } : { root, send: new Uint8Array(counts[me]) };
  return { ...base, ...(me === root ? over : { root: over.root ?? root, unitBytes: over.unitBytes }) };
}

function sArgs(comm: Communicator, over: Partial<ScattervArgs> = {}): ScattervArgs {
  const me = comm.rank;
  const base: ScattervArgs =
    me === root ? { root, recv: new Uint8Array(counts[me]), send: new Uint8Array(total), counts } : { root, recv: new Uint8Array(counts[me]) };
  return { ...base, ...(me === root ? over : { root: over.root ?? root, unitBytes: over.unitBytes }) };
}

describe('argument errors every rank sees', () => {
  it.each([-1, 5, 1.5, Number.NaN])('root %s: every rank throws InvalidArgumentError(root)', async (bad) => {
    expect(await fieldsOnEveryRank(p, (comm) => gatherv(comm, gArgs(comm, { root: bad })))).toEqual(new Array(p).fill('root'));
    expect(await fieldsOnEveryRank(p, (comm) => scatterv(comm, sArgs(comm, { root: bad })))).toEqual(new Array(p).fill('root'));
  });

  it('unitBytes 0 or fractional: every rank throws InvalidArgumentError(unitBytes)', async () => {
    for (const unitBytes of [0, 1.5, -2]) {
      expect(await fieldsOnEveryRank(p, (comm) => gatherv(comm, gArgs(comm, { unitBytes })))).toEqual(new Array(p).fill('unitBytes'));
    }
  });

  it('an unknown algorithm, a model for another p, bad adaptive or auto options', async () => {
    const opts = { algorithm: 'fastest' } as unknown as CollectiveOptions;
    expect(await fieldsOnEveryRank(p, (comm) => gatherv(comm, gArgs(comm), opts))).toEqual(new Array(p).fill('algorithm'));
    const model3 = uniformPairwise(3, 10, 1);
    expect(await fieldsOnEveryRank(p, (comm) => scatterv(comm, sArgs(comm), { model: model3 }))).toEqual(new Array(p).fill('model'));
    const lemma = { adaptive: { lemma4: 'yes' } } as unknown as CollectiveOptions;
    expect(await fieldsOnEveryRank(p, (comm) => gatherv(comm, gArgs(comm), lemma))).toEqual(new Array(p).fill('adaptive.lemma4'));
    for (const roundLatency of [-1, Number.NaN, Infinity, '5']) {
      const o = { auto: { roundLatency } } as unknown as CollectiveOptions;
      expect(await fieldsOnEveryRank(p, (comm) => scatterv(comm, sArgs(comm), o))).toEqual(new Array(p).fill('auto.roundLatency'));
    }
    const notObject = { auto: 3 } as unknown as CollectiveOptions;
    expect(await fieldsOnEveryRank(p, (comm) => gatherv(comm, gArgs(comm), notObject))).toEqual(new Array(p).fill('auto'));
  });

  it('local buffer errors fail on the rank that has them (the run rejects naming it)', async () => {
    // in place is for the root only
    const inPlace = await failure(2, (comm) =>
      gatherv(comm, { root: 0, send: new Uint8Array(0), inPlace: comm.rank === 1, recv: new Uint8Array(0), counts: [0, 0] }, { algorithm: 'linear' }),
    );
    expect([inPlace.rank, inPlace.error.field]).toEqual([1, 'inPlace']);
    // scatterv: a receive buffer that is not whole elements (rank 1), a count larger than the buffer (rank 2)
    for (const bad of [1, 2]) {
      const f = await failure(3, (comm) =>
        scatterv(
          comm,
          comm.rank === 0
            ? { root: 0, recv: new Uint8Array(2), send: new Uint8Array(6), counts: [1, 1, 1], unitBytes: 2 }
            : comm.rank !== bad
              ? { root: 0, recv: new Uint8Array(2), unitBytes: 2 }
              : bad === 1
                ? { root: 0, recv: new Uint8Array(3), unitBytes: 2 }
                : { root: 0, recv: new Uint8Array(2), count: 2, unitBytes: 2 },
          { algorithm: 'binomial' },
        ),
      );
      expect([f.rank, f.error.field]).toEqual([bad, 'recv']);
    }
  });
});

describe('argument errors only the root sees (the run rejects naming the root)', () => {
  const cases: [string, Partial<GathervArgs>, string][] = [
    ['negative count', { counts: [3, 0, -2, 4, 1] }, 'counts[2]'],
    ['fractional count', { counts: [3, 0.5, 2, 4, 1] }, 'counts[1]'],
    ['counts of the wrong length', { counts: [3, 0, 2, 4] }, 'counts'],
    ['overlapping displacements', { displs: [0, 0, 3, 5, 4] }, 'displs[4]'],
    ['displacement outside the buffer', { displs: [0, 0, 3, 5, 10] }, 'displs[4]'],
    ['negative displacement', { displs: [0, 0, -3, 5, 9] }, 'displs[2]'],
    ['receive buffer too small', { recv: new Uint8Array(9) }, 'recv'],
    ['own block not counts[root] long', { send: new Uint8Array(3) }, 'send'],
  ];
  it.each(cases)('gatherv: %s', async (_what, over, field) => {
    const f = await failure(p, (comm) => gatherv(comm, gArgs(comm, over), { algorithm: 'binomial' }));
    expect(f.rank).toBe(root);
    expect(f.error.field).toBe(field);
  });

  const sCases: [string, Partial<ScattervArgs>, string][] = [
    ['negative count', { counts: [3, 0, -2, 4, 1] }, 'counts[2]'],
    ['overlapping displacements', { displs: [0, 0, 3, 2, 8] }, 'displs[3]'],
    ['displacement outside the buffer', { displs: [0, 0, 3, 5, 10] }, 'displs[4]'],
    ['send buffer too small', { send: new Uint8Array(9) }, 'send'],
    ["the root's count differs from counts[root]", { count: 1 }, 'count'],
  ];
  it.each(sCases)('scatterv: %s', async (_what, over, field) => {
    const f = await failure(p, (comm) => scatterv(comm, sArgs(comm, over), { algorithm: 'linear' }));
    expect(f.rank).toBe(root);
    expect(f.error.field).toBe(field);
  });

  it('a send buffer that is not a whole number of elements fails on that rank', async () => {
    const f = await failure(p, (comm) =>
      gatherv(comm, comm.rank === 3 ? { root, send: new Uint8Array(5), unitBytes: 2 } : { ...gArgs(comm), send: new Uint8Array(counts[comm.rank] * 2), recv: new Uint8Array(2 * total), unitBytes: 2 }),
    );
    expect(f.rank).toBe(3);
    expect(f.error.field).toBe('send');
  });
});

describe("a rank's count that differs from the root's entry", () => {
  const bad = 3;
  const base: VCase = {
    op: 'gatherv',
    algorithm: 'linear',
    p,
    root,
    counts,
    displs: undefined,
    capacity: total,
    unitBytes: 1,
    inPlace: false,
    model: { alpha: 10, beta: 1, gamma: 1, copyAll: false },
    starts: 0,
  };
  const algorithms: VAlgorithm[] = [...portableVariants(GATHERV_VARIANTS).map((v) => v.name), 'auto'];
  expect(SCATTERV_VARIANTS.map((v) => v.name)).toEqual(GATHERV_VARIANTS.map((v) => v.name));
  const cases: [VAlgorithm, 'gatherv' | 'scatterv', number][] = [];
  for (const a of algorithms) for (const op of ['gatherv', 'scatterv'] as const) for (const delta of [1, -1, -4]) cases.push([a, op, delta]);

  it.each(cases)('%s %s, rank 3 claims counts[3] + (%i) elements: typed error, no hang', async (algorithm, op, delta) => {
    // two-block needs at most two distinct counts
    const cs = algorithm === 'two-block' ? [4, 4, 1, 4, 1] : counts;
    const c: VCase = { ...base, op, algorithm, counts: cs, capacity: cs.reduce((a, b) => a + b, 0), lie: { rank: bad, count: cs[bad] + delta } };
    const f = await failure(p, (comm) => runCaseRank(comm, c));
    if (f.rank === bad) expect(f.error.field).toBe('count');
    else {
      expect(f.rank).toBe(root);
      // the adaptive construction only sees range totals (constant-size messages): it names
      // the range in its message, with field 'counts'
      const allowed = algorithm === 'adaptive' || algorithm === 'degrading' || algorithm === 'auto' ? [`counts[${bad}]`, 'counts'] : [`counts[${bad}]`];
      expect(allowed).toContain(f.error.field);
    }
  });
});

describe('bad input on worker threads', () => {
  const program = new URL('./programs/v-program.ts', import.meta.url);

  it("a rank's count different from the root's entry rejects the run naming a rank, no hang", async () => {
    const c = { ...makeCase({ op: 'gatherv', algorithm: 'optimal', p: 4, seed: 5, dist: 'same', unitBytes: 1, layout: 'default', zeros: false, inPlace: false, starts: 0 }) };
    const liar = (c.root + 1) % 4;
    const bad: VCase = { ...c, lie: { rank: liar, count: c.counts[liar] + 2 } };
    const t0 = Date.now();
    let caught: unknown;
    try {
      await runThreads(4, program, bad);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CommunicationError);
    expect((caught as CommunicationError).rank).toBe(liar);
    expect((caught as Error).message).toMatch(/invalid count/);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('linear gatherv: the root names the rank whose message is too long', async () => {
    const c = makeCase({ op: 'gatherv', algorithm: 'linear', p: 3, seed: 9, dist: 'same', unitBytes: 1, layout: 'default', zeros: false, inPlace: false, starts: 0 });
    const liar = (c.root + 2) % 3;
    let caught: unknown;
    try {
      await runThreads(3, program, { ...c, lie: { rank: liar, count: c.counts[liar] + 1 } });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CommunicationError);
    expect((caught as CommunicationError).rank).toBe(c.root);
    expect((caught as Error).message).toContain(`invalid counts[${liar}]`);
  });
});
