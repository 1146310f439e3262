import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { CommunicationError } from '../src/errors.js';
import { Channel, createChannelBuffer } from '../src/transports/threads/channel.js';
import { runThreads } from '../src/transports/threads/run.js';

const dir = mkdtempSync(join(tmpdir(), 'vcoll-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const channelUrl = new URL('../src/transports/threads/channel.ts', import.meta.url).href;

/** Writes a module to the temp dir and returns its file URL. */
function module(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return pathToFileURL(file).href;
}

/** Starts a worker on a module that may import TypeScript, booting through tsx's tsImport. */
function tsWorker(url: string, workerData: unknown): Worker {
  const cjs = createRequire(import.meta.url).resolve('tsx/esm/api');
  const api = pathToFileURL(cjs.replace(/index\.cjs$/, 'index.mjs')).href;
  const boot = `import(${JSON.stringify(api)}).then((m) => m.tsImport(${JSON.stringify(url)}, ${JSON.stringify(url)}))`;
  return new Worker(boot, { eval: true, workerData });
}

/** Deterministic pseudo-random sizes and bytes shared by test and worker code (as source). */
const PRNG = `
function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
}
function fill(buf, seed) { const r = prng(seed); for (let i = 0; i < buf.length; i++) buf[i] = r() & 255; }
`;
const { prng, fill } = new Function(`${PRNG}; return { prng, fill };`)() as {
  prng: (seed: number) => () => number;
  fill: (buf: Uint8Array, seed: number) => void;
};

function sizes(n: number, max: number, seed: number): number[] {
  const r = prng(seed);
  return Array.from({ length: n }, (_, i) => (i % 7 === 0 ? 0 : r() % (max + 1)));
}

describe('SPSC channel', () => {
  it('rejects capacities that are not powers of two', () => {
    expect(() => createChannelBuffer(1000)).toThrow(/power of two/);
  });

  it('streams random-size messages (0 B .. 5x the ring) with their tags and contexts in order within one thread', async () => {
    const cap = 256;
    const buf = createChannelBuffer(cap);
    const tx = new Channel(buf);
    const rx = new Channel(buf);
    const lens = sizes(300, 5 * cap, 7);
    const sender = (async () => {
      for (let i = 0; i < lens.length; i++) {
        const d = new Uint8Array(lens[i]);
        fill(d, i + 1);
        await tx.send(i, d, i * 7919);
      }
    })();
    const into = new Uint8Array(5 * cap);
    for (let i = 0; i < lens.length; i++) {
      const st = await rx.recv(into);
      expect(st).toEqual({ tag: i, ctx: i * 7919, bytes: lens[i] });
      const want = new Uint8Array(lens[i]);
      fill(want, i + 1);
      expect(Buffer.compare(into.subarray(0, lens[i]), want)).toBe(0);
    }
    await sender;
  });

  it('moves random-size messages between the main thread and a worker, both directions', async () => {
    const cap = 4096;
    const n = 400;
    const max = 4 * cap;
    const seed = 99;
    const toWorker = createChannelBuffer(cap);
    const fromWorker = createChannelBuffer(cap);
    const url = module(
      'echo.mjs',
      `import { workerData, parentPort } from 'node:worker_threads';
       import { Channel } from ${JSON.stringify(channelUrl)};
       const rx = new Channel(workerData.toWorker), tx = new Channel(workerData.fromWorker);
       const into = new Uint8Array(workerData.max);
       const keepAlive = setInterval(() => {}, 1 << 30);
       for (let i = 0; i < workerData.n; i++) {
         const st = await rx.recv(into);
         // echo back, reversed tag order encoding: tag + 1000
         await tx.send(st.tag + 1000, into.subarray(0, st.bytes));
       }
       clearInterval(keepAlive);
       parentPort.postMessage('ok');`,
    );
    const w = tsWorker(url, { toWorker, fromWorker, n, max });
    const done = new Promise((res, rej) => {
      w.once('message', res);
      w.once('error', rej);
    });
    const tx = new Channel(toWorker);
    const rx = new Channel(fromWorker);
    const lens = sizes(n, max, seed);
    const sender = (async () => {
      for (let i = 0; i < n; i++) {
        const d = new Uint8Array(lens[i]);
        fill(d, seed + i);
        await tx.send(i, d);
      }
    })();
    const into = new Uint8Array(max);
    for (let i = 0; i < n; i++) {
      const st = await rx.recv(into);
      expect(st.tag).toBe(i + 1000);
      expect(st.bytes).toBe(lens[i]);
      const want = new Uint8Array(lens[i]);
      fill(want, seed + i);
      expect(Buffer.compare(into.subarray(0, st.bytes), want)).toBe(0);
    }
    await sender;
    expect(await done).toBe('ok');
    await w.terminate();
  });

  it('fails a message longer than the receive buffer and stays usable', async () => {
    const buf = createChannelBuffer(64);
    const tx = new Channel(buf);
    const rx = new Channel(buf);
    const s = tx.send(1, new Uint8Array(200));
    await expect(rx.recv(new Uint8Array(100))).rejects.toThrow(/exceeds the receive buffer/);
    await s;
    const s2 = tx.send(2, Uint8Array.of(5, 6));
    const into = new Uint8Array(4);
    expect(await rx.recv(into)).toEqual({ tag: 2, ctx: 0, bytes: 2 });
    await s2;
  });

  it('poisoning wakes and fails a waiting peer with the failed rank', async () => {
    const a = createChannelBuffer(64);
    const b = createChannelBuffer(64);
    const pending = new Channel(a).recv(new Uint8Array(8)); // nothing will ever arrive
    const blocked = new Channel(b).send(0, new Uint8Array(1000)); // larger than the ring, no reader
    setTimeout(() => {
      new Channel(a).poison(3);
      new Channel(b).poison(3);
    }, 10);
    const e = await pending.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(3);
    await expect(blocked).rejects.toThrow(/rank 3 failed/);
  });
});

describe('runThreads', () => {
  it('runs a ring exchange and returns results in rank order', async () => {
    const url = module(
      'ring.mjs',
      `export default async function (comm, args) {
         const next = (comm.rank + 1) % comm.size, prev = (comm.rank + comm.size - 1) % comm.size;
         const out = new Uint8Array(args.len).fill(comm.rank + 1);
         const into = new Uint8Array(args.len);
         const [, st] = await comm.waitAll([comm.isend(next, 5, out), comm.irecv(prev, 5, into)]);
         return { rank: comm.rank, from: st.source, tag: st.tag, bytes: st.bytes, ok: into.every((b) => b === prev + 1) };
       }`,
    );
    const res = await runThreads<{ rank: number; from: number; ok: boolean; bytes: number }>(4, url, { len: 100_000 }, { channelBytes: 4096 });
    expect(res.map((r) => r.rank)).toEqual([0, 1, 2, 3]);
    for (const r of res) {
      expect(r.ok).toBe(true);
      expect(r.bytes).toBe(100_000);
      expect(r.from).toBe((r.rank + 3) % 4);
    }
  });

  it('all-to-all of random sizes with tag matching, unexpected messages, ANY_SOURCE/ANY_TAG, self-sends', async () => {
    const url = module(
      'alltoall.mjs',
      `${PRNG}
       export default async function (comm, args) {
         const { p, rounds, max } = args, me = comm.rank;
         const len = (s, d, k) => prng(1 + s * 7919 + d * 104729 + k * 13)() % (max + 1);
         const sends = [];
         // every rank sends 'rounds' messages to every rank (itself included), tags k; sends in tag order
         for (let k = 0; k < rounds; k++) for (let d = 0; d < p; d++) {
           const b = new Uint8Array(len(me, d, k)); fill(b, 1000 * me + 10 * d + k); sends.push(comm.isend(d, k, b));
         }
         let errors = 0;
         const check = (into, s, k, st) => {
           const want = new Uint8Array(len(s, me, k)); fill(want, 1000 * s + 10 * me + k);
           if (st.bytes !== want.length || st.source !== s || st.tag !== k) { errors++; return; }
           for (let i = 0; i < want.length; i++) if (into[i] !== want[i]) { errors++; return; }
         };
         // receive in reverse tag order from each specific source (forces unexpected queueing)
         const recvs = [];
         for (let s = 0; s < p; s++) for (let k = rounds - 1; k >= 1; k--) {
           const into = new Uint8Array(max);
           recvs.push(comm.irecv(s, k, into).then((st) => check(into, s, k, st)));
         }
         await comm.waitAll(recvs);
         // tag 0 with wildcards: one per source, any order
         const seen = new Set();
         for (let i = 0; i < p; i++) {
           const into = new Uint8Array(max);
           const st = await comm.recv(-1, -1, into);
           seen.add(st.source); check(into, st.source, 0, st);
         }
         await comm.waitAll(sends);
         return { errors, sources: seen.size };
       }`,
    );
    const p = 5;
    const res = await runThreads<{ errors: number; sources: number }>(p, url, { p, rounds: 4, max: 20_000 }, { channelBytes: 2048 });
    expect(res).toEqual(Array.from({ length: p }, () => ({ errors: 0, sources: p })));
  });

  it('preserves order for many messages with one tag between one pair (non-overtaking)', async () => {
    const url = module(
      'order.mjs',
      `export default async function (comm, args) {
         if (comm.rank === 0) {
           const ops = [];
           for (let i = 0; i < args.n; i++) { const b = new Uint8Array(2 + (i % 300)); b[0] = i & 255; b[b.length - 1] = i % 251; ops.push(comm.isend(1, 9, b)); }
           await comm.waitAll(ops); return 0;
         }
         let bad = 0; const into = new Uint8Array(400);
         for (let i = 0; i < args.n; i++) { const st = await comm.recv(0, 9, into); if (st.bytes !== 2 + (i % 300) || into[0] !== (i & 255) || into[st.bytes - 1] !== i % 251) bad++; }
         return bad;
       }`,
    );
    expect(await runThreads(2, url, { n: 5000 }, { channelBytes: 1024 })).toEqual([0, 0]);
  });

  it('never loses a wake-up when ranks sleep at once (spin budget 0): ping-pong and a ring of mixed sizes', async () => {
    const url = module(
      'sleepy.mjs',
      `export default async function (comm, args) {
         const p = comm.size, me = comm.rank, next = (me + 1) % p, prev = (me + p - 1) % p;
         const size = (i) => (i * 2654435761 >>> 0) % args.max;
         let bad = 0;
         const into = new Uint8Array(args.max);
         for (let i = 0; i < args.n; i++) {
           const len = size(i), out = new Uint8Array(len).fill((i + me) & 255);
           if (me === 0) { await comm.send(next, i & 3, out); const st = await comm.recv(prev, i & 3, into); if (st.bytes !== len || (len && into[len - 1] !== ((i + prev) & 255))) bad++; }
           else { const st = await comm.recv(prev, i & 3, into); if (st.bytes !== len || (len && into[len - 1] !== ((i + prev) & 255))) bad++; await comm.send(next, i & 3, out); }
         }
         return bad;
       }`,
    );
    expect(await runThreads(2, url, { n: 1500, max: 3000 }, { channelBytes: 1024, spinLoads: 0 })).toEqual([0, 0]);
    expect(await runThreads(3, url, { n: 500, max: 3000 }, { channelBytes: 1024, spinLoads: 0 })).toEqual([0, 0, 0]);
    await expect(runThreads(2, url, {}, { spinLoads: -1 })).rejects.toThrow(/spinLoads/);
  }, 30_000);

  it('irecv returns before the progress loop spins: exchanges that post the receive first never wait for it (no sleeping at all)', async () => {
    // Both ranks post the receive, then send. Were the loop to spin inside irecv, neither send
    // would ever start with an unbounded spin budget.
    const url = module(
      'exchange.mjs',
      `export default async function (comm, args) {
         const peer = 1 - comm.rank, into = new Uint8Array(16), out = new Uint8Array(16);
         let bad = 0;
         for (let i = 0; i < args.n; i++) {
           out.fill((i + comm.rank) & 255);
           const r = comm.irecv(peer, 1, into);
           await comm.send(peer, 1, out);
           const st = await r;
           if (st.bytes !== 16 || into[15] !== ((i + peer) & 255)) bad++;
         }
         return bad;
       }`,
    );
    expect(await runThreads(2, url, { n: 300 }, { spinLoads: Infinity })).toEqual([0, 0]);
  }, 30_000);

  it('a rank that throws fails the other ranks fast and runThreads rejects naming it', async () => {
    const url = module(
      'throws.mjs',
      `export default async function (comm) {
         if (comm.rank === 2) { await new Promise((r) => setTimeout(r, 20)); throw new Error('boom'); }
         // every other rank waits on a receive that rank 2 would never satisfy
         await comm.recv(-1, 0, new Uint8Array(4));
       }`,
    );
    const t0 = Date.now();
    const e = await runThreads(4, url, null, { failureGraceMs: 10_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(2);
    expect((e as CommunicationError).message).toMatch(/rank 2 failed: boom/);
    expect(Date.now() - t0).toBeLessThan(8000); // the others failed fast, not after the grace period
  });

  it('a rank whose worker exits poisons the run', async () => {
    const url = module(
      'exits.mjs',
      `export default async function (comm) {
         if (comm.rank === 1) process.exit(3);
         await comm.recv(1, 0, new Uint8Array(4));
       }`,
    );
    const e = await runThreads(3, url, null, { failureGraceMs: 10_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(1);
    expect((e as CommunicationError).message).toMatch(/rank 1 failed/);
  });

  it('a truncated receive is an error of that rank', async () => {
    const url = module(
      'trunc.mjs',
      `export default async function (comm) {
         if (comm.rank === 0) await comm.send(1, 0, new Uint8Array(10));
         else await comm.recv(0, 0, new Uint8Array(4));
       }`,
    );
    await expect(runThreads(2, url)).rejects.toThrow(/rank 1 failed: .*exceeds the receive buffer/);
  });

  it('delivers sends the program did not await, and rejects bad ranks and tags', async () => {
    const url = module(
      'unawaited.mjs',
      `export default async function (comm) {
         const errs = [];
         for (const f of [() => comm.isend(comm.size, 0, new Uint8Array(1)), () => comm.irecv(-2, 0, new Uint8Array(1)), () => comm.isend(0, -1, new Uint8Array(1))]) {
           await f().then(() => errs.push('resolved'), (e) => errs.push(e.code));
         }
         if (comm.rank === 0) { void comm.isend(1, 3, new Uint8Array(50_000).fill(7)); return errs; }
         const into = new Uint8Array(50_000);
         await new Promise((r) => setTimeout(r, 50));
         const st = await comm.recv(0, 3, into);
         return [...errs, st.bytes, into.every((b) => b === 7)];
       }`,
    );
    const res = await runThreads(2, url, null, { channelBytes: 1024 });
    expect(res).toEqual([
      ['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT'],
      ['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 50_000, true],
    ]);
  });

  it('loads a TypeScript rank program', async () => {
    const url = module(
      'prog.ts',
      `import type { Communicator } from ${JSON.stringify(new URL('../src/comm/communicator.ts', import.meta.url).href)};
       export default async function (comm: Communicator, args: { x: number }): Promise<number> {
         return comm.rank * args.x + comm.size;
       }`,
    );
    expect(await runThreads(3, url, { x: 10 })).toEqual([3, 13, 23]);
  });
});
