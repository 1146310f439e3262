/**
 * gatherv and scatterv: the public entries (the algorithms are in gatherv/, scatterv/ and
 * adaptive/, listed in the variant table v-variants.ts).
 *
 * gatherv validates the arguments once (collectives/args.ts), then plans the requested
 * algorithm (`gathervInit`, like MPI 4's MPI_Gatherv_init: buffers and arguments bound at init,
 * `start()` runs the data phase as often as wanted) or plans and runs it once (`gatherv`).
 * scatterv likewise (`scattervInit`, `scatterv`; a persistent scatter sends the send buffer's
 * contents at each start). Every rank must pass the same algorithm and options (the tree
 * algorithms use only the root's model, but adaptive builds its tree on every rank and checks
 * they agree).
 */
import type { Communicator } from '../comm/communicator.js';
import { normalizeGatherv, normalizeScatterv } from './args.js';
import { planVariant } from './auto.js';
import { beginCall, plannedInCall } from './call-scope.js';
import type { CollectiveInfo, CollectiveOptions, GathervArgs, PersistentCollective, ScattervArgs } from './types.js';
import type { GathervVariant, ScattervVariant } from './variant.js';
import { V_VARIANTS } from './v-variants.js';

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
  return plannedInCall(comm, (scope) => planGatherv(scope, args, options, true));
}

/**
 * Validates and plans in the call's scope (beginCall: `comm` itself when it is one already); a
 * plain function returning the variant's promise (no async frame of its own: a simulation holds
 * one suspended call chain per rank), errors as rejections.
 */
function planGatherv(comm: Communicator, args: GathervArgs, options: CollectiveOptions | undefined, persistent: boolean): Promise<PersistentCollective> {
  try {
    const normalized = normalizeGatherv(beginCall(comm), args, options);
    const { algorithm } = normalized;
    const input = persistent ? { ...normalized.input, adaptive: { ...normalized.input.adaptive, overlap: false } } : { ...normalized.input, once: true };
    return planVariant(input, algorithm, GATHERV_VARIANTS, 'gatherv', normalized.auto);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Gathers every rank's block to the root (MPI_Gatherv semantics, collectives/types.ts). */
export function gatherv(comm: Communicator, args: GathervArgs, options?: CollectiveOptions): Promise<CollectiveInfo> {
  // chained, not an async function: a simulation holds one suspended call chain per rank
  return planGatherv(comm, args, options, false).then(startOnce);
}

/** Runs a one-shot plan once; resolves with its info. */
function startOnce(plan: PersistentCollective): Promise<CollectiveInfo> {
  return plan.start().then(() => plan.info);
}

/**
 * The scatterv algorithms, in the order of the variant table (collectives/v-variants.ts). 'auto'
 * chooses among the portable ones (`portableVariants`); `mpi-native` (requires: 'native') runs
 * only on the MPI transport.
 */
export const SCATTERV_VARIANTS: readonly ScattervVariant[] = V_VARIANTS.map((row) => row.scatterv);

/** Plans a scatterv (collective): validation, then the algorithm's planning phase. */
export function scattervInit(comm: Communicator, args: ScattervArgs, options?: CollectiveOptions): Promise<PersistentCollective> {
  return plannedInCall(comm, (scope) => planScatterv(scope, args, options, true));
}

/** Validates and plans (like planGatherv: no async frame, errors as rejections). */
function planScatterv(comm: Communicator, args: ScattervArgs, options: CollectiveOptions | undefined, persistent: boolean): Promise<PersistentCollective> {
  try {
    const { input, algorithm, auto } = normalizeScatterv(beginCall(comm), args, options);
    return planVariant(persistent ? input : { ...input, once: true }, algorithm, SCATTERV_VARIANTS, 'scatterv', auto);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Scatters the root's blocks to every rank (MPI_Scatterv semantics, collectives/types.ts). */
export function scatterv(comm: Communicator, args: ScattervArgs, options?: CollectiveOptions): Promise<CollectiveInfo> {
  return planScatterv(comm, args, options, false).then(startOnce);
}
