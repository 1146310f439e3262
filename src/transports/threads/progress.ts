/**
 * The progress engine of a threads endpoint (endpoint.ts extends it with the Endpoint API;
 * it extends the queues of matching.ts): a rank's channels, its send queues, the incoming
 * message of every source and where it goes, completion, and the progress loop that moves
 * data — pumping the channels of the peers that rang the doorbell and of the focus peer,
 * spinning a bounded number of loads, then sleeping in `Atomics.waitAsync` — and failing every
 * pending operation once the run failed or deadlocked. endpoint.ts describes the design.
 */

import { ANY_SOURCE, ANY_TAG, type Status } from '../../comm/communicator.js';
import { OpRequest } from '../../comm/request.js';
import { byteLength, copyBytes, type MessageBuffer } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError } from '../../errors.js';
import { Channel, waitAsync } from './channel.js';
import { DEADLOCK_LIST_MAX, MonitorWords, deadlockError } from './deadlock-state.js';
import type { ChannelSource, ThreadsEndpointInit } from './endpoint.js';
import { MatchQueues, allocFor, matches, received, truncation } from './matching.js';
import type { Fifo, RecvOp, ScheduleOwner, SendOp, Unexpected } from './pools.js';
import { RUN_DEADLOCKED } from './shared-layout.js';
import { tagText } from '../../comm/tags.js';

/** Loads the progress loop spins before it sleeps (an Atomics.load costs ~10-15 ns on V8/x86: ~20-30 µs). */
export const DEFAULT_SPIN_LOADS = 2000;

/** The spin budget when none is given: VCOLL_THREADS_SPIN if it is a number ≥ 0, else DEFAULT_SPIN_LOADS. */
export function defaultSpinLoads(): number {
  const env = process.env.VCOLL_THREADS_SPIN;
  const n = Number(env);
  return env !== undefined && env !== '' && n >= 0 ? n : DEFAULT_SPIN_LOADS;
}
export const RESOLVED: Promise<void> = Promise.resolve();
// What `spin` saw.
const NO_NEWS = 0;
const FOCUS_NEWS = 1;
const BELL_NEWS = 2;
/** Microtask turns the progress loop waits, with nothing pending, for the program's next operation. */
const LINGER_TURNS = 3;

// What the payload of the message arriving on an incoming channel is copied into.
export const SINK_NONE = 0;
const SINK_RECV = 1;
const SINK_UNEXPECTED = 2;
const SINK_DISCARD = 3;

export abstract class ProgressEngine extends MatchQueues {
  protected readonly rank: number;
  protected readonly size: number;
  /** Channels opened so far (undefined: not yet; null: this rank). */
  protected readonly outgoing: (Channel | null | undefined)[];
  protected readonly incoming: (Channel | null | undefined)[];
  private readonly source: ChannelSource | undefined;
  private readonly bellWords: Int32Array;
  private readonly bellIndex: number;
  private readonly sleepIndex: number;
  protected readonly failWords: Int32Array;
  protected readonly failIndex: number;
  protected readonly spinLoads: number;
  /** The deadlock monitor's words of this rank (null: none). */
  private readonly monitor: MonitorWords | null;
  private readonly blockedOutside: (() => readonly number[]) | undefined;

  /** Sends waiting for ring space, per destination (created on first use: memory follows active peers). */
  protected readonly sendQueues: (Fifo<SendOp> | undefined)[];

  // The incoming message of every source: where it goes, its tag and length.
  protected readonly sinkKind: Uint8Array;
  protected readonly sinkOp: (RecvOp | null)[];
  protected readonly sinkEntry: (Unexpected | null)[];
  private readonly sinkTag: Int32Array;
  private readonly sinkLen: Float64Array;

  // The last status per source and its completed request, reused while tag and size repeat.
  private readonly lastStatus: (Status | null)[];
  private readonly lastDone: (OpRequest<Status> | null)[];

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

  protected pending = 0;
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
  protected woke = false;
  /** Whether the loop sleeps in `Atomics.waitAsync` (then `scheduleReady` notifies it). */
  private asleep = false;
  /**
   * Native schedules (schedule.ts) whose operations completed outside their own turn (in a
   * poll of the loop or of another operation): the loop resumes them at the top of its next
   * turn, so that nothing is posted from inside a channel pump.
   */
  protected readonly readySchedules: ScheduleOwner[] = [];
  protected failure: CommunicationError | undefined;
  protected readonly drainWaiters: (() => void)[] = [];

  constructor(init: ThreadsEndpointInit) {
    super();
    this.rank = init.rank;
    this.size = init.size;
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
    this.spinLoads = init.spinLoads ?? defaultSpinLoads();
    if (!(this.spinLoads >= 0)) {
      throw new InvalidArgumentError('spinLoads', `must be a number >= 0, got ${this.spinLoads}`, { rank: init.rank });
    }
    const monWords = init.monitor?.words ?? null;
    this.monitor = monWords === null ? null : new MonitorWords(monWords, init.monitor?.index ?? 0);
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
  protected out(dest: number): Channel {
    return (this.outgoing[dest] ??= (this.source as ChannelSource).to(dest));
  }

  /** The channel from `source` (≠ this rank). */
  protected inc(source: number): Channel {
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

  /** Whether the run failed (then fails this endpoint); reads the shared failure word. */
  protected checkFailed(): boolean {
    if (this.failure !== undefined) return true;
    // A plain read first (Atomics.load costs ~15 ns; the word changes once, if ever).
    if (this.failWords[this.failIndex] === 0) return false;
    const f = Atomics.load(this.failWords, this.failIndex);
    if (f === 0) return false;
    if (f === RUN_DEADLOCKED) this.failDeadlock();
    else this.fail(f - 1);
    return true;
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
  protected doneRequest(source: number, tag: number, bytes: number): OpRequest<Status> {
    const st = this.statusOf(source, tag, bytes);
    let r = this.lastDone[source];
    if (r === null) this.lastDone[source] = r = OpRequest.done(st);
    return r;
  }

  protected completeRecv(op: RecvOp, source: number, tag: number, bytes: number): void {
    this.pending--;
    const req = op.req;
    const owner = op.owner;
    if (owner !== null) {
      const index = op.ownerIndex;
      const run = op.ownerRun;
      this.releaseRecv(op);
      owner.opDone(index, run, bytes, null);
    } else if (req !== null) {
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

  protected failRecv(op: RecvOp, err: Error): void {
    this.pending--;
    const req = op.req;
    const owner = op.owner;
    if (owner !== null) {
      const index = op.ownerIndex;
      const run = op.ownerRun;
      this.releaseRecv(op);
      owner.opDone(index, run, 0, err);
    } else if (req !== null) {
      this.releaseRecv(op);
      if (req.reject(err)) this.woke = true;
    } else {
      op.done = true;
      op.error = err;
    }
  }

  /**
   * `op` matched a message still arriving (already unlinked): the rest of it goes straight
   * into `op`'s buffer (or is discarded if it does not fit).
   */
  protected adoptArriving(op: RecvOp, u: Unexpected): void {
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

  protected noteUnpublished(source: number, ch: Channel): void {
    if (this.isUnpublished[source] === 0 && ch.unpublished) {
      this.isUnpublished[source] = 1;
      this.unpublished[this.unpublishedCount++] = source;
    }
  }

  /** Releases the ring space of every consumed message to its writer. */
  protected publishAll(): void {
    const n = this.unpublishedCount;
    if (n === 0) return;
    for (let i = 0; i < n; i++) {
      const s = this.unpublished[i];
      this.isUnpublished[s] = 0;
      this.inc(s).publish();
    }
    this.unpublishedCount = 0;
  }

  protected setFocus(peer: number): void {
    if (peer === this.focus || this.size > 32) return;
    this.focus = peer;
    this.focusBit = 1 << peer;
  }

  protected startLoop(): void {
    if (!this.looping && this.failure === undefined) {
      this.looping = true;
      void this.loop();
    }
  }

  /**
   * A native schedule has completed operations to act on (called once per wait, by
   * schedule.ts): queued for the loop's next turn; the loop is started, or woken if it sleeps.
   */
  protected scheduleReady(owner: ScheduleOwner): void {
    this.readySchedules.push(owner);
    if (!this.looping) this.startLoop();
    else if (this.asleep) Atomics.notify(this.bellWords, this.bellIndex);
  }

  /** Resumes the ready schedules (those that become ready meanwhile too). */
  private resumeSchedules(): void {
    const list = this.readySchedules;
    for (let i = 0; i < list.length; i++) list[i].resume();
    list.length = 0;
  }

  /**
   * Spins up to `budget` loads for news on the focus peer's incoming channel or the doorbell,
   * then moves what arrived (`poll`); returns whether anything moved. For a caller that
   * waits at once (a native schedule's start): bounded, never blocks.
   */
  protected spinPoll(budget: number): boolean {
    const words = this.bellWords;
    const i = this.bellIndex;
    const f = this.focus;
    const inc = f >= 0 ? this.incoming[f] : undefined;
    if (inc != null) {
      for (let k = 0; k < budget; k += 2) {
        if (inc.hasNews || Atomics.load(words, i) !== this.bellExpected) return this.poll();
      }
    } else {
      for (let k = 0; k < budget; k++) if (Atomics.load(words, i) !== this.bellExpected) return this.poll();
    }
    return false;
  }

  private async loop(): Promise<void> {
    try {
      // First let the program post whatever else it can (e.g. the send after an irecv).
      await RESOLVED;
      let idle = 0;
      while (this.failure === undefined) {
        if (this.readySchedules.length > 0) {
          // Native schedules whose operations completed: issue what they let go now.
          this.woke = false;
          this.resumeSchedules();
          if (this.woke) await RESOLVED;
          continue;
        }
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
        const mon = this.monitor;
        // For the deadlock monitor: one more sleep (published first), asleep with work pending
        // (unless the worker already recorded the rank finished).
        if (mon !== null) mon.asleep();
        Atomics.store(this.bellWords, this.sleepIndex, 1);
        const r = waitAsync(this.bellWords, this.bellIndex, 0);
        if (r.async) {
          this.asleep = true;
          await r.value;
          this.asleep = false;
        }
        Atomics.store(this.bellWords, this.sleepIndex, 0);
        if (mon !== null) mon.awake();
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
  protected poll(): boolean {
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
      const owner = op.owner;
      if (owner !== null) {
        const index = op.ownerIndex;
        const run = op.ownerRun;
        this.releaseSend(op);
        owner.opDone(index, run, 0, null);
        continue;
      }
      const req = op.req as OpRequest<void>;
      this.releaseSend(op);
      if (req.resolve(undefined)) this.woke = true;
    }
    return progressed;
  }

  protected pumpIn(source: number): boolean {
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

  // ---- failure -------------------------------------------------------------------------

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
      `recv from ${op.source === ANY_SOURCE ? 'any source' : op.source} tag ${op.tag === ANY_TAG ? 'any tag' : tagText(op.tag)}${ctxOf(op.ctx)}`;
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
        add(`send to ${d} tag ${tagText(op.tag)} (${byteLength(op.data)} bytes)${ctxOf(op.ctx)}`);
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
    this.failWith(deadlockError(this.rank, this.pendingOperations(DEADLOCK_LIST_MAX), this.blockedOutside));
  }

  private failWith(err: CommunicationError): void {
    this.failure = err;
    for (const q of this.sendQueues) {
      while (q !== undefined && q.length > 0) {
        const op = q.shift();
        if (op.owner !== null) op.owner.opDone(op.ownerIndex, op.ownerRun, 0, err);
        else op.req?.reject(err);
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
    const ready = this.readySchedules;
    for (let i = 0; i < ready.length; i++) ready[i].abort(err);
    ready.length = 0;
    this.wakeDrainers();
  }

  private rejectOp(op: RecvOp, err: Error): void {
    if (op.owner !== null) op.owner.opDone(op.ownerIndex, op.ownerRun, 0, err);
    else if (op.req !== null) op.req.reject(err);
    else {
      op.done = true;
      op.error = err;
    }
  }
}
