/**
 * `vcoll bench` (Traff18 §5's method): operations × algorithms × distributions × block sizes × process
 * counts on one transport, by Traff18 §5's method (10 warm-ups, 75 repetitions, a barrier
 * before each execution, time = the slowest process), with GL1/GL2's references measured
 * beside every case and the guidelines judged on the samples (src/harness/guidelines.ts).
 *
 * The configuration is checked whole before any work starts (typed errors naming the field).
 * Work is split per process count and (operation, distribution): one start-up of the transport
 * runs every b of such a group (worker threads: one pool; MPI: one mpirun), so progress can be
 * reported between groups. On threads and MPI the model is first fitted to the transport
 * (`calibrate`, α, β, γ in µs, on the first group of each process count) and every tree and
 * prediction then uses it; the simulator runs the given model and its numbers are exact.
 */
import { hostname, cpus } from 'node:os';
import { MPI_NATIVE, type VAlgorithm } from '../collectives/types.js';
import { V_ALGORITHMS } from '../collectives/v-variants.js';
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import { treeOfAlgorithm } from '../run/case-limits.js';
import { checkRunData, checkSeconds, resourceLimits, runDataCopies, treeSeconds, type ResourceLimits } from '../util/limits.js';
import { treeLimit } from '../trees/registry.js';
import { linearModel, type CostModel } from '../model/cost-model.js';
import { predictTime } from '../run/predict.js';
import { integerIn, nonNegative, V_OPERATIONS, TRANSPORTS, type RunCase, type VOperation } from '../run/spec.js';
import { calibratedCase, calibratedModel } from '../run/threads-program.js';
import type { Calibration } from '../run/calibrate.js';
import { runSim } from '../transports/sim/index.js';
import { runThreads, type RunThreadsOptions } from '../transports/threads/index.js';
import { loadMpiBinding } from '../transports/mpi/binding.js';
import { runMpi, type RunMpiOptions } from '../transports/mpi/run.js';
import benchProgram, {
  BenchCollector,
  MISMATCHES_KEPT,
  type BenchProgramArgs,
  type BenchProgramCase,
  type BenchRankResult,
  type BenchVariant,
  type BenchVariantTotals,
} from './bench-program.js';
import { notApplicable } from '../run/applicable.js';
import { blockSizes, DISTRIBUTIONS, parseDistribution, sharedBlockSizes, type DistributionName } from '../workloads/distributions.js';
import { evaluateGuidelines } from './guidelines.js';
import { BENCH_DEFAULTS } from './bench-defaults.js';
import { RESULTS_SCHEMA, type BenchCalibration, type BenchConfig, type BenchResults, type BenchRow, type InterRow, type ReferencesDropped, type RowKind } from './results.js';
import { ALL_REFERENCES, planSimBenchMemory, referencesOf, type ReferencePlan } from './bench-limits.js';
import { runInter } from '../run/inter.js';
import { INTER_SETTINGS, type InterSettingNumber } from '../run/inter-settings.js';
import { sampleStats } from './stats.js';
import { maxOf } from '../util/extremes.js';

/** The largest process count of a bench run on threads or MPI (worker threads, mpirun -np). */
export const BENCH_MAX_P = 4096;
/** The largest process count of a bench run on the simulator (2^20 ranks; memory is checked besides). */
export const BENCH_SIM_MAX_P = 2 ** 20;

function nonEmpty<T>(field: string, xs: readonly T[]): readonly T[] {
  if (!Array.isArray(xs) || xs.length === 0) throw new InvalidArgumentError(field, 'must list at least one value');
  return xs;
}

/**
 * The configuration checked whole (every list non-empty, every name known, b ≥ 1, p ≥ 1, the
 * root below every p, MPI-only choices only over MPI): an InvalidArgumentError naming the
 * field, before any work starts.
 */
export function validateBenchConfig(c: BenchConfig): BenchConfig {
  if (!TRANSPORTS.includes(c.transport)) throw new InvalidArgumentError('transport', `must be one of ${TRANSPORTS.join(', ')}, got "${String(c.transport)}"`);
  if (c.ops.length === 0 && c.interSettings.length === 0) throw new InvalidArgumentError('ops', 'must list at least one operation (or run intergroup settings)');
  for (const op of c.ops) {
    if (!V_OPERATIONS.includes(op)) throw new InvalidArgumentError('ops', `unknown operation "${String(op)}" (known: ${V_OPERATIONS.join(', ')})`);
  }
  for (const a of nonEmpty('algorithms', c.algorithms)) {
    if (!(V_ALGORITHMS as readonly string[]).includes(a)) throw new InvalidArgumentError('algorithms', `unknown algorithm "${a}" (known: ${V_ALGORITHMS.join(', ')})`);
    if (a === MPI_NATIVE && c.transport !== 'mpi') throw new InvalidArgumentError('algorithms', `"${MPI_NATIVE}" is the MPI library's own collective: it needs --transport mpi`);
  }
  for (const d of nonEmpty('dists', c.dists)) {
    if (!(DISTRIBUTIONS as readonly string[]).includes(d)) parseDistribution(String(d), 'dists');
  }
  for (const b of nonEmpty('b', c.bs)) integerIn('b', b, 1);
  for (const p of nonEmpty('p', c.ps)) integerIn('p', p, 1, c.transport === 'sim' ? BENCH_SIM_MAX_P : BENCH_MAX_P);
  integerIn('reps', c.reps, 1);
  integerIn('warmup', c.warmup, 0);
  integerIn('root', c.root, 0);
  const minP = Math.min(...c.ps);
  if (c.root >= minP) throw new InvalidArgumentError('root', `must be a rank of every run: below the smallest p (${minP}), got ${c.root}`);
  integerIn('unit-bytes', c.unitBytes, 1, 1 << 20);
  integerIn('rho', c.rho, 1);
  integerIn('seed', c.seed, -(2 ** 31), 2 ** 31 - 1);
  for (const k of ['alpha', 'beta', 'gamma'] as const) nonNegative(`model.${k}`, c.model[k]);
  if (!['vcoll', MPI_NATIVE, 'none'].includes(c.references)) {
    throw new InvalidArgumentError('references', `must be vcoll, mpi-native or none, got "${String(c.references)}"`);
  }
  if (c.references === MPI_NATIVE && c.transport !== 'mpi') throw new InvalidArgumentError('references', `"${MPI_NATIVE}" needs --transport mpi`);
  if (c.calibrate && c.transport === 'sim') throw new InvalidArgumentError('calibrate', 'only on threads or MPI (the simulator runs the given model)');
  if (c.calibrate && minP < 2) throw new InvalidArgumentError('calibrate', 'needs at least 2 processes in every run (or --no-calibrate)');
  if (!(typeof c.alpha === 'number' && c.alpha > 0 && c.alpha < 1)) throw new InvalidArgumentError('significance', `must be in (0, 1), got ${String(c.alpha)}`);
  if (c.interSettings.length > 0) {
    if (c.transport === 'mpi') throw new InvalidArgumentError('inter-settings', 'the intergroup settings run on the simulator or on threads, not over MPI (yet)');
    for (const s of c.interSettings) {
      if (!(INTER_SETTINGS as readonly number[]).includes(s)) throw new InvalidArgumentError('inter-settings', `must be settings among 1…8, got ${String(s)}`);
    }
    for (const x of nonEmpty('inter-sizes', c.interSizes)) integerIn('inter-sizes', x, 1);
    for (const x of nonEmpty('inter-ranks', c.interRanks)) integerIn('inter-ranks', x, 2, 4096);
  }
  return c;
}

export interface BenchRunOptions {
  /** Called after every group of cases: cases done, cases in all, what finished. */
  readonly onProgress?: (done: number, total: number, label: string) => void;
  /**
   * On the simulator, guideline references that would not fit in memory at some p beside the
   * algorithms (src/harness/bench-limits.ts): 'refuse' (default) throws TooLargeError('references')
   * before any work; 'drop' leaves them out at those p, says so through `onNote` and in the
   * results' `referencesDropped` (the CLI's choice when --references was not given).
   */
  readonly referencesTooLarge?: 'refuse' | 'drop';
  /** Called with what the run decided that the user should know (a sentence, no trailing newline), before any work. */
  readonly onNote?: (text: string) => void;
  readonly threads?: RunThreadsOptions;
  readonly mpi?: RunMpiOptions;
}

const PROGRAM_URL = new URL(import.meta.url.endsWith('.ts') ? './bench-program.ts' : './bench-program.js', import.meta.url);

/** What the plots and tables call a reference row. */
export function referenceName(op: VOperation, kind: Exclude<RowKind, 'algorithm'>, references: 'vcoll' | 'mpi-native'): string {
  const native = references === MPI_NATIVE;
  const regular = op === 'gatherv' ? (native ? 'MPI_Gather' : 'gather') : native ? 'MPI_Scatter' : 'scatter';
  if (kind === 'gl1') return `${regular}(m)`;
  return `${native ? 'MPI_Allreduce' : 'allreduce'} + ${regular}(p·max)`;
}

/**
 * The variants of one case: the algorithms that can run its block sizes (the others go to
 * `skipped`), then GL1's regular operation (on `same` only) and GL2's mock-up.
 */
function variantsOf(c: BenchConfig, sizes: readonly number[], dist: DistributionName, skip: (algorithm: string, reason: string) => void, withReferences = true): BenchVariant[] {
  const vs: BenchVariant[] = [];
  for (const a of c.algorithms) {
    const why = notApplicable(a as VAlgorithm, sizes);
    if (why === undefined) vs.push({ kind: 'algorithm', algorithm: a as VAlgorithm });
    else skip(a, why);
  }
  if (c.references !== 'none' && withReferences) {
    if (dist === 'same') vs.push({ kind: 'gl1', variant: c.references });
    vs.push({ kind: 'gl2', variant: c.references });
  }
  return vs;
}

function baseCase(c: BenchConfig, op: VOperation, dist: DistributionName, b: number): RunCase {
  return {
    op,
    algorithm: 'linear',
    dist,
    b,
    rho: c.rho,
    seed: c.seed,
    root: c.root,
    unitBytes: c.unitBytes,
    model: { ...c.model },
    persistent: c.persistent,
    reps: c.reps,
    warmup: c.warmup,
  };
}

/** A group's results: every rank's calibration (the same on all) and each case's variant totals. */
interface GroupResults {
  readonly calibration: Calibration | undefined;
  totals(ci: number, vi: number): BenchVariantTotals;
}

/** The totals of variant vi of case ci from every rank's results (threads, MPI). */
function totalsOfRanks(ranks: readonly BenchRankResult[], ci: number, vi: number, root: number): BenchVariantTotals {
  const per = ranks.map((r) => r.results[ci][vi]);
  const mismatches: string[] = [];
  for (const r of per) {
    if (mismatches.length >= MISMATCHES_KEPT) break;
    if (r.mismatch !== undefined) mismatches.push(r.mismatch);
  }
  return {
    times: per[0].times.map((_, j) => maxOf(per, (r) => r.times[j])),
    mismatches,
    messages: per.reduce((a, r) => a + r.messages, 0),
    bytes: per.reduce((a, r) => a + r.bytes, 0),
    info: per[root].info,
  };
}

/**
 * One start-up of the transport for a group of cases. On the simulator the ranks share this
 * process: their results are folded as they finish (BenchCollector) and the algorithms' blocks
 * are views of one shared buffer per case — O(p) per group, not O(p) per rank.
 */
async function runGroup(c: BenchConfig, p: number, args: BenchProgramArgs, options: BenchRunOptions): Promise<GroupResults> {
  if (c.transport === 'sim') {
    const model: CostModel = linearModel(c.model);
    const collector = new BenchCollector(args.cases);
    await runSim(p, (comm) => benchProgram(comm, args, { collector, sharedData: true }), { model, unitBytes: c.unitBytes });
    return { calibration: undefined, totals: (ci, vi) => collector.totals(ci, vi) };
  }
  const ranks =
    c.transport === 'threads' ? await runThreads<BenchRankResult>(p, PROGRAM_URL, args, options.threads) : await runMpi<BenchRankResult>(p, PROGRAM_URL, args, options.mpi);
  return { calibration: ranks[0].calibration, totals: (ci, vi) => totalsOfRanks(ranks, ci, vi, args.cases[ci].base.root) };
}

/** Rows of one case from its variants' totals over the ranks. */
function rowsOf(p: number, bc: BenchProgramCase, group: GroupResults, ci: number, model: RunCase['model'], roundLatency: number, scale: number | undefined): BenchRow[] {
  const base = bc.base;
  const sizes = sharedBlockSizes(base.dist, { p, b: base.b, rho: base.rho, seed: base.seed });
  let size = 0;
  for (const x of sizes) size += x;
  const maxBlock = Math.max(0, maxOf(sizes, (x) => x));
  return bc.variants.map((v, vi) => {
    const { times, mismatches, messages, bytes, info: rootInfo } = group.totals(ci, vi);
    const common = {
      op: base.op,
      dist: base.dist,
      b: base.b,
      p,
      root: base.root,
      size,
      maxBlock,
      verified: mismatches.length === 0,
      mismatches,
      times,
      stats: sampleStats(times),
      messages,
      bytes,
    };
    if (v.kind !== 'algorithm') {
      return { ...common, kind: v.kind, name: referenceName(base.op, v.kind, v.variant), algorithm: v.variant };
    }
    const info = rootInfo;
    const resolved = info?.algorithm ?? (v.algorithm === 'auto' ? 'linear' : v.algorithm);
    const row: BenchRow = { ...common, kind: 'algorithm', name: v.algorithm, algorithm: resolved };
    if (scale === undefined) return row;
    const whole = base.persistent || (info !== undefined && info.constructionRounds === 0);
    return {
      ...row,
      predicted: predictTime(resolved, base.op, sizes, linearModel(model), base.root, roundLatency) * scale,
      predictedCovers: whole ? 'whole' : 'data',
    };
  });
}

/** Runs the benchmark `config` (validated first) and judges the guidelines on its samples. */
export { BENCH_DEFAULTS };

/**
 * The benchmark's resources before any work (src/util/limits.ts): every case's data
 * (Σ counts × unit bytes × copies), each tree algorithm's p limit and the estimated time of
 * building its trees (once per execution unless persistent), over all cases: TooLargeError.
 */
export function checkBenchResources(c: BenchConfig): void {
  const model = linearModel(c.model);
  let seconds = 0;
  for (const p of c.ps) {
    const copies = Math.max(...c.algorithms.map((a) => runDataCopies(p, a)));
    for (const dist of c.dists) {
      for (const b of c.bs) {
        const sizes = blockSizes(dist, { p, b, rho: c.rho, seed: c.seed });
        checkRunData('b', sizes.reduce((x, y) => x + y, 0), c.unitBytes, copies);
      }
    }
    for (const a of c.algorithms) {
      const tree = treeOfAlgorithm(a as VAlgorithm);
      if (tree === undefined) continue;
      const limit = treeLimit(tree, model);
      if (limit !== undefined && p > limit) throw new TooLargeError('p', `${p} > ${limit}, the largest p of the '${tree}' tree (--algorithms ${a})`);
      const builds = (c.persistent ? 1 : c.reps + c.warmup) * c.ops.length * c.dists.length * c.bs.length;
      seconds += treeSeconds(tree, p, builds);
    }
  }
  checkSeconds('p', seconds, `building the trees of ${c.algorithms.join(', ')} for every case`);
}

/**
 * On the simulator, the memory of every p (src/harness/bench-limits.ts) before any work: the
 * algorithms alone too large → TooLargeError('p'); the guideline references too large beside
 * them → TooLargeError('references') naming each with the largest p it fits at ('refuse'), or
 * the p where they are left out and why ('drop'). Elsewhere (threads, MPI: p ≤ 4096) nothing.
 */
export function checkSimBenchMemory(c: BenchConfig, referencesTooLarge: 'refuse' | 'drop' = 'refuse', limits: ResourceLimits = resourceLimits()): ReferencesDropped[] {
  if (c.transport !== 'sim') return [];
  const refs = referencesOf(c, (op, kind) => referenceName(op, kind, c.references === MPI_NATIVE ? MPI_NATIVE : 'vcoll'));
  const dropped: ReferencesDropped[] = [];
  for (const plan of planSimBenchMemory(c, refs, limits)) {
    if (plan.tooLarge === undefined) continue;
    const together = plan.tooLarge.largestP.get(ALL_REFERENCES) ?? 0;
    const alone = [...plan.tooLarge.largestP]
      .filter(([name]) => name !== ALL_REFERENCES)
      .map(([name, p]) => `${name} up to p = ${p}`)
      .join(', ');
    if (referencesTooLarge === 'refuse') {
      throw new TooLargeError(
        'references',
        `at p = ${plan.p} ${plan.tooLarge.reason}. Beside --algorithms ${c.algorithms.join(',')} the guideline references fit up to p = ${together} together (alone: ${alone}). ` +
          'Pass --references none to run without them (no GL1/GL2 verdicts; the option takes vcoll, mpi-native or none, not a list of references), or bench them in a run of smaller p',
      );
    }
    dropped.push({ p: plan.p, references: plan.references.map((r) => r.name), reason: plan.tooLarge.reason, largestP: Object.fromEntries(plan.tooLarge.largestP) });
  }
  return dropped;
}

/**
 * The JavaScript heap a bench run on the simulator needs (bytes; the largest over its p, with
 * the references where they fit), were V8's heap allowed the whole memory limit
 * (VCOLL_MAX_MEMORY): what `vcoll bench` raises Node's heap to (src/cli/heap-rerun.ts).
 * Undefined off the simulator, or when the configuration or its memory is refused anyway (the
 * run then says why).
 */
export function simBenchHeapBytes(config: BenchConfig, limits: ResourceLimits = resourceLimits()): number | undefined {
  let c: BenchConfig;
  try {
    c = validateBenchConfig(config);
  } catch {
    return undefined;
  }
  if (c.transport !== 'sim') return undefined;
  const refs = referencesOf(c, (op, kind) => referenceName(op, kind, c.references === MPI_NATIVE ? MPI_NATIVE : 'vcoll'));
  let plans: ReferencePlan[];
  try {
    plans = planSimBenchMemory(c, refs, { ...limits, heapBytes: limits.memoryBytes });
  } catch {
    return undefined;
  }
  return Math.max(0, ...plans.map((pl) => (pl.tooLarge === undefined && pl.references.length > 0 ? pl.memory.heapWithReferences : pl.memory.heap)));
}

export async function runBench(config: BenchConfig, options: BenchRunOptions = {}): Promise<BenchResults> {
  const c = validateBenchConfig(config);
  checkBenchResources(c);
  const dropped = checkSimBenchMemory(c, options.referencesTooLarge);
  for (const d of dropped) {
    options.onNote?.(`the guideline references (${d.references.join(', ')}) are left out at p = ${d.p}: ${d.reason}; no GL1/GL2 verdicts there (they fit up to p = ${d.largestP[ALL_REFERENCES]}; --references none leaves them out without this note)`);
  }
  const droppedAt = new Set(dropped.map((d) => d.p));
  // Over MPI, a binding that is not built is said before anything runs (UnavailableError, how to build it).
  if (c.transport === 'mpi') loadMpiBinding();
  const t0 = performance.now();
  const groups: { p: number; op: VOperation; dist: DistributionName }[] = [];
  for (const p of c.ps) for (const op of c.ops) for (const dist of c.dists) groups.push({ p, op, dist });
  const total = groups.length * c.bs.length;
  let done = 0;
  const rows: BenchRow[] = [];
  const skipped: BenchResults['skipped'][number][] = [];
  const calibrations = new Map<number, Calibration>();
  for (const g of groups) {
    const known = calibrations.get(g.p);
    const cases: BenchProgramCase[] = c.bs.map((b) => {
      const base = baseCase(c, g.op, g.dist, b);
      const sizes = sharedBlockSizes(g.dist, { p: g.p, b, rho: c.rho, seed: c.seed });
      const variants = variantsOf(c, sizes, g.dist, (algorithm, reason) => skipped.push({ op: g.op, algorithm, dist: g.dist, b, p: g.p, reason }), !droppedAt.has(g.p));
      return { base: known ? calibratedCase(base, known) : base, variants };
    });
    const needCalibration = c.calibrate && known === undefined;
    const args: BenchProgramArgs = { cases, timer: c.transport === 'sim' ? 'virtual' : 'wall', ...(needCalibration ? { calibrate: {} } : {}) };
    const group = await runGroup(c, g.p, args, options);
    const cal = known ?? group.calibration;
    if (cal !== undefined) calibrations.set(g.p, cal);
    // Predictions in the run's time unit: model units on the simulator; calibrated µs → s.
    const model = cal ? calibratedModel(cal, c.unitBytes) : c.model;
    // Without calibration on a real transport there is no model in seconds: no predictions.
    const scale = cal ? 1e-6 : c.transport === 'sim' ? 1 : undefined;
    cases.forEach((bc, ci) => rows.push(...rowsOf(g.p, bc, group, ci, model, cal?.roundUs ?? 0, scale)));
    done += cases.length;
    options.onProgress?.(done, total, `p = ${g.p} ${g.op} ${g.dist}`);
  }
  const inter: InterRow[] = [];
  for (const setting of c.interSettings) {
    for (const ranks of c.interRanks) {
      for (const size of c.interSizes) {
        const r = await runInter({
          transport: c.transport === 'sim' ? 'sim' : 'threads',
          setting: setting as InterSettingNumber,
          ranks,
          size,
          alpha: c.model.alpha,
          beta: c.model.beta / c.unitBytes,
          warmup: c.warmup,
          reps: c.reps,
        });
        inter.push({ setting: r.setting, ranks, p: r.p, q: r.q, size, kA: r.kA, kB: r.kB, rootGathering: r.rootGathering, algorithm: r.algorithm, ratio: r.ratio, expected: r.expected, verified: r.verified });
        options.onProgress?.(done, total, `intergroup setting ${setting}, ${ranks} ranks, ${size} B`);
      }
    }
  }
  const perP = [...calibrations.entries()].map(([p, k]) => ({ p, alpha: k.alphaUs, beta: k.betaUs * c.unitBytes, gamma: k.gammaUs * c.unitBytes, unit: 'µs' as const }));
  const calibration: BenchCalibration | undefined = perP.length === 0 ? undefined : { alpha: perP[0].alpha, beta: perP[0].beta, gamma: perP[0].gamma, unit: 'µs' };
  return {
    schema: RESULTS_SCHEMA,
    created: new Date().toISOString(),
    config: c,
    environment: { node: process.version, platform: `${process.platform} ${process.arch}`, host: hostname(), cpus: cpus().length },
    timeUnit: c.transport === 'sim' ? 'model' : 's',
    ...(calibration ? { calibration, calibrations: perP } : {}),
    rows,
    verdicts: c.references === 'none' ? [] : evaluateGuidelines(rows, c.alpha),
    skipped,
    inter,
    seconds: (performance.now() - t0) / 1000,
    ...(dropped.length > 0 ? { referencesDropped: dropped } : {}),
  };
}
