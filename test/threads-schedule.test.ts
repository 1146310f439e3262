/**
 * The threads transport's native schedule executor (transports/threads/schedule.ts, reached
 * through schedule/run.ts bindSchedule → Communicator.bindValidatedSchedule → Endpoint.bindSchedule):
 * the same bytes as the known gatherv/scatterv results and as the portable executor, for every
 * compiled algorithm, both ops, random counts with zeros, several roots, models with 1 and 2
 * ports and copyAll off and on, p in {2, 3, 5, 8}, on the world and on a split whose ranks are
 * not world ranks, each schedule run repeatedly; schedule operations matched by plain ones in
 * posting order (receives) and without overtaking (sends); receive length errors as the
 * portable executor's; a failed, a deadlocked and a silent peer.
 *
 * Both in one thread (test/helpers/threads-world.ts endpoints: many cases, fast) and through
 * runThreads (worker threads: the real progress loops).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWorldCommunicator } from '../src/comm/group.js';
import { CommunicationError, DeadlockError, TimeoutError } from '../src/errors.js';
import { bindSchedule } from '../src/schedule/run.js';
import { allreduce, reduce } from '../src/collectives/basic/index.js';
import { matmulMod, mats } from './programs/basic-collectives.js';
import type { RankSchedule } from '../src/schedule/types.js';
import { ThreadsEndpoint } from '../src/transports/threads/endpoint.js';
import { runThreads } from '../src/transports/threads/run.js';
import { threadsWorld } from './helpers/threads-world.js';
import scheduleProgram, { makeCases, type ScheduleArgs } from './programs/schedule-program.js';

const PROGRAM = new URL('./programs/schedule-program.ts', import.meta.url);
const PS = [2, 3, 5, 8];

/** Runs the program on p endpoints in this thread (rings of `ring` bytes). */
function inThread(p: number, args: ScheduleArgs, ring = 4096): Promise<string[][]> {
  const { eps } = threadsWorld(p, ring, { lazy: true });
  return Promise.all(eps.map((ep) => scheduleProgram(createWorldCommunicator(ep, { endpointChecks: true }), args)));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('native schedules on threads endpoints in one thread', () => {
  it('the communicator hands schedules to the endpoint’s native executor', async () => {
    const spy = vi.spyOn(ThreadsEndpoint.prototype, 'bindSchedule');
    const cases = makeCases(3, 7, 1).slice(0, 4);
    const out = await inThread(3, { scenario: 'cases', cases, repeats: 2 });
    expect(out.flat()).toEqual([]);
    // every rank binds every case natively once, and ranks 0 and 2 once more (native against
    // portable on rank 1); the portable runs do not reach the endpoint
    expect(spy).toHaveBeenCalledTimes((3 + 2) * cases.length);
  });

  it.each(PS)('every compiled algorithm, gatherv and scatterv, 4 models, 3 roots: p = %i', async (p) => {
    const cases = makeCases(p, 1000 + p, 3);
    expect(cases.length).toBeGreaterThan(150);
    const out = await inThread(p, { scenario: 'cases', cases, repeats: 3 });
    expect(out.flat()).toEqual([]);
  });

  it.each(PS)('reduce and allreduce run natively with combine operations, a non-commutative op in rank order: p = %i', async (p) => {
    const spy = vi.spyOn(ThreadsEndpoint.prototype, 'bindSchedule');
    const k = 3;
    const seed = 40 + p;
    const xs = Array.from({ length: p }, (_, r) => mats(r, k, seed));
    const total = Int32Array.from({ length: 4 * k }, (_, i) => (i % 4 === 0 || i % 4 === 3 ? 1 : 0));
    for (const x of xs) matmulMod(total, x);
    const { eps } = threadsWorld(p, 4096, { lazy: true });
    for (const root of [0, p - 1, p >> 1]) {
      const out = await Promise.all(
        eps.map(async (ep) => {
          const comm = createWorldCommunicator(ep, { endpointChecks: true });
          const r = comm.rank;
          const red = new Int32Array(4 * k);
          await reduce(comm, { send: mats(r, k, seed), recv: r === root ? red : undefined, root, op: matmulMod });
          const all = new Int32Array(4 * k);
          await allreduce(comm, { send: mats(r, k, seed), recv: all, op: matmulMod });
          const inPlace = mats(r, k, seed);
          await allreduce(comm, { send: inPlace, recv: inPlace, op: matmulMod });
          return { red: [...red], all: [...all], inPlace: [...inPlace] };
        }),
      );
      out.forEach((o, r) => {
        if (r === root) expect(o.red).toEqual([...total]);
        expect(o.all).toEqual([...total]);
        expect(o.inPlace).toEqual([...total]);
      });
    }
    // every call of every rank went to the native executor
    expect(spy).toHaveBeenCalledTimes(3 * 3 * p);
  });

  it('more than 32 ranks: doorbell bits shared by several peers, no focus peer (p = 40)', async () => {
    const cases = makeCases(40, 40, 1).filter((c, i) => i % 6 === 0);
    expect(cases.length).toBeGreaterThan(8);
    const out = await inThread(40, { scenario: 'cases', cases, repeats: 2 });
    expect(out.flat()).toEqual([]);
  });

  it('tiny rings: messages stream through and sends queue (p = 5)', async () => {
    const cases = makeCases(5, 77, 1).map((c) => ({ ...c, counts: c.counts.map((n) => n * 7), displs: c.displs?.map((d) => d * 7) }));
    const out = await inThread(5, { scenario: 'cases', cases, repeats: 2 }, 64);
    expect(out.flat()).toEqual([]);
  });

  it('schedule operations and plain ones match in posting order, without overtaking', async () => {
    const out = await inThread(3, { scenario: 'mixed' }, 1024);
    expect(out.flat()).toEqual([]);
  });

  it('messages already in the ring behind a pending plain receive go to it first', async () => {
    const { eps } = threadsWorld(2, 1024, { lazy: true });
    const [c0, c1] = eps.map((ep) => createWorldCommunicator(ep, { endpointChecks: true }));
    const x = new Uint8Array(4);
    const a = new Uint8Array(4);
    const rs: RankSchedule = { rank: 0, buffers: [{ name: 'b', bytes: 4 }], steps: [{ window: 1, ops: [{ kind: 'recv', peer: 1, tag: 5, data: [{ buffer: 0, offset: 0, length: 4 }] }] }] };
    const bound = bindSchedule(c0, rs, [a]);
    const r = c0.irecv(1, 5, x);
    // straight into the ring, in this turn: nobody pumps them before the schedule posts
    void c1.isend(0, 5, new Uint8Array(4).fill(1));
    void c1.isend(0, 5, new Uint8Array(4).fill(2));
    const s = bound.run();
    await Promise.all([r, s]);
    expect(Array.from(x)).toEqual([1, 1, 1, 1]);
    expect(Array.from(a)).toEqual([2, 2, 2, 2]);
    // and the other way round: the schedule's receive pending, a plain one posted after the messages came
    const s2 = bound.run();
    void c1.isend(0, 5, new Uint8Array(4).fill(3));
    void c1.isend(0, 5, new Uint8Array(4).fill(4));
    const r2 = c0.irecv(1, 5, x);
    await Promise.all([r2, s2]);
    expect(Array.from(a)).toEqual([3, 3, 3, 3]);
    expect(Array.from(x)).toEqual([4, 4, 4, 4]);
  });

  it.each([false, true])('windows: an operation starts once fewer than `window` earlier ones are unfinished (portable: %s)', async (portable) => {
    const { eps } = threadsWorld(2, 1024, { lazy: true });
    const [c0, c1] = eps.map((ep) => createWorldCommunicator(ep, { endpointChecks: true }));
    const r = (offset: number, length: number): { buffer: number; offset: number; length: number } => ({ buffer: 0, offset, length });
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 16 }],
      steps: [
        // window 1: the copy waits for the receive, and copies what it got
        { window: 1, ops: [{ kind: 'recv', peer: 1, tag: 5, data: [r(0, 2)] }, { kind: 'copy', from: [r(0, 2)], to: [r(2, 2)] }] },
        // window 2: the copy through a port waits until one of the two receives completed (the
        // first, tag 5); the plain copy after it starts then too (one receive unfinished < 2),
        // before the second receive has landed
        {
          window: 2,
          ops: [
            { kind: 'recv', peer: 1, tag: 5, data: [r(4, 2)] },
            { kind: 'recv', peer: 1, tag: 6, data: [r(6, 2)] },
            { kind: 'copy', tag: 7, from: [r(4, 2)], to: [r(8, 2)] },
            { kind: 'copy', from: [r(6, 2)], to: [r(10, 2)] },
          ],
        },
      ],
    };
    const buf = new Uint8Array(16);
    const run = bindSchedule(c0, rs, [buf], { portable }).run();
    await new Promise((res) => setTimeout(res, 5));
    await c1.send(0, 5, Uint8Array.of(1, 2));
    await new Promise((res) => setTimeout(res, 5));
    await c1.send(0, 5, Uint8Array.of(3, 4));
    await new Promise((res) => setTimeout(res, 5));
    await c1.send(0, 6, Uint8Array.of(5, 6));
    await run;
    expect(Array.from(buf)).toEqual([1, 2, 1, 2, 3, 4, 5, 6, 3, 4, 0, 0, 0, 0, 0, 0]);
  });

  it('short and long messages fail as with the portable executor, through recvError when given', async () => {
    const [out] = await inThread(2, { scenario: 'recv-error' });
    checkRecvErrors(out);
  });

  it('a peer that fails while this rank waits in a schedule: the run rejects naming it', async () => {
    const world = threadsWorld(3, 1024, { lazy: true });
    const comm = createWorldCommunicator(world.eps[0], { endpointChecks: true });
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 8 }],
      steps: [{ window: 2, ops: [{ kind: 'recv', peer: 1, tag: 1, data: [{ buffer: 0, offset: 0, length: 4 }] }, { kind: 'recv', peer: 2, tag: 1, data: [{ buffer: 0, offset: 4, length: 4 }] }] }],
    };
    const run = bindSchedule(comm, rs, [new Uint8Array(8)]).run();
    const c1 = createWorldCommunicator(world.eps[1], { endpointChecks: true });
    await c1.send(0, 1, new Uint8Array(4));
    setTimeout(() => world.fail(2), 20);
    const t0 = Date.now();
    const e = await Promise.resolve(run).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).message).toBe('rank 2 failed');
    expect((e as CommunicationError).rank).toBe(2);
    expect(Date.now() - t0).toBeLessThan(2000);
    // and a run started after the failure fails at once
    await expect(Promise.resolve(bindSchedule(comm, rs, [new Uint8Array(8)]).run())).rejects.toThrow('rank 2 failed');
  });

  it('a bound schedule runs one run at a time; names the operation it waits for', async () => {
    const world = threadsWorld(2, 1024, { lazy: true });
    const ep = world.eps[0];
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 4 }],
      steps: [
        { window: 1, ops: [{ kind: 'send', peer: 1, tag: 3, data: [{ buffer: 0, offset: 0, length: 4 }] }] },
        { window: 1, ops: [{ kind: 'recv', peer: 1, tag: 4, data: [{ buffer: 0, offset: 0, length: 4 }] }] },
      ],
    };
    const es = ep.bindSchedule(0, null, rs, [new Uint8Array(4)], {});
    const first = es.start(0);
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 4 });
    await expect(Promise.resolve(es.start(0))).rejects.toThrow(/already running/);
    const c1 = createWorldCommunicator(world.eps[1], { endpointChecks: true });
    await c1.recv(0, 3, new Uint8Array(4));
    await c1.send(0, 4, Uint8Array.of(1, 2, 3, 4));
    await first;
    expect(es.waiting()).toBeUndefined();
  });
});

/** Native and portable fail alike (the first 6 entries against the last 6). */
function checkRecvErrors(out: string[]): void {
  expect(out).toHaveLength(12);
  expect(out.slice(0, 6)).toEqual(out.slice(6));
  expect(out[0]).toBe('CommunicationError: rank 0: schedule step 0 op 0: receive from rank 1 tag 5 got 3 bytes, expected 5');
  expect(out[1]).toMatch(/^TruncationError: message of 9 bytes from rank 1 \(tag 5\) exceeds the receive buffer of 5 bytes \[9 > 5\]$/);
  expect(out[2]).toBe('then 3,3,3,3,3');
  expect(out[3]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got 3 cause undefined');
  expect(out[4]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got undefined cause TruncationError');
  expect(out[5]).toBe('then 3,3,3,3,3');
}

describe('native schedules through runThreads', () => {
  it.each(PS)('compiled gatherv/scatterv schedules, 4 models: p = %i', async (p) => {
    const cases = makeCases(p, 2000 + p, 1);
    const out = await runThreads<string[]>(p, PROGRAM, { scenario: 'cases', cases, repeats: 3 } satisfies ScheduleArgs);
    expect(out.flat()).toEqual([]);
  }, 30_000);

  it('mixed with plain operations (posting order, non-overtaking)', async () => {
    const out = await runThreads<string[]>(2, PROGRAM, { scenario: 'mixed' } satisfies ScheduleArgs);
    expect(out.flat()).toEqual([]);
  }, 30_000);

  it('receive length errors as the portable executor’s', async () => {
    const [out] = await runThreads<string[]>(2, PROGRAM, { scenario: 'recv-error' } satisfies ScheduleArgs);
    checkRecvErrors(out);
  }, 30_000);

  it('a rank that throws fails a rank waiting in a schedule fast, naming it', async () => {
    const report = new SharedArrayBuffer(512);
    const t0 = Date.now();
    const e = await runThreads(3, PROGRAM, { scenario: 'fail', report } satisfies ScheduleArgs, { failureGraceMs: 10_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(2);
    expect((e as CommunicationError).message).toMatch(/rank 2 failed: boom/);
    expect(Date.now() - t0).toBeLessThan(8000); // rank 0 failed fast, not after the grace period
    const bytes = new Uint8Array(report);
    const seen = new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
    expect(seen).toBe('CommunicationError: rank 2 failed');
  }, 30_000);

  it('a deadlock while a rank waits in a schedule lists the schedule’s receive', async () => {
    const e = await runThreads(2, PROGRAM, { scenario: 'deadlock' } satisfies ScheduleArgs, { deadlockMs: 400 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DeadlockError);
    const ranks = (e as DeadlockError).ranks;
    expect(ranks.find((r) => r.rank === 0)?.waitsFor).toEqual(['recv from 1 tag 5']);
  }, 30_000);

  it('a silent peer: the schedule times out naming it', async () => {
    const e = await runThreads(2, PROGRAM, { scenario: 'timeout' } satisfies ScheduleArgs, { timeoutMs: 200, deadlockMs: Infinity }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    const cause = (e as CommunicationError).cause;
    expect(cause).toBeInstanceOf(TimeoutError);
    expect((cause as TimeoutError).peer).toBe(1);
    expect((cause as TimeoutError).message).toMatch(/rank 0 waits for recv from 1 tag 5/);
  }, 30_000);
});
