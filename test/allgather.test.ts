/**
 * allgather / allgatherv (src/collectives/allgather/): every algorithm against a byte-for-byte
 * reference on the simulator (random counts with zeros, unitBytes 1/3/8, default, gapped and
 * permuted displacements, sentinels outside the blocks, full-duplex and one-ported), exact
 * virtual times where the α+βm model determines them, bad input failing fast with typed
 * errors, and the same cases on worker threads.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import {
  ALLGATHER_ALGORITHMS,
  ALLGATHER_TAGS,
  ALLGATHER_VARIANTS,
  ALLGATHERV_ALGORITHMS,
  ALLGATHERV_VARIANTS,
  allgather,
  allgatherv,
  chooseAllgather,
  chooseAllgatherv,
  chunkBytes,
  normalizeAllgather,
  normalizeAllgatherv,
  type AllgatherAlgorithm,
  type AllgathervAlgorithm,
} from '../src/collectives/allgather/index.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim, type PortSetting } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { BIG } from './helpers/big.js';
import { expectedRecv, makeCase, runCaseRank, SENTINEL, type AgCase, type Layout } from './programs/allgather-program.js';

const P_MAX = BIG ? 64 : 32;
const RUNS = BIG ? 150 : 30;
const alpha = 10;
const beta = 1;
const model = linearModel({ alpha, beta });
const log2ceil = (p: number): number => (p <= 1 ? 0 : Math.ceil(Math.log2(p)));

/** Index of the first differing byte, -1 if equal. */
function firstDiff(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}


/** Runs a case on the simulator and checks every rank's recv against the reference. */
async function checkCase(c: AgCase, ports: PortSetting): Promise<void> {
  const p = c.counts.length;
  const res = await runSim(p, (comm) => runCaseRank(comm, c), { model, ports });
  const want = expectedRecv(c);
  for (let r = 0; r < p; r++) {
    const at = firstDiff(res.results[r], want);
    expect(at, `${c.api}/${c.algorithm} p=${p} rank ${r}: byte ${at} (${JSON.stringify(c)})`).toBe(-1);
  }
}

const countArb = fc.oneof(fc.constant(0), fc.nat({ max: 9 }));
const portsArb = fc.constantFrom<PortSetting>('full-duplex', 'one-ported');

describe('allgatherv on the simulator: every algorithm equals the reference', () => {
  it(`random counts (zeros included), p = 1…${P_MAX}, unitBytes 1/3/8, default/gapped/permuted displs, sentinels kept`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(countArb, { minLength: 1, maxLength: P_MAX, size: 'medium' }),
        fc.constantFrom(1, 3, 8),
        fc.constantFrom<Layout>('default', 'gapped', 'permuted'),
        fc.nat(10_000),
        portsArb,
        async (counts, unitBytes, layout, seed, ports) => {
          for (const a of ALLGATHERV_ALGORITHMS) await checkCase(makeCase('allgatherv', a, counts, unitBytes, layout, seed), ports);
          // recursive doubling serves irregular blocks too (its variant row on the v input)
          await checkCase(makeCase('variant', 'recursive-doubling', counts, unitBytes, layout, seed), ports);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('every p = 1…33 with every algorithm, one large block among empty ones', async () => {
    for (let p = 1; p <= 33; p++) {
      const counts = Array.from({ length: p }, (_, i) => (i === p >> 1 ? 40 : 0));
      for (const v of ALLGATHER_VARIANTS) await checkCase(makeCase('variant', v.name, counts, 3, 'permuted', p), 'full-duplex');
    }
  });
});

describe('pipelined-ring allgatherv (Träff et al. 2010) on the simulator', () => {
  it(`large irregular counts (0…300, several chunks per block), p = 1…${P_MAX}, all layouts, both port models`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant(0), fc.nat({ max: 300 })), { minLength: 1, maxLength: P_MAX, size: 'medium' }),
        fc.constantFrom(1, 3),
        fc.constantFrom<Layout>('default', 'gapped', 'permuted'),
        fc.nat(10_000),
        portsArb,
        async (counts, unitBytes, layout, seed, ports) => {
          await checkCase(makeCase('allgatherv', 'pipelined-ring', counts, unitBytes, layout, seed), ports);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('every p = 1…33: one large block among empty ones, all empty, every block empty but the neighbours', async () => {
    for (let p = 1; p <= 33; p++) {
      const shapes = [
        Array.from({ length: p }, (_, i) => (i === p >> 1 ? 400 : 0)),
        new Array<number>(p).fill(0),
        Array.from({ length: p }, (_, i) => (i === 0 || i === p - 1 ? 37 * (i + 1) : 0)),
      ];
      for (const counts of shapes) await checkCase(makeCase('allgatherv', 'pipelined-ring', counts, 1, 'permuted', p), 'full-duplex');
    }
  });

  it('chunk rule S = max(1, ⌈total/(4p)⌉); sends only on its own tag and the handshake tag', async () => {
    expect(chunkBytes([16000, 12000, 0])).toBe(Math.ceil(28000 / 12));
    expect(chunkBytes([0, 0, 0])).toBe(1);
    expect(chunkBytes([1, 1])).toBe(1);
    const counts = [50, 0, 7, 120, 3];
    const res = await runSim(5, (comm) => allgatherv(comm, { send: new Uint8Array(counts[comm.rank]), recv: new Uint8Array(180), counts }, { algorithm: 'pipelined-ring' }), {
      model,
      trace: true,
    });
    expect(new Set(res.trace?.messages.map((x) => x.tag))).toEqual(new Set([ALLGATHER_TAGS.handshake, ALLGATHER_TAGS.pipelinedRing]));
    // every chunk of at most S bytes, every block crosses p − 1 links exactly once
    const S = chunkBytes(counts);
    const msgs = res.trace?.messages ?? [];
    expect(Math.max(...msgs.map((m) => m.bytes))).toBeLessThanOrEqual(Math.max(S, 8));
    expect(msgs.reduce((a, m) => a + m.bytes, 0)).toBe(4 * counts.reduce((a, b) => a + b, 0) + 5 * 8); // + one fingerprint per rank
    expect(msgs.filter((m) => m.tag === ALLGATHER_TAGS.handshake).map((m) => m.bytes)).toEqual(new Array(5).fill(8));
  });

  it('auto (allgatherv): bruck below 80 KiB, the pipelined ring for large uneven blocks, ring for large equal ones', async () => {
    const pick = (counts: number[]): Promise<string[]> =>
      runSim(counts.length, async (comm) => {
        const tot = counts.reduce((a, b) => a + b, 0);
        return chooseAllgatherv(normalizeAllgatherv(comm, { send: new Uint8Array(counts[comm.rank]), recv: new Uint8Array(tot), counts }).input);
      }, { model }).then((r) => r.results);
    const uneven = Array.from({ length: 14 }, (_, i) => (i < 8 ? 16000 : 12000));
    expect(await pick(uneven)).toEqual(new Array(14).fill('pipelined-ring'));
    expect(await pick(new Array<number>(14).fill(14000))).toEqual(new Array(14).fill('ring'));
    expect(await pick([100, 2000, 5, 0])).toEqual(new Array(4).fill('bruck'));
  });
});

describe('allgather (equal blocks) on the simulator', () => {
  it(`every algorithm, p = 1…${P_MAX}, m = 0…12 bytes, both port models`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: P_MAX }), fc.nat({ max: 12 }), fc.nat(1000), portsArb, async (p, m, seed, ports) => {
        for (const a of ALLGATHER_ALGORITHMS) await checkCase(makeCase('allgather', a, new Array<number>(p).fill(m), 1, 'default', seed), ports);
      }),
      { numRuns: RUNS },
    );
  });

  it('auto: Bruck below 80 KiB, recursive doubling for p = 2^k below 512 KiB, ring above', async () => {
    const pick = (p: number, m: number): Promise<string[]> =>
      runSim(p, async (comm) => chooseAllgather(normalizeAllgather(comm, { send: new Uint8Array(m), recv: new Uint8Array(p * m) }).input), {
        model,
      }).then((r) => r.results);
    expect(await pick(8, 1000)).toEqual(new Array(8).fill('bruck'));
    expect(await pick(8, 20_000)).toEqual(new Array(8).fill('recursive-doubling'));
    expect(await pick(6, 1000)).toEqual(new Array(6).fill('bruck'));
    expect(await pick(6, 20_000)).toEqual(new Array(6).fill('ring'));
    expect(await pick(4, 200_000)).toEqual(new Array(4).fill('ring'));
  });

  it('each algorithm sends on its own tag and the shared handshake tag (8 bytes more on the first message, or one 8-byte message)', async () => {
    const tags: Record<string, number> = {
      ring: ALLGATHER_TAGS.ring,
      'recursive-doubling': ALLGATHER_TAGS.recursiveDoubling,
      bruck: ALLGATHER_TAGS.bruck,
    };
    for (const v of ALLGATHER_VARIANTS) {
      const res = await runSim(5, (comm) => allgather(comm, { send: new Uint8Array(2), recv: new Uint8Array(10) }, { algorithm: v.name as AllgatherAlgorithm }), {
        model,
        trace: true,
      });
      const msgs = res.trace?.messages ?? [];
      expect(new Set(msgs.map((x) => x.tag)), v.name).toEqual(new Set([ALLGATHER_TAGS.handshake, tags[v.name]]));
      const first = msgs.filter((x) => x.tag === ALLGATHER_TAGS.handshake);
      expect(first.map((x) => x.bytes), v.name).toEqual(new Array(5).fill(v.name === 'recursive-doubling' ? 8 : 10));
      expect(first.map((x) => (x.from - x.to + 5) % 5), `${v.name}: to the left neighbour`).toEqual(new Array(5).fill(1));
    }
  });
});

describe('virtual times (α = 10, β = 1 per byte)', () => {
  const time = async (p: number, m: number, algorithm: 'ring' | 'bruck' | 'recursive-doubling', ports: PortSetting, gamma = 0): Promise<number> => {
    const res = await runSim(
      p,
      (comm) => allgather(comm, { send: new Uint8Array(m), recv: new Uint8Array(p * m) }, { algorithm }),
      { model: linearModel({ alpha, beta, gamma }), ports },
    );
    return res.time;
  };

  it('ring, equal blocks, full duplex: exactly (p−1)(α+βm) + 8β (the handshake), also with γ > 0 (the own copy overlaps step 0)', async () => {
    for (let p = 1; p <= 33; p++) {
      for (const m of [1, 7]) {
        const want = p === 1 ? 0 : (p - 1) * (alpha + beta * m) + 8 * beta;
        expect(await time(p, m, 'ring', 'full-duplex'), `p=${p} m=${m}`).toBe(want);
        expect(await time(p, m, 'ring', 'full-duplex', 1), `p=${p} m=${m} γ=1`).toBe(p === 1 ? m : want);
      }
    }
  });

  it('ring, equal blocks, one-ported: 2(p−1)(α+βm) for p even, 2p(α+βm) for p odd ≥ 3, + 8β per transfer round of step 0 (the handshake: 2 rounds, 3 for an odd cycle)', async () => {
    // p even: each step's cycle of p transfers takes two rounds; p odd: the odd cycle needs a
    // third round, which later steps absorb but for one round at the start and one at the end.
    for (let p = 1; p <= 33; p++) {
      const want = p === 1 ? 0 : p % 2 === 0 ? 2 * (p - 1) * (alpha + beta * 5) + 16 * beta : 2 * p * (alpha + beta * 5) + 24 * beta;
      expect(await time(p, 5, 'ring', 'one-ported'), `p=${p}`).toBe(want);
    }
  });

  it('pipelined ring, equal blocks, one-ported, α = 0: the ring′s times, 2(p−1)βm + 16β for p even, 2pβm + 24β for p odd (equal chunks)', async () => {
    for (let p = 2; p <= 17; p++) {
      for (const m of p % 2 === 0 ? [1000, 333] : [1000, 4 * 83]) {
        const res = await runSim(
          p,
          (comm) => allgatherv(comm, { send: new Uint8Array(m), recv: new Uint8Array(p * m), counts: new Array<number>(p).fill(m) }, { algorithm: 'pipelined-ring' }),
          { model: linearModel({ alpha: 0, beta: 1 }), ports: 'one-ported' },
        );
        expect(res.time, `p=${p} m=${m}`).toBe(p % 2 === 0 ? 2 * (p - 1) * m + 16 : 2 * p * m + 24);
      }
    }
  });

  it('Bruck, equal blocks, full duplex: ⌈log₂p⌉α + β(p−1)m + 8β for every p', async () => {
    for (let p = 1; p <= 33; p++) expect(await time(p, 3, 'bruck', 'full-duplex'), `p=${p}`).toBe(log2ceil(p) * alpha + beta * (p - 1) * 3 + (p > 1 ? 8 * beta : 0));
  });

  it('recursive doubling: the handshake α + 8β, then kα + β(p−1)m for p = 2^k (twice all that one-ported); the folded form for other p', async () => {
    const m = 4;
    for (let p = 1; p <= 33; p++) {
      const q = 2 ** Math.floor(Math.log2(p));
      const e = p - q;
      const k = Math.log2(q);
      if (e === 0) {
        const hs = p === 1 ? 0 : alpha + 8 * beta;
        expect(await time(p, m, 'recursive-doubling', 'full-duplex'), `p=${p}`).toBe(hs + k * alpha + beta * (p - 1) * m);
        expect(await time(p, m, 'recursive-doubling', 'one-ported'), `p=${p}`).toBe(2 * (hs + k * alpha + beta * (p - 1) * m));
      } else {
        let units = 1 + (p - 1);
        for (let d = 1; d < q; d *= 2) units += d + Math.min(d, e);
        expect(await time(p, m, 'recursive-doubling', 'full-duplex'), `p=${p}`).toBe(alpha + 8 * beta + (k + 2) * alpha + beta * m * units);
      }
    }
  });
});

describe('pipelined ring against ring, uneven blocks (full duplex, β = 1 per byte)', () => {
  const vtime = async (counts: number[], algorithm: 'ring' | 'pipelined-ring', a: number): Promise<number> => {
    const tot = counts.reduce((x, y) => x + y, 0);
    const res = await runSim(
      counts.length,
      (comm) => allgatherv(comm, { send: new Uint8Array(counts[comm.rank]), recv: new Uint8Array(tot), counts }, { algorithm }),
      { model: linearModel({ alpha: a, beta: 1 }), ports: 'full-duplex' },
    );
    return res.time;
  };
  const shapes: [string, number[]][] = [
    ['Kang19 setting 2, B side (8 × 16000, 6 × 12000)', Array.from({ length: 14 }, (_, i) => (i < 8 ? 16000 : 12000))],
    ['Kang19 setting 4, A side (segments 4000 / 5334)', Array.from({ length: 50 }, (_, i) => (i < 32 ? 4000 : i % 3 === 2 ? 5332 : 5334))],
    ['one spike (p = 9)', [100, 100, 100, 9000, 100, 100, 100, 100, 100]],
    ['increasing (p = 12)', Array.from({ length: 12 }, (_, i) => 500 * (i + 1))],
    ['zeros between (p = 10)', [3000, 0, 0, 5000, 0, 1200, 0, 0, 8000, 0]],
  ];
  for (const [name, counts] of shapes) {
    it(`${name}: α = 0 within β·p·S of β·max_r Σ_{i≠r} m_i; α = 10 within (#chunks + p)·α more; faster than ring`, async () => {
      const p = counts.length;
      const tot = counts.reduce((x, y) => x + y, 0);
      const lower = tot - Math.min(...counts); // the rank with the smallest block receives the most
      const S = chunkBytes(counts);
      const t0 = await vtime(counts, 'pipelined-ring', 0);
      expect(t0).toBeGreaterThanOrEqual(lower + 8); // + the 8-byte counts fingerprint
      expect(t0, `α = 0: ${t0} vs ${lower}, S = ${S}`).toBeLessThanOrEqual(lower + 8 + p * S);
      const chunks = counts.reduce((x, m) => x + Math.ceil(m / S), 0);
      const pipe = await vtime(counts, 'pipelined-ring', alpha);
      const ring = await vtime(counts, 'ring', alpha);
      expect(pipe).toBeGreaterThanOrEqual(lower);
      expect(pipe, `pipelined ${pipe}, ring ${ring}`).toBeLessThanOrEqual(t0 + (chunks + p) * alpha);
      expect(pipe).toBeLessThan(ring);
    });
  }

  it('equal blocks and Kang19′s 25/7 shapes, α = 0: exactly β(total − m_min) + 8β (the fingerprint)', async () => {
    for (const p of [2, 3, 7, 16]) expect(await vtime(new Array<number>(p).fill(1000), 'pipelined-ring', 0), `p=${p}`).toBe((p - 1) * 1000 + 8);
    for (const [, counts] of shapes.slice(0, 2)) {
      expect(await vtime(counts, 'pipelined-ring', 0)).toBe(counts.reduce((x, y) => x + y, 0) - Math.min(...counts) + 8);
    }
  });
});

/** What a sim run rejected with: the CommunicationError and the failing rank's own error. */
async function failure(run: Promise<unknown>): Promise<{ error: CommunicationError; cause: unknown }> {
  try {
    await run;
  } catch (e) {
    expect(e).toBeInstanceOf(CommunicationError);
    return { error: e as CommunicationError, cause: (e as CommunicationError).cause };
  }
  throw new Error('the run did not fail');
}

describe('bad input: a typed error on the rank that sees it, the run rejects (no hang)', () => {
  const p = 5;
  const counts = [2, 0, 3, 1, 4];
  const vArgs = (comm: Communicator, over: { counts?: number[]; displs?: number[]; sendBytes?: number; recvBytes?: number }) => ({
    send: new Uint8Array(over.sendBytes ?? Math.max(0, Math.floor((over.counts ?? counts)[comm.rank]))),
    recv: new Uint8Array(over.recvBytes ?? 10),
    counts: over.counts ?? counts,
    displs: over.displs,
  });

  it('wrong send length on one rank → InvalidArgumentError("send") on that rank', async () => {
    for (const algorithm of ALLGATHERV_ALGORITHMS) {
      const { error, cause } = await failure(
        runSim(p, (comm) => allgatherv(comm, vArgs(comm, comm.rank === 2 ? { sendBytes: 4 } : {}), { algorithm }), { model }),
      );
      expect(cause).toBeInstanceOf(InvalidArgumentError);
      expect((cause as InvalidArgumentError).field).toBe('send');
      expect((cause as InvalidArgumentError).rank).toBe(2);
      expect(error.message).toMatch(/rank 2/);
    }
  });

  it('negative or fractional count, overlapping or out-of-range displs, small recv, unknown algorithm', async () => {
    const cases: [string, (c: Communicator) => Promise<void>][] = [
      ['counts[3]', (c) => allgatherv(c, vArgs(c, { counts: [2, 0, 3, -1, 4] }))],
      ['counts[1]', (c) => allgatherv(c, vArgs(c, { counts: [2, 0.5, 3, 1, 4] }))],
      ['displs[2]', (c) => allgatherv(c, vArgs(c, { displs: [0, 0, 1, 6, 7], recvBytes: 20 }))],
      ['displs[4]', (c) => allgatherv(c, vArgs(c, { displs: [0, 2, 2, 5, 17], recvBytes: 20 }))],
      ['displs', (c) => allgatherv(c, vArgs(c, { displs: [0, 2, 2] }))],
      ['recv', (c) => allgatherv(c, vArgs(c, { recvBytes: 9 }))],
      ['unitBytes', (c) => allgatherv(c, { ...vArgs(c, {}), unitBytes: 0 })],
      ['algorithm', (c) => allgatherv(c, vArgs(c, {}), { algorithm: 'recursive-doubling' as 'ring' })],
      ['recv', (c) => allgather(c, { send: new Uint8Array(2), recv: new Uint8Array(9) })],
      ['send', (c) => allgather(c, { send: [1, 2] as unknown as Uint8Array, recv: new Uint8Array(10) })],
      ['algorithm', (c) => allgather(c, { send: new Uint8Array(2), recv: new Uint8Array(10) }, { algorithm: 'linear' as 'ring' })],
    ];
    for (const [field, call] of cases) {
      const { cause } = await failure(runSim(p, call, { model }));
      expect(cause, field).toBeInstanceOf(InvalidArgumentError);
      expect((cause as InvalidArgumentError).field, field).toBe(field);
      expect((cause as InvalidArgumentError).rank, field).toBe(0); // every rank sees it; rank 0 fails first
    }
  });

  it('allgather with a different m on one rank: the receiving rank throws a typed error, for every algorithm', async () => {
    for (const v of ALLGATHER_VARIANTS) {
      for (const odd of [0, 3]) {
        for (const delta of [-1, 1]) {
          const m = (r: number): number => (r === odd ? 4 + delta : 4);
          const what = `${v.name}, rank ${odd} ${delta}`;
          const { cause } = await failure(
            runSim(6, (comm) => allgather(comm, { send: new Uint8Array(m(comm.rank)), recv: new Uint8Array(6 * m(comm.rank)) }, { algorithm: v.name as AllgatherAlgorithm }), {
              model,
            }),
          );
          if (cause instanceof InvalidArgumentError) {
            expect(cause.field, what).toBe('send');
            expect(cause.message, what).toMatch(/differ in length|passed a different block size/);
          } else {
            expect(cause, what).toBeInstanceOf(CommunicationError);
            expect((cause as Error).message, what).toMatch(/truncated/);
          }
        }
      }
    }
  });

  it('counts that differ between ranks fail with a typed error, never a hang', async () => {
    for (const algorithm of ALLGATHERV_ALGORITHMS) {
      const { cause } = await failure(
        runSim(p, (comm) => allgatherv(comm, vArgs(comm, comm.rank === 1 ? { counts: [2, 0, 1, 1, 4] } : {}), { algorithm }), { model }),
      );
      expect(cause instanceof InvalidArgumentError || cause instanceof CommunicationError, algorithm).toBe(true);
    }
  });
});

describe('the handshake: ranks that disagree fail with a typed error, never a deadlock or misplaced data', () => {
  /** The run must fail on a rank's own typed error (not the simulator's deadlock report). */
  async function typed(run: Promise<unknown>, what: string): Promise<void> {
    const { error, cause } = await failure(run);
    expect(error.message, what).not.toMatch(/deadlock/);
    expect(cause, what).toBeInstanceOf(InvalidArgumentError); // a longer first message too (the transport's truncation, converted)
    expect(['send', 'counts'], what).toContain((cause as InvalidArgumentError).field);
  }

  it('counts with the same total but blocks moved (which Bruck′s packed messages alone cannot tell), every algorithm, every rank position', async () => {
    const p = 5;
    const counts = [1, 2, 3, 4, 5];
    for (const algorithm of ALLGATHERV_ALGORITHMS) {
      for (const odd of [0, 2, 4]) {
        const moved = [...counts];
        [moved[odd], moved[(odd + 1) % p]] = [moved[(odd + 1) % p], moved[odd]];
        const run = runSim(
          p,
          (comm) => {
            const c = comm.rank === odd ? moved : counts;
            return allgatherv(comm, { send: new Uint8Array(c[comm.rank]), recv: new Uint8Array(16), counts: c }, { algorithm });
          },
          { model },
        );
        await typed(run, `${algorithm}, rank ${odd}`);
      }
    }
  });

  it('auto with one rank′s m across a threshold (it would pick another algorithm), both sides of 80 KiB and 512 KiB', async () => {
    for (const [p, small, big] of [
      [6, 13_000, 14_000], // bruck | ring
      [8, 10_000, 11_000], // bruck | recursive doubling
      [8, 65_000, 66_000], // recursive doubling | ring
    ]) {
      for (const odd of [0, p - 1]) {
        for (const [mOdd, mRest] of [[small, big], [big, small]]) {
          const m = (r: number): number => (r === odd ? mOdd : mRest);
          const run = runSim(p, (comm) => allgather(comm, { send: new Uint8Array(m(comm.rank)), recv: new Uint8Array(p * m(comm.rank)) }), { model });
          await typed(run, `p=${p} rank ${odd} m=${mOdd}, others ${mRest}`);
        }
      }
    }
  });

  it('one rank names another algorithm: typed error, for every pair', async () => {
    for (const [table, call] of [
      [ALLGATHER_ALGORITHMS, (comm: Communicator, algorithm: string) => allgather(comm, { send: new Uint8Array(3), recv: new Uint8Array(18) }, { algorithm: algorithm as AllgatherAlgorithm })],
      [
        ALLGATHERV_ALGORITHMS,
        (comm: Communicator, algorithm: string) =>
          allgatherv(comm, { send: new Uint8Array(3), recv: new Uint8Array(18), counts: new Array<number>(6).fill(3) }, { algorithm: algorithm as AllgathervAlgorithm }),
      ],
    ] as const) {
      for (const a of table) {
        for (const b of table) {
          if (a === b || a === 'auto' || b === 'auto') continue;
          await typed(runSim(6, (comm) => call(comm, comm.rank === 2 ? b : a), { model }), `${a} / ${b}`);
        }
      }
    }
  });

  it('on worker threads: the run rejects naming the failed rank (no hang)', async () => {
    const program = new URL('./programs/allgather-mismatch.ts', import.meta.url);
    for (const scenario of ['auto-threshold', 'moved-counts'] as const) {
      const e = await runThreads(4, program, scenario).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e, scenario).toBeInstanceOf(CommunicationError);
      expect((e as Error).message, scenario).toMatch(/rank \d/);
    }
  });
});

describe('on worker threads, p ∈ {1, 3, 5}', () => {
  const program = new URL('./programs/allgather-program.ts', import.meta.url);
  for (const p of [1, 3, 5]) {
    it(`p = ${p}: every algorithm, regular and irregular (permuted, gapped), data checked`, async () => {
      const counts = Array.from({ length: p }, (_, r) => (r * 5 + 2) % 7); // zeros at p ≥ 5
      const cases: AgCase[] = [
        ...ALLGATHER_ALGORITHMS.map((a) => makeCase('allgather', a, new Array<number>(p).fill(6), 1, 'default', p)),
        ...ALLGATHERV_ALGORITHMS.map((a) => makeCase('allgatherv', a, counts, 3, 'permuted', p + 1)),
        ...ALLGATHERV_VARIANTS.map((v) => makeCase('allgatherv', v.name, counts, 8, 'gapped', p + 2)),
        makeCase('variant', 'recursive-doubling', counts, 3, 'permuted', p + 3),
      ];
      const out = await runThreads<number[][]>(p, program, cases);
      cases.forEach((c, i) => {
        const want = [...expectedRecv(c)];
        for (let r = 0; r < p; r++) expect(out[r][i], `${c.api}/${c.algorithm} rank ${r}`).toEqual(want);
        const blockBytes = c.counts.reduce((s, n) => s + n, 0) * c.unitBytes;
        expect(want.filter((x) => x === SENTINEL).length).toBe(c.recvBytes - blockBytes); // the reference keeps every sentinel
      });
    });
  }
});
