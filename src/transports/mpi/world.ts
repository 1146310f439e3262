/**
 * vcoll inside a program started by `mpirun -np N node app.js`: `mpiWorld()` initialises MPI
 * (MPI_Init_thread, once per process) and returns the world communicator over MPI_COMM_WORLD;
 * `runMpiRank(program)` runs a rank program on it and makes failures end the job: a rank whose
 * program throws (or whose process has an uncaught exception) prints
 * `vcoll: rank R failed: <message>` to stderr and calls MPI_Abort, so mpirun stops every rank
 * at once instead of leaving the others waiting for it. Programs that use `mpiWorld` directly
 * get the same for exceptions nobody catches.
 */

import type { Communicator } from '../../comm/communicator.js';
import { createWorldCommunicator } from '../../comm/group.js';
import { InvalidArgumentError } from '../../errors.js';
import { loadMpiBinding, type MpiBinding, type MpiInitInfo } from './binding.js';
import { MpiEndpoint, type MpiEndpointOptions } from './endpoint.js';

export interface MpiWorld {
  /** The world communicator (rank and size of MPI_COMM_WORLD). */
  readonly comm: Communicator;
  /** What MPI_Init_thread reported: rank, size, MPI_TAG_UB, the library's version, the host. */
  readonly info: MpiInitInfo;
  readonly endpoint: MpiEndpoint;
  /** MPI_Wtime(). */
  wtime(): number;
  /** Waits for this rank's pending operations, then MPI_Finalize (collective: every rank calls it). */
  finalize(): Promise<void>;
  /** Prints `vcoll: rank R failed: <message>` and ends the whole job (MPI_Abort). */
  abort(message: string, code?: number): never;
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
export function mpiWorld(options: MpiEndpointOptions = {}): MpiWorld {
  if (world !== undefined) return world;
  const mpi = loadMpiBinding();
  const info = mpi.init();
  const endpoint = new MpiEndpoint(mpi, info, { nodes: options.nodes ?? nodesFromEnv(info.size, info.rank), recvSpinNs: options.recvSpinNs });
  const comm = createWorldCommunicator(endpoint);
  let finalized = false;
  world = {
    comm,
    info,
    endpoint,
    wtime: () => mpi.wtime(),
    async finalize() {
      if (finalized) return;
      await endpoint.drain();
      finalized = true;
      endpoint.close();
      mpi.finalize();
    },
    abort: (message, code) => abortJob(mpi, info.rank, message, code),
  };
  // An exception nobody catches ends this process anyway: end the whole job with it, naming
  // this rank, rather than leave the other ranks waiting (a monitor: Node's own handling is
  // unchanged, and unhandled rejections become such exceptions by default).
  process.on('uncaughtExceptionMonitor', (e) => {
    if (!finalized) abortJob(mpi, info.rank, describe(e));
  });
  return world;
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
export async function runMpiRank<R>(program: (comm: Communicator, world: MpiWorld) => Promise<R> | R, options: MpiEndpointOptions = {}): Promise<R> {
  const w = mpiWorld(options);
  let result: R;
  try {
    result = await program(w.comm, w);
    await w.endpoint.drain();
  } catch (e) {
    return w.abort(describe(e));
  }
  await w.finalize();
  return result;
}
