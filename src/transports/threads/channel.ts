/**
 * A single-producer single-consumer byte channel over a SharedArrayBuffer.
 *
 * Layout: a control block of Int32 words followed by a ring of `capacity` bytes (a power of
 * two). `head` counts bytes ever written, `tail` bytes ever consumed; both wrap at 2³² and
 * `(head - tail) | 0` is the fill level. The writer fills bytes with plain stores and then
 * publishes them with `Atomics.store(head)`; the reader consumes and releases space with
 * `Atomics.store(tail)`. Every message is an 8-byte header (tag: int32, length: uint32)
 * followed by its payload; payloads longer than the ring are streamed through it in chunks,
 * and the reader copies them straight into the caller's buffer.
 *
 * Waiting never blocks a thread: a side that cannot progress awaits `Atomics.waitAsync` on a
 * "bell" word that its peer increments and notifies after every change. By default both
 * sides share the channel's own bell word; a communicator with many channels passes one bell
 * per rank instead, so a rank sleeps on a single word whatever channel wakes it. A pending
 * `waitAsync` does not keep a thread's event loop alive: a thread that only waits on a channel
 * must hold it open (e.g. with a timer) or it exits.
 *
 * A channel can be poisoned (`poison(rank)`): both sides' bells ring and every subsequent or
 * pending operation fails with a CommunicationError naming the failed rank.
 */

import { CommunicationError, InvalidArgumentError } from '../../errors.js';

const HEAD = 0;
const TAIL = 1;
const STATE = 2;
const FAILED = 3;
const BELL = 4;
const CONTROL_WORDS = 8;
const CONTROL_BYTES = CONTROL_WORDS * 4;
const STATE_POISONED = 1;

/** Bytes of a message header in the ring. */
export const HEADER_BYTES = 8;

/** One Int32 word that a side increments and notifies to wake whoever waits on it. */
export interface Bell {
  readonly words: Int32Array;
  readonly index: number;
}

/** Increments and notifies a bell. */
export function ringBell(bell: Bell): void {
  Atomics.add(bell.words, bell.index, 1);
  Atomics.notify(bell.words, bell.index);
}

type WaitAsync = (
  words: Int32Array,
  index: number,
  value: number,
  timeout?: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

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
  /** Rung by the writer after publishing bytes (default: the channel's own bell). */
  readonly readerBell?: Bell;
  /** Rung by the reader after releasing space (default: the channel's own bell). */
  readonly writerBell?: Bell;
}

/**
 * One endpoint view of a channel. Construct one `Channel` per thread over the same buffer;
 * exactly one thread writes and exactly one reads.
 */
export class Channel {
  readonly capacity: number;
  readonly readerBell: Bell;
  readonly writerBell: Bell;
  private readonly ctl: Int32Array;
  private readonly ring: Uint8Array;
  private readonly mask: number;
  private readonly scratch = new Uint8Array(HEADER_BYTES);
  private readonly scratchView = new DataView(this.scratch.buffer);

  // Writer state: the message being written (sOff < 0: header not yet written).
  private sTag = 0;
  private sData: Uint8Array | null = null;
  private sOff = -1;

  // Reader state: the message being read (rLen < 0: no current message).
  private rTag = 0;
  private rLen = -1;
  private rOff = 0;

  constructor(buffer: SharedArrayBuffer, options: ChannelOptions = {}) {
    this.capacity = buffer.byteLength - CONTROL_BYTES;
    if (this.capacity < 16 || (this.capacity & (this.capacity - 1)) !== 0) {
      throw new InvalidArgumentError('buffer', 'not a channel buffer (use createChannelBuffer)');
    }
    this.ctl = new Int32Array(buffer, 0, CONTROL_WORDS);
    this.ring = new Uint8Array(buffer, CONTROL_BYTES, this.capacity);
    this.mask = this.capacity - 1;
    const own: Bell = { words: this.ctl, index: BELL };
    this.readerBell = options.readerBell ?? own;
    this.writerBell = options.writerBell ?? own;
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

  /** Starts a message; push it with `writeSome`. The data must not change until it completes. */
  beginSend(tag: number, data: Uint8Array): void {
    if (this.sData !== null) throw new CommunicationError('channel: a send is already in progress');
    this.sTag = tag;
    this.sData = data;
    this.sOff = -1;
  }

  /**
   * Writes as much of the current message as the ring has room for and publishes it.
   * Returns the number of bytes moved (header included); `sending` turns false once the
   * whole message is in the ring.
   */
  writeSome(): number {
    const data = this.sData;
    if (data === null) return 0;
    let head = Atomics.load(this.ctl, HEAD);
    let free = this.capacity - ((head - Atomics.load(this.ctl, TAIL)) | 0);
    let moved = 0;
    if (this.sOff < 0) {
      if (free < HEADER_BYTES) return 0;
      this.scratchView.setInt32(0, this.sTag, true);
      this.scratchView.setUint32(4, data.length, true);
      this.copyIn(this.scratch, 0, head, HEADER_BYTES);
      head = (head + HEADER_BYTES) | 0;
      free -= HEADER_BYTES;
      moved += HEADER_BYTES;
      this.sOff = 0;
    }
    const n = Math.min(free, data.length - this.sOff);
    if (n > 0) {
      this.copyIn(data, this.sOff, head, n);
      head = (head + n) | 0;
      this.sOff += n;
      moved += n;
    }
    if (moved > 0) {
      Atomics.store(this.ctl, HEAD, head);
      ringBell(this.readerBell);
    }
    if (this.sOff === data.length) this.sData = null;
    return moved;
  }

  private copyIn(src: Uint8Array, srcOff: number, head: number, n: number): void {
    const pos = head & this.mask;
    const first = Math.min(n, this.capacity - pos);
    const ring = this.ring;
    if (n <= 64) {
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
  /** Length of the current incoming message (valid while `receiving`). */
  get messageLength(): number {
    return this.rLen;
  }
  /** Payload bytes of the current message consumed so far. */
  get messageOffset(): number {
    return this.rOff;
  }

  /** Reads the next header if no message is current; returns `receiving`. */
  peek(): boolean {
    if (this.rLen >= 0) return true;
    const tail = Atomics.load(this.ctl, TAIL);
    if (((Atomics.load(this.ctl, HEAD) - tail) | 0) < HEADER_BYTES) return false;
    this.copyOut(this.scratch, 0, tail, HEADER_BYTES);
    this.rTag = this.scratchView.getInt32(0, true);
    this.rLen = this.scratchView.getUint32(4, true);
    this.rOff = 0;
    Atomics.store(this.ctl, TAIL, (tail + HEADER_BYTES) | 0);
    ringBell(this.writerBell);
    return true;
  }

  /**
   * Copies the available payload of the current message into `dst` at the message's current
   * offset (`dst` null: discards it). Returns the bytes consumed; `receiving` turns false once
   * the message is complete.
   */
  readSome(dst: Uint8Array | null): number {
    if (this.rLen < 0) return 0;
    const tail = Atomics.load(this.ctl, TAIL);
    const avail = (Atomics.load(this.ctl, HEAD) - tail) | 0;
    const n = Math.min(avail, this.rLen - this.rOff);
    if (n > 0) {
      if (dst !== null) this.copyOut(dst, this.rOff, tail, n);
      this.rOff += n;
      Atomics.store(this.ctl, TAIL, (tail + n) | 0);
      ringBell(this.writerBell);
    }
    if (this.rOff === this.rLen) this.rLen = -1;
    return n;
  }

  private copyOut(dst: Uint8Array, dstOff: number, tail: number, n: number): void {
    const pos = tail & this.mask;
    const first = Math.min(n, this.capacity - pos);
    const ring = this.ring;
    if (n <= 64) {
      for (let i = 0; i < first; i++) dst[dstOff + i] = ring[pos + i];
      for (let i = first; i < n; i++) dst[dstOff + i] = ring[i - first];
      return;
    }
    dst.set(ring.subarray(pos, pos + first), dstOff);
    if (first < n) dst.set(ring.subarray(0, n - first), dstOff + first);
  }

  // ---- awaitable convenience API (one channel used on its own) -------------------------

  /** Sends one message; resolves once it is entirely in the ring (the data may be reused). */
  async send(tag: number, data: Uint8Array): Promise<void> {
    this.beginSend(tag, data);
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
   * Receives the next message into `into`; resolves with its tag and length. A message longer
   * than `into` is consumed and discarded, and the call fails with a CommunicationError.
   */
  async recv(into: Uint8Array): Promise<{ tag: number; bytes: number }> {
    let truncated = false;
    for (;;) {
      const seen = Atomics.load(this.readerBell.words, this.readerBell.index);
      const failed = this.failure();
      if (failed !== undefined) throw failed;
      if (this.peek()) {
        if (this.rOff === 0 && this.rLen > into.length) truncated = true;
        const tag = this.rTag;
        const len = this.rLen;
        this.readSome(truncated ? null : into);
        if (this.rLen < 0) {
          if (truncated) {
            throw new CommunicationError(`message of ${len} bytes (tag ${tag}) exceeds the receive buffer of ${into.length}`);
          }
          return { tag, bytes: len };
        }
      }
      await waitBell(this.readerBell, seen);
    }
  }
}
