/**
 * scatterv: the public entry. Validates the arguments once (collectives/args.ts), then plans
 * the requested algorithm (`scattervInit`, like MPI 4's MPI_Scatterv_init: buffers and
 * arguments bound at init, `start()` runs the data phase as often as wanted; a persistent
 * scatter sends the send buffer's contents at each start) or plans and runs it once
 * (`scatterv`). Every rank must pass the same algorithm and options (the tree algorithms use
 * only the root's model, but adaptive builds its tree on every rank and checks they agree).
 */
import type { Communicator } from '../../comm/communicator.js';
import { normalizeScatterv } from '../args.js';
import { planVariant } from '../auto.js';
import { beginCall, plannedInCall } from '../call-scope.js';
import type { CollectiveInfo, CollectiveOptions, PersistentCollective, ScattervArgs } from '../types.js';
import type { ScattervVariant } from '../variant.js';
import { V_VARIANTS } from '../v-variants.js';

/**
 * The scatterv algorithms, in the order of the variant table (collectives/v-variants.ts). 'auto'
 * chooses among the portable ones (`portableVariants`); `mpi-native` (requires: 'native') runs
 * only on the MPI transport.
 */
export const SCATTERV_VARIANTS: readonly ScattervVariant[] = V_VARIANTS.map((row) => row.scatterv);

/** Plans a scatterv (collective): validation, then the algorithm's planning phase. */
export function scattervInit(comm: Communicator, args: ScattervArgs, options?: CollectiveOptions): Promise<PersistentCollective> {
  return plannedInCall(comm, (scope) => plan(scope, args, options));
}

async function plan(comm: Communicator, args: ScattervArgs, options: CollectiveOptions | undefined): Promise<PersistentCollective> {
  const { input, algorithm, auto } = normalizeScatterv(comm, args, options);
  return planVariant(input, algorithm, SCATTERV_VARIANTS, 'scatterv', auto);
}

/** Scatters the root's blocks to every rank (MPI_Scatterv semantics, collectives/types.ts). */
export async function scatterv(comm: Communicator, args: ScattervArgs, options?: CollectiveOptions): Promise<CollectiveInfo> {
  const planned = await plan(beginCall(comm), args, options);
  await planned.start();
  return planned.info;
}
