/**
 * The MPI transport's endpoint: vcoll's point-to-point (comm/endpoint.ts) over the MPI library
 * through the native binding. Each communicator context id c of comm/ gets two MPI
 * communicators over the same group (MPI_Comm_create_group over MPI_COMM_WORLD, collective
 * over that group only; the world's are duplicates of MPI_COMM_WORLD): one for user tags
 * (endpoint context 2c), one for collective and management tags (2c + 1, whose tags travel as
 * tag − COLLECTIVE_TAG < 2²⁰, within every MPI library's MPI_TAG_UB). So MPI's own context ids
 * keep communicators apart, MPI's matching does ANY_SOURCE/ANY_TAG and non-overtaking, and
 * the collectives' MPI communicator is in the vcoll communicator's rank order (the `mpi-native`
 * variants use it).
 *
 * Progress: Open MPI has no progress thread, so while requests are pending the endpoint polls
 * MPI_Testsome from the event loop (setImmediate, never a blocking MPI_Wait, which would freeze
 * the loop). A blocking `recv` or `send` (irecvAwaited, isendAwaited) first spins on MPI_Test in
 * C for a bounded time, and each poll spins in MPI_Testsome for as long (`recvSpinNs`: 50 µs, or
 * 0 when the node holds more ranks than it has cores), so that a reply a few microseconds away
 * completes without a trip through the event loop. After many empty polls the loop calls
 * sched_yield (oversubscribed runs leave the cores to the ranks that work).
 *
 * Receives of unknown size (irecvAlloc) are MPI_Improbe polled from the loop, then
 * MPI_Imrecv into a buffer of the probed size. To keep the order in which receives were
 * posted (MPI's matching order), a receive that could match the same message as an earlier
 * alloc receive still probing waits in a per-context queue until that one has matched.
 *
 * Errors: MPI_ERRORS_RETURN everywhere; MPI_ERR_TRUNCATE is a TruncationError (its `bytes` is
 * -1: MPI does not say how long the message was), other failures CommunicationErrors naming
 * the MPI error class, on the rank that saw them.
 */

import { cpus } from 'node:os';
import { endpointCtx } from '../../comm/agree.js';
import { CALL_TAG_STRIDE, DERIVED_SLOTS, OWN_SLOTS } from '../../comm/tags.js';
import { COLLECTIVE_TAG, type Received, type Status } from '../../comm/communicator.js';
import { shiftedTag, spanBytes, type EndpointSchedule, type RankSchedule, type ScheduleOptions, type ScheduleWait, type Span } from '../../comm/schedule.js';
import type { Endpoint } from '../../comm/endpoint.js';
import type { NativeCollectives, NativeInterCollectives } from '../../comm/native.js';
import { OpRequest, type Request } from '../../comm/request.js';
import type { MessageBuffer } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';
import { COMBINE_OPS, COMBINE_TYPES, isMpiFailure, MPI_OPS, MPI_TYPES, type MpiBinding, type MpiInitInfo } from './binding.js';

/** How long a blocking recv spins in MPI_Test before it leaves the request to the loop (ns). */
export const DEFAULT_RECV_SPIN_NS = 50_000;
/** Empty polls of the progress loop before each sched_yield. */
const POLLS_BEFORE_YIELD = 64;
/** MPI_Comm_create_group tags cycle through this many values (any tag ≤ every MPI_TAG_UB). */
const GROUP_TAGS = 16384;

/** One MPI communicator of an endpoint context. */
interface Context {
  readonly handle: number;
  /** World rank of MPI rank i (null: the identity, the world). */
  readonly worldOf: Int32Array | null;
  /** MPI rank of world rank w, -1 outside (null: the identity). */
  readonly localOf: Int32Array | null;
  /** Added to tags on the way in, subtracted on the way out (COLLECTIVE_TAG for odd contexts). */
  readonly tagBase: number;
  /** Receives waiting behind an alloc receive that is still probing (see the header). */
  readonly queue: Queued[];
}

type Queued =
  | { readonly kind: 'recv'; readonly source: number; readonly tag: number; readonly into: MessageBuffer; readonly req: OpRequest<Status> }
  | { readonly kind: 'alloc'; readonly source: number; readonly tag: number; readonly maxBytes: number; readonly req: OpRequest<Received> };

/** A context's blocking point-to-point (MpiEndpoint.blockingPort): world ranks, vcoll tags. */
export interface BlockingPort {
  send(dest: number, tag: number, data: MessageBuffer): void;
  recv(source: number, tag: number, into: MessageBuffer): Status;
}

/** A request pending in the binding. */
interface Pending {
  /** 'self': a send to this rank from a copy, already reported complete (see `isend`). */
  readonly kind: 'send' | 'self' | 'recv' | 'alloc' | 'drop';
  readonly ctx: Context;
  readonly req: OpRequest<unknown>;
  /** The buffer, held until completion (its memory is in MPI's hands). */
  readonly buf: MessageBuffer;
  /** Receive capacity in bytes (for truncation messages); the alloc receive's maxBytes. */
  readonly capacity: number;
  /** A drop: the message length over maxBytes. */
  readonly bytes?: number;
}

export interface MpiEndpointOptions {
  /** The node of every world rank (default: the machines MPI_Comm_split_type(SHARED) finds). */
  readonly nodes?: readonly number[];
  /**
   * Spin budget in ns of a blocking send or recv, and of each progress poll (default: the
   * VCOLL_MPI_SPIN_NS environment variable, else DEFAULT_RECV_SPIN_NS, 0 when the node holds
   * more ranks than cores).
   */
  readonly recvSpinNs?: number;
}

function segmentsBytes(buf: MessageBuffer): number {
  if (buf instanceof Uint8Array) return buf.length;
  let n = 0;
  for (const s of buf) n += s.length;
  return n;
}

/** The bytes of a message buffer in a fresh contiguous array. */
function copyOf(buf: MessageBuffer): Uint8Array {
  // A detached array has 0 bytes (as MPI sees it: the binding reads its length), and slice /
  // set would throw on it: it is skipped.
  if (buf instanceof Uint8Array) return buf.byteLength === 0 ? new Uint8Array(0) : buf.slice();
  const out = new Uint8Array(segmentsBytes(buf));
  let at = 0;
  for (const s of buf) {
    if (s.byteLength === 0) continue;
    out.set(s, at);
    at += s.length;
  }
  return out;
}

function overlaps(a: { source: number; tag: number }, source: number, tag: number): boolean {
  return (a.source < 0 || source < 0 || a.source === source) && (a.tag < 0 || tag < 0 || a.tag === tag);
}

export class MpiEndpoint implements Endpoint {
  readonly worldRank: number;
  readonly worldSize: number;
  readonly info: MpiInitInfo;
  private readonly mpi: MpiBinding;
  private readonly contexts = new Map<number, Context>();
  /** Group of each open context id (to check that a reopening names the same group). */
  private readonly groups = new Map<number, string>();
  private readonly nodes: Int32Array;
  private readonly entries: (Pending | undefined)[] = [];
  private pendingCount = 0;
  /** Sends among them (drain waits for these). */
  private pendingSends = 0;
  /** Contexts whose queue is not empty. */
  private readonly queued = new Set<Context>();
  private out = new Int32Array(5 * 64);
  /** The binding's registered status buffer: calls that complete at once write here. */
  private readonly one: Int32Array;
  /** Blocking point-to-point per context (see blockingPort). */
  private readonly ports = new Map<number, BlockingPort>();
  private readonly probeOut = new Int32Array(3);
  private polling = false;
  /** Set by `close` (MPI_Finalize is next): no more polling. */
  private closed = false;
  private emptyPolls = 0;
  private readonly recvSpinNs: number;
  private readonly interCache = new Map<number, NativeInterCollectives>();
  /** Schedules running (started, not complete): the progress loop advances them. */
  private readonly running = new Set<NativeRun>();

  constructor(mpi: MpiBinding, info: MpiInitInfo, options: MpiEndpointOptions = {}) {
    this.mpi = mpi;
    this.runFast = mpi.fast?.schedRun?.bind(mpi.fast);
    this.one = mpi.status;
    this.info = info;
    this.worldRank = info.rank;
    this.worldSize = info.size;
    if (options.nodes !== undefined) {
      if (options.nodes.length !== info.size) {
        throw new InvalidArgumentError('nodes', `must list one node per rank (${info.size}), got ${options.nodes.length}`, { rank: info.rank });
      }
      this.nodes = Int32Array.from(options.nodes);
    } else {
      this.nodes = this.machineNodes();
    }
    const mine = this.nodes[this.worldRank];
    let local = 0;
    for (const n of this.nodes) if (n === mine) local++;
    // The machine's cores, not this process's affinity: mpirun binds each rank to one core.
    const oversubscribed = local > cpus().length;
    const fromEnv = process.env.VCOLL_MPI_SPIN_NS;
    this.recvSpinNs = options.recvSpinNs ?? (fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : oversubscribed ? 0 : DEFAULT_RECV_SPIN_NS);
    if (!(this.recvSpinNs >= 0 && this.recvSpinNs <= 2 ** 31 - 1)) {
      throw new InvalidArgumentError('recvSpinNs', `(or VCOLL_MPI_SPIN_NS) must be a number of ns in [0, 2^31 - 1], got ${this.recvSpinNs}`, { rank: info.rank });
    }
    this.openContext(0, null);
  }

  /** Node numbers from MPI_Comm_split_type(SHARED): node i is the i-th distinct machine by lowest world rank. */
  private machineNodes(): Int32Array {
    const mpi = this.mpi;
    const shared = mpi.commSplitShared(0);
    // The lowest world rank on my machine, shared by allgather over the world.
    const [, localSize] = mpi.commInfo(shared);
    const ranks = new Int32Array(localSize);
    mpi.allgather(shared, Int32Array.of(this.worldRank), ranks);
    mpi.commFree(shared);
    let low = this.worldRank;
    for (const r of ranks) low = Math.min(low, r);
    const lows = new Int32Array(this.worldSize);
    mpi.allgather(0, Int32Array.of(low), lows);
    const number = new Map<number, number>();
    const nodes = new Int32Array(this.worldSize);
    for (let w = 0; w < this.worldSize; w++) {
      let n = number.get(lows[w]);
      if (n === undefined) {
        n = number.size;
        number.set(lows[w], n);
      }
      nodes[w] = n;
    }
    return nodes;
  }

  /**
   * Opens communicator context id `ctx` over `worldRanks` (in rank order; null: the world): two
   * MPI communicators over the group. Collective over the group (comm/ calls it on every member
   * once the members have agreed on ctx); idempotent for a context already open on this rank.
   */
  openContext(ctx: number, worldRanks: readonly number[] | null): void {
    const key = worldRanks === null ? '*' : worldRanks.join(',');
    const known = this.groups.get(ctx);
    if (known !== undefined) {
      if (known !== key) throw new CommunicationError(`MPI transport: context ${ctx} reopened over another group`, { rank: this.worldRank });
      return;
    }
    let worldOf: Int32Array | null = null;
    let localOf: Int32Array | null = null;
    if (worldRanks !== null) {
      worldOf = Int32Array.from(worldRanks);
      localOf = new Int32Array(this.worldSize).fill(-1);
      worldOf.forEach((w, i) => ((localOf as Int32Array)[w] = i));
    }
    for (const half of [0, 1]) {
      const handle =
        worldOf === null ? this.call(() => this.mpi.commDup(0)) : this.call(() => this.mpi.commCreateGroup(0, worldOf, (2 * ctx + half) % GROUP_TAGS));
      this.contexts.set(2 * ctx + half, { handle, worldOf, localOf, tagBase: half === 1 ? COLLECTIVE_TAG : 0, queue: [] });
    }
    this.groups.set(ctx, key);
  }

  private context(ctx: number): Context {
    const c = this.contexts.get(ctx);
    if (c === undefined) throw new CommunicationError(`MPI transport: endpoint context ${ctx} was never opened`, { rank: this.worldRank });
    return c;
  }

  /** Runs a binding call, turning MPI failures into typed errors of this rank. */
  private call<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      throw this.typed(e);
    }
  }

  private typed(e: unknown): Error {
    if (isMpiFailure(e)) return new CommunicationError(`MPI transport: ${e.message}`, { rank: this.worldRank, cause: e });
    if (e instanceof RangeError) return new InvalidArgumentError('data', e.message.replace(/^vcoll_mpi: /, ''), { rank: this.worldRank, cause: e });
    return e instanceof Error ? e : new Error(String(e));
  }

  private mpiTag(c: Context, tag: number): number {
    return tag < 0 ? -1 : tag - c.tagBase;
  }

  private badTag(c: Context, tag: number): InvalidArgumentError | undefined {
    const t = this.mpiTag(c, tag);
    if (t <= this.info.tagUb) return undefined;
    return new InvalidArgumentError('tag', `${tag} exceeds this MPI library's MPI_TAG_UB (${this.info.tagUb})`, { rank: this.worldRank });
  }

  private peer(c: Context, world: number): number {
    return world < 0 || c.localOf === null ? world : c.localOf[world];
  }

  private afterFinalize(): CommunicationError {
    return new CommunicationError('MPI transport: used after MPI_Finalize', { rank: this.worldRank });
  }

  isend(ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void> {
    return this.postSend(ctx, dest, tag, data, false);
  }

  isendAwaited(ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void> {
    return this.postSend(ctx, dest, tag, data, true);
  }

  private postSend(ctx: number, dest: number, tag: number, data: MessageBuffer, awaited: boolean): Request<void> {
    if (this.closed) return OpRequest.failed(this.afterFinalize());
    const c = this.context(ctx);
    const bad = this.badTag(c, tag);
    if (bad !== undefined) return OpRequest.failed(bad);
    // A send to oneself is buffered (a copy; the request completes at once), as on the other
    // transports: some MPI libraries (MPICH) complete a self-send only when its receive is
    // posted, so a rank's send to itself before its receive would wait forever.
    const self = dest === this.worldRank;
    const payload = self ? copyOf(data) : data;
    let slot: number;
    try {
      slot = this.mpi.isend(c.handle, this.peer(c, dest), this.mpiTag(c, tag), payload);
    } catch (e) {
      return OpRequest.failed(this.typed(e));
    }
    if (slot < 0) return OpRequest.done(undefined);
    if (self) {
      this.track(slot, { kind: 'self', ctx: c, req: new OpRequest<unknown>(), buf: payload, capacity: 0 });
      return OpRequest.done(undefined);
    }
    const req = new OpRequest<void>();
    const entry: Pending = { kind: 'send', ctx: c, req: req as OpRequest<unknown>, buf: data, capacity: 0 };
    // A blocking send (a message past the eager limit) is driven in C for a bounded time.
    if (awaited && this.recvSpinNs > 0 && this.mpi.test(slot, this.recvSpinNs) === 1) {
      this.complete(entry, this.one, 0);
      return req;
    }
    this.track(slot, entry);
    return req;
  }

  irecv(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status> {
    return this.postRecv(ctx, source, tag, into, false);
  }

  irecvAwaited(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status> {
    return this.postRecv(ctx, source, tag, into, true);
  }

  private postRecv(ctx: number, source: number, tag: number, into: MessageBuffer, awaited: boolean): Request<Status> {
    if (this.closed) return OpRequest.failed(this.afterFinalize());
    const c = this.context(ctx);
    const bad = this.badTag(c, tag);
    if (bad !== undefined) return OpRequest.failed(bad);
    const req = new OpRequest<Status>();
    if (c.queue.some((q) => overlaps(q, source, tag))) {
      c.queue.push({ kind: 'recv', source, tag, into, req });
      return req;
    }
    this.startRecv(c, source, tag, into, req, awaited);
    return req;
  }

  private startRecv(c: Context, source: number, tag: number, into: MessageBuffer, req: OpRequest<Status>, awaited: boolean): void {
    let slot: number;
    const spin = awaited ? this.recvSpinNs : 0;
    try {
      slot = spin > 0 ? this.mpi.irecv(c.handle, this.peer(c, source), this.mpiTag(c, tag), into, spin) : this.mpi.irecv(c.handle, this.peer(c, source), this.mpiTag(c, tag), into);
    } catch (e) {
      req.reject(this.typed(e));
      return;
    }
    const entry: Pending = { kind: 'recv', ctx: c, req: req as OpRequest<unknown>, buf: into, capacity: segmentsBytes(into) };
    // A blocking receive that completed while the binding spun on it.
    if (slot < 0) {
      this.complete(entry, this.one, 0);
      return;
    }
    this.track(slot, entry);
  }

  /**
   * The blocking point-to-point of context `ctx` with everything per-context looked up once
   * (the communicator handle, rank translations, tag range): what `mpiBlocking` calls per
   * message. Ranks are world ranks, tags vcoll's; one Uint8Array goes through the binding's
   * fast path (vcoll_mpi_fast) when it loaded, anything else through the N-API functions.
   * `send` is MPI_Send in the calling thread (returns once `data` may be reused; a send to
   * oneself is buffered as in `isend`); `recv` is MPI_Recv (returns the status once the message
   * is in `into`; a receive of unknown size still probing for the same source and tag must be
   * awaited first: it was posted first, so it matches first). Both throw typed errors.
   */
  blockingPort(ctx: number): BlockingPort {
    const known = this.ports.get(ctx);
    if (known !== undefined) return known;
    const c = this.context(ctx);
    const { handle, localOf, worldOf, tagBase, queue } = c;
    const maxTag = this.info.tagUb + tagBase;
    const mpi = this.mpi;
    const fast = mpi.fast;
    const one = this.one;
    const me = this.worldRank;
    const port: BlockingPort = {
      send: (dest, tag, data) => {
        if (this.closed) throw this.afterFinalize();
        if (tag > maxTag) throw this.badTag(c, tag) as InvalidArgumentError;
        if (dest === me) {
          const req = this.isend(ctx, dest, tag, data) as OpRequest<void>;
          if (req.failed) throw req.reason;
          return;
        }
        const peer = localOf === null ? dest : localOf[dest];
        if (fast !== undefined && data instanceof Uint8Array) {
          const rc = fast.sendBlocking(handle, peer, tag - tagBase, data);
          if (rc !== 0) throw this.typed(mpi.errorOf('MPI_Send', rc));
          return;
        }
        try {
          mpi.sendBlocking(handle, peer, tag - tagBase, data);
        } catch (e) {
          throw this.typed(e);
        }
      },
      recv: (source, tag, into) => {
        if (this.closed) throw this.afterFinalize();
        if (tag > maxTag) throw this.badTag(c, tag) as InvalidArgumentError;
        if (queue.length > 0 && queue.some((q) => overlaps(q, source, tag))) {
          throw new CommunicationError(
            `MPI transport: a blocking receive from ${source} tag ${tag} would overtake a receive of unknown size posted before it for the same messages; await that one first`,
            { rank: me },
          );
        }
        const peer = source < 0 || localOf === null ? source : localOf[source];
        const mtag = tag < 0 ? -1 : tag - tagBase;
        try {
          if (fast !== undefined && into instanceof Uint8Array) fast.recvBlocking(handle, peer, mtag, into);
          else mpi.recvBlocking(handle, peer, mtag, into);
        } catch (e) {
          throw this.typed(e);
        }
        if (one[4] !== 0) throw this.mpiFailure('recv', segmentsBytes(into), one[4]);
        return { source: worldOf === null ? one[1] : worldOf[one[1]], tag: one[2] + tagBase, bytes: one[3] };
      },
    };
    this.ports.set(ctx, port);
    return port;
  }

  irecvAlloc(ctx: number, source: number, tag: number, maxBytes: number): Request<Received> {
    if (this.closed) return OpRequest.failed(this.afterFinalize());
    const c = this.context(ctx);
    const bad = this.badTag(c, tag);
    if (bad !== undefined) return OpRequest.failed(bad);
    const req = new OpRequest<Received>();
    c.queue.push({ kind: 'alloc', source, tag, maxBytes, req });
    this.queued.add(c);
    // A message that is already there is taken at once.
    this.serveQueue(c);
    if (c.queue.length > 0) this.schedule();
    return req;
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    dst.set(src);
  }

  nodeOf(worldRank: number): number {
    return this.nodes[worldRank];
  }

  /** The MPI library's collectives over communicator context id `ctx` (its collective half, in rank order). */
  nativeCollectives(ctx: number): NativeCollectives {
    const handle = this.context(2 * ctx + 1).handle;
    const mpi = this.mpi;
    const call = <T>(f: () => T): T => this.call(f);
    return {
      library: this.info.library,
      gatherv: (send, recv, counts, displs, root) => call(() => mpi.gatherv(handle, send, recv, counts, displs, root)),
      scatterv: (send, counts, displs, recv, root) => call(() => mpi.scatterv(handle, send, counts, displs, recv, root)),
      gather: (send, recv, root) => call(() => mpi.gather(handle, send, recv, root)),
      scatter: (send, recv, root) => call(() => mpi.scatter(handle, send, recv, root)),
      allreduce: (send, recv, count, type, op) => call(() => mpi.allreduce(handle, send, recv, count, MPI_TYPES[type], MPI_OPS[op])),
      barrier: () => call(() => mpi.barrier(handle)),
    };
  }

  /**
   * The MPI library's collectives over an intercommunicator of context id `ctx` whose local
   * group has context id `localCtx`: an MPI intercommunicator made once (MPI_Intercomm_create
   * between the two groups' leaders over MPI_COMM_WORLD, collective over both groups) and kept.
   */
  nativeInterCollectives(ctx: number, localCtx: number, remoteLeader: number): NativeInterCollectives {
    let n = this.interCache.get(ctx);
    if (n === undefined) {
      const local = this.context(2 * localCtx + 1).handle;
      const handle = this.call(() => this.mpi.intercommCreate(local, 0, 0, remoteLeader, ctx % GROUP_TAGS));
      const mpi = this.mpi;
      n = {
        library: this.info.library,
        allgather: (send, recv) => this.call(() => mpi.allgather(handle, send, recv)),
        allgatherv: (send, recv, counts, displs) => this.call(() => mpi.allgatherv(handle, send, recv, counts, displs)),
      };
      this.interCache.set(ctx, n);
    }
    return n;
  }

  /**
   * The native executor of schedules (Endpoint.bindSchedule): the schedule is encoded once and
   * made in C — every send's and receive's address, count and datatype resolved (binding
   * schedCreate); `start()` is one binding call (the fast path's schedRun) that posts and
   * completes the steps in C (MPI_Isend / MPI_Irecv / MPI_Testsome), spinning up to the poll
   * budget (recvSpinNs), and returns a settled request when that suffices; otherwise the
   * progress loop advances it, one binding call per poll, never one JS turn per message.
   * `startBlocking` runs it to the end in C (MPI_Waitsome, under the watchdog). Absent
   * (undefined) when the binding predates schedules or VCOLL_MPI_SCHEDULES=0: the portable
   * executor runs them then.
   *
   * Combine operations (into := into ⊕ from) run in C too when the schedule's operator is a
   * built-in one (ScheduleOptions.combine.builtin: sum, prod, min, max, band, bor, bxor on a
   * numeric typed array's elements; native/vcoll_mpi_combine.c, with the results of
   * collectives/basic/ops.ts bit for bit, but for the NaN bits of a float sum or product of
   * two NaN, which V8 itself varies): done when issued, like a copy. A schedule with
   * combine operations is declined (undefined: the portable executor runs it, one JS turn
   * per message) when its operator is a JavaScript function (no `builtin`), names an
   * operator or type the C side does not have, or the binding predates combine operations.
   *
   * Steps of concurrent streams (ScheduleStep.streams, `after`) run in C too, by the rules of
   * the portable executor (schedule/run.ts `streamed`): each stream started in order with at
   * most `window` of its own operations outstanding, an operation with a dependency not before
   * that one has completed; a binding that predates streams (probed once: it refuses the
   * encoding) declines such a schedule.
   *
   * Encoding (Int32Array; native/vcoll_mpi_schedule.c): nsteps, then per step window, nops
   * (a step of streams: −window, nops, nstreams, the streams' operation counts, then one
   * dependency per operation: its index in the step or −1), then per operation
   *   send / recv: 0 / 1, comm handle, MPI peer, MPI tag, shiftable (0 / 1), nranges, (buffer, offset, length) * nranges
   *   copy:        2, nfrom, ranges…, nto, ranges…
   *   combine:     3, op (COMBINE_OPS), type (COMBINE_TYPES), ninto, ranges…, nfrom, ranges…
   * A step without streams is encoded as before streams existed (the same length).
   */
  get bindSchedule():
    | ((ctx: number, worldOf: Int32Array | null, schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions) => EndpointSchedule | undefined)
    | undefined {
    if (this.mpi.schedCreate === undefined || process.env.VCOLL_MPI_SCHEDULES === '0') return undefined;
    return this.bindNative;
  }

  private readonly bindNative = (
    ctx: number,
    worldOf: Int32Array | null,
    schedule: RankSchedule,
    buffers: readonly Uint8Array[],
    options: ScheduleOptions,
  ): EndpointSchedule | undefined => {
    if (this.closed) throw this.afterFinalize();
    // a schedule object bound again (a building block's, compiled once per shape) on the same
    // context and group with the same operator: its encoding is the same
    const cached = this.encodings.get(schedule);
    let combine: { readonly op: number; readonly type: number } | undefined;
    if (cached?.hasCombine ?? schedule.steps.some((step) => step.ops.some((op) => op.kind === 'combine'))) {
      combine = this.nativeCombiner(options);
      if (combine === undefined) return undefined;
    }
    let encoded: Int32Array;
    let ops: ScheduleOpInfo[];
    if (cached !== undefined && cached.ctx === ctx && cached.worldOf === worldOf && cached.combineOp === (combine?.op ?? -1) && cached.combineType === (combine?.type ?? -1)) {
      encoded = cached.code;
      ops = cached.ops;
    } else {
      const made = this.encode(ctx, worldOf, schedule, combine);
      if (made === undefined) return undefined; // streams, and a binding that predates them
      ({ encoded, ops } = made);
      this.encodings.set(schedule, { ctx, worldOf, hasCombine: combine !== undefined, combineOp: combine?.op ?? -1, combineType: combine?.type ?? -1, code: encoded, ops });
    }
    const info = new Int32Array(8);
    if (options.once === true && this.mpi.schedRunOnce !== undefined) return new OnceRun(this, encoded, buffers, info, ops, options, schedule.rank);
    const handle = this.call(() => (this.mpi.schedCreate as NonNullable<MpiBinding['schedCreate']>)(encoded, buffers, info));
    const run = new NativeRun(this, handle, info, ops, options, schedule.rank);
    // the C side holds requests and references: free them when the schedule is collected
    scheduleRegistry.register(run, { mpi: this.mpi, handle });
    return run;
  };

  /** Encodings of the schedules bound (bindNative), per schedule object: the last context, group and operator. */
  private readonly encodings = new WeakMap<
    RankSchedule,
    { ctx: number; worldOf: Int32Array | null; hasCombine: boolean; combineOp: number; combineType: number; code: Int32Array; ops: ScheduleOpInfo[] }
  >();

  /**
   * The schedule's encoding for the C side (see bindSchedule) and what each operation is, for
   * errors; undefined when it has streams and the binding cannot run them (streamsInC).
   */
  private encode(
    ctx: number,
    worldOf: Int32Array | null,
    schedule: RankSchedule,
    combine: { readonly op: number; readonly type: number } | undefined,
  ): { encoded: Int32Array; ops: ScheduleOpInfo[] } | undefined {
    const code: number[] = [schedule.steps.length];
    const ranges = (span: Span): void => {
      code.push(span.length);
      for (const r of span) code.push(r.buffer, r.offset, r.length);
    };
    // what each op is, for errors: kind, the schedule's peer and tag
    const ops: ScheduleOpInfo[] = [];
    for (let st = 0; st < schedule.steps.length; st++) {
      const step = schedule.steps[st];
      const streams = step.streams;
      if (streams === undefined) code.push(step.window, step.ops.length);
      else {
        if (!this.streamsInC()) return undefined;
        code.push(-step.window, step.ops.length, streams.length, ...streams);
        const after = step.after;
        for (let j = 0; j < step.ops.length; j++) code.push(after === undefined ? -1 : after[j]);
      }
      for (let j = 0; j < step.ops.length; j++) {
        const op = step.ops[j];
        if (op.kind === 'copy') {
          code.push(2);
          ranges(op.from);
          ranges(op.to);
          ops.push({ kind: 'copy', peer: -1, tag: -1, world: -1, bytes: 0, step: st, index: j });
          continue;
        }
        if (op.kind === 'combine') {
          if (combine === undefined) throw new Error('unreachable: a combine without an operator is declined above');
          code.push(3, combine.op, combine.type);
          ranges(op.into);
          ranges(op.from);
          ops.push({ kind: 'combine', peer: -1, tag: -1, world: -1, bytes: 0, step: st, index: j });
          continue;
        }
        const c = this.context(endpointCtx(ctx, op.tag));
        const bad = this.badTag(c, op.tag);
        if (bad !== undefined) throw bad;
        const world = worldOf === null ? op.peer : worldOf[op.peer];
        // a collective tag of the first call slot moves with the run's slot (shiftedTag): its
        // highest shift must stay within MPI_TAG_UB
        const shiftable = shiftedTag(op.tag, 1) !== op.tag;
        const top = shiftable ? this.badTag(c, op.tag + CALL_TAG_STRIDE * (OWN_SLOTS + DERIVED_SLOTS)) : undefined;
        if (top !== undefined) throw top;
        code.push(op.kind === 'send' ? 0 : 1, c.handle, this.peer(c, world), this.mpiTag(c, op.tag), shiftable ? 1 : 0);
        ranges(op.data);
        ops.push({ kind: op.kind, peer: op.peer, tag: op.tag, world, bytes: spanBytes(op.data), step: st, index: j });
      }
    }
    return { encoded: Int32Array.from(code), ops };
  }

  /**
   * The C codes of `options.combine`'s built-in operator, or undefined when the C side cannot
   * apply it: no built-in (a JavaScript function), an operator or element type it does not
   * have (or whose element size is not the combiner's), a bitwise operator on floats, or a
   * binding built before combine operations (probed once: it refuses op kind 3).
   */
  private nativeCombiner(options: ScheduleOptions): { readonly op: number; readonly type: number } | undefined {
    const builtin = options.combine?.builtin;
    if (builtin === undefined || !Object.hasOwn(COMBINE_OPS, builtin.op) || !Object.hasOwn(COMBINE_TYPES, builtin.type)) return undefined;
    const type = COMBINE_TYPES[builtin.type];
    const op = COMBINE_OPS[builtin.op];
    if (type.bytes !== options.combine?.elementBytes || (type.float && (builtin.op === 'band' || builtin.op === 'bor' || builtin.op === 'bxor'))) return undefined;
    if (this.combineInC === undefined) {
      // one step, one combine of nothing: a binding without combine operations throws
      try {
        const h = (this.mpi.schedCreate as NonNullable<MpiBinding['schedCreate']>)(Int32Array.of(1, 1, 1, 3, 0, 1, 0, 0), [], new Int32Array(8));
        this.mpi.schedFree?.(h);
        this.combineInC = true;
      } catch {
        this.combineInC = false;
      }
    }
    return this.combineInC ? { op, type: type.code } : undefined;
  }

  /** Whether the binding runs combine operations (nativeCombiner's probe; undefined: not probed yet). */
  private combineInC: boolean | undefined;

  /**
   * Whether the binding runs steps of streams (probed once: one step of one empty stream, which
   * a binding built before streams refuses as trailing code).
   */
  private streamsInC(): boolean {
    if (this.streamsProbed === undefined) {
      try {
        const h = (this.mpi.schedCreate as NonNullable<MpiBinding['schedCreate']>)(Int32Array.of(1, -1, 0, 1, 0), [], new Int32Array(8));
        this.mpi.schedFree?.(h);
        this.streamsProbed = true;
      } catch {
        this.streamsProbed = false;
      }
    }
    return this.streamsProbed;
  }

  /** streamsInC's probe (undefined: not probed yet). */
  private streamsProbed: boolean | undefined;

  /** Advances a schedule: 1 done, 0 running, -1 failed (NativeRun). */
  advanceSchedule(handle: number, spinNs: number, tagShift: number): number {
    const r = this.runFast !== undefined ? this.runFast(handle, spinNs, tagShift) : (this.mpi.schedRun as NonNullable<MpiBinding['schedRun']>)(handle, spinNs, tagShift);
    if (r < -1) throw new CommunicationError(`MPI transport: ${r === -2 ? 'not a live schedule' : 'the schedule failed earlier'}`, { rank: this.worldRank });
    return r;
  }

  /** The fast path's schedRun (V8 API), when it loaded and has it. */
  private runFast: ((handle: number, spinNs: number, tagShift: number) => number) | undefined;

  /** The binding's schedRunOnce (a one-shot schedule made, run and freed in one call). */
  runOnce(code: Int32Array, buffers: readonly Uint8Array[], info: Int32Array, tagShift: number): number {
    return (this.mpi.schedRunOnce as NonNullable<MpiBinding['schedRunOnce']>)(code, buffers, info, this.recvSpinNs, tagShift);
  }

  /** Frees the C side of `run` once it is collected. */
  keepUntilCollected(run: object, handle: number): void {
    scheduleRegistry.register(run, { mpi: this.mpi, handle });
  }

  /** A run left running: the progress loop advances it until it settles. */
  watchRun(run: NativeRun): void {
    this.running.add(run);
    this.schedule();
  }

  get spinNs(): number {
    return this.recvSpinNs;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Requests still pending (sends not yet completed, receives not yet matched). */
  get pending(): number {
    let q = 0;
    for (const c of this.queued) q += c.queue.length;
    return this.pendingCount + q;
  }

  /** Sends of this rank not yet completed (what `drain` waits for). */
  get sendsPending(): number {
    return this.pendingSends;
  }

  /**
   * Resolves once every send of this rank has completed (before MPI_Finalize: its data must be
   * delivered). Receives still pending then are the program's own business (no message will
   * come for them); they are not waited for.
   */
  async drain(): Promise<void> {
    while (this.pendingSends > 0 || this.running.size > 0) await new Promise<void>((r) => setImmediate(r));
  }

  /**
   * Before MPI_Finalize (after `drain`): cancels the receives still pending (they reject with a
   * CommunicationError) and stops the progress loop; the endpoint is unusable afterwards.
   */
  close(): void {
    const e = new CommunicationError('MPI transport: finalized with this receive pending', { rank: this.worldRank });
    for (let s = 0; s < this.entries.length; s++) {
      const entry = this.entries[s];
      if (entry === undefined) continue;
      this.entries[s] = undefined;
      this.mpi.cancel(s);
      entry.req.reject(e);
    }
    this.pendingCount = 0;
    this.pendingSends = 0;
    for (const c of this.queued) for (const q of c.queue.splice(0)) q.req.reject(e);
    this.queued.clear();
    for (const run of this.running) run.abandon(new CommunicationError('MPI transport: finalized with a schedule running', { rank: this.worldRank }));
    this.running.clear();
    this.closed = true;
  }

  // ---------- progress ----------

  private track(slot: number, p: Pending): void {
    this.entries[slot] = p;
    this.pendingCount++;
    if (p.kind === 'send') this.pendingSends++;
    this.schedule();
  }

  /** Makes sure the progress loop runs (it stops when nothing is pending). */
  private schedule(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    setImmediate(this.pollBound);
  }

  private readonly pollBound = (): void => this.poll();

  private poll(): void {
    this.polling = false;
    if (this.closed) return;
    let progress = false;
    if (this.pendingCount > 0) {
      if (this.out.length < 5 * this.pendingCount) this.out = new Int32Array(5 * Math.max(64, 2 * this.pendingCount));
      let n: number;
      try {
        // With nothing to probe, the poll waits in MPI_Testsome for a bounded time (as a blocking
        // MPI_Waitsome would, but bounded): a reply microseconds away skips the loop turns.
        n = this.mpi.testsome(this.out, this.queued.size === 0 ? this.recvSpinNs : 0);
      } catch (e) {
        this.failAll(this.typed(e));
        return;
      }
      for (let i = 0; i < n; i++) {
        const slot = this.out[5 * i];
        const entry = this.entries[slot];
        this.entries[slot] = undefined;
        this.pendingCount--;
        if (entry?.kind === 'send') this.pendingSends--;
        if (entry !== undefined) this.complete(entry, this.out, 5 * i);
      }
      if (n > 0) progress = true;
    }
    for (const c of [...this.queued]) if (this.serveQueue(c)) progress = true;
    for (const run of this.running) {
      if (run.advance(this.pendingCount === 0 && this.queued.size === 0 && this.running.size === 1 ? this.recvSpinNs : 0)) {
        this.running.delete(run);
        progress = true;
      }
    }
    if (this.pendingCount === 0 && this.queued.size === 0 && this.running.size === 0) {
      this.emptyPolls = 0;
      return;
    }
    if (progress) this.emptyPolls = 0;
    else if (++this.emptyPolls % POLLS_BEFORE_YIELD === 0) this.mpi.yieldCpu();
    this.schedule();
  }

  /** Posts the queued receives of `c` that no earlier queued one could match first; probes allocs. Returns whether any moved. */
  private serveQueue(c: Context): boolean {
    let moved = false;
    for (let i = 0; i < c.queue.length; ) {
      const q = c.queue[i];
      let blocked = false;
      for (let j = 0; j < i && !blocked; j++) if (overlaps(c.queue[j], q.source, q.tag)) blocked = true;
      if (blocked) {
        i++;
        continue;
      }
      if (q.kind === 'recv') {
        c.queue.splice(i, 1);
        this.startRecv(c, q.source, q.tag, q.into, q.req, false);
        moved = true;
        continue;
      }
      let id: number;
      try {
        id = this.mpi.improbe(c.handle, this.peer(c, q.source), this.mpiTag(c, q.tag), this.probeOut);
      } catch (e) {
        c.queue.splice(i, 1);
        q.req.reject(this.typed(e));
        moved = true;
        continue;
      }
      if (id < 0) {
        i++;
        continue;
      }
      c.queue.splice(i, 1);
      moved = true;
      const bytes = this.probeOut[2];
      const over = bytes > q.maxBytes;
      const data = new Uint8Array(bytes);
      let slot: number;
      try {
        slot = this.mpi.imrecv(id, data);
      } catch (e) {
        q.req.reject(this.typed(e));
        continue;
      }
      this.track(slot, {
        kind: over ? 'drop' : 'alloc',
        ctx: c,
        req: q.req as OpRequest<unknown>,
        buf: data,
        capacity: q.maxBytes,
        bytes,
      });
    }
    if (c.queue.length === 0) this.queued.delete(c);
    return moved;
  }

  /** Settles a completed request from its status (out[at..at+5]: slot, source, tag, bytes, error class). */
  private complete(p: Pending, out: Int32Array, at: number): void {
    const err = out[at + 4];
    if (err !== 0) {
      p.req.reject(this.mpiFailure(p.kind === 'send' ? 'send' : 'recv', p.capacity, err));
      return;
    }
    if (p.kind === 'send' || p.kind === 'self') {
      p.req.resolve(undefined);
      return;
    }
    const c = p.ctx;
    const source = c.worldOf === null ? out[at + 1] : c.worldOf[out[at + 1]];
    const tag = out[at + 2] + c.tagBase;
    const bytes = out[at + 3];
    if (p.kind === 'drop') {
      p.req.reject(
        new TruncationError(`message of ${p.bytes ?? bytes} bytes exceeds maxBytes ${p.capacity}`, p.bytes ?? bytes, p.capacity, { rank: this.worldRank }),
      );
    } else if (p.kind === 'alloc') {
      p.req.resolve({ source, tag, bytes, data: p.buf as Uint8Array } satisfies Received);
    } else {
      p.req.resolve({ source, tag, bytes } satisfies Status);
    }
  }

  /** The typed error of a send or receive (of `capacity` bytes) that failed with MPI error class `errClass`. */
  mpiFailure(kind: 'send' | 'recv', capacity: number, errClass: number): Error {
    if (errClass === this.mpi.ERR_TRUNCATE) {
      return new TruncationError(`message truncated: longer than the receive buffer of ${capacity} bytes`, -1, capacity, {
        rank: this.worldRank,
      });
    }
    return new CommunicationError(`MPI transport: a ${kind === 'send' ? 'send' : 'receive'} failed with MPI error class ${errClass}`, {
      rank: this.worldRank,
    });
  }

  private failAll(e: Error): void {
    for (let s = 0; s < this.entries.length; s++) {
      const entry = this.entries[s];
      if (entry !== undefined) {
        this.entries[s] = undefined;
        this.pendingCount--;
        if (entry.kind === 'send') this.pendingSends--;
        entry.req.reject(e);
      }
    }
    for (const c of this.queued) for (const q of c.queue.splice(0)) q.req.reject(e);
    this.queued.clear();
  }
}

/** Frees a schedule's C side (its persistent requests and buffer references) once it is collected. */
const scheduleRegistry = new FinalizationRegistry<{ mpi: MpiBinding; handle: number }>(({ mpi, handle }) => {
  try {
    mpi.schedFree?.(handle);
  } catch {
    // MPI finalized meanwhile: nothing left to free
  }
});

/** One schedule made in C (MpiEndpoint.bindSchedule) and its current run. */
class NativeRun implements EndpointSchedule {
  private req: OpRequest<void> | undefined;
  private failedWith: Error | undefined;

  constructor(
    private readonly ep: MpiEndpoint,
    private readonly handle: number,
    private readonly info: Int32Array,
    private readonly ops: readonly ScheduleOpInfo[],
    private readonly options: ScheduleOptions,
    private readonly rank: number,
  ) {}

  private shift = 0;

  start(tagShift: number): OpRequest<void> {
    if (this.failedWith !== undefined) return OpRequest.failed(this.failedWith);
    if (this.req !== undefined) {
      return OpRequest.failed(new CommunicationError('MPI transport: a schedule was started again before its run completed', { rank: this.ep.worldRank }));
    }
    if (this.ep.isClosed) return OpRequest.failed(new CommunicationError('MPI transport: used after MPI_Finalize', { rank: this.ep.worldRank }));
    let r: number;
    try {
      this.shift = tagShift;
      r = this.ep.advanceSchedule(this.handle, this.ep.spinNs, tagShift);
    } catch (e) {
      return OpRequest.failed(e instanceof Error ? e : new Error(String(e)));
    }
    if (r === 1) return DONE;
    if (r < 0) return OpRequest.failed(this.failure());
    const req = new OpRequest<void>();
    this.req = req;
    this.ep.watchRun(this);
    return req;
  }

  /** Continues a run the C side started and left running (OnceRun): settles as start()'s request. */
  resume(tagShift: number): OpRequest<void> {
    const req = new OpRequest<void>();
    this.shift = tagShift;
    this.req = req;
    this.ep.watchRun(this);
    return req;
  }

  /** The whole run in this thread (C blocks in MPI_Waitsome under the watchdog); throws its failure. */
  startBlocking(tagShift: number): void {
    if (this.failedWith !== undefined) throw this.failedWith;
    if (this.req !== undefined) throw new CommunicationError('MPI transport: a schedule was started again before its run completed', { rank: this.ep.worldRank });
    if (this.ep.isClosed) throw new CommunicationError('MPI transport: used after MPI_Finalize', { rank: this.ep.worldRank });
    this.shift = tagShift;
    if (this.ep.advanceSchedule(this.handle, -1, tagShift) !== 1) throw this.failure();
  }

  /** Called by the progress loop: advances the run; returns whether it settled. */
  advance(spinNs: number): boolean {
    const req = this.req;
    if (req === undefined) return true;
    let r: number;
    try {
      r = this.ep.advanceSchedule(this.handle, spinNs, this.shift);
    } catch (e) {
      this.req = undefined;
      req.reject(e instanceof Error ? e : new Error(String(e)));
      return true;
    }
    if (r === 0) return false;
    this.req = undefined;
    if (r === 1) req.resolve(undefined);
    else req.reject(this.failure());
    return true;
  }

  abandon(e: Error): void {
    const req = this.req;
    this.req = undefined;
    this.failedWith = e;
    req?.reject(e);
  }

  waiting(): ScheduleWait | undefined {
    if (this.req === undefined) return undefined;
    // the first send or receive of the step the run is in (info[1], written by the C side; in
    // a step of streams, the first of its operations outstanding)
    for (let o = Math.max(0, this.info[1]); o < this.ops.length; o++) {
      const op = this.ops[o];
      if (op.kind === 'send' || op.kind === 'recv') return { kind: op.kind, peer: op.world, tag: shiftedTag(op.tag, this.shift) };
    }
    return undefined;
  }

  /** The error of the failure the C side recorded in `info`. */
  failure(): Error {
    const [, o, , , errClass, bytes] = this.info;
    const op = this.ops[o];
    let e: Error;
    const recvError = this.options.recvError;
    if (op.kind === 'recv' && errClass === 0) {
      const expected = this.expected(o);
      e =
        recvError !== undefined
          ? recvError(op.peer, op.tag, expected, bytes, undefined)
          : new CommunicationError(
              `rank ${this.rank}: schedule step ${op.step} op ${op.index}: receive from rank ${op.peer} tag ${op.tag} got ${bytes} bytes, expected ${expected}`,
              { rank: this.ep.worldRank },
            );
    } else {
      const base = this.ep.mpiFailure(op.kind === 'send' ? 'send' : 'recv', this.expected(o), errClass);
      e = op.kind === 'recv' && base instanceof TruncationError && recvError !== undefined ? recvError(op.peer, op.tag, this.expected(o), undefined, base) : base;
    }
    // a failed run that left requests outstanding leaves the schedule unusable (info[6])
    if (this.info[6] !== 0) this.failedWith = e;
    return e;
  }

  private expected(o: number): number {
    return this.ops[o].bytes;
  }
}

/** What the endpoint keeps of each operation of a schedule, for errors and timeouts. */
interface ScheduleOpInfo {
  readonly kind: 'send' | 'recv' | 'copy' | 'combine';
  /** The schedule's (communicator) peer and tag. */
  readonly peer: number;
  readonly tag: number;
  /** The peer's world rank. */
  readonly world: number;
  /** Bytes of its message. */
  readonly bytes: number;
  /** Its step and its index in the step (error messages, as the portable executor's). */
  readonly step: number;
  readonly index: number;
}

const DONE: OpRequest<void> = OpRequest.done(undefined);

/**
 * A one-shot schedule (ScheduleOptions.once): each start() makes, runs and frees it in one
 * binding call (schedRunOnce) when it completes within the spin; one that does not is kept
 * by the C side and continues as a NativeRun.
 */
class OnceRun implements EndpointSchedule {
  private kept: NativeRun | undefined;

  constructor(
    private readonly ep: MpiEndpoint,
    private readonly code: Int32Array,
    private readonly buffers: readonly Uint8Array[],
    private readonly info: Int32Array,
    private readonly ops: readonly ScheduleOpInfo[],
    private readonly options: ScheduleOptions,
    private readonly rank: number,
  ) {}

  start(tagShift: number): OpRequest<void> {
    if (this.kept !== undefined) return this.kept.start(tagShift);
    if (this.ep.isClosed) return OpRequest.failed(new CommunicationError('MPI transport: used after MPI_Finalize', { rank: this.ep.worldRank }));
    let r: number;
    try {
      r = this.ep.runOnce(this.code, this.buffers, this.info, tagShift);
    } catch (e) {
      return OpRequest.failed(e instanceof Error ? e : new Error(String(e)));
    }
    if (r === 1) return DONE;
    const run = new NativeRun(this.ep, r === 0 ? this.info[7] : -1, this.info, this.ops, this.options, this.rank);
    if (r < 0) return OpRequest.failed(run.failure());
    this.ep.keepUntilCollected(run, this.info[7]);
    this.kept = run;
    return run.resume(tagShift);
  }

  waiting(): ScheduleWait | undefined {
    return this.kept?.waiting();
  }
}
