/**
 * `vcoll run`: one gatherv or scatterv on one transport (the virtual-time simulator or worker
 * threads), verified byte for byte on every rank, timed, with its traffic and the model's
 * prediction. JSON output is one object (the contract of RunReport in src/run/job.ts).
 * `--algorithm hierarchical` runs the hierarchical gather(v) of TraffRougier14, or its mirror the
 * scatter(v), instead (src/run/hierarchical-case.ts, hierarchical-job.ts): ranks on nodes
 * (--per-node, --placement), a variant (--hier-variant), a tree (--hier-tree), a two-level model;
 * with --persistent, the gatherv or scatterv planned once (hierarchicalGathervInit /
 * hierarchicalScattervInit) and only its start() timed.
 */
import { writeFileSync } from 'node:fs';
import Table from 'cli-table3';
import { parseDistribution } from '../workloads/distributions.js';
import { requiresNative, type VAlgorithm } from '../collectives/types.js';
import type { HierarchicalTreeName, HierarchicalVariantName } from '../collectives/hierarchical/index.js';
import { CommunicationError, InvalidArgumentError, UnavailableError, VcollError } from '../errors.js';
import { checkCaseResources, checkCaseTree, checkHierarchicalResources, simCaseRankBytes, simHierarchicalRankBytes } from '../run/case-limits.js';
import { hierarchicalCase, type HierarchicalRunCase } from '../run/hierarchical-case.js';
import { runHierarchicalCase } from '../run/hierarchical-job.js';
import { runCase, type RunReport } from '../run/job.js';
import { rememberSpecModel, validateCase, type CaseBlocks, type NodePlacement, type RunAlgorithm, type RunCase, type TransportName, type VOperation } from '../run/spec.js';
import type { SimTrace } from '../transports/sim/index.js';
import { readModelFile } from './model-file.js';
import { checkOutputPath } from './options.js';
import { heapToRaise } from '../util/limits.js';
import { PROGRESS_AFTER_MS, type ProgressStream, SimProgressBar } from './sim-progress-bar.js';

export interface RunCommandOptions {
  transport: TransportName;
  p: number;
  op: VOperation;
  algorithm: RunAlgorithm;
  dist: string;
  b: number;
  rho: number;
  root: number;
  alpha: number;
  beta: number;
  gamma: number;
  /** Ports per processor of the model (default 1). */
  ports?: number;
  unitBytes: number;
  seed: number;
  persistent: boolean;
  reps: number;
  warmup?: number;
  format: 'json' | 'table';
  /** Simulator only: write the trace (every message and copy) as JSON to this file. */
  trace?: string;
  /** Threads only: calibrate α, β, γ and the round latency on the threads first. */
  calibrate?: boolean;
  /** A cost model JSON file (vcoll estimate, or hand-written) instead of --alpha/--beta/--gamma/--ports. */
  modelFile?: string;
  /** Simulator only: the progress line on stderr (true: --progress, false: --no-progress; default: when stderr is a TTY). */
  progress?: boolean;
  /** --algorithm hierarchical: ranks per node (p must be a multiple). */
  perNode?: number;
  /** --algorithm hierarchical: rank r on node ⌊r/perNode⌋ ('ordered', the default) or that map shuffled ('random'). */
  placement?: NodePlacement;
  /** --algorithm hierarchical: the variant (default the library's, 'zero-copy'). */
  hierVariant?: HierarchicalVariantName;
  /** --algorithm hierarchical: the tree of both levels (default the library's, 'binomial'). */
  hierTree?: HierarchicalTreeName;
  /**
   * The linear model's options the command line gave (e.g. ['alpha', 'ports']; main.ts reads
   * commander's value sources): --algorithm hierarchical refuses them, its model is two-level.
   */
  givenModelOptions?: readonly string[];
}

/** The options only --algorithm hierarchical takes, as the command line spells them, with their values. */
function hierarchicalOnlyOptions(opts: RunCommandOptions): [string, unknown][] {
  return [
    ['--per-node', opts.perNode],
    ['--placement', opts.placement],
    ['--hier-variant', opts.hierVariant],
    ['--hier-tree', opts.hierTree],
  ];
}

/** The gatherv/scatterv variant of the options (InvalidArgumentError for hierarchical-only options). */
function vAlgorithmOf(opts: RunCommandOptions): VAlgorithm {
  const a = opts.algorithm;
  if (a === 'hierarchical') throw new InvalidArgumentError('--algorithm', 'hierarchical runs through hierarchicalCaseFromOptions');
  for (const [name, value] of hierarchicalOnlyOptions(opts)) {
    if (value !== undefined) throw new InvalidArgumentError(name, `only with --algorithm hierarchical (the run's algorithm is ${a})`);
  }
  return a;
}

/** Where `runRun` draws the simulator's progress line (tests: a sink, no delay). */
export interface RunProgressOutput {
  /** Default process.stderr. */
  readonly stderr?: ProgressStream;
  /** Wall time (ms) of the simulation before the line is drawn (default 1000). */
  readonly afterMs?: number;
}

/** The blocks and repetitions the options ask for (both kinds of run). */
function caseBlocksOfOptions(opts: RunCommandOptions): CaseBlocks {
  return {
    dist: parseDistribution(opts.dist, '--dist'),
    b: opts.b,
    rho: opts.rho,
    seed: opts.seed,
    root: opts.root,
    unitBytes: opts.unitBytes,
    reps: opts.reps,
    // the simulator is deterministic: no warm-up needed; threads and MPI warm up once
    warmup: opts.warmup ?? (opts.transport === 'sim' ? 0 : 1),
  };
}

/** The case the options describe (validated; errors name the option). */
export function caseFromOptions(opts: RunCommandOptions): RunCase {
  const loaded = opts.modelFile !== undefined ? readModelFile(opts.modelFile, '--model-file') : undefined;
  if (loaded !== undefined) rememberSpecModel(loaded.spec, loaded.model);
  const c: RunCase = {
    op: opts.op,
    algorithm: vAlgorithmOf(opts),
    ...caseBlocksOfOptions(opts),
    model: { alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma, ...(opts.ports !== undefined && opts.ports !== 1 ? { ports: opts.ports } : {}) },
    persistent: opts.persistent,
    ...(loaded !== undefined ? { modelSpec: loaded.spec } : {}),
  };
  return validateCase(opts.p, c, '--');
}

/**
 * The hierarchical run the options describe (validated; errors name the option): refuses what
 * it does not support — --calibrate, the linear model's options. --persistent plans the
 * irregular call once (hierarchicalGathervInit / hierarchicalScattervInit, `--dist same`
 * included) and times start() only.
 */
export function hierarchicalCaseFromOptions(opts: RunCommandOptions): HierarchicalRunCase {
  if (opts.calibrate === true) {
    throw new InvalidArgumentError('--calibrate', 'fits a linear model; --algorithm hierarchical runs on a two-level one (TraffRougier14 §4\'s machine, or a hierarchical --model-file)');
  }
  for (const name of opts.givenModelOptions ?? []) {
    throw new InvalidArgumentError(
      `--${name}`,
      "--algorithm hierarchical runs on a two-level model, not --alpha/--beta/--gamma/--ports: TraffRougier14 §4's machine by default (intra-node α = 0.5, β = 1/4000 per byte; inter-node α = 2, β = 1/3200; γ = 1/5000), or a hierarchical --model-file",
    );
  }
  const loaded = opts.modelFile !== undefined ? readModelFile(opts.modelFile, '--model-file') : undefined;
  return hierarchicalCase(
    {
      p: opts.p,
      op: opts.op,
      perNode: opts.perNode,
      placement: opts.placement,
      variant: opts.hierVariant,
      tree: opts.hierTree,
      persistent: opts.persistent,
      ...caseBlocksOfOptions(opts),
      ...(loaded !== undefined ? { modelSpec: loaded.spec, model: loaded.model } : {}),
    },
    '--',
  );
}

/** Integers as they are, other numbers to 4 significant digits (calibrated models). */
const num = (x: number): string => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(4))));

function formatTime(r: RunReport): string {
  return r.timeUnit === 's' ? `${(r.time * 1e6).toFixed(1)} µs` : `${r.time} (model units)`;
}

/** The model row of the table. */
function modelText(r: RunReport): string {
  const tl = r.twoLevel;
  if (tl !== undefined) {
    const source = r.placement === 'model-file' ? 'from --model-file' : "TraffRougier14 §4's machine";
    return `two-level, ${source}: intra α=${num(tl.intra.alpha)}, β=${num(tl.intra.beta)}; inter α=${num(tl.inter.alpha)}, β=${num(tl.inter.beta)}; γ=${num(tl.gamma)} per element`;
  }
  if (r.modelKind !== undefined) return `${r.modelKind} model from --model-file`;
  return `model: α=${num(r.model.alpha)}, β=${num(r.model.beta)}, γ=${num(r.model.gamma)} per element${r.model.ports !== undefined ? `, ${r.model.ports} ports` : ''}`;
}

/** The library call of each hierarchical collective, as the table names it. */
const HIERARCHICAL_CALLS = { gather: 'hierarchicalGather', gatherv: 'hierarchicalGatherv', scatter: 'hierarchicalScatter', scatterv: 'hierarchicalScatterv' } as const;

export function formatRunTable(r: RunReport): string {
  const t = new Table({ head: ['', { sim: 'simulator', threads: 'worker threads', mpi: 'MPI' }[r.transport]], style: { head: [], border: [] } });
  const hierarchical = r.collective !== undefined ? ` (${HIERARCHICAL_CALLS[r.collective]}, ${r.variant}${r.tree === 'adaptive' ? ', adaptive trees' : ''})` : '';
  const rows: [string, string][] = [
    ['operation', `${r.op}, ${r.algorithm}${hierarchical}${r.requestedAlgorithm === 'auto' ? ' (auto)' : ''}${r.persistent ? ', persistent' : ''}`],
    ['p, root', `${r.p}, ${r.root}`],
    ['blocks', `${r.dist}, b = ${r.b}, Σ = ${r.size} elements of ${r.unitBytes} B`],
    ['verified', r.verified ? 'yes' : `NO: ${r.mismatches.join('; ')}`],
    ['time', `${formatTime(r)}${r.reps > 1 ? ` (min of ${r.reps})` : ''}`],
    ['predicted', `${num(r.predicted)} (${modelText(r)})`],
    ['messages, bytes', `${r.messages}, ${r.bytes}`],
    ['rounds', `${r.rounds} (construction ${r.constructionRounds} + height ${r.height})`],
  ];
  if (r.nodes !== undefined) {
    const per = r.perNode !== undefined ? `${r.perNode} ranks each` : `at most ${r.largestNode} ranks each`;
    rows.splice(2, 0, ['nodes', `${r.nodes} × ${per}, placement ${r.placement}`]);
  }
  if (r.persistent) rows.push(['planning', `${r.timeUnit === 's' ? `${((r.planTime ?? 0) * 1e6).toFixed(1)} µs` : r.planTime}, ${r.planMessages} messages, ${r.planBytes} bytes`]);
  t.push(...rows);
  return t.toString();
}

/**
 * The heap (MiB) the command should run with when its simulated ranks need more than this
 * process's V8 heap limit and fit the memory limit (util/limits.ts heapToRaise); undefined
 * otherwise, and for arguments the run itself will refuse.
 */
export function heapForRun(opts: RunCommandOptions): number | undefined {
  if (opts.transport !== 'sim') return undefined;
  if (opts.algorithm === 'hierarchical') {
    try {
      hierarchicalCaseFromOptions(opts);
    } catch {
      return undefined; // runRun reports it
    }
    return heapToRaise(opts.p * simHierarchicalRankBytes(opts.hierTree, opts.persistent));
  }
  let c: RunCase;
  try {
    c = caseFromOptions(opts);
    checkCaseTree(opts.p, c, '--'); // a tree that cannot reach p is refused at once, in this process
  } catch {
    return undefined; // runRun reports it
  }
  return heapToRaise(opts.p * simCaseRankBytes(c));
}

/**
 * Runs the command; resolves with the report (exit status 1 when not verified is the caller's).
 * On the simulator, a progress line goes to `progress.stderr` (see RunCommandOptions.progress).
 */
export async function runRun(opts: RunCommandOptions, out: NodeJS.WritableStream = process.stdout, progress: RunProgressOutput = {}): Promise<RunReport> {
  // the hierarchical gather's run, or a case of the gatherv/scatterv variant table
  const run: { hierarchical: HierarchicalRunCase } | { variant: RunCase } =
    opts.algorithm === 'hierarchical' ? { hierarchical: hierarchicalCaseFromOptions(opts) } : { variant: caseFromOptions(opts) };
  const stderr = progress.stderr ?? process.stderr;
  const bar = opts.transport === 'sim' && (opts.progress ?? stderr.isTTY === true) ? new SimProgressBar(stderr, progress.afterMs ?? PROGRESS_AFTER_MS) : undefined;
  let report: RunReport;
  try {
    if ('variant' in run && requiresNative(run.variant.algorithm) && opts.transport !== 'mpi') {
      throw new UnavailableError('mpi-transport', `--algorithm ${opts.algorithm} calls the MPI library's own collectives: it runs only with --transport mpi, not on ${opts.transport}`);
    }
    if (opts.trace !== undefined && opts.transport !== 'sim') throw new InvalidArgumentError('--trace', 'only with --transport sim');
    if (opts.calibrate === true && opts.transport === 'sim') throw new InvalidArgumentError('--calibrate', 'only with --transport threads or mpi');
    if (opts.calibrate === true && opts.p < 2) throw new InvalidArgumentError('--calibrate', 'needs --p 2 or more');
    if (opts.calibrate === true && opts.modelFile !== undefined) throw new InvalidArgumentError('--calibrate', 'replaces the model: give --model-file or --calibrate, not both');
    const file = opts.trace;
    if (file !== undefined) checkOutputPath('--trace', file);
    const sim = {
      ...(file !== undefined ? { onTrace: (t: SimTrace) => writeFileSync(file, `${JSON.stringify(t)}\n`) } : {}),
      ...(bar !== undefined ? { onProgress: bar.update } : {}),
    };
    if ('hierarchical' in run) {
      // memory, data, model costs: refused before any rank starts
      checkHierarchicalResources(opts.transport, opts.p, run.hierarchical, '--');
      report = await runHierarchicalCase(opts.transport, opts.p, run.hierarchical, sim);
    } else {
      // memory, tree size, model costs: refused before any rank starts
      checkCaseResources(opts.transport, opts.p, run.variant, '--');
      report = await runCase(opts.transport, opts.p, run.variant, { ...sim, ...(opts.calibrate === true ? { calibrate: {} } : {}) });
    }
  } catch (err) {
    // a rank rejected its arguments (e.g. two-block with more than two block sizes) or found
    // them too large (a tree's p limit): bad input
    if (err instanceof CommunicationError && err.cause instanceof VcollError && (err.cause.code === 'INVALID_ARGUMENT' || err.cause.code === 'TOO_LARGE')) throw err.cause;
    throw err;
  } finally {
    bar?.end();
  }
  out.write(opts.format === 'json' ? `${JSON.stringify(report)}\n` : `${formatRunTable(report)}\n`);
  return report;
}
