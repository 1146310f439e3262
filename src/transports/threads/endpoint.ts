/**
 * The Endpoint of the worker-threads transport: one SPSC channel per ordered pair of ranks
 * (opened on first use when given as a `ChannelSource`: a rank builds views only of the channels
 * it sends on, and of those its peers opened to it, so its memory follows its active peers),
 * MPI matching by (context, source, tag) with an unexpected-message queue, and a progress
 * engine that sleeps on the rank's doorbell with `Atomics.waitAsync` (never blocking the
 * thread). Communicators (world and split) are built on it by comm/group.ts.
 *
 * Operations return requests (comm/request.ts `OpRequest`): a promise exists only if somebody
 * awaits one, and `waitAll` over them needs one promise in all. Buffers may be vectored
 * (comm/segments.ts): a vectored send goes into the ring segment after segment as one message,
 * a vectored receive is filled segment after segment; no contiguous staging copy.
 *
 * Hot path (no structured clone; the data is copied into the ring and out of it, nothing else):
 * - `isend` writes the message into the ring at once when nothing is queued before it; if it
 *   fits, it returns one shared, already completed request (no allocation).
 * - `irecv` takes a message already in the ring straight into the receive buffer and returns
 *   an already completed request, cached per source while tag and size repeat (no allocation);
 *   otherwise it looks at the unexpected queue, posts, and polls.
 * - `irecvAwaited` (a blocking `recv`): with nothing else pending, first watches the source's
 *   channel for a bounded number of loads, so a reply that lands within microseconds is taken
 *   by `irecv`'s direct path (MPI_Recv's in-call progress); a long message already arriving
 *   is moved piece by piece at once.
 * - An operation that must wait allocates its request (the caller may keep it, so it cannot be
 *   pooled) and, if awaited, the request's promise. Everything else comes from pools (send and
 *   receive ops, unexpected messages and their buffers, by power-of-two size); queues are rings
 *   and linked lists (no `shift`/`splice`). Copies longer than 64 bytes make a typed-array view
 *   (`subarray`) for `TypedArray.set`.
 * - `poll` pumps the channels of the peers that rang the doorbell bitmap (clearing their bits)
 *   and those of the focus peer (the peer of the latest operation that had to wait, whose bit
 *   stays set while the rank is awake, so its writes cost it one load). The progress loop runs
 *   as a microtask after the operation that started it (so a program posts all it can before the
 *   loop spins); it yields to the program whenever it completed a request somebody awaits,
 *   spins on the doorbell and the focus channel's indices for a bounded number of loads
 *   (`spinLoads`, default VCOLL_THREADS_SPIN or DEFAULT_SPIN_LOADS), then collects the whole
 *   doorbell and sleeps; peers call `Atomics.notify` only for a sleeping rank. With nothing
 *   pending it lingers a few microtask turns before it ends, so that a program posting its next
 *   operation right after a completion does not start a new loop.
 * A rank that fails records itself in the run's failure word and rings everyone: every
 * pending and later operation fails with a CommunicationError naming it.
 *
 * Deadlocks (see run.ts): the sleep path — and nothing else — publishes, for `runThreads`'
 * deadlock monitor, that the loop sleeps with operations pending (state RANK_WAITING) and how
 * many times it went to sleep (layout.ts); the worker adds a heartbeat and RANK_FINISHED. When
 * every rank has slept without news for `deadlockMs` (or finished), the monitor records
 * RUN_DEADLOCKED in the failure word and rings everyone: every pending and later operation
 * of this rank fails with a DeadlockError listing this rank's pending operations. A program
 * that awaits something other than vcoll (a timer, I/O) for longer than `deadlockMs` while its
 * loop sleeps and every other rank waits for it is taken for deadlocked; one whose JS computes
 * is not (its heartbeat stops). A loop that never sleeps (`spinLoads` Infinity) is never seen
 * waiting: no deadlock is detected then.
 */

import { ANY_SOURCE, ANY_TAG, type Received, type Status } from '../../comm/communicator.js';
import type { Endpoint } from '../../comm/endpoint.js';
import { OpRequest, type Request } from '../../comm/request.js';
import { byteLength, copyBytes, isMessageBuffer, type MessageBuffer } from '../../comm/segments.js';
import { badMaxBytes, badRank, badTag } from '../../comm/group.js';
import { CommunicationError, DeadlockError, InvalidArgumentError, TruncationError } from '../../errors.js';
import { type Bell, Channel, waitAsync } from './channel.js';
import { PROGRESS_OFFSET, RANK_RUNNING, RANK_WAITING, RUN_DEADLOCKED, type RankWords } from './layout.js';

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
/** The request of every send that completed at once (done requests are immutable: shared). */
const SENT: OpRequest<void> = OpRequest.done(undefined);
// What `spin` saw.
const NO_NEWS = 0;
const FOCUS_NEWS = 1;
const BELL_NEWS = 2;
/** Loads a blocking `recv` watches its source's channel before it posts (see `irecvAwaited`). */
export const RECV_SPIN_LOADS = 256;
/** Microtask turns the progress loop waits, with nothing pending, for the program's next operation. */
const LINGER_TURNS = 3;
/** Pending operations a DeadlockError lists (in `ranks`; its message shows fewer), the rest counted. */
const DEADLOCK_LIST_MAX = 64;
/** Pending operations a DeadlockError's message shows. */
const DEADLOCK_MESSAGE_MAX = 8;
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
  data: MessageBuffer = EMPTY;
  req: OpRequest<void> | null = null;
}

class RecvOp {
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

/** A receive of unknown size gets a buffer of the matched message's size (if within its limit). */
function allocFor(op: RecvOp, len: number): void {
  if (op.alloc && len <= op.cap) op.into = new Uint8Array(len);
}

/** What a completed receive of unknown size resolves with. */
function received(op: RecvOp, source: number, tag: number, bytes: number): Received {
  return { source, tag, bytes, data: op.into as Uint8Array };
}

function truncation(source: number, tag: number, len: number, cap: number, rank: number): CommunicationError {
  return new TruncationError(`message of ${len} bytes from rank ${source} (tag ${tag}) exceeds the receive buffer of ${cap} bytes`, len, cap, { rank });
}

/** log2 of the smallest power of two ≥ n (n ≥ 1). */
function sizeClass(n: number): number {
  return n <= 1 ? 0 : 32 - Math.clz32(n - 1);
}

/** A rank's channels opened on first use (layout.ts `channelSource`): O(active peers) of them. */
export interface ChannelSource {
  /** The channel to `dest` (≠ this rank); opening it marks the pair in use. */
  to(dest: number): Channel;
  /** The channel from `source` (≠ this rank). */
  from(source: number): Channel;
  /** Whether `source` opened its channel to this rank (else it holds nothing yet). */
  written(source: number): boolean;
}

export interface ThreadsEndpointInit {
  readonly rank: number;
  readonly size: number;
  /** `outgoing[d]`: the channel to rank d (null for d = rank); or give `channels`. */
  readonly outgoing?: readonly (Channel | null)[];
  /** `incoming[s]`: the channel from rank s (null for s = rank); or give `channels`. */
  readonly incoming?: readonly (Channel | null)[];
  /** The channels, opened as they are first used (instead of `outgoing` and `incoming`). */
  readonly channels?: ChannelSource;
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
  /**
   * This rank's state and progress words for the deadlock monitor (layout.ts `rankWordsOf`),
   * written when the loop goes to sleep and wakes; absent: nothing is published.
   */
  readonly monitor?: RankWords;
  /**
   * The ranks the deadlock monitor found blocked outside vcoll when it declared the deadlock
   * (layout.ts `blockedOutside`): named by this rank's DeadlockError. Absent: none named.
   */
  readonly blockedOutside?: () => readonly number[];
}

export class ThreadsEndpoint implements Endpoint {
  readonly worldRank: number;
  readonly worldSize: number;
  private readonly rank: number;
  private readonly size: number;
  /** Channels opened so far (undefined: not yet; null: this rank). */
  private readonly outgoing: (Channel | null | undefined)[];
  private readonly incoming: (Channel | null | undefined)[];
  private readonly source: ChannelSource | undefined;
  private readonly bellWords: Int32Array;
  private readonly bellIndex: number;
  private readonly sleepIndex: number;
  private readonly failWords: Int32Array;
  private readonly failIndex: number;
  private readonly nodes: readonly number[] | undefined;
  private readonly spinLoads: number;
  private readonly recvSpinLoads: number;
  /** The deadlock monitor's words of this rank (null: none) and how many times the loop slept. */
  private readonly monWords: Int32Array | null;
  private readonly monIndex: number;
  private readonly blockedOutside: (() => readonly number[]) | undefined;
  private sleeps = 0;

  /** Sends waiting for ring space, per destination (created on first use: memory follows active peers). */
  private readonly sendQueues: (Fifo<SendOp> | undefined)[];
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

  // The last status per source and its completed request, reused while tag and size repeat.
  private readonly lastStatus: (Status | null)[];
  private readonly lastDone: (OpRequest<Status> | null)[];

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
  /**
   * Sources whose channel holds consumed space not yet released to the writer (short messages
   * release lazily, see Channel.readWhole): released by the loop's next turn — after the program
   * has reacted to the message — and before the loop sleeps or ends, and by `drain`. Never more
   * than a quarter of a ring waits so: a writer waiting for that space has a receive posted for
   * its message (then the loop runs), or its send completes once this rank drains.
   */
  private readonly unpublished: Int32Array;
  private unpublishedCount = 0;
  private readonly isUnpublished: Uint8Array;
  /** Whether a completion since the loop last looked scheduled program code (a continuation). */
  private woke = false;
  private failure: CommunicationError | undefined;
  private readonly drainWaiters: (() => void)[] = [];

  constructor(init: ThreadsEndpointInit) {
    this.rank = this.worldRank = init.rank;
    this.size = this.worldSize = init.size;
    this.source = init.channels;
    if (init.channels === undefined && (init.outgoing === undefined || init.incoming === undefined)) {
      throw new InvalidArgumentError('channels', 'give either channels or outgoing and incoming', { rank: init.rank });
    }
    this.outgoing = init.outgoing !== undefined ? Array.from(init.outgoing) : new Array<Channel | null | undefined>(init.size);
    this.incoming = init.incoming !== undefined ? Array.from(init.incoming) : new Array<Channel | null | undefined>(init.size);
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
    this.recvSpinLoads = Math.min(this.spinLoads, RECV_SPIN_LOADS);
    this.monWords = init.monitor?.words ?? null;
    this.monIndex = init.monitor?.index ?? 0;
    this.blockedOutside = init.blockedOutside;
    const p = init.size;
    this.sendQueues = new Array<Fifo<SendOp> | undefined>(p);
    this.sinkKind = new Uint8Array(p);
    this.sinkOp = new Array<RecvOp | null>(p).fill(null);
    this.sinkEntry = new Array<Unexpected | null>(p).fill(null);
    this.sinkTag = new Int32Array(p);
    this.sinkLen = new Float64Array(p);
    this.lastStatus = new Array<Status | null>(p).fill(null);
    this.lastDone = new Array<OpRequest<Status> | null>(p).fill(null);
    this.unpublished = new Int32Array(p);
    this.isUnpublished = new Uint8Array(p);
  }

  /** The channel to `dest` (≠ this rank), opened on first use. */
  private out(dest: number): Channel {
    return (this.outgoing[dest] ??= (this.source as ChannelSource).to(dest));
  }

  /** The channel from `source` (≠ this rank). */
  private inc(source: number): Channel {
    return (this.incoming[source] ??= (this.source as ChannelSource).from(source));
  }

  /** Whether no operation of this rank is pending. */
  get idle(): boolean {
    return this.pending === 0;
  }

  /** The failure that stopped this endpoint, if any. */
  get failed(): CommunicationError | undefined {
    return this.failure;
  }

  /**
   * What is wrong with the arguments of an operation (undefined: nothing). Errors name the
   * field and this rank, as the world communicator's own checks would (comm/group.ts), so that
   * it can leave the checks to the endpoint.
   */
  private badArgs(ctx: number, peerField: string, peer: number, tag: number, bufField: string, buf: MessageBuffer, wildcards: boolean): Error | undefined {
    const size = this.size;
    if (!((peer | 0) === peer && peer < size && (peer >= 0 || (wildcards && peer === ANY_SOURCE)))) {
      return badRank(peerField, peer, size, wildcards, this.rank);
    }
    if (!((tag | 0) === tag && (tag >= 0 || (wildcards && tag === ANY_TAG)))) return badTag(tag, wildcards, this.rank);
    if (!((ctx | 0) === ctx && ctx >= 0)) {
      return new InvalidArgumentError('ctx', `must be a non-negative int32, got ${ctx}`, { rank: this.rank });
    }
    if (!isMessageBuffer(buf)) return new InvalidArgumentError(bufField, 'must be a Uint8Array or an array of them (communicators take any typed array or DataView)', { rank: this.rank });
    return undefined;
  }

  /** Whether the run failed (then fails this endpoint); reads the shared failure word. */
  private checkFailed(): boolean {
    if (this.failure !== undefined) return true;
    // A plain read first (Atomics.load costs ~15 ns; the word changes once, if ever).
    if (this.failWords[this.failIndex] === 0) return false;
    const f = Atomics.load(this.failWords, this.failIndex);
    if (f === 0) return false;
    if (f === RUN_DEADLOCKED) this.failDeadlock();
    else this.fail(f - 1);
    return true;
  }

  isend(ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void> {
    if (
      !(data instanceof Uint8Array && (dest | 0) === dest && dest >= 0 && dest < this.size && (tag | 0) === tag && tag >= 0 && (ctx | 0) === ctx && ctx >= 0)
    ) {
      const bad = this.badArgs(ctx, 'dest', dest, tag, 'data', data, false);
      if (bad !== undefined) return OpRequest.failed(bad);
    }
    if (this.checkFailed()) return OpRequest.failed(this.failure);
    if (dest === this.rank) {
      this.deliverLocal(ctx, tag, data);
      return SENT;
    }
    const q = (this.sendQueues[dest] ??= new Fifo<SendOp>());
    if (q.length === 0) {
      const ch = this.out(dest);
      if (data instanceof Uint8Array && ch.trySend(ctx, tag, data)) return SENT;
      ch.beginSend(ctx, tag, data);
      ch.writeSome();
      if (!ch.sending) return SENT;
    }
    const op = this.sendPool.pop() ?? new SendOp();
    op.ctx = ctx;
    op.tag = tag;
    op.data = data;
    const req = (op.req = new OpRequest<void>());
    q.push(op);
    this.pending++;
    this.setFocus(dest);
    this.startLoop();
    return req;
  }

  irecv(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status> {
    let cap: number;
    if (
      into instanceof Uint8Array &&
      (source | 0) === source &&
      source < this.size &&
      (source >= 0 || source === ANY_SOURCE) &&
      (tag | 0) === tag &&
      (tag >= 0 || tag === ANY_TAG) &&
      (ctx | 0) === ctx &&
      ctx >= 0
    ) {
      cap = into.length;
    } else {
      const bad = this.badArgs(ctx, 'source', source, tag, 'into', into, true);
      if (bad !== undefined) return OpRequest.failed(bad);
      cap = byteLength(into);
    }
    if (this.checkFailed()) return OpRequest.failed(this.failure);
    const direct = source >= 0 && this.postedHead === null && this.unexpectedHead === null && source !== this.rank;
    if (direct) {
      const done = this.takeDirect(ctx, source, tag, into, cap);
      if (done !== null) return done;
    }
    const op = this.postRecv(ctx, source, tag, into, cap, false, !direct);
    if (op.done) {
      const result = op.error !== null ? OpRequest.failed<Status>(op.error) : this.doneRequest(op.stSource, op.stTag, op.stBytes);
      this.releaseRecv(op);
      return result;
    }
    const req = (op.req = new OpRequest<Status>());
    if (source !== ANY_SOURCE && source !== this.rank) this.setFocus(source);
    this.startLoop();
    return req;
  }

  /**
   * A receive of unknown size (Communicator.irecvAlloc): posted and matched like `irecv`; the
   * buffer is allocated with the matched message's size (`fit`), and the data is moved into it
   * by the same paths (no fast paths that assume a buffer: `takeDirect`, `takeFocus`).
   */
  irecvAlloc(ctx: number, source: number, tag: number, maxBytes: number): Request<Received> {
    const bad = this.badArgs(ctx, 'source', source, tag, 'into', EMPTY, true) ?? badMaxBytes(maxBytes, this.rank);
    if (bad !== undefined) return OpRequest.failed(bad);
    if (this.checkFailed()) return OpRequest.failed(this.failure);
    const op = this.postRecv(ctx, source, tag, EMPTY, maxBytes, true, true);
    if (op.done) {
      const result = op.error !== null ? OpRequest.failed<Received>(op.error) : OpRequest.done(received(op, op.stSource, op.stTag, op.stBytes));
      this.releaseRecv(op);
      return result;
    }
    const req = new OpRequest<Received>();
    op.req = req as OpRequest<unknown> as OpRequest<Status>;
    if (source !== ANY_SOURCE && source !== this.rank) this.setFocus(source);
    this.startLoop();
    return req;
  }

  /**
   * A new receive operation: completed from the unexpected queue if a message there matches,
   * else posted; then (`poll`) what has arrived is moved. The caller looks at `op.done`.
   */
  private postRecv(ctx: number, source: number, tag: number, into: MessageBuffer, cap: number, alloc: boolean, poll: boolean): RecvOp {
    const op = this.recvPool.pop() ?? new RecvOp();
    op.ctx = ctx;
    op.source = source;
    op.tag = tag;
    op.into = into;
    op.cap = cap;
    op.alloc = alloc;
    op.req = null;
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
    // Unless the ring of the only possible source was just looked at, move what has arrived.
    if (!op.done && poll) this.poll();
    return op;
  }

  /**
   * A receive the caller awaits at once (a blocking `recv`): when this rank has nothing else
   * pending and nothing queued could match first, it first watches the source's channel for
   * up to RECV_SPIN_LOADS loads (never more than `spinLoads`), so a reply that lands within a
   * few microseconds is taken straight into `into` by `irecv`'s direct path — no progress-loop
   * turn, no promise of a pending request. Otherwise, or if nothing came, it is `irecv`. The
   * watch is bounded: JS of the program that would post the peer's awaited message later in
   * the same turn is delayed by at most those loads (~2-4 µs), never blocked.
   */
  irecvAwaited(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status> {
    if (
      this.pending === 0 &&
      this.unexpectedHead === null &&
      this.failure === undefined &&
      (source | 0) === source &&
      source >= 0 &&
      source < this.size &&
      source !== this.rank &&
      this.sinkKind[source] === SINK_NONE
    ) {
      const ch = this.inc(source);
      if (!ch.peek()) {
        const budget = this.recvSpinLoads;
        for (let k = 0; k < budget; k++) {
          if (!ch.hasNews) continue;
          // Arguments are valid once irecv would accept them: then take the message here.
          if (into instanceof Uint8Array && (tag | 0) === tag && (tag >= 0 || tag === ANY_TAG) && (ctx | 0) === ctx && ctx >= 0) {
            const done = this.takeDirect(ctx, source, tag, into, into.length);
            if (done !== null) return done;
          }
          break;
        }
      }
      const req = this.irecv(ctx, source, tag, into);
      // A long message of `source` has begun to arrive for this receive alone: move it now,
      // piece by piece while the writer keeps up (readSome waits briefly between pieces),
      // rather than a progress-loop turn per piece. (`irecv` changed `pending`: no narrowing.)
      if ((this.pending as number) === 1 && this.sinkKind[source] === SINK_NONE && ch.receiving && req instanceof OpRequest && req.pending) {
        this.pumpIn(source);
      }
      return req;
    }
    return this.irecv(ctx, source, tag, into);
  }

  /**
   * When nothing can match before a receive (no posted receive, no unexpected message, no
   * message of `source` half taken): takes `source`'s next message if it is already in the
   * ring, fits and matches, and returns the completed request; null otherwise.
   */
  private takeDirect(ctx: number, source: number, tag: number, into: MessageBuffer, cap: number): OpRequest<Status> | null {
    const ch = this.inc(source);
    if (
      this.sinkKind[source] === SINK_NONE &&
      ch.peek() &&
      ch.messageCtx === ctx &&
      (tag === ANY_TAG || ch.messageTag === tag) &&
      ch.messageLength <= cap
    ) {
      const t = ch.messageTag;
      const len = ch.messageLength;
      if (into instanceof Uint8Array) {
        if (ch.readWhole(into)) {
          this.noteUnpublished(source, ch);
          return this.doneRequest(source, t, len);
        }
      } else if (ch.messageReady()) {
        ch.readSome(into);
        return this.doneRequest(source, t, len);
      }
    }
    return null;
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    dst.set(src);
  }

  /** The node of `worldRank`: 0 (all threads share one machine) unless the run assigned nodes. */
  nodeOf(worldRank: number): number {
    const bad = badRank('worldRank', worldRank, this.size, false, this.rank);
    if (bad !== undefined) throw bad;
    return this.nodes === undefined ? 0 : this.nodes[worldRank];
  }

  /** Resolves once no operation of this rank is pending (or the endpoint failed). */
  drain(): Promise<void> {
    this.publishAll();
    if (this.pending === 0 || this.failure !== undefined) return RESOLVED;
    this.startLoop();
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
    op.alloc = false;
    op.req = null;
    op.error = null;
    this.recvPool.push(op);
  }

  private releaseSend(op: SendOp): void {
    op.data = EMPTY;
    op.req = null;
    this.sendPool.push(op);
  }

  // ---- completion ----------------------------------------------------------------------

  /** A frozen status, reused while a source's tag and size repeat. */
  private statusOf(source: number, tag: number, bytes: number): Status {
    const last = this.lastStatus[source];
    if (last !== null && last.tag === tag && last.bytes === bytes) return last;
    const st: Status = Object.freeze({ source, tag, bytes });
    this.lastStatus[source] = st;
    this.lastDone[source] = null;
    return st;
  }

  /** A completed receive's request: shared while a source's tag and size repeat. */
  private doneRequest(source: number, tag: number, bytes: number): OpRequest<Status> {
    const st = this.statusOf(source, tag, bytes);
    let r = this.lastDone[source];
    if (r === null) this.lastDone[source] = r = OpRequest.done(st);
    return r;
  }

  private completeRecv(op: RecvOp, source: number, tag: number, bytes: number): void {
    this.pending--;
    const req = op.req;
    if (req !== null) {
      const st = op.alloc ? received(op, source, tag, bytes) : this.statusOf(source, tag, bytes);
      this.releaseRecv(op);
      if (req.resolve(st)) this.woke = true;
    } else {
      op.done = true;
      op.stSource = source;
      op.stTag = tag;
      op.stBytes = bytes;
    }
  }

  private failRecv(op: RecvOp, err: Error): void {
    this.pending--;
    const req = op.req;
    if (req !== null) {
      this.releaseRecv(op);
      if (req.reject(err)) this.woke = true;
    } else {
      op.done = true;
      op.error = err;
    }
  }

  private deliverLocal(ctx: number, tag: number, data: MessageBuffer): void {
    const len = data instanceof Uint8Array ? data.length : byteLength(data);
    for (let op = this.postedHead; op !== null; op = op.next) {
      if (!matches(op, ctx, this.rank, tag)) continue;
      this.unlinkPosted(op);
      allocFor(op, len);
      if (len > op.cap) this.failRecv(op, truncation(this.rank, tag, len, op.cap, this.rank));
      else {
        copyBytes(op.into, data, len);
        this.completeRecv(op, this.rank, tag, len);
      }
      return;
    }
    const u = this.newUnexpected(ctx, this.rank, tag, len);
    copyBytes(u.buf, data, len);
    u.complete = true;
  }

  /** Completes `op` from a fully arrived unexpected message (already unlinked). */
  private finishFromUnexpected(op: RecvOp, u: Unexpected): void {
    allocFor(op, u.len);
    if (u.len > op.cap) this.failRecv(op, truncation(u.source, u.tag, u.len, op.cap, this.rank));
    else {
      const n = u.len;
      const into = op.into;
      if (n <= 64 && into instanceof Uint8Array) for (let i = 0; i < n; i++) into[i] = u.buf[i];
      else copyBytes(into, u.buf, n);
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
    allocFor(op, u.len);
    if (u.len > op.cap) this.sinkKind[s] = SINK_DISCARD;
    else {
      const got = this.inc(s).messageOffset;
      if (got > 0) copyBytes(op.into, u.buf, got);
      this.sinkKind[s] = SINK_RECV;
    }
    this.sinkOp[s] = op;
    this.sinkEntry[s] = null;
    this.releaseUnexpected(u);
  }

  // ---- progress ------------------------------------------------------------------------

  private noteUnpublished(source: number, ch: Channel): void {
    if (this.isUnpublished[source] === 0 && ch.unpublished) {
      this.isUnpublished[source] = 1;
      this.unpublished[this.unpublishedCount++] = source;
    }
  }

  /** Releases the ring space of every consumed message to its writer. */
  private publishAll(): void {
    const n = this.unpublishedCount;
    if (n === 0) return;
    for (let i = 0; i < n; i++) {
      const s = this.unpublished[i];
      this.isUnpublished[s] = 0;
      this.inc(s).publish();
    }
    this.unpublishedCount = 0;
  }

  private setFocus(peer: number): void {
    if (peer === this.focus || this.size > 32) return;
    this.focus = peer;
    this.focusBit = 1 << peer;
  }

  private startLoop(): void {
    if (!this.looping && this.failure === undefined) {
      this.looping = true;
      void this.loop();
    }
  }

  private async loop(): Promise<void> {
    try {
      // First let the program post whatever else it can (e.g. the send after an irecv).
      await RESOLVED;
      let idle = 0;
      while (this.failure === undefined) {
        this.publishAll();
        if (this.pending === 0) {
          if (idle++ === LINGER_TURNS) break;
          await RESOLVED;
          continue;
        }
        idle = 0;
        this.woke = false;
        if (this.poll()) {
          // Let the program react to completed operations before polling again.
          if (this.woke) await RESOLVED;
          continue;
        }
        const news = this.spin();
        if (news === FOCUS_NEWS) {
          // Only the focus peer's channel moved: take its message, and yield at once if that
          // completed an operation somebody awaits (the doorbell is looked at afterwards).
          if (this.takeFocus() && this.woke) await RESOLVED;
          continue;
        }
        if (news === BELL_NEWS) continue;
        if (this.collect()) {
          if (this.woke) await RESOLVED;
          continue;
        }
        if (this.pending === 0 || this.failure !== undefined) continue;
        const mon = this.monWords;
        if (mon !== null) {
          // For the deadlock monitor: one more sleep (published first), asleep with work pending
          // (unless the worker already recorded the rank finished).
          this.sleeps = (this.sleeps + 1) | 0;
          Atomics.store(mon, this.monIndex + PROGRESS_OFFSET, this.sleeps);
          Atomics.compareExchange(mon, this.monIndex, RANK_RUNNING, RANK_WAITING);
        }
        Atomics.store(this.bellWords, this.sleepIndex, 1);
        const r = waitAsync(this.bellWords, this.bellIndex, 0);
        if (r.async) await r.value;
        Atomics.store(this.bellWords, this.sleepIndex, 0);
        if (mon !== null) Atomics.compareExchange(mon, this.monIndex, RANK_WAITING, RANK_RUNNING);
      }
    } finally {
      this.publishAll();
      this.looping = false;
      if (this.drainWaiters.length > 0 && (this.pending === 0 || this.failure !== undefined)) this.wakeDrainers();
    }
  }

  private wakeDrainers(): void {
    for (const w of this.drainWaiters.splice(0)) w();
  }

  /**
   * Watches the doorbell (and the focus peer's channel indices) for a bounded number of loads
   * before the loop sleeps: a peer that answers within a few microseconds is seen without an
   * event-loop wake-up. Returns what changed: FOCUS_NEWS (the focus peer's channels), BELL_NEWS
   * (the doorbell) or NO_NEWS.
   */
  private spin(): number {
    const words = this.bellWords;
    const i = this.bellIndex;
    const expected = this.bellExpected;
    const budget = this.spinLoads;
    const f = this.focus;
    if (f < 0) {
      for (let k = 0; k < budget; k++) if (Atomics.load(words, i) !== expected) return BELL_NEWS;
      return NO_NEWS;
    }
    const inc = this.inc(f);
    // The channel to the focus peer only if this rank opened it (it sends to it).
    const out = this.outgoing[f];
    const watchOut = out != null && out.sending;
    for (let k = 0; k < budget; k += 2) {
      if (inc.hasNews || (watchOut && (out as Channel).spaceFreed)) return FOCUS_NEWS;
      if (Atomics.load(words, i) !== expected) return BELL_NEWS;
    }
    return NO_NEWS;
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
    this.publishAll();
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

  /**
   * After the focus peer's channel moved: the common case — a short message that completes the
   * first posted receive — straight away; anything else by `pumpPeer`.
   */
  private takeFocus(): boolean {
    const s = this.focus;
    const op = this.postedHead;
    if (op !== null && !op.alloc && this.sinkKind[s] === SINK_NONE) {
      const ch = this.inc(s);
      const into = op.into;
      if (ch.peek(false) && into instanceof Uint8Array) {
        const tag = ch.messageTag;
        const len = ch.messageLength;
        if (matches(op, ch.messageCtx, s, tag) && len <= op.cap && ch.readWhole(into)) {
          this.unlinkPosted(op);
          this.noteUnpublished(s, ch);
          this.completeRecv(op, s, tag, len);
          return true;
        }
      }
    }
    return this.pumpPeer(s);
  }

  private pumpPeer(peer: number): boolean {
    let progressed = (this.sendQueues[peer]?.length ?? 0) > 0 && this.pumpOut(peer);
    if (this.pumpIn(peer)) progressed = true;
    return progressed;
  }

  private pumpOut(dest: number): boolean {
    const q = this.sendQueues[dest] as Fifo<SendOp>;
    const ch = this.out(dest);
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
      const req = op.req as OpRequest<void>;
      this.releaseSend(op);
      if (req.resolve(undefined)) this.woke = true;
    }
    return progressed;
  }

  private pumpIn(source: number): boolean {
    let ch = this.incoming[source];
    if (ch == null) {
      // Never opened by its sender: nothing to read (and no view to build).
      if (ch === null || !(this.source as ChannelSource).written(source)) return false;
      ch = this.incoming[source] = (this.source as ChannelSource).from(source);
    }
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
      let dst: MessageBuffer | null = null;
      if (kind === SINK_RECV) {
        dst = (this.sinkOp[source] as RecvOp).into;
        if (dst instanceof Uint8Array && ch.readWhole(dst)) {
          this.noteUnpublished(source, ch);
          this.closeSink(source);
          progressed = true;
          continue;
        }
      } else if (kind === SINK_UNEXPECTED) dst = (this.sinkEntry[source] as Unexpected).buf;
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
      allocFor(op, len);
      return (this.sinkKind[source] = len > op.cap ? SINK_DISCARD : SINK_RECV);
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
      this.failRecv(r, truncation(source, tag, len, r.cap, this.rank));
    } else (entry as Unexpected).complete = true;
  }

  /**
   * This rank's pending operations, oldest receives first, then sends by destination, e.g.
   * "recv from 3 tag 5 (context 2)", "send to 1 tag 5 (65536 bytes)"; past `max`, a last entry
   * counts the rest.
   */
  pendingOperations(max = Infinity): string[] {
    const out: string[] = [];
    let more = 0;
    const add = (what: string): void => {
      if (out.length < max) out.push(what);
      else more++;
    };
    const ctxOf = (ctx: number): string => (ctx === 0 ? '' : ` (context ${ctx})`);
    const recv = (op: RecvOp): string =>
      `recv from ${op.source === ANY_SOURCE ? 'any source' : op.source} tag ${op.tag === ANY_TAG ? 'any tag' : op.tag}${ctxOf(op.ctx)}`;
    for (let s = 0; s < this.size; s++) {
      const op = this.sinkOp[s];
      if (op === null) continue;
      const ch = this.inc(s);
      add(`${recv(op)}, matched by a message from ${s} (${ch.messageOffset} of ${this.sinkLen[s]} bytes arrived)`);
    }
    for (let op = this.postedHead; op !== null; op = op.next) add(recv(op));
    for (let d = 0; d < this.size; d++) {
      const q = this.sendQueues[d];
      if (q === undefined || q.length === 0) continue;
      // The queue is a ring: take every op out and put it back, in order.
      for (let i = q.length; i > 0; i--) {
        const op = q.shift();
        add(`send to ${d} tag ${op.tag} (${byteLength(op.data)} bytes)${ctxOf(op.ctx)}`);
        q.push(op);
      }
    }
    if (more > 0) out.push(`${more} more`);
    return out;
  }

  /** Fails every pending operation because `rank` failed. */
  private fail(rank: number): void {
    if (this.failure !== undefined) return;
    this.failWith(new CommunicationError(`rank ${rank} failed`, { rank }));
  }

  /** Fails every pending operation because the run deadlocked, listing them. */
  private failDeadlock(): void {
    if (this.failure !== undefined) return;
    const waitsFor = this.pendingOperations(DEADLOCK_LIST_MAX);
    const shown = waitsFor.slice(0, DEADLOCK_MESSAGE_MAX);
    if (waitsFor.length > shown.length) shown.push('…');
    const what = waitsFor.length === 0 ? 'nothing pending' : `waits for ${shown.join(', ')}`;
    const outside = this.blockedOutside?.() ?? [];
    const shownOutside = outside.slice(0, DEADLOCK_MESSAGE_MAX).map((r) => `rank ${r} blocked outside the communicator`);
    if (outside.length > shownOutside.length) shownOutside.push(`${outside.length - shownOutside.length} more ranks blocked outside`);
    const message =
      outside.length === 0
        ? `deadlock: every rank of the run waits for a message that will never come (or has finished); rank ${this.rank} ${what}`
        : `deadlock: every rank of the run waits for a message that will never come, has finished or is blocked outside the communicator (${shownOutside.join(', ')}: its program awaits something other than vcoll); rank ${this.rank} ${what}`;
    this.failWith(new DeadlockError(message, [{ rank: this.rank, finished: false, waitsFor }], { rank: this.rank }));
  }

  private failWith(err: CommunicationError): void {
    this.failure = err;
    for (const q of this.sendQueues) {
      while (q !== undefined && q.length > 0) {
        q.shift().req?.reject(err);
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
    if (op.req !== null) op.req.reject(err);
    else {
      op.done = true;
      op.error = err;
    }
  }
}
