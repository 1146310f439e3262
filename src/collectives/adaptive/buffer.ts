/**
 * The intermediate buffer of a gather root (Traff18 §3): its range's blocks in rank order,
 * its own block at its offset, ranges received from lower ranks put before it and ranges from
 * higher ranks after it. Nothing is ever reordered.
 *
 * It serves the gather that overlaps the construction (gatherv/adaptive.ts, the first start):
 * a gather root does not yet know how far its range will grow when it posts a receive, so the
 * buffer grows by doubling (moving what it holds, at most twice the range's size in total,
 * plain memory moves outside the cost model). Once the joins are known, the data phase is a
 * compiled schedule with an exact buffer (adaptive/schedule.ts, plan.ts bufferLayout).
 */
import type { Communicator } from '../../comm/communicator.js';
import { releaseScratch, scratchBuffer } from '../../comm/scratch.js';

export class RangeBuffer {
  private buf: Uint8Array;
  private start: number;
  private end: number;
  /** Offset of the own block in `buf`. */
  private own: number;

  private constructor(
    /** Whose scratch memory it takes (comm/scratch.ts). */
    private readonly comm: Pick<Communicator, 'clock'>,
    capacity: number,
    ownOffset: number,
    private readonly ownBytes: number,
  ) {
    this.buf = scratchBuffer(comm, capacity);
    this.own = ownOffset;
    this.start = ownOffset;
    this.end = ownOffset + ownBytes;
  }

  /** A buffer that grows as ranges are added (final extent unknown). */
  static growable(comm: Pick<Communicator, 'clock'>, ownBytes: number): RangeBuffer {
    return new RangeBuffer(comm, ownBytes, 0, ownBytes);
  }

  /** Back to holding only the own block's slot (for the next execution). */
  reset(): void {
    this.start = this.own;
    this.end = this.own + this.ownBytes;
  }

  /** Where the own block goes. */
  ownView(): Uint8Array {
    return this.buf.subarray(this.own, this.own + this.ownBytes);
  }

  /** Reserves `n` bytes right before the current contents (a range of lower ranks). */
  prepend(n: number): Uint8Array {
    if (this.start < n) this.grow(n);
    this.start -= n;
    return this.buf.subarray(this.start, this.start + n);
  }

  /** Reserves `n` bytes right after the current contents (a range of higher ranks). */
  append(n: number): Uint8Array {
    if (this.end + n > this.buf.length) this.grow(n);
    const at = this.end;
    this.end += n;
    return this.buf.subarray(at, at + n);
  }

  /** The range held so far, in rank order. */
  contents(): Uint8Array {
    return this.buf.subarray(this.start, this.end);
  }

  private grow(n: number): void {
    const len = this.end - this.start;
    // a power of two: the buffer it grows out of is given back for reuse (comm/scratch.ts)
    let cap = 1;
    while (cap < 2 * (len + n) || cap < 2 * this.buf.length) cap *= 2;
    const next = scratchBuffer(this.comm, cap);
    const at = Math.floor((cap - len) / 2); // ≥ n free bytes on both sides
    next.set(this.contents(), at);
    const delta = at - this.start;
    this.own += delta;
    this.start += delta;
    this.end += delta;
    releaseScratch(this.comm, this.buf);
    this.buf = next;
  }
}

interface QueueWaiter<T> {
  resolve(v: T | undefined): void;
  reject(e: unknown): void;
}

/**
 * An asynchronous FIFO: the construction pushes the joins, the data phase pulls them. Its
 * arrays are made when first needed (a simulated rank holds one queue; most hold at most a
 * few items and one waiter at a time).
 */
export class EventQueue<T> {
  private items: T[] | null = null;
  private waiters: QueueWaiter<T>[] | null = null;
  private closed = false;
  private failed = false;
  private error: unknown;

  push(x: T): void {
    const w = this.waiters !== null && this.waiters.length > 0 ? this.waiters.shift() : undefined;
    if (w !== undefined) w.resolve(x);
    else if (this.items === null) this.items = [x];
    else this.items.push(x);
  }

  /** No more items: pending and later `next()` calls resolve with undefined. */
  close(): void {
    this.closed = true;
    if (this.waiters !== null) for (const w of this.waiters.splice(0)) w.resolve(undefined);
  }

  /** The producer failed: pending and later `next()` calls reject with `e` once the items are used up. */
  fail(e: unknown): void {
    this.failed = true;
    this.error = e;
    if (this.waiters !== null) for (const w of this.waiters.splice(0)) w.reject(e);
  }

  next(): Promise<T | undefined> {
    if (this.items !== null && this.items.length > 0) return Promise.resolve(this.items.shift() as T);
    if (this.failed) return Promise.reject(this.error);
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const w = { resolve, reject };
      if (this.waiters === null) this.waiters = [w];
      else this.waiters.push(w);
    });
  }
}
