/**
 * Vectored buffers (comm/segments.ts) on the threads transport: a send from segments is one
 * message written back to back into the ring, a receive into segments fills them in order. The
 * endpoints run in one thread over one shared layout (as in threads-endpoint.test.ts), so tiny
 * rings (long messages pipelined in 16 KiB pieces across segment boundaries), every arrival
 * path (already in the ring, posted before, unexpected, adopted mid-arrival), misaligned and
 * zero-length segments are exercised quickly; one runThreads case covers real workers and
 * sub-communicators.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ANY_SOURCE, type Communicator, type Status } from '../src/comm/communicator.js';
import { createWorldCommunicator } from '../src/comm/group.js';
import { splitIntercomm } from '../src/comm/intercomm.js';
import { toPromise } from '../src/comm/request.js';
import type { MessageBuffer } from '../src/comm/segments.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { PIECE_BYTES } from '../src/transports/threads/channel.js';
import { ThreadsEndpoint } from '../src/transports/threads/endpoint.js';
import { threadsWorld } from './helpers/threads-world.js';
import { runThreads } from '../src/transports/threads/run.js';
import { rejection } from './helpers/errors.js';

const world = (p: number, ring: number): ThreadsEndpoint[] => threadsWorld(p, ring).eps;

/** Deterministic bytes of message `k`. */
function payload(len: number, k: number): Uint8Array {
  const b = new Uint8Array(len);
  let x = (k * 2654435761 + 1) >>> 0;
  for (let i = 0; i < len; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

const GUARD = 0xee;

/**
 * A buffer of `lens.length` segments (or one contiguous view when `lens` is null and `total`
 * given) laid out in one guarded array: each segment starts at a misalignment from `offs` and
 * is followed by 3 guard bytes.
 */
interface Layout {
  readonly buf: MessageBuffer;
  readonly segments: readonly Uint8Array[];
  readonly whole: Uint8Array;
  /** For each byte of `whole`: the index of the byte in the buffer, or -1 for a guard. */
  readonly at: Int32Array;
}

function makeBuffer(lens: readonly number[], offs: readonly number[], vectored: boolean): Layout {
  let size = 0;
  for (let i = 0; i < lens.length; i++) size += (offs[i % offs.length] & 7) + lens[i] + 3;
  const whole = new Uint8Array(size).fill(GUARD);
  const at = new Int32Array(size).fill(-1);
  const segments: Uint8Array[] = [];
  let pos = 0;
  let idx = 0;
  for (let i = 0; i < lens.length; i++) {
    pos += offs[i % offs.length] & 7;
    segments.push(whole.subarray(pos, pos + lens[i]));
    for (let j = 0; j < lens[i]; j++) at[pos + j] = idx++;
    pos += lens[i] + 3;
  }
  if (!vectored) {
    // One contiguous view of the total length at the first misalignment.
    const total = lens.reduce((a, b) => a + b, 0);
    const off = offs[0] & 7;
    const w = new Uint8Array(off + total + 3).fill(GUARD);
    const a = new Int32Array(w.length).fill(-1);
    for (let j = 0; j < total; j++) a[off + j] = j;
    return { buf: w.subarray(off, off + total), segments: [w.subarray(off, off + total)], whole: w, at: a };
  }
  return { buf: segments, segments, whole, at };
}

function fillFrom(l: Layout, data: Uint8Array): void {
  for (let i = 0; i < l.whole.length; i++) if (l.at[i] >= 0) l.whole[i] = data[l.at[i]];
}

/** Problems of a receive buffer that got `data`: a wrong byte, or a byte written outside the message. */
function check(l: Layout, data: Uint8Array): string | null {
  for (let i = 0; i < l.whole.length; i++) {
    const k = l.at[i];
    if (k >= 0 && k < data.length) {
      if (l.whole[i] !== data[k]) return `byte ${k}: ${l.whole[i]} instead of ${data[k]}`;
    } else if (l.whole[i] !== GUARD) return `wrote at ${i} (buffer byte ${k}) outside the message of ${data.length}`;
  }
  return null;
}

/** Splits `total` bytes into segments at the given cut fractions (zero-length segments when cuts repeat). */
function split(total: number, cuts: readonly number[]): number[] {
  const points = cuts.map((c) => Math.floor(c * total)).sort((a, b) => a - b);
  const lens: number[] = [];
  let prev = 0;
  for (const p of [...points, total]) {
    lens.push(p - prev);
    prev = p;
  }
  return lens;
}

type Path = 'in-ring' | 'posted' | 'unexpected' | 'adopted';

/**
 * Sends message k from rank 0 to rank 1 on tag 5 with the given send / receive layouts,
 * reaching the receive by `path`; returns the status.
 */
async function transfer(eps: ThreadsEndpoint[], path: Path, send: Layout, recv: Layout, source: number): Promise<Status> {
  const [a, b] = eps;
  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 2));
  if (path === 'posted') {
    const r = b.irecv(0, source, 5, recv.buf);
    const s = a.isend(0, 1, 5, send.buf);
    const [st] = await Promise.all([toPromise(r), toPromise(s)]);
    return st;
  }
  if (path === 'in-ring') {
    const s = toPromise(a.isend(0, 1, 5, send.buf));
    const st = await b.irecv(0, source, 5, recv.buf);
    await s;
    return st;
  }
  // A receive for tag 6 is posted first, so the tag-5 message is unexpected when it arrives:
  // complete (short message, then settled) or still arriving (longer than the ring).
  const first = b.irecv(0, 0, 6, new Uint8Array(1));
  const s = toPromise(a.isend(0, 1, 5, send.buf));
  if (path === 'unexpected') await s;
  await settle();
  const r = b.irecv(0, source, 5, recv.buf);
  await toPromise(a.isend(0, 1, 6, Uint8Array.of(9)));
  await first;
  const st = await r;
  await s;
  return st;
}

describe('vectored buffers on the threads endpoint', () => {
  it('contiguous and vectored in all four combinations, every arrival path, zero-length and misaligned segments, messages longer than the ring (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          ring: fc.constantFrom(64, 1024, 65536),
          len: fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 3 * PIECE_BYTES + 100 })),
          sendVectored: fc.boolean(),
          recvVectored: fc.boolean(),
          sendCuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
          recvCuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
          sendOffs: fc.array(fc.nat(7), { minLength: 1, maxLength: 7 }),
          recvOffs: fc.array(fc.nat(7), { minLength: 1, maxLength: 7 }),
          spare: fc.integer({ min: 0, max: 9 }),
          path: fc.constantFrom<Path>('in-ring', 'posted', 'unexpected', 'adopted'),
          anySource: fc.boolean(),
          k: fc.nat(1000),
        }),
        async (c) => {
          // 'unexpected' needs the whole message in the ring; 'adopted' needs it longer than the ring.
          const path: Path = c.path === 'unexpected' && c.len + 32 > c.ring ? 'adopted' : c.path === 'adopted' && c.len <= c.ring ? 'unexpected' : c.path;
          const data = payload(c.len, c.k);
          const send = makeBuffer(split(c.len, c.sendCuts), c.sendOffs, c.sendVectored);
          fillFrom(send, data);
          const cap = c.len + c.spare;
          const recv = makeBuffer(split(cap, c.recvCuts), c.recvOffs, c.recvVectored);
          const eps = world(2, c.ring);
          const st = await transfer(eps, path, send, recv, c.anySource ? ANY_SOURCE : 0);
          expect(st).toEqual({ source: 0, tag: 5, bytes: c.len });
          expect(check(recv, data)).toBeNull();
          // The sender's buffer is untouched.
          expect(check(send, data)).toBeNull();
          await eps[0].drain();
        },
      ),
      { numRuns: 150, seed: 11 },
    );
  }, 60_000);

  it('a long message crosses segment boundaries inside 16 KiB pieces on a small ring, both ways', async () => {
    const len = 5 * PIECE_BYTES + 777;
    const data = payload(len, 3);
    // Segment boundaries just before, at and after piece boundaries, and empty segments between.
    const lens = [PIECE_BYTES - 1, 0, 2, 0, PIECE_BYTES, 5, 2 * PIECE_BYTES - 6, 0, len - (4 * PIECE_BYTES)];
    const send = makeBuffer(lens, [1, 0, 3, 5, 7], true);
    fillFrom(send, data);
    const recv = makeBuffer([...lens].reverse(), [6, 2, 0, 4], true);
    const eps = world(2, 4096);
    expect(await transfer(eps, 'posted', send, recv, 0)).toEqual({ source: 0, tag: 5, bytes: len });
    expect(check(recv, data)).toBeNull();
    const back = makeBuffer([len], [3], false);
    const r = eps[0].irecv(0, 1, 8, back.buf);
    await Promise.all([toPromise(eps[1].isend(0, 0, 8, recv.buf)), toPromise(r)]);
    expect(check(back, data)).toBeNull();
  });

  it('a message longer than the segments’ total is a truncation error; the channel stays usable', async () => {
    for (const ring of [64, 65536]) {
      const eps = world(2, ring);
      const data = payload(300, 1);
      const small = makeBuffer([100, 0, 199], [1, 2], true);
      const s = toPromise(eps[0].isend(0, 1, 5, [data.subarray(0, 150), data.subarray(150)]));
      const e = await rejection(eps[1].irecv(0, 0, 5, small.buf));
      expect(e).toBeInstanceOf(CommunicationError);
      expect((e as Error).message).toMatch(/300 bytes .* exceeds the receive buffer of 299 bytes/);
      await s;
      // Nothing was written, and the next message arrives intact.
      expect(check(small, new Uint8Array(0))).toBeNull();
      const ok = makeBuffer([100, 0, 200], [3], true);
      await Promise.all([toPromise(eps[0].isend(0, 1, 5, data)), toPromise(eps[1].irecv(0, 0, 5, ok.buf))]);
      expect(check(ok, data)).toBeNull();
    }
  });

  it('self-sends, ANY_SOURCE from several senders, and an all-empty segment list', async () => {
    const eps = world(3, 256);
    const data = payload(40, 7);
    const self = makeBuffer([7, 0, 33], [5], true);
    const r = eps[2].irecv(0, 2, 1, self.buf);
    await eps[2].isend(0, 2, 1, [data.subarray(0, 20), data.subarray(20)]);
    expect(await r).toEqual({ source: 2, tag: 1, bytes: 40 });
    expect(check(self, data)).toBeNull();
    // ANY_SOURCE: one message from each of ranks 0 and 1, each into segments.
    const into = [makeBuffer([10, 30], [1], true), makeBuffer([25, 0, 15], [2], true)];
    const got = [eps[2].irecv(0, ANY_SOURCE, 2, into[0].buf), eps[2].irecv(0, ANY_SOURCE, 2, into[1].buf)];
    const msgs = [payload(40, 100), payload(40, 101)];
    await Promise.all([toPromise(eps[0].isend(0, 2, 2, [msgs[0]])), toPromise(eps[1].isend(0, 2, 2, [msgs[1].subarray(0, 1), msgs[1].subarray(1)]))]);
    const sts = await Promise.all(got.map((g) => toPromise(g)));
    expect(sts.map((s) => s.source).sort()).toEqual([0, 1]);
    sts.forEach((st, i) => expect(check(into[i], msgs[st.source])).toBeNull());
    // Zero bytes in zero segments.
    const empty = eps[1].irecv(0, 0, 3, []);
    await eps[0].isend(0, 1, 3, [new Uint8Array(0), new Uint8Array(0)]);
    expect(await empty).toEqual({ source: 0, tag: 3, bytes: 0 });
  });

  it('rejects buffers that are not MessageBuffers with an InvalidArgumentError naming the field and the rank', async () => {
    const eps = world(2, 256);
    const comm = createWorldCommunicator(eps[1], { endpointChecks: true });
    const bad: unknown[] = [[new Uint8Array(1), 'x'], new Uint16Array(2), null, [[1, 2]]];
    for (const b of bad) {
      // a Uint16Array is bytes to a communicator (converted), not to the endpoint
      const viaComm = !(b instanceof Uint16Array);
      for (const [field, f] of [
        ['data', () => eps[1].isend(0, 0, 0, b as MessageBuffer)],
        ['into', () => eps[1].irecv(0, 0, 0, b as MessageBuffer)],
        ...(viaComm
          ? ([
              ['data', () => comm.isend(0, 0, b as MessageBuffer)],
              ['into', () => comm.irecv(0, 0, b as MessageBuffer)],
            ] as const)
          : []),
      ] as const) {
        const e = await rejection(f());
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as InvalidArgumentError).field).toBe(field);
        expect((e as InvalidArgumentError).rank).toBe(1);
      }
    }
  });

  it('through split sub-communicators and an intercommunicator (ranks translated, segments kept)', async () => {
    const p = 5;
    const eps = world(p, 128);
    const len = 700;
    const results = await Promise.all(
      eps.map(async (ep) => {
        const w = createWorldCommunicator(ep, { endpointChecks: true });
        // Reversed order: sub rank 0 is the highest world rank of the color.
        const sub = (await w.split(w.rank % 2, -w.rank)) as Communicator;
        const next = (sub.rank + 1) % sub.size;
        const prev = (sub.rank - 1 + sub.size) % sub.size;
        const data = payload(len, w.rank);
        const into = makeBuffer([3, 0, 400, len - 403], [w.rank], true);
        const r = sub.irecv(ANY_SOURCE, 4, into.buf);
        await sub.send(next, 4, [data.subarray(0, 333), new Uint8Array(0), data.subarray(333)]);
        const st = await r;
        // Local rank i of each group exchanges with remote rank i, where both exist.
        const ic = await splitIntercomm(w, (w.rank % 2) as 0 | 1);
        const back = makeBuffer([1, len - 1], [w.rank + 3], true);
        let ist: Status | null = null;
        if (ic.rank < ic.remoteSize) {
          const ir = ic.irecv(ANY_SOURCE, 9, back.buf);
          await ic.send(ic.rank, 9, [data.subarray(0, 10), data.subarray(10)]);
          ist = await ir;
        }
        return { world: w.rank, st, into, prev, ist, back, icRank: ic.rank };
      }),
    );
    // The sub-communicator of color c holds the world ranks of that parity in decreasing order.
    for (const r of results) {
      const members = Array.from({ length: p }, (_, i) => i)
        .filter((i) => i % 2 === r.world % 2)
        .sort((a, b) => b - a);
      const prevWorld = members[r.prev];
      expect(r.st).toEqual({ source: r.prev, tag: 4, bytes: len });
      expect(check(r.into, payload(len, prevWorld))).toBeNull();
      if (r.ist !== null) {
        // Remote rank icRank of the other parity, in increasing world order.
        const remote = Array.from({ length: p }, (_, i) => i).filter((i) => i % 2 !== r.world % 2);
        expect(r.ist).toEqual({ source: r.icRank, tag: 9, bytes: len });
        expect(check(r.back, payload(len, remote[r.icRank]))).toBeNull();
      }
    }
  });
});

const dir = mkdtempSync(join(tmpdir(), 'vcoll-vectored-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('vectored buffers between worker threads', () => {
  it('a ring of vectored messages longer than the channel on the world and on a split communicator', async () => {
    const file = join(dir, 'ring.mjs');
    writeFileSync(
      file,
      `export default async function (comm, { len }) {
         const pay = (k) => { const b = new Uint8Array(len); for (let i = 0; i < len; i++) b[i] = (i * 31 + k * 7) & 255; return b; };
         const check = (segs, k) => { const want = pay(k); let i = 0; for (const s of segs) for (const x of s) { if (i < len && x !== want[i]) return false; i++; } return true; };
         const cut = (b, at) => { const out = []; let prev = 0; for (const a of [...at, b.length]) { out.push(b.subarray(prev, a)); prev = a; } return out; };
         const out = [];
         for (const c of [comm, await comm.split(0, -comm.rank)]) {
           const next = (c.rank + 1) % c.size, prev = (c.rank - 1 + c.size) % c.size;
           const into = cut(new Uint8Array(len + 5).subarray(1), [0, 7, 16384, 16384, 40000]);
           const data = pay(c.rank);
           const [, st] = await c.waitAll([c.isend(next, 2, cut(data, [1, 5000, 5000, 30001])), c.irecv(-1, 2, into)]);
           out.push({ source: st.source, bytes: st.bytes, ok: check(into, st.source), prev });
         }
         return out;
       }`,
    );
    const p = 3;
    const len = 70_001;
    const res = await runThreads<{ source: number; bytes: number; ok: boolean; prev: number }[]>(p, pathToFileURL(file), { len }, { channelBytes: 4096 });
    for (const perRank of res) {
      for (const o of perRank) expect(o).toEqual({ source: o.prev, bytes: len, ok: true, prev: o.prev });
    }
  });
});
