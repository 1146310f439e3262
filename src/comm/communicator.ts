/**
 * The abstract communicator every collective is written against (MPI-like point-to-point).
 * Transports (the virtual-time simulator, worker threads, MPI) implement it; nothing in the
 * collectives knows which one runs it.
 *
 * Non-blocking operations return requests (comm/request.ts): `isend`/`irecv` start the
 * operation at once and return a thenable that settles when it has completed — await it or
 * pass several to `waitAll` (one promise for all of them); `send`/`recv` are the same
 * operations as promises. Matching
 * follows MPI: a receive matches the first pending message from `source` (or any source)
 * with `tag` (or any tag), and messages between one pair of ranks with one tag are never
 * reordered (non-overtaking). A message longer than the receive buffer is an error.
 *
 * Every communicator has its own communication context: traffic of two communicators never
 * mixes, whatever the tags (MPI's context ids). Tags are integers in [0, 2³¹ − 1]; user code
 * should keep its tags ≤ TAG_UB, since tags from COLLECTIVE_TAG on are reserved for vcoll's
 * collectives and communicator management. Those travel in a second endpoint context of the
 * communicator (context c uses endpoint contexts 2c for user tags and 2c + 1 for collective
 * tags, comm/agree.ts), so an ANY_TAG receive never takes a collective's message.
 */

import type { CommState, CommStateHolder } from './comm-state.js';
import type { VirtualClock } from './endpoint.js';
import type { NativeCollectives } from './native.js';
import { type Request, toPromise, waitAll } from './request.js';
import type { BoundSchedule, RankSchedule, ScheduleOptions } from './schedule.js';
import type { MessageData } from './segments.js';

export type { MessageBuffer, MessageData } from './segments.js';

export type { Request } from './request.js';

/** Wildcards for `irecv`. */
export const ANY_SOURCE = -1;
export const ANY_TAG = -1;
/** The `color` of `split` for a rank that joins no new communicator (MPI_UNDEFINED). */
export const UNDEFINED = -1;

/** What a completed receive got. */
export interface Status {
  readonly source: number;
  readonly tag: number;
  /** Bytes received (≤ the receive buffer's length). */
  readonly bytes: number;
}

/** What `irecvAlloc` got: the status and the message in a buffer of exactly its size. */
export interface Received extends Status {
  readonly data: Uint8Array;
}

export interface Communicator {
  readonly rank: number;
  readonly size: number;
  /**
   * Starts sending `data` to `dest`; the request settles when the send buffer may be reused.
   * `data` is any typed array or DataView (its bytes), or segments of them sent back to back
   * as one message (a vectored send, comm/segments.ts).
   */
  isend(dest: number, tag: number, data: MessageData): Request<void>;
  /**
   * Starts receiving into `into`; the request settles with the status once the data is there.
   * `into` may be vectored (segments filled in order; Status.bytes counts them all).
   */
  irecv(source: number, tag: number, into: MessageData): Request<Status>;
  /**
   * Starts receiving a message whose size the receiver does not know (MPI_Mprobe followed by
   * MPI_Mrecv into a buffer of the probed size, as one operation): the transport allocates a
   * buffer of exactly the matched message's size. Matching and ordering are those of `irecv`;
   * a message longer than `maxBytes` (default: no limit) fails with a TruncationError.
   */
  irecvAlloc(source: number, tag: number, maxBytes?: number): Request<Received>;
  send(dest: number, tag: number, data: MessageData): Promise<void>;
  recv(source: number, tag: number, into: MessageData): Promise<Status>;
  /** `irecvAlloc` as a promise. */
  recvAlloc(source: number, tag: number, maxBytes?: number): Promise<Received>;
  /** Waits for all requests (any PromiseLike too); resolves with their values in order, rejects as soon as one fails. */
  waitAll<T>(ops: readonly Request<T>[]): Promise<T[]>;
  /**
   * A local copy the algorithm makes (e.g. the root's own block into the receive buffer):
   * `dst.set(src)`, charged γ per unit by the simulator.
   */
  copy(dst: Uint8Array, src: Uint8Array): void;
  /** The node (shared-memory machine) `rank` runs on: locality for hierarchical algorithms. */
  nodeOf(rank: number): number;
  /** The simulator's virtual clock (absent on real transports). */
  readonly clock?: VirtualClock;
  /**
   * The collectives of the library the transport runs on (MPI's, on the MPI transport; absent
   * elsewhere): what the `mpi-native` variants call.
   */
  readonly native?: NativeCollectives;
  /**
   * MPI_Comm_split, collective over this communicator: ranks passing the same `color`
   * (an integer ≥ 0) form a new communicator, ordered by `key` (an int32) and then by their
   * rank here; `color` UNDEFINED resolves to null. A bad color or key on any rank makes the
   * call reject with an InvalidArgumentError on every rank (no rank hangs).
   */
  split(color: number, key: number): Promise<Communicator | null>;
  /** MPI_Comm_split_type(SHARED): the ranks on this rank's node, in rank order. */
  splitByNode(): Promise<Communicator>;
  /**
   * Present when the transport has a native executor of schedules (comm/schedule.ts): binds
   * this rank's `schedule` to `buffers` for it. The caller has validated both (use
   * schedule/run.ts `bindSchedule`, which falls back to the portable executor without it, or
   * when this returns undefined: the native executor cannot run that schedule).
   */
  readonly bindValidatedSchedule?: (schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions) => BoundSchedule | undefined;
}

/** A byte view of any typed array (no copy). */
export function bytesOf(view: ArrayBufferView): Uint8Array {
  return view instanceof Uint8Array ? view : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * What every communicator and intercommunicator shares: the blocking forms are the
 * non-blocking ones awaited, and waitAll fails as soon as one operation fails.
 */
export abstract class PointToPointBase implements CommStateHolder {
  /** Sequence numbers of the collectives on this communicator (comm/comm-state.ts). */
  commState: CommState | null = null;

  abstract isend(dest: number, tag: number, data: MessageData): Request<void>;
  abstract irecv(source: number, tag: number, into: MessageData): Request<Status>;
  abstract irecvAlloc(source: number, tag: number, maxBytes?: number): Request<Received>;

  send(dest: number, tag: number, data: MessageData): Promise<void> {
    return toPromise(this.isend(dest, tag, data));
  }

  recv(source: number, tag: number, into: MessageData): Promise<Status> {
    return toPromise(this.irecv(source, tag, into));
  }

  recvAlloc(source: number, tag: number, maxBytes?: number): Promise<Received> {
    return toPromise(this.irecvAlloc(source, tag, maxBytes));
  }

  waitAll<T>(ops: readonly Request<T>[]): Promise<T[]> {
    return waitAll(ops);
  }
}

/** What every transport's communicator shares (PointToPointBase). */
export abstract class BaseCommunicator extends PointToPointBase implements Communicator {
  abstract readonly rank: number;
  abstract readonly size: number;
  abstract copy(dst: Uint8Array, src: Uint8Array): void;
  abstract nodeOf(rank: number): number;
  abstract split(color: number, key: number): Promise<Communicator | null>;
  abstract splitByNode(): Promise<Communicator>;
}

/** Largest tag user point-to-point code should use; larger tags are reserved for collectives. */
export const TAG_UB = 2 ** 30 - 1;
/**
 * First tag reserved for vcoll's collectives (they use COLLECTIVE_TAG … COLLECTIVE_TAG + 2²⁰ − 17;
 * the last 16 tags of that range, from COLLECTIVE_TAG + 2²⁰ − 16, belong to communicator
 * management: split, intercommunicator creation and merge, see comm/agree.ts).
 */
export const COLLECTIVE_TAG = 2 ** 30;
