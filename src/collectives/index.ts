/** The collectives: irregular gatherv/scatterv (every algorithm) and the building blocks. */
export { gatherv, gathervInit, GATHERV_VARIANTS } from './gatherv/index.js';
export { scatterv, scattervInit, SCATTERV_VARIANTS } from './scatterv/index.js';
export { DEFAULT_MODEL } from './defaults.js';
export { AUTO_ORDER, chooseAuto, linearWinsForAnyCounts, predictAuto, type AutoPrediction } from './auto.js';
export * from './types.js';
export type { GathervPlanInput, GathervVariant, ScattervPlanInput, ScattervVariant, VPlanInput } from './variant.js';
export * from './basic/index.js';
