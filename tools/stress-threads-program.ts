/**
 * The worker-thread rank program of `npm run stress:threads` (tools/stress-threads.ts):
 * runs a list of gatherv/scatterv cases exactly as `vcoll run --transport threads` does
 * (src/run/rank.ts, wall-clock timer, verification after every execution) and, for the
 * watchdog, publishes what every rank is doing in a SharedArrayBuffer the run's main thread
 * reads at any time (even while a rank spins): the case it is in, how many barriers it has
 * entered, whether it is inside one, and every point-to-point operation it has pending
 * (send/recv, peer, tag, bytes). A hung run can then be reported rank by rank.
 */
import type { Communicator, Status } from '../src/comm/communicator.js';
import { ForwardingCommunicator } from '../src/comm/forwarding.js';
import { mapRequest, type Request } from '../src/comm/request.js';
import { byteLength, type MessageData } from '../src/comm/segments.js';
import { WALL_TIMER, runCaseOnRank, type RankCaseResult, type RankTimer } from '../src/run/rank.js';
import type { RunCase } from '../src/run/spec.js';

/** Int32 words per rank in the progress buffer. */
const STRIDE = 128;
const W_CASE = 0;
const W_STATE = 1;
const W_SYNCS = 2;
const W_IN_SYNC = 3;
const W_STARTED = 4;
const W_COMPLETED = 5;
const W_OVERFLOW = 6;
const SLOT_BASE = 8;
const SLOT_WORDS = 5;
const SLOTS = (STRIDE - SLOT_BASE) / SLOT_WORDS;

/** What a rank is doing, as W_STATE records it. */
export const RANK_STATES = ['not started', 'in case', 'case done', 'program returned'] as const;
export type RankState = (typeof RANK_STATES)[number];

const KIND_SEND = 1;
const KIND_RECV = 2;

export interface PendingOp {
  readonly kind: 'send' | 'recv';
  /** 0: the world communicator; n: the n-th communicator split from it on this rank. */
  readonly comm: number;
  /** Destination or source in that communicator (-1: any source). */
  readonly peer: number;
  /** -1: any tag. */
  readonly tag: number;
  readonly bytes: number;
}

export interface RankProgress {
  readonly rank: number;
  /** Index of the case the rank is in (or finished last); -1 before the first. */
  readonly caseIndex: number;
  readonly state: RankState;
  /** Timer syncs entered in the current case (planning and every execution start with one; a barrier unless the batch runs back to back). */
  readonly syncs: number;
  readonly inSync: boolean;
  readonly opsStarted: number;
  readonly opsCompleted: number;
  readonly pending: PendingOp[];
  /** Pending operations that did not fit in the slot table. */
  readonly untracked: number;
}

/** A zeroed progress buffer for p ranks (every rank at case -1). */
export function createProgressBuffer(p: number): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(4 * STRIDE * p);
  const w = new Int32Array(sab);
  for (let r = 0; r < p; r++) w[r * STRIDE + W_CASE] = -1;
  return sab;
}

/** Reads every rank's progress (safe while the ranks run). */
export function readProgress(sab: SharedArrayBuffer, p: number): RankProgress[] {
  const w = new Int32Array(sab);
  const out: RankProgress[] = [];
  for (let r = 0; r < p; r++) {
    const o = r * STRIDE;
    const pending: PendingOp[] = [];
    for (let s = 0; s < SLOTS; s++) {
      const b = o + SLOT_BASE + s * SLOT_WORDS;
      const kind = Atomics.load(w, b);
      if (kind !== KIND_SEND && kind !== KIND_RECV) continue;
      pending.push({
        kind: kind === KIND_SEND ? 'send' : 'recv',
        comm: Atomics.load(w, b + 1),
        peer: Atomics.load(w, b + 2),
        tag: Atomics.load(w, b + 3),
        bytes: Atomics.load(w, b + 4),
      });
    }
    out.push({
      rank: r,
      caseIndex: Atomics.load(w, o + W_CASE),
      state: RANK_STATES[Atomics.load(w, o + W_STATE)] ?? 'not started',
      syncs: Atomics.load(w, o + W_SYNCS),
      inSync: Atomics.load(w, o + W_IN_SYNC) !== 0,
      opsStarted: Atomics.load(w, o + W_STARTED),
      opsCompleted: Atomics.load(w, o + W_COMPLETED),
      pending,
      untracked: Atomics.load(w, o + W_OVERFLOW),
    });
  }
  return out;
}

/** One rank's view of the progress buffer. */
class ProgressWriter {
  private readonly w: Int32Array;
  private readonly o: number;
  private nextComm = 1;

  constructor(sab: SharedArrayBuffer, rank: number) {
    this.w = new Int32Array(sab);
    this.o = rank * STRIDE;
  }

  set(word: number, value: number): void {
    Atomics.store(this.w, this.o + word, value);
  }

  add(word: number, value: number): void {
    Atomics.add(this.w, this.o + word, value);
  }

  newCommId(): number {
    return this.nextComm++;
  }

  /** Records a pending operation; returns its slot (-1: table full, counted as untracked). */
  begin(kind: number, comm: number, peer: number, tag: number, bytes: number): number {
    this.add(W_STARTED, 1);
    for (let s = 0; s < SLOTS; s++) {
      const b = this.o + SLOT_BASE + s * SLOT_WORDS;
      if (this.w[b] !== 0) continue;
      this.w[b + 1] = comm;
      this.w[b + 2] = peer;
      this.w[b + 3] = tag;
      Atomics.store(this.w, b + 4, bytes);
      Atomics.store(this.w, b, kind);
      return s;
    }
    this.add(W_OVERFLOW, 1);
    return -1;
  }

  end(slot: number): void {
    this.add(W_COMPLETED, 1);
    if (slot < 0) this.add(W_OVERFLOW, -1);
    else Atomics.store(this.w, this.o + SLOT_BASE + slot * SLOT_WORDS, 0);
  }
}

/** Forwards to another communicator and records every pending operation in the progress buffer. */
class TracingCommunicator extends ForwardingCommunicator {
  constructor(
    inner: Communicator,
    private readonly progress: ProgressWriter,
    private readonly id: number,
  ) {
    super(inner);
  }

  protected wrap(sub: Communicator): Communicator {
    return new TracingCommunicator(sub, this.progress, this.progress.newCommId());
  }

  private track<T>(kind: number, peer: number, tag: number, bytes: number, op: Request<T>): Request<T> {
    const slot = this.progress.begin(kind, this.id, peer, tag, bytes);
    // The returned request behaves like `op` (value and error), ending the record first.
    return mapRequest(
      op,
      (v) => {
        this.progress.end(slot);
        return v;
      },
      (e: unknown) => {
        this.progress.end(slot);
        return e;
      },
    );
  }

  override isend(dest: number, tag: number, data: MessageData): Request<void> {
    return this.track(KIND_SEND, dest, tag, byteLength(data), this.inner.isend(dest, tag, data));
  }

  override irecv(source: number, tag: number, into: MessageData): Request<Status> {
    return this.track(KIND_RECV, source, tag, byteLength(into), this.inner.irecv(source, tag, into));
  }
}

export interface StressJobArgs {
  readonly cases: readonly RunCase[];
  /** createProgressBuffer(p): shared with the run's main thread (structured clone keeps it shared). */
  readonly progress: SharedArrayBuffer;
  /** Record pending operations (wraps the communicator: one more promise per operation). */
  readonly trace: boolean;
  /**
   * Barrier before planning and before every execution, as `vcoll run` times them; false:
   * back to back, so a rank may start execution k + 1 while others are still in k (MPI allows
   * it; the tags and the message order must keep the executions apart).
   */
  readonly barrier: boolean;
}

export default async function stressProgram(comm: Communicator, args: StressJobArgs): Promise<RankCaseResult[]> {
  const progress = new ProgressWriter(args.progress, comm.rank);
  const traced = args.trace ? new TracingCommunicator(comm, progress, 0) : comm;
  const timer: RankTimer = {
    unit: WALL_TIMER.unit,
    now: WALL_TIMER.now,
    sync: async (c) => {
      progress.add(W_SYNCS, 1);
      progress.set(W_IN_SYNC, 1);
      if (args.barrier) await WALL_TIMER.sync(c);
      progress.set(W_IN_SYNC, 0);
    },
  };
  const results: RankCaseResult[] = [];
  for (let i = 0; i < args.cases.length; i++) {
    progress.set(W_SYNCS, 0);
    progress.set(W_CASE, i);
    progress.set(W_STATE, 1);
    results.push(await runCaseOnRank(traced, args.cases[i], timer));
    progress.set(W_STATE, 2);
  }
  progress.set(W_STATE, 3);
  return results;
}
