/**
 * What a transport provides to the generic communicators of `comm/` (world and
 * sub-communicators, intercommunicators): point-to-point messaging between *world* ranks
 * inside a communication *context*. A message sent in context c is only ever matched by a
 * receive posted in context c (MPI's context ids: each communicator has its own, so traffic
 * of different communicators never mixes, whatever the tags). Within one context the usual
 * MPI rules hold: ANY_SOURCE / ANY_TAG wildcards, non-overtaking between a pair of ranks.
 */
import type { Received, Status } from './communicator.js';
import type { NativeCollectives, NativeInterCollectives } from './native.js';
import type { Request } from './request.js';
import type { EndpointSchedule, RankSchedule, ScheduleOptions } from './schedule.js';
import type { MessageBuffer } from './segments.js';

/** The simulator's virtual clock, for measurements (absent on real transports). */
export interface VirtualClock {
  /** This rank's current virtual time. */
  now(): number;
  /**
   * An ideal, zero-cost barrier over every rank of the run: resolves once all ranks have
   * called it, with every rank's clock set to the latest of them. For timing only.
   */
  sync(): Promise<void>;
  /**
   * Advances this rank's clock as `count` processor copies of `bytes` bytes each, one after
   * the other, would (Communicator.copy: the model's copy time each, each traced), moving
   * nothing: for copies an algorithm makes whose bytes the simulation already holds in place
   * (basic/bcast.ts: the pieces out of the padded buffer). O(1) when they cost nothing and
   * nothing is traced.
   */
  chargeCopies(bytes: number, count: number): void;
}

export interface Endpoint {
  readonly worldRank: number;
  readonly worldSize: number;
  /**
   * Starts sending to world rank `dest` in context `ctx`; settles when `data` may be reused.
   * Transports return their own `OpRequest`s (comm/request.ts) so waitAll needs no promise.
   */
  isend(ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void>;
  /**
   * Starts receiving from world rank `source` (or ANY_SOURCE) in context `ctx`; the status
   * names the *world* rank of the sender. Buffers may be vectored (comm/segments.ts).
   */
  irecv(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status>;
  /**
   * Optional: an `irecv` whose caller waits for it at once (a blocking `recv`). The transport
   * may look for the message for a short, bounded time before it returns (the progress an
   * MPI_Recv makes inside the call), so that a reply a few hundred nanoseconds away completes
   * without a trip through the event loop. Same arguments, checks and result as `irecv`.
   */
  irecvAwaited?(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status>;
  /**
   * Optional: an `isend` whose caller waits for it at once (a blocking `send`): the transport
   * may drive it for a short, bounded time before it returns. Same arguments, checks and result.
   */
  isendAwaited?(ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void>;
  /**
   * Starts receiving a message of unknown size (Communicator.irecvAlloc): matched like `irecv`,
   * into a buffer the transport allocates with the message's size; longer than `maxBytes`
   * (a number ≥ 0 or Infinity, validated by the caller): TruncationError.
   */
  irecvAlloc(ctx: number, source: number, tag: number, maxBytes: number): Request<Received>;
  /** A local copy charged γ per unit on the simulator. */
  copy(dst: Uint8Array, src: Uint8Array): void;
  /** The node (shared-memory machine) a world rank runs on. */
  nodeOf(worldRank: number): number;
  /** Present on the simulator only. */
  readonly clock?: VirtualClock;
  /**
   * Optional: called on every member of a new communicator (context id `ctx`, endpoint contexts
   * 2·ctx and 2·ctx + 1) once the members agreed on it, with the members' world ranks in rank
   * order (null: the world), before any traffic in it; an intercommunicator's context lists both
   * groups, ascending. For transports whose contexts are objects of their own (MPI
   * communicators); the call may block until every member has made it.
   */
  openContext?(ctx: number, worldRanks: readonly number[] | null): void;
  /** Optional: the transport's own collectives over communicator context `ctx` (the MPI library's). */
  nativeCollectives?(ctx: number): NativeCollectives;
  /**
   * Optional: the transport's own collectives over the intercommunicator of context `ctx`
   * whose local group has context `localCtx`; `remoteLeader` is the world rank of the remote
   * group's rank 0. Collective over both groups the first time.
   */
  nativeInterCollectives?(ctx: number, localCtx: number, remoteLeader: number): NativeInterCollectives;
  /**
   * Optional: the transport's native executor of schedules (comm/schedule.ts). `schedule` is
   * one rank's, of a communicator with context id `ctx` whose rank i is world rank worldOf[i]
   * (null: the identity); an operation with tag t travels in endpoint context
   * endpointCtx(ctx, t) (comm/agree.ts), its peer is worldOf[peer]. Validated by the caller
   * (schedule/run.ts bindSchedule: buffers of the schedule's sizes, ranges within them, peers
   * and windows in range). Runs exactly as the portable executor (schedule/run.ts) does — same
   * order, windows, matching and results; copies are charged as `copy` — without a request or
   * a promise per operation. Receive length errors go through `options.recvError` with the
   * schedule's (communicator) peer. Returns undefined when this executor cannot run the
   * schedule (the caller runs the portable executor instead).
   */
  bindSchedule?(
    ctx: number,
    worldOf: Int32Array | null,
    schedule: RankSchedule,
    buffers: readonly Uint8Array[],
    options: ScheduleOptions,
  ): EndpointSchedule | undefined;
}
