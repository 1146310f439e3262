/** vcoll's public API. */
export { VcollError, InvalidArgumentError, TooLargeError, type VcollErrorCode } from './errors.js';
export {
  linearModel,
  pairwiseModel,
  hierarchicalModel,
  requireModelFits,
  requireFiniteCosts,
  MAX_MODEL_TIME,
  type CostModel,
  type CostModelKind,
  type LinearParams,
  type Matrix,
  type ModelOptions,
} from './model/cost-model.js';
export {
  DISTRIBUTIONS,
  DISTRIBUTION_LABELS,
  DETERMINISTIC,
  blockSizes,
  parseDistribution,
  isDistributionName,
  type DistributionName,
  type DistributionParams,
} from './workloads/distributions.js';
export { TreeBuilder, postOrder, depths, isOrdered, treeToJSON, type Tree } from './trees/tree.js';
export type { BuiltTree, RootOption } from './trees/types.js';
export { evaluate, completionTime, type Evaluation, type Operation } from './trees/evaluate.js';
export { linearTree } from './trees/linear.js';
export { obliviousBinomialTree, naturalRoots, type ObliviousOptions } from './trees/binomial.js';
export {
  adaptiveBinomialTree,
  adaptiveRounds,
  roundsFor,
  type AdaptiveOptions,
  type AdaptiveRule,
  type AdaptiveJoin,
  type AdaptiveSchedule,
} from './trees/adaptive.js';
export { optimalTree, OPTIMAL_MAX_P, type OptimalOptions, type OptimalMode } from './trees/optimal/homogeneous.js';
export { DpWorkerError } from './trees/optimal/parallel-kernel.js';
export { optimalPairwiseTree, MAX_PAIRWISE_P } from './trees/optimal/pairwise.js';
export { optimalBinaryTree, type BinaryTreeOptions } from './trees/optimal/binary.js';
export { optimalBroadcastTree, broadcastTime, type BroadcastOperation, type BroadcastOptions } from './trees/broadcast.js';
export { twoBlockTree, twoBlockDomains, type TwoBlockDomains } from './trees/two-block.js';
export { decreasingRerankTree, exactNonOrderedOptimal, EXACT_NON_ORDERED_MAX_P, type TreeBuildFn } from './trees/non-ordered.js';
export { bruteForceOrderedOptimal, orderedTrees, BRUTE_FORCE_MAX_P } from './trees/brute-force.js';
export { TREE_ALGORITHMS, findTreeAlgorithm, treeLimit, checkTreeSize, type TreeAlgorithm, type BuildOptions, type TreeLimitOptions } from './trees/registry.js';
export {
  COMPARED_ALGORITHMS,
  compareTrees,
  type ComparedAlgorithm,
  type ComparisonRow,
  type CompareOptions,
  type RootKind,
  type RootSelection,
} from './trees/compare.js';
export { drawTreeText, drawTreeSvg, treeSchedule, type DrawOptions, type SvgOptions, type TreeSchedule } from './trees/draw.js';
export {
  ANY_SOURCE,
  ANY_TAG,
  UNDEFINED,
  TAG_UB,
  COLLECTIVE_TAG,
  BaseCommunicator,
  bytesOf,
  type Communicator,
  type Received,
  type Status,
} from './comm/communicator.js';
export type { Endpoint, VirtualClock } from './comm/endpoint.js';
export { OpRequest, mapRequest, waitAll, toPromise, type Request } from './comm/request.js';
export { byteLength, copyBytes, type MessageBuffer } from './comm/segments.js';
export { GroupCommunicator, createWorldCommunicator } from './comm/group.js';
export { createIntercomm, splitIntercomm, type InterCommunicator } from './comm/intercomm.js';
export { describeTag, tagText, TAG_TABLE, type TagRange } from './comm/tags.js';
export { CommunicationError, DeadlockError, TimeoutError, TruncationError, UnavailableError, type DeadlockedRank } from './errors.js';
export { runSim, type SimRunOptions, type PortSetting, type RankProgram, type SimOptions, type SimProgress, type SimResult, type SimTrace } from './transports/sim/index.js';
export { replaySchedule, ScheduleReplay, type ReplayOptions, type ReplayResult } from './transports/sim/replay.js';
export { runThreads, ThreadsEndpoint, type RunThreadsOptions } from './transports/threads/index.js';
/** The MPI transport (optional: its native binding is built by `npm run build:mpi`, loaded on first use). */
export {
  mpiWorld,
  mpiBlocking,
  type BlockingPointToPoint,
  runMpiRank,
  runMpi,
  mpiBindingAvailable,
  MpiEndpoint,
  type MpiWorld,
  type MpiInitInfo,
  type MpiEndpointOptions,
  type MpiWorldOptions,
  DEFAULT_MPI_TIMEOUT_MS,
  type RunMpiOptions,
} from './transports/mpi/index.js';
export type { NativeCollectives, NativeInterCollectives, NativeElementType, NativeReduceOp } from './comm/native.js';
export * from './collectives/index.js';

/** Data layouts (TraffRougier14 §5, §6): constructors, pack/unpack, views for direct placement. */
export * as layout from './layout/index.js';
export type { Layout, LayoutKind, StretchedVector } from './layout/index.js';

/** Cost models as JSON files, and per-pair (Hockney) model estimation by ping-pong (Dichev10 §3). */
export {
  MODEL_JSON_FORMAT,
  MODEL_JSON_VERSION,
  modelToJson,
  parseModelJson,
  loadModelJson,
  modelFromSpec,
  specOfModel,
  validateModelSpec,
  type CostModelSpec,
  type LinearModelSpec,
  type PairwiseModelSpec,
  type HierarchicalModelSpec,
  type ModelMeta,
  type LoadedModel,
} from './model/model-json.js';
export {
  estimatePairwise,
  estimatePairwiseOnSim,
  estimatePairwiseOnThreads,
  pairwiseModelOf,
  pairwiseSpecOf,
  DEFAULT_ESTIMATE_SIZES,
  type EstimateOptions,
  type PairwiseEstimate,
  type EstimateModelOptions,
} from './run/estimate-pairwise.js';

/** Model-based trees for heterogeneous networks (Dichev10) and the two platforms of its experiments. */
export { modelBinomialTree, modelBinomialTreeFor, type BinomialMapping, type ModelBinomialOptions } from './trees/model-binomial.js';
export { traffTree, traffTreeFor, balancedPartition, homogeneousPredictor, type TraffOptions, type TraffPredictor } from './trees/model-traff.js';
export { hclPlatform, grid5000Platform, proportionalBlocks, type Platform } from './workloads/platforms.js';

/** The benchmark harness: Traff18 §5's method, GL1/GL2 verdicts, results files, the HTML report. */
export { runBench, validateBenchConfig, referenceName, type BenchRunOptions } from './harness/harness.js';
export { resourceLimits, DEFAULT_MAX_SECONDS, type ResourceLimits } from './util/limits.js';
export { BENCH_DEFAULTS } from './harness/bench-defaults.js';
export { evaluateGuidelines } from './harness/guidelines.js';
export { sampleStats, mannWhitney, type MannWhitneyResult } from './harness/stats.js';
export { readResultsJson, writeResultsJson, resultsCsv, interCsv, CSV_COLUMNS, INTER_CSV_COLUMNS } from './harness/results-file.js';
export {
  RESULTS_SCHEMA,
  type BenchConfig,
  type BenchResults,
  type BenchRow,
  type BenchEnvironment,
  type BenchCalibration,
  type GuidelineVerdict,
  type Guideline,
  type InterRow,
  type ReferencesDropped,
  type RowKind,
  type SampleStats,
  type TimeUnit,
} from './harness/results.js';

/** The self-contained HTML report of a bench's results (loads the plotting library on first use). */
export async function renderBenchReport(results: import('./harness/results.js').BenchResults): Promise<string> {
  const { renderReport } = await import('./report/html.js');
  return renderReport(results);
}

/** Schedules: a collective's data phase as data (steps of send/recv/copy/combine), its static check, printer and executors. */
export type {
  ByteRange,
  CombineOp,
  CopyOp,
  RankSchedule,
  RecvOp,
  ScheduleBuffer,
  ScheduleCombiner,
  ScheduleOp,
  ScheduleOptions,
  ScheduleStep,
  SendOp,
  Span,
  WorldSchedule,
} from './schedule/types.js';
export { shiftedTag, spanBytes } from './schedule/types.js';
export { assertSchedule, checkSchedule, type ScheduleProblem, type ScheduleProblemKind } from './schedule/check.js';
export { formatSchedule } from './schedule/format.js';
export { bindInterSchedule, bindSchedule, runSchedule, type BoundSchedule } from './schedule/run.js';
export { BASIC_SCHEDULE_OPS, compileBasicSchedule, type BasicScheduleOp } from './collectives/basic/world-schedule.js';
export { COMPILED_V_ALGORITHMS, compileVSchedule, type CompileVOptions, type CompiledVAlgorithm } from './collectives/v-schedule.js';
export { COMPILED_ALLGATHER_ALGORITHMS, compileAllgatherSchedule, type CompileAllgatherOptions, type CompiledAllgatherAlgorithm } from './collectives/allgather/schedule.js';
