/**
 * The threads transport's channel and endpoint driven in one thread (many endpoints over one
 * shared layout, as the workers would have them), so that random traffic, more than 32 ranks
 * (doorbell bits shared by several peers), tiny rings (streaming, unexpected messages adopted
 * mid-arrival), misaligned buffers (the channel's aligned copies and bounce path) and failures
 * are all exercised quickly and reproducibly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ANY_SOURCE, ANY_TAG, type Status } from '../src/comm/communicator.js';
import { CommunicationError, TruncationError } from '../src/errors.js';
import { Channel, createChannelBuffer } from '../src/transports/threads/channel.js';
import { threadsWorld as world } from './helpers/threads-world.js';
import { int, rng } from './helpers/random.js';

/** Deterministic content of message `k` from `s` to `d`. */
function payload(len: number, s: number, d: number, k: number): Uint8Array {
  const b = new Uint8Array(len);
  let x = (s * 7919 + d * 104729 + k * 131 + 1) >>> 0;
  for (let i = 0; i < len; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/** A view of `len` bytes at byte offset `off` of a larger buffer whose other bytes are 0xee guards. */
function view(len: number, off: number): { view: Uint8Array; whole: Uint8Array } {
  const whole = new Uint8Array(off + len + 8).fill(0xee);
  return { view: whole.subarray(off, off + len), whole };
}

function guardsIntact(whole: Uint8Array, off: number, written: number): boolean {
  for (let i = 0; i < whole.length; i++) if ((i < off || i >= off + written) && whole[i] !== 0xee) return false;
  return true;
}

interface Msg {
  readonly s: number;
  readonly d: number;
  readonly k: number;
  readonly tag: number;
  readonly len: number;
}

/**
 * Every rank sends `perPair` messages (random tags 0..2, sizes 0..maxLen, misaligned sources) to
 * every rank including itself in context 0, and one message in context 1 to every rank. Context
 * 0 is received per (source, tag) in order, the (source, tag) streams interleaved at random;
 * context 1 with ANY_SOURCE / ANY_TAG. Returns a list of problems (empty when all is well).
 */
async function traffic(p: number, ring: number, perPair: number, maxLen: number, seed: number): Promise<string[]> {
  const { eps } = world(p, ring);
  const r = rng(seed);
  const msgs: Msg[][][] = Array.from({ length: p }, (_, s) =>
    Array.from({ length: p }, (_, d) =>
      Array.from({ length: perPair }, (_, k) => ({ s, d, k, tag: int(r, 0, 2), len: int(r, 0, 5) === 0 ? 0 : int(r, 0, maxLen) })),
    ),
  );
  const problems: string[] = [];
  const rank = async (me: number): Promise<void> => {
    const ep = eps[me];
    const rr = rng(seed * 31 + me);
    const sends: PromiseLike<void>[] = [];
    for (let d = 0; d < p; d++) {
      for (const m of msgs[me][d]) {
        const v = view(m.len, int(rr, 0, 15)).view;
        v.set(payload(m.len, me, d, m.k));
        sends.push(ep.isend(0, d, m.tag, v));
      }
      const w = view(3 + d, int(rr, 0, 7)).view;
      w.set(payload(3 + d, me, d, 999));
      sends.push(ep.isend(1, d, 100 + me, w));
    }
    // Context 0: one stream per (source, tag), each in order; the streams interleaved at random.
    const streams: Msg[][] = [];
    for (let s = 0; s < p; s++) for (let t = 0; t <= 2; t++) streams.push(msgs[s][me].filter((m) => m.tag === t));
    const recvs: PromiseLike<void>[] = [];
    for (;;) {
      const open = streams.filter((q) => q.length > 0);
      if (open.length === 0) break;
      const m = open[int(rr, 0, open.length - 1)].shift() as Msg;
      const off = int(rr, 0, 15);
      const { view: into, whole } = view(m.len + int(rr, 0, 3), off);
      recvs.push(
        ep.irecv(0, m.s, m.tag, into).then((st: Status) => {
          const want = payload(m.len, m.s, me, m.k);
          if (st.source !== m.s || st.tag !== m.tag || st.bytes !== m.len) {
            problems.push(`rank ${me}: status ${JSON.stringify(st)} for ${JSON.stringify(m)}`);
          } else if (Buffer.compare(into.subarray(0, m.len), want) !== 0) problems.push(`rank ${me}: bytes of ${JSON.stringify(m)}`);
          else if (!guardsIntact(whole, off, m.len)) problems.push(`rank ${me}: wrote outside the block of ${JSON.stringify(m)}`);
        }),
      );
    }
    // Context 1: wildcards; every source exactly once, content matching the status.
    const seen = new Set<number>();
    for (let i = 0; i < p; i++) {
      const into = new Uint8Array(3 + me + 4);
      recvs.push(
        ep.irecv(1, ANY_SOURCE, ANY_TAG, into).then((st) => {
          const ok = st.tag === 100 + st.source && st.bytes === 3 + me && !seen.has(st.source);
          seen.add(st.source);
          if (!ok || Buffer.compare(into.subarray(0, st.bytes), payload(3 + me, st.source, me, 999)) !== 0) {
            problems.push(`rank ${me}: wildcard status ${JSON.stringify(st)}`);
          }
        }),
      );
    }
    await Promise.all([...sends, ...recvs]);
    await ep.drain();
  };
  await Promise.all(eps.map((_, me) => rank(me)));
  return problems;
}

describe('threads endpoint (in one thread)', () => {
  it('random traffic: p in 1..6, 33 and 40, tiny rings, misaligned buffers, wildcards, contexts, self-sends', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(1, 2, 3, 4, 6, 33, 40),
        fc.constantFrom(16, 64, 256, 4096),
        fc.integer({ min: 1, max: 1_000_000 }),
        async (p, ring, seed) => {
          const big = p > 6;
          const problems = await traffic(p, ring, big ? 1 : 3, big ? 300 : 3000, seed);
          expect(problems).toEqual([]);
        },
      ),
      { numRuns: 14, seed: 7 },
    );
  }, 60_000);

  it('a large message received after it started arriving (adopted mid-stream), and one that does not fit', async () => {
    const { eps } = world(2, 64);
    const len = 50_001;
    const msg = payload(len, 0, 1, 0);
    // Rank 1 waits on tag 1 first, so the tag-0 message starts arriving as unexpected.
    const first = eps[1].irecv(0, 0, 1, new Uint8Array(4));
    const sent = eps[0].isend(0, 1, 0, msg);
    await new Promise((r) => setTimeout(r, 5));
    const into = new Uint8Array(len + 5).subarray(5);
    const got = eps[1].irecv(0, 0, 0, into);
    await eps[0].isend(0, 1, 1, Uint8Array.of(1, 2, 3, 4));
    expect(await first).toEqual({ source: 0, tag: 1, bytes: 4 });
    expect(await got).toEqual({ source: 0, tag: 0, bytes: len });
    await sent;
    expect(Buffer.compare(into, msg)).toBe(0);
    // Too long for the receive buffer: an error for that receive, and the channel stays usable.
    const long = eps[0].isend(0, 1, 2, new Uint8Array(10_000));
    const tooLong = eps[1].irecv(0, 0, 2, new Uint8Array(9_999));
    await expect(tooLong).rejects.toThrow(/exceeds the receive buffer/);
    await expect(tooLong).rejects.toBeInstanceOf(TruncationError);
    await long;
    const again = new Uint8Array(3);
    await Promise.all([eps[0].isend(0, 1, 2, Uint8Array.of(7, 8, 9)), eps[1].irecv(0, 0, 2, again)]);
    expect([...again]).toEqual([7, 8, 9]);
  });

  it('a failure recorded for the run fails every pending and later operation, naming the rank', async () => {
    const { eps, fail } = world(4, 64);
    const pending = [
      eps[0].irecv(0, 3, 0, new Uint8Array(8)),
      eps[1].irecv(0, ANY_SOURCE, ANY_TAG, new Uint8Array(8)),
      eps[2].isend(0, 3, 0, new Uint8Array(10_000)), // larger than the ring, never read
    ];
    const outcomes = Promise.all(pending.map((x) => x.then(() => 'resolved', (e: unknown) => e)));
    setTimeout(() => fail(3), 10);
    for (const e of await outcomes) {
      expect(e).toBeInstanceOf(CommunicationError);
      expect((e as CommunicationError).rank).toBe(3);
    }
    await expect(eps[0].isend(0, 1, 0, new Uint8Array(1))).rejects.toThrow(/rank 3 failed/);
    await expect(eps[1].irecv(0, 0, 0, new Uint8Array(1))).rejects.toThrow(/rank 3 failed/);
    expect(eps[2].failed?.rank).toBe(3);
  });

  it('drain resolves once an unawaited send larger than the ring has been read', async () => {
    const { eps } = world(2, 128);
    void eps[0].isend(0, 1, 0, new Uint8Array(5000).fill(3));
    let drained = false;
    const d = eps[0].drain().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(drained).toBe(false);
    const into = new Uint8Array(5000);
    await eps[1].irecv(0, 0, 0, into);
    await d;
    expect(into.every((b) => b === 3)).toBe(true);
  });
});

describe('SPSC channel framing', () => {
  it('delivers random sizes between random byte offsets of source and destination (any alignment)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(16, 64, 1024, 65536),
        fc.array(fc.record({ len: fc.integer({ min: 0, max: 70_000 }), src: fc.nat(15), dst: fc.nat(15) }), { minLength: 1, maxLength: 12 }),
        async (cap, list) => {
          const buf = createChannelBuffer(cap);
          const tx = new Channel(buf);
          const rx = new Channel(buf);
          const sender = (async () => {
            for (let i = 0; i < list.length; i++) {
              const v = view(list[i].len, list[i].src).view;
              v.set(payload(list[i].len, i, 0, 0));
              await tx.send(i, v, i + 1);
            }
          })();
          for (let i = 0; i < list.length; i++) {
            const { view: into, whole } = view(list[i].len, list[i].dst);
            expect(await rx.recv(into)).toEqual({ tag: i, ctx: i + 1, bytes: list[i].len });
            expect(Buffer.compare(into, payload(list[i].len, i, 0, 0))).toBe(0);
            expect(guardsIntact(whole, list[i].dst, list[i].len)).toBe(true);
          }
          await sender;
        },
      ),
      { numRuns: 40, seed: 3 },
    );
  });
});
