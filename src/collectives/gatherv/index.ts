/**
 * gatherv: the public entry. Validates the arguments once (collectives/args.ts), then plans
 * the requested algorithm (`gathervInit`, like MPI 4's MPI_Gatherv_init: buffers and
 * arguments bound at init, `start()` runs the data phase as often as wanted) or plans and
 * runs it once (`gatherv`). Every rank must pass the same algorithm and options (the tree algorithms use only
 * the root's model, but adaptive builds its tree on every rank and checks they agree).
 */
import type { Communicator } from '../../comm/communicator.js';
import { normalizeGatherv } from '../args.js';
import { planVariant } from '../auto.js';
import { beginCall, plannedInCall } from '../call-scope.js';
import type { CollectiveInfo, CollectiveOptions, GathervArgs, PersistentCollective } from '../types.js';
import type { GathervVariant } from '../variant.js';
import { V_VARIANTS } from '../v-variants.js';

/**
 * The gatherv algorithms, in the order of the variant table (collectives/v-variants.ts). 'auto'
 * chooses among the portable ones (`portableVariants`); `mpi-native` (requires: 'native') runs
 * only on the MPI transport.
 */
export const GATHERV_VARIANTS: readonly GathervVariant[] = V_VARIANTS.map((row) => row.gatherv);

/**
 * Plans a gatherv (collective): validation, then the algorithm's planning phase, completed
 * before it resolves (adaptive: the whole construction; its overlap with the data phase
 * applies to the one-shot `gatherv` only), so `start()` runs the data phase alone.
 */
export function gathervInit(comm: Communicator, args: GathervArgs, options?: CollectiveOptions): Promise<PersistentCollective> {
  return plannedInCall(comm, (scope) => plan(scope, args, options, true));
}

async function plan(comm: Communicator, args: GathervArgs, options: CollectiveOptions | undefined, persistent: boolean): Promise<PersistentCollective> {
  const normalized = normalizeGatherv(comm, args, options);
  const { algorithm } = normalized;
  const input = persistent ? { ...normalized.input, adaptive: { ...normalized.input.adaptive, overlap: false } } : normalized.input;
  return planVariant(input, algorithm, GATHERV_VARIANTS, 'gatherv', normalized.auto);
}

/** Gathers every rank's block to the root (MPI_Gatherv semantics, collectives/types.ts). */
export async function gatherv(comm: Communicator, args: GathervArgs, options?: CollectiveOptions): Promise<CollectiveInfo> {
  const p = await plan(beginCall(comm), args, options, false);
  await p.start();
  return p.info;
}
