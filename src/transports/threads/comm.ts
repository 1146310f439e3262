/**
 * The Communicator of the worker-threads transport: one SPSC channel per ordered pair of
 * ranks, MPI matching by source and tag with an unexpected-message queue, and a progress
 * engine that sleeps on one per-rank bell with `Atomics.waitAsync` (never blocking the
 * thread). A poisoned channel anywhere this rank talks to fails every pending and later
 * operation with a CommunicationError naming the failed rank.
 */

import { ANY_SOURCE, ANY_TAG, BaseCommunicator, type Status } from '../../comm/communicator.js';
import { CommunicationError, InvalidArgumentError } from '../../errors.js';
import { type Bell, Channel, ringBell, waitBell } from './channel.js';

interface SendOp {
  readonly tag: number;
  readonly data: Uint8Array;
  readonly resolve: () => void;
  readonly reject: (e: Error) => void;
}

interface RecvOp {
  readonly source: number;
  readonly tag: number;
  readonly into: Uint8Array;
  readonly resolve: (s: Status) => void;
  readonly reject: (e: Error) => void;
}

/** A message that arrived before a matching receive was posted (possibly still arriving). */
interface Unexpected {
  readonly source: number;
  readonly tag: number;
  readonly data: Uint8Array;
  complete: boolean;
  waiter: RecvOp | null;
}

/** Where the payload of the message currently arriving on one incoming channel goes. */
type Sink =
  | { kind: 'recv'; op: RecvOp; tag: number; len: number }
  | { kind: 'unexpected'; entry: Unexpected; tag: number; len: number }
  | { kind: 'discard'; op: RecvOp; tag: number; len: number };

/** Bell loads before sleeping (a few microseconds; see `spin`). */
const SPIN_LOADS = Number(process.env.VCOLL_THREADS_SPIN ?? 2000);

function matches(op: RecvOp, source: number, tag: number): boolean {
  return (op.source === ANY_SOURCE || op.source === source) && (op.tag === ANY_TAG || op.tag === tag);
}

function truncation(source: number, tag: number, len: number, cap: number): CommunicationError {
  return new CommunicationError(
    `message of ${len} bytes from rank ${source} (tag ${tag}) exceeds the receive buffer of ${cap} bytes`,
  );
}

export interface ThreadsCommunicatorInit {
  readonly rank: number;
  readonly size: number;
  /** `outgoing[d]`: the channel to rank d (null for d = rank). */
  readonly outgoing: readonly (Channel | null)[];
  /** `incoming[s]`: the channel from rank s (null for s = rank). */
  readonly incoming: readonly (Channel | null)[];
  /** The bell this rank sleeps on; peers ring it when its channels change. */
  readonly bell: Bell;
}

export class ThreadsCommunicator extends BaseCommunicator {
  readonly rank: number;
  readonly size: number;
  private readonly outgoing: readonly (Channel | null)[];
  private readonly incoming: readonly (Channel | null)[];
  private readonly bell: Bell;
  private readonly sendQueues: SendOp[][];
  private readonly sinks: (Sink | null)[];
  private readonly posted: RecvOp[] = [];
  private readonly unexpected: Unexpected[] = [];
  private pending = 0;
  private looping = false;
  private failure: CommunicationError | undefined;

  constructor(init: ThreadsCommunicatorInit) {
    super();
    this.rank = init.rank;
    this.size = init.size;
    this.outgoing = init.outgoing;
    this.incoming = init.incoming;
    this.bell = init.bell;
    this.sendQueues = Array.from({ length: init.size }, () => []);
    this.sinks = new Array<Sink | null>(init.size).fill(null);
  }

  /** The failure that stopped this communicator, if any. */
  get failed(): CommunicationError | undefined {
    return this.failure;
  }

  private checkRank(field: string, r: number, wildcard: boolean): void {
    if (!Number.isInteger(r) || r >= this.size || (r < 0 && !(wildcard && r === ANY_SOURCE))) {
      throw new InvalidArgumentError(field, `rank ${r} is not in [0, ${this.size})`, { rank: this.rank });
    }
  }

  private checkTag(t: number, wildcard: boolean): void {
    if (!Number.isInteger(t) || t > 0x7fffffff || (t < 0 && !(wildcard && t === ANY_TAG))) {
      throw new InvalidArgumentError('tag', `must be a non-negative int32, got ${t}`, { rank: this.rank });
    }
  }

  isend(dest: number, tag: number, data: Uint8Array): Promise<void> {
    try {
      this.checkRank('dest', dest, false);
      this.checkTag(tag, false);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (dest === this.rank) {
      this.deliverLocal(tag, data);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const q = this.sendQueues[dest];
      q.push({ tag, data, resolve, reject });
      this.pending++;
      if (q.length === 1) (this.outgoing[dest] as Channel).beginSend(tag, data);
      this.kick();
    });
  }

  irecv(source: number, tag: number, into: Uint8Array): Promise<Status> {
    try {
      this.checkRank('source', source, true);
      this.checkTag(tag, true);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<Status>((resolve, reject) => {
      const op: RecvOp = { source, tag, into, resolve, reject };
      this.pending++;
      for (let i = 0; i < this.unexpected.length; i++) {
        const u = this.unexpected[i];
        if (u.waiter !== null || !matches(op, u.source, u.tag)) continue;
        if (u.complete) {
          this.unexpected.splice(i, 1);
          this.finishFromUnexpected(op, u);
        } else {
          u.waiter = op;
          this.kick();
        }
        return;
      }
      this.posted.push(op);
      this.kick();
    });
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    dst.set(src);
  }

  /** All threads share one machine. */
  nodeOf(rank: number): number {
    this.checkRank('rank', rank, false);
    return 0;
  }

  /** Resolves once no operation of this rank is pending (or the communicator failed). */
  async drain(): Promise<void> {
    while (this.pending > 0 && this.failure === undefined) {
      const seen = Atomics.load(this.bell.words, this.bell.index);
      if (!this.poll()) await waitBell(this.bell, seen, 50);
    }
  }

  /** Poisons every channel of this rank with `rank` as the culprit (used when this rank fails). */
  poisonAll(rank: number = this.rank): void {
    for (const ch of this.outgoing) ch?.poison(rank);
    for (const ch of this.incoming) ch?.poison(rank);
    ringBell(this.bell);
  }

  // ---- matching ------------------------------------------------------------------------

  private deliverLocal(tag: number, data: Uint8Array): void {
    for (let i = 0; i < this.posted.length; i++) {
      const op = this.posted[i];
      if (!matches(op, this.rank, tag)) continue;
      this.posted.splice(i, 1);
      this.pending--;
      if (data.length > op.into.length) op.reject(truncation(this.rank, tag, data.length, op.into.length));
      else {
        op.into.set(data);
        op.resolve({ source: this.rank, tag, bytes: data.length });
      }
      return;
    }
    this.unexpected.push({ source: this.rank, tag, data: data.slice(), complete: true, waiter: null });
  }

  private finishFromUnexpected(op: RecvOp, u: Unexpected): void {
    this.pending--;
    if (u.data.length > op.into.length) {
      op.reject(truncation(u.source, u.tag, u.data.length, op.into.length));
    } else {
      op.into.set(u.data);
      op.resolve({ source: u.source, tag: u.tag, bytes: u.data.length });
    }
  }

  // ---- progress ------------------------------------------------------------------------

  private kick(): void {
    this.poll();
    if (this.pending > 0 && !this.looping && this.failure === undefined) {
      this.looping = true;
      void this.loop();
    }
  }

  private async loop(): Promise<void> {
    try {
      while (this.pending > 0 && this.failure === undefined) {
        const seen = Atomics.load(this.bell.words, this.bell.index);
        if (this.poll()) {
          // Let the program react to completed operations before polling again.
          await Promise.resolve();
          continue;
        }
        if (this.spin(seen)) continue;
        await waitBell(this.bell, seen);
      }
    } finally {
      this.looping = false;
    }
  }

  /**
   * Watches the bell for a bounded number of loads before the loop sleeps: a peer that answers
   * within a few microseconds is seen without an event-loop wake-up; never spins unboundedly.
   */
  private spin(seen: number): boolean {
    for (let i = 0; i < SPIN_LOADS; i++) {
      if (Atomics.load(this.bell.words, this.bell.index) !== seen) return true;
    }
    return false;
  }

  /** Moves whatever data can move on every channel; returns whether anything moved. */
  private poll(): boolean {
    if (this.failure !== undefined) return false;
    let progressed = false;
    for (let peer = 0; peer < this.size; peer++) {
      if (peer === this.rank) continue;
      const out = this.outgoing[peer] as Channel;
      const inc = this.incoming[peer] as Channel;
      const bad = out.failedRank ?? inc.failedRank;
      if (bad !== undefined) {
        this.fail(bad);
        return true;
      }
      if (this.pumpSends(peer, out)) progressed = true;
      if (this.pumpRecvs(peer, inc)) progressed = true;
    }
    return progressed;
  }

  private pumpSends(dest: number, ch: Channel): boolean {
    const q = this.sendQueues[dest];
    let progressed = false;
    while (q.length > 0) {
      if (ch.writeSome() > 0) progressed = true;
      if (ch.sending) break;
      const op = q.shift() as SendOp;
      this.pending--;
      op.resolve();
      if (q.length > 0) ch.beginSend(q[0].tag, q[0].data);
    }
    return progressed;
  }

  private pumpRecvs(source: number, ch: Channel): boolean {
    let progressed = false;
    for (;;) {
      let sink = this.sinks[source];
      if (sink === null) {
        if (!ch.peek()) break;
        progressed = true;
        sink = this.openSink(source, ch.messageTag, ch.messageLength);
        this.sinks[source] = sink;
      }
      const dst = sink.kind === 'recv' ? sink.op.into : sink.kind === 'unexpected' ? sink.entry.data : null;
      if (ch.readSome(dst) > 0) progressed = true;
      if (ch.receiving) break;
      this.sinks[source] = null;
      this.closeSink(sink, source);
      progressed = true;
    }
    return progressed;
  }

  private openSink(source: number, tag: number, len: number): Sink {
    for (let i = 0; i < this.posted.length; i++) {
      const op = this.posted[i];
      if (!matches(op, source, tag)) continue;
      this.posted.splice(i, 1);
      return len > op.into.length ? { kind: 'discard', op, tag, len } : { kind: 'recv', op, tag, len };
    }
    const entry: Unexpected = { source, tag, data: new Uint8Array(len), complete: false, waiter: null };
    this.unexpected.push(entry);
    return { kind: 'unexpected', entry, tag, len };
  }

  private closeSink(sink: Sink, source: number): void {
    const { tag, len } = sink;
    if (sink.kind === 'recv') {
      this.pending--;
      sink.op.resolve({ source, tag, bytes: len });
    } else if (sink.kind === 'discard') {
      this.pending--;
      sink.op.reject(truncation(source, tag, len, sink.op.into.length));
    } else {
      const u = sink.entry;
      u.complete = true;
      if (u.waiter !== null) {
        const i = this.unexpected.indexOf(u);
        this.unexpected.splice(i, 1);
        this.finishFromUnexpected(u.waiter, u);
      }
    }
  }

  /** Fails every pending operation because `rank` failed. */
  private fail(rank: number): void {
    if (this.failure !== undefined) return;
    const err = new CommunicationError(`rank ${rank} failed`, { rank });
    this.failure = err;
    for (const q of this.sendQueues) for (const op of q.splice(0)) op.reject(err);
    for (const op of this.posted.splice(0)) op.reject(err);
    for (const u of this.unexpected) if (u.waiter !== null) u.waiter.reject(err);
    for (const s of this.sinks) if (s !== null && s.kind !== 'unexpected') s.op.reject(err);
    this.pending = 0;
  }
}
