/**
 * What the `mpi-native` variants share: finding the transport's own collectives
 * (`Communicator.native`, `InterCommunicator.native`: the MPI library's, on the MPI transport
 * only) and turning element counts and displacements into the byte counts MPI takes (C ints,
 * each ≤ 2³¹ − 1).
 *
 * Without `native` (the simulator, worker threads) every rank fails alike, at once, with an
 * UnavailableError('mpi-transport') — each rank sees `native === undefined` on its own, so no
 * rank waits for another.
 */
import type { Communicator } from '../comm/communicator.js';
import type { InterCommunicator } from '../comm/intercomm.js';
import type { NativeCollectives, NativeInterCollectives } from '../comm/native.js';
import { InvalidArgumentError, UnavailableError } from '../errors.js';
import { persistentPlan } from './node-schedule.js';
import { MPI_NATIVE, type CollectiveInfo, type PersistentCollective } from './types.js';
import type { VPlanInput } from './variant.js';

/** Largest byte count or byte displacement MPI takes (a C int). */
export const MAX_NATIVE_BYTES = 2 ** 31 - 1;

/** How to get a communicator that has the library's collectives (for the error messages). */
export const NATIVE_HINT =
  "it runs only over the MPI transport: start the program with `mpirun -np N node app.js` and take its communicator from mpiWorld() " +
  '(src/transports/mpi/world.ts), or run a rank program with runMpi (src/transports/mpi/run.ts)';

function unavailable(what: string, rank: number): UnavailableError {
  return new UnavailableError(
    'mpi-transport',
    `rank ${rank}: ${what} with algorithm 'mpi-native' calls the MPI library's own collective, and this communicator has none: ${NATIVE_HINT}`,
    { rank },
  );
}

/** The communicator's native collectives, or an UnavailableError('mpi-transport') naming `what` (e.g. 'gatherv'). */
export function nativeOf(comm: Communicator, what: string): NativeCollectives {
  const n = comm.native;
  if (n === undefined) throw unavailable(what, comm.rank);
  return n;
}

/** The intercommunicator's native collectives (the first use is collective over both groups), or an UnavailableError. */
export function nativeInterOf(inter: InterCommunicator, what: string): NativeInterCollectives {
  const n = inter.native;
  if (n === undefined) throw unavailable(what, inter.rank);
  return n;
}

/** `bytes` as a C int, or an InvalidArgumentError naming `field`. */
export function nativeBytes(field: string, bytes: number, rank: number): number {
  if (bytes > MAX_NATIVE_BYTES) {
    throw new InvalidArgumentError(field, `${bytes} bytes exceed what MPI takes (${MAX_NATIVE_BYTES}, a C int) with algorithm 'mpi-native'`, { rank });
  }
  return bytes;
}

/**
 * Counts and displacements in elements of `unitBytes` bytes as MPI's byte counts and byte
 * displacements, each ≤ 2³¹ − 1 (else an InvalidArgumentError naming `counts[i]` or
 * `displs[i]`). An empty block's displacement is not read by MPI and becomes 0.
 */
export function nativeByteLayout(
  counts: readonly number[],
  displs: readonly number[],
  unitBytes: number,
  rank: number,
): { readonly counts: Int32Array; readonly displs: Int32Array } {
  const p = counts.length;
  const c = new Int32Array(p);
  const d = new Int32Array(p);
  for (let i = 0; i < p; i++) {
    c[i] = nativeBytes(`counts[${i}]`, counts[i] * unitBytes, rank);
    d[i] = counts[i] === 0 ? 0 : nativeBytes(`displs[${i}]`, displs[i] * unitBytes, rank);
  }
  return { counts: c, displs: d };
}

/** What the MPI library's gatherv/scatterv is called with at the root (bytes). */
export interface NativeByteLayout {
  readonly counts: Int32Array;
  readonly displs: Int32Array;
}

/**
 * The `mpi-native` variant of gatherv or scatterv (`op`): at init every rank checks the MPI
 * transport is there (else UnavailableError), a non-root rank that its block (`own(input)`:
 * field and bytes) fits an MPI count, the root its byte counts and displacements; `start()`
 * calls the library (`call(native, layout, input)`: layout at the root only). No planning
 * rounds, height 1.
 */
export function nativeVariant<I extends VPlanInput>(
  op: 'gatherv' | 'scatterv',
  description: string,
  own: (input: I) => readonly [field: string, bytes: number],
  call: (native: NativeCollectives, layout: NativeByteLayout | undefined, input: I) => void,
): { readonly name: typeof MPI_NATIVE; readonly description: string; readonly requires: 'native'; init(input: I): Promise<PersistentCollective> } {
  return {
    name: MPI_NATIVE,
    description,
    requires: 'native',
    init(input: I): Promise<PersistentCollective> {
      const { comm, root } = input;
      const native = nativeOf(comm, op);
      const me = comm.rank;
      const info: CollectiveInfo = { algorithm: MPI_NATIVE, constructionRounds: 0, height: comm.size > 1 ? 1 : 0 };
      let layout: NativeByteLayout | undefined;
      if (me !== root) nativeBytes(...own(input), me);
      else layout = nativeByteLayout(input.counts as readonly number[], input.displs as readonly number[], input.unitBytes, me);
      return Promise.resolve(persistentPlan(comm, info, async () => call(native, layout, input)));
    },
  };
}
