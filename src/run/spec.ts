/**
 * What one run of one collective is: the operation, the algorithm, the block sizes (a
 * distribution of src/workloads/distributions.ts), the root, the model α, β, γ (per element) the
 * trees are built for (and the simulator charges), and how to time it. Shared by `vcoll run`,
 * the main job and the threads benchmark; validated once here with typed errors.
 */
import { DISTRIBUTIONS, parseDistribution, type DistributionName } from '../workloads/distributions.js';
import { type VAlgorithm } from '../collectives/types.js';
import { V_ALGORITHMS } from '../collectives/v-variants.js';
import { InvalidArgumentError } from '../errors.js';
import { linearModel, type CostModel } from '../model/cost-model.js';
import { modelFromSpec, type CostModelSpec } from '../model/model-json.js';

export type VOperation = 'gatherv' | 'scatterv';
export const V_OPERATIONS: readonly VOperation[] = ['gatherv', 'scatterv'];

/**
 * What `vcoll run --algorithm` takes: a gatherv/scatterv variant, or 'hierarchical', the
 * two-level gather and gatherv of TraffRougier14 (src/run/hierarchical-case.ts; gatherv only).
 */
export type RunAlgorithm = VAlgorithm | 'hierarchical';
export const RUN_ALGORITHMS: readonly RunAlgorithm[] = [...V_ALGORITHMS, 'hierarchical'];

/** How `vcoll run --algorithm hierarchical` puts ranks on nodes of perNode ranks: rank r on node ⌊r/perNode⌋, or that map shuffled. */
export type NodePlacement = 'ordered' | 'random';
export const NODE_PLACEMENTS: readonly NodePlacement[] = ['ordered', 'random'];

/** The virtual-time simulator, worker threads (the embedded default), or MPI processes started by mpirun. */
export type TransportName = 'sim' | 'threads' | 'mpi';
export const TRANSPORTS: readonly TransportName[] = ['sim', 'threads', 'mpi'];
/** How tables name the transports. */
export const TRANSPORT_LABEL: Readonly<Record<TransportName, string>> = { sim: 'the simulator', threads: 'worker threads', mpi: 'MPI processes' };

/** The distributions of Traff18's experiments (§5), used by the main job and the benchmark. */
export const SEED000_DISTRIBUTIONS: readonly DistributionName[] = [
  'same',
  'random',
  'bucket',
  'spikes',
  'increasing',
  'decreasing',
  'alternating',
  'two-blocks',
];

export interface LinearParamsInput {
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  /** Communication ports per processor (default 1: one-ported). */
  readonly ports?: number;
}

/** One collective call to run, time and verify (every rank evaluates the same case). */
export interface RunCase {
  readonly op: VOperation;
  readonly algorithm: VAlgorithm;
  readonly dist: DistributionName;
  /** Average block size in elements. */
  readonly b: number;
  readonly rho: number;
  readonly seed: number;
  readonly root: number;
  readonly unitBytes: number;
  /** α, β, γ per element: the model trees are built for (and the simulator's). */
  readonly model: LinearParamsInput;
  /**
   * A cost model given as data instead (src/model/model-json.ts: linear, pairwise or
   * hierarchical, per element; `vcoll run --model-file`): when present it replaces `model` for
   * the trees, the simulator and the prediction. Plain data, so it reaches worker threads.
   */
  readonly modelSpec?: CostModelSpec;
  /**
   * Per dependent communication round beyond α (model units; default 0): auto's
   * CollectiveOptions.auto.roundLatency, and added per level of the data-phase tree to the
   * prediction. Set from the calibration on threads (src/run/calibrate.ts).
   */
  readonly roundLatency?: number;
  /** Plan once with *Init and time only start(). */
  readonly persistent: boolean;
  /** Timed repetitions (the reported time is the minimum over them). */
  readonly reps: number;
  /** Untimed executions before the timed ones. */
  readonly warmup: number;
}

/** The blocks of a case and how often it runs: what every `vcoll run` case has, whatever the algorithm. */
export type CaseBlocks = Pick<RunCase, 'dist' | 'b' | 'rho' | 'seed' | 'root' | 'unitBytes' | 'reps' | 'warmup'>;

/** Just the CaseBlocks fields of `x` (a plain object: it travels to worker threads and MPI processes). */
export function caseBlocksOf(x: CaseBlocks): CaseBlocks {
  return { dist: x.dist, b: x.b, rho: x.rho, seed: x.seed, root: x.root, unitBytes: x.unitBytes, reps: x.reps, warmup: x.warmup };
}

export const CASE_DEFAULTS = {
  op: 'gatherv',
  algorithm: 'auto',
  dist: 'random',
  b: 100,
  rho: 5,
  seed: 1,
  root: 0,
  unitBytes: 1,
  model: { alpha: 100, beta: 1, gamma: 0 },
  persistent: false,
  reps: 1,
  warmup: 0,
} as const satisfies RunCase;

/** `x` as an integer in [min, max], else InvalidArgumentError(field). */
export function integerIn(field: string, x: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof x !== 'number' || !Number.isInteger(x) || x < min || x > max) {
    throw new InvalidArgumentError(field, `must be an integer in [${min}, ${max}], got ${String(x)}`);
  }
  return x;
}

/** `x` as a finite number >= 0, else InvalidArgumentError(field). */
export function nonNegative(field: string, x: unknown): number {
  if (typeof x !== 'number' || !Number.isFinite(x) || x < 0) {
    throw new InvalidArgumentError(field, `must be a finite number >= 0, got ${String(x)}`);
  }
  return x;
}

/** Models built from specs, once per spec object (a per-pair spec is p² numbers to validate). */
const SPEC_MODELS = new WeakMap<CostModelSpec, CostModel>();

/** Records `model` as the model of `spec` (built by the caller, e.g. loadModelJson): caseModel does not build it again (p² checks). */
export function rememberSpecModel(spec: CostModelSpec, model: CostModel): void {
  SPEC_MODELS.set(spec, model);
}

/** The case's cost model: its modelSpec when given (built once per spec), else the linear α, β, γ. */
export function caseModel(c: RunCase): CostModel {
  const spec = c.modelSpec;
  if (spec === undefined) return linearModel(c.model);
  let m = SPEC_MODELS.get(spec);
  if (m === undefined) {
    m = modelFromSpec(spec);
    SPEC_MODELS.set(spec, m);
  }
  return m;
}

/** Validates a case for p ranks; `prefix` names fields as the caller spells them (e.g. "--"). */
export function validateCase(p: number, c: RunCase, prefix = ''): RunCase {
  integerIn(`${prefix}p`, p, 1);
  if (!V_OPERATIONS.includes(c.op)) {
    throw new InvalidArgumentError(`${prefix}op`, `must be one of ${V_OPERATIONS.join(', ')}, got "${String(c.op)}"`);
  }
  if (!V_ALGORITHMS.includes(c.algorithm)) {
    throw new InvalidArgumentError(`${prefix}algorithm`, `must be one of ${V_ALGORITHMS.join(', ')}, got "${String(c.algorithm)}"`);
  }
  if (!(DISTRIBUTIONS as readonly string[]).includes(c.dist)) parseDistribution(String(c.dist), `${prefix}dist`);
  integerIn(`${prefix}b`, c.b, 1);
  integerIn(`${prefix}rho`, c.rho, 1);
  integerIn(`${prefix}seed`, c.seed, -(2 ** 31), 2 ** 31 - 1);
  if (typeof c.root !== 'number' || !Number.isInteger(c.root) || c.root < 0 || c.root >= p) {
    throw new InvalidArgumentError(`${prefix}root`, `must be a rank in [0, ${p - 1}], got ${String(c.root)}`);
  }
  integerIn(`${prefix}unit-bytes`, c.unitBytes, 1, 1 << 20);
  nonNegative(`${prefix}alpha`, c.model.alpha);
  nonNegative(`${prefix}beta`, c.model.beta);
  nonNegative(`${prefix}gamma`, c.model.gamma);
  if (c.model.ports !== undefined) integerIn(`${prefix}ports`, c.model.ports, 1, 64);
  if (c.modelSpec !== undefined) {
    const m = caseModel(c);
    if (m.size !== undefined && m.size !== p) throw new InvalidArgumentError(`${prefix}model-file`, `defines ${m.size} ranks, the run has ${p}`);
  }
  if (c.roundLatency !== undefined) nonNegative(`${prefix}round-latency`, c.roundLatency);
  integerIn(`${prefix}reps`, c.reps, 1);
  integerIn(`${prefix}warmup`, c.warmup, 0);
  return c;
}
