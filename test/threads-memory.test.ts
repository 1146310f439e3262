/**
 * Memory of a worker-threads run: channel memory grows with the pairs of ranks that talk
 * (shared-layout.ts: slots in lazily committed arenas, opened by their sender on its first message),
 * not with p²; and runThreads refuses at once a p whose workers would not fit in memory.
 */
import { describe, expect, it } from 'vitest';
import { TooLargeError } from '../src/errors.js';
import { channelsInUse } from '../src/transports/threads/shared-layout.js';
import { threadsWorld, type ThreadsWorld } from './helpers/threads-world.js';
import { runThreads, threadsMemoryEstimate, threadsMemoryLimit } from '../src/transports/threads/run.js';

/** p endpoints in this thread whose channels open on first use, as the workers' do. */
function lazyWorld(p: number, ring: number): ThreadsWorld {
  return threadsWorld(p, ring, { lazy: true, spinLoads: 0 });
}

describe('channels open on first use', () => {
  it('a ring-shaped exchange at p = 16 opens 16 channels, not 240; a gather to rank 0 opens 15', async () => {
    const p = 16;
    const { layout, eps } = lazyWorld(p, 1024);
    expect(channelsInUse(layout)).toBe(0);
    const got = Array.from({ length: p }, () => new Uint8Array(3000));
    await Promise.all(
      eps.flatMap((ep, r) => [
        Promise.resolve(ep.isend(0, (r + 1) % p, 7, new Uint8Array(3000).fill(r + 1))), // longer than the ring
        Promise.resolve(ep.irecv(0, (r + p - 1) % p, 7, got[r])),
      ]),
    );
    for (let r = 0; r < p; r++) expect(got[r].every((x) => x === ((r + p - 1) % p) + 1), `rank ${r}`).toBe(true);
    expect(channelsInUse(layout)).toBe(16);

    const g = lazyWorld(p, 1024);
    const into = Array.from({ length: p }, () => new Uint8Array(1));
    await Promise.all([
      ...g.eps.slice(1).map((ep, i) => Promise.resolve(ep.isend(0, 0, 1, Uint8Array.of(i + 1)))),
      ...into.slice(1).map((buf, s) => Promise.resolve(g.eps[0].irecv(0, s + 1, 1, buf))),
    ]);
    expect(into.slice(1).map((b) => b[0])).toEqual(Array.from({ length: p - 1 }, (_, i) => i + 1));
    expect(channelsInUse(g.layout)).toBe(15);
  });

  it('receives from any source find the senders that opened their channels (p = 40: doorbell bits shared)', async () => {
    const p = 40;
    const { layout, eps } = lazyWorld(p, 256);
    const reqs = [];
    for (let i = 1; i < p; i++) reqs.push(Promise.resolve(eps[0].irecv(0, -1, 5, new Uint8Array(4))));
    // Ranks 33 and 1 share a doorbell bit: each message is found whatever the order.
    for (const s of [33, 1, 39, 32, 2, ...Array.from({ length: p - 1 }, (_, i) => i + 1).filter((x) => ![33, 1, 39, 32, 2].includes(x))]) {
      void eps[s].isend(0, 0, 5, Uint8Array.of(s, 0, 0, 0));
    }
    const sts = await Promise.all(reqs);
    expect(sts.map((st) => st.source).sort((a, b) => a - b)).toEqual(Array.from({ length: p - 1 }, (_, i) => i + 1));
    expect(channelsInUse(layout)).toBe(p - 1);
  });
});

const PACKED = new URL('./programs/packed-program.ts', import.meta.url);

describe('ranks sharing worker threads', () => {
  it('7 ranks on 3 workers: point-to-point and gatherv give the right data; each rank has its own copy of args', async () => {
    const res = await runThreads<{ ok: boolean; gathered: boolean; mine: number[] }>(7, PACKED, { scenario: 'exchange', mine: [] }, { workers: 3, channelBytes: 1024 });
    expect(res).toEqual(Array.from({ length: 7 }, (_, r) => ({ ok: true, gathered: true, mine: [r] })));
  }, 60_000);

  it('a rank that throws on a shared thread fails the run naming it; a rank blocked outside vcoll there is found', async () => {
    const e = await runThreads(6, PACKED, { scenario: 'throws', bad: 4 }, { workers: 2, failureGraceMs: 10_000 }).catch((x: unknown) => x);
    expect((e as Error).message).toMatch(/^rank 4 failed: rank 4 gives up/);
    const d = await runThreads(6, PACKED, { scenario: 'outside', bad: 2 }, { workers: 2, deadlockMs: 300 }).catch((x: unknown) => x);
    expect((d as Error).name).toBe('DeadlockError');
    expect((d as Error).message).toContain('rank 2 blocked outside the communicator');
  }, 60_000);

  it('workers is validated', async () => {
    for (const bad of [0, 7, 1.5]) {
      const e = await runThreads(6, PACKED, { scenario: 'exchange' }, { workers: bad }).catch((x: unknown) => x);
      expect((e as { field?: string }).field, String(bad)).toBe('workers');
    }
  });
});

describe('runThreads refuses a p it cannot run', () => {
  it('at once, before any worker or channel exists: a TooLargeError naming the limit and the memory needed', async () => {
    const t0 = performance.now();
    const e = await runThreads(200_000, PACKED, { scenario: 'exchange' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TooLargeError);
    expect((e as TooLargeError).field).toBe('p');
    expect((e as Error).message).toMatch(/^p too large: 200000 ranks on \d+ worker threads need about [\d.]+ GiB .*more than the limit of [\d.]+ GiB/);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('the estimate stays well under 2 GiB for p = 400 on the default workers, and grows with workers and p²', () => {
    expect(threadsMemoryEstimate(400, 16)).toBeLessThan(2 ** 30);
    expect(threadsMemoryEstimate(400, 400)).toBeGreaterThan(threadsMemoryEstimate(400, 16));
    expect(threadsMemoryEstimate(20_000, 16)).toBeGreaterThan(20_000 ** 2 * 100);
    expect(threadsMemoryLimit()).toBeGreaterThan(0);
  });
});
