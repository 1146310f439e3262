/**
 * The contract between the public gatherv/scatterv entries (which validate arguments once,
 * collectives/v-collectives.ts) and the algorithm files:
 * every algorithm exports a variant `{ name, description, init }` that receives normalised
 * arguments and plans the operation; `start()` of the returned plan runs the data phase.
 * Running once = init + start. A variant that needs more of the transport than point-to-point
 * says so (`requires: 'native'`: `mpi-native`, the MPI library's own collective); `auto` and
 * every enumeration over the simulator or threads take `portableVariants(list)`.
 */
import type { Communicator } from '../comm/communicator.js';
import type { CostModel } from '../model/cost-model.js';
import { InvalidArgumentError, type VcollError } from '../errors.js';
import type { AdaptiveVariantOptions, PersistentCollective, VAlgorithm } from './types.js';

/** What the normalised gatherv and scatterv arguments of one rank have in common. */
export interface VPlanInput {
  readonly comm: Communicator;
  readonly root: number;
  /** Bytes per element. */
  readonly unitBytes: number;
  /** This rank's count in elements. */
  readonly count: number;
  /** Root only (undefined elsewhere): counts and displacements (elements, validated). */
  readonly counts: readonly number[] | undefined;
  readonly displs: readonly number[] | undefined;
  readonly inPlace: boolean;
  readonly model: CostModel;
  readonly adaptive: Required<AdaptiveVariantOptions>;
  /** A one-shot call (`gatherv`, `scatterv`): the plan starts once (its schedule is bound with ScheduleOptions.once). */
  readonly once?: boolean;
}

/** Normalised, validated gatherv arguments as one rank sees them. */
export interface GathervPlanInput extends VPlanInput {
  /** This rank's block, exactly count·unitBytes bytes (empty at a root with inPlace). */
  readonly send: Uint8Array;
  /** Root only (undefined elsewhere): the receive buffer. */
  readonly recv: Uint8Array | undefined;
}

/** Normalised, validated scatterv arguments as one rank sees them. */
export interface ScattervPlanInput extends VPlanInput {
  /** Where this rank's block goes, exactly count·unitBytes bytes (empty at a root with inPlace). */
  readonly recv: Uint8Array;
  /** Root only (undefined elsewhere): the send buffer. */
  readonly send: Uint8Array | undefined;
}

/**
 * What a variant needs of the transport beyond point-to-point: 'native', the library's own
 * collectives (`comm.native`, the MPI transport only). A variant without `requires` runs on
 * every transport.
 */
export type VariantRequirement = 'native';

export interface GathervVariant {
  readonly name: Exclude<VAlgorithm, 'auto'>;
  readonly description: string;
  /** Absent: runs on every transport. */
  readonly requires?: VariantRequirement;
  init(input: GathervPlanInput): Promise<PersistentCollective>;
}

export interface ScattervVariant {
  readonly name: Exclude<VAlgorithm, 'auto'>;
  readonly description: string;
  /** Absent: runs on every transport. */
  readonly requires?: VariantRequirement;
  init(input: ScattervPlanInput): Promise<PersistentCollective>;
}

/**
 * The variants of `list` that run on every transport (no `requires`): what `auto` chooses
 * among, and what tests, benchmarks and listings over the simulator or threads enumerate.
 */
export function portableVariants<V extends { readonly requires?: VariantRequirement }>(list: readonly V[]): V[] {
  return list.filter((v) => v.requires === undefined);
}

/** What a restriction can see: always the model and p; the counts where they are known (the root, predictions). */
export interface RestrictionContext {
  readonly p: number;
  /** Absent where only the counts are asked about. */
  readonly model?: CostModel;
  /** The block sizes (elements); absent where only the root knows them. */
  readonly counts?: readonly number[];
  /** Whether the transport has the MPI library's own collectives (`comm.native`). */
  readonly native?: boolean;
}

/** A condition a variant needs, as a predicate with the error a rank raises when it fails. */
export interface VariantRestriction {
  /** What it needs: 'model' (every rank checks before planning), 'counts' (known at the root), 'transport'. */
  readonly on: 'model' | 'counts' | 'transport';
  /** Why the variant cannot run here (one phrase), or undefined when it can. */
  readonly why: (c: RestrictionContext) => string | undefined;
  /** The typed error for `why` on `rank`. */
  readonly error: (why: string, rank: number) => VcollError;
}

/** One-ported models only (the adaptive construction and the dynamic programs). */
export function onePorted(what: string): VariantRestriction {
  return {
    on: 'model',
    why: ({ model }) => (model !== undefined && model.ports !== 1 ? `${what}; the model has ${model.ports} ports` : undefined),
    error: (why, rank) => new InvalidArgumentError('model', why, { rank }),
  };
}
