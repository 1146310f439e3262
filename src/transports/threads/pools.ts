/**
 * What the threads endpoint recycles, so that a message allocates nothing once the pools are
 * warm: the records of queued sends, posted receives and unexpected messages, and the buffers
 * of unexpected messages, pooled by power-of-two size up to 2^POOL_MAX_CLASS bytes,
 * POOL_PER_CLASS of each size. Also the growable ring FIFO of a destination's queued sends (no
 * `shift`/`splice` of an array). `RecordPools` is the root of the endpoint's class chain
 * (endpoint.ts): the pools are fields of the endpoint itself.
 */

import type { Status } from '../../comm/communicator.js';
import type { OpRequest } from '../../comm/request.js';
import type { MessageBuffer } from '../../comm/segments.js';

export const EMPTY = new Uint8Array(0);

/**
 * The native schedule executor (schedule.ts) that posted an operation with no request of its
 * own: told when it completes (`bytes` received, or `error`), with the operation's index and
 * the run it belongs to.
 */
export interface ScheduleOwner {
  opDone(index: number, run: number, bytes: number, error: Error | null): void;
  /** Issues what its completed operations let go (the progress loop's turn, progress.ts). */
  resume(): void;
  /** The endpoint failed while it was waiting to resume. */
  abort(error: Error): void;
}
/** Unexpected-message buffers up to 2^POOL_MAX_CLASS bytes are pooled, POOL_PER_CLASS of each size. */
const POOL_MAX_CLASS = 20;
const POOL_PER_CLASS = 4;

/** A send waiting for ring space. */
export class SendOp {
  ctx = 0;
  tag = 0;
  data: MessageBuffer = EMPTY;
  req: OpRequest<void> | null = null;
  /** A schedule's send (no request): its executor, operation index and run. */
  owner: ScheduleOwner | null = null;
  ownerIndex = 0;
  ownerRun = 0;
}

/** A receive: posted (matching.ts), or being filled by the message that matched it (progress.ts). */
export class RecvOp {
  ctx = 0;
  source = 0;
  tag = 0;
  into: MessageBuffer = EMPTY;
  /** Bytes `into` holds (a receive of unknown size: its maxBytes). */
  cap = 0;
  /** A receive of unknown size (irecvAlloc): `into` is allocated when a message matches (`fit`). */
  alloc = false;
  /** Its request; null while `irecv` runs (then completion only records the outcome). */
  req: OpRequest<Status> | null = null;
  /** Set when the op completes before it has a request (inside `irecv`). */
  done = false;
  error: Error | null = null;
  stSource = 0;
  stTag = 0;
  stBytes = 0;
  /** A schedule's receive (no request): its executor, operation index and run. */
  owner: ScheduleOwner | null = null;
  ownerIndex = 0;
  ownerRun = 0;
  prev: RecvOp | null = null;
  next: RecvOp | null = null;
}

/** A message that arrived before a matching receive was posted (possibly still arriving). */
export class Unexpected {
  ctx = 0;
  source = 0;
  tag = 0;
  len = 0;
  buf: Uint8Array = EMPTY;
  complete = false;
  prev: Unexpected | null = null;
  next: Unexpected | null = null;
}

/** A growable ring-buffer FIFO. */
export class Fifo<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(4);
  private first = 0;
  length = 0;

  push(x: T): void {
    if (this.length === this.items.length) {
      const bigger = new Array<T | undefined>(this.items.length * 2);
      for (let i = 0; i < this.length; i++) bigger[i] = this.items[(this.first + i) & (this.items.length - 1)];
      this.items = bigger;
      this.first = 0;
    }
    this.items[(this.first + this.length) & (this.items.length - 1)] = x;
    this.length++;
  }

  peek(): T {
    return this.items[this.first] as T;
  }

  shift(): T {
    const x = this.items[this.first] as T;
    this.items[this.first] = undefined;
    this.first = (this.first + 1) & (this.items.length - 1);
    this.length--;
    return x;
  }
}

/** log2 of the smallest power of two ≥ n (n ≥ 1). */
function sizeClass(n: number): number {
  return n <= 1 ? 0 : 32 - Math.clz32(n - 1);
}

/**
 * The pools of one endpoint. Records are taken inline where they are filled in
 * (`this.sendPool.pop() ?? new SendOp()`), and given back by the `release` methods.
 */
export abstract class RecordPools {
  protected readonly sendPool: SendOp[] = [];
  protected readonly recvPool: RecvOp[] = [];
  protected readonly entryPool: Unexpected[] = [];
  protected readonly bufPool: Uint8Array[][] = Array.from({ length: POOL_MAX_CLASS + 1 }, () => []);

  /** An unexpected message (ctx, source, tag) of `len` bytes, not arrived yet, with a buffer of ≥ `len` bytes. */
  protected takeUnexpected(ctx: number, source: number, tag: number, len: number): Unexpected {
    const u = this.entryPool.pop() ?? new Unexpected();
    u.ctx = ctx;
    u.source = source;
    u.tag = tag;
    u.len = len;
    u.complete = false;
    const k = sizeClass(len);
    u.buf = len === 0 ? EMPTY : k <= POOL_MAX_CLASS ? (this.bufPool[k].pop() ?? new Uint8Array(1 << k)) : new Uint8Array(len);
    return u;
  }

  protected releaseUnexpected(u: Unexpected): void {
    const k = sizeClass(u.buf.length);
    if (u.buf.length === 1 << k && k <= POOL_MAX_CLASS && u.buf.length > 0 && this.bufPool[k].length < POOL_PER_CLASS) {
      this.bufPool[k].push(u.buf);
    }
    u.buf = EMPTY;
    this.entryPool.push(u);
  }

  protected releaseRecv(op: RecvOp): void {
    op.into = EMPTY;
    op.alloc = false;
    op.req = null;
    op.owner = null;
    op.error = null;
    this.recvPool.push(op);
  }

  protected releaseSend(op: SendOp): void {
    op.data = EMPTY;
    op.req = null;
    op.owner = null;
    this.sendPool.push(op);
  }
}
