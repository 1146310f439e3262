/**
 * The virtual-time simulator: p rank programs (ordinary async code written against
 * `Communicator`) run in one process under a deterministic discrete-event simulation of a
 * cost model (docs/MODEL.md "The simulator"; Traff17 §2.1, Traff18 §1 and Kang19 §2 for
 * the port models). Cost of the simulation itself: O(log E) per event (E events pending; a
 * FIFO lane makes events of one time O(1)), O(1) matching per operation (matching.ts), O(1)
 * arbitration per transfer, no allocation per operation (pooled), and one wait for quiescence
 * per distinct virtual time at which an operation some rank program waits for completes (the
 * programs must run before time may advance): a process.nextTick, which Node calls once the
 * microtask queue is empty, with a real turn of the event loop every few ms of wall time (so
 * timers, e.g. wall-clock timeouts, still fire). What the engine keeps per rank is laid out
 * for few cache lines per rank touched (a block of a typed array for the clock and ports, one
 * of the matching book's list ends): at thousands of ranks a simulated message costs mostly
 * cache misses on the state of the two ranks it joins.
 *
 * Native schedules (sim/schedule.ts, Endpoint.bindSchedule) run inside the engine: their
 * operations are the engine's own, settled by calls into the schedule, and their continuations
 * (the next operations of a step, the next step) run from a ready queue at the virtual time of
 * the completion, in the order the portable executor's promise chains would run them. While
 * every active rank is inside a schedule, time advances with no wait at all.
 *
 * Conventions:
 * - Every rank has its own virtual clock. An operation is *posted* at the rank's clock and
 *   becomes visible to matching at that virtual time (events are processed in time order).
 * - Matching is MPI's, inside a communication context: a send is matched with the first
 *   posted receive of its destination and context that accepts it (ANY_SOURCE / ANY_TAG
 *   wildcards), a receive with the first visible unmatched send; both sides are kept in
 *   visibility order, so messages of one (source, dest, context, tag) never overtake.
 * - A matched pair of n > 0 bytes between two ranks is a synchronous pairwise transfer: it
 *   starts once the sender has a free send port and the receiver a free receive port, lasts
 *   model.comm(s, d, n / unitBytes) and holds both ports throughout. Ports: one-ported half
 *   duplex (one transfer at a time, send or receive), full duplex (one send and one receive at
 *   a time), or k half-duplex ports (k transfers at a time, in any direction).
 * - A message a rank sends to itself is a local copy done by the communication engine: it
 *   lasts model.copy(rank, n / unitBytes) and holds one port (both ports in full duplex); this
 *   is how a program runs the k-ported evaluator's "the copy occupies a port" (docs/MODEL.md).
 *   One that costs 0 completes at once.
 * - Port arbitration: at each virtual time, after every event of that time has been
 *   processed and the rank programs have run to quiescence, waiting matched transfers whose
 *   ports are free start in the order they were matched (first matched, first served).
 * - A 0-byte message matches and completes at once, takes no port and no time; the data of
 *   every message is copied when it completes.
 * - `copy` is the processor's own copy: it advances the rank's clock by
 *   model.copy(rank, bytes / unitBytes) and holds no port (transfers already running go on;
 *   the rank posts nothing until the copy ends).
 * - A send resolves (and the sender's clock advances) when its transfer ends; data moves
 *   at that moment. Truncation (message longer than the receive buffer) rejects the receive
 *   with a CommunicationError at match time; the send then completes without a transfer.
 * - `clock.sync()` is an ideal zero-cost barrier over all ranks: it resolves once every rank
 *   called it, with every clock set to the latest of theirs.
 * - Rank programs must only await the communicator's promises (and other microtasks):
 *   timers or real I/O are invisible to the virtual clock and look like a deadlock.
 */
import { CommunicationError, DeadlockError, type DeadlockedRank, InvalidArgumentError, TruncationError } from '../../errors.js';
import type { CostModel } from '../../model/cost-model.js';
import { engineOptions } from './engine-options.js';
import { OpRequest } from '../../comm/request.js';
import { copyBytes, type MessageBuffer } from '../../comm/segments.js';
import { EventQueue, KeyHeap } from './heap.js';
import { L_OWN, L_STRIDE, MatchBook } from './matching.js';
import { type Op, type OpOwner, OpPool, SEND, describeOp } from './op.js';
import type { SimOptions, SimProgress, SimResult, SimTrace } from './types.js';

const noop = (): void => {};
const RESOLVED: Promise<void> = Promise.resolve();
/** Per-rank block of Simulation.rs: its stride and fields. */
const R = 4;
const R_CLOCK = 0;
const R_BUSY_S = 1;
const R_BUSY_R = 2;
const R_DIRTY = 3;
/**
 * A rank's two lists of transfers waiting for ports, in the matching book's owner slots
 * (matching.ts L_OWN; head, then tail), each in match order: those it sends (its send ops,
 * copies to itself included) and those it receives (its receive ops). Kept apart so that
 * arbitration skips a whole direction whose port is taken at once: the root of a linear
 * gather(v) (Kang19 §3.1's root gathering: MPICH's MPIR_Gatherv) has a receive of every rank
 * waiting behind its one receive port, and walking them all each time a transfer started
 * there made a gather of n blocks O(n²).
 */
const W_OUT = L_OWN;
const W_IN = L_OWN + 2;

/**
 * Entries of the waiting lists arbitration has looked at (tests: with the lists apart, a
 * linear gather's root costs O(1) per transfer, not O(its queue)).
 */
export const PORT_QUEUE_VISITS = { count: 0 };
/*
 * How the run loop waits for the rank programs to be suspended (quiescence): either a real
 * turn of the event loop (setImmediate: every microtask has run, and timers and I/O may
 * have), or, cheaper, a process.nextTick queued from a microtask (a reaction to a settled
 * promise: cheaper than queueMicrotask, which makes an async resource per call): Node calls
 * ticks only once the microtask queue is empty (it drains microtasks, then ticks, then
 * microtasks again, until both are empty), and a microtask queued now runs after every
 * continuation the loop just scheduled, so the tick comes after all of them and all they
 * schedule in turn. (A tick queued directly from the loop, itself in a tick or an immediate,
 * could run before those continuations.) The loop is a plain callback, so a wait allocates
 * no promise.
 */
/** At most this much wall time (ms) between real turns, so timers (wall-clock timeouts) fire. */
const TURN_EVERY_MS = 4;
/** Default wall time (ms) between calls of SimOptions.progress. */
const PROGRESS_EVERY_MS = 250;
/** With a progress callback, programs started between reads of the wall clock during the start-up. */
const STARTED_STRIDE = 1024;
/** With a progress callback, virtual times between reads of the wall clock in the run loop. */
const PROGRESS_STRIDE = 64;

// One executor for every promise (no closure per operation).
let capturedResolve: (v: unknown) => void = noop;
let capturedReject: (e: unknown) => void = noop;
const capture = (res: (v: unknown) => void, rej: (e: unknown) => void): void => {
  capturedResolve = res;
  capturedReject = rej;
};

/**
 * A native executor the engine runs between its events (sim/schedule.ts), in place of a rank
 * program: `hop(code, run)` is called back from the run loop at the virtual time where
 * `Simulation.later(task, hops, code, run)` was called, after as many turns of the ready queue
 * as `hops` (a FIFO, like the microtask queue that runs a rank program's continuations: one
 * turn per promise hop of the code it stands for); `abort` when the simulation aborts while
 * the task is active (`Simulation.activate`).
 */
export interface SimTask {
  /** Links of the simulation's list of active tasks (managed by `activate`). */
  activePrev: SimTask | null;
  activeNext: SimTask | null;
  hop(code: number, run: number): void;
  abort(reason: string, cause: unknown): void;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class Simulation {
  readonly p: number;
  private readonly model: CostModel;
  private readonly k: number;
  private readonly duplex: boolean;
  private readonly unit: number;
  private readonly nodes: ArrayLike<number> | undefined;
  /**
   * Per rank r, at R·r (one block, so that what the engine reads and writes of a rank
   * shares a cache line): R_CLOCK (its virtual clock), R_BUSY_S / R_BUSY_R (transfers
   * holding its send / receive ports), R_DIRTY (1: in `dirty`).
   */
  private readonly rs: Float64Array;
  private readonly book: MatchBook;
  /**
   * The matching book's per-rank list ends (matching.ts L_STRIDE), whose owner slots hold
   * each rank's lists of transfers waiting for ports (W_OUT, W_IN).
   */
  private readonly ends: (Op | null)[];
  private readonly pool = new OpPool();
  private readonly events = new EventQueue<Op>();
  private readonly cand = new KeyHeap<Op>();
  private readonly dirty: Int32Array;
  private nDirty = 0;
  /**
   * Every transfer waiting for ports, in match order: its send op and its two ranks in
   * parallel arrays (entries [0, wLen); null: started since), so that arbitration scans
   * typed arrays and touches an operation only when it starts it (op.wIndex: its entry).
   */
  private wOps: (Op | null)[] = [];
  private wFrom = new Int32Array(64);
  private wTo = new Int32Array(64);
  private wLen = 0;
  private nWaiting = 0;
  private evSeq = 0;
  private visSeq = 0;
  private matchSeq = 0;
  private now = 0;
  private needDrain = true;
  private aborted: string | undefined;
  private finished = 0;
  /** Programs started (SimProgress.ranksStarted). */
  private started = 0;
  /** The programs' start function (set by `run`) and the next rank it starts. */
  private startFn: (rank: number) => Promise<unknown> = () => RESOLVED;
  private nextToStart = 0;
  /** Operations posted and not yet completed or rejected. */
  private live = 0;
  private readonly done: Uint8Array;
  private failure: { rank: number; error: unknown } | undefined;
  private messages = 0;
  private bytes = 0;
  private readonly trace: SimTrace | undefined;
  private readonly syncResolve: (((v: unknown) => void) | null)[];
  private readonly syncReject: (((e: unknown) => void) | null)[];
  private syncCount = 0;
  private syncMax = 0;
  /**
   * Native tasks' continuations at the current virtual time: a FIFO ring (capacity a power
   * of two; entries [readyHead, readyTail) modulo it) of (task, hops left, code, run).
   */
  private rTask: (SimTask | null)[] = new Array<SimTask | null>(64).fill(null);
  private rHops = new Int32Array(64);
  private rCode = new Int32Array(64);
  private rRun = new Float64Array(64);
  private readyHead = 0;
  private readyTail = 0;
  /** Native tasks running (aborted with the simulation). */
  private activeHead: SimTask | null = null;
  /** Whether the run loop made a real turn of the event loop yet, and when the last was. */
  private turned = false;
  private lastTurn = 0;
  /** The run loop (`loop`) as a callback, and as one queueing it as a tick (see `quiesce`). */
  private readonly stepFn = (): void => this.step();
  private readonly tickFn = (): void => {
    process.nextTick(this.stepFn);
  };
  /**
   * SimOptions.progress (undefined: none; then each check site costs one branch), its
   * interval, virtual times left until the loop reads the wall clock, when the run started
   * and when the callback was last called (performance.now()).
   */
  private readonly progressFn: ((p: SimProgress) => void) | undefined;
  private readonly progressEvery: number;
  private readonly progressStride: number;
  private progressLeft = 0;
  private progressStart = 0;
  private progressAt = 0;
  /** The rank programs' results, and how `run` settles (set by `run`). */
  private results: unknown[] = [];
  private settleRun: (failed: boolean, value: unknown) => void = noop;

  constructor(p: number, options: SimOptions) {
    const eo = engineOptions(p, options);
    this.p = p;
    this.model = eo.model;
    this.k = eo.k;
    this.duplex = eo.duplex;
    this.unit = eo.unit;
    this.nodes = eo.nodes;
    this.rs = new Float64Array(R * p);
    this.book = new MatchBook(p);
    this.ends = this.book.ends;
    this.dirty = new Int32Array(p);
    this.done = new Uint8Array(p);
    this.syncResolve = new Array<((v: unknown) => void) | null>(p).fill(null);
    this.syncReject = new Array<((e: unknown) => void) | null>(p).fill(null);
    this.trace = options.trace ? { messages: [], copies: [] } : undefined;
    const progress = options.progress;
    if (progress !== undefined && typeof progress !== 'function') throw new InvalidArgumentError('progress', 'must be a function');
    const every = options.progressEveryMs ?? PROGRESS_EVERY_MS;
    if (typeof every !== 'number' || !(every >= 0) || !Number.isFinite(every)) {
      throw new InvalidArgumentError('progressEveryMs', `must be a finite number >= 0, got ${String(every)}`);
    }
    this.progressFn = progress;
    this.progressEvery = every;
    this.progressStride = every > 0 ? PROGRESS_STRIDE : 1;
  }

  nodeOf(rank: number): number {
    return this.nodes === undefined ? 0 : this.nodes[rank];
  }

  /** This rank's virtual time. */
  timeOf(rank: number): number {
    const t = this.rs[R * rank + R_CLOCK];
    return t > this.now ? t : this.now;
  }

  /**
   * Posts an operation (arguments already validated by the endpoint); `alloc`: a receive of
   * unknown size (irecvAlloc, `len` its maxBytes) whose buffer is allocated when it matches.
   */
  post(kind: number, rank: number, ctx: number, peer: number, tag: number, buf: MessageBuffer, len: number, alloc = false): OpRequest<unknown> {
    if (this.aborted !== undefined) return OpRequest.failed(new CommunicationError(this.aborted, { rank }));
    const op = this.pool.take(kind, rank, ctx, peer, tag, buf, len);
    op.alloc = alloc;
    const req = new OpRequest<unknown>();
    op.req = req;
    this.enter(op);
    return req;
  }

  /**
   * Posts an operation settled by `owner` instead of a request (a native schedule's, at the
   * rank's clock like `post`): `owner.opDone(index, run, bytes)` or `opFailed(index, run, e)`,
   * called from inside the engine. Returns false (nothing posted) once the simulation aborted.
   */
  postOwned(kind: number, rank: number, ctx: number, peer: number, tag: number, buf: MessageBuffer, len: number, owner: OpOwner, index: number, run: number): boolean {
    if (this.aborted !== undefined) return false;
    const op = this.pool.take(kind, rank, ctx, peer, tag, buf, len);
    op.alloc = false;
    op.owner = owner;
    op.oIndex = index;
    op.oRun = run;
    this.enter(op);
    return true;
  }

  private enter(op: Op): void {
    this.live++;
    const rank = op.rank;
    const t = this.rs[R * rank + R_CLOCK];
    if (t <= this.now) {
      // Visible now: match at once (rank programs only run between event batches of `now`).
      this.rs[R * rank + R_CLOCK] = this.now;
      this.match(op);
    } else {
      this.events.push(t, this.evSeq++, op);
    }
  }

  /** Why the simulation aborted (undefined while it runs). */
  get abortReason(): string | undefined {
    return this.aborted;
  }

  /**
   * Calls `task.hop(code, run)` at the current virtual time after `hops` ≥ 1 turns of the
   * ready queue (FIFO: what was queued earlier with as many hops or fewer runs first).
   */
  later(task: SimTask, hops: number, code: number, run: number): void {
    let mask = this.rTask.length - 1;
    if (this.readyTail - this.readyHead > mask) {
      this.growReady();
      mask = this.rTask.length - 1;
    }
    const i = this.readyTail++ & mask;
    this.rTask[i] = task;
    this.rHops[i] = hops;
    this.rCode[i] = code;
    this.rRun[i] = run;
  }

  private growReady(): void {
    const n = this.rTask.length;
    const task = new Array<SimTask | null>(2 * n).fill(null);
    const hops = new Int32Array(2 * n);
    const code = new Int32Array(2 * n);
    const run = new Float64Array(2 * n);
    for (let k = 0, i = this.readyHead; i < this.readyTail; i++, k++) {
      const j = i & (n - 1);
      task[k] = this.rTask[j];
      hops[k] = this.rHops[j];
      code[k] = this.rCode[j];
      run[k] = this.rRun[j];
    }
    this.readyTail -= this.readyHead;
    this.readyHead = 0;
    this.rTask = task;
    this.rHops = hops;
    this.rCode = code;
    this.rRun = run;
  }

  /** A native task started (`true`) or ended: running tasks are aborted with the simulation. */
  activate(task: SimTask, on: boolean): void {
    if (on) {
      task.activePrev = null;
      task.activeNext = this.activeHead;
      if (this.activeHead !== null) this.activeHead.activePrev = task;
      this.activeHead = task;
      return;
    }
    const prev = task.activePrev;
    const next = task.activeNext;
    if (prev === null) {
      if (this.activeHead === task) this.activeHead = next;
    } else {
      prev.activeNext = next;
    }
    if (next !== null) next.activePrev = prev;
    task.activePrev = task.activeNext = null;
  }

  /** Settles a native task's request: the rank program must run before time advances if it waits. */
  settle(req: OpRequest<unknown>, failed: boolean, value: unknown): void {
    if (failed ? req.reject(value) : req.resolve(value)) this.needDrain = true;
  }

  /** Runs the ready queue until it is empty (what the tasks queue meanwhile too), at the current virtual time. */
  private runReady(): void {
    while (this.readyHead < this.readyTail) {
      const i = this.readyHead++ & (this.rTask.length - 1);
      const task = this.rTask[i] as SimTask;
      this.rTask[i] = null;
      const hops = this.rHops[i] - 1;
      if (hops > 0) this.later(task, hops, this.rCode[i], this.rRun[i]);
      else task.hop(this.rCode[i], this.rRun[i]);
      if (this.aborted !== undefined) break;
    }
    if (this.readyHead === this.readyTail) this.readyHead = this.readyTail = 0;
  }

  private clearReady(): void {
    this.rTask.fill(null);
    this.readyHead = this.readyTail = 0;
  }

  chargeCopy(rank: number, nbytes: number): void {
    let start = this.rs[R * rank + R_CLOCK];
    if (start < this.now) start = this.now;
    const end = start + this.model.copy(rank, nbytes / this.unit);
    this.rs[R * rank + R_CLOCK] = end;
    if (this.trace) this.trace.copies.push({ rank, bytes: nbytes, start, end });
  }

  /**
   * `count` calls of chargeCopy(rank, nbytes), the same clock and trace, in O(1) when a copy
   * costs nothing and nothing is traced (then only the clock's catching up with `now` is left).
   */
  chargeCopies(rank: number, nbytes: number, count: number): void {
    if (count <= 0) return;
    const cost = this.model.copy(rank, nbytes / this.unit);
    if (cost === 0 && !this.trace) {
      if (this.rs[R * rank + R_CLOCK] < this.now) this.rs[R * rank + R_CLOCK] = this.now;
      return;
    }
    for (let i = 0; i < count; i++) this.chargeCopy(rank, nbytes);
  }

  sync(rank: number): Promise<void> {
    if (this.aborted !== undefined) return Promise.reject(new CommunicationError(this.aborted, { rank }));
    if (this.syncResolve[rank] !== null) {
      return Promise.reject(new InvalidArgumentError('sync', 'called again before the previous call resolved', { rank }));
    }
    const promise = new Promise(capture) as Promise<void>;
    this.syncResolve[rank] = capturedResolve;
    this.syncReject[rank] = capturedReject;
    const t = this.timeOf(rank);
    if (t > this.syncMax) this.syncMax = t;
    // The run loop releases everyone once the last caller is suspended (so ranks resume in rank order).
    if (++this.syncCount === this.p) this.needDrain = true;
    return promise;
  }

  private releaseSync(): void {
    const T = this.syncMax;
    this.syncCount = 0;
    this.syncMax = 0;
    for (let r = 0; r < this.p; r++) {
      if (this.rs[R * r + R_CLOCK] < T) this.rs[R * r + R_CLOCK] = T;
      const res = this.syncResolve[r] as (v: unknown) => void;
      this.syncResolve[r] = null;
      this.syncReject[r] = null;
      res(undefined);
    }
    this.needDrain = true;
  }

  /**
   * Starts the next rank's program: queued once per rank, in rank order, each in a microtask
   * of its own, so the k-th reaction starts rank k (no closure per start). Its end is recorded
   * by two closures over its rank, the only engine objects a waiting rank holds (an async
   * call per rank kept a suspended frame instead).
   */
  private readonly startNext = (): void => {
    const r = this.nextToStart++;
    // the start-up (every program up to its first wait) is one stretch without the run loop: report from here
    if (++this.started % STARTED_STRIDE === 0 && this.progressFn !== undefined) this.checkStartProgress();
    let program: Promise<unknown>;
    try {
      program = this.startFn(r);
    } catch (e) {
      this.rankFailed(r, e);
      return;
    }
    Promise.resolve(program).then(
      (value) => {
        this.results[r] = value;
        this.done[r] = 1;
        this.finished++;
      },
      (e: unknown) => this.rankFailed(r, e),
    );
  };

  private rankFailed(r: number, e: unknown): void {
    this.done[r] = 1;
    if (this.failure === undefined) this.failure = { rank: r, error: e };
  }

  run<T>(start: (rank: number) => Promise<T>): Promise<SimResult<T>> {
    const p = this.p;
    const results: T[] = new Array<T>(p);
    this.results = results;
    this.progressStart = this.progressAt = performance.now();
    this.progressLeft = this.progressStride;
    this.startFn = start;
    this.nextToStart = 0;
    for (let r = 0; r < p; r++) void RESOLVED.then(this.startNext);
    return new Promise<SimResult<T>>((resolve, reject) => {
      this.settleRun = (failed, value) => {
        this.settleRun = noop;
        if (failed) reject(value);
        else resolve(value as SimResult<T>);
      };
      // the programs run first (needDrain is set): a real turn
      this.needDrain = false;
      this.quiesce();
    });
  }

  /** Runs the loop until it must wait for the programs (or the run ends); errors reject the run. */
  private step(): void {
    try {
      this.loop();
    } catch (e) {
      this.settleRun(true, e);
    }
  }

  /** Fails the run with `error` after a real turn (the programs settle what abortAll rejected). */
  private failRun(error: unknown): void {
    setImmediate(() => this.settleRun(true, error));
  }

  private loop(): void {
    const p = this.p;
    const events = this.events;
    for (;;) {
      if (this.needDrain) {
        this.needDrain = false;
        this.quiesce();
        return;
      }
      if (this.failure !== undefined) {
        const { rank, error } = this.failure;
        this.abortAll(`rank ${rank} failed: ${errorText(error)}`, error);
        this.failRun(new CommunicationError(`rank ${rank} failed: ${errorText(error)}`, { rank, cause: error }));
        return;
      }
      if (this.readyHead < this.readyTail) {
        // Native schedules go on where their rank programs would have run (with the programs,
        // before anything else at this time): no wait for quiescence.
        this.runReady();
        continue;
      }
      if (this.syncCount === this.p) {
        this.releaseSync();
        continue;
      }
      const now = this.now;
      if (events.size > 0 && events.topT() <= now) {
        do {
          const op = events.pop();
          if (op.started) this.endTransfer(op);
          else this.match(op);
        } while (events.size > 0 && events.topT() <= now);
        continue;
      }
      if (this.nDirty > 0) {
        this.arbitrate();
        continue;
      }
      if (this.needDrain) continue;
      if (events.size > 0) {
        // everything of `now` is done: a progress check every progressStride virtual times
        if (this.progressFn !== undefined && --this.progressLeft <= 0) this.checkProgress();
        this.now = events.topT();
        continue;
      }
      break;
    }
    if (this.finished < p || this.live > 0) {
      const stuck = this.stuckRanks();
      const deadlock = this.finished < p;
      const what = deadlock ? 'deadlock' : 'unmatched operations at the end';
      const msg = `${what} at virtual time ${this.now}: ${stuck.map(describeStuckRank).join('; ')}`;
      this.abortAll(msg, undefined);
      this.failRun(deadlock ? new DeadlockError(msg, stuck) : new CommunicationError(msg));
      return;
    }
    const finish: number[] = new Array<number>(p);
    for (let r = 0; r < p; r++) finish[r] = this.rs[R * r + R_CLOCK];
    let time = 0;
    for (const f of finish) if (f > time) time = f;
    const out: SimResult<unknown> = { time, finish, results: this.results, messages: this.messages, bytes: this.bytes };
    if (this.trace) out.trace = this.trace;
    if (this.progressFn !== undefined) this.reportProgress(performance.now(), time);
    this.settleRun(false, out);
  }

  /** The loop's progress check (between virtual times): the wall clock, every progressStride calls. */
  private checkProgress(): void {
    this.progressLeft = this.progressStride;
    const t = performance.now();
    if (t - this.progressAt >= this.progressEvery) this.reportProgress(t, this.now);
  }

  /** The start-up's progress check, every STARTED_STRIDE programs started. */
  private checkStartProgress(): void {
    const t = performance.now();
    if (t - this.progressAt >= this.progressEvery) this.reportProgress(t, this.now);
  }

  /** Calls SimOptions.progress (an observer: nothing of the simulation changes). */
  private reportProgress(t: number, time: number): void {
    this.progressAt = t;
    (this.progressFn as (p: SimProgress) => void)({
      time,
      messages: this.messages,
      bytes: this.bytes,
      ranksDone: this.finished,
      ranksStarted: this.started,
      ranks: this.p,
      wallMs: t - this.progressStart,
    });
  }

  /**
   * Calls the loop again once the rank programs are all suspended: a tick (cheap: no turn of
   * the event loop), with a real turn first and then every TURN_EVERY_MS of wall time. Also
   * where progress is reported while the programs run (the wall clock is read here anyway).
   */
  private quiesce(): void {
    const t = performance.now();
    if (this.progressFn !== undefined && t - this.progressAt >= this.progressEvery) this.reportProgress(t, this.now);
    if (this.turned && t - this.lastTurn < TURN_EVERY_MS) {
      void RESOLVED.then(this.tickFn);
      return;
    }
    this.turned = true;
    this.lastTurn = t;
    setImmediate(this.stepFn);
  }

  private markDirty(r: number): void {
    if (this.rs[R * r + R_DIRTY] === 0) {
      this.rs[R * r + R_DIRTY] = 1;
      this.dirty[this.nDirty++] = r;
    }
  }

  private match(op: Op): void {
    op.seq = this.visSeq++;
    if (op.kind === SEND) {
      const r = this.book.matchSend(op);
      if (r !== null) this.pair(op, r);
    } else {
      const s = this.book.matchRecv(op);
      if (s !== null) this.pair(s, op);
    }
  }

  private pair(send: Op, recv: Op): void {
    const n = send.len;
    const from = send.rank;
    const to = recv.rank;
    if (n > recv.len) {
      recv.pending = false;
      send.pending = false;
      this.live -= 2;
      this.settleClock(to);
      this.settleClock(from);
      const err = new TruncationError(
        `rank ${to}: message of ${n} bytes from rank ${from} tag ${send.tag} truncated: the receive ${recv.alloc ? 'takes at most' : 'buffer holds'} ${recv.len} bytes`,
        n,
        recv.len,
        { rank: to },
      );
      const ro = recv.owner;
      const so = send.owner;
      const ri = recv.oIndex;
      const rr = recv.oRun;
      const si = send.oIndex;
      const sr = send.oRun;
      const rq = recv.req;
      const sq = send.req;
      this.pool.give(recv);
      this.pool.give(send);
      if (ro !== null) ro.opFailed(ri, rr, err);
      else if ((rq as OpRequest<unknown>).reject(err)) this.needDrain = true;
      if (so !== null) so.opDone(si, sr, n);
      else if ((sq as OpRequest<unknown>).resolve(undefined)) this.needDrain = true;
      return;
    }
    if (recv.alloc) {
      recv.buf = new Uint8Array(n);
      recv.len = n;
    }
    send.partner = recv;
    recv.partner = send;
    send.seq = this.matchSeq++;
    if (from !== to) {
      if (n === 0) {
        send.start = this.now;
        this.complete(send);
      } else if (this.noneWaiting(from) && this.noneWaiting(to) && this.canSend(from) && this.canRecv(to)) {
        // Nothing matched earlier waits for these ports: arbitration would start it first.
        this.startTransfer(send);
      } else {
        this.wait(send);
        this.appendPend(to, recv);
        this.markDirty(to);
      }
      return;
    }
    if (n === 0 || !(this.model.copy(from, n / this.unit) > 0)) {
      send.start = this.now;
      this.complete(send);
      return;
    }
    this.wait(send);
  }

  /** Queues a matched transfer for its ports: the sender's list, the global list, dirty. */
  private wait(send: Op): void {
    this.appendPend(send.rank, send);
    this.markDirty(send.rank);
    if (this.wLen === this.wFrom.length) this.growWaiting();
    const i = this.wLen++;
    this.wOps[i] = send;
    this.wFrom[i] = send.rank;
    this.wTo[i] = send.peer;
    send.wIndex = i;
    this.nWaiting++;
  }

  /** Takes a waiting transfer out of every list and starts it. */
  private unwaitAndStart(x: Op): void {
    this.unlinkPend(x.rank, x);
    if (x.peer !== x.rank) this.unlinkPend(x.peer, x.partner as Op);
    this.wOps[x.wIndex] = null;
    x.wIndex = -1;
    this.nWaiting--;
    this.startTransfer(x);
  }

  /** Whether rank r has no transfer waiting for ports, in either direction. */
  private noneWaiting(r: number): boolean {
    return this.ends[L_STRIDE * r + W_OUT] === null && this.ends[L_STRIDE * r + W_IN] === null;
  }

  /** Appends x to rank r's waiting list of its kind (a send op: W_OUT; a receive op: W_IN). */
  private appendPend(r: number, x: Op): void {
    const at = L_STRIDE * r + (x.kind === SEND ? W_OUT : W_IN);
    x.qNext = null;
    x.qPrev = this.ends[at + 1];
    if (x.qPrev === null) this.ends[at] = x;
    else x.qPrev.qNext = x;
    this.ends[at + 1] = x;
  }

  private unlinkPend(r: number, x: Op): void {
    const at = L_STRIDE * r + (x.kind === SEND ? W_OUT : W_IN);
    if (x.qPrev === null) this.ends[at] = x.qNext;
    else x.qPrev.qNext = x.qNext;
    if (x.qNext === null) this.ends[at + 1] = x.qPrev;
    else x.qNext.qPrev = x.qPrev;
    x.qPrev = x.qNext = null;
  }

  private settleClock(r: number): void {
    if (this.rs[R * r + R_CLOCK] < this.now) this.rs[R * r + R_CLOCK] = this.now;
  }

  private complete(send: Op): void {
    const recv = send.partner as Op;
    const n = send.len;
    const sb = send.buf;
    const rb = recv.buf;
    if (n > 16 || !(sb instanceof Uint8Array && rb instanceof Uint8Array)) copyBytes(rb, sb, n);
    else for (let i = 0; i < n; i++) rb[i] = sb[i];
    const from = send.rank;
    const to = recv.rank;
    this.settleClock(from);
    this.settleClock(to);
    this.messages++;
    this.bytes += n;
    if (this.trace) {
      this.trace.messages.push({ from, to, ctx: send.ctx, tag: send.tag, bytes: n, start: send.start, end: this.now });
    }
    send.pending = false;
    recv.pending = false;
    this.live -= 2;
    // Only a request somebody waits on schedules program code: then the programs must run
    // before virtual time may advance (docs/MODEL.md "The simulator"). Operations of native
    // schedules tell their owner, which the run loop progresses at this time (runReady).
    const so = send.owner;
    if (so !== null) so.opDone(send.oIndex, send.oRun, n);
    else if ((send.req as OpRequest<unknown>).resolve(undefined)) this.needDrain = true;
    const ro = recv.owner;
    if (ro !== null) {
      ro.opDone(recv.oIndex, recv.oRun, n);
    } else {
      const status = recv.alloc ? { source: from, tag: send.tag, bytes: n, data: rb as Uint8Array } : { source: from, tag: send.tag, bytes: n };
      if ((recv.req as OpRequest<unknown>).resolve(status)) this.needDrain = true;
    }
    this.pool.give(recv);
    this.pool.give(send);
  }

  private endTransfer(tr: Op): void {
    const from = tr.rank;
    const to = tr.peer;
    this.rs[R * from + R_BUSY_S]--;
    if (from !== to) this.rs[R * to + R_BUSY_R]--;
    else if (this.duplex) this.rs[R * from + R_BUSY_R]--;
    this.markDirty(from);
    if (from !== to) this.markDirty(to);
    this.complete(tr);
  }

  private canSend(r: number): boolean {
    return this.duplex ? this.rs[R * r + R_BUSY_S] === 0 : this.rs[R * r + R_BUSY_S] + this.rs[R * r + R_BUSY_R] < this.k;
  }

  private canRecv(r: number): boolean {
    return this.duplex ? this.rs[R * r + R_BUSY_R] === 0 : this.rs[R * r + R_BUSY_S] + this.rs[R * r + R_BUSY_R] < this.k;
  }

  /** Whether the transfer (its send op) could start now. */
  private startable(tr: Op): boolean {
    return this.portsFree(tr.rank, tr.peer);
  }

  /**
   * The earliest-matched waiting transfer of rank r whose ports are all free: the earlier of
   * the first startable one it sends and the first it receives, each list walked only while
   * r's port of that direction is free (the lists merged in match order are r's transfers in
   * match order, so this is the first startable one of them all).
   */
  private firstStartable(r: number): Op | null {
    const busyS = this.rs[R * r + R_BUSY_S];
    const busyR = this.rs[R * r + R_BUSY_R];
    const sendFree = this.duplex ? busyS === 0 : busyS + busyR < this.k;
    const recvFree = this.duplex ? busyR === 0 : busyS + busyR < this.k;
    const out = sendFree ? this.firstStartableOf(this.ends[L_STRIDE * r + W_OUT], false) : null;
    const into = recvFree ? this.firstStartableOf(this.ends[L_STRIDE * r + W_IN], true) : null;
    if (out === null) return into;
    return into === null || out.seq < into.seq ? out : into;
  }

  /** The first transfer (its send op) of a waiting list (`receives`: of receive ops) whose ports are free. */
  private firstStartableOf(head: Op | null, receives: boolean): Op | null {
    let visits = 0;
    let found: Op | null = null;
    for (let x = head; x !== null; x = x.qNext) {
      visits++;
      const tr = receives ? (x.partner as Op) : x;
      if (this.startable(tr)) {
        found = tr;
        break;
      }
    }
    PORT_QUEUE_VISITS.count += visits;
    return found;
  }

  private pushCandidate(r: number): void {
    const x = this.firstStartable(r);
    if (x !== null) this.cand.push(x.seq, 0, x);
  }

  /**
   * Starts waiting transfers whose ports are free, first matched first (see the module
   * comment). Only transfers at ranks whose ports or queues changed (dirty) can have become
   * startable: with few of them, a heap of each dirty rank's first startable transfer; with
   * many, one walk over every waiting transfer in match order (the same result, cheaper).
   */
  private arbitrate(): void {
    if (this.nWaiting === 0) {
      // nothing waits for ports: nothing to start
      for (let i = 0; i < this.nDirty; i++) this.rs[R * this.dirty[i] + R_DIRTY] = 0;
      this.nDirty = 0;
      if (this.wLen > 0) this.compactWaiting();
      return;
    }
    if (this.nDirty * 4 >= this.nWaiting || this.nDirty * 8 >= this.p) {
      for (let i = 0; i < this.nDirty; i++) this.rs[R * this.dirty[i] + R_DIRTY] = 0;
      this.nDirty = 0;
      this.scanWaiting();
      return;
    }
    const cand = this.cand;
    for (let i = 0; i < this.nDirty; i++) {
      const r = this.dirty[i];
      this.rs[R * r + R_DIRTY] = 0;
      this.pushCandidate(r);
    }
    this.nDirty = 0;
    while (cand.size > 0) {
      const x = cand.pop();
      if (x.started) continue;
      if (this.startable(x)) this.unwaitAndStart(x);
      this.pushCandidate(x.rank);
      if (x.peer !== x.rank) this.pushCandidate(x.peer);
    }
  }

  /** Doubles the waiting arrays, dropping started entries first if that makes room. */
  private growWaiting(): void {
    if (this.nWaiting * 2 <= this.wLen) {
      this.compactWaiting();
      return;
    }
    const from = new Int32Array(this.wFrom.length * 2);
    const to = new Int32Array(this.wTo.length * 2);
    from.set(this.wFrom);
    to.set(this.wTo);
    this.wFrom = from;
    this.wTo = to;
  }

  /** Moves the entries still waiting to the front, in order. */
  private compactWaiting(): void {
    const ops = this.wOps;
    let j = 0;
    for (let i = 0; i < this.wLen; i++) {
      const x = ops[i];
      if (x === null) continue;
      if (j !== i) {
        ops[j] = x;
        this.wFrom[j] = this.wFrom[i];
        this.wTo[j] = this.wTo[i];
        x.wIndex = j;
      }
      j++;
    }
    ops.length = j;
    this.wLen = j;
  }

  /** Whether a transfer from `from` to `to` (from = to: a copy) could start now. */
  private portsFree(from: number, to: number): boolean {
    if (from !== to) return this.canSend(from) && this.canRecv(to);
    return this.duplex ? this.rs[R * from + R_BUSY_S] === 0 && this.rs[R * from + R_BUSY_R] === 0 : this.rs[R * from + R_BUSY_S] + this.rs[R * from + R_BUSY_R] < this.k;
  }

  /**
   * Starts, in match order, every waiting transfer whose ports are free (the ranks come from
   * the typed arrays: only transfers that start are touched), then drops started entries
   * if they make up half of the arrays.
   */
  private scanWaiting(): void {
    const ops = this.wOps;
    const from = this.wFrom;
    const to = this.wTo;
    const n = this.wLen;
    for (let i = 0; i < n; i++) {
      if (!this.portsFree(from[i], to[i])) continue;
      const x = ops[i];
      if (x !== null) this.unwaitAndStart(x);
    }
    if (this.nWaiting * 2 <= this.wLen) this.compactWaiting();
  }

  private startTransfer(tr: Op): void {
    const from = tr.rank;
    const to = tr.peer;
    tr.started = true;
    tr.start = this.now;
    let dur: number;
    const units = tr.len / this.unit;
    if (from !== to) {
      this.rs[R * from + R_BUSY_S]++;
      this.rs[R * to + R_BUSY_R]++;
      dur = this.model.comm(from, to, units);
    } else {
      this.rs[R * from + R_BUSY_S]++;
      if (this.duplex) this.rs[R * from + R_BUSY_R]++;
      dur = this.model.copy(from, units);
    }
    this.events.push(this.now + dur, this.evSeq++, tr);
  }

  /** Every unfinished rank with the operations it waits for. */
  /** Every rank with what it waits for (finished ranks with their leftover operations). */
  private stuckRanks(): DeadlockedRank[] {
    const waits = new Map<number, string[]>();
    const add = (r: number, what: string): void => {
      const list = waits.get(r);
      if (list === undefined) waits.set(r, [what]);
      else list.push(what);
    };
    for (const op of this.book.unmatched()) add(op.rank, describeOp(op));
    for (let r = 0; r < this.p; r++) {
      for (const x of this.waitingOf(r)) add(r, describeOp(x));
      if (this.syncResolve[r] !== null) add(r, 'waiting in clock.sync()');
    }
    const out: DeadlockedRank[] = [];
    for (let r = 0; r < this.p; r++) {
      const w = waits.get(r);
      if (w !== undefined || !this.done[r]) out.push({ rank: r, finished: this.done[r] !== 0, waitsFor: w ?? [] });
    }
    return out;
  }

  /** Rank r's operations waiting for ports, both lists merged in match order (as errors list them). */
  private waitingOf(r: number): Op[] {
    const out: Op[] = [];
    let a = this.ends[L_STRIDE * r + W_OUT];
    let b = this.ends[L_STRIDE * r + W_IN];
    while (a !== null || b !== null) {
      if (b === null || (a !== null && a.seq < (b.partner as Op).seq)) {
        out.push(a as Op);
        a = (a as Op).qNext;
      } else {
        out.push(b);
        b = b.qNext;
      }
    }
    return out;
  }

  /** Rejects every pending operation (and sync) so no rank program stays suspended on one. */
  private abortAll(reason: string, cause: unknown): void {
    this.aborted = reason;
    const ops: Op[] = this.book.unmatched();
    this.book.clear();
    for (let r = 0; r < this.p; r++) {
      for (const x of this.waitingOf(r)) {
        ops.push(x);
        if (x.partner !== null) ops.push(x.partner); // the receive of a copy to oneself is in no list
      }
      this.ends[L_STRIDE * r + W_OUT] = this.ends[L_STRIDE * r + W_OUT + 1] = null;
      this.ends[L_STRIDE * r + W_IN] = this.ends[L_STRIDE * r + W_IN + 1] = null;
    }
    this.wOps = [];
    this.wLen = 0;
    this.nWaiting = 0;
    for (const op of this.events.toArray()) {
      ops.push(op);
      if (op.partner !== null) ops.push(op.partner);
    }
    this.events.clear();
    this.clearReady();
    for (const op of ops) {
      if (!op.pending) continue;
      op.pending = false;
      this.live--;
      const err = new CommunicationError(`rank ${op.rank}: ${describeOp(op)} aborted: ${reason}`, { rank: op.rank, cause });
      if (op.owner !== null) op.owner.opFailed(op.oIndex, op.oRun, err);
      else (op.req as OpRequest<unknown>).reject(err);
    }
    // native schedules not waiting for an operation (their failure above came first otherwise)
    const tasks: SimTask[] = [];
    for (let t = this.activeHead; t !== null; t = t.activeNext) tasks.push(t);
    this.activeHead = null;
    for (const task of tasks) {
      task.activePrev = task.activeNext = null;
      task.abort(reason, cause);
    }
    this.clearReady();
    for (let r = 0; r < this.p; r++) {
      const rej = this.syncReject[r];
      if (rej === null) continue;
      this.syncResolve[r] = null;
      this.syncReject[r] = null;
      rej(new CommunicationError(`rank ${r}: clock.sync() aborted: ${reason}`, { rank: r, cause }));
    }
    this.syncCount = 0;
  }
}

function describeStuckRank(s: DeadlockedRank): string {
  if (s.waitsFor.length > 0) return `rank ${s.rank}: ${s.waitsFor.join(', ')}`;
  return `rank ${s.rank}: blocked outside the communicator`;
}
