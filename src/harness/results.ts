/**
 * The data of `vcoll bench` (Traff18 §5's method): what a run measured, as the JSON file it writes and
 * `vcoll guidelines` / `vcoll report` read back. Plain data (no classes), versioned by
 * `schema`; every field is a contract for scripts.
 *
 * Method (Traff18 §5): `warmup` untimed executions, then `reps` timed ones, the processes
 * synchronised by a barrier before each; an execution's time is its slowest process's.
 */
import type { DistributionName } from '../workloads/distributions.js';
import type { InterReport } from '../run/inter.js';
import type { TransportName, VOperation } from '../run/spec.js';

export const RESULTS_SCHEMA = 'vcoll-bench/1';

/** 's': measured seconds (threads, MPI); 'model': the simulator's virtual time in model units. */
export type TimeUnit = 's' | 'model';

/** Summary of one sample of times (its unit). */
export interface SampleStats {
  readonly n: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly median: number;
  /** Quartiles (linear interpolation between order statistics, as R's type 7). */
  readonly q1: number;
  readonly q3: number;
  /** Sample standard deviation (n − 1 in the denominator; 0 for n = 1). */
  readonly stddev: number;
}

/**
 * What a row measured: one of the irregular operation's algorithms, or one of the two
 * guideline references (Traff18 §4) for the same case:
 *   'gl1'  the regular operation of the case's largest block, gather(m) / scatter(m) — on
 *          `same` blocks this is GL1's left side;
 *   'gl2'  GL2's mock-up: allreduce of one number (the largest block) and the regular
 *          gather / scatter of blocks padded to it, i.e. allreduce(1) + gather(p·max m_i).
 */
export type RowKind = 'algorithm' | 'gl1' | 'gl2';

export interface BenchRow {
  /** The irregular operation the row belongs to (a reference row: the one it is a reference for). */
  readonly op: VOperation;
  readonly kind: RowKind;
  /** What the plots and tables call it: the algorithm, 'gather(m)', 'allreduce + gather(p·max)', … */
  readonly name: string;
  /** The algorithm that ran ('auto' resolved); for reference rows the regular collectives' variant ('vcoll' or 'mpi-native'). */
  readonly algorithm: string;
  readonly dist: DistributionName;
  /** Average block size (elements). */
  readonly b: number;
  readonly p: number;
  readonly root: number;
  /** Σ counts (elements). */
  readonly size: number;
  /** The largest block (elements). */
  readonly maxBlock: number;
  /** Every execution left every rank's data equal to the reference, byte for byte. */
  readonly verified: boolean;
  readonly mismatches: readonly string[];
  /** The slowest process's time of each timed execution (timeUnit). */
  readonly times: readonly number[];
  readonly stats: SampleStats;
  /**
   * The cost model's prediction for this row (timeUnit), when there is one: the exact
   * evaluator's completion time of the data-phase tree (src/run/predict.ts) in the model of
   * the run (the given one on the simulator, the calibrated one on threads and MPI). It covers
   * the data phase only: on the simulator a persistent row (plan once, time the data phase)
   * takes exactly this time, as does a non-persistent linear one; algorithms with a
   * construction or schedule phase take longer when not persistent.
   */
  readonly predicted?: number;
  /**
   * What `predicted` covers: 'whole' — everything that was timed (persistent rows, and
   * algorithms without a construction or schedule phase: CollectiveInfo.constructionRounds
   * = 0), so on the simulator the row's time equals it; 'data' — the data phase only, the
   * row's time also holds a construction phase the model does not predict.
   */
  readonly predictedCovers?: 'whole' | 'data';
  /** Point-to-point messages and bytes of one execution, summed over the processes. */
  readonly messages: number;
  readonly bytes: number;
}

export type Guideline = 'GL1' | 'GL2';

/**
 * A guideline evaluated on one case (Traff18 §4, checked as PGChecker does): the left side
 * should not be slower than the right side. It is violated when a one-sided Wilcoxon rank-sum
 * (Mann–Whitney U) test finds the left side's times significantly larger than the right
 * side's at level `alpha`.
 *   GL1 gatherv: gather(m) ≤ gatherv(m) on `same` blocks (left: the regular operation,
 *                right: an algorithm of the irregular one); scatterv: scatter(m) ≤ scatterv(m)
 *   GL2 gatherv: gatherv(m) ≤ allreduce(1) + gather(p·max m_i) (left: an algorithm, right:
 *                the mock-up); scatterv: scatterv(m) ≤ allreduce(1) + scatter(p·max m_i)
 */
export interface GuidelineVerdict {
  readonly guideline: Guideline;
  readonly op: VOperation;
  /** The irregular operation's algorithm the guideline was evaluated for. */
  readonly algorithm: string;
  readonly dist: DistributionName;
  readonly b: number;
  readonly p: number;
  /** Names of the two sides (as in BenchRow.name). */
  readonly lhs: string;
  readonly rhs: string;
  readonly lhsMedian: number;
  readonly rhsMedian: number;
  /** lhsMedian / rhsMedian (> 1: the left side is slower). */
  readonly ratio: number;
  /** Mann–Whitney U of the left sample against the right one. */
  readonly u: number;
  /** One-sided p-value of "the left side is slower" (normal approximation, tie-corrected, continuity-corrected). */
  readonly pValue: number;
  readonly alpha: number;
  readonly verdict: 'held' | 'violated';
}

/** The configuration a bench ran with, recorded whole in its results. */
export interface BenchConfig {
  readonly transport: TransportName;
  readonly ops: readonly VOperation[];
  /** Algorithms of the irregular operations (as requested; rows hold the resolved ones). */
  readonly algorithms: readonly string[];
  readonly dists: readonly DistributionName[];
  readonly bs: readonly number[];
  readonly ps: readonly number[];
  readonly reps: number;
  readonly warmup: number;
  readonly root: number;
  readonly unitBytes: number;
  readonly rho: number;
  readonly seed: number;
  /** α, β, γ per element: the model trees are built for (and the simulator charges). */
  readonly model: { readonly alpha: number; readonly beta: number; readonly gamma: number };
  /** Threads and MPI: α, β, γ fitted to the transport first (trees and predictions use them). */
  readonly calibrate: boolean;
  /** Plan once (*Init) and time the data phase only. */
  readonly persistent: boolean;
  /** Which regular collectives the guideline references use ('none': no reference rows, no verdicts). */
  readonly references: 'vcoll' | 'mpi-native' | 'none';
  /** Significance level of the guideline tests. */
  readonly alpha: number;
  /** Kang19's intergroup settings (1–8) run besides, with their sizes and rank counts (empty: none). */
  readonly interSettings: readonly number[];
  /** Bytes per rank of the larger block, for the intergroup settings. */
  readonly interSizes: readonly number[];
  /** p + q of the intergroup runs. */
  readonly interRanks: readonly number[];
}

/**
 * One intergroup case of Kang19 (src/run/inter-settings.ts): root gathering against the
 * paper's Algorithm 1 (allgather, settings 1–4) or Algorithm 2 (allgatherv, 5–8), as in its
 * Figs. 4–6: the fields of `vcoll inter`'s report (src/run/inter.ts: size = bytes per rank of
 * the larger block, ratio = rootGathering / algorithm, expected = Eq. (5)). Times are each
 * algorithm's minimum over the repetitions of the slowest rank, in the results' timeUnit.
 */
export type InterRow = Pick<InterReport, 'setting' | 'p' | 'q' | 'size' | 'kA' | 'kB' | 'rootGathering' | 'algorithm' | 'ratio' | 'expected' | 'verified'> & {
  /** p + q. */
  readonly ranks: number;
};

export interface BenchEnvironment {
  readonly node: string;
  readonly platform: string;
  readonly host: string;
  readonly cpus: number;
  /** The MPI library's version string (MPI transport). */
  readonly library?: string;
}

/** The model fitted to the transport (`calibrate`), per element of unitBytes bytes, µs. */
export interface BenchCalibration {
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  readonly unit: 'µs';
}

/**
 * Guideline references left out of a simulated run at one p because they would not fit in
 * memory beside the algorithms (src/harness/bench-limits.ts; the CLI with --references left
 * at its default). That p's cases have no reference rows and no GL1/GL2 verdicts.
 */
export interface ReferencesDropped {
  readonly p: number;
  /** The references' row names, e.g. 'allreduce + gather(p·max)'. */
  readonly references: readonly string[];
  /** Why: the estimate and the limit it exceeds. */
  readonly reason: string;
  /** The largest p (estimated; 0: none) at which they fit beside the algorithms: 'all references' together, and each reference (row name) alone. */
  readonly largestP: Readonly<Record<string, number>>;
}

export interface BenchResults {
  readonly schema: typeof RESULTS_SCHEMA;
  /** ISO date of the run. */
  readonly created: string;
  readonly config: BenchConfig;
  readonly environment: BenchEnvironment;
  readonly timeUnit: TimeUnit;
  /** The first process count's calibration (see `calibrations`). */
  readonly calibration?: BenchCalibration;
  /** Every process count's calibration (the model of that p's trees and predictions), in the order of config.ps. */
  readonly calibrations?: readonly (BenchCalibration & { readonly p: number })[];
  readonly rows: readonly BenchRow[];
  readonly verdicts: readonly GuidelineVerdict[];
  /** Algorithms left out of a case because they cannot run its block sizes (two-block: at most two sizes). */
  readonly skipped: readonly { readonly op: VOperation; readonly algorithm: string; readonly dist: DistributionName; readonly b: number; readonly p: number; readonly reason: string }[];
  /** Kang19's intergroup cases, when the run had any. */
  readonly inter: readonly InterRow[];
  /** Seconds the run took. */
  readonly seconds: number;
  /** Present when references were left out at some p (simulator, memory): where and why. */
  readonly referencesDropped?: readonly ReferencesDropped[];
}
