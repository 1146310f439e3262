/**
 * Schedules: the data phase of a collective, compiled once it is planned, as data an executor
 * runs (the idea of libNBC's schedules, MPICH's transport-independent scheduler and
 * LogGOPSim's GOAL schedules; vcoll's own representation).
 *
 * One rank's schedule is a sequence of steps. A step is a list of operations issued in order
 * with at most `window` of them outstanding (the cost model's k ports: docs/MODEL.md "Ports";
 * `window` ≥ the number of operations means all at once); the step ends when all of them have
 * completed, and only then does the next step start. Operations address byte ranges of the
 * buffers bound when the schedule was compiled (buffer i of `buffers`), so running a schedule
 * allocates nothing; a message made of several ranges is one vectored message, its ranges in
 * order.
 *
 * Matching is MPI's: a receive takes the earliest send of the same (source, tag) to it, in the
 * sender's program order (step order, then operation order within a step); a message's length
 * is the sum of its ranges' lengths and must equal the receive's.
 */
import { COLLECTIVE_TAG } from './communicator.js';
import type { Request } from './request.js';
import type { MessageBuffer } from './segments.js';
import { CALL_TAG_STRIDE } from './tags.js';

/** A byte range of a bound buffer. */
export interface ByteRange {
  /** Index into the schedule's `buffers`. */
  readonly buffer: number;
  readonly offset: number;
  readonly length: number;
}

/** The bytes of one message or copy: one range or several, in order. */
export type Span = readonly ByteRange[];

export interface SendOp {
  readonly kind: 'send';
  readonly peer: number;
  readonly tag: number;
  readonly data: Span;
}

export interface RecvOp {
  readonly kind: 'recv';
  readonly peer: number;
  readonly tag: number;
  readonly data: Span;
}

/**
 * A local copy. Without `tag`, the processor's copy (the one-ported model's γ·m): it
 * completes when issued and holds no window slot. With `tag`, a copy through a port (the model
 * with k > 1 ports, docs/MODEL.md "Ports"): a message from the rank to itself with that tag,
 * which holds one window slot until it has arrived (collectives/ports.ts selfCopy).
 */
export interface CopyOp {
  readonly kind: 'copy';
  readonly from: Span;
  readonly to: Span;
  readonly tag?: number;
}

/**
 * A local reduction, `into` := `into` ⊕ `from` element by element, with the operator the
 * schedule is bound with (ScheduleOptions.combine): `into` holds the partial result of the
 * lower-ranked processes, the left operand (collectives/basic/ops.ts `combine(a, b)`). Each
 * span is one range (or none: nothing to combine) of whole elements, the two of one length.
 * Like the processor's copy it completes when issued and holds no window slot; the cost
 * model does not charge it (local computation).
 */
export interface CombineOp {
  readonly kind: 'combine';
  readonly into: Span;
  readonly from: Span;
}

export type ScheduleOp = SendOp | RecvOp | CopyOp | CombineOp;

/**
 * The reduction operator a schedule with combine operations is bound with: `bind(into, from)`
 * (byte views of one length, a multiple of `elementBytes`, each starting at a multiple of it
 * in its ArrayBuffer) returns the function that does `into := into ⊕ from` on them, made once
 * at bind time so a run allocates nothing. `builtin` names a built-in operator on an element
 * type (e.g. 'sum' on 'Float64Array'), which an executor may apply natively instead.
 */
export interface ScheduleCombiner {
  readonly elementBytes: number;
  bind(into: Uint8Array, from: Uint8Array): () => void;
  readonly builtin?: { readonly op: string; readonly type: string };
}

export interface ScheduleStep {
  readonly ops: readonly ScheduleOp[];
  /** At most this many operations outstanding (≥ 1); with `streams`, per stream. */
  readonly window: number;
  /**
   * Optional: the step's operations as concurrent streams — `streams[k]` operations each,
   * consecutive in `ops`, summing to `ops.length` (without it, one stream of them all). Each
   * stream is issued in order with at most `window` of its own operations outstanding, the
   * streams side by side; the step ends when every operation has completed. What a pipeline
   * needs (Träff et al. 2010's pipelined ring: a receive stream and a send stream, each chunk
   * sent once it has arrived), which lock-stepped rounds would slow down. All the sends of one
   * (peer, tag) in a step are in one stream, and all its receives of one (peer, tag): so MPI
   * matching pairs them in a static order whatever the streams' interleaving.
   */
  readonly streams?: readonly number[];
  /**
   * Optional (with `streams`), one entry per operation: the index in `ops` of an operation of
   * an EARLIER stream that must have completed before this one is issued, or −1 (none). Issue
   * stays in order: a stream waits at an operation whose dependency has not completed.
   */
  readonly after?: readonly number[];
}

/** What a buffer of a schedule is (for printing and checks; the executor binds the bytes). */
export interface ScheduleBuffer {
  /** e.g. 'send', 'recv', 'packed' (a rank's packed subtree buffer). */
  readonly name: string;
  readonly bytes: number;
}

export interface RankSchedule {
  readonly rank: number;
  readonly buffers: readonly ScheduleBuffer[];
  readonly steps: readonly ScheduleStep[];
}

/** Every rank's schedule of one collective (what a compiler produces for checks and printing). */
export interface WorldSchedule {
  /** e.g. 'gatherv linear'. */
  readonly label: string;
  readonly ranks: readonly RankSchedule[];
}

const NOTHING = (): void => {};

/**
 * The function a run calls for a validated combine operation (schedule/run.ts bindSchedule
 * checks the operands): the operator bound to its two views, or nothing for empty operands.
 */
export function combineFunction(op: CombineOp, buffers: readonly Uint8Array[], combiner: ScheduleCombiner | undefined): () => void {
  if (op.into.length === 0 || combiner === undefined) return NOTHING;
  const view = (r: ByteRange): Uint8Array => buffers[r.buffer].subarray(r.offset, r.offset + r.length);
  return combiner.bind(view(op.into[0]), view(op.from[0]));
}

const NO_BYTES = new Uint8Array(0);

/** A span's bytes in `buffers`: one view for one range (an empty one for none), views of each range for several. */
export function spanView(buffers: readonly Uint8Array[], span: Span): MessageBuffer {
  if (span.length === 0) return NO_BYTES;
  if (span.length === 1) return buffers[span[0].buffer].subarray(span[0].offset, span[0].offset + span[0].length);
  return span.map((r) => buffers[r.buffer].subarray(r.offset, r.offset + r.length));
}

/** Bytes of a span. */
export function spanBytes(span: Span): number {
  let n = 0;
  for (const r of span) n += r.length;
  return n;
}

/**
 * How an executor reports a receive that did not get its span's length. The default is a
 * CommunicationError (short) or the transport's TruncationError (longer); a collective that
 * can name the cause (linear gatherv: the counts disagree) passes its own.
 */
export interface ScheduleOptions {
  /**
   * The error for a receive from `peer` (the communicator's rank) with `tag` that expected
   * `expected` bytes and got `got` (undefined: the message was longer, `cause` is the
   * transport's truncation error).
   */
  readonly recvError?: (peer: number, tag: number, expected: number, got: number | undefined, cause: unknown) => Error;
  /**
   * The schedule runs once (a one-shot collective): an executor may skip what pays off only
   * over several runs (MPI: the schedule is made, run and freed in one call when it completes
   * within it). Running it again is still allowed.
   */
  readonly once?: boolean;
  /** The operator of the schedule's combine operations (required when it has any). */
  readonly combine?: ScheduleCombiner;
}

/**
 * The tag an operation with tag `tag` travels with in a run shifted by `shift`: a collective
 * tag of the first call slot (COLLECTIVE_TAG ≤ tag < COLLECTIVE_TAG + CALL_TAG_STRIDE) moves
 * by `shift`, as a call scope moves it (collectives/call-scope.ts: a persistent plan's every
 * start runs in the next call slot of its communicator); any other tag stays.
 */
export function shiftedTag(tag: number, shift: number): number {
  return tag >= COLLECTIVE_TAG && tag < COLLECTIVE_TAG + CALL_TAG_STRIDE ? tag + shift : tag;
}

/** A rank's schedule bound to its buffers: `run()` executes it, as often as wanted (one run at a time). */
export interface BoundSchedule {
  /**
   * Settles when the last step has completed (a request: awaitable; already settled when the
   * executor finished within the call); fails with the first failure of an operation.
   * `tagShift` (default 0) moves the collective tags of this run (shiftedTag).
   */
  run(tagShift?: number): Request<void>;
  /**
   * Present when the executor can run the schedule to completion in the calling thread (MPI):
   * returns when done, throws the first failure; nothing else runs meanwhile.
   */
  runBlocking?(tagShift?: number): void;
}

/** What a pending schedule waits for (world rank, tag): what a timeout names. */
export interface ScheduleWait {
  readonly kind: 'send' | 'recv';
  readonly peer: number;
  readonly tag: number;
}

/**
 * A transport's native executor of one bound schedule (Endpoint.bindSchedule; undefined there
 * when the executor cannot run that schedule, e.g. combine operations with a user function in
 * C: the portable executor runs it then): `start(shift)`
 * runs it once with its collective tags moved by `shift` (shiftedTag), a request that settles
 * when its last step has completed; `waiting()` says, while it is pending, which operation it
 * waits for (its tag as it travels).
 */
export interface EndpointSchedule {
  start(tagShift: number): Request<void>;
  /** Optional: the whole run in the calling thread (BoundSchedule.runBlocking). */
  startBlocking?(tagShift: number): void;
  waiting(): ScheduleWait | undefined;
}

/**
 * The BoundSchedule of a transport's executor (what the communicators hand out): one small
 * object, no closures (a simulated rank holds one per collective it is in).
 */
export function boundOf(es: EndpointSchedule): BoundSchedule {
  return es.startBlocking === undefined ? new EndpointBound(es) : new BlockingEndpointBound(es);
}

class EndpointBound implements BoundSchedule {
  constructor(protected readonly es: EndpointSchedule) {}

  run(tagShift = 0): Request<void> {
    return this.es.start(tagShift);
  }
}

class BlockingEndpointBound extends EndpointBound {
  runBlocking(tagShift = 0): void {
    (this.es.startBlocking as (tagShift: number) => void).call(this.es, tagShift);
  }
}
