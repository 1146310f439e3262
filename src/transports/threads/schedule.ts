/**
 * The threads transport's native executor of schedules (comm/schedule.ts; Endpoint.bindSchedule):
 * a schedule's sends and receives are the endpoint's own (endpoint.ts `scheduleSend` and
 * `scheduleRecv`: the paths of `isend` and `irecv` — the direct ring write, the direct take of
 * a message already in the ring, the unexpected queue, the posted queue, the send queues —
 * without an OpRequest per operation), so they match exactly as `isend`/`irecv` posted in the
 * same order would, among themselves and with the rank's other pending operations (MPI order,
 * non-overtaking), and a failure, a deadlock or a timeout reaches them as it reaches any
 * receive (progress.ts `failWith`, the deadlock monitor's listing of pending operations).
 *
 * One run (`start()`): step after step, the step's operations issued in order while fewer than
 * `window` are outstanding (a plain copy, and a copy through a port done as a direct copy,
 * complete when issued); everything that can complete in the caller's turn does. If the run
 * must wait, it spins for a bounded number of loads (endpoint.ts `scheduleSpin`, at most a
 * blocking `recv`'s watch), then returns its one request: completions then come from the
 * progress loop (the posted records name this executor as their `owner`), which resumes the
 * run at its next turn (progress.ts `readySchedules`) — nothing is posted from inside a channel
 * pump. One request per run, a promise only if it is awaited; nothing else is allocated once
 * the endpoint's pools are warm.
 *
 * A step with concurrent streams (comm/schedule.ts ScheduleStep `streams`, `after`; validated
 * by schedule/run.ts bindSchedule, schedule/streams.ts) has its own branch and state (per
 * stream: the next operation to issue, how many of its own are outstanding), so steps without
 * streams run exactly as above. The run issues the streams in index order, each in order while
 * fewer than `window` of its own operations are outstanding and the next one's dependency (an
 * operation of an earlier stream) has completed, else that stream waits there; passes over the
 * streams repeat while one issues anything (an operation completed at once — a plain copy, a
 * combine, a send straight into the ring, a receive of a message already there — may let a
 * later stream go, and the issuing may have moved messages for earlier streams). A completion
 * reported by the progress loop resumes the run at the loop's next turn, as above. So the
 * order of issue within a stream, the per-stream window and the dependencies are the portable
 * executor's (schedule/run.ts `streamed`); only the interleaving of the streams differs (there,
 * each completion is a promise hop; the simulator's executor reproduces those).
 *
 * Results as the portable executor's (schedule/run.ts): a receive of another length than its
 * span fails the run with `options.recvError(peer, tag, expected, got, undefined)` or the same
 * CommunicationError text; a longer message with the endpoint's TruncationError (through
 * `recvError(peer, tag, expected, undefined, cause)` when given). Operations still posted when
 * a run fails stay posted (as the portable executor's requests do); a later run ignores them.
 */

import { endpointCtx } from '../../comm/agree.js';
import { badTag } from '../../comm/group.js';
import { OpRequest, type Request } from '../../comm/request.js';
import { combineFunction, type EndpointSchedule, type RankSchedule, type ScheduleOptions, type ScheduleWait, type Span, shiftedTag, spanBytes, spanView } from '../../comm/schedule.js';
import { forEachPiece, type MessageBuffer } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';
import type { ThreadsEndpoint } from './endpoint.js';
import { EMPTY, type ScheduleOwner } from './pools.js';

const SEND = 0;
const RECV = 1;
const COPY = 2;
/** A combine operation (its function in `combineOf`): done when issued, like a copy. */
const COMBINE = 4;
/** An operation whose arguments the endpoint would reject (a bad tag): the run fails when it is issued. */
const BAD = 3;

/** The request of every run that completed in `start()` (done requests are immutable: shared). */
const DONE: OpRequest<void> = OpRequest.done(undefined);
/** Rounds of bounded spinning `start()` does while each brings news (each at most `scheduleSpin`'s loads). */
const START_SPIN_ROUNDS = 64;

/** One rank's schedule bound to its buffers over a threads endpoint. */
export class ThreadsSchedule implements EndpointSchedule, ScheduleOwner {
  private readonly ep: ThreadsEndpoint;
  /** The communicator rank (named by errors). */
  private readonly rank: number;
  private readonly recvError: ScheduleOptions['recvError'];

  // Every operation, step after step (index k).
  private readonly kind: Uint8Array;
  private readonly ctxOf: Int32Array;
  /** World rank of the peer. */
  private readonly peerOf: Int32Array;
  /** Communicator rank of the peer (for recvError and messages). */
  private readonly commPeerOf: Int32Array;
  /** The tag as compiled (what errors name). */
  private readonly tagOf: Int32Array;
  /** 1: a collective tag of the first call slot, moved by a run's tag shift (shiftedTag). */
  private readonly shiftable: Uint8Array;
  /** A send's data, a receive's buffer, a copy's destination. */
  private readonly bufOf: MessageBuffer[];
  /** A copy's source. */
  private readonly fromOf: MessageBuffer[];
  /** A combine operation's bound function (combineFunction). */
  private readonly combineOf: (() => void)[] = [];
  /** Bytes of the span (a receive expects exactly these). */
  private readonly bytesOf: Float64Array;
  /** Issued and complete (this run). */
  private readonly doneOf: Uint8Array;
  /** A BAD operation's error. */
  private readonly badOf: (Error | undefined)[];
  private readonly stepOf: Int32Array;
  /** Step s is operations [stepStart[s], stepStart[s + 1]). */
  private readonly stepStart: Int32Array;
  private readonly stepWindow: Float64Array;
  private readonly steps: number;

  // Steps with streams (ScheduleStep.streams; empty arrays when the schedule has none).
  /** Per step: where its streams' bounds start in `streamBounds`, −1 for a step without streams. */
  private readonly streamsAt: Int32Array;
  /** Per step: its number of streams. */
  private readonly streamCount: Int32Array;
  /** Stream q of the step at a = streamsAt[s] is operations [streamBounds[a + q], streamBounds[a + q + 1]). */
  private readonly streamBounds: Int32Array;
  /** Per operation of a step with streams: its stream (index in its step). */
  private readonly streamOf: Int32Array;
  /** Per operation of a step with streams: the operation (index k) it is issued after, or −1. */
  private readonly afterOf: Int32Array;
  /** Per stream of the current step: its next operation, its end, its operations outstanding. */
  private readonly sNext: Int32Array;
  private readonly sEnd: Int32Array;
  private readonly sRunning: Int32Array;

  // The current run.
  private run = 0;
  /** This run's tag shift. */
  private shift = 0;
  private running = false;
  private req: OpRequest<void> | null = null;
  private failed = false;
  private error: unknown = undefined;
  private step = -1;
  private next = 0;
  private end = 0;
  private window = 0;
  private outstanding = 0;
  /** start() or resume() is issuing: completions only count. */
  private driving = false;
  /** Queued in the endpoint's ready schedules. */
  private queued = false;
  /** The current step has streams (advanceStreams runs it). */
  private streamed = false;

  constructor(ep: ThreadsEndpoint, ctx: number, worldOf: Int32Array | null, schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions) {
    this.ep = ep;
    this.rank = schedule.rank;
    this.recvError = options.recvError;
    const n = schedule.steps.reduce((a, st) => a + st.ops.length, 0);
    this.kind = new Uint8Array(n);
    this.ctxOf = new Int32Array(n);
    this.peerOf = new Int32Array(n);
    this.commPeerOf = new Int32Array(n);
    this.tagOf = new Int32Array(n);
    this.shiftable = new Uint8Array(n);
    this.bufOf = new Array<MessageBuffer>(n).fill(EMPTY);
    this.fromOf = new Array<MessageBuffer>(n).fill(EMPTY);
    this.bytesOf = new Float64Array(n);
    this.doneOf = new Uint8Array(n);
    this.badOf = new Array<Error | undefined>(n);
    this.stepOf = new Int32Array(n);
    this.steps = schedule.steps.length;
    this.stepStart = new Int32Array(this.steps + 1);
    this.stepWindow = new Float64Array(this.steps);
    this.streamsAt = new Int32Array(this.steps).fill(-1);
    this.streamCount = new Int32Array(this.steps);
    let bounds = 0;
    let widest = 0;
    for (const st of schedule.steps) {
      if (st.streams === undefined) continue;
      bounds += st.streams.length + 1;
      widest = Math.max(widest, st.streams.length);
    }
    const anyStreams = bounds > 0;
    this.streamBounds = new Int32Array(bounds);
    this.streamOf = new Int32Array(anyStreams ? n : 0);
    this.afterOf = new Int32Array(anyStreams ? n : 0);
    this.sNext = new Int32Array(widest);
    this.sEnd = new Int32Array(widest);
    this.sRunning = new Int32Array(widest);
    const view = (span: Span): MessageBuffer => spanView(buffers, span);
    let k = 0;
    let at = 0;
    schedule.steps.forEach((st, s) => {
      this.stepStart[s] = k;
      this.stepWindow[s] = st.window;
      if (st.streams !== undefined) {
        // stream q's operations are consecutive: [k + Σ_{q' < q} streams[q'], … + streams[q])
        this.streamsAt[s] = at;
        this.streamCount[s] = st.streams.length;
        let i = k;
        for (let q = 0; q < st.streams.length; q++) {
          this.streamBounds[at + q] = i;
          for (let c = 0; c < st.streams[q]; c++) {
            this.streamOf[i] = q;
            const d = st.after === undefined ? -1 : st.after[i - k];
            this.afterOf[i] = d >= 0 ? k + d : -1;
            i++;
          }
        }
        this.streamBounds[at + st.streams.length] = i;
        at += st.streams.length + 1;
      }
      for (const op of st.ops) {
        this.stepOf[k] = s;
        if (op.kind === 'combine') {
          this.kind[k] = COMBINE;
          this.combineOf[k] = combineFunction(op, buffers, options.combine);
        } else if (op.kind === 'copy') {
          this.kind[k] = COPY;
          this.bufOf[k] = view(op.to);
          this.fromOf[k] = view(op.from);
          this.bytesOf[k] = spanBytes(op.to);
        } else {
          const bad = badTag(op.tag, false, this.rank);
          this.kind[k] = bad !== undefined ? BAD : op.kind === 'send' ? SEND : RECV;
          this.badOf[k] = bad;
          this.tagOf[k] = op.tag | 0;
          this.shiftable[k] = bad === undefined && shiftedTag(op.tag, 1) !== op.tag ? 1 : 0;
          this.ctxOf[k] = bad !== undefined ? 0 : endpointCtx(ctx, op.tag);
          this.commPeerOf[k] = op.peer;
          this.peerOf[k] = worldOf === null ? op.peer : worldOf[op.peer];
          this.bufOf[k] = view(op.data);
          this.bytesOf[k] = spanBytes(op.data);
        }
        k++;
      }
    });
    this.stepStart[this.steps] = k;
  }

  /**
   * Runs the schedule once, its collective tags moved by `tagShift` (shiftedTag): one request,
   * settled when the last step has completed (or the first failure).
   */
  start(tagShift = 0): Request<void> {
    if (this.running && this.req !== null && !this.req.pending) {
      // Its request was settled from outside (a timeout, comm/timeout.ts): that run is over;
      // its operations still posted are ignored from now on (a new run number).
      this.running = false;
      this.req = null;
    }
    if (this.running) {
      return OpRequest.failed(new InvalidArgumentError('schedule', 'is already running (a bound schedule runs one run at a time)', { rank: this.rank }));
    }
    const ep = this.ep;
    const f = ep.scheduleFailure();
    if (f !== undefined) return OpRequest.failed(f);
    this.run = (this.run + 1) | 0;
    this.shift = tagShift;
    this.running = true;
    this.failed = false;
    this.error = undefined;
    this.req = null;
    this.step = -1;
    this.next = this.end = this.outstanding = 0;
    this.streamed = false;
    this.driving = true;
    try {
      this.advance();
      // Bounded: a round spins at most scheduleSpin's loads, and only news starts another.
      for (let r = 0; this.running && r < START_SPIN_ROUNDS && ep.scheduleSpin(); r++) this.advance();
    } finally {
      this.driving = false;
    }
    if (!this.running) return this.failed ? OpRequest.failed(this.error) : DONE;
    const req = new OpRequest<void>();
    this.req = req;
    return req;
  }

  waiting(): ScheduleWait | undefined {
    if (!this.running || this.step < 0) return undefined;
    const streamed = this.streamed;
    // with streams: the issued operations are each stream's first ones, up to its next
    const to = streamed ? this.end : this.next;
    for (let k = this.stepStart[this.step]; k < to; k++) {
      if (streamed && k >= this.sNext[this.streamOf[k]]) continue;
      const kind = this.kind[k];
      if (this.doneOf[k] === 0 && (kind === SEND || kind === RECV)) {
        return { kind: kind === SEND ? 'send' : 'recv', peer: this.peerOf[k], tag: this.tagOf[k] + (this.shiftable[k] === 1 ? this.shift : 0) };
      }
    }
    return undefined;
  }

  // ---- ScheduleOwner: the endpoint's side ----------------------------------------------

  opDone(index: number, run: number, bytes: number, error: Error | null): void {
    if (run !== this.run || !this.running) return;
    this.outstanding--;
    this.doneOf[index] = 1;
    // (an operation still posted belongs to the current step: a step ends when all have completed)
    if (this.streamed) this.sRunning[this.streamOf[index]]--;
    if (error !== null) {
      this.fail(this.mapFailure(index, error));
      return;
    }
    if (this.kind[index] === RECV && bytes !== this.bytesOf[index]) {
      this.fail(this.lengthError(index, bytes));
      return;
    }
    if (this.driving || this.queued) return;
    if (this.next < this.end) {
      // Another operation of the step may go (outside a channel pump: at the loop's next turn);
      // with streams, `next` < `end` while any stream has operations to issue (advanceStreams).
      this.queued = true;
      this.ep.scheduleResume(this);
    } else if (this.outstanding === 0) {
      if (this.lastStep()) this.finish();
      else {
        this.queued = true;
        this.ep.scheduleResume(this);
      }
    }
  }

  resume(): void {
    this.queued = false;
    if (!this.running) return;
    this.driving = true;
    try {
      this.advance();
    } finally {
      this.driving = false;
    }
  }

  abort(error: Error): void {
    this.queued = false;
    if (this.running) this.fail(error);
  }

  // ---- the run -------------------------------------------------------------------------

  /** Issues what the windows let go, step after step, until the run waits or ends. */
  private advance(): void {
    for (;;) {
      if (!this.streamed) {
        while (this.next < this.end && this.outstanding < this.window) {
          this.issue(this.next++);
          if (!this.running) return;
        }
        if (this.next < this.end || this.outstanding > 0) return;
      } else if (!this.advanceStreams()) return;
      const s = ++this.step;
      if (s === this.steps) {
        this.finish();
        return;
      }
      this.next = this.stepStart[s];
      this.end = this.stepStart[s + 1];
      this.window = this.stepWindow[s];
      this.streamed = this.streamsAt[s] >= 0;
      if (this.streamed) this.enterStreams(s);
    }
  }

  /** Sets up step s's streams: each at its first operation, none outstanding, none done. */
  private enterStreams(s: number): void {
    const a = this.streamsAt[s];
    const m = this.streamCount[s];
    for (let q = 0; q < m; q++) {
      this.sNext[q] = this.streamBounds[a + q];
      this.sEnd[q] = this.streamBounds[a + q + 1];
      this.sRunning[q] = 0;
    }
    // a dependency is met by a completion of this run (doneOf holds the last run's too)
    this.doneOf.fill(0, this.next, this.end);
  }

  /**
   * Issues what the current step's streams let go: stream after stream in index order, each
   * in order while fewer than `window` of its own operations are outstanding and the next
   * one's dependency has completed; passes repeat while one issues anything (a completion at
   * once, or one moved by the issuing, may let a stream go that an earlier pass left waiting).
   * Sets `next` to `end` once every stream has issued all (opDone's test); whether the step
   * has completed (false too when the run stopped).
   */
  private advanceStreams(): boolean {
    const m = this.streamCount[this.step];
    const window = this.window;
    const sNext = this.sNext;
    const sEnd = this.sEnd;
    const sRunning = this.sRunning;
    const afterOf = this.afterOf;
    const doneOf = this.doneOf;
    let left = 0;
    for (let issued = true; issued; ) {
      issued = false;
      left = 0;
      for (let q = 0; q < m; q++) {
        const e = sEnd[q];
        let k = sNext[q];
        while (k < e && sRunning[q] < window) {
          const d = afterOf[k];
          if (d >= 0 && doneOf[d] === 0) break;
          sNext[q] = k + 1;
          sRunning[q]++;
          if (!this.issue(k)) sRunning[q]--;
          if (!this.running) return false;
          issued = true;
          k++;
        }
        if (k < e) left++;
      }
    }
    this.next = left > 0 ? this.stepStart[this.step] : this.end;
    return left === 0 && this.outstanding === 0;
  }

  /** Whether the current step is the last one with operations. */
  private lastStep(): boolean {
    return this.end === this.stepStart[this.steps];
  }

  /**
   * Issues operation k: whether it is posted (its completion comes through opDone), not
   * completed or failed at once.
   */
  private issue(k: number): boolean {
    const kind = this.kind[k];
    if (kind === COPY) {
      // A plain copy completes when issued; a copy through a port (the message to this rank
      // itself) likewise, as a direct copy: its window slot is held for no time.
      copySpan(this.ep, this.bufOf[k], this.fromOf[k], this.bytesOf[k]);
      this.doneOf[k] = 1;
      return false;
    }
    if (kind === COMBINE) {
      this.doneOf[k] = 1;
      try {
        this.combineOf[k]();
      } catch (e) {
        this.fail(e);
      }
      return false;
    }
    if (kind === BAD) {
      this.fail(this.badOf[k]);
      return false;
    }
    const ep = this.ep;
    const f = ep.scheduleFailure();
    if (f !== undefined) {
      this.fail(f);
      return false;
    }
    let tag = this.tagOf[k];
    if (this.shiftable[k] === 1 && this.shift !== 0) {
      tag += this.shift;
      const bad = badTag(tag, false, this.rank);
      if (bad !== undefined) {
        this.fail(bad);
        return false;
      }
    }
    this.outstanding++;
    this.doneOf[k] = 0;
    if (kind === SEND) {
      let now: boolean;
      try {
        now = ep.scheduleSend(this, k, this.run, this.ctxOf[k], this.peerOf[k], tag, this.bufOf[k]);
      } catch (e) {
        this.outstanding--;
        this.fail(e);
        return false;
      }
      if (now) {
        this.outstanding--;
        this.doneOf[k] = 1;
      }
      return !now;
    }
    let got: number;
    try {
      got = ep.scheduleRecv(this, k, this.run, this.ctxOf[k], this.peerOf[k], tag, this.bufOf[k], this.bytesOf[k]);
    } catch (e) {
      this.outstanding--;
      this.doneOf[k] = 1;
      this.fail(this.mapFailure(k, e));
      return false;
    }
    if (got < 0) return true;
    this.outstanding--;
    this.doneOf[k] = 1;
    if (got !== this.bytesOf[k]) this.fail(this.lengthError(k, got));
    return false;
  }

  private finish(): void {
    this.running = false;
    const req = this.req;
    this.req = null;
    if (req !== null && req.resolve(undefined)) this.ep.scheduleWoke();
  }

  private fail(e: unknown): void {
    this.running = false;
    const req = this.req;
    this.req = null;
    if (req !== null) {
      if (req.reject(e)) this.ep.scheduleWoke();
    } else {
      this.failed = true;
      this.error = e;
    }
  }

  /** A truncated receive through `recvError` (other failures unchanged). */
  private mapFailure(k: number, e: unknown): unknown {
    const recvError = this.recvError;
    if (recvError === undefined || this.kind[k] !== RECV || !(e instanceof TruncationError)) return e;
    try {
      return recvError(this.commPeerOf[k], this.tagOf[k], this.bytesOf[k], undefined, e);
    } catch (thrown) {
      return thrown;
    }
  }

  /** A receive of operation k that got `got` bytes, not its span's: as schedule/run.ts `checkStatus`. */
  private lengthError(k: number, got: number): unknown {
    const recvError = this.recvError;
    if (recvError !== undefined) {
      try {
        return recvError(this.commPeerOf[k], this.tagOf[k], this.bytesOf[k], got, undefined);
      } catch (thrown) {
        return thrown;
      }
    }
    const s = this.stepOf[k];
    const j = k - this.stepStart[s];
    return new CommunicationError(
      `rank ${this.rank}: schedule step ${s} op ${j}: receive from rank ${this.commPeerOf[k]} tag ${this.tagOf[k]} got ${got} bytes, expected ${this.bytesOf[k]}`,
      { rank: this.rank },
    );
  }
}

/** Copies `from` into `to` (`bytes` each) with the endpoint's copy, piece by piece. */
function copySpan(ep: ThreadsEndpoint, to: MessageBuffer, from: MessageBuffer, bytes: number): void {
  if (to instanceof Uint8Array && from instanceof Uint8Array) ep.copy(to, from);
  else forEachPiece(to, from, bytes, (d, s) => ep.copy(d, s));
}
