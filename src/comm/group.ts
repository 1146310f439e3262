/**
 * The one Communicator implementation of vcoll: a group of world ranks inside one context id
 * of a transport's Endpoint. Rank i of the communicator is world rank group[i]; destinations,
 * sources and Status.source are translated between the two (the world communicator is the
 * identity and adds nothing to the transport's requests; over an endpoint that checks the
 * arguments itself it does not check them again). `split` is MPI_Comm_split. Context id c uses
 * endpoint context 2c for user tags and 2c + 1 for collective tags (comm/agree.ts), so that a
 * user's ANY_TAG receive never takes a collective's message.
 *
 * Cost of `split` in the α+βm model (p ranks of the parent): one Bruck allgather of a 32-byte
 * record per rank, ⌈log₂p⌉α + 32(p−1)β, then O(p log p) local work (the sort by key). The
 * construction follows MPI-4.0 §7.4.2 (MPI_Comm_split) and the context-id agreement of
 * src/comm/agree.ts.
 */

import { InvalidArgumentError } from '../errors.js';
import { allgatherRecords, endpointCtx, type Members, TAG_SPLIT, withContext } from './agree.js';
import { ANY_SOURCE, ANY_TAG, BaseCommunicator, type Communicator, type Received, type Status, UNDEFINED } from './communicator.js';
import type { Endpoint, VirtualClock } from './endpoint.js';
import type { NativeCollectives } from './native.js';
import { boundOf, type BoundSchedule, type RankSchedule, type ScheduleOptions } from './schedule.js';
import { mapRequest, OpRequest, type Request, toPromise } from './request.js';
import { badTimeout, withTimeout } from './timeout.js';
import { isMessageBuffer, type MessageBuffer, type MessageData, toBytes } from './segments.js';

const MAX_TAG = 0x7fffffff;
const INT32_MIN = -0x80000000;

const BAD_BUFFER = 'must be a typed array or DataView, or an array of them';

function rejected<T>(e: Error): Request<T> {
  return OpRequest.failed(e);
}

/**
 * What is wrong with rank argument `field` = r of a group of `size` ranks (undefined: an
 * integer in [0, size), or ANY_SOURCE when `wildcard`); `what` names the group's ranks in the
 * message. `rank`: the caller, named by the error.
 */
export function badRank(field: string, r: number, size: number, wildcard: boolean, rank: number, what = 'rank'): InvalidArgumentError | undefined {
  if (Number.isInteger(r) && r >= 0 && r < size) return undefined;
  if (wildcard && r === ANY_SOURCE) return undefined;
  return new InvalidArgumentError(field, `${what} ${r} is not in [0, ${size})`, { rank });
}

/** What is wrong with tag t (undefined: an integer in [0, 2³¹ − 1], or ANY_TAG when `wildcard`). */
export function badTag(t: number, wildcard: boolean, rank: number): InvalidArgumentError | undefined {
  if (Number.isInteger(t) && t >= 0 && t <= MAX_TAG) return undefined;
  if (wildcard && t === ANY_TAG) return undefined;
  return new InvalidArgumentError('tag', `must be an integer in [0, 2^31 - 1], got ${t}`, { rank });
}

/** What is wrong with `maxBytes` of irecvAlloc (undefined: a number ≥ 0, Infinity included). */
export function badMaxBytes(maxBytes: number, rank: number): InvalidArgumentError | undefined {
  if (typeof maxBytes === 'number' && maxBytes >= 0) return undefined;
  return new InvalidArgumentError('maxBytes', `must be a number >= 0 (Infinity: no limit), got ${String(maxBytes)}`, { rank });
}

/**
 * Tables of world ranks (a group's rank i → world rank) are read-only Int32Arrays once a
 * communicator holds them, so that the ranks of one process — a simulation's P ranks — can
 * share one table instead of holding P numbers each (P² in all). A group of consecutive world
 * ranks is a view of one identity table (worldRange): O(1) per rank to make, and a world
 * rank's index in it is found by subtraction (indexInWorldRange), with no per-rank map.
 */
let identity = new Int32Array(0);
/** The buffers of every identity table made (views of older ones stay valid when it grows). */
const identityBuffers = new WeakSet<ArrayBufferLike>();

/** World ranks first … first + length − 1 as a shared read-only view (no copy per caller). */
export function worldRange(first: number, length: number): Int32Array {
  const end = first + length;
  if (end > identity.length) {
    identity = Int32Array.from({ length: Math.max(end, 2 * identity.length) }, (_, i) => i);
    identityBuffers.add(identity.buffer);
  }
  return identity.subarray(first, end);
}

/** `world`'s index in `ranks` when `ranks` is a view of worldRange's table (-1: not in it); undefined for any other table. */
export function indexInWorldRange(ranks: Int32Array, world: number): number | undefined {
  if (!identityBuffers.has(ranks.buffer)) return undefined;
  const i = ranks.length === 0 ? -1 : world - ranks[0];
  return i >= 0 && i < ranks.length ? i : -1;
}

/** world rank → index, for a table that is no world range (built once per holder, O(n)). */
export function indexOfWorldRanks(ranks: Int32Array): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i < ranks.length; i++) m.set(ranks[i], i);
  return m;
}

/** A communicator over an endpoint: a group of world ranks and a context id. */
export class GroupCommunicator extends BaseCommunicator implements Members {
  readonly rank: number;
  readonly size: number;
  readonly clock?: VirtualClock;
  /** The transport underneath (for comm/'s own constructions). */
  readonly endpoint: Endpoint;
  /**
   * The context id of this communicator: its traffic uses endpoint context 2·ctx for user tags
   * and 2·ctx + 1 for collective tags (comm/agree.ts `endpointCtx`).
   */
  readonly ctx: number;
  /** World rank of each rank; null for the world communicator (the identity). */
  private readonly group: Int32Array | null;
  private localOf: Map<number, number> | undefined;
  /** The endpoint's native schedule executor over this communicator (Communicator.bindValidatedSchedule). */
  readonly bindValidatedSchedule?: (schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions) => BoundSchedule | undefined;

  /**
   * `group`: the world rank of every rank (null: the world itself; an Int32Array is kept as it
   * is, not copied, and must never be written: it may be shared); `rank`: this process's rank
   * in it. Use `createWorldCommunicator` or `split` rather than this constructor.
   */
  constructor(endpoint: Endpoint, ctx: number, group: ArrayLike<number> | null, rank: number) {
    super();
    this.endpoint = endpoint;
    this.ctx = ctx;
    // an Int32Array is taken as it is, read-only (see worldRange): a simulation's ranks share one
    this.group = group === null ? null : group instanceof Int32Array ? group : Int32Array.from(group);
    this.size = group === null ? endpoint.worldSize : group.length;
    this.rank = rank;
    if (endpoint.clock !== undefined) this.clock = endpoint.clock;
    endpoint.openContext?.(ctx, group === null ? null : Array.from(group));
    const native = endpoint.bindSchedule;
    if (native !== undefined) {
      this.bindValidatedSchedule = (schedule, buffers, options) => {
        const es = native.call(endpoint, ctx, this.group, schedule, buffers, options);
        return es === undefined ? undefined : boundOf(es);
      };
    }
  }

  private nativeOps: NativeCollectives | null | undefined;

  /** The transport's own collectives over this communicator (MPI's), if it has them. */
  get native(): NativeCollectives | undefined {
    if (this.nativeOps === undefined) this.nativeOps = this.endpoint.nativeCollectives?.(this.ctx) ?? null;
    return this.nativeOps ?? undefined;
  }

  /** The world rank of `rank` (no validation). */
  worldRankOf(rank: number): number {
    return this.group === null ? rank : this.group[rank];
  }

  /** The rank of world rank `world` here, or -1 if it is not a member. */
  rankOfWorld(world: number): number {
    if (this.group === null) return world >= 0 && world < this.size ? world : -1;
    const inRange = indexInWorldRange(this.group, world);
    if (inRange !== undefined) return inRange;
    if (this.localOf === undefined) this.localOf = indexOfWorldRanks(this.group);
    return this.localOf.get(world) ?? -1;
  }

  /**
   * The world ranks of ranks `first` … `first + length − 1` of this communicator, as a view of
   * the table this communicator holds (no copy; read-only, see worldRange). No validation.
   */
  worldRanksOfRange(first: number, length: number): Int32Array {
    return this.group === null ? worldRange(first, length) : this.group.subarray(first, first + length);
  }

  /** World ranks of the members, in rank order. */
  worldRanks(): number[] {
    return Array.from({ length: this.size }, (_, i) => this.worldRankOf(i));
  }

  private badRank(field: string, r: number, wildcard: boolean): InvalidArgumentError | undefined {
    return badRank(field, r, this.size, wildcard, this.rank);
  }

  private badTag(t: number, wildcard: boolean): InvalidArgumentError | undefined {
    return badTag(t, wildcard, this.rank);
  }

  isend(dest: number, tag: number, data: MessageData): Request<void> {
    return this.postSend(dest, tag, data, false);
  }

  /** A send; `awaited`: the caller waits for it at once (the endpoint may drive it briefly). */
  private postSend(dest: number, tag: number, data: MessageData, awaited: boolean): Request<void> {
    const bytes = toBytes(data);
    const bad =
      this.badRank('dest', dest, false) ??
      this.badTag(tag, false) ??
      (isMessageBuffer(bytes) ? undefined : new InvalidArgumentError('data', BAD_BUFFER, { rank: this.rank }));
    if (bad !== undefined) return rejected(bad);
    const ctx = endpointCtx(this.ctx, tag);
    return endpointSend(this.endpoint, awaited, ctx, this.group === null ? dest : this.group[dest], tag, bytes);
  }

  irecv(source: number, tag: number, data: MessageData): Request<Status> {
    return this.postRecv(source, tag, data, false);
  }

  override recv(source: number, tag: number, data: MessageData): Promise<Status> {
    return toPromise(this.postRecv(source, tag, data, true));
  }

  /** A receive; `awaited`: the caller waits for it at once (the endpoint may poll briefly). */
  private postRecv(source: number, tag: number, data: MessageData, awaited: boolean): Request<Status> {
    const into = toBytes(data);
    const bad =
      this.badRank('source', source, true) ??
      this.badTag(tag, true) ??
      (isMessageBuffer(into) ? undefined : new InvalidArgumentError('into', BAD_BUFFER, { rank: this.rank }));
    if (bad !== undefined) return rejected(bad);
    const ctx = endpointCtx(this.ctx, tag);
    const group = this.group;
    if (group === null) return endpointRecv(this.endpoint, awaited, ctx, source, tag, into);
    if (source !== ANY_SOURCE) {
      return mapRequest(endpointRecv(this.endpoint, awaited, ctx, group[source], tag, into), (st) => ({ source, tag: st.tag, bytes: st.bytes }));
    }
    return mapRequest(endpointRecv(this.endpoint, awaited, ctx, ANY_SOURCE, tag, into), (st) => ({
      source: this.rankOfWorld(st.source),
      tag: st.tag,
      bytes: st.bytes,
    }));
  }

  irecvAlloc(source: number, tag: number, maxBytes = Infinity): Request<Received> {
    const bad = this.badRank('source', source, true) ?? this.badTag(tag, true) ?? badMaxBytes(maxBytes, this.rank);
    if (bad !== undefined) return rejected(bad);
    const ctx = endpointCtx(this.ctx, tag);
    const group = this.group;
    if (group === null) return this.endpoint.irecvAlloc(ctx, source, tag, maxBytes);
    if (source !== ANY_SOURCE) {
      return mapRequest(this.endpoint.irecvAlloc(ctx, group[source], tag, maxBytes), (st) => ({ source, tag: st.tag, bytes: st.bytes, data: st.data }));
    }
    return mapRequest(this.endpoint.irecvAlloc(ctx, ANY_SOURCE, tag, maxBytes), (st) => ({
      source: this.rankOfWorld(st.source),
      tag: st.tag,
      bytes: st.bytes,
      data: st.data,
    }));
  }

  override send(dest: number, tag: number, data: MessageData): Promise<void> {
    const req = this.postSend(dest, tag, data, true);
    // A send that completed at once (the common case): one shared settled promise.
    return completed(req) ? SENT : toPromise(req);
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    this.endpoint.copy(dst, src);
  }

  nodeOf(rank: number): number {
    const bad = this.badRank('rank', rank, false);
    if (bad !== undefined) throw bad;
    return this.endpoint.nodeOf(this.worldRankOf(rank));
  }

  split(color: number, key: number): Promise<Communicator | null> {
    return withContext(this.endpoint, async (counter) => {
      const colorOk = color === UNDEFINED || (Number.isInteger(color) && color >= 0 && color <= MAX_TAG);
      const keyOk = Number.isInteger(key) && key >= INT32_MIN && key <= MAX_TAG;
      const flag = colorOk ? (keyOk ? 0 : 2) : 1;
      const all = await allgatherRecords(this, TAG_SPLIT, Float64Array.of(color, key, counter.next, flag));
      let ctx = 0;
      for (let i = 0; i < this.size; i++) {
        const f = all[i * 4 + 3];
        if (f !== 0) {
          const field = f === 1 ? 'color' : 'key';
          const what = f === 1 ? 'an integer in [0, 2^31 - 1] or UNDEFINED' : 'an int32';
          throw new InvalidArgumentError(field, `rank ${i} passed ${all[i * 4 + f - 1]}; must be ${what}`, {
            rank: this.rank,
          });
        }
        ctx = Math.max(ctx, all[i * 4 + 2]);
      }
      counter.claim(ctx);
      if (color === UNDEFINED) return null;
      const members: number[] = [];
      for (let i = 0; i < this.size; i++) if (all[i * 4] === color) members.push(i);
      members.sort((a, b) => all[a * 4 + 1] - all[b * 4 + 1] || a - b);
      return new GroupCommunicator(
        this.endpoint,
        ctx,
        members.map((i) => this.worldRankOf(i)),
        members.indexOf(this.rank),
      );
    });
  }

  async splitByNode(): Promise<Communicator> {
    return (await this.split(this.nodeOf(this.rank), this.rank)) as Communicator;
  }
}

/** The endpoint's send, the awaited form when the caller waits at once and the endpoint has one. */
function endpointSend(ep: Endpoint, awaited: boolean, ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void> {
  return awaited && ep.isendAwaited !== undefined ? ep.isendAwaited(ctx, dest, tag, data) : ep.isend(ctx, dest, tag, data);
}

/** The endpoint's receive, the awaited form when the caller waits at once and the endpoint has one. */
function endpointRecv(ep: Endpoint, awaited: boolean, ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status> {
  return awaited && ep.irecvAwaited !== undefined ? ep.irecvAwaited(ctx, source, tag, into) : ep.irecv(ctx, source, tag, into);
}

/** The promise of every blocking send that completed at once (settled promises are immutable). */
const SENT: Promise<void> = Promise.resolve();

function completed(req: Request<unknown>): boolean {
  return req instanceof OpRequest && !req.pending && !req.failed;
}

/**
 * The world communicator over an endpoint that checks every argument itself exactly as
 * GroupCommunicator would (same fields, its world rank as the rank): point-to-point calls go
 * straight to the endpoint, validated once.
 */
class CheckedWorldCommunicator extends GroupCommunicator {
  /** The last completed receive request seen by `recv` and its promise (transports reuse done requests). */
  private lastDone: Request<Status> | null = null;
  private lastPromise: Promise<Status> | null = null;

  // The world's context id is 0 (endpoint contexts 0 and 1); a bad tag is the endpoint's to reject.
  override isend(dest: number, tag: number, data: MessageData): Request<void> {
    return this.endpoint.isend(endpointCtx(0, tag), dest, tag, data instanceof Uint8Array ? data : toBytes(data));
  }

  override irecv(source: number, tag: number, into: MessageData): Request<Status> {
    return this.endpoint.irecv(endpointCtx(0, tag), source, tag, into instanceof Uint8Array ? into : toBytes(into));
  }

  override irecvAlloc(source: number, tag: number, maxBytes = Infinity): Request<Received> {
    return this.endpoint.irecvAlloc(endpointCtx(0, tag), source, tag, maxBytes);
  }

  override send(dest: number, tag: number, data: MessageData): Promise<void> {
    const req = endpointSend(this.endpoint, true, endpointCtx(0, tag), dest, tag, data instanceof Uint8Array ? data : toBytes(data));
    return completed(req) ? SENT : toPromise(req);
  }

  override recv(source: number, tag: number, into: MessageData): Promise<Status> {
    const req = endpointRecv(this.endpoint, true, endpointCtx(0, tag), source, tag, into instanceof Uint8Array ? into : toBytes(into));
    if (req === this.lastDone) return this.lastPromise as Promise<Status>;
    const promise = toPromise(req);
    if (completed(req)) {
      this.lastDone = req;
      this.lastPromise = promise;
    }
    return promise;
  }
}

export interface WorldOptions {
  /**
   * The endpoint rejects a bad destination or source (field `dest`/`source`: not an integer in
   * [0, worldSize), nor ANY_SOURCE for a receive), tag (`tag`: not an integer in [0, 2³¹ − 1],
   * nor ANY_TAG for a receive) and buffer (`data`/`into`: not a MessageBuffer) with an
   * InvalidArgumentError naming that field and its world rank, in that order of checks: then
   * the world communicator skips its own checks (the threads transport's endpoint does this).
   */
  readonly endpointChecks?: boolean;
  /**
   * Per-operation timeout in ms (> 0; undefined or Infinity: none): a send or receive of this
   * communicator or of any communicator made from it (split, intercommunicators, collectives)
   * still pending after timeoutMs of wall-clock time fails with a TimeoutError naming the peer
   * and the operation (comm/timeout.ts).
   */
  readonly timeoutMs?: number;
}

/**
 * The world communicator of an endpoint (context 0, rank = world rank). Every transport builds
 * each rank's communicator with this; sub-communicators come from `split`.
 */
export function createWorldCommunicator(transport: Endpoint, options: WorldOptions = {}): GroupCommunicator {
  const bad = badTimeout(options.timeoutMs ?? Infinity);
  if (bad !== undefined) throw new InvalidArgumentError('timeoutMs', bad, { rank: transport.worldRank });
  const endpoint = withTimeout(transport, options.timeoutMs);
  return options.endpointChecks === true
    ? new CheckedWorldCommunicator(endpoint, 0, null, endpoint.worldRank)
    : new GroupCommunicator(endpoint, 0, null, endpoint.worldRank);
}
