/**
 * The opt-in per-operation timeout (`timeoutMs` of runSim / runThreads / mpiWorld / runMpiRank):
 * a point-to-point operation still pending after `timeoutMs` of wall-clock time fails with a
 * TimeoutError naming the rank, the peer it waits for and the operation — the watchdog of
 * MPI_Comm-level timeouts in other libraries (gloo's per-operation timeouts).
 *
 * Cost: none when off (the endpoint is not wrapped). When on, a request that completes when it
 * is posted is not tracked; a pending one is appended to a list (no clock read, no timer per
 * operation): one interval timer per endpoint ticks every timeoutMs / 4 while operations are
 * pending, counting epochs; a request still pending 5 ticks after the epoch it was posted in is
 * rejected, so an operation fails after between timeoutMs and 1.25 · timeoutMs (later when the
 * thread is busy: a rank whose JS computes fires no timers, but its peers' operations time out).
 * The list (arrays, no object per operation) is compacted (settled requests dropped) when full
 * and doubled when more than half of it stays, so memory stays proportional to the operations
 * pending.
 *
 * The timer is unref'd: it never keeps a process alive by itself (transports keep theirs alive
 * while operations are pending). A timed-out request is rejected where it stands; the transport
 * may still match it with a later message, which is then lost: after a TimeoutError the
 * communicator is unusable, as an MPI communicator after an error.
 */

import { InvalidArgumentError, TimeoutError } from '../errors.js';
import { ANY_SOURCE, ANY_TAG, type Received, type Status } from './communicator.js';
import type { Endpoint, VirtualClock } from './endpoint.js';
import { endpointCtx } from './agree.js';
import type { NativeCollectives, NativeInterCollectives } from './native.js';
import type { EndpointSchedule, RankSchedule, ScheduleOptions } from './schedule.js';
import { OpRequest, type Request } from './request.js';
import { byteLength, type MessageBuffer } from './segments.js';

/** Ticks per timeout: an operation fails after between TICKS and TICKS + 1 ticks. */
const TICKS = 4;
/** Initial capacity; the arrays are compacted when full and doubled when more than half stays. */
const MIN_COMPACT = 1024;
/** Other pending operations a TimeoutError's message lists. */
const ALSO_SHOWN = 3;

const SEND = 0;
const RECV = 1;
const ALLOC = 2;
const KINDS = { send: SEND, recv: RECV, alloc: ALLOC } as const;

/** One tracked operation, as the errors describe it. */
interface Tracked {
  readonly kind: number;
  readonly ctx: number;
  readonly peer: number;
  readonly tag: number;
  /** A send's bytes. */
  readonly bytes: number;
}

/** "recv from 2 tag 5 (context 1)", "send to 1 tag 5 (context 0, 65536 bytes)" (world ranks, endpoint contexts). */
function describe(t: Tracked): string {
  if (t.kind === SEND) return `send to ${t.peer} tag ${t.tag} (context ${t.ctx}, ${t.bytes} bytes)`;
  const src = t.peer === ANY_SOURCE ? 'any source' : String(t.peer);
  const tag = t.tag === ANY_TAG ? 'any tag' : String(t.tag);
  return `${t.kind === ALLOC ? 'recv (unknown size)' : 'recv'} from ${src} tag ${tag} (context ${t.ctx})`;
}

/** What is wrong with a timeoutMs value (undefined: a number > 0, Infinity meaning off). */
export function badTimeout(timeoutMs: unknown): string | undefined {
  return typeof timeoutMs === 'number' && timeoutMs > 0 ? undefined : `must be a number of ms > 0 (Infinity: no timeout), got ${String(timeoutMs)}`;
}

/**
 * A timeout from environment variable `name`: undefined when unset or empty, Infinity for 0 or
 * "Infinity" (off), else a number of ms > 0; anything else is an InvalidArgumentError naming it.
 */
export function timeoutFromEnv(name: string): number | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const v = env?.[name]?.trim();
  if (v === undefined || v === '') return undefined;
  const t = Number(v);
  if (t === 0) return Infinity;
  if (!(t > 0)) throw new InvalidArgumentError(name, `must be a number of ms > 0 (0 or Infinity: no timeout), got "${v}"`);
  return t;
}

/**
 * The pending requests of one rank and the sweep that fails those older than `timeoutMs`.
 * Transports with their own endpoint (MPI) use it directly; `withTimeout` wraps any endpoint.
 */
export class TimeoutTracker {
  // The tracked operations, struct-of-arrays (no object per operation): entries [0, n).
  private reqs: (OpRequest<unknown> | null)[] = [];
  private epochs = new Float64Array(MIN_COMPACT);
  private kinds = new Uint8Array(MIN_COMPACT);
  private ctxs = new Int32Array(MIN_COMPACT);
  private peers = new Int32Array(MIN_COMPACT);
  private tags = new Int32Array(MIN_COMPACT);
  private bytes = new Float64Array(MIN_COMPACT);
  private n = 0;
  private epoch = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly tickMs: number;

  constructor(
    /** The timeout in ms (finite, > 0). */
    readonly timeoutMs: number,
    /** The world rank that waits (named by the errors). */
    private readonly rank: number,
  ) {
    this.tickMs = Math.max(1, timeoutMs / TICKS);
  }

  /** Operations tracked and maybe still pending (settled ones leave at the next sweep or compaction). */
  get size(): number {
    return this.n;
  }

  /** Tracks `req` if it is an OpRequest still pending (a send's `data` gives its size); returns it unchanged. */
  track<R extends Request<unknown>>(req: R, kind: 'send' | 'recv' | 'alloc', ctx: number, peer: number, tag: number, data?: MessageBuffer): R {
    if (!(req instanceof OpRequest) || !req.pending) return req;
    if (this.n === this.epochs.length) this.compact();
    const i = this.n++;
    this.reqs[i] = req as OpRequest<unknown>;
    this.epochs[i] = this.epoch;
    this.kinds[i] = KINDS[kind];
    this.ctxs[i] = ctx;
    this.peers[i] = peer;
    this.tags[i] = tag;
    this.bytes[i] = data === undefined ? 0 : sizeOf(data);
    if (this.timer === undefined) {
      this.timer = setInterval(this.sweepBound, this.tickMs);
      this.timer.unref?.();
    }
    return req;
  }

  /** Stops the timer and forgets every request (the endpoint closes). */
  dispose(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.reqs.fill(null, 0, this.n);
    this.n = 0;
  }

  private entry(i: number): Tracked {
    return { kind: this.kinds[i], ctx: this.ctxs[i], peer: this.peers[i], tag: this.tags[i], bytes: this.bytes[i] };
  }

  /**
   * Drops settled requests in place; with `expireBefore`, also takes out those posted in an
   * epoch before it and returns them. Grows the arrays when more than half stay.
   */
  private compact(expireBefore = -Infinity): { req: OpRequest<unknown>; t: Tracked }[] {
    const expired: { req: OpRequest<unknown>; t: Tracked }[] = [];
    const { reqs, epochs, kinds, ctxs, peers, tags, bytes } = this;
    let j = 0;
    for (let i = 0; i < this.n; i++) {
      const r = reqs[i] as OpRequest<unknown>;
      if (!r.pending) continue;
      if (epochs[i] < expireBefore) {
        expired.push({ req: r, t: this.entry(i) });
        continue;
      }
      if (j !== i) {
        reqs[j] = r;
        epochs[j] = epochs[i];
        kinds[j] = kinds[i];
        ctxs[j] = ctxs[i];
        peers[j] = peers[i];
        tags[j] = tags[i];
        bytes[j] = bytes[i];
      }
      j++;
    }
    reqs.fill(null, j, this.n);
    this.n = j;
    if (2 * j > epochs.length) this.grow(2 * epochs.length);
    return expired;
  }

  private grow(cap: number): void {
    const widen = <A extends Float64Array | Int32Array | Uint8Array>(a: A, make: (n: number) => A): A => {
      const b = make(cap);
      b.set(a.subarray(0, this.n));
      return b;
    };
    this.epochs = widen(this.epochs, (k) => new Float64Array(k));
    this.kinds = widen(this.kinds, (k) => new Uint8Array(k));
    this.ctxs = widen(this.ctxs, (k) => new Int32Array(k));
    this.peers = widen(this.peers, (k) => new Int32Array(k));
    this.tags = widen(this.tags, (k) => new Int32Array(k));
    this.bytes = widen(this.bytes, (k) => new Float64Array(k));
  }

  private readonly sweepBound = (): void => this.sweep();

  /** One tick: drops settled requests, rejects those pending for TICKS whole ticks. */
  sweep(): void {
    const epoch = ++this.epoch;
    const expired = this.compact(epoch - TICKS);
    if (this.n === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    for (let i = 0; i < expired.length; i++) {
      const { req, t } = expired[i];
      const what = describe(t);
      const others: Tracked[] = [];
      for (let k = 0; k < expired.length && others.length <= ALSO_SHOWN; k++) if (k !== i) others.push(expired[k].t);
      for (let k = 0; k < this.n && others.length <= ALSO_SHOWN; k++) others.push(this.entry(k));
      const also =
        others.length === 0 ? '' : `; also pending: ${others.slice(0, ALSO_SHOWN).map(describe).join(', ')}${others.length > ALSO_SHOWN ? ', …' : ''}`;
      req.reject(
        new TimeoutError(`timeout after ${this.timeoutMs} ms: rank ${this.rank} waits for ${what}${also}`, t.peer, what, this.timeoutMs, {
          rank: this.rank,
        }),
      );
    }
  }
}

/** An endpoint whose point-to-point requests fail with a TimeoutError after `tracker.timeoutMs`. */
class TimeoutEndpoint implements Endpoint {
  readonly worldRank: number;
  readonly worldSize: number;
  readonly clock?: VirtualClock;
  readonly irecvAwaited?: (ctx: number, source: number, tag: number, into: MessageBuffer) => Request<Status>;
  readonly isendAwaited?: (ctx: number, dest: number, tag: number, data: MessageBuffer) => Request<void>;
  readonly openContext?: (ctx: number, worldRanks: readonly number[] | null) => void;
  readonly nativeCollectives?: (ctx: number) => NativeCollectives;
  readonly nativeInterCollectives?: (ctx: number, localCtx: number, remoteLeader: number) => NativeInterCollectives;
  readonly bindSchedule?: (
    ctx: number,
    worldOf: Int32Array | null,
    schedule: RankSchedule,
    buffers: readonly Uint8Array[],
    options: ScheduleOptions,
  ) => EndpointSchedule | undefined;

  constructor(
    readonly inner: Endpoint,
    private readonly tracker: TimeoutTracker,
  ) {
    this.worldRank = inner.worldRank;
    this.worldSize = inner.worldSize;
    // Optional members exist exactly when the inner endpoint has them (callers test for them).
    if (inner.clock !== undefined) this.clock = inner.clock;
    const ra = inner.irecvAwaited;
    if (ra !== undefined) this.irecvAwaited = (c, s, t, into) => tracker.track(ra.call(inner, c, s, t, into), 'recv', c, s, t);
    const sa = inner.isendAwaited;
    if (sa !== undefined) this.isendAwaited = (c, d, t, data) => tracker.track(sa.call(inner, c, d, t, data), 'send', c, d, t, data);
    if (inner.openContext !== undefined) this.openContext = inner.openContext.bind(inner);
    if (inner.nativeCollectives !== undefined) this.nativeCollectives = inner.nativeCollectives.bind(inner);
    if (inner.nativeInterCollectives !== undefined) this.nativeInterCollectives = inner.nativeInterCollectives.bind(inner);
    const bind = inner.bindSchedule;
    if (bind !== undefined) {
      // A schedule still running is tracked as the operation it waits for when start() returns.
      this.bindSchedule = (ctx, worldOf, schedule, buffers, options) => {
        const es = bind.call(inner, ctx, worldOf, schedule, buffers, options);
        if (es === undefined) return undefined;
        return {
          start: (tagShift) => {
            const req = es.start(tagShift);
            const w = es.waiting();
            return w === undefined ? req : tracker.track(req, w.kind, endpointCtx(ctx, w.tag), w.peer, w.tag);
          },
          waiting: () => es.waiting(),
          // a blocking run waits inside the transport (its own watchdog): no JS timeout
          ...(es.startBlocking !== undefined ? { startBlocking: es.startBlocking.bind(es) } : {}),
        };
      };
    }
  }

  isend(ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void> {
    return this.tracker.track(this.inner.isend(ctx, dest, tag, data), 'send', ctx, dest, tag, data);
  }

  irecv(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status> {
    return this.tracker.track(this.inner.irecv(ctx, source, tag, into), 'recv', ctx, source, tag);
  }

  irecvAlloc(ctx: number, source: number, tag: number, maxBytes: number): Request<Received> {
    return this.tracker.track(this.inner.irecvAlloc(ctx, source, tag, maxBytes), 'alloc', ctx, source, tag);
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    this.inner.copy(dst, src);
  }

  nodeOf(worldRank: number): number {
    return this.inner.nodeOf(worldRank);
  }
}

function sizeOf(data: MessageBuffer): number {
  try {
    return byteLength(data);
  } catch {
    return 0;
  }
}

/**
 * `endpoint` with the per-operation timeout `timeoutMs` (ms > 0; Infinity or undefined: the
 * endpoint itself, no cost). Validated by the caller (`badTimeout`).
 */
export function withTimeout(endpoint: Endpoint, timeoutMs: number | undefined): Endpoint {
  if (timeoutMs === undefined || timeoutMs === Infinity) return endpoint;
  return new TimeoutEndpoint(endpoint, new TimeoutTracker(timeoutMs, endpoint.worldRank));
}

/** The transport's own endpoint under a `withTimeout` wrapper (or `endpoint` itself). */
export function unwrapEndpoint(endpoint: Endpoint): Endpoint {
  return endpoint instanceof TimeoutEndpoint ? endpoint.inner : endpoint;
}
