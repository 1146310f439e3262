/**
 * The simulator's native executor of schedules (comm/schedule.ts, Endpoint.bindSchedule): a
 * state machine the engine runs between its events, replaying one rank's schedule exactly as
 * the portable executor (schedule/run.ts) runs it on the simulator — same operations posted
 * in the same order at the same virtual times, same matching, data, windows and errors — with
 * one request per `start()` and nothing per operation: the operations are the engine's own
 * (Simulation.postOwned), settled by calls to this object, and the rank's next operations are
 * posted from the engine's ready queue at the virtual time of the completion that allows them
 * (where the rank program of the portable executor would have run), without a turn of the
 * event loop.
 *
 * Binding precomputes per distinct operation what posting needs (kind, world peer, endpoint
 * context, tag, length, the views of the bound buffers; the pieces of a copy), so a run
 * allocates only its request, and a schedule that repeats operations shares their data.
 *
 * Semantics mirrored from the portable executor on the simulator:
 * - a send / receive is one message of its span (a vectored one for several ranges); a
 *   receive that got another length than its span fails the run with `options.recvError`
 *   (default: the CommunicationError of schedule/run.ts); a longer message is the engine's
 *   TruncationError (through `recvError` when given);
 * - a copy without a tag is the endpoint's `copy`, piece by piece (each charged as one), done
 *   when issued, holding no window slot; with a tag, the message to the rank itself (its
 *   receive posted first), holding one slot until it has arrived;
 * - a combine is the bound operator's function on its two views (made at bind time), done
 *   when issued like a processor copy but not charged (local computation); one that throws
 *   fails the run;
 * - operation j of a step is issued once fewer than `window` of the step's earlier operations
 *   are unfinished (comm/request.ts `inOrder`); a step whose window covers its operations
 *   posts them all and checks its receives' lengths, in order, once all have completed;
 * - a step with concurrent streams (ScheduleStep `streams`, `after`; schedule/run.ts
 *   `streamed`, whatever its window) issues each stream in order with at most `window` of
 *   its own operations outstanding, an operation whose `after` has not completed holding its
 *   stream there; an operation's continuation (the hops of a windowed one: two after a
 *   message's completion, one after a processor copy or combine) marks it completed, frees its
 *   stream's slot and issues from its own stream first, then from every other stream in index
 *   order; the continuation of the step's last operation ends the step (the run resumes one
 *   hop later). Per stream step, bound once: where each stream starts, each operation's
 *   stream and its dependency, all relative to the step (StreamLayout); per run only counters
 *   (sNext, sRunning, sFinished), so a run allocates nothing more. A stream operation's
 *   continuation is the ready queue's code C_SOP + its index in the step.
 */
import { endpointCtx } from '../../comm/agree.js';
import { badTag } from '../../comm/group.js';
import { OpRequest, type Request } from '../../comm/request.js';
import { combineFunction, type EndpointSchedule, type RankSchedule, type ScheduleOp, type ScheduleOptions, type ScheduleWait, type Span, shiftedTag, spanBytes, spanView } from '../../comm/schedule.js';
import { forEachPiece, type MessageBuffer } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';
import { type OpOwner, RECV, SEND } from './op.js';
import type { SimTask, Simulation } from './sim.js';

const K_SEND = 0;
const K_RECV = 1;
/** The processor's copy (no tag). */
const K_COPY = 2;
/** A copy through a port: the message to oneself. */
const K_PORT = 3;
/** A combine: the bound operator's function (combineFns), done when issued, not charged. */
const K_COMBINE = 4;

/** Continuations (SimTask.hop codes). */
const C_OP = 0;
const C_STEP = 1;
const C_FAIL = 2;
/** A stream step's operation j (its index in the step) completed: code C_SOP + j. */
const C_SOP = 3;

const EMPTY = new Uint8Array(0);
const EMPTY_I32 = new Int32Array(0);
/**
 * n zeros in a plain array of doubles: what a schedule keeps per operation and step (a typed
 * array costs an ArrayBuffer and a backing store besides: several hundred bytes for the one
 * or two operations of most ranks' schedules, of which a simulation holds one per rank).
 * Always double elements, so the executor's loads see one kind of array.
 */
function doubles(n: number): number[] {
  const a = new Array<number>(n).fill(0.5);
  a.fill(0);
  return a;
}

/** Shared by every schedule without processor copies or combines (never written: a schedule with some makes its own). */
const NO_PIECES: Uint8Array[] = [];
const NO_COMBINES: (() => void)[] = [];
/** A processor copy of at most this many bytes is a loop (see SimSchedule.pieceShort). */
const SHORT_COPY = 16;

/** Per-operation block (SimSchedule.d, one per distinct operation): its stride and fields. */
const S = 8;
const D_KIND = 0;
const D_PEER = 1;
const D_CTX = 2;
const D_TAG = 3;
const D_LEN = 4;
const D_PIECE = 5;
const D_PIECE_END = 6;
const D_SHIFT = 7;
/** Per-step block (SimSchedule.sd): its stride and fields. */
const T = 3;
const T_LO = 0;
const T_WINDOW = 1;
const T_REQS = 2;
/** No failure pending. */
const NONE: unique symbol = Symbol('none');

/** A step with streams as bound (indices relative to the step's first operation). */
interface StreamLayout {
  /** Stream k's operations are [starts[k], starts[k + 1]); m + 1 entries. */
  readonly starts: Int32Array;
  /** Per operation: its stream. */
  readonly of: Int32Array;
  /** Per operation: the operation it waits for, or −1; null when the step has no `after`. */
  readonly after: Int32Array | null;
}

export class SimSchedule implements EndpointSchedule, OpOwner, SimTask {
  // What a completion reads comes first (V8 lays fields out in declaration order): a
  // settlement touches one or two cache lines of this object.
  private readonly sim: Simulation;
  // the run
  /** Number of the current (or last) run: settlements of an earlier run's operations are ignored. */
  private run = 0;
  /** The run's tag shift (shiftedTag). */
  private shift = 0;
  private req: OpRequest<void> | null = null;
  private step = -1;
  private lo = 0;
  private hi = 0;
  /** Next operation of the step to issue. */
  private next = 0;
  /** A windowed step: operations issued whose continuation has not run (inOrder's `running`). */
  private running = 0;
  /** A windowed step: operations whose continuation has run (inOrder's `done`). */
  private done = 0;
  /** A step all at once: operations not completed. */
  private unfinished = 0;
  /** A step all at once: being issued (its wait starts after the last operation is issued). */
  private issuing = false;
  private windowed = false;
  private windowSize = 0;
  /** A stream step: its layout (windowed is true then; null for any other step). */
  private layout: StreamLayout | null = null;
  private error: unknown = NONE;
  /**
   * The current step's operations' state, operation i at 2(i − lo) (only the current step's
   * operations are ever outstanding: a step ends when all of its operations did): engine
   * operations outstanding (2 for a copy through a port), then bytes received.
   */
  private readonly cur: number[];
  private readonly worldRank: number;
  activePrev: SimTask | null = null;
  activeNext: SimTask | null = null;
  private readonly nSteps: number;
  /**
   * Per step s, at T·s: T_LO (its first operation: its operations are [lo, next step's lo);
   * one more block for the end), T_WINDOW, T_REQS (1: it has an operation with a request,
   * anything but a processor copy).
   */
  private readonly sd: number[];
  /**
   * What is bound per operation is bound once per distinct operation object (a schedule that
   * repeats its steps, e.g. several calls' worth in one, shares their data: a replay reads
   * the same few cache lines again instead of streaming through per-operation copies):
   * operation i (in schedule order) is distinct operation `tpl[i]` (null: every operation
   * is distinct, operation i is i).
   */
  private readonly tpl: Int32Array | null;
  /** The distinct operations. */
  private readonly ops: ScheduleOp[];
  /**
   * Per distinct operation t, at t·S (one block, so an operation's data shares cache lines):
   * D_KIND, D_PEER (world rank; this rank for copies), D_CTX (endpoint context), D_TAG,
   * D_LEN (bytes), D_PIECE and D_PIECE_END (a processor copy's pieces), D_SHIFT (1: a
   * collective tag of the first call slot, moved by a run's tag shift, shiftedTag).
   */
  private readonly d: number[];
  /** Send: the data; receive: the buffer; copy: the destination (at 2t); a copy's source (2t + 1). */
  private readonly bufs: MessageBuffer[];
  // what most schedules do not have is shared empty (a rank of a huge simulation holds one schedule)
  private pieceDst: Uint8Array[] = NO_PIECES;
  /** Per distinct combine operation t: its bound function (combineFunction). */
  private combineFns: (() => void)[] = NO_COMBINES;
  private pieceSrc: Uint8Array[] = NO_PIECES;
  /**
   * Per piece, 1: at most SHORT_COPY bytes with source and destination disjoint, copied by a
   * loop (the same bytes as `set`, without the call into the runtime for a few bytes).
   */
  private pieceShort: Uint8Array = EMPTY;
  /** Distinct operations whose tag is not a tag (the portable executor's isend / irecv fail with this): their error (null: none). */
  private badTags: Map<number, Error> | null = null;
  private readonly recvError: ScheduleOptions['recvError'];
  /** The schedule's (communicator) rank, for error texts. */
  private readonly commRank: number;
  /** Per step: its StreamLayout, undefined without streams; null when no step has streams. */
  private readonly layouts: (StreamLayout | undefined)[] | null = null;
  /** A stream step, per stream: its next operation (relative to the step), its operations outstanding (portable `next`, `running`). */
  private sNext: Int32Array = EMPTY_I32;
  private sRunning: Int32Array = EMPTY_I32;
  /** A stream step, per operation: 1 once its continuation has run (portable `finished`). */
  private sFinished: Uint8Array = EMPTY;

  constructor(
    sim: Simulation,
    worldRank: number,
    ctx: number,
    worldOf: Int32Array | null,
    schedule: RankSchedule,
    buffers: readonly Uint8Array[],
    options: ScheduleOptions,
  ) {
    this.sim = sim;
    this.worldRank = worldRank;
    this.recvError = options.recvError;
    this.commRank = schedule.rank;
    const steps = schedule.steps;
    this.nSteps = steps.length;
    let n = 0;
    let widest = 0;
    for (const st of steps) {
      n += st.ops.length;
      if (st.ops.length > widest) widest = st.ops.length;
    }
    const index = new Map<ScheduleOp, number>();
    const distinct: ScheduleOp[] = [];
    const tpl = new Int32Array(n);
    let i = 0;
    for (const st of steps) {
      for (const op of st.ops) {
        let t = index.get(op);
        if (t === undefined) {
          t = distinct.length;
          index.set(op, t);
          distinct.push(op);
        }
        tpl[i++] = t;
      }
    }
    const m = distinct.length;
    this.cur = doubles(2 * widest);
    this.sd = doubles((steps.length + 1) * T);
    this.d = doubles(m * S);
    let lo = 0;
    for (let s = 0; s < steps.length; s++) {
      const at = s * T;
      this.sd[at + T_LO] = lo;
      this.sd[at + T_WINDOW] = steps[s].window;
      this.sd[at + T_REQS] = steps[s].ops.some((op) => (op.kind !== 'copy' && op.kind !== 'combine') || (op.kind === 'copy' && op.tag !== undefined)) ? 1 : 0;
      lo += steps[s].ops.length;
    }
    this.sd[steps.length * T + T_LO] = n;
    if (steps.some((st) => st.streams !== undefined)) {
      this.layouts = steps.map((st) => (st.streams === undefined ? undefined : streamLayout(st.streams, st.after, st.ops.length)));
      let streams = 0;
      let ops = 0;
      for (const st of steps) {
        if (st.streams === undefined) continue;
        if (st.streams.length > streams) streams = st.streams.length;
        if (st.ops.length > ops) ops = st.ops.length;
      }
      this.sNext = new Int32Array(streams);
      this.sRunning = new Int32Array(streams);
      this.sFinished = new Uint8Array(ops);
    }
    this.ops = distinct.length < 16 ? distinct.slice() : distinct; // exact capacity for the small ones
    this.tpl = m === n ? null : tpl;
    this.bufs = new Array<MessageBuffer>(2 * m).fill(EMPTY);
    const view = (span: Span): MessageBuffer => spanView(buffers, span);
    for (let t = 0; t < m; t++) {
      const op = this.ops[t];
      this.d[t * S + D_PIECE] = this.pieceDst.length;
      if (op.kind === 'copy') {
        const to = view(op.to);
        const from = view(op.from);
        const bytes = spanBytes(op.from);
        this.bufs[2 * t] = to;
        this.bufs[2 * t + 1] = from;
        this.d[t * S + D_LEN] = bytes;
        this.d[t * S + D_PEER] = worldRank;
        if (op.tag !== undefined) {
          this.d[t * S + D_KIND] = K_PORT;
          this.setTag(t, op.tag, ctx);
        } else {
          this.d[t * S + D_KIND] = K_COPY;
          // as schedule/run.ts copySpan: one copy of whole views, else piece by piece
          if (this.pieceDst === NO_PIECES) {
            this.pieceDst = [];
            this.pieceSrc = [];
          }
          if (to instanceof Uint8Array && from instanceof Uint8Array) {
            this.pieceDst.push(to);
            this.pieceSrc.push(from);
          } else {
            forEachPiece(to, from, bytes, (d, s) => {
              this.pieceDst.push(d);
              this.pieceSrc.push(s);
            });
          }
        }
      } else if (op.kind === 'combine') {
        this.d[t * S + D_KIND] = K_COMBINE;
        this.d[t * S + D_PEER] = worldRank;
        if (this.combineFns === NO_COMBINES) this.combineFns = [];
        this.combineFns[t] = combineFunction(op, buffers, options.combine);
      } else {
        this.d[t * S + D_KIND] = op.kind === 'send' ? K_SEND : K_RECV;
        this.d[t * S + D_PEER] = worldOf === null ? op.peer : worldOf[op.peer];
        this.setTag(t, op.tag, ctx);
        const b = view(op.data);
        this.bufs[2 * t] = b;
        this.d[t * S + D_LEN] = spanBytes(op.data);
        this.bufs[2 * t + 1] = EMPTY;
      }
      this.d[t * S + D_PIECE_END] = this.pieceDst.length;
    }
    if (this.pieceDst.length > 0) this.pieceShort = new Uint8Array(this.pieceDst.length);
    for (let x = 0; x < this.pieceDst.length; x++) {
      const dst = this.pieceDst[x];
      const src = this.pieceSrc[x];
      const len = src.length;
      const disjoint = dst.buffer !== src.buffer || dst.byteOffset + len <= src.byteOffset || src.byteOffset + len <= dst.byteOffset;
      this.pieceShort[x] = len <= SHORT_COPY && disjoint ? 1 : 0;
    }
  }

  /** The distinct operation of operation i. */
  private opAt(i: number): number {
    return this.tpl === null ? i : this.tpl[i];
  }

  /** Distinct operation t's tag, its endpoint context, whether a run's shift moves it, or that it is no tag. */
  private setTag(t: number, tag: number, ctx: number): void {
    const bad = badTag(tag, false, this.commRank);
    if (bad !== undefined) {
      (this.badTags ??= new Map()).set(t, bad);
      return;
    }
    this.d[t * S + D_TAG] = tag;
    this.d[t * S + D_CTX] = endpointCtx(ctx, tag);
    this.d[t * S + D_SHIFT] = shiftedTag(tag, 1) !== tag ? 1 : 0;
  }

  /** Runs the schedule once, its collective tags moved by `tagShift` (shiftedTag). */
  start(tagShift = 0): Request<void> {
    const rank = this.worldRank;
    if (this.req !== null) {
      return OpRequest.failed(new InvalidArgumentError('schedule', 'started again before its previous run completed (one run at a time)', { rank }));
    }
    const aborted = this.sim.abortReason;
    if (aborted !== undefined) return OpRequest.failed(new CommunicationError(aborted, { rank }));
    const req = new OpRequest<void>();
    this.req = req;
    this.run++;
    this.shift = tagShift;
    this.error = NONE;
    this.step = -1;
    this.lo = this.hi = this.next = 0;
    this.issuing = false;
    this.sim.activate(this, true);
    this.nextStep();
    return req;
  }

  waiting(): ScheduleWait | undefined {
    if (this.req === null) return undefined;
    const layout = this.layout;
    if (layout !== null) {
      // the issued operations of each stream, in operation order
      for (let k = 0; k + 1 < layout.starts.length; k++) {
        for (let j = layout.starts[k]; j < this.sNext[k]; j++) if (this.cur[2 * j] !== 0) return this.waitOf(this.lo + j);
      }
      return undefined;
    }
    for (let i = this.lo; i < this.next; i++) if (this.cur[2 * (i - this.lo)] !== 0) return this.waitOf(i);
    return undefined;
  }

  /** What operation i (outstanding) waits for. */
  private waitOf(i: number): ScheduleWait {
    const at = this.opAt(i) * S;
    return { kind: this.d[at + D_KIND] === K_SEND ? 'send' : 'recv', peer: this.d[at + D_PEER], tag: this.d[at + D_TAG] + this.d[at + D_SHIFT] * this.shift };
  }

  /*
   * Continuations, counted in hops of the portable executor's promise chains (so that ranks
   * at one virtual time post in the order their portable programs would): a windowed
   * operation's completion reaches inOrder two hops later (one for a processor copy, whose
   * promise is settled), the end of a windowed step the run one hop after that; a step all
   * at once resumes the run two hops after its last completion (its waitAll, then allAtOnce
   * returning), one when it made no request. A stream step's operation completes as a
   * windowed one (C_SOP + j instead of C_OP: its continuation needs to know which).
   */

  hop(code: number, run: number): void {
    if (run !== this.run || this.req === null) return;
    if (this.error !== NONE) {
      this.end(true, this.error);
      return;
    }
    if (code === C_OP) {
      this.running--;
      if (++this.done === this.hi - this.lo) this.sim.later(this, 1, C_STEP, run);
      else this.launch();
      return;
    }
    if (code >= C_SOP) {
      this.streamOpDone(code - C_SOP);
      return;
    }
    // C_STEP: the run resumes after a step
    if (!this.windowed) {
      const e = this.checkStep();
      if (e !== undefined) {
        this.end(true, e);
        return;
      }
    }
    this.nextStep();
  }

  /** Starts the next step with operations, or ends the run. */
  private nextStep(): void {
    const d = this.sd;
    let s = this.step + 1;
    while (s < this.nSteps && d[(s + 1) * T + T_LO] === d[s * T + T_LO]) s++;
    this.step = s;
    if (s === this.nSteps) {
      this.end(false, undefined);
      return;
    }
    const at = s * T;
    // `| 0`: the fields stay small integers (V8 Smis), not boxed doubles
    const lo = d[at + T_LO] | 0;
    this.lo = this.next = lo;
    this.hi = d[at + T + T_LO] | 0;
    const n = this.hi - lo;
    const w = d[at + T_WINDOW];
    if (this.layouts !== null) {
      const layout = this.layouts[s];
      this.layout = layout ?? null;
      if (layout !== undefined) {
        this.startStreams(layout, n, w);
        return;
      }
    }
    this.windowed = w < n;
    // running < w ⇔ running < ⌈w⌉ for an integer count
    this.windowSize = this.windowed ? Math.ceil(w) | 0 : n;
    if (this.windowed) {
      this.running = this.done = 0;
      this.launch();
      return;
    }
    this.unfinished = n;
    this.issuing = true;
    const hi = this.hi;
    while (this.next < hi) if (!this.issue(this.next++)) return;
    this.issuing = false;
    if (this.unfinished === 0) this.sim.later(this, d[at + T_REQS] === 1 ? 2 : 1, C_STEP, this.run);
  }

  /** A windowed step: issues while fewer than `window` operations are running. */
  private launch(): void {
    const hi = this.hi;
    while (this.next < hi && this.running < this.windowSize) if (!this.issue(this.next++)) return;
  }

  /** Starts a step of `n` operations with streams (`layout`), at most `window` outstanding per stream: each stream issues, in index order. */
  private startStreams(layout: StreamLayout, n: number, window: number): void {
    this.windowed = true;
    this.windowSize = window;
    this.done = 0;
    const m = layout.starts.length - 1;
    for (let k = 0; k < m; k++) {
      this.sNext[k] = layout.starts[k];
      this.sRunning[k] = 0;
    }
    this.sFinished.fill(0, 0, n);
    for (let k = 0; k < m; k++) if (!this.launchStream(k)) return;
  }

  /**
   * Issues from stream k while it has fewer than `window` operations outstanding and its
   * next operation's dependency (if any) has completed; false when the run has failed
   * (nothing more to issue).
   */
  private launchStream(k: number): boolean {
    const layout = this.layout as StreamLayout;
    const end = layout.starts[k + 1];
    const after = layout.after;
    const lo = this.lo;
    while (this.sNext[k] < end && this.sRunning[k] < this.windowSize) {
      const j = this.sNext[k];
      if (after !== null) {
        const dep = after[j];
        if (dep >= 0 && this.sFinished[dep] === 0) return true;
      }
      this.sNext[k] = j + 1;
      this.sRunning[k]++;
      if (!this.issue(lo + j)) return false;
    }
    return true;
  }

  /** The continuation of a stream step's operation j: its stream issues first, then the others in index order; the last ends the step. */
  private streamOpDone(j: number): void {
    const layout = this.layout as StreamLayout;
    this.sFinished[j] = 1;
    const k = layout.of[j];
    this.sRunning[k]--;
    if (++this.done === this.hi - this.lo) {
      this.sim.later(this, 1, C_STEP, this.run);
      return;
    }
    if (!this.launchStream(k)) return;
    const m = layout.starts.length - 1;
    for (let q = 0; q < m; q++) if (q !== k && !this.launchStream(q)) return;
  }

  /**
   * A local operation (processor copy, combine) done as issued: in a windowed step its
   * continuation one hop later (the portable executor's settled promise), else one fewer unfinished.
   */
  private localDone(j: number): void {
    if (this.windowed) {
      this.running++;
      this.sim.later(this, 1, this.layout === null ? C_OP : C_SOP + j, this.run);
    } else {
      this.unfinished--;
    }
  }

  /** Issues operation i; false when the simulation aborted (the run then has failed). */
  private issue(i: number): boolean {
    const sim = this.sim;
    const rank = this.worldRank;
    const d = this.d;
    const t = this.opAt(i);
    const at = t * S;
    const j = i - this.lo;
    const k = d[at + D_KIND];
    if (k === K_COMBINE) {
      // as the portable executor: done when issued (one hop in a windowed step), a throw fails the run
      this.cur[2 * j] = 0;
      try {
        this.combineFns[t]();
      } catch (e) {
        if (this.error === NONE) this.error = e;
        sim.later(this, 1, C_FAIL, this.run);
        return false;
      }
      this.localDone(j);
      return true;
    }
    if (k === K_COPY) {
      this.cur[2 * j] = 0;
      const end = d[at + D_PIECE_END] | 0;
      for (let x = d[at + D_PIECE] | 0; x < end; x++) {
        const src = this.pieceSrc[x];
        const dst = this.pieceDst[x];
        const m = src.length;
        if (this.pieceShort[x] === 1) for (let b = 0; b < m; b++) dst[b] = src[b];
        else dst.set(src);
        sim.chargeCopy(rank, m);
      }
      this.localDone(j);
      return true;
    }
    this.running++;
    if (this.badTags !== null && this.badTags.has(t)) {
      // the portable executor's isend / irecv fail at once
      this.cur[2 * j] = 1;
      this.opFailed(i, this.run, this.badTags.get(t));
      return true;
    }
    const tag = d[at + D_TAG] + d[at + D_SHIFT] * this.shift;
    let ok: boolean;
    if (k === K_PORT) {
      this.cur[2 * j] = 2;
      // as collectives/ports.ts selfCopy: the receive first
      ok =
        sim.postOwned(RECV, rank, d[at + D_CTX], rank, tag, this.bufs[2 * t], d[at + D_LEN], this, i, this.run) &&
        sim.postOwned(SEND, rank, d[at + D_CTX], rank, tag, this.bufs[2 * t + 1], d[at + D_LEN], this, i, this.run);
    } else {
      this.cur[2 * j] = 1;
      ok = sim.postOwned(k === K_SEND ? SEND : RECV, rank, d[at + D_CTX], d[at + D_PEER], tag, this.bufs[2 * t], d[at + D_LEN], this, i, this.run);
    }
    if (!ok && this.req !== null) this.end(true, new CommunicationError(sim.abortReason ?? 'the simulation aborted', { rank }));
    return ok && this.req !== null;
  }

  opDone(i: number, run: number, bytes: number): void {
    const j = i - this.lo;
    if (run !== this.run || this.req === null || this.cur[2 * j] === 0) return;
    if (--this.cur[2 * j] > 0) return;
    this.cur[2 * j + 1] = bytes;
    if (this.windowed) {
      const at = this.opAt(i) * S;
      if (this.d[at + D_KIND] === K_RECV && bytes !== this.d[at + D_LEN] && this.error === NONE) this.error = this.shortError(i, bytes);
      this.sim.later(this, 2, this.layout === null ? C_OP : C_SOP + j, run);
    } else if (--this.unfinished === 0 && !this.issuing) {
      this.sim.later(this, 2, C_STEP, run);
    }
  }

  opFailed(i: number, run: number, error: unknown): void {
    if (run !== this.run || this.req === null) return;
    this.cur[2 * (i - this.lo)] = 0;
    if (this.error === NONE) {
      const t = this.opAt(i);
      const op = this.ops[t];
      const recvError = this.recvError;
      if (recvError !== undefined && op.kind === 'recv' && error instanceof TruncationError) {
        try {
          this.error = recvError(op.peer, op.tag, this.d[t * S + D_LEN], undefined, error);
        } catch (e) {
          this.error = e;
        }
      } else {
        this.error = error;
      }
    }
    this.sim.later(this, 1, C_FAIL, run);
  }

  abort(reason: string, cause: unknown): void {
    if (this.req === null) return;
    const rank = this.worldRank;
    this.end(true, this.error !== NONE ? this.error : new CommunicationError(`rank ${rank}: schedule aborted: ${reason}`, { rank, cause }));
  }

  /** A step run all at once: its receives' lengths, in order (the first wrong one's error). */
  private checkStep(): unknown {
    for (let i = this.lo; i < this.hi; i++) {
      const at = this.opAt(i) * S;
      const got = this.cur[2 * (i - this.lo) + 1];
      if (this.d[at + D_KIND] === K_RECV && got !== this.d[at + D_LEN]) return this.shortError(i, got);
    }
    return undefined;
  }

  /** schedule/run.ts checkStatus's error. */
  private shortError(i: number, got: number): unknown {
    const t = this.opAt(i);
    const op = this.ops[t];
    if (op.kind !== 'recv') return undefined;
    const expected = this.d[t * S + D_LEN];
    if (this.recvError !== undefined) {
      try {
        return this.recvError(op.peer, op.tag, expected, got, undefined);
      } catch (e) {
        return e;
      }
    }
    let s = 0;
    while (this.sd[(s + 1) * T + T_LO] <= i) s++;
    const j = i - this.sd[s * T + T_LO];
    const rank = this.commRank;
    return new CommunicationError(
      `rank ${rank}: schedule step ${s} op ${j}: receive from rank ${op.peer} tag ${op.tag} got ${got} bytes, expected ${expected}`,
      { rank },
    );
  }

  private end(failed: boolean, value: unknown): void {
    const req = this.req as OpRequest<void>;
    this.req = null;
    this.sim.activate(this, false);
    this.sim.settle(req as OpRequest<unknown>, failed, value);
  }
}

/** The StreamLayout of a step of `n` operations with `streams` and `after` (validated: schedule/streams.ts). */
function streamLayout(streams: readonly number[], after: readonly number[] | undefined, n: number): StreamLayout {
  const m = streams.length;
  const starts = new Int32Array(m + 1);
  const of = new Int32Array(n);
  for (let k = 0, at = 0; k < m; k++) {
    starts[k] = at;
    of.fill(k, at, at + streams[k]);
    at += streams[k];
    starts[k + 1] = at;
  }
  return { starts, of, after: after === undefined ? null : Int32Array.from(after) };
}
