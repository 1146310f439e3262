/**
 * The portable executor of a schedule over the Communicator interface: step by step, each
 * step's operations issued in order with at most `window` of them outstanding (operation j
 * starts once fewer than `window` of the step's earlier operations are unfinished: the k-port
 * rule, comm/request.ts `inOrder`, which the collectives use too); the step ends when all of
 * them have completed.
 *
 * Sends and receives are `isend`/`irecv` of views of the bound buffers: one view for a
 * one-range span, else the ranges' views as one vectored message (comm/segments.ts), so
 * nothing is staged. A copy is `comm.copy` range by range (complete when issued); a copy
 * through a port (its `tag` set) is the message to this rank itself, as collectives/ports.ts
 * selfCopy, and holds one slot until it has arrived. A combine is the bound operator's
 * function on two views made at bind time (ScheduleOptions.combine), done when issued. A
 * receive must get exactly its span's bytes (else a CommunicationError); a longer message is
 * the transport's TruncationError.
 *
 * Cost: O(operations + ranges) to bind the views before the first step, then the messages;
 * a step whose window covers all its operations waits on them with one `waitAll`.
 *
 * `bindSchedule` validates, then hands the schedule to the transport's native executor when
 * the communicator has one (Communicator.bindValidatedSchedule: the simulator's engine, the
 * threads' channels, MPI in C), which runs it the same way without a request or a promise per
 * operation; else (or when that executor declines the schedule) to the portable executor here.
 */
import type { Communicator, MessageBuffer, Request, Status } from '../comm/communicator.js';
import type { InterCommunicator } from '../comm/intercomm.js';
import { inOrder, mapRequest } from '../comm/request.js';
import { forEachPiece } from '../comm/segments.js';
import { checkStreams } from './streams.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../errors.js';
import { combineFunction, shiftedTag, type BoundSchedule, type RankSchedule, type RecvOp, type ScheduleOptions, type SendOp, type Span } from './types.js';

const EMPTY = new Uint8Array(0);
const DONE: Promise<void> = Promise.resolve();

/** An operation with its views bound. */
type Bound =
  | { readonly kind: 'send'; readonly op: SendOp; readonly buf: MessageBuffer }
  | { readonly kind: 'recv'; readonly op: RecvOp; readonly buf: MessageBuffer; readonly bytes: number }
  | { readonly kind: 'copy'; readonly from: MessageBuffer; readonly to: MessageBuffer; readonly bytes: number; readonly tag: number | undefined }
  | { readonly kind: 'combine'; readonly fn: () => void };

const NOTHING = (): void => {};

export type { BoundSchedule, ScheduleOptions } from './types.js';

/** What the portable executor needs of a communicator (an intercommunicator's peers are remote ranks). */
type ScheduleComm = Pick<Communicator, 'rank' | 'isend' | 'irecv' | 'waitAll' | 'copy'>;

/**
 * Validates `schedule` (this rank's) against `buffers` (same count, each a Uint8Array of
 * exactly its `bytes`) and binds it for the transport's native executor, or the portable one
 * (`portable: true` forces it); throws an InvalidArgumentError when the buffers, ranks, peers,
 * windows or ranges do not fit. `run()` resolves when the last step has completed and rejects
 * with the first failure of an operation; a receive of another length than its span is
 * `options.recvError` (default: a CommunicationError when shorter, the transport's
 * TruncationError when longer).
 */
export function bindSchedule(
  comm: Communicator,
  schedule: RankSchedule,
  buffers: readonly Uint8Array[],
  options: ScheduleOptions & { readonly portable?: boolean } = {},
): BoundSchedule {
  return bindOn(comm, comm.size, false, schedule, buffers, options);
}

/**
 * `bindSchedule` on an intercommunicator: the schedule's peers are ranks of the REMOTE group
 * (sends and receives cross the groups); a copy through a port (a message to oneself) has no
 * meaning there and is an InvalidArgumentError.
 */
export function bindInterSchedule(
  inter: InterCommunicator,
  schedule: RankSchedule,
  buffers: readonly Uint8Array[],
  options: ScheduleOptions & { readonly portable?: boolean } = {},
): BoundSchedule {
  return bindOn(inter, inter.remoteSize, true, schedule, buffers, options);
}

function bindOn(
  comm: ScheduleComm & { readonly bindValidatedSchedule?: Communicator['bindValidatedSchedule'] },
  peers: number,
  inter: boolean,
  schedule: RankSchedule,
  buffers: readonly Uint8Array[],
  options: ScheduleOptions & { readonly portable?: boolean },
): BoundSchedule {
  const native = options.portable === true ? undefined : comm.bindValidatedSchedule;
  // the native executors address the buffers themselves: validate only, no views
  let steps = bind(comm, peers, inter, schedule, buffers, native === undefined, options);
  if (native !== undefined) {
    const bound = native.call(comm, schedule, buffers, options);
    if (bound !== undefined) return bound;
    steps = bind(comm, peers, inter, schedule, buffers, true, options);
  }
  const recvError = options.recvError;
  return {
    async run(tagShift = 0): Promise<void> {
      for (let s = 0; s < steps.length; s++) {
        const ops = steps[s];
        if (ops.length === 0) continue;
        const st = schedule.steps[s];
        const window = st.window;
        if (st.streams !== undefined) await streamed(comm, s, ops, st.streams, st.after, window, recvError, tagShift);
        else if (window >= ops.length) await allAtOnce(comm, s, ops, recvError, tagShift);
        else await windowed(comm, s, ops, window, recvError, tagShift);
      }
    },
  };
}

/**
 * Runs `schedule` (this rank's) once on `comm` with `buffers` bound to `schedule.buffers`
 * (bindSchedule, then run): rejects with an InvalidArgumentError before anything runs when
 * they do not fit, and with the first failure of an operation otherwise.
 */
export async function runSchedule(
  comm: Communicator,
  schedule: RankSchedule,
  buffers: readonly Uint8Array[],
  options: ScheduleOptions & { readonly portable?: boolean } = {},
): Promise<void> {
  await bindSchedule(comm, schedule, buffers, options).run();
}

/**
 * Schedules whose operations were validated, and against which peer count (×2, +1 on an
 * intercommunicator): their ranges depend on the buffers only through their lengths, which
 * every bind checks, so binding one again for a native executor checks just the buffers (and
 * the alignment of combine operands). Schedules are immutable data (readonly types): one
 * changed after binding is not validated again.
 */
const validated = new WeakMap<RankSchedule, { readonly key: number; readonly combines: boolean }>();

/** Validates everything and (`views`) binds each operation's views. */
function bind(
  comm: ScheduleComm,
  peers: number,
  inter: boolean,
  schedule: RankSchedule,
  buffers: readonly Uint8Array[],
  views: boolean,
  options: ScheduleOptions,
): Bound[][] {
  const rank = comm.rank;
  if (schedule.rank !== rank) throw new InvalidArgumentError('schedule', `it is rank ${schedule.rank}'s, and this is rank ${rank}`, { rank });
  if (!Array.isArray(buffers)) throw new InvalidArgumentError('buffers', 'not an array of Uint8Array', { rank });
  const want = schedule.buffers;
  if (buffers.length !== want.length) {
    throw new InvalidArgumentError('buffers', `${buffers.length} buffers given, the schedule binds ${want.length}`, { rank });
  }
  for (let i = 0; i < want.length; i++) {
    const b: unknown = buffers[i];
    if (!(b instanceof Uint8Array)) throw new InvalidArgumentError(`buffers[${i}]`, `not a Uint8Array (buffer ${want[i].name})`, { rank });
    if (b.length !== want[i].bytes) {
      throw new InvalidArgumentError(`buffers[${i}]`, `has ${b.length} bytes, buffer ${want[i].name} of the schedule has ${want[i].bytes}`, { rank });
    }
  }
  const key = 2 * peers + (inter ? 1 : 0);
  const before = validated.get(schedule);
  if (!views && before !== undefined && before.key === key) {
    // validated before: only what depends on these buffers (combine operands' alignment)
    if (!before.combines) return [];
    schedule.steps.forEach((st, s) =>
      st.ops.forEach((op, j) => {
        if (op.kind === 'combine') checkCombine(rank, `schedule.steps[${s}].ops[${j}]`, op.into, op.from, buffers, options);
      }),
    );
    return [];
  }
  const view = (span: Span, field: string): { buf: MessageBuffer; bytes: number } => {
    const parts: Uint8Array[] = [];
    let bytes = 0;
    span.forEach((r, k) => {
      const b = Number.isInteger(r.buffer) ? buffers[r.buffer] : undefined;
      if (
        b === undefined ||
        !Number.isSafeInteger(r.offset) ||
        !Number.isSafeInteger(r.length) ||
        r.offset < 0 ||
        r.length < 0 ||
        r.offset + r.length > b.length
      ) {
        throw new InvalidArgumentError(
          `${field}[${k}]`,
          `range ${r.offset}+${r.length} of buffer ${r.buffer} is not within the bound buffers`,
          { rank },
        );
      }
      if (views) parts.push(b.subarray(r.offset, r.offset + r.length));
      bytes += r.length;
    });
    return { buf: parts.length === 0 ? EMPTY : parts.length === 1 ? parts[0] : parts, bytes };
  };
  const bound = schedule.steps.map((st, s) => {
    if (!Number.isSafeInteger(st.window) || st.window < 1) {
      throw new InvalidArgumentError(`schedule.steps[${s}].window`, `${st.window} is not an integer ≥ 1`, { rank });
    }
    const streamProblem = checkStreams(st);
    if (streamProblem !== undefined) throw new InvalidArgumentError(`schedule.steps[${s}].${streamProblem.field}`, streamProblem.message, { rank });
    return st.ops.map((op, j): Bound => {
      const field = `schedule.steps[${s}].ops[${j}]`;
      if (op.kind === 'combine') {
        checkCombine(rank, field, op.into, op.from, buffers, options);
        return { kind: 'combine', fn: views ? combineFunction(op, buffers, options.combine) : NOTHING };
      }
      if (op.kind === 'copy') {
        const from = view(op.from, `${field}.from`);
        const to = view(op.to, `${field}.to`);
        if (from.bytes !== to.bytes) throw new InvalidArgumentError(field, `copies ${from.bytes} bytes into ${to.bytes}`, { rank });
        if (op.tag !== undefined && (!Number.isSafeInteger(op.tag) || op.tag < 0)) {
          throw new InvalidArgumentError(`${field}.tag`, `${op.tag} is not a tag`, { rank });
        }
        if (op.tag !== undefined && inter) {
          throw new InvalidArgumentError(`${field}.tag`, 'a copy through a port (a message to oneself) is not possible on an intercommunicator', { rank });
        }
        return { kind: 'copy', from: from.buf, to: to.buf, bytes: from.bytes, tag: op.tag };
      }
      if (!Number.isSafeInteger(op.peer) || op.peer < 0 || op.peer >= peers) {
        throw new InvalidArgumentError(`${field}.peer`, `${op.peer} is not a ${inter ? 'remote ' : ''}rank in [0, ${peers})`, { rank });
      }
      const { buf, bytes } = view(op.data, `${field}.data`);
      return op.kind === 'send' ? { kind: 'send', op, buf } : { kind: 'recv', op, buf, bytes };
    });
  });
  // a schedule bound for one run is not bound again (unless shared by shape: then validated again)
  if (options.once !== true) validated.set(schedule, { key, combines: bound.some((ops) => ops.some((b) => b.kind === 'combine')) });
  return bound;
}

/** Validates a combine operation: one range or none each, of one length, whole aligned elements, an operator given. */
function checkCombine(rank: number, field: string, into: Span, from: Span, buffers: readonly Uint8Array[], options: ScheduleOptions): void {
  const c = options.combine;
  if (c === undefined) throw new InvalidArgumentError('options.combine', `${field} combines, and no operator was bound`, { rank });
  if (into.length > 1 || from.length > 1) throw new InvalidArgumentError(field, 'a combine operand is one range (or none)', { rank });
  const one = (span: Span, what: string): Uint8Array => {
    if (span.length === 0) return EMPTY;
    const r = span[0];
    const b = Number.isInteger(r.buffer) ? buffers[r.buffer] : undefined;
    if (b === undefined || !Number.isSafeInteger(r.offset) || !Number.isSafeInteger(r.length) || r.offset < 0 || r.length < 0 || r.offset + r.length > b.length) {
      throw new InvalidArgumentError(`${field}.${what}`, `range ${r.offset}+${r.length} of buffer ${r.buffer} is not within the bound buffers`, { rank });
    }
    const v = b.subarray(r.offset, r.offset + r.length);
    if (v.length % c.elementBytes !== 0 || v.byteOffset % c.elementBytes !== 0) {
      throw new InvalidArgumentError(`${field}.${what}`, `is not whole elements of ${c.elementBytes} bytes at an aligned offset`, { rank });
    }
    return v;
  };
  const a = one(into, 'into');
  const b = one(from, 'from');
  if (a.length !== b.length) throw new InvalidArgumentError(field, `combines ${b.length} bytes into ${a.length}`, { rank });
}

/** Copies `from` into `to` (`bytes` each) with comm.copy, piece by piece. */
function copySpan(comm: ScheduleComm, to: MessageBuffer, from: MessageBuffer, bytes: number): void {
  if (to instanceof Uint8Array && from instanceof Uint8Array) comm.copy(to, from);
  else forEachPiece(to, from, bytes, (d, s) => comm.copy(d, s));
}

type RecvError = ScheduleOptions['recvError'];

function checkStatus(comm: ScheduleComm, s: number, j: number, b: Bound & { kind: 'recv' }, st: Status, recvError: RecvError): void {
  if (st.bytes !== b.bytes) {
    if (recvError !== undefined) throw recvError(b.op.peer, b.op.tag, b.bytes, st.bytes, undefined);
    throw new CommunicationError(
      `rank ${comm.rank}: schedule step ${s} op ${j}: receive from rank ${b.op.peer} tag ${b.op.tag} got ${st.bytes} bytes, expected ${b.bytes}`,
      { rank: comm.rank },
    );
  }
}

/**
 * Starts operation b: its requests (none: a plain copy, already complete; two: a copy through
 * a port, the message to this rank itself, its receive first as collectives/ports.ts selfCopy).
 */
function start(comm: ScheduleComm, b: Bound, shift: number): Request<unknown>[] {
  if (b.kind === 'send') return [comm.isend(b.op.peer, shiftedTag(b.op.tag, shift), b.buf)];
  if (b.kind === 'recv') return [comm.irecv(b.op.peer, shiftedTag(b.op.tag, shift), b.buf)];
  if (b.kind === 'combine') {
    b.fn();
    return [];
  }
  if (b.tag !== undefined) {
    const tag = shiftedTag(b.tag, shift);
    return [comm.irecv(comm.rank, tag, b.to), comm.isend(comm.rank, tag, b.from)];
  }
  copySpan(comm, b.to, b.from, b.bytes);
  return [];
}

/** A truncated receive through `recvError` (other failures unchanged). */
function mapFailure(b: Bound, e: unknown, recvError: RecvError): unknown {
  if (recvError === undefined || b.kind !== 'recv' || !(e instanceof TruncationError)) return e;
  return recvError(b.op.peer, b.op.tag, b.bytes, undefined, e);
}

/** A step whose window covers all its operations: start them all, one waitAll. */
async function allAtOnce(comm: ScheduleComm, s: number, ops: readonly Bound[], recvError: RecvError, shift: number): Promise<void> {
  const reqs: Request<unknown>[] = [];
  const at: number[] = [];
  for (let j = 0; j < ops.length; j++) {
    for (const r of start(comm, ops[j], shift)) {
      reqs.push(r);
      at.push(j);
    }
  }
  if (reqs.length === 0) return;
  let out: unknown[];
  if (recvError === undefined) {
    out = await comm.waitAll(reqs);
  } else {
    // the first failure, mapped by the operation it belongs to
    out = await comm.waitAll(reqs.map((r, i) => mapRequest(r, (v) => v, (e) => mapFailure(ops[at[i]], e, recvError))));
  }
  for (let i = 0; i < at.length; i++) {
    const b = ops[at[i]];
    if (b.kind === 'recv') checkStatus(comm, s, at[i], b, out[i] as Status, recvError);
  }
}

/** Operation j's run: its requests started, a promise of its completion (receives checked). */
function launchOp(comm: ScheduleComm, s: number, j: number, b: Bound, recvError: RecvError, shift: number): PromiseLike<void> {
  let reqs: Request<unknown>[];
  try {
    reqs = start(comm, b, shift);
  } catch (e) {
    return Promise.reject(e);
  }
  if (reqs.length === 0) return DONE;
  if (b.kind === 'recv') {
    return reqs[0].then(
      (st) => checkStatus(comm, s, j, b, st as Status, recvError),
      (e: unknown) => {
        throw mapFailure(b, e, recvError);
      },
    );
  }
  return comm.waitAll(reqs).then(() => undefined);
}

/**
 * A step of concurrent streams (ScheduleStep.streams): each issued in order with at most
 * `window` of its own operations outstanding, an operation with a dependency (`after`) not
 * before that one has completed; rejects with the first failure. When an operation completes,
 * its own stream issues first, then the other streams in order.
 */
function streamed(
  comm: ScheduleComm,
  s: number,
  ops: readonly Bound[],
  streams: readonly number[],
  after: readonly number[] | undefined,
  window: number,
  recvError: RecvError,
  shift: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const n = ops.length;
    const m = streams.length;
    const finished = new Uint8Array(n);
    const next = new Int32Array(m);
    const end = new Int32Array(m);
    const running = new Int32Array(m);
    for (let k = 0, at = 0; k < m; k++) {
      next[k] = at;
      at += streams[k];
      end[k] = at;
    }
    let done = 0;
    let failed = false;
    const launch = (k: number): void => {
      while (!failed && next[k] < end[k] && running[k] < window) {
        const j = next[k];
        const d = after === undefined ? -1 : after[j];
        if (d >= 0 && finished[d] === 0) return;
        next[k]++;
        running[k]++;
        launchOp(comm, s, j, ops[j], recvError, shift).then(
          () => {
            finished[j] = 1;
            running[k]--;
            if (++done === n) {
              resolve();
              return;
            }
            launch(k);
            for (let q = 0; q < m; q++) if (q !== k) launch(q);
          },
          (e: unknown) => {
            failed = true;
            reject(e);
          },
        );
      }
    };
    if (n === 0) resolve();
    else for (let k = 0; k < m; k++) launch(k);
  });
}

/** A step with at most `window` operations outstanding (comm/request.ts inOrder); rejects with the first failure. */
function windowed(comm: ScheduleComm, s: number, ops: readonly Bound[], window: number, recvError: RecvError, shift: number): Promise<void> {
  return inOrder(ops, window, (b, j) => launchOp(comm, s, j, b, recvError, shift));
}
