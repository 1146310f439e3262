/** The collectives: irregular gatherv/scatterv (every algorithm), allgather(v) intra- and intergroup, and the building blocks. */
export { gatherv, gathervInit, GATHERV_VARIANTS } from './gatherv/index.js';
export { scatterv, scattervInit, SCATTERV_VARIANTS } from './scatterv/index.js';
export { DEFAULT_MODEL } from './defaults.js';
export { AUTO_ORDER, chooseAuto, linearWinsForAnyCounts, predictAuto, type AutoPrediction } from './auto.js';
export * from './types.js';
export {
  MODEL_TREE_ALGORITHMS,
  PORTABLE_V_ALGORITHMS,
  V_ALGORITHMS,
  V_VARIANTS,
  variantRow,
  type AutoCandidate,
  type ModelTreeAlgorithm,
  type PlanningEstimate,
  type TreeVariantName,
  type VVariantName,
  type VVariantRow,
} from './v-variants.js';
export { portableVariants, type RestrictionContext, type VariantRestriction, type GathervPlanInput, type GathervVariant, type ScattervPlanInput, type ScattervVariant, type VariantRequirement, type VPlanInput } from './variant.js';
export { MAX_NATIVE_BYTES, nativeByteLayout } from './native.js';
export * from './basic/index.js';
// Intragroup allgather/allgatherv (ring, recursive doubling, Bruck, auto); the building block
// of basic/ (equal blocks, no options) is `basicAllgather`.
export { allgather, allgatherv, ALLGATHER_VARIANTS, ALLGATHERV_VARIANTS, chooseAllgather, chooseAllgatherv } from './allgather/index.js';
export {
  ALLGATHER_ALGORITHMS,
  ALLGATHERV_ALGORITHMS,
  type AllgatherAlgorithm,
  type AllgathervAlgorithm,
  type AllgatherArgs,
  type AllgatherOptions,
  type AllgathervArgs,
  type AllgathervOptions,
} from './allgather/types.js';
// Intergroup allgather/allgatherv on intercommunicators (seed 003).
export { interAllgather, interAllgatherv } from './inter/index.js';
export {
  INTER_ALLGATHER_ALGORITHMS,
  type InterAllgatherAlgorithm,
  type InterAllgatherArgs,
  type InterAllgathervArgs,
  type InterOptions,
} from './inter/types.js';

// Hierarchical gather / gatherv (seed 002).
export {
  hierarchicalGather,
  hierarchicalGatherv,
  HIERARCHICAL_VARIANTS,
  HIERARCHICAL_VARIANT_NAMES,
  type HierarchicalVariant,
  type HierarchicalGatherArgs,
  type HierarchicalGathervArgs,
  type HierarchicalInfo,
  type HierarchicalOptions,
  type HierarchicalVariantName,
} from './hierarchical/index.js';
export { CALL_TAG_STRIDE, callSlotOfTag, unslottedTag } from './call-scope.js';
