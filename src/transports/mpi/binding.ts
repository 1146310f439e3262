/**
 * The native MPI binding (native/vcoll_mpi.c, built by node-gyp against the MPI library that
 * `mpicc` belongs to): its typed interface and its loading. The binding is an optional part of
 * vcoll: nothing loads it until an MPI transport is asked for, and when it is not built the
 * error says how to build it.
 */

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnavailableError } from '../../errors.js';

/** Typed arrays the binding reads or writes (their bytes). */
export type Bytes = ArrayBufferView;
/** One typed array, or segments sent / filled back to back as one message. */
export type NativeBuffer = Bytes | readonly Bytes[];

/** What MPI_Init_thread told. */
export interface MpiInitInfo {
  readonly rank: number;
  readonly size: number;
  /** MPI_THREAD_SINGLE (0) … MPI_THREAD_MULTIPLE (3), as the library numbers them. */
  readonly threadLevel: number;
  /** MPI_TAG_UB of MPI_COMM_WORLD. */
  readonly tagUb: number;
  /** MPI_Get_library_version. */
  readonly library: string;
  /** MPI_Get_processor_name. */
  readonly host: string;
}

/** Reduction operation codes of `allreduce` (the C side's op_of). */
export const MPI_OPS = { sum: 0, prod: 1, max: 2, min: 3, band: 4, bor: 5, bxor: 6 } as const;
/** Element type codes of `allreduce` (the C side's type_of). */
export const MPI_TYPES = { f64: 0, f32: 1, i32: 2, u32: 3, i16: 4, u16: 5, i8: 6, u8: 7, i64: 8, u64: 9 } as const;

/**
 * Operator codes of a schedule's combine operations (schedCreate's encoding, op kind 3;
 * native/vcoll_mpi_internal.h VCOLL_COMBINE_*): the built-ins of collectives/basic/ops.ts.
 */
export const COMBINE_OPS: Readonly<Record<string, number>> = { sum: 0, prod: 1, min: 2, max: 3, band: 4, bor: 5, bxor: 6 };
/**
 * Element type codes of a schedule's combine operations (as COMBINE_OPS), by typed array name,
 * with each type's element size and whether it is floating-point (no bitwise operators).
 */
export const COMBINE_TYPES: Readonly<Record<string, { readonly code: number; readonly bytes: number; readonly float: boolean }>> = {
  Int8Array: { code: 0, bytes: 1, float: false },
  Uint8Array: { code: 1, bytes: 1, float: false },
  Uint8ClampedArray: { code: 2, bytes: 1, float: false },
  Int16Array: { code: 3, bytes: 2, float: false },
  Uint16Array: { code: 4, bytes: 2, float: false },
  Int32Array: { code: 5, bytes: 4, float: false },
  Uint32Array: { code: 6, bytes: 4, float: false },
  Float32Array: { code: 7, bytes: 4, float: true },
  Float64Array: { code: 8, bytes: 8, float: true },
  BigInt64Array: { code: 9, bytes: 8, float: false },
  BigUint64Array: { code: 10, bytes: 8, float: false },
};

/**
 * The binding's functions: one MPI call each, synchronous. Communicators are handles (0:
 * MPI_COMM_WORLD), pending requests slots. Failures throw an Error with `mpiClass` and
 * `mpiClassName` (see `mpiErrorClass`).
 */
export interface MpiBinding {
  /** MPI_ERR_TRUNCATE of the library built against (the class numbers differ between libraries). */
  readonly ERR_TRUNCATE: number;
  init(): MpiInitInfo;
  finalize(): void;
  abort(code: number): never;
  /**
   * The watchdog of calls that wait inside MPI (blocking point-to-point, the library's
   * collectives, communicator construction): ms > 0 starts it, 0 stops it; a call inside MPI
   * for ms to 1.25 ms prints `vcoll: rank R failed: TimeoutError: …` and ends the process.
   * Absent from bindings built before it.
   */
  watchdog?(ms: number, rank: number): void;
  wtime(): number;
  /** sched_yield(): leaves the core to another process (oversubscribed runs). */
  yieldCpu(): void;
  commDup(comm: number): number;
  /** MPI_Comm_create_group over `ranks` of `parent` (in that order); collective over them only. */
  commCreateGroup(parent: number, ranks: Int32Array, tag: number): number;
  /** MPI_Comm_split (color < 0: MPI_UNDEFINED); -1 for MPI_COMM_NULL. */
  commSplit(comm: number, color: number, key: number): number;
  commSplitShared(comm: number): number;
  intercommCreate(local: number, localLeader: number, peer: number, remoteLeader: number, tag: number): number;
  intercommMerge(comm: number, high: number): number;
  commFree(comm: number): void;
  /** [rank, size, remote size (0: an intra-communicator)]. */
  commInfo(comm: number): [number, number, number];
  /** MPI_Isend then one MPI_Test: the request's slot, or -1 when it completed at once. */
  isend(comm: number, dest: number, tag: number, data: NativeBuffer): number;
  /**
   * MPI_Irecv (source/tag < 0: the wildcards): the request's slot. With `spinNs` > 0 it first
   * repeats MPI_Test for up to that long and returns -1 when the receive completed (`out` = -1,
   * source, tag, bytes, error class).
   */
  irecv(comm: number, source: number, tag: number, into: NativeBuffer, spinNs?: number, out?: Int32Array): number;
  /**
   * MPI_Test on `slot`, repeated for up to `spinNs` ns: 1 when it completed (out = slot, source,
   * tag, bytes, error class; the slot is free again), 0 when still pending.
   */
  test(slot: number, spinNs: number, out?: Int32Array): number;
  /**
   * Registers the status buffer (at least 5 ints) that `recvBlocking`, `irecv` with a spin and
   * `test` write when they are given none: one typed-array lookup less per call.
   */
  statusBuffer(out: Int32Array): void;
  /** The Error a call `what` failing with MPI error code `code` throws (mpiClass, mpiClassName). */
  errorOf(what: string, code: number): Error;
  /** MPI_Testsome over every pending request (repeated for up to `spinNs` ns until one completes): how many completed, 5 ints each in `out`. */
  testsome(out: Int32Array, spinNs?: number): number;
  /** Requests pending in the binding. */
  pending(): number;
  /** MPI_Cancel + MPI_Request_free of a pending request (frees its slot). */
  cancel(slot: number): void;
  /** MPI_Improbe: a message id (out = source, tag, bytes) or -1. */
  improbe(comm: number, source: number, tag: number, out: Int32Array): number;
  /** MPI_Imrecv of a message matched by `improbe`: the request's slot. */
  imrecv(message: number, into: NativeBuffer): number;
  /** MPI_Gatherv (byte counts, byte displacements); send null at the root: MPI_IN_PLACE. */
  gatherv(comm: number, send: Bytes | null, recv: Bytes | null, counts: Int32Array | null, displs: Int32Array | null, root: number): void;
  /** MPI_Scatterv (byte counts, byte displacements); recv null at the root: MPI_IN_PLACE. */
  scatterv(comm: number, send: Bytes | null, counts: Int32Array | null, displs: Int32Array | null, recv: Bytes | null, root: number): void;
  gather(comm: number, send: Bytes, recv: Bytes | null, root: number): void;
  scatter(comm: number, send: Bytes | null, recv: Bytes, root: number): void;
  /** MPI_Allreduce of `count` elements (send null: MPI_IN_PLACE). */
  allreduce(comm: number, send: Bytes | null, recv: Bytes, count: number, type: number, op: number): void;
  barrier(comm: number): void;
  allgather(comm: number, send: Bytes, recv: Bytes): void;
  allgatherv(comm: number, send: Bytes, recv: Bytes, counts: Int32Array, displs: Int32Array): void;
  /** MPI_Send: returns once `data` may be reused (the thread waits in MPI). */
  sendBlocking(comm: number, dest: number, tag: number, data: NativeBuffer): void;
  /**
   * MPI_Recv: returns once the message is in `into` (out, default the registered status buffer,
   * = -1, source, tag, bytes, error class).
   */
  recvBlocking(comm: number, source: number, tag: number, into: NativeBuffer, out?: Int32Array): void;
  /**
   * A schedule (src/comm/schedule.ts) made once in C, every send's and receive's address,
   * count and datatype resolved (native/vcoll_mpi_schedule.c): `code` encodes the steps (endpoint.ts
   * bindSchedule; combine operations with a built-in operator, COMBINE_OPS / COMBINE_TYPES, and
   * steps of concurrent streams run in C too), `buffers` are the buffers its ranges address (kept alive), `info` (7
   * Int32) receives a failure's step, op, peer, tag, error class (0: a receive of another
   * length), bytes received and whether the schedule is unusable now. Returns the handle.
   * Absent from bindings built before it.
   */
  schedCreate?(code: Int32Array, buffers: readonly Uint8Array[], info: Int32Array): number;
  /**
   * Starts the schedule if it is not running (its shiftable tags moved by tagShift), then
   * advances it: 1 done, 0 still running after spinning spinNs (< 0: blocks), -1 failed.
   */
  schedRun?(handle: number, spinNs: number, tagShift: number): number;
  schedFree?(handle: number): void;
  /**
   * A schedule made, run and freed in one call (a one-shot collective): 1 done, -1 failed (info
   * as schedCreate's); 0: still running after spinNs, kept: info[7] is its handle (schedRun
   * advances it, schedFree frees it). Absent from bindings built before it.
   */
  schedRunOnce?(code: Int32Array, buffers: readonly Uint8Array[], info: Int32Array, spinNs: number, tagShift: number): number;
  /** A ping-pong loop written in C (MPI_Send/MPI_Recv): seconds per round trip. */
  pingpongC(comm: number, peer: number, bytes: number, iterations: number, first: number): number;
  /** `iterations` MPI_Gatherv back to back in C (byte counts and displacements; root only: recv, counts, displs): seconds per call. */
  gathervLoopC?(comm: number, send: Bytes, recv: Bytes | null, counts: Int32Array | null, displs: Int32Array | null, root: number, iterations: number): number;
  /** The fast path module, linked to this binding (set by loadMpiBinding; see MpiFastPath). */
  fast?: MpiFastPath;
  /** Why `fast` is undefined (not built, does not load, VCOLL_MPI_FAST=0). */
  fastMissing?: string;
  /** The registered status buffer (5 ints; see statusBuffer), set by loadMpiBinding. */
  status: Int32Array;
}

/**
 * The fast path of the blocking point-to-point (native/vcoll_mpi_fast.cc: V8's API, not N-API,
 * about half the call overhead): one Uint8Array per message, communicator handles of the main
 * binding. Optional: `loadMpiBinding().fast` is undefined when it is not built, does not load
 * (built for another Node), or VCOLL_MPI_FAST=0.
 */
export interface MpiFastPath {
  link(bindingPath: string): void;
  statusBuffer(out: Int32Array): void;
  /** MPI_Send: 0, or the MPI error code (turn it into an Error with the binding's errorOf). */
  sendBlocking(comm: number, dest: number, tag: number, data: Uint8Array): number;
  /** MPI_Recv: the status buffer = -1, source, tag, bytes, error class. */
  recvBlocking(comm: number, source: number, tag: number, into: Uint8Array): void;
  /** The binding's schedRun: 1 done, 0 running, -1 failed, -2 not a live handle, -3 failed earlier. Absent from older builds. */
  schedRun?(handle: number, spinNs: number, tagShift: number): number;
}

/** Error classes the transport maps to typed errors (MPI's standard numbering). */
export interface MpiFailure extends Error {
  readonly mpiClass: number;
  readonly mpiClassName: string;
}

export function isMpiFailure(e: unknown): e is MpiFailure {
  return e instanceof Error && typeof (e as Partial<MpiFailure>).mpiClassName === 'string';
}

/** Where node-gyp puts the binding (the same from src/ and from dist/: both sit 3 levels down). */
export const DEFAULT_BINDING_PATH = fileURLToPath(new URL('../../../native/build/Release/vcoll_mpi.node', import.meta.url));

/** How to build the binding, for error messages and the README. */
export const BUILD_HINT =
  'install an MPI library (Debian: apt-get install openmpi-bin libopenmpi-dev) and build the binding with `npm run build:mpi` ' +
  'in a vcoll source checkout (set VCOLL_MPICC to the mpicc of the MPI library to build against, e.g. mpicc.mpich); ' +
  'an installed package (which ships no native code) loads the built vcoll_mpi.node from VCOLL_MPI_BINDING';

let loaded: MpiBinding | undefined;

/**
 * The binding, loaded once: from VCOLL_MPI_BINDING when set, else from native/build. Throws an
 * UnavailableError('mpi-binding') saying how to build it when it is not there or cannot load.
 */
export function loadMpiBinding(): MpiBinding {
  if (loaded !== undefined) return loaded;
  const path = process.env.VCOLL_MPI_BINDING ?? DEFAULT_BINDING_PATH;
  if (!existsSync(path)) {
    throw new UnavailableError('mpi-binding', `vcoll's MPI binding is not built (no ${path}): ${BUILD_HINT}`);
  }
  const require = createRequire(import.meta.url);
  let binding: MpiBinding;
  try {
    binding = require(path) as MpiBinding;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new UnavailableError('mpi-binding', `vcoll's MPI binding at ${path} does not load (${why}): rebuild it: ${BUILD_HINT}`, { cause: e });
  }
  binding.status = new Int32Array(5);
  binding.statusBuffer(binding.status);
  const fastPath = join(dirname(path), 'vcoll_mpi_fast.node');
  if (process.env.VCOLL_MPI_FAST === '0') {
    binding.fastMissing = 'VCOLL_MPI_FAST=0';
  } else if (!existsSync(fastPath)) {
    binding.fastMissing = `not built (no ${fastPath})`;
  } else {
    try {
      const fast = require(fastPath) as MpiFastPath;
      // dlopen(RTLD_NOLOAD) must name the file Node loaded: the resolved absolute path.
      fast.link(require.resolve(path));
      fast.statusBuffer(binding.status);
      binding.fast = fast;
    } catch (e) {
      // Built for another Node (V8's API is not ABI-stable): the N-API functions serve instead.
      binding.fastMissing = `does not load (${e instanceof Error ? e.message : String(e)}): rebuild with npm run build:mpi`;
    }
  }
  loaded = binding;
  return loaded;
}

/** Whether the binding is built and loads (never throws). */
export function mpiBindingAvailable(): boolean {
  try {
    loadMpiBinding();
    return true;
  } catch {
    return false;
  }
}
