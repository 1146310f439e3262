/**
 * The Endpoint of the worker-threads transport: one SPSC channel per ordered pair of ranks,
 * MPI matching by (context, source, tag) with an unexpected-message queue, and a progress
 * engine that sleeps on the rank's doorbell with `Atomics.waitAsync` (never blocking the
 * thread). Communicators (world and split) are built on it by comm/group.ts.
 *
 * Hot path (no structured clone; the data is copied into the ring and out of it, nothing else):
 * - `isend` writes the message into the ring at once when nothing is queued before it; if it
 *   fits, it returns one shared already-resolved promise (no allocation).
 * - `irecv` takes a message already in the ring straight into the receive buffer and returns
 *   an already-resolved promise, cached per source while tag and size repeat (no allocation);
 *   otherwise it looks at the unexpected queue, posts, and polls.
 * - Only operations that must wait allocate: the promise they return. Their records (send and
 *   receive ops, unexpected messages and their buffers, by power-of-two size) come from pools;
 *   queues are rings and linked lists (no `shift`/`splice`); promise executors are bound once.
 *   Copies longer than 64 bytes make a typed-array view (`subarray`) for `TypedArray.set`.
 * - `poll` pumps the channels of the peers that rang the doorbell bitmap (clearing their bits)
 *   and those of the focus peer (the peer of the latest operation that had to wait, whose bit
 *   stays set while the rank is awake, so its writes cost it one load); the loop spins on the
 *   doorbell and the focus channel's indices for a bounded number of loads (`spinLoads`,
 *   default VCOLL_THREADS_SPIN or DEFAULT_SPIN_LOADS) before it collects the whole doorbell
 *   and sleeps; peers call `Atomics.notify` only for a sleeping rank.
 * A rank that fails records itself in the run's failure word and rings everyone: every
 * pending and later operation fails with a CommunicationError naming it.
 */

import { ANY_SOURCE, ANY_TAG, type Status } from '../../comm/communicator.js';
import type { Endpoint } from '../../comm/endpoint.js';
import { CommunicationError, InvalidArgumentError } from '../../errors.js';
import { type Bell, Channel, waitAsync } from './channel.js';

/** Loads the progress loop spins before it sleeps (an Atomics.load costs ~10-15 ns on V8/x86: ~20-30 µs). */
export const DEFAULT_SPIN_LOADS = 2000;

/** The spin budget when none is given: VCOLL_THREADS_SPIN if it is a number ≥ 0, else DEFAULT_SPIN_LOADS. */
export function defaultSpinLoads(): number {
  const env = process.env.VCOLL_THREADS_SPIN;
  const n = Number(env);
  return env !== undefined && env !== '' && n >= 0 ? n : DEFAULT_SPIN_LOADS;
}
const EMPTY = new Uint8Array(0);
const RESOLVED: Promise<void> = Promise.resolve();
/** Unexpected-message buffers up to 2^POOL_MAX_CLASS bytes are pooled, POOL_PER_CLASS of each size. */
const POOL_MAX_CLASS = 20;
const POOL_PER_CLASS = 4;

// What the payload of the message arriving on an incoming channel is copied into.
const SINK_NONE = 0;
const SINK_RECV = 1;
const SINK_UNEXPECTED = 2;
const SINK_DISCARD = 3;

class SendOp {
  ctx = 0;
  tag = 0;
  data: Uint8Array = EMPTY;
  resolve: (() => void) | null = null;
  reject: ((e: Error) => void) | null = null;
}

class RecvOp {
  ctx = 0;
  source = 0;
  tag = 0;
  into: Uint8Array = EMPTY;
  /** Set when the op completes before a promise exists (inside `irecv`). */
  done = false;
  error: Error | null = null;
  stSource = 0;
  stTag = 0;
  stBytes = 0;
  resolve: ((s: Status) => void) | null = null;
  reject: ((e: Error) => void) | null = null;
  prev: RecvOp | null = null;
  next: RecvOp | null = null;
}

/** A message that arrived before a matching receive was posted (possibly still arriving). */
class Unexpected {
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
class Fifo<T> {
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

function matches(op: RecvOp, ctx: number, source: number, tag: number): boolean {
  return op.ctx === ctx && (op.source === ANY_SOURCE || op.source === source) && (op.tag === ANY_TAG || op.tag === tag);
}

function truncation(source: number, tag: number, len: number, cap: number): CommunicationError {
  return new CommunicationError(
    `message of ${len} bytes from rank ${source} (tag ${tag}) exceeds the receive buffer of ${cap} bytes`,
  );
}

function isInt32(x: number, min: number): boolean {
  return (x | 0) === x && x >= min;
}

/** log2 of the smallest power of two ≥ n (n ≥ 1). */
function sizeClass(n: number): number {
  return n <= 1 ? 0 : 32 - Math.clz32(n - 1);
}

export interface ThreadsEndpointInit {
  readonly rank: number;
  readonly size: number;
  /** `outgoing[d]`: the channel to rank d (null for d = rank). */
  readonly outgoing: readonly (Channel | null)[];
  /** `incoming[s]`: the channel from rank s (null for s = rank). */
  readonly incoming: readonly (Channel | null)[];
  /**
   * This rank's doorbell: peers set bit (peer mod 32) when they publish to it or release space
   * it waits for; `sleepIndex` is the word it sets while sleeping (see layout.ts).
   */
  readonly bell: Bell;
  /** The run's failure word: 0, or 1 + the rank that failed. */
  readonly failure: { readonly words: Int32Array; readonly index: number };
  /** The node of every rank (default: all on node 0), e.g. to emulate a cluster's locality. */
  readonly nodes?: readonly number[];
  /** Loads the progress loop spins before it sleeps (default: `defaultSpinLoads()`; Infinity: never sleeps). */
  readonly spinLoads?: number;
}

export class ThreadsEndpoint implements Endpoint {
  readonly worldRank: number;
  readonly worldSize: number;
  private readonly rank: number;
  private readonly size: number;
  private readonly outgoing: readonly (Channel | null)[];
  private readonly incoming: readonly (Channel | null)[];
  private readonly bellWords: Int32Array;
  private readonly bellIndex: number;
  private readonly sleepIndex: number;
  private readonly failWords: Int32Array;
  private readonly failIndex: number;
  private readonly nodes: readonly number[] | undefined;
  private readonly spinLoads: number;

  private readonly sendQueues: Fifo<SendOp>[];
  private postedHead: RecvOp | null = null;
  private postedTail: RecvOp | null = null;
  private unexpectedHead: Unexpected | null = null;
  private unexpectedTail: Unexpected | null = null;

  // The incoming message of every source: where it goes, its tag and length.
  private readonly sinkKind: Uint8Array;
  private readonly sinkOp: (RecvOp | null)[];
  private readonly sinkEntry: (Unexpected | null)[];
  private readonly sinkTag: Int32Array;
  private readonly sinkLen: Float64Array;

  // The last status per source and its resolved promise, reused while tag and size repeat.
  private readonly lastStatus: (Status | null)[];
  private readonly lastResolved: (Promise<Status> | null)[];

  private readonly sendPool: SendOp[] = [];
  private readonly recvPool: RecvOp[] = [];
  private readonly entryPool: Unexpected[] = [];
  private readonly bufPool: Uint8Array[][] = Array.from({ length: POOL_MAX_CLASS + 1 }, () => []);

  /**
   * The peer of the latest operation that had to wait (-1: none; only up to 32 ranks, where a
   * doorbell bit names one peer). Its bit is left set in the doorbell while the loop is awake
   * (so its writes cost the peer one load, not a read-modify-write and an invalidation), and
   * the loop watches its channel indices directly; the bit is collected before sleeping.
   */
  private focus = -1;
  private focusBit = 0;
  /** The doorbell value the last poll left behind: anything else is news. */
  private bellExpected = 0;

  private pending = 0;
  private looping = false;
  private failure: CommunicationError | undefined;
  private readonly drainWaiters: (() => void)[] = [];

  // Promise executors bound once (no closure per operation); `capture*` names the op.
  private captureSend: SendOp | null = null;
  private captureRecv: RecvOp | null = null;
  private readonly sendExecutor = (resolve: () => void, reject: (e: Error) => void): void => {
    const op = this.captureSend as SendOp;
    op.resolve = resolve;
    op.reject = reject;
  };
  private readonly recvExecutor = (resolve: (s: Status) => void, reject: (e: Error) => void): void => {
    const op = this.captureRecv as RecvOp;
    op.resolve = resolve;
    op.reject = reject;
  };
  private readonly woke = (): void => {
    Atomics.store(this.bellWords, this.sleepIndex, 0);
  };

  constructor(init: ThreadsEndpointInit) {
    this.rank = this.worldRank = init.rank;
    this.size = this.worldSize = init.size;
    this.outgoing = init.outgoing;
    this.incoming = init.incoming;
    this.bellWords = init.bell.words;
    this.bellIndex = init.bell.index;
    if (init.bell.sleepIndex === undefined) throw new InvalidArgumentError('bell', 'needs a sleepIndex', { rank: init.rank });
    this.sleepIndex = init.bell.sleepIndex;
    this.failWords = init.failure.words;
    this.failIndex = init.failure.index;
    this.nodes = init.nodes;
    this.spinLoads = init.spinLoads ?? defaultSpinLoads();
    if (!(this.spinLoads >= 0)) {
      throw new InvalidArgumentError('spinLoads', `must be a number >= 0, got ${this.spinLoads}`, { rank: init.rank });
    }
    const p = init.size;
    this.sendQueues = Array.from({ length: p }, () => new Fifo<SendOp>());
    this.sinkKind = new Uint8Array(p);
    this.sinkOp = new Array<RecvOp | null>(p).fill(null);
    this.sinkEntry = new Array<Unexpected | null>(p).fill(null);
    this.sinkTag = new Int32Array(p);
    this.sinkLen = new Float64Array(p);
    this.lastStatus = new Array<Status | null>(p).fill(null);
    this.lastResolved = new Array<Promise<Status> | null>(p).fill(null);
  }

  /** The failure that stopped this endpoint, if any. */
  get failed(): CommunicationError | undefined {
    return this.failure;
  }

  private badRank(field: string, r: number, wildcard: boolean): InvalidArgumentError | undefined {
    if ((r | 0) === r && r < this.size && (r >= 0 || (wildcard && r === ANY_SOURCE))) return undefined;
    return new InvalidArgumentError(field, `rank ${r} is not in [0, ${this.size})`, { rank: this.rank });
  }

  private badTag(t: number, wildcard: boolean): InvalidArgumentError | undefined {
    if (isInt32(t, 0) || (wildcard && t === ANY_TAG)) return undefined;
    return new InvalidArgumentError('tag', `must be a non-negative int32, got ${t}`, { rank: this.rank });
  }

  private badCtx(ctx: number): InvalidArgumentError | undefined {
    if (isInt32(ctx, 0)) return undefined;
    return new InvalidArgumentError('ctx', `must be a non-negative int32, got ${ctx}`, { rank: this.rank });
  }

  /** Whether the run failed (then fails this endpoint); reads the shared failure word. */
  private checkFailed(): boolean {
    if (this.failure !== undefined) return true;
    // A plain read first (Atomics.load costs ~15 ns; the word changes once, if ever).
    if (this.failWords[this.failIndex] === 0) return false;
    const f = Atomics.load(this.failWords, this.failIndex);
    if (f === 0) return false;
    this.fail(f - 1);
    return true;
  }

  isend(ctx: number, dest: number, tag: number, data: Uint8Array): Promise<void> {
    const bad = this.badCtx(ctx) ?? this.badRank('dest', dest, false) ?? this.badTag(tag, false);
    if (bad !== undefined) return Promise.reject(bad);
    if (this.checkFailed()) return Promise.reject(this.failure);
    if (dest === this.rank) {
      this.deliverLocal(ctx, tag, data);
      return RESOLVED;
    }
    const q = this.sendQueues[dest];
    if (q.length === 0) {
      const ch = this.outgoing[dest] as Channel;
      ch.beginSend(ctx, tag, data);
      ch.writeSome();
      if (!ch.sending) return RESOLVED;
    }
    const op = this.sendPool.pop() ?? new SendOp();
    op.ctx = ctx;
    op.tag = tag;
    op.data = data;
    this.captureSend = op;
    const promise = new Promise<void>(this.sendExecutor);
    this.captureSend = null;
    q.push(op);
    this.pending++;
    this.setFocus(dest);
    this.kick();
    return promise;
  }

  irecv(ctx: number, source: number, tag: number, into: Uint8Array): Promise<Status> {
    const bad = this.badCtx(ctx) ?? this.badRank('source', source, true) ?? this.badTag(tag, true);
    if (bad !== undefined) return Promise.reject(bad);
    if (this.checkFailed()) return Promise.reject(this.failure);
    if (source >= 0 && this.postedHead === null && this.unexpectedHead === null && source !== this.rank) {
      // Nothing can match before this receive: take a message that is already in the ring.
      const ch = this.incoming[source] as Channel;
      if (
        this.sinkKind[source] === SINK_NONE &&
        ch.peek() &&
        ch.messageCtx === ctx &&
        (tag === ANY_TAG || ch.messageTag === tag) &&
        ch.messageLength <= into.length &&
        ch.messageReady()
      ) {
        const t = ch.messageTag;
        const len = ch.messageLength;
        ch.readSome(into);
        return this.resolvedStatus(source, t, len);
      }
    }
    const op = this.recvPool.pop() ?? new RecvOp();
    op.ctx = ctx;
    op.source = source;
    op.tag = tag;
    op.into = into;
    op.done = false;
    op.error = null;
    this.pending++;
    let posted = true;
    for (let u = this.unexpectedHead; u !== null; u = u.next) {
      if (!matches(op, u.ctx, u.source, u.tag)) continue;
      this.unlinkUnexpected(u);
      if (u.complete) this.finishFromUnexpected(op, u);
      else this.adoptArriving(op, u);
      posted = false;
      break;
    }
    if (posted) this.linkPosted(op);
    if (!op.done) this.poll();
    if (op.done) {
      const result = op.error !== null ? Promise.reject(op.error) : this.resolvedStatus(op.stSource, op.stTag, op.stBytes);
      this.releaseRecv(op);
      return result;
    }
    this.captureRecv = op;
    const promise = new Promise<Status>(this.recvExecutor);
    this.captureRecv = null;
    if (source !== ANY_SOURCE && source !== this.rank) this.setFocus(source);
    this.startLoop();
    return promise;
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    dst.set(src);
  }

  /** The node of `worldRank`: 0 (all threads share one machine) unless the run assigned nodes. */
  nodeOf(worldRank: number): number {
    const bad = this.badRank('worldRank', worldRank, false);
    if (bad !== undefined) throw bad;
    return this.nodes === undefined ? 0 : this.nodes[worldRank];
  }

  /** Resolves once no operation of this rank is pending (or the endpoint failed). */
  drain(): Promise<void> {
    if (this.pending === 0 || this.failure !== undefined) return RESOLVED;
    this.kick();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /**
   * Records `rank` (default: this rank) as the run's failed rank unless one is recorded, and
   * poisons every channel of this rank, which rings every peer.
   */
  poisonAll(rank: number = this.rank): void {
    Atomics.compareExchange(this.failWords, this.failIndex, 0, rank + 1);
    for (const ch of this.outgoing) ch?.poison(rank);
    for (const ch of this.incoming) ch?.poison(rank);
  }

  // ---- lists and pools -----------------------------------------------------------------

  private linkPosted(op: RecvOp): void {
    op.next = null;
    op.prev = this.postedTail;
    if (this.postedTail === null) this.postedHead = op;
    else this.postedTail.next = op;
    this.postedTail = op;
  }

  private unlinkPosted(op: RecvOp): void {
    if (op.prev === null) this.postedHead = op.next;
    else op.prev.next = op.next;
    if (op.next === null) this.postedTail = op.prev;
    else op.next.prev = op.prev;
    op.prev = op.next = null;
  }

  private linkUnexpected(u: Unexpected): void {
    u.next = null;
    u.prev = this.unexpectedTail;
    if (this.unexpectedTail === null) this.unexpectedHead = u;
    else this.unexpectedTail.next = u;
    this.unexpectedTail = u;
  }

  private unlinkUnexpected(u: Unexpected): void {
    if (u.prev === null) this.unexpectedHead = u.next;
    else u.prev.next = u.next;
    if (u.next === null) this.unexpectedTail = u.prev;
    else u.next.prev = u.prev;
    u.prev = u.next = null;
  }

  private newUnexpected(ctx: number, source: number, tag: number, len: number): Unexpected {
    const u = this.entryPool.pop() ?? new Unexpected();
    u.ctx = ctx;
    u.source = source;
    u.tag = tag;
    u.len = len;
    u.complete = false;
    const k = sizeClass(len);
    u.buf = len === 0 ? EMPTY : k <= POOL_MAX_CLASS ? (this.bufPool[k].pop() ?? new Uint8Array(1 << k)) : new Uint8Array(len);
    this.linkUnexpected(u);
    return u;
  }

  private releaseUnexpected(u: Unexpected): void {
    const k = sizeClass(u.buf.length);
    if (u.buf.length === 1 << k && k <= POOL_MAX_CLASS && u.buf.length > 0 && this.bufPool[k].length < POOL_PER_CLASS) {
      this.bufPool[k].push(u.buf);
    }
    u.buf = EMPTY;
    this.entryPool.push(u);
  }

  private releaseRecv(op: RecvOp): void {
    op.into = EMPTY;
    op.resolve = op.reject = null;
    op.error = null;
    this.recvPool.push(op);
  }

  private releaseSend(op: SendOp): void {
    op.data = EMPTY;
    op.resolve = op.reject = null;
    this.sendPool.push(op);
  }

  // ---- completion ----------------------------------------------------------------------

  /** A frozen status, reused while a source's tag and size repeat. */
  private statusOf(source: number, tag: number, bytes: number): Status {
    const last = this.lastStatus[source];
    if (last !== null && last.tag === tag && last.bytes === bytes) return last;
    const st: Status = Object.freeze({ source, tag, bytes });
    this.lastStatus[source] = st;
    this.lastResolved[source] = null;
    return st;
  }

  private resolvedStatus(source: number, tag: number, bytes: number): Promise<Status> {
    const st = this.statusOf(source, tag, bytes);
    let p = this.lastResolved[source];
    if (p === null) this.lastResolved[source] = p = Promise.resolve(st);
    return p;
  }

  private completeRecv(op: RecvOp, source: number, tag: number, bytes: number): void {
    this.pending--;
    if (op.resolve !== null) {
      op.resolve(this.statusOf(source, tag, bytes));
      this.releaseRecv(op);
    } else {
      op.done = true;
      op.stSource = source;
      op.stTag = tag;
      op.stBytes = bytes;
    }
  }

  private failRecv(op: RecvOp, err: Error): void {
    this.pending--;
    if (op.reject !== null) {
      op.reject(err);
      this.releaseRecv(op);
    } else {
      op.done = true;
      op.error = err;
    }
  }

  private deliverLocal(ctx: number, tag: number, data: Uint8Array): void {
    for (let op = this.postedHead; op !== null; op = op.next) {
      if (!matches(op, ctx, this.rank, tag)) continue;
      this.unlinkPosted(op);
      if (data.length > op.into.length) this.failRecv(op, truncation(this.rank, tag, data.length, op.into.length));
      else {
        op.into.set(data);
        this.completeRecv(op, this.rank, tag, data.length);
      }
      return;
    }
    const u = this.newUnexpected(ctx, this.rank, tag, data.length);
    u.buf.set(data);
    u.complete = true;
  }

  /** Completes `op` from a fully arrived unexpected message (already unlinked). */
  private finishFromUnexpected(op: RecvOp, u: Unexpected): void {
    if (u.len > op.into.length) this.failRecv(op, truncation(u.source, u.tag, u.len, op.into.length));
    else {
      const n = u.len;
      if (n <= 64) for (let i = 0; i < n; i++) op.into[i] = u.buf[i];
      else op.into.set(n === u.buf.length ? u.buf : u.buf.subarray(0, n));
      this.completeRecv(op, u.source, u.tag, n);
    }
    this.releaseUnexpected(u);
  }

  /**
   * `op` matched a message still arriving (already unlinked): the rest of it goes straight
   * into `op`'s buffer (or is discarded if it does not fit).
   */
  private adoptArriving(op: RecvOp, u: Unexpected): void {
    const s = u.source;
    if (u.len > op.into.length) this.sinkKind[s] = SINK_DISCARD;
    else {
      const got = (this.incoming[s] as Channel).messageOffset;
      if (got > 0) op.into.set(u.buf.subarray(0, got));
      this.sinkKind[s] = SINK_RECV;
    }
    this.sinkOp[s] = op;
    this.sinkEntry[s] = null;
    this.releaseUnexpected(u);
  }

  // ---- progress ------------------------------------------------------------------------

  private setFocus(peer: number): void {
    if (peer === this.focus || this.size > 32) return;
    this.focus = peer;
    this.focusBit = 1 << peer;
  }

  private kick(): void {
    this.poll();
    this.startLoop();
  }

  private startLoop(): void {
    if (this.pending > 0 && !this.looping && this.failure === undefined) {
      this.looping = true;
      void this.loop();
    }
  }

  private async loop(): Promise<void> {
    try {
      while (this.pending > 0 && this.failure === undefined) {
        if (this.poll()) {
          // Let the program react to completed operations before polling again.
          await RESOLVED;
          continue;
        }
        if (this.spin()) continue;
        if (this.collect()) {
          await RESOLVED;
          continue;
        }
        if (this.pending === 0 || this.failure !== undefined) break;
        Atomics.store(this.bellWords, this.sleepIndex, 1);
        const r = waitAsync(this.bellWords, this.bellIndex, 0);
        if (r.async) await r.value.then(this.woke);
        else this.woke();
      }
    } finally {
      this.looping = false;
      if (this.pending === 0 || this.failure !== undefined) this.wakeDrainers();
    }
  }

  private wakeDrainers(): void {
    for (const w of this.drainWaiters.splice(0)) w();
  }

  /**
   * Watches the doorbell (and the focus peer's channel indices) for a bounded number of loads
   * before the loop sleeps: a peer that answers within a few microseconds is seen without an
   * event-loop wake-up. Returns whether something changed.
   */
  private spin(): boolean {
    const words = this.bellWords;
    const i = this.bellIndex;
    const expected = this.bellExpected;
    const budget = this.spinLoads;
    const f = this.focus;
    if (f < 0) {
      for (let k = 0; k < budget; k++) if (Atomics.load(words, i) !== expected) return true;
      return false;
    }
    const inc = this.incoming[f] as Channel;
    const out = this.outgoing[f] as Channel;
    const watchOut = out.sending;
    for (let k = 0; k < budget; k += 2) {
      if (Atomics.load(words, i) !== expected || inc.hasNews || (watchOut && out.spaceFreed)) return true;
    }
    return false;
  }

  /**
   * Moves whatever data can move on the focus peer's channels and on those of the peers that
   * rang (collecting their bits, not the focus bit); returns whether anything moved.
   */
  private poll(): boolean {
    if (this.checkFailed()) return false;
    let progressed = this.focus >= 0 && this.pumpPeer(this.focus);
    const words = this.bellWords;
    const index = this.bellIndex;
    const bits = Atomics.load(words, index);
    const fb = this.focusBit;
    this.bellExpected = bits & fb;
    const others = bits & ~fb;
    if (others !== 0) {
      Atomics.and(words, index, ~others);
      if (this.pumpBits(others)) progressed = true;
    }
    return progressed;
  }

  /**
   * Before sleeping: collects the whole doorbell, focus bit included, and pumps those peers
   * and the focus peer; afterwards every later change rings the (now empty) doorbell.
   */
  private collect(): boolean {
    if (this.checkFailed()) return false;
    const bits = Atomics.exchange(this.bellWords, this.bellIndex, 0);
    this.bellExpected = 0;
    let progressed = this.focus >= 0 && this.pumpPeer(this.focus);
    if (this.pumpBits(bits & ~this.focusBit)) progressed = true;
    return progressed;
  }

  private pumpBits(bits: number): boolean {
    let progressed = false;
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      for (let peer = 31 - Math.clz32(low); peer < this.size; peer += 32) {
        if (peer !== this.rank && this.pumpPeer(peer)) progressed = true;
      }
    }
    return progressed;
  }

  private pumpPeer(peer: number): boolean {
    let progressed = this.sendQueues[peer].length > 0 && this.pumpOut(peer);
    if (this.pumpIn(peer)) progressed = true;
    return progressed;
  }

  private pumpOut(dest: number): boolean {
    const q = this.sendQueues[dest];
    const ch = this.outgoing[dest] as Channel;
    let progressed = false;
    while (q.length > 0) {
      if (!ch.sending) {
        const next = q.peek();
        ch.beginSend(next.ctx, next.tag, next.data);
      }
      if (ch.writeSome() > 0) progressed = true;
      if (ch.sending) break;
      const op = q.shift();
      this.pending--;
      (op.resolve as () => void)();
      this.releaseSend(op);
    }
    return progressed;
  }

  private pumpIn(source: number): boolean {
    const ch = this.incoming[source] as Channel;
    let progressed = false;
    for (;;) {
      let kind = this.sinkKind[source];
      if (kind === SINK_NONE) {
        // The first look loads the writer's index; later ones use what the last read saw
        // (newer messages ring the doorbell or show in `hasNews`).
        if (!ch.peek(!progressed)) break;
        progressed = true;
        kind = this.openSink(source, ch.messageCtx, ch.messageTag, ch.messageLength);
      }
      const dst =
        kind === SINK_RECV
          ? (this.sinkOp[source] as RecvOp).into
          : kind === SINK_UNEXPECTED
            ? (this.sinkEntry[source] as Unexpected).buf
            : null;
      if (ch.readSome(dst) > 0) progressed = true;
      if (ch.receiving) break;
      this.closeSink(source);
      progressed = true;
    }
    return progressed;
  }

  private openSink(source: number, ctx: number, tag: number, len: number): number {
    this.sinkTag[source] = tag;
    this.sinkLen[source] = len;
    for (let op = this.postedHead; op !== null; op = op.next) {
      if (!matches(op, ctx, source, tag)) continue;
      this.unlinkPosted(op);
      this.sinkOp[source] = op;
      return (this.sinkKind[source] = len > op.into.length ? SINK_DISCARD : SINK_RECV);
    }
    this.sinkEntry[source] = this.newUnexpected(ctx, source, tag, len);
    return (this.sinkKind[source] = SINK_UNEXPECTED);
  }

  private closeSink(source: number): void {
    const kind = this.sinkKind[source];
    const tag = this.sinkTag[source];
    const len = this.sinkLen[source];
    const op = this.sinkOp[source];
    const entry = this.sinkEntry[source];
    this.sinkKind[source] = SINK_NONE;
    this.sinkOp[source] = null;
    this.sinkEntry[source] = null;
    if (kind === SINK_RECV) this.completeRecv(op as RecvOp, source, tag, len);
    else if (kind === SINK_DISCARD) {
      const r = op as RecvOp;
      this.failRecv(r, truncation(source, tag, len, r.into.length));
    } else (entry as Unexpected).complete = true;
  }

  /** Fails every pending operation because `rank` failed. */
  private fail(rank: number): void {
    if (this.failure !== undefined) return;
    const err = new CommunicationError(`rank ${rank} failed`, { rank });
    this.failure = err;
    for (const q of this.sendQueues) {
      while (q.length > 0) {
        const op = q.shift();
        op.reject?.(err);
      }
    }
    for (let op = this.postedHead; op !== null; op = op.next) this.rejectOp(op, err);
    this.postedHead = this.postedTail = null;
    for (let s = 0; s < this.size; s++) {
      const op = this.sinkOp[s];
      if (op !== null) this.rejectOp(op, err);
      this.sinkOp[s] = null;
    }
    this.pending = 0;
    this.wakeDrainers();
  }

  private rejectOp(op: RecvOp, err: Error): void {
    if (op.reject !== null) op.reject(err);
    else {
      op.done = true;
      op.error = err;
    }
  }
}
