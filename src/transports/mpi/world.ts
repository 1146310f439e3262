/**
 * vcoll inside a program started by `mpirun -np N node app.js`: `mpiWorld()` initialises MPI
 * (MPI_Init_thread, once per process) and returns the world communicator over MPI_COMM_WORLD;
 * `runMpiRank(program)` runs a rank program on it and makes failures end the job: a rank whose
 * program throws (or whose process has an uncaught exception) prints
 * `vcoll: rank R failed: <message>` to stderr and calls MPI_Abort, so mpirun stops every rank
 * at once instead of leaving the others waiting for it. Programs that use `mpiWorld` directly
 * get the same for exceptions nobody catches.
 *
 * The watchdog (on by default): every point-to-point operation of the world communicator and of
 * the communicators made from it (collectives included) fails with a TimeoutError when it stays
 * pending longer than `timeoutMs` (default: VCOLL_MPI_TIMEOUT_MS, else DEFAULT_MPI_TIMEOUT_MS =
 * 60 s; 0 or Infinity: off), so a deadlock (a receive nobody sends, ranks disagreeing on a root)
 * or a stuck rank (a JS loop: its own timers cannot fire, but its peers' operations time out)
 * ends the job: the rank prints `vcoll: rank R failed: TimeoutError: … waits for <operation>`
 * and MPI_Abort ends every rank. Calls that wait inside MPI (mpiBlocking, the `mpi-native`
 * collectives, communicator construction) cannot be timed out from JS: the binding's watchdog
 * thread ends a process that stays inside one of them as long (same message, then _exit, which
 * makes mpirun end the job). MPI_Finalize itself is not watched; instead, before it, the ranks
 * meet in a finalize handshake (handshake.ts): a rank that does not reach MPI_Finalize within
 * 3 · `timeoutMs` of the others (stuck outside vcoll, or still running) is named by rank 0 (or,
 * when it is rank 0, by the others) in `vcoll: rank R did not reach MPI_Finalize within T ms (…) —
 * stuck or still running`, and MPI_Abort ends the job.
 *
 * A rank that calls process.exit (or returns without MPI_Finalize) prints
 * `vcoll: rank R exited with code C before MPI_Finalize`, which `runMpi` turns into an error
 * naming that rank.
 */

import { writeSync } from 'node:fs';
import type { Communicator } from '../../comm/communicator.js';
import { createWorldCommunicator } from '../../comm/group.js';
import { badTimeout, timeoutFromEnv } from '../../comm/timeout.js';
import { InvalidArgumentError, TimeoutError } from '../../errors.js';
import { loadMpiBinding, type MpiBinding, type MpiInitInfo } from './binding.js';
import { MpiEndpoint, type MpiEndpointOptions } from './endpoint.js';
import { FINALIZE_WAIT_FACTOR, finalizeHandshake, missingLine } from './handshake.js';

export interface MpiWorld {
  /** The world communicator (rank and size of MPI_COMM_WORLD). */
  readonly comm: Communicator;
  /** What MPI_Init_thread reported: rank, size, MPI_TAG_UB, the library's version, the host. */
  readonly info: MpiInitInfo;
  readonly endpoint: MpiEndpoint;
  /** The watchdog's per-operation timeout (ms; Infinity: off). */
  readonly timeoutMs: number;
  /** MPI_Wtime(). */
  wtime(): number;
  /**
   * Waits for this rank's pending operations, then (watchdog on) for every rank to reach this
   * point (the finalize handshake: a rank missing after 3 · `timeoutMs` is named and the job
   * aborted), then MPI_Finalize (collective: every rank calls it).
   */
  finalize(): Promise<void>;
  /** Prints `vcoll: rank R failed: <message>` and ends the whole job (MPI_Abort). */
  abort(message: string, code?: number): never;
}

/** The MPI watchdog's default per-operation timeout (ms). */
export const DEFAULT_MPI_TIMEOUT_MS = 60_000;

export interface MpiWorldOptions extends MpiEndpointOptions {
  /**
   * Per-operation timeout in ms, the watchdog (> 0; Infinity: off; default: the
   * VCOLL_MPI_TIMEOUT_MS environment variable, where 0 means off, else DEFAULT_MPI_TIMEOUT_MS).
   * An operation pending longer fails with a TimeoutError (under runMpiRank: the job ends).
   */
  readonly timeoutMs?: number;
}

let world: MpiWorld | undefined;

/** The node list of VCOLL_MPI_NODES ("0,0,1,1": virtual nodes for one machine), if set. */
function nodesFromEnv(size: number, rank: number): number[] | undefined {
  const s = process.env.VCOLL_MPI_NODES;
  if (s === undefined || s === '') return undefined;
  const nodes = s.split(',').map((x) => Number(x));
  if (nodes.length !== size || nodes.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new InvalidArgumentError('VCOLL_MPI_NODES', `must list ${size} node numbers >= 0 separated by commas, got "${s}"`, { rank });
  }
  return nodes;
}

/** Prints the failure line and aborts the job. */
function abortJob(mpi: MpiBinding, rank: number, message: string, code = 1): never {
  process.stderr.write(`vcoll: rank ${rank} failed: ${message}\n`);
  return mpi.abort(code);
}

/**
 * The world communicator of this MPI process (MPI is initialised on the first call). Throws an
 * UnavailableError when the binding is not built.
 */
export function mpiWorld(options: MpiWorldOptions = {}): MpiWorld {
  if (world !== undefined) return world;
  const timeoutMs = options.timeoutMs ?? timeoutFromEnv('VCOLL_MPI_TIMEOUT_MS') ?? DEFAULT_MPI_TIMEOUT_MS;
  const bad = badTimeout(timeoutMs);
  if (bad !== undefined) throw new InvalidArgumentError('timeoutMs', bad);
  const mpi = loadMpiBinding();
  const info = mpi.init();
  const endpoint = new MpiEndpoint(mpi, info, { nodes: options.nodes ?? nodesFromEnv(info.size, info.rank), recvSpinNs: options.recvSpinNs });
  const comm = createWorldCommunicator(endpoint, { timeoutMs });
  // Calls that wait inside MPI (mpiBlocking, mpi-native collectives, communicator construction)
  // are watched by the binding's own thread, with the same timeout.
  if (timeoutMs !== Infinity) mpi.watchdog?.(Math.min(2 ** 31 - 1, Math.max(1, Math.round(timeoutMs))), info.rank);
  let finalized = false;
  let finalizing: Promise<void> | undefined;
  world = {
    comm,
    info,
    endpoint,
    timeoutMs,
    wtime: () => mpi.wtime(),
    finalize() {
      // Once: a second call (the program's own, then runMpiRank's) waits for the first.
      finalizing ??= (async () => {
        await drainWithin(endpoint, timeoutMs, info.rank);
        endpoint.close();
        // Infinity when the watchdog is off: no handshake (MPI_Finalize waits as long as it takes).
        const waitMs = FINALIZE_WAIT_FACTOR * timeoutMs;
        let missing: number[];
        try {
          missing = await finalizeHandshake(mpi, info.rank, info.size, waitMs);
        } catch (e) {
          return abortJob(mpi, info.rank, describe(e));
        }
        if (missing.length > 0) {
          process.stderr.write(`vcoll: ${missingLine(missing, waitMs, info.rank)}\n`);
          mpi.abort(1);
        }
        finalized = true;
        mpi.finalize();
      })();
      return finalizing;
    },
    abort: (message, code) => abortJob(mpi, info.rank, message, code),
  };
  // An exception nobody catches ends this process anyway: end the whole job with it, naming
  // this rank, rather than leave the other ranks waiting (a monitor: Node's own handling is
  // unchanged, and unhandled rejections become such exceptions by default).
  process.on('uncaughtExceptionMonitor', (e) => {
    if (!finalized) abortJob(mpi, info.rank, describe(e));
  });
  // process.exit (or the end of the program) before MPI_Finalize: mpirun would only say that
  // some process exited; name this rank (runMpi reads the line). Written synchronously.
  process.on('exit', (code) => {
    if (finalized) return;
    try {
      writeSync(2, `vcoll: rank ${info.rank} exited with code ${code} before MPI_Finalize\n`);
    } catch {
      // stderr is gone: nothing to tell.
    }
  });
  return world;
}

/**
 * The endpoint's drain (every send of this rank completed), bounded by the watchdog's timeout:
 * a send whose receive never comes (its request may have timed out already and been caught by
 * the program) would otherwise hold MPI_Finalize for good.
 */
async function drainWithin(endpoint: MpiEndpoint, timeoutMs: number, rank: number): Promise<void> {
  if (timeoutMs === Infinity) return endpoint.drain();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const what = `${endpoint.sendsPending} send(s) still pending before MPI_Finalize`;
      reject(new TimeoutError(`timeout after ${timeoutMs} ms: rank ${rank} waits for ${what}`, -1, what, timeoutMs, { rank }));
    }, timeoutMs);
  });
  try {
    await Promise.race([endpoint.drain(), late]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.stack !== undefined && process.env.VCOLL_MPI_STACKS === '1' ? e.stack : `${e.name}: ${e.message}`;
  return String(e);
}

/**
 * Runs `program` on this process's rank of MPI_COMM_WORLD, then finalizes MPI; resolves with
 * the program's result. Any failure of the rank (the program rejects, or an uncaught exception
 * anywhere in the process: see `mpiWorld`) aborts the job with a message naming the rank.
 */
export async function runMpiRank<R>(program: (comm: Communicator, world: MpiWorld) => Promise<R> | R, options: MpiWorldOptions = {}): Promise<R> {
  const w = mpiWorld(options);
  let result: R;
  try {
    result = await program(w.comm, w);
    await drainWithin(w.endpoint, w.timeoutMs, w.info.rank);
  } catch (e) {
    return w.abort(describe(e));
  }
  await w.finalize();
  return result;
}
