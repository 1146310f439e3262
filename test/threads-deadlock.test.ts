/**
 * Deadlock detection of the worker-threads transport: runs in which every rank waits for a
 * message that never comes reject — on every waiting rank with a DeadlockError listing its
 * own pending operations, and from runThreads with one naming every rank — instead of hanging;
 * runs that merely take long (a rank computing, a long exchange through a small ring) do not.
 * Then the monitor (deadlock.ts) and the endpoint's side of it, driven in one thread.
 */
import { threadsWorld } from './helpers/threads-world.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ANY_SOURCE, ANY_TAG, type Status } from '../src/comm/communicator.js';
import type { Request } from '../src/comm/request.js';
import { CommunicationError, DeadlockError, InvalidArgumentError } from '../src/errors.js';
import * as api from '../src/index.js';
import { DeadlockMonitor } from '../src/transports/threads/deadlock.js';
import type { Channel } from '../src/transports/threads/channel.js';
import {
  BUSY_BEATS_OFFSET,
  HEARTBEAT_OFFSET,
  IDLE_OFFSET,
  PROGRESS_OFFSET,
  RANK_FINISHED,
  RANK_RUNNING,
  RANK_WAITING,
  bellOf,
  blockedOutside,
  channelOf,
  createLayout,
  declareDeadlock,
  failRun,
  failureWordOf,
  rankWordsOf,
} from '../src/transports/threads/shared-layout.js';
import { runThreads } from '../src/transports/threads/run.js';
import { SLOT_BYTES, caughtBy, type DeadlockArgs, type DeadlockScenario } from './programs/deadlock-program.js';

const PROGRAM = new URL('./programs/deadlock-program.ts', import.meta.url);
const DEADLOCK_MS = 300;

/** Runs the scenario on p ranks; returns the results or the rejection, and the shared record of what each rank caught. */
async function run(
  p: number,
  scenario: DeadlockScenario,
  options: { deadlockMs?: number; amount?: number; stuck?: number[]; channelBytes?: number; spinLoads?: number; nodes?: number[]; workers?: number } = {},
): Promise<{ result: unknown[] | undefined; error: unknown; out: SharedArrayBuffer; ms: number }> {
  const out = new SharedArrayBuffer(SLOT_BYTES * p);
  const args: DeadlockArgs = { scenario, out, amount: options.amount, stuck: options.stuck };
  const { amount: _amount, stuck: _stuck, ...opts } = options;
  const t0 = performance.now();
  const r = await runThreads(p, PROGRAM, args, { deadlockMs: DEADLOCK_MS, ...opts }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { ...r, out, ms: performance.now() - t0 };
}

describe('runThreads: deadlocks reject on every rank instead of hanging', () => {
  it('two ranks each receiving from the other: both fail with a DeadlockError naming their receive; the run names both', async () => {
    const { error, out } = await run(2, 'cross-recv');
    expect(error).toBeInstanceOf(DeadlockError);
    expect(error).toBeInstanceOf(CommunicationError);
    const e = error as DeadlockError;
    expect(e.code).toBe('COMMUNICATION');
    expect(e.rank).toBeUndefined();
    expect(e.message).toMatch(/^deadlock: no rank progressed for 300 ms/);
    expect(e.message).toContain('rank 0 waits for recv from 1 tag 1');
    expect(e.message).toContain('rank 1 waits for recv from 0 tag 1');
    expect(e.ranks).toEqual([
      { rank: 0, finished: false, waitsFor: ['recv from 1 tag 1'] },
      { rank: 1, finished: false, waitsFor: ['recv from 0 tag 1'] },
    ]);
    for (const r of [0, 1]) {
      const c = caughtBy(out, r);
      expect(c, `rank ${r}`).toMatchObject({ name: 'DeadlockError', deadlock: true, communication: true, rank: r });
      expect(c?.message).toMatch(new RegExp(`^deadlock: .*rank ${r} waits for recv from ${1 - r} tag 1$`));
      expect(c?.waitsFor).toEqual([`recv from ${1 - r} tag 1`]);
    }
  });

  it('a rank waiting for one that returned without sending: the run names the waiting rank and the returned ones as finished', async () => {
    const { error, out } = await run(3, 'returned');
    expect(error).toBeInstanceOf(DeadlockError);
    const e = error as DeadlockError;
    expect(e.message).toContain('rank 0 waits for recv from 1 tag 7');
    expect(e.message).toContain('ranks 1, 2 finished');
    expect(e.ranks).toEqual([
      { rank: 0, finished: false, waitsFor: ['recv from 1 tag 7'] },
      { rank: 1, finished: true, waitsFor: [] },
      { rank: 2, finished: true, waitsFor: [] },
    ]);
    expect(caughtBy(out, 0)).toMatchObject({ deadlock: true, rank: 0, waitsFor: ['recv from 1 tag 7'] });
    expect(caughtBy(out, 1)).toBeUndefined();
  });

  // Both hang without the monitor (checked with deadlockMs: Infinity when these tests were written).
  it('mismatched gatherv — roots 0 and 1, or linear at the root and binomial elsewhere — rejects with a DeadlockError', async () => {
    const scenarios = ['gatherv-root', 'gatherv-algorithm'] as const;
    const runs = await Promise.all(scenarios.map((s) => run(4, s)));
    for (const [i, scenario] of scenarios.entries()) {
      const { error, out } = runs[i];
      expect(error, scenario).toBeInstanceOf(DeadlockError);
      const e = error as DeadlockError;
      const waiting = e.ranks.filter((r) => !r.finished);
      expect(waiting.length, scenario).toBeGreaterThan(0);
      for (const w of waiting) {
        // Collectives' receives: a reserved tag in the collective's context.
        expect(w.waitsFor.length, `${scenario} rank ${w.rank}`).toBeGreaterThan(0);
        for (const op of w.waitsFor) expect(op).toMatch(/^(recv from \d|send to \d) tag \d{10}.*\(context \d+\)$/);
        expect(e.message).toContain(`rank ${w.rank} waits for ${w.waitsFor[0]}`);
        expect(caughtBy(out, w.rank), `${scenario} rank ${w.rank}`).toMatchObject({ deadlock: true, rank: w.rank, waitsFor: w.waitsFor });
      }
      // linear at the root: rank 0 waits for every other rank's block.
      if (scenario === 'gatherv-algorithm') expect(e.ranks[0].waitsFor.length).toBe(3);
    }
  });
});

describe('runThreads: a rank blocked outside vcoll while the others wait for it', () => {
  it('rank 1 awaits a timer while ranks 0 and 2 call barrier: a DeadlockError within about deadlockMs naming rank 1 as blocked outside', async () => {
    const { error, out, ms } = await run(3, 'outside');
    expect(error).toBeInstanceOf(DeadlockError);
    const e = error as DeadlockError;
    expect(e.rank).toBeUndefined();
    expect(e.message).toMatch(/^deadlock: no rank progressed for 300 ms/);
    expect(e.message).toContain('rank 1 blocked outside the communicator');
    expect(e.ranks[1]).toEqual({ rank: 1, finished: false, waitsFor: [] });
    for (const r of [0, 2]) {
      expect(e.ranks[r].finished, `rank ${r}`).toBe(false);
      expect(e.ranks[r].waitsFor.length, `rank ${r}`).toBeGreaterThan(0);
      const c = caughtBy(out, r);
      expect(c, `rank ${r}`).toMatchObject({ name: 'DeadlockError', deadlock: true, rank: r });
      expect(c?.message, `rank ${r}`).toContain('rank 1 blocked outside the communicator');
    }
    expect(caughtBy(out, 1)).toBeUndefined();
    // Not after a grace period: the run ends once the waiting ranks reported (hang guard: generous).
    expect(ms).toBeLessThan(6000);
  }, 30_000);

  it('also when its doorbell was rung and bytes wait in its ring; the rank that returned counts as finished', async () => {
    const { error, out } = await run(3, 'outside-sent');
    expect(error).toBeInstanceOf(DeadlockError);
    const e = error as DeadlockError;
    expect(e.ranks).toEqual([
      { rank: 0, finished: false, waitsFor: ['recv from 1 tag 2'] },
      { rank: 1, finished: false, waitsFor: [] },
      { rank: 2, finished: true, waitsFor: [] },
    ]);
    expect(e.message).toContain('rank 0 waits for recv from 1 tag 2');
    expect(e.message).toContain('rank 1 blocked outside the communicator');
    expect(e.message).toContain('rank 2 finished');
    expect(caughtBy(out, 0)).toMatchObject({ deadlock: true, rank: 0, waitsFor: ['recv from 1 tag 2'] });
  }, 30_000);
});

describe('runThreads: a rank blocked outside vcoll after every other rank has finished', () => {
  /** The run's DeadlockError names `stuck` blocked outside the communicator and every other rank finished. */
  function expectStuck(r: Awaited<ReturnType<typeof run>>, p: number, stuck: readonly number[]): void {
    expect(r.result).toBeUndefined();
    expect(r.error).toBeInstanceOf(DeadlockError);
    const e = r.error as DeadlockError;
    expect(e.rank).toBeUndefined();
    expect(e.message).toMatch(/^deadlock: no rank progressed for 300 ms/);
    expect(e.ranks).toEqual(
      Array.from({ length: p }, (_, rank) => (stuck.includes(rank) ? { rank, finished: false, waitsFor: [] } : { rank, finished: true, waitsFor: [] })),
    );
    for (const s of stuck) expect(e.message).toContain(`rank ${s} blocked outside the communicator`);
    // Nobody waited in vcoll: no rank caught anything.
    for (let k = 0; k < p; k++) expect(caughtBy(r.out, k), `rank ${k}`).toBeUndefined();
    // Within about deadlockMs, not after a grace period (hang guard: generous).
    expect(r.ms).toBeLessThan(6000);
  }

  it('the root of a gather (p = 3) awaits a timer instead of gathering while the other ranks send and return: a DeadlockError naming it', async () => {
    expectStuck(await run(3, 'stuck-gather-root'), 3, [0]);
  }, 30_000);

  it('a leaf of a bcast (p = 4) awaits a timer instead of receiving while the others return: a DeadlockError naming it', async () => {
    expectStuck(await run(4, 'stuck-bcast-leaf'), 4, [3]);
  }, 30_000);

  it('with ranks sharing worker threads: a stuck rank whose thread-mates finished, two stuck ranks on two threads, every rank on one thread', async () => {
    const runs = await Promise.all([
      run(4, 'stuck-bcast-leaf', { workers: 2 }), // ranks 2 and 3 on one thread
      run(6, 'stuck-bcast-leaf', { workers: 2, stuck: [2, 4] }), // ranks 0-2 and 3-5
      run(4, 'stuck-bcast-leaf', { workers: 1 }),
      run(3, 'stuck-gather-root', { workers: 1 }),
    ]);
    expectStuck(runs[0], 4, [3]);
    expectStuck(runs[1], 6, [2, 4]);
    expectStuck(runs[2], 4, [3]);
    expectStuck(runs[3], 3, [0]);
  }, 60_000);

  it('a rank that awaits a timer shorter than deadlockMs after its collectives, alone once the others returned, succeeds', async () => {
    const [a, b] = await Promise.all([run(4, 'timer-after', { amount: 150 }), run(4, 'timer-after', { amount: 150, workers: 2 })]);
    expect(a.error).toBeUndefined();
    expect(a.result).toEqual([42, 42, 42, 42]);
    expect(a.ms).toBeGreaterThan(150);
    expect(b.error).toBeUndefined();
    expect(b.result).toEqual([42, 42, 42, 42]);
  }, 30_000);
});

describe('runThreads: a hierarchical gatherv with mismatched variants', () => {
  it('flat at the root, zero-copy elsewhere (virtual nodes): a DeadlockError, not a hang', async () => {
    const { error } = await run(4, 'hier-variant', { nodes: [0, 0, 1, 1] });
    expect(error).toBeInstanceOf(DeadlockError);
    expect((error as DeadlockError).ranks.some((r) => !r.finished && r.waitsFor.length > 0)).toBe(true);
  });
});

describe('runThreads: no false deadlock', () => {
  it('a rank computing for 1.5 s (≫ deadlockMs) while the others wait for it — with its progress loop idle or asleep — succeeds', async () => {
    // 'compute-asleep': rank 0's loop sleeps on its posted receives while it computes, so only
    // its silent heartbeat tells it from a rank that waits for a timer. (Both runs at once:
    // sharing the cores can only delay heartbeats, which never makes a deadlock out of nothing.)
    const [a, b] = await Promise.all([run(3, 'compute', { amount: 1500 }), run(3, 'compute-asleep', { amount: 1500 })]);
    expect(a.error).toBeUndefined();
    expect(a.result).toEqual([0, 1, 2]);
    expect(a.ms).toBeGreaterThan(1500);
    expect(b.error).toBeUndefined();
    expect(b.result).toEqual([0, 1, 2]);
  });

  it('a rank computing 1.5 s in 20 ms chunks, yielding through zero timers — while the others wait for it, or after they returned — succeeds', async () => {
    // At every beat only timers are active on its thread, but its event loop is busy, not idle.
    const [a, b] = await Promise.all([run(3, 'compute-chunks', { amount: 1500 }), run(3, 'compute-chunks-after', { amount: 1500 })]);
    expect(a.error).toBeUndefined();
    expect(a.result).toEqual([0, 1, 2]);
    expect(b.error).toBeUndefined();
    expect(b.result).toEqual([42, 42, 42]);
    expect(b.ms).toBeGreaterThan(1500);
  }, 30_000);

  it('8 MiB each way through 64 KiB rings (and through 4 KiB rings, sleeping at once) succeeds with deadlockMs 300', async () => {
    const a = await run(2, 'long-exchange', { amount: 8 << 20, channelBytes: 64 * 1024 });
    expect(a.error).toBeUndefined();
    expect(a.result).toEqual([8 << 20, 8 << 20]);
    const b = await run(2, 'long-exchange', { amount: 2 << 20, channelBytes: 4096, spinLoads: 0 });
    expect(b.error).toBeUndefined();
    expect(b.result).toEqual([2 << 20, 2 << 20]);
  });
});

describe('runThreads: deadlockMs', () => {
  const saved = process.env.VCOLL_THREADS_DEADLOCK_MS;
  afterEach(() => {
    if (saved === undefined) delete process.env.VCOLL_THREADS_DEADLOCK_MS;
    else process.env.VCOLL_THREADS_DEADLOCK_MS = saved;
  });

  it('is validated like the other options; DeadlockError is exported', async () => {
    for (const bad of [0, -1, Number.NaN, '300' as unknown as number]) {
      const e = await runThreads(2, PROGRAM, {}, { deadlockMs: bad }).catch((x: unknown) => x);
      expect(e, String(bad)).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).field).toBe('deadlockMs');
    }
    expect(api.DeadlockError).toBe(DeadlockError);
  });

  it('defaults to VCOLL_THREADS_DEADLOCK_MS', async () => {
    process.env.VCOLL_THREADS_DEADLOCK_MS = '250';
    const out = new SharedArrayBuffer(SLOT_BYTES * 2);
    const e = await runThreads(2, PROGRAM, { scenario: 'cross-recv', out } satisfies DeadlockArgs).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DeadlockError);
    expect((e as Error).message).toMatch(/^deadlock: no rank progressed for 250 ms/);
  });
});

/** p monitored endpoints over one layout, driven in this thread, sleeping at once. */
function world(p: number, ring: number) {
  const { layout, words, eps } = threadsWorld(p, ring, { monitored: true, spinLoads: 0 });
  const state = (r: number): number => Atomics.load(words, rankWordsOf(layout, r).index);
  return { layout, words, eps, state };
}

const turn = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

describe('the endpoint on a declared deadlock (one thread)', () => {
  it('publishes WAITING while it sleeps, then fails every pending and later operation with a DeadlockError listing them', async () => {
    const { layout, eps, state } = world(3, 256);
    const a = eps[0];
    const reqs: Request<unknown>[] = [
      a.irecv(2, 1, 5, new Uint8Array(8)),
      a.irecv(0, ANY_SOURCE, ANY_TAG, new Uint8Array(8)),
      a.isend(0, 2, 6, new Uint8Array(1000)), // longer than the ring, rank 2 does not read: stays queued
      a.irecv(3, 1, 8, new Uint8Array(600)),
    ];
    for (const r of reqs) void Promise.resolve(r).catch(() => undefined);
    // "Rank 1" writes the first ring-full of a 600-byte message for that receive, and no more.
    const raw = channelOf(layout, 1, 0) as Channel;
    raw.beginSend(3, 8, new Uint8Array(600));
    raw.writeSome();
    await turn();
    expect(state(0)).toBe(RANK_WAITING);
    expect(state(2)).toBe(RANK_RUNNING); // nothing pending: never slept
    expect(a.pendingOperations()).toEqual([
      expect.stringMatching(/^recv from 1 tag 8 \(context 3\), matched by a message from 1 \(\d+ of 600 bytes arrived\)$/),
      'recv from 1 tag 5 (context 2)',
      'recv from any source tag any tag',
      'send to 2 tag 6 (1000 bytes)',
    ]);
    expect(declareDeadlock(layout)).toBe(true);
    expect(declareDeadlock(layout)).toBe(false); // recorded once
    const errs = await Promise.all(reqs.map((r) => Promise.resolve(r).then(() => undefined, (e: unknown) => e)));
    for (const e of errs) expect(e).toBeInstanceOf(DeadlockError);
    const e = errs[0] as DeadlockError;
    expect(e.rank).toBe(0);
    expect(e.ranks).toHaveLength(1);
    expect(e.ranks[0].rank).toBe(0);
    expect(e.ranks[0].waitsFor).toHaveLength(4);
    expect(e.message).toMatch(/rank 0 waits for recv from 1 tag 8 \(context 3\), matched .*, recv from 1 tag 5 \(context 2\), recv from any source tag any tag, send to 2 tag 6 \(1000 bytes\)$/);
    expect(state(0)).toBe(RANK_RUNNING);
    // Later operations fail at once, on every rank.
    await expect(Promise.resolve(a.irecv(0, 1, 0, new Uint8Array(1)))).rejects.toBeInstanceOf(DeadlockError);
    await expect(Promise.resolve(eps[2].isend(0, 0, 0, new Uint8Array(1)))).rejects.toThrow(/rank 2 nothing pending/);
  });

  it('a run already failed by a rank is not declared deadlocked; its failure message is unchanged', async () => {
    const { layout, eps } = world(2, 256);
    const r = eps[0].irecv(0, 1, 0, new Uint8Array(1));
    failRun(layout, 1);
    expect(declareDeadlock(layout)).toBe(false);
    const e = await Promise.resolve(r).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect(e).not.toBeInstanceOf(DeadlockError);
    expect((e as Error).message).toBe('rank 1 failed');
  });

  it('lists at most 64 pending operations, counting the rest', () => {
    const { eps } = world(2, 256);
    const reqs: Request<Status>[] = [];
    for (let i = 0; i < 70; i++) reqs.push(eps[0].irecv(0, 1, i, new Uint8Array(1)));
    const ops = eps[0].pendingOperations(64);
    expect(ops).toHaveLength(65);
    expect(ops[64]).toBe('6 more');
  });
});

describe('DeadlockMonitor (words set by hand)', () => {
  /** A layout of p ranks whose words the test writes as ranks would, and a monitor over it. */
  function setup(p: number, deadlockMs: number) {
    const layout = createLayout(p, 64);
    const words = new Int32Array(layout.bells);
    const at = (r: number): number => rankWordsOf(layout, r).index;
    const set = (r: number, state: number): void => {
      Atomics.store(words, at(r), state);
    };
    const sleep = (r: number): void => {
      Atomics.add(words, at(r) + PROGRESS_OFFSET, 1);
      set(r, RANK_WAITING);
    };
    const beatAll = (): void => {
      for (let r = 0; r < p; r++) Atomics.add(words, at(r) + HEARTBEAT_OFFSET, 1);
    };
    const monitor = new DeadlockMonitor(layout, deadlockMs);
    let now = 0;
    /** One look, 100 ms after the last, every rank having beaten unless `silent`. */
    const look = (silent: number[] = []): boolean => {
      for (let r = 0; r < p; r++) if (!silent.includes(r)) Atomics.add(words, at(r) + HEARTBEAT_OFFSET, 1);
      now += 100;
      return monitor.tick(now);
    };
    return { layout, words, set, sleep, beatAll, monitor, look, bell: (r: number) => bellOf(layout, r).index };
  }

  it('declares once every rank waits or finished, nothing changed for deadlockMs, doorbells empty, heartbeats alive', () => {
    const m = setup(3, 300);
    m.sleep(0);
    m.sleep(1);
    m.set(2, RANK_FINISHED);
    expect(m.look()).toBe(false); // first look: starts the count
    expect(m.look()).toBe(false); // 100 ms
    expect(m.look()).toBe(false); // 200 ms
    expect(m.look()).toBe(true); // 300 ms
    expect(m.monitor.declared).toBe(true);
    expect(m.monitor.finishedAtDeclaration(2)).toBe(true);
    expect(m.monitor.finishedAtDeclaration(0)).toBe(false);
    expect(Atomics.load(m.words, failureWordOf(m.layout).index)).toBe(-1);
    expect(m.look()).toBe(false); // declared once
  });

  it('starts the count again on progress, a rank running or a rung doorbell', () => {
    const m = setup(2, 300);
    m.sleep(0);
    m.sleep(1);
    const stir: (() => void)[] = [
      () => m.sleep(1), // rank 1 woke and slept again between two looks
      () => m.set(0, RANK_RUNNING),
      () => Atomics.store(m.words, m.bell(1), 1), // news rank 1 has not looked at
    ];
    for (const s of stir) {
      expect(m.look()).toBe(false);
      expect(m.look()).toBe(false);
      s();
      expect(m.look()).toBe(false);
      m.set(0, RANK_WAITING);
      Atomics.store(m.words, m.bell(1), 0);
    }
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(true);
  });

  it('a waiting rank silent for two looks is busy (its JS computes, its loop asleep): the count starts again; one silent look only defers', () => {
    const m = setup(2, 300);
    m.sleep(0);
    m.sleep(1);
    expect(m.look()).toBe(false); // the count starts
    expect(m.look()).toBe(false);
    expect(m.look([1])).toBe(false);
    expect(m.look([1])).toBe(false); // busy: the count starts again
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    expect(m.look([0])).toBe(false); // 300 ms, but rank 0 has not beaten since the last look: not yet
    expect(m.monitor.declared).toBe(false);
    expect(m.look()).toBe(true); // it beats again (one late timer)
  });

  it('a running rank whose every beat found it idle outside vcoll is blocked outside; a busy beat or silence starts the count again', () => {
    const m = setup(3, 300);
    const at = (r: number): number => rankWordsOf(m.layout, r).index;
    m.sleep(0);
    m.set(2, RANK_FINISHED);
    // Rank 1 runs, and never was idle: not stuck.
    for (let i = 0; i < 5; i++) expect(m.look()).toBe(false);
    Atomics.store(m.words, at(1) + IDLE_OFFSET, 1);
    expect(m.look()).toBe(false); // the count starts
    expect(m.look()).toBe(false);
    Atomics.add(m.words, at(1) + BUSY_BEATS_OFFSET, 1); // a beat in between found it loading a module
    expect(m.look()).toBe(false); // the count starts again
    expect(m.look()).toBe(false);
    expect(m.look([1])).toBe(false);
    expect(m.look([1])).toBe(false); // silent twice: it computes, the count starts again
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(true); // 300 ms idle outside vcoll while rank 0 waits
    expect(m.monitor.outsideAtDeclaration(1)).toBe(true);
    expect(m.monitor.outsideAtDeclaration(0)).toBe(false);
    expect(m.monitor.finishedAtDeclaration(2)).toBe(true);
    expect(blockedOutside(m.layout)).toEqual([1]);
  });

  it('with no rank waiting: declares the ranks idle outside vcoll once every other rank finished, with the same rules', () => {
    const m = setup(4, 300);
    const at = (r: number): number => rankWordsOf(m.layout, r).index;
    Atomics.store(m.words, at(0) + IDLE_OFFSET, 1);
    Atomics.store(m.words, at(2) + IDLE_OFFSET, 1);
    m.set(1, RANK_FINISHED);
    // Rank 3 still runs (not idle): nothing is declared.
    for (let i = 0; i < 5; i++) expect(m.look()).toBe(false);
    m.set(3, RANK_FINISHED);
    expect(m.look()).toBe(false); // a state changed: the count starts
    expect(m.look()).toBe(false);
    expect(m.look([2])).toBe(false);
    expect(m.look([2])).toBe(false); // rank 2 silent twice: it computes, the count starts again
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    Atomics.add(m.words, at(0) + BUSY_BEATS_OFFSET, 1); // rank 0 did I/O in between
    expect(m.look()).toBe(false); // the count starts again
    expect(m.look()).toBe(false);
    expect(m.look()).toBe(false);
    expect(m.look([0])).toBe(false); // 300 ms, but rank 0 has not beaten since the last look: not yet
    expect(m.look()).toBe(true);
    expect(m.monitor.outsideAtDeclaration(0)).toBe(true);
    expect(m.monitor.outsideAtDeclaration(2)).toBe(true);
    expect(m.monitor.finishedAtDeclaration(1)).toBe(true);
    expect(m.monitor.finishedAtDeclaration(3)).toBe(true);
    expect(blockedOutside(m.layout)).toEqual([0, 2]);
    expect(Atomics.load(m.words, failureWordOf(m.layout).index)).toBe(-1);
  });

  it('never declares when every rank is idle outside vcoll and none waits in it or finished (the ranks only sleep)', () => {
    const m = setup(2, 100);
    for (const r of [0, 1]) Atomics.store(m.words, rankWordsOf(m.layout, r).index + IDLE_OFFSET, 1);
    for (let i = 0; i < 5; i++) expect(m.look()).toBe(false);
    expect(blockedOutside(m.layout)).toEqual([]);
  });

  it('never declares when every rank finished, nor once the run failed', () => {
    const a = setup(2, 100);
    a.set(0, RANK_FINISHED);
    a.set(1, RANK_FINISHED);
    for (let i = 0; i < 5; i++) expect(a.look()).toBe(false);
    const b = setup(2, 100);
    b.sleep(0);
    b.sleep(1);
    failRun(b.layout, 1);
    for (let i = 0; i < 5; i++) expect(b.look()).toBe(false);
    expect(b.monitor.declared).toBe(false);
  });
});
