/**
 * A single-producer single-consumer byte channel over a SharedArrayBuffer.
 *
 * Layout: a control block of Int32 words followed by a ring of `capacity` bytes (a power of
 * two). `head` counts bytes ever written, `tail` bytes ever consumed; both wrap at 2³² and
 * `(head - tail) | 0` is the fill level. The writer fills bytes with plain stores and then
 * publishes them with `Atomics.store(head)`; the reader consumes and releases space with
 * `Atomics.store(tail)`. `head` and `tail` live on different cache lines, and each side keeps
 * its own index locally and caches the other's, reloading it only when the ring looks full
 * (writer) or empty (reader). Every message is a 16-byte header (tag: int32, context id: int32,
 * length: uint32, skip: int32, as four ring words), `skip` < 8 bytes, the payload and padding
 * to a multiple of 8 bytes. Every message starts 8-byte aligned, and the writer picks `skip` so
 * the payload sits in the ring aligned like the sender's data modulo 8: V8 copies between shared
 * and ordinary memory word by word only if both are aligned alike (else byte by byte, ~8x
 * slower), and a reader whose buffer is aligned otherwise copies through an aligned bounce
 * buffer. Buffers may be vectored (comm/segments.ts): a vectored send writes its segments back
 * to back as one message (the payload aligned like its longest segment), a vectored receive
 * copies the message out into its segments in order; neither stages a contiguous copy.
 * A message is published in pieces of at most `PIECE_BYTES`, so the reader copies one piece out
 * while the writer copies the next in, and payloads longer than the ring stream through it. The
 * reader copies payloads straight into the caller's buffer. Short messages have one-call paths
 * (`trySend`, `readWhole`: a whole message written or read at once) and release their ring
 * space lazily (`publish`), so that the reply to a message is not delayed by that release.
 *
 * Waiting never blocks a thread: a side that cannot progress awaits `Atomics.waitAsync` on a
 * bell (see `Bell`) that its peer rings after a change. The writer always rings the reader's
 * bell after publishing; the reader rings the writer's bell after releasing space only while
 * the writer has announced (in a shared word) that it waits for space. By default both sides
 * share the channel's own counter bell; a communicator with many channels passes per-rank
 * doorbell bitmaps instead (comm/threads layout), so a rank sleeps on a single word and
 * learns which channels moved. A pending `waitAsync` does not keep a thread's event loop
 * alive: a thread that only waits on a channel must hold it open (e.g. with a timer).
 *
 * A channel can be poisoned (`poison(rank)`): both sides' bells ring and every subsequent or
 * pending operation fails with a CommunicationError naming the failed rank.
 */

import { byteLength, type MessageBuffer } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';

// Control words: the writer's line, the reader's line, then state and the own bell, each on
// its own 128-byte line so the two sides never write the same line.
const HEAD = 0;
const WRITER_WAITING = 1;
const TAIL = 32;
const STATE = 64;
const FAILED = 65;
const BELL = 96;
const CONTROL_WORDS = 128;
const CONTROL_BYTES = CONTROL_WORDS * 4;
/** Bytes of a channel's control block (its ring follows). */
export const CHANNEL_CONTROL_BYTES = CONTROL_BYTES;
const STATE_POISONED = 1;

/** Bytes of a message header in the ring (tag, context id, length, skip). */
export const HEADER_BYTES = 16;
/** Largest run of bytes copied before it is published (writer) or released (reader). */
export const PIECE_BYTES = 16 * 1024;
/**
 * Loads of the peer's index a side spends, in the middle of a message, waiting for the peer
 * to publish the next piece or release space (a few microseconds) before it returns to its
 * caller: keeps a long message's pipeline going without a trip through the event loop.
 */
const MID_MESSAGE_SPIN = 256;

/** Copies of at most this many bytes go byte by byte (no typed-array view, alignment irrelevant). */
const SHORT_COPY = 64;

/**
 * A word a side rings to wake whoever waits on it. A counter bell (`bit` absent or 0) is
 * incremented; a doorbell (`bit` ≠ 0) has that bit ORed in, so the sleeper learns which
 * channel rang (it clears the word with `Atomics.exchange` before looking at its channels).
 * With `sleepIndex`, `Atomics.notify` is called only while that word is non-zero (the
 * sleeper sets it before it waits); without it, every ring notifies.
 */
export interface Bell {
  readonly words: Int32Array;
  readonly index: number;
  readonly bit?: number;
  readonly sleepIndex?: number;
}

/** Rings a bell: increments it (counter) or sets its bit (doorbell), and notifies a sleeper. */
export function ringBell(bell: Bell): void {
  const words = bell.words;
  const index = bell.index;
  const bit = bell.bit ?? 0;
  if (bit === 0) Atomics.add(words, index, 1);
  else if ((Atomics.load(words, index) & bit) !== 0) {
    // Already rung and not yet collected: whoever set the bit notified (and the sleeper,
    // which sleeps only on an empty doorbell, collects it before it sleeps again).
    return;
  } else Atomics.or(words, index, bit);
  if (bell.sleepIndex === undefined || Atomics.load(words, bell.sleepIndex) !== 0) Atomics.notify(words, index);
}

type WaitAsync = (
  words: Int32Array,
  index: number,
  value: number,
  timeout?: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
/** `Atomics.waitAsync` (typed here: Node 20's lib typings may lack it). */
export const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/**
 * Resolves once `bell` differs from `seen` (or after `timeoutMs`); never blocks the thread,
 * so the event loop stays free.
 */
export async function waitBell(bell: Bell, seen: number, timeoutMs?: number): Promise<void> {
  const r = waitAsync(bell.words, bell.index, seen, timeoutMs);
  if (r.async) await r.value;
}

/** Allocates the shared memory of a channel whose ring holds `capacity` bytes. */
export function createChannelBuffer(capacity: number): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < 16 || capacity > 2 ** 30 || (capacity & (capacity - 1)) !== 0) {
    throw new InvalidArgumentError('capacity', `must be a power of two in [16, 2^30], got ${capacity}`);
  }
  return new SharedArrayBuffer(CONTROL_BYTES + capacity);
}

export interface ChannelOptions {
  /**
   * Where in `buffer` the channel lives (a multiple of 8; default 0): its control block, then
   * `capacity` bytes of ring (default: the rest of the buffer). Many channels can share a buffer.
   */
  readonly byteOffset?: number;
  readonly capacity?: number;
  /** Rung by the writer after publishing bytes (default: the channel's own bell). */
  readonly readerBell?: Bell;
  /** Rung by the reader after releasing space the writer waits for (default: the channel's own bell). */
  readonly writerBell?: Bell;
}

/**
 * One endpoint view of a channel. Construct one `Channel` per thread over the same buffer;
 * exactly one thread (and one `Channel` object) writes and exactly one reads.
 */
export class Channel {
  readonly capacity: number;
  readonly readerBell: Bell;
  readonly writerBell: Bell;
  // readerBell's fields (trySend rings it inline).
  private readonly rbWords: Int32Array;
  private readonly rbIndex: number;
  private readonly rbBit: number;
  private readonly rbSleep: number;
  private readonly ctl: Int32Array;
  private readonly ring: Uint8Array;
  private readonly mask: number;
  private readonly ring32: Int32Array;
  private readonly mask32: number;

  // Writer state: the message being written (sOff < 0: header not yet written; sOff counts
  // the body: skip, payload, padding), the writer's own head and its cached copy of the
  // reader's tail.
  private sTag = 0;
  private sCtx = 0;
  private sData: MessageBuffer | null = null;
  /** Payload bytes of the current message. */
  private sLen = 0;
  /** Vectored sends: the segment holding the next payload byte and its payload offset. */
  private sSeg = 0;
  private sSegStart = 0;
  private sOff = -1;
  private sSkip = 0;
  private sBody = 0;
  private sHead: number;
  private sTail: number;
  private sWaiting = false;

  // Reader state: the message being read (rLen < 0: no current message), the reader's own
  // tail (ahead of the published one by an unreleased header) and its cached head.
  private rTag = 0;
  private rCtx = 0;
  private rLen = -1;
  private rSkip = 0;
  private rBody = 0;
  private rOff = 0;
  /** Vectored receives: the buffer the cursor belongs to, its segment and that segment's offset. */
  private rSegOf: readonly Uint8Array[] | null = null;
  private rSeg = 0;
  private rSegStart = 0;
  /** Lazily allocated bounce buffer for copies out of the ring into a misaligned destination. */
  private bounce: Uint8Array | null = null;
  private rTail: number;
  private rReleased: number;
  private rHead: number;

  constructor(buffer: SharedArrayBuffer, options: ChannelOptions = {}) {
    const at = options.byteOffset ?? 0;
    this.capacity = options.capacity ?? buffer.byteLength - at - CONTROL_BYTES;
    if (this.capacity < 16 || (this.capacity & (this.capacity - 1)) !== 0 || at % 8 !== 0 || at + CONTROL_BYTES + this.capacity > buffer.byteLength) {
      throw new InvalidArgumentError('buffer', 'not a channel buffer (use createChannelBuffer)');
    }
    this.ctl = new Int32Array(buffer, at, CONTROL_WORDS);
    this.ring = new Uint8Array(buffer, at + CONTROL_BYTES, this.capacity);
    this.mask = this.capacity - 1;
    this.ring32 = new Int32Array(buffer, at + CONTROL_BYTES, this.capacity >> 2);
    this.mask32 = (this.capacity >> 2) - 1;
    const own: Bell = { words: this.ctl, index: BELL };
    this.readerBell = options.readerBell ?? own;
    this.rbWords = this.readerBell.words;
    this.rbIndex = this.readerBell.index;
    this.rbBit = this.readerBell.bit ?? 0;
    this.rbSleep = this.readerBell.sleepIndex ?? -1;
    this.writerBell = options.writerBell ?? own;
    this.sHead = this.rHead = Atomics.load(this.ctl, HEAD);
    this.sTail = this.rTail = this.rReleased = Atomics.load(this.ctl, TAIL);
  }

  /** The rank that poisoned the channel, or undefined while it is healthy. */
  get failedRank(): number | undefined {
    return Atomics.load(this.ctl, STATE) === STATE_POISONED ? Atomics.load(this.ctl, FAILED) : undefined;
  }

  /** Marks the channel failed because of `rank` and wakes both sides. */
  poison(rank: number): void {
    if (Atomics.load(this.ctl, STATE) !== STATE_POISONED) {
      Atomics.store(this.ctl, FAILED, rank);
      Atomics.store(this.ctl, STATE, STATE_POISONED);
    }
    ringBell(this.readerBell);
    if (this.writerBell !== this.readerBell) ringBell(this.writerBell);
  }

  private failure(): CommunicationError | undefined {
    const r = this.failedRank;
    return r === undefined ? undefined : new CommunicationError(`rank ${r} failed`, { rank: r });
  }

  // ---- writer side -------------------------------------------------------------------

  /** True while a message started with `beginSend` is not yet fully in the ring. */
  get sending(): boolean {
    return this.sData !== null;
  }

  /**
   * Starts a message in context `ctx`; push it with `writeSome`. The data (and, if vectored,
   * the list of segments) must not change until it completes.
   */
  beginSend(ctx: number, tag: number, data: MessageBuffer): void {
    if (this.sData !== null) throw new CommunicationError('channel: a send is already in progress');
    this.sCtx = ctx;
    this.sTag = tag;
    this.sData = data;
    this.sOff = -1;
    // Put the payload where the ring is aligned like the data (mod 8): V8 copies between
    // shared and ordinary memory word by word only when both sides are, else byte by byte.
    let skip: number;
    let n: number;
    if (data instanceof Uint8Array) {
      n = data.length;
      skip = data.byteOffset & 7;
    } else {
      // Vectored: aligned like the longest segment.
      n = 0;
      skip = 0;
      let longest = -1;
      for (let i = 0; i < data.length; i++) {
        const seg = data[i];
        if (seg.length > longest) {
          longest = seg.length;
          skip = (seg.byteOffset - n) & 7;
        }
        n += seg.length;
      }
      this.sSeg = 0;
      this.sSegStart = 0;
    }
    this.sLen = n;
    this.sSkip = skip;
    this.sBody = (skip + n + 7) & ~7;
  }

  /**
   * Writes as much of the current message as the ring has room for, publishing it piece by
   * piece (and keeps writing while the reader frees space). Returns the number of bytes moved
   * (header included); `sending` turns false once the whole message is in the ring. When the
   * ring is full it announces that it waits, so the reader rings `writerBell` on release.
   */
  writeSome(): number {
    const data = this.sData;
    if (data === null) return 0;
    const ctl = this.ctl;
    const cap = this.capacity;
    const body = this.sBody;
    const skip = this.sSkip;
    let head = this.sHead;
    let moved = 0;
    for (;;) {
      const need = this.sOff < 0 ? HEADER_BYTES : 1;
      let free = cap - ((head - this.sTail) | 0);
      if (free < need) {
        this.sTail = Atomics.load(ctl, TAIL);
        if (this.sOff >= 0 && moved > 0) {
          // Mid-message and the reader is draining: wait a moment for it.
          for (let k = 0; k < MID_MESSAGE_SPIN && cap - ((head - this.sTail) | 0) < need; k++) this.sTail = Atomics.load(ctl, TAIL);
        }
        free = cap - ((head - this.sTail) | 0);
        if (free < need) {
          if (this.sWaiting) break;
          // Announce, then look once more: a release after the announcement rings us.
          Atomics.store(ctl, WRITER_WAITING, 1);
          this.sWaiting = true;
          continue;
        }
      }
      if (this.sOff < 0) {
        // Messages start 8-byte aligned, so the header is four whole words of the ring.
        const w = (head & this.mask) >> 2;
        const m = this.mask32;
        const r32 = this.ring32;
        r32[w] = this.sTag;
        r32[(w + 1) & m] = this.sCtx;
        r32[(w + 2) & m] = this.sLen;
        r32[(w + 3) & m] = skip;
        head = (head + HEADER_BYTES) | 0;
        free -= HEADER_BYTES;
        moved += HEADER_BYTES;
        this.sOff = 0;
      }
      let n = body - this.sOff;
      if (n > free) n = free;
      if (n > PIECE_BYTES) n = PIECE_BYTES;
      if (n > 0) {
        // The payload bytes of body range [sOff, sOff + n).
        const from = Math.max(this.sOff, skip);
        const to = Math.min(this.sOff + n, skip + this.sLen);
        if (to > from) {
          if (data instanceof Uint8Array) this.copyIn(data, from - skip, (head + from - this.sOff) | 0, to - from);
          else this.copyInSegments(data, from - skip, (head + from - this.sOff) | 0, to - from);
        }
        head = (head + n) | 0;
        this.sOff += n;
        moved += n;
      }
      Atomics.store(ctl, HEAD, head);
      ringBell(this.readerBell);
      if (this.sOff === body) break;
    }
    this.sHead = head;
    if (this.sOff === body) {
      this.sData = null;
      if (this.sWaiting) {
        this.sWaiting = false;
        Atomics.store(ctl, WRITER_WAITING, 0);
      }
    }
    return moved;
  }

  /**
   * Sends a whole contiguous message at once if the ring has room for it and it is at most one
   * piece (the common case of short messages: one publication, no per-message writer state);
   * returns false, having done nothing, otherwise. Only while no send is in progress.
   */
  trySend(ctx: number, tag: number, data: Uint8Array): boolean {
    const n = data.length;
    // Short payloads are copied byte by byte: their alignment does not matter.
    const skip = n <= SHORT_COPY ? 0 : data.byteOffset & 7;
    const need = HEADER_BYTES + ((skip + n + 7) & ~7);
    if (need > PIECE_BYTES || this.sData !== null) return false;
    const head = this.sHead;
    if (this.capacity - ((head - this.sTail) | 0) < need) {
      this.sTail = Atomics.load(this.ctl, TAIL);
      if (this.capacity - ((head - this.sTail) | 0) < need) return false;
    }
    const w = (head & this.mask) >> 2;
    const m = this.mask32;
    const r32 = this.ring32;
    r32[w] = tag;
    r32[(w + 1) & m] = ctx;
    r32[(w + 2) & m] = n;
    r32[(w + 3) & m] = skip;
    if (n > 0) this.copyIn(data, 0, (head + HEADER_BYTES + skip) | 0, n);
    const next = (head + need) | 0;
    this.sHead = next;
    Atomics.store(this.ctl, HEAD, next);
    // ringBell(this.readerBell), with the bell's fields cached on the channel.
    const words = this.rbWords;
    const bit = this.rbBit;
    if (bit === 0) Atomics.add(words, this.rbIndex, 1);
    else if ((Atomics.load(words, this.rbIndex) & bit) !== 0) return true;
    else Atomics.or(words, this.rbIndex, bit);
    if (this.rbSleep < 0 || Atomics.load(words, this.rbSleep) !== 0) Atomics.notify(words, this.rbIndex);
    return true;
  }

  /**
   * While a send waits for space: whether the reader released some since `writeSome` last
   * looked (one load of the reader's index; lets a waiting writer spin without the bell).
   */
  get spaceFreed(): boolean {
    return this.sData !== null && Atomics.load(this.ctl, TAIL) !== this.sTail;
  }

  /** Copies payload bytes [off, off + n) of a vectored send to the ring at `head` (n > 0). */
  private copyInSegments(segs: readonly Uint8Array[], off: number, head: number, n: number): void {
    let i = this.sSeg;
    let start = this.sSegStart;
    while (start + segs[i].length <= off) start += segs[i++].length;
    while (n > 0) {
      const seg = segs[i];
      const o = off - start;
      const k = seg.length - o < n ? seg.length - o : n;
      this.copyIn(seg, o, head, k);
      head = (head + k) | 0;
      off += k;
      n -= k;
      if (o + k === seg.length) {
        start += seg.length;
        i++;
      }
    }
    this.sSeg = i;
    this.sSegStart = start;
  }

  private copyIn(src: Uint8Array, srcOff: number, head: number, n: number): void {
    const pos = head & this.mask;
    const first = Math.min(n, this.capacity - pos);
    const ring = this.ring;
    if (n <= SHORT_COPY) {
      for (let i = 0; i < first; i++) ring[pos + i] = src[srcOff + i];
      for (let i = first; i < n; i++) ring[i - first] = src[srcOff + i];
      return;
    }
    ring.set(src.subarray(srcOff, srcOff + first), pos);
    if (first < n) ring.set(src.subarray(srcOff + first, srcOff + n), 0);
  }

  // ---- reader side -------------------------------------------------------------------

  /** True while a message header has been read and its payload is not fully consumed. */
  get receiving(): boolean {
    return this.rLen >= 0;
  }
  /** Tag of the current incoming message (valid while `receiving`). */
  get messageTag(): number {
    return this.rTag;
  }
  /** Context id of the current incoming message (valid while `receiving`). */
  get messageCtx(): number {
    return this.rCtx;
  }
  /** Length of the current incoming message (valid while `receiving`). */
  get messageLength(): number {
    return this.rLen;
  }
  /** Payload bytes of the current message consumed so far. */
  get messageOffset(): number {
    return Math.max(0, Math.min(this.rOff - this.rSkip, this.rLen));
  }

  /**
   * Whether the writer published bytes since the reader last looked (one load of the writer's
   * index; after `readSome`/`peek` ran dry this means new data, so a reader can spin on it).
   * The reader then knows them: the next `peek` needs no load of its own.
   */
  get hasNews(): boolean {
    const head = Atomics.load(this.ctl, HEAD);
    if (head === this.rHead) return false;
    this.rHead = head;
    return true;
  }

  /**
   * Reads the next header if no message is current; returns `receiving`. The header's bytes
   * are released by the next `readSome` (always call it after a successful `peek`). With
   * `reload` false it only looks at what the reader already knows to be published (no load
   * of the writer's index).
   */
  peek(reload = true): boolean {
    if (this.rLen >= 0) return true;
    const tail = this.rTail;
    if (((this.rHead - tail) | 0) < HEADER_BYTES) {
      if (!reload) return false;
      this.rHead = Atomics.load(this.ctl, HEAD);
      if (((this.rHead - tail) | 0) < HEADER_BYTES) return false;
    }
    const w = (tail & this.mask) >> 2;
    const m = this.mask32;
    const r32 = this.ring32;
    this.rTag = r32[w];
    this.rCtx = r32[(w + 1) & m];
    this.rLen = r32[(w + 2) & m] >>> 0;
    this.rSkip = r32[(w + 3) & m] & 7;
    this.rBody = (this.rSkip + this.rLen + 7) & ~7;
    this.rOff = 0;
    this.rSegOf = null;
    this.rTail = (tail + HEADER_BYTES) | 0;
    return true;
  }

  /** Whether the rest of the current message is already in the ring (valid while `receiving`). */
  messageReady(): boolean {
    const rest = this.rBody - this.rOff;
    if (((this.rHead - this.rTail) | 0) >= rest) return true;
    this.rHead = Atomics.load(this.ctl, HEAD);
    return ((this.rHead - this.rTail) | 0) >= rest;
  }

  /**
   * Copies the whole current message into `dst` (contiguous, at least `messageLength` bytes)
   * and completes it, if it is entirely in the ring, untouched so far and at most one piece;
   * returns false, having done nothing, otherwise (then use `readSome`). The space is released
   * to the writer lazily, once a quarter of the ring is waiting for it (saving the shared
   * store and the load of the writer's flag on every short message): the caller must `publish`
   * while `unpublished` before it waits for anything, or the writer may wait for that space.
   */
  readWhole(dst: Uint8Array): boolean {
    const body = this.rBody;
    if (this.rOff !== 0 || body > PIECE_BYTES || this.rLen < 0) return false;
    const tail = this.rTail;
    if (((this.rHead - tail) | 0) < body) {
      this.rHead = Atomics.load(this.ctl, HEAD);
      if (((this.rHead - tail) | 0) < body) return false;
    }
    const n = this.rLen;
    if (n > 0) this.copyOut(dst, 0, (tail + this.rSkip) | 0, n);
    this.rOff = body;
    this.rLen = -1;
    const next = (tail + body) | 0;
    this.rTail = next;
    if (((next - this.rReleased) | 0) >= this.capacity >> 2) this.release(next);
    return true;
  }

  /** Whether consumed space has not been released to the writer yet (see `readWhole`). */
  get unpublished(): boolean {
    return this.rTail !== this.rReleased && this.rLen < 0;
  }

  /** Releases the space of every message consumed so far to the writer (see `readWhole`). */
  publish(): void {
    if (this.rLen < 0) this.release(this.rTail);
  }

  /**
   * Copies the available payload of the current message into `dst` at the message's current
   * offset (`dst` null: discards it; vectored: into its segments in order; `dst` may hold
   * fewer bytes than the message only if the rest is discarded by later calls with null), releasing space piece by piece (and keeps reading while
   * the writer publishes more). Returns the payload bytes consumed; `receiving` turns false
   * once the message is complete.
   */
  readSome(dst: MessageBuffer | null): number {
    if (this.rLen < 0) return 0;
    const ctl = this.ctl;
    const body = this.rBody;
    const skip = this.rSkip;
    const len = this.rLen;
    let tail = this.rTail;
    let consumed = 0;
    for (;;) {
      const remaining = body - this.rOff;
      if (remaining === 0) break;
      let avail = (this.rHead - tail) | 0;
      if (avail <= 0) {
        this.rHead = Atomics.load(ctl, HEAD);
        if (consumed > 0) {
          // Mid-message and the writer is filling: wait a moment for its next piece.
          for (let k = 0; k < MID_MESSAGE_SPIN && this.rHead === tail; k++) this.rHead = Atomics.load(ctl, HEAD);
        }
        avail = (this.rHead - tail) | 0;
        if (avail <= 0) break;
      }
      let n = remaining < avail ? remaining : avail;
      if (n > PIECE_BYTES) n = PIECE_BYTES;
      if (dst !== null) {
        const from = Math.max(this.rOff, skip);
        const to = Math.min(this.rOff + n, skip + len);
        if (to > from) {
          if (dst instanceof Uint8Array) this.copyOut(dst, from - skip, (tail + from - this.rOff) | 0, to - from);
          else this.copyOutSegments(dst, from - skip, (tail + from - this.rOff) | 0, to - from);
        }
      }
      tail = (tail + n) | 0;
      this.rOff += n;
      consumed += n;
      if (this.rOff < body) this.release(tail);
    }
    this.release(tail);
    if (this.rOff === body) this.rLen = -1;
    return consumed;
  }

  /** Publishes the reader's tail and rings the writer if it waits for space. */
  private release(tail: number): void {
    this.rTail = tail;
    if (tail === this.rReleased) return;
    this.rReleased = tail;
    Atomics.store(this.ctl, TAIL, tail);
    if (Atomics.load(this.ctl, WRITER_WAITING) !== 0) ringBell(this.writerBell);
  }

  /** Copies n > 0 bytes at ring position `tail` into payload bytes [off, off + n) of a vectored receive. */
  private copyOutSegments(segs: readonly Uint8Array[], off: number, tail: number, n: number): void {
    let i = 0;
    let start = 0;
    if (this.rSegOf === segs && this.rSegStart <= off) {
      i = this.rSeg;
      start = this.rSegStart;
    }
    while (start + segs[i].length <= off) start += segs[i++].length;
    while (n > 0) {
      const seg = segs[i];
      const o = off - start;
      const k = seg.length - o < n ? seg.length - o : n;
      this.copyOut(seg, o, tail, k);
      tail = (tail + k) | 0;
      off += k;
      n -= k;
      if (o + k === seg.length) {
        start += seg.length;
        i++;
      }
    }
    this.rSegOf = segs;
    this.rSeg = i;
    this.rSegStart = start;
  }

  private copyOut(dst: Uint8Array, dstOff: number, tail: number, n: number): void {
    const pos = tail & this.mask;
    const first = Math.min(n, this.capacity - pos);
    const ring = this.ring;
    if (n <= SHORT_COPY) {
      for (let i = 0; i < first; i++) dst[dstOff + i] = ring[pos + i];
      for (let i = first; i < n; i++) dst[dstOff + i] = ring[i - first];
      return;
    }
    if (((dst.byteOffset + dstOff - pos) & 7) === 0) {
      dst.set(ring.subarray(pos, pos + first), dstOff);
      if (first < n) dst.set(ring.subarray(0, n - first), dstOff + first);
      return;
    }
    // Misaligned: through an ordinary buffer aligned like the ring (n ≤ PIECE_BYTES).
    const b = (this.bounce ??= new Uint8Array(PIECE_BYTES + 8));
    const k = pos & 7;
    b.set(ring.subarray(pos, pos + first), k);
    if (first < n) b.set(ring.subarray(0, n - first), k + first);
    dst.set(b.subarray(k, k + n), dstOff);
  }

  // ---- awaitable convenience API (one channel used on its own) -------------------------

  /**
   * Sends one message (context `ctx`, default 0); resolves once it is entirely in the ring
   * (the data may be reused).
   */
  async send(tag: number, data: MessageBuffer, ctx = 0): Promise<void> {
    this.beginSend(ctx, tag, data);
    for (;;) {
      const seen = Atomics.load(this.writerBell.words, this.writerBell.index);
      const failed = this.failure();
      if (failed !== undefined) {
        this.sData = null;
        throw failed;
      }
      this.writeSome();
      if (this.sData === null) return;
      await waitBell(this.writerBell, seen);
    }
  }

  /**
   * Receives the next message into `into`; resolves with its tag, context and length. A
   * message longer than `into` is consumed and discarded, and the call fails with a
   * CommunicationError.
   */
  async recv(into: MessageBuffer): Promise<{ tag: number; ctx: number; bytes: number }> {
    const cap = into instanceof Uint8Array ? into.length : byteLength(into);
    let truncated = false;
    for (;;) {
      const seen = Atomics.load(this.readerBell.words, this.readerBell.index);
      const failed = this.failure();
      if (failed !== undefined) throw failed;
      if (this.peek()) {
        if (this.rOff === 0 && this.rLen > cap) truncated = true;
        const tag = this.rTag;
        const ctx = this.rCtx;
        const len = this.rLen;
        this.readSome(truncated ? null : into);
        if (this.rLen < 0) {
          if (truncated) {
            throw new TruncationError(`message of ${len} bytes (tag ${tag}) exceeds the receive buffer of ${cap}`, len, cap);
          }
          return { tag, ctx, bytes: len };
        }
      }
      await waitBell(this.readerBell, seen);
    }
  }
}
