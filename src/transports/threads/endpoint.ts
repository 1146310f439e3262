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
 * many times it went to sleep (shared-layout.ts); the worker adds a heartbeat and RANK_FINISHED. When
 * every rank has slept without news for `deadlockMs` (or finished), the monitor records
 * RUN_DEADLOCKED in the failure word and rings everyone: every pending and later operation
 * of this rank fails with a DeadlockError listing this rank's pending operations. A program
 * that awaits something other than vcoll (a timer, I/O) for longer than `deadlockMs` while its
 * loop sleeps and every other rank waits for it is taken for deadlocked; one whose JS computes
 * is not (its heartbeat stops). A loop that never sleeps (`spinLoads` Infinity) is never seen
 * waiting: no deadlock is detected then.
 *
 * The parts: this file is the Endpoint API (argument checks, the paths that complete an
 * operation in the caller's turn, posting); progress.ts the progress engine (channels, send
 * queues, the incoming message of every source, the progress loop, completion, failure);
 * matching.ts the posted and unexpected queues; pools.ts the recycled records and buffers;
 * deadlock-state.ts what the endpoint publishes for the deadlock monitor and the DeadlockError
 * it fails with; schedule.ts the native executor of schedules (`bindSchedule`), whose
 * operations are this endpoint's own sends and receives without a request each (the
 * `schedule*` methods below, and the `owner` of a queued record, told by progress.ts on
 * completion). An endpoint is one object: its class is built up through those modules by
 * inheritance — RecordPools (pools.ts) ← MatchQueues (matching.ts) ← ProgressEngine
 * (progress.ts) ← ThreadsEndpoint — so the hot path reads its state with no indirection, from
 * one hidden class, with the call structure it had as one class (as separate objects, the
 * extra calls cost up to ~10% on some paths in V8, lost to inlining).
 */

import { ANY_SOURCE, ANY_TAG, type Received, type Status } from '../../comm/communicator.js';
import type { Endpoint } from '../../comm/endpoint.js';
import { OpRequest, type Request } from '../../comm/request.js';
import { byteLength, copyBytes, isMessageBuffer, type MessageBuffer } from '../../comm/segments.js';
import { badMaxBytes, badRank, badTag } from '../../comm/group.js';
import { InvalidArgumentError } from '../../errors.js';
import type { Bell, Channel } from './channel.js';
import { allocFor, matches, received, truncation } from './matching.js';
import { EMPTY, Fifo, RecvOp, type ScheduleOwner, SendOp, type Unexpected } from './pools.js';
import { ProgressEngine, RESOLVED, SINK_NONE } from './progress.js';
import type { RankWords } from './shared-layout.js';
import { ThreadsSchedule } from './schedule.js';
import type { EndpointSchedule, RankSchedule, ScheduleOptions } from '../../comm/schedule.js';

export { DEFAULT_SPIN_LOADS, defaultSpinLoads } from './progress.js';

/** The request of every send that completed at once (done requests are immutable: shared). */
const SENT: OpRequest<void> = OpRequest.done(undefined);
/** Loads a blocking `recv` watches its source's channel before it posts (see `irecvAwaited`). */
export const RECV_SPIN_LOADS = 256;

/** A rank's channels opened on first use (shared-layout.ts `channelSource`): O(active peers) of them. */
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
   * it waits for; `sleepIndex` is the word it sets while sleeping (see shared-layout.ts).
   */
  readonly bell: Bell;
  /** The run's failure word: 0, or 1 + the rank that failed. */
  readonly failure: { readonly words: Int32Array; readonly index: number };
  /** The node of every rank (default: all on node 0), e.g. to emulate a cluster's locality. */
  readonly nodes?: readonly number[];
  /** Loads the progress loop spins before it sleeps (default: `defaultSpinLoads()`; Infinity: never sleeps). */
  readonly spinLoads?: number;
  /**
   * This rank's state and progress words for the deadlock monitor (shared-layout.ts
   * `rankWordsOf`), written when the loop goes to sleep and wakes; absent: nothing is published.
   */
  readonly monitor?: RankWords;
  /**
   * The ranks the deadlock monitor found blocked outside vcoll when it declared the deadlock
   * (shared-layout.ts `blockedOutside`): named by this rank's DeadlockError. Absent: none named.
   */
  readonly blockedOutside?: () => readonly number[];
}

export class ThreadsEndpoint extends ProgressEngine implements Endpoint {
  readonly worldRank: number;
  readonly worldSize: number;
  private readonly nodes: readonly number[] | undefined;
  private readonly recvSpinLoads: number;

  constructor(init: ThreadsEndpointInit) {
    super(init);
    this.worldRank = init.rank;
    this.worldSize = init.size;
    this.nodes = init.nodes;
    this.recvSpinLoads = Math.min(this.spinLoads, RECV_SPIN_LOADS);
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

  /**
   * The native executor of a schedule (Endpoint.bindSchedule; schedule.ts): its operations are
   * this endpoint's own sends and receives, posted and matched as `isend`/`irecv` would (same
   * queues, same order), without a request per operation; `start()` returns one request.
   */
  bindSchedule(ctx: number, worldOf: Int32Array | null, schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions): EndpointSchedule {
    return new ThreadsSchedule(this, ctx, worldOf, schedule, buffers, options);
  }

  // ---- the native schedule executor's access (schedule.ts; not for programs) --------------

  /**
   * Posts a schedule's send (valid arguments; `dest` may be this rank): completes it at once
   * if it goes into the ring now (returns true), else queues it for `owner` (told by `opDone`),
   * behind the sends already queued to `dest` (as `isend`).
   */
  scheduleSend(owner: ScheduleOwner, index: number, run: number, ctx: number, dest: number, tag: number, data: MessageBuffer): boolean {
    if (dest === this.rank) {
      this.deliverLocal(ctx, tag, data);
      return true;
    }
    const q = (this.sendQueues[dest] ??= new Fifo<SendOp>());
    if (q.length === 0) {
      const ch = this.out(dest);
      if (data instanceof Uint8Array && ch.trySend(ctx, tag, data)) return true;
      ch.beginSend(ctx, tag, data);
      ch.writeSome();
      if (!ch.sending) return true;
    }
    const op = this.sendPool.pop() ?? new SendOp();
    op.ctx = ctx;
    op.tag = tag;
    op.data = data;
    op.req = null;
    op.owner = owner;
    op.ownerIndex = index;
    op.ownerRun = run;
    q.push(op);
    this.pending++;
    this.setFocus(dest);
    this.startLoop();
    return false;
  }

  /**
   * Posts a schedule's receive of `cap` bytes (valid arguments): returns the bytes received
   * if it completed at once, -1 if it is posted for `owner` (told by `opDone`); a truncated
   * message at once is thrown.
   */
  scheduleRecv(owner: ScheduleOwner, index: number, run: number, ctx: number, source: number, tag: number, into: MessageBuffer, cap: number): number {
    const direct = this.postedHead === null && this.unexpectedHead === null && source !== this.rank;
    if (direct) {
      const done = this.takeDirect(ctx, source, tag, into, cap);
      if (done !== null) return (done.value as Status).bytes;
    }
    const op = this.postRecv(ctx, source, tag, into, cap, false, !direct);
    if (op.done) {
      const err = op.error;
      const bytes = op.stBytes;
      this.releaseRecv(op);
      if (err !== null) throw err;
      return bytes;
    }
    op.owner = owner;
    op.ownerIndex = index;
    op.ownerRun = run;
    if (source !== this.rank) this.setFocus(source);
    this.startLoop();
    return -1;
  }

  /** A schedule has completed operations to act on: the progress loop resumes it at its next turn. */
  scheduleResume(owner: ScheduleOwner): void {
    this.scheduleReady(owner);
  }

  /**
   * For a schedule's `start()` that must wait: spins a bounded number of loads (at most those
   * of a blocking `recv`, `RECV_SPIN_LOADS`) for news, then moves what came; whether anything moved.
   */
  scheduleSpin(): boolean {
    return this.spinPoll(this.recvSpinLoads);
  }

  /** The endpoint's failure (the run failed or deadlocked), if any. */
  scheduleFailure(): Error | undefined {
    return this.checkFailed() ? this.failure : undefined;
  }

  /** A schedule's request settled from the progress loop and scheduled program code. */
  scheduleWoke(): void {
    this.woke = true;
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

  // ---- messages posted to this rank, and receives matched by queued messages -------------

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
}
