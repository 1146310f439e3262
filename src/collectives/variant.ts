/**
 * The contract between the public gatherv/scatterv entries (which validate arguments once,
 * collectives/gatherv/index.ts and collectives/scatterv/index.ts) and the algorithm files:
 * every algorithm exports a variant `{ name, description, init }` that receives normalised
 * arguments and plans the operation; `start()` of the returned plan runs the data phase.
 * Running once = init + start.
 */
import type { Communicator } from '../comm/communicator.js';
import type { CostModel } from '../model/cost-model.js';
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

export interface GathervVariant {
  readonly name: Exclude<VAlgorithm, 'auto'>;
  readonly description: string;
  init(input: GathervPlanInput): Promise<PersistentCollective>;
}

export interface ScattervVariant {
  readonly name: Exclude<VAlgorithm, 'auto'>;
  readonly description: string;
  init(input: ScattervPlanInput): Promise<PersistentCollective>;
}
