/**
 * Runs cases on a transport and turns the ranks' reports into one result per case: verified
 * (every rank's data equal to the reference, byte for byte, after every execution), the time
 * (slowest rank of an execution, minimum over the repetitions), messages and bytes (summed over
 * the ranks, one execution), rounds (construction rounds + height of the data-phase tree, from
 * the root's CollectiveInfo) and the model's prediction for the tree the data phase follows.
 */
import { sharedBlockSizes } from '../workloads/distributions.js';
import { InvalidArgumentError } from '../errors.js';
import { runSim, type SimProgress, type SimTrace } from '../transports/sim/index.js';
import { runMpi, type RunMpiOptions } from '../transports/mpi/run.js';
import { runThreads, type RunThreadsOptions } from '../transports/threads/index.js';
import type { Calibration, CalibrationOptions } from './calibrate.js';
import { checkCaseResources } from './case-limits.js';
import { predictTime } from './predict.js';
import { sharedCaseData } from './data.js';
import { VIRTUAL_TIMER, runCaseOnRank, type RankCaseResult } from './rank.js';
import { caseModel, validateCase, type RunAlgorithm, type RunCase, type TransportName, type VOperation } from './spec.js';
import type { HierarchicalTreeName, HierarchicalVariantName } from '../collectives/hierarchical/index.js';
import type { HierarchicalCollective, NodePlacementName, TwoLevelParams } from './hierarchical-case.js';
import { calibratedCase, type ThreadsJobArgs, type ThreadsJobRankResult } from './threads-program.js';
import { maxOf, minOf } from '../util/extremes.js';
import { checkSimRanks } from '../util/limits.js';

/** The result of one case: the JSON object `vcoll run --format json` prints. */
export interface RunReport {
  readonly verified: boolean;
  /** Slowest rank's time of one execution, minimum over the repetitions. */
  readonly time: number;
  /** 'model': virtual time of the simulator in model units; 's': measured seconds. */
  readonly timeUnit: 'model' | 's';
  /** Point-to-point messages of one execution, summed over the ranks (0-byte ones included). */
  readonly messages: number;
  readonly bytes: number;
  /** constructionRounds + height, from the root's CollectiveInfo. */
  readonly rounds: number;
  readonly constructionRounds: number;
  readonly height: number;
  readonly transport: TransportName;
  readonly op: VOperation;
  /** The algorithm that ran ('auto' resolved). */
  readonly algorithm: Exclude<RunAlgorithm, 'auto'>;
  readonly requestedAlgorithm: RunAlgorithm;
  readonly p: number;
  readonly root: number;
  readonly dist: string;
  readonly b: number;
  readonly unitBytes: number;
  /** Σ counts (elements). */
  readonly size: number;
  readonly persistent: boolean;
  readonly reps: number;
  /** α, β, γ per element of the model the trees were built with (unused when modelKind is set). */
  readonly model: RunCase['model'];
  /** Set when the case's model came as data (`--model-file`): its kind; it replaced `model`. */
  readonly modelKind?: 'linear' | 'pairwise' | 'hierarchical';
  /**
   * The evaluator's time for the data-phase tree in that model (its units: µs when
   * calibrated), plus roundLatency per level of the tree when the case has one.
   */
  readonly predicted: number;
  /** The case's round latency (model units), when it has one (calibrated threads runs). */
  readonly roundLatency?: number;
  /** The slowest rank's time of every timed execution. */
  readonly repTimes: number[];
  /** Persistent only: the planning call (slowest rank), and its traffic. */
  readonly planTime?: number;
  readonly planMessages?: number;
  readonly planBytes?: number;
  /** Simulator only: every message of the whole run (planning, warm-up and repetitions included). */
  readonly simTotalMessages?: number;
  readonly simTotalBytes?: number;
  /** The first differences found (empty when verified). */
  readonly mismatches: string[];
  // `--algorithm hierarchical` only (src/run/hierarchical-job.ts, TraffRougier14):
  /** The library call that ran: 'gather' / 'scatter' (hierarchicalGather / hierarchicalScatter: --dist same, every block b elements) or 'gatherv' / 'scatterv'. */
  readonly collective?: HierarchicalCollective;
  /** The variant (collectives/hierarchical/variants.ts). */
  readonly variant?: HierarchicalVariantName;
  /** The tree of both levels: 'binomial' or 'adaptive' (Traff18's trees). */
  readonly tree?: HierarchicalTreeName;
  /** N: nodes. */
  readonly nodes?: number;
  /** Ranks per node (--per-node; absent when a --model-file places the ranks). */
  readonly perNode?: number;
  /** n_max: ranks on the largest node. */
  readonly largestNode?: number;
  /** How the ranks were placed on nodes. */
  readonly placement?: NodePlacementName;
  /** The two-level model, per element (unitBytes bytes): `model` then holds its inter-node α, β and γ. */
  readonly twoLevel?: TwoLevelParams;
}

/** What every rank reports of a case's executions (RankCaseResult, and the hierarchical run's). */
export interface RankOutcome {
  readonly mismatch: string | undefined;
  readonly times: readonly number[];
  readonly messages: number;
  readonly bytes: number;
}

/**
 * The ranks' results folded: each repetition's time is the slowest rank's (repTimes), the
 * reported time the fastest repetition; traffic summed; the first 8 mismatches.
 */
export function foldRanks(ranks: readonly RankOutcome[], root: number): { verified: boolean; time: number; repTimes: number[]; messages: number; bytes: number; mismatches: string[] } {
  const repTimes = ranks[root].times.map((_, j) => maxOf(ranks, (r) => r.times[j]));
  const mismatches = ranks.flatMap((r) => (r.mismatch === undefined ? [] : [r.mismatch])).slice(0, 8);
  let messages = 0;
  let bytes = 0;
  for (const r of ranks) {
    messages += r.messages;
    bytes += r.bytes;
  }
  return { verified: mismatches.length === 0, time: minOf(repTimes, (t) => t), repTimes, messages, bytes, mismatches };
}

/** Combines the per-rank results of one case. */
export function summarize(transport: TransportName, p: number, c: RunCase, ranks: readonly RankCaseResult[], unit: 'model' | 's'): RunReport {
  const info = ranks[c.root].info;
  const { verified, time, repTimes, messages, bytes, mismatches } = foldRanks(ranks, c.root);
  const sizes = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  const model = caseModel(c);
  const sum = (f: (r: RankCaseResult) => number): number => ranks.reduce((a, r) => a + f(r), 0);
  return {
    verified,
    time,
    timeUnit: unit,
    messages,
    bytes,
    rounds: info.constructionRounds + info.height,
    constructionRounds: info.constructionRounds,
    height: info.height,
    transport,
    op: c.op,
    algorithm: info.algorithm,
    requestedAlgorithm: c.algorithm,
    p,
    root: c.root,
    dist: c.dist,
    b: c.b,
    unitBytes: c.unitBytes,
    size: sizes.reduce((a, x) => a + x, 0),
    persistent: c.persistent,
    reps: c.reps,
    model: c.model,
    ...(c.modelSpec !== undefined ? { modelKind: c.modelSpec.kind } : {}),
    ...(c.roundLatency !== undefined ? { roundLatency: c.roundLatency } : {}),
    predicted: predictTime(info.algorithm, c.op, sizes, model, c.root, c.roundLatency ?? 0),
    repTimes,
    ...(c.persistent
      ? {
          planTime: maxOf(ranks, (r) => r.planTime ?? 0),
          planMessages: sum((r) => r.planMessages),
          planBytes: sum((r) => r.planBytes),
        }
      : {}),
    mismatches,
  };
}

export interface SimRunOptions {
  /** Receives the simulator's trace of the whole run (every message and copy, JSON-ready). */
  readonly onTrace?: (trace: SimTrace) => void;
  /** The simulator's progress, about every 250 ms of wall time and once at the end (SimOptions.progress). */
  readonly onProgress?: (p: SimProgress) => void;
}

/** Runs one case on the virtual-time simulator with the case's model (per element of unitBytes bytes). */
export async function runOnSim(p: number, c: RunCase, options: SimRunOptions = {}): Promise<RunReport> {
  validateCase(p, c);
  checkSimRanks(p); // before the shared data is built
  // every rank's block and own buffer are views of one reference and one arena (O(total bytes))
  const shared = sharedCaseData(sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed }), c.unitBytes);
  const sim = await runSim(p, (comm) => runCaseOnRank(comm, c, VIRTUAL_TIMER, shared), {
    model: caseModel(c),
    unitBytes: c.unitBytes,
    trace: options.onTrace !== undefined,
    progress: options.onProgress,
  });
  if (options.onTrace !== undefined && sim.trace !== undefined) options.onTrace(sim.trace);
  return { ...summarize('sim', p, c, sim.results, 'model'), simTotalMessages: sim.messages, simTotalBytes: sim.bytes };
}

const PROGRAM_URL = new URL(import.meta.url.endsWith('.ts') ? './threads-program.ts' : './threads-program.js', import.meta.url);

export interface ThreadsRunOptions {
  /** Calibrate α, β, γ first and build every case's trees (and prediction) with them, µs. */
  readonly calibrate?: CalibrationOptions;
  readonly threads?: RunThreadsOptions;
  /** Run on MPI processes started by mpirun (runMpi) instead of worker threads. */
  readonly mpi?: RunMpiOptions | boolean;
}

export interface ThreadsRunResult {
  readonly calibration: Calibration | undefined;
  readonly reports: RunReport[];
}

/**
 * Runs cases, in order, on p worker threads (one start-up for all of them), or on p MPI
 * processes (`options.mpi`: one mpirun for all of them; the same rank program).
 */
export async function runOnThreads(p: number, cases: readonly RunCase[], options: ThreadsRunOptions = {}): Promise<ThreadsRunResult> {
  if (p < 2 && options.calibrate) throw new InvalidArgumentError('p', 'calibration needs at least 2 ranks');
  const transport: TransportName = options.mpi === undefined || options.mpi === false ? 'threads' : 'mpi';
  for (const c of cases) checkCaseResources(transport, p, validateCase(p, c));
  const args: ThreadsJobArgs = { cases, calibrate: options.calibrate };
  const mpi = options.mpi;
  const ranks =
    mpi === undefined || mpi === false
      ? await runThreads<ThreadsJobRankResult>(p, PROGRAM_URL, args, options.threads)
      : await runMpi<ThreadsJobRankResult>(p, PROGRAM_URL, args, mpi === true ? {} : mpi);
  const calibration = ranks[0].calibration;
  const reports = cases.map((c, i) => {
    const run = calibration ? calibratedCase(c, calibration) : c;
    return summarize(transport, p, run, ranks.map((r) => r.results[i]), 's');
  });
  return { calibration, reports };
}

export interface RunCaseOptions extends SimRunOptions {
  /** Threads and MPI only: calibrate the model on the ranks first (α, β, γ in µs, round latency). */
  readonly calibrate?: CalibrationOptions;
}

/** One case on one transport; its resources are checked first (TooLargeError before any work: src/run/case-limits.ts). */
export async function runCase(transport: TransportName, p: number, c: RunCase, options: RunCaseOptions = {}): Promise<RunReport> {
  validateCase(p, c);
  checkCaseResources(transport, p, c);
  if (transport === 'sim') {
    if (options.calibrate !== undefined) throw new InvalidArgumentError('calibrate', 'only on threads or MPI (the simulator runs the given model)');
    return runOnSim(p, c, options);
  }
  if (options.onTrace !== undefined) throw new InvalidArgumentError('trace', 'only on the simulator');
  const mpi = transport === 'mpi';
  return (await runOnThreads(p, [c], options.calibrate === undefined ? { mpi } : { calibrate: options.calibrate, mpi })).reports[0];
}
