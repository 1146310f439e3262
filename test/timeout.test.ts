/**
 * The opt-in per-operation timeout (comm/timeout.ts) on the simulator and the threads
 * transport: an operation still pending after `timeoutMs` fails with a TimeoutError naming the
 * rank, the peer and the operation, and the run rejects naming it; correct runs are unchanged
 * (the simulator's times and message counts included). Hang guards: vitest timeouts.
 */
import { describe, expect, it } from 'vitest';
import { ANY_SOURCE, type Communicator } from '../src/comm/communicator.js';
import { createWorldCommunicator } from '../src/comm/group.js';
import { OpRequest, waitAll } from '../src/comm/request.js';
import { TimeoutTracker, timeoutFromEnv, unwrapEndpoint } from '../src/comm/timeout.js';
import { CommunicationError, InvalidArgumentError, TimeoutError } from '../src/errors.js';
import { gatherv } from '../src/index.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/run.js';
import { runThreads } from '../src/transports/threads/run.js';
import type { TimeoutArgs } from './programs/timeout-program.js';

const PROGRAM = new URL('./programs/timeout-program.ts', import.meta.url);
const MODEL = linearModel({ alpha: 1, beta: 0.01 });
const EIGHT = new Uint8Array(8);

describe('timeoutMs on the simulator', () => {
  it('fails a receive that waits longer than timeoutMs of wall-clock time while the run goes on', async () => {
    // Ranks 1 and 2 exchange messages for a long (wall-clock) time before rank 1 would send to
    // rank 0: rank 0's receive times out, and the run stops there.
    let rounds = 0;
    const run = runSim(
      3,
      async (comm: Communicator) => {
        const buf = new Uint8Array(8);
        if (comm.rank === 0) {
          await comm.recv(1, 7, buf);
        } else {
          const other = 3 - comm.rank;
          for (let i = 0; i < 3_000_000; i++) {
            if (comm.rank === 1) {
              await comm.send(other, 1, buf);
              await comm.recv(other, 1, buf);
              rounds++;
            } else {
              await comm.recv(other, 1, buf);
              await comm.send(other, 1, buf);
            }
          }
          if (comm.rank === 1) await comm.send(0, 7, buf);
        }
        return comm.rank;
      },
      { model: MODEL, timeoutMs: 50 },
    );
    const e = await run.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CommunicationError);
    const err = e as CommunicationError;
    expect(err.rank).toBe(0);
    expect(err.message).toMatch(/rank 0 failed: timeout after 50 ms: rank 0 waits for recv from 1 tag 7 \(context 0\)/);
    const cause = err.cause as TimeoutError;
    expect(cause).toBeInstanceOf(TimeoutError);
    expect(cause.code).toBe('COMMUNICATION');
    expect(cause.peer).toBe(1);
    expect(cause.operation).toBe('recv from 1 tag 7 (context 0)');
    expect(cause.timeoutMs).toBe(50);
    expect(cause.rank).toBe(0);
    expect(rounds).toBeGreaterThan(0);
    expect(rounds).toBeLessThan(3_000_000);
  }, 60_000);

  it('leaves virtual times, messages and bytes of a correct run unchanged', async () => {
    const program = async (comm: Communicator): Promise<number[] | null> => {
      const p = comm.size;
      const counts = Array.from({ length: p }, (_, i) => 100 * (i + 1));
      const recv = comm.rank === 0 ? new Uint8Array(counts.reduce((a, b) => a + b, 0)) : undefined;
      await gatherv(comm, { root: 0, send: new Uint8Array(counts[comm.rank]).fill(comm.rank), recv, counts }, { algorithm: 'binomial' });
      const sub = await comm.split(comm.rank % 2, comm.rank);
      if (sub !== null) {
        const out = sub.isend((sub.rank + 1) % sub.size, 5, new Uint8Array(64).fill(sub.rank));
        const got = new Uint8Array(64);
        await waitAll<unknown>([out, sub.irecv(ANY_SOURCE, 5, got)]);
        expect(got[0]).toBe((sub.rank + sub.size - 1) % sub.size);
      }
      return recv === undefined ? null : Array.from(recv.subarray(0, 8));
    };
    const plain = await runSim(7, program, { model: MODEL });
    const timed = await runSim(7, program, { model: MODEL, timeoutMs: 10_000 });
    expect(timed.time).toBe(plain.time);
    expect(timed.finish).toEqual(plain.finish);
    expect(timed.messages).toBe(plain.messages);
    expect(timed.bytes).toBe(plain.bytes);
    expect(timed.results).toEqual(plain.results);
  });

  it('rejects a bad timeoutMs naming the field', async () => {
    for (const bad of [0, -5, Number.NaN]) {
      await expect(runSim(2, () => Promise.resolve(0), { model: MODEL, timeoutMs: bad })).rejects.toThrow(InvalidArgumentError);
      await expect(runSim(2, () => Promise.resolve(0), { model: MODEL, timeoutMs: bad })).rejects.toThrow(/invalid timeoutMs: must be a number of ms > 0/);
    }
  });
});

describe('timeoutMs on worker threads', () => {
  const threads = (p: number, args: TimeoutArgs, timeoutMs?: number): Promise<unknown[]> =>
    runThreads(p, PROGRAM, args, { timeoutMs, deadlockMs: Infinity, failureGraceMs: 500 });

  it('a receive nobody sends fails with a TimeoutError naming the rank, the peer and the operation', async () => {
    const e = await threads(3, { scenario: 'recv-nobody' }, 300).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(0);
    expect((e as Error).message).toBe('rank 0 failed: timeout after 300 ms: rank 0 waits for recv from 1 tag 7 (context 0)');
  }, 30_000);

  it('the run rejects naming the rank and what it waits for (ranks disagreeing on the root)', async () => {
    const e = await threads(3, { scenario: 'root-disagree' }, 300).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as Error).message).toMatch(/rank [01] failed: .*timeout after 300 ms: rank [01] waits for recv from [012] tag \d+ \(context 1\)/);
  }, 30_000);

  it('a rank computing in JS makes its peers time out', async () => {
    const e = await threads(3, { scenario: 'busy-loop', busyMs: 8000 }, 300).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as Error).message).toMatch(/rank [01] failed: timeout after 300 ms: rank [01] waits for recv from 2 tag 9 \(context 0\)/);
  }, 30_000);

  it('a correct exchange under a timeout completes with the right data', async () => {
    // Generous: the workers may start seconds apart on a loaded machine (tsx compiles each).
    const results = await threads(2, { scenario: 'pingpong', count: 2000 }, 15_000);
    let sum = 0;
    for (let i = 0; i < 2000; i++) sum += i & 255;
    expect(results).toEqual([sum, 0]);
  }, 60_000);

  it('VCOLL_TIMEOUT_MS is the default; 0 turns it off; garbage is rejected naming the variable', async () => {
    const old = process.env.VCOLL_TIMEOUT_MS;
    try {
      process.env.VCOLL_TIMEOUT_MS = '250';
      await expect(runThreads(2, PROGRAM, { scenario: 'recv-nobody' }, { deadlockMs: Infinity })).rejects.toThrow(
        'rank 0 failed: timeout after 250 ms: rank 0 waits for recv from 1 tag 7 (context 0)',
      );
      process.env.VCOLL_TIMEOUT_MS = '0';
      expect(timeoutFromEnv('VCOLL_TIMEOUT_MS')).toBe(Infinity);
      process.env.VCOLL_TIMEOUT_MS = 'soon';
      await expect(runThreads(2, PROGRAM, { scenario: 'pingpong' })).rejects.toThrow(/invalid VCOLL_TIMEOUT_MS: .*got "soon"/);
    } finally {
      if (old === undefined) delete process.env.VCOLL_TIMEOUT_MS;
      else process.env.VCOLL_TIMEOUT_MS = old;
    }
  }, 30_000);
});

describe('TimeoutTracker', () => {
  it('keeps memory proportional to the pending operations (settled ones are dropped)', () => {
    const t = new TimeoutTracker(60_000, 0);
    try {
      const pending: OpRequest<void>[] = [];
      for (let i = 0; i < 100_000; i++) {
        const r = new OpRequest<void>();
        t.track(r, 'send', 0, 1, 0, EIGHT);
        if (i % 1000 === 0) pending.push(r);
        else r.resolve(undefined);
      }
      expect(t.size).toBeLessThanOrEqual(2048);
      // Requests that completed when posted are not tracked at all.
      for (let i = 0; i < 1000; i++) t.track(OpRequest.done(undefined), 'send', 0, 1, 0, EIGHT);
      expect(t.size).toBeLessThanOrEqual(2048);
      t.sweep();
      expect(t.size).toBe(pending.length);
      for (const r of pending) expect(r.pending).toBe(true);
    } finally {
      t.dispose();
    }
  });

  it('fails a request after TICKS + 1 sweeps, listing the other pending operations', async () => {
    const t = new TimeoutTracker(1_000_000, 4);
    try {
      const a = t.track(new OpRequest<void>(), 'send', 3, 2, 11, new Uint8Array(65536));
      const b = t.track(new OpRequest<unknown>(), 'alloc', 1, ANY_SOURCE, -1);
      for (let i = 0; i < 4; i++) t.sweep();
      expect(a.pending).toBe(true);
      t.sweep();
      await expect(waitAll([a])).rejects.toThrow('timeout after 1000000 ms: rank 4 waits for send to 2 tag 11 (context 3, 65536 bytes); also pending: recv (unknown size) from any source tag any tag (context 1)');
      expect((b.reason as TimeoutError).peer).toBe(ANY_SOURCE);
      expect(t.size).toBe(0);
    } finally {
      t.dispose();
    }
  });

  it('keeps every pending request across growth, and fails each once', () => {
    const t = new TimeoutTracker(1_000_000, 1);
    try {
      const reqs = Array.from({ length: 3000 }, (_, i) => t.track(new OpRequest<unknown>(), 'recv', 0, i % 7, i));
      expect(t.size).toBe(3000);
      for (let i = 0; i < 4; i++) t.sweep();
      expect(reqs.every((r) => r.pending)).toBe(true);
      t.sweep();
      expect(t.size).toBe(0);
      reqs.forEach((r, i) => {
        const e = r.reason as TimeoutError;
        expect(e).toBeInstanceOf(TimeoutError);
        expect(e.operation).toBe(`recv from ${i % 7} tag ${i} (context 0)`);
      });
    } finally {
      t.dispose();
    }
  });

  it('off (undefined or Infinity) leaves the endpoint unwrapped', async () => {
    const { SimEndpoint } = await import('../src/transports/sim/endpoint.js');
    const { Simulation } = await import('../src/transports/sim/sim.js');
    const ep = new SimEndpoint(new Simulation(2, { model: MODEL }), 0);
    expect(createWorldCommunicator(ep).endpoint).toBe(ep);
    expect(createWorldCommunicator(ep, { timeoutMs: Infinity }).endpoint).toBe(ep);
    const wrapped = createWorldCommunicator(ep, { timeoutMs: 100 }).endpoint;
    expect(wrapped).not.toBe(ep);
    expect(unwrapEndpoint(wrapped)).toBe(ep);
    expect(wrapped.clock).toBe(ep.clock);
  });
});
