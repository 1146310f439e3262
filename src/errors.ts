/**
 * Typed errors of vcoll. Every error has a stable `code`; argument errors name the
 * offending `field`. Errors raised on a rank of a running collective also carry that `rank`.
 */

export type VcollErrorCode = 'INVALID_ARGUMENT' | 'TOO_LARGE' | 'INTERNAL' | 'COMMUNICATION' | 'UNAVAILABLE';

export class VcollError extends Error {
  readonly code: VcollErrorCode;
  readonly rank: number | undefined;

  constructor(code: VcollErrorCode, message: string, options?: { rank?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VcollError';
    this.code = code;
    this.rank = options?.rank;
  }
}

/** A caller passed a value that cannot be used; `field` names the argument (e.g. `sizes[3]`). */
export class InvalidArgumentError extends VcollError {
  readonly field: string;
  /** The message without the "invalid <field>: " prefix (to re-raise it under another field). */
  readonly detail: string;

  constructor(field: string, message: string, options?: { rank?: number; cause?: unknown }) {
    super('INVALID_ARGUMENT', `invalid ${field}: ${message}`, options);
    this.name = 'InvalidArgumentError';
    this.field = field;
    this.detail = message;
  }
}

/** A request exceeds what an exact algorithm can do in reasonable time or memory. */
export class TooLargeError extends VcollError {
  readonly field: string;

  constructor(field: string, message: string) {
    super('TOO_LARGE', `${field} too large: ${message}`);
    this.name = 'TooLargeError';
    this.field = field;
  }
}

/** A communication failed: a peer rank failed, a message was truncated, or the run deadlocked. */
export class CommunicationError extends VcollError {
  constructor(message: string, options?: { rank?: number; cause?: unknown }) {
    super('COMMUNICATION', message, options);
    this.name = 'CommunicationError';
  }
}

/** A message longer than the receive buffer posted for it (MPI_ERR_TRUNCATE), raised on the receiving rank. */
export class TruncationError extends CommunicationError {
  /** Bytes of the message (-1 where the transport cannot tell: MPI reports only that it was longer). */
  readonly bytes: number;
  /** Bytes of the receive buffer. */
  readonly capacity: number;

  constructor(message: string, bytes: number, capacity: number, options?: { rank?: number; cause?: unknown }) {
    super(message, options);
    this.name = 'TruncationError';
    this.bytes = bytes;
    this.capacity = capacity;
  }
}

/** One rank's part in a deadlock: what it waited for, or that it had already finished. */
export interface DeadlockedRank {
  readonly rank: number;
  /** The rank had returned (or failed) before the deadlock: it waits for nothing. */
  readonly finished: boolean;
  /** Its pending operations, e.g. "recv from 3 tag 5 (context 2)", "send to 1 tag 5 (65536 bytes)". */
  readonly waitsFor: readonly string[];
}

/**
 * Every rank of a run waits for an operation that no other rank will ever complete (or has
 * finished): raised on each waiting rank with that rank's pending operations (`ranks` holds it
 * alone, `rank` is that rank), and by the run (`ranks` lists every rank, `rank` undefined).
 */
export class DeadlockError extends CommunicationError {
  readonly ranks: readonly DeadlockedRank[];

  constructor(message: string, ranks: readonly DeadlockedRank[], options?: { rank?: number; cause?: unknown }) {
    super(message, options);
    this.name = 'DeadlockError';
    this.ranks = ranks;
  }
}

/**
 * A point-to-point operation stayed pending longer than the per-operation timeout (`timeoutMs`
 * of runSim / runThreads / mpiWorld / runMpiRank; the MPI watchdog): raised on the waiting rank
 * (`rank`), naming the peer it waited for and the operation. Like MPI after an error, the
 * communicator is unusable afterwards (the operation may still match a message later).
 */
export class TimeoutError extends CommunicationError {
  /** The world rank waited for (-1: any source, MPI_ANY_SOURCE). */
  readonly peer: number;
  /** The pending operation, e.g. "recv from 2 tag 5 (context 1)". */
  readonly operation: string;
  /** The timeout it exceeded (ms). */
  readonly timeoutMs: number;

  constructor(message: string, peer: number, operation: string, timeoutMs: number, options?: { rank?: number; cause?: unknown }) {
    super(message, options);
    this.name = 'TimeoutError';
    this.peer = peer;
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * An optional part of vcoll is not there: the MPI binding was not built (or cannot load), or a
 * variant needs a transport the communicator does not run on (`mpi-native` outside MPI). The
 * message says how to get it.
 */
export class UnavailableError extends VcollError {
  /** What is missing, e.g. 'mpi-binding', 'mpi-transport'. */
  readonly what: string;

  constructor(what: string, message: string, options?: { rank?: number; cause?: unknown }) {
    super('UNAVAILABLE', message, options);
    this.name = 'UnavailableError';
    this.what = what;
  }
}
