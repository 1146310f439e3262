/** The collectives: irregular gatherv/scatterv (every algorithm), allgather(v) intra- and intergroup, and the building blocks. */
export { gatherv, gathervInit, GATHERV_VARIANTS, scatterv, scattervInit, SCATTERV_VARIANTS } from './v-collectives.js';
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
export { type AllgatherArgs, type AllgatherOptions, type AllgathervArgs, type AllgathervOptions } from './allgather/types.js';
export {
  ALLGATHER_ALGORITHMS,
  ALLGATHER_VARIANT_ROWS,
  ALLGATHERV_ALGORITHMS,
  type AllgatherAlgorithm,
  type AllgathervAlgorithm,
  type AllgatherVariantName,
  type AllgatherVariantRow,
} from './allgather/variants.js';
// Intergroup allgather/allgatherv on intercommunicators (Kang19).
export { interAllgather, interAllgatherv } from './inter/index.js';
export { type InterAllgatherArgs, type InterAllgathervArgs, type InterOptions } from './inter/types.js';
export { INTER_ALLGATHER_ALGORITHMS, INTER_ALLGATHER_VARIANTS, type InterAllgatherAlgorithm, type InterAllgatherVariantRow } from './inter/variants.js';

// Hierarchical gather / gatherv (TraffRougier14), scatter / scatterv (its mirror); binomial or adaptive (Traff18) levels; persistent gatherv / scatterv.
export {
  hierarchicalGather,
  hierarchicalGatherv,
  hierarchicalGathervInit,
  hierarchicalScatter,
  hierarchicalScatterv,
  hierarchicalScattervInit,
  type HierarchicalPlan,
  HIERARCHICAL_TREE_NAMES,
  HIERARCHICAL_VARIANTS,
  HIERARCHICAL_VARIANT_NAMES,
  type HierarchicalVariant,
  type HierarchicalGatherArgs,
  type HierarchicalGathervArgs,
  type HierarchicalInfo,
  type HierarchicalOptions,
  type HierarchicalScatterArgs,
  type HierarchicalScattervArgs,
  type HierarchicalTreeName,
  type HierarchicalVariantName,
  nodeStructure,
  type NodeStructure,
} from './hierarchical/index.js';
export { CALL_TAG_STRIDE, callSlotOfTag, unslottedTag } from './call-scope.js';
