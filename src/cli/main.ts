/** The `vcoll` command line: thin shells over the library. */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { COMPILED_ALLGATHER_ALGORITHMS } from '../collectives/allgather/schedule.js';
import { COMPILED_V_ALGORITHMS } from '../collectives/v-schedule.js';
import { PORTABLE_V_ALGORITHMS, V_ALGORITHMS } from '../collectives/v-variants.js';
import { parseDistribution } from '../workloads/distributions.js';
import { HIERARCHICAL_VARIANT_NAMES } from '../collectives/hierarchical/variants.js';
import { HIERARCHICAL_TREE_NAMES } from '../collectives/hierarchical/types.js';
import { NODE_PLACEMENTS, RUN_ALGORITHMS, SEED000_DISTRIBUTIONS, TRANSPORTS, V_OPERATIONS } from '../run/spec.js';
import { COMPARED_ALGORITHMS, parseComparedAlgorithms, parseRootSelection } from '../trees/compare.js';
import { BENCH_DEFAULTS } from '../harness/bench-defaults.js';
import type { BenchCommandOptions, GuidelinesCommandOptions, ReportCommandOptions } from './bench-command.js';
import type { DemoCommandOptions } from './demo-command.js';
import type { EstimateCommandOptions } from './estimate-command.js';
import { exitOnError } from './exit.js';
import { ranAgainWithHeap } from './heap-rerun.js';
import { runModel, type ModelCommandOptions } from './model-command.js';
import { parseChoice, parseIntegerListOption, parseIntegerOption, parseNumberOption, parseSizesOption } from './options.js';
import type { InterCommandOptions } from './inter-command.js';
import type { RunCommandOptions } from './run-command.js';
import { SCHEDULE_OPS, type ScheduleCommandOptions } from './schedule-command.js';
import { runTree, type TreeCommandOptions } from './tree-command.js';

/** The version in package.json (two folders up from src/cli and from dist/cli). */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** A comma-separated list option, each item parsed by `parse`. */
function parseList<T extends string>(name: string, parse: (v: string) => T): (v: string) => T[] {
  return (v: string) => v.split(',').filter((s) => s.trim() !== '').map((s) => parse(s.trim()));
}

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('vcoll')
    .description('Irregular collective communication: gather/scatter trees, cost models, optimal trees')
    .version(packageVersion(), '-V, --version', 'print the version of vcoll')
    .showHelpAfterError()
    // usage errors (unknown command or option, bad choice, no command) throw, and exit with 2
    // (src/cli/exit.ts); the commands added below inherit this
    .exitOverride();

  program
    .command('model')
    .description('compare linear, binary, oblivious, adaptive and optimal trees in the linear cost model (Traff17 Table 1)')
    .option('--p <n>', 'number of processors', parseIntegerOption('p', 1), 2000)
    .option('--b <n>', 'average block size (elements)', parseIntegerOption('b', 1), 1000)
    .option('--alpha <x>', 'start-up latency per message', parseNumberOption('alpha'), 100)
    .option('--beta <x>', 'time per element', parseNumberOption('beta'), 1)
    .option('--gamma <x>', 'local copy time per element', parseNumberOption('gamma'), 1)
    .option('--rho <n>', 'ρ of the spikes and skewed distributions', parseIntegerOption('rho', 1), 5)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
    .option('--dist <list>', 'comma-separated distributions, or "all"', 'all')
    .option('--root <which>', 'fixed | best | both', (v: string) => parseRootSelection(v, '--root'), 'both')
    .option('--fixed-root <r>', 'the fixed root (default ⌊p/2⌋)', parseIntegerOption('fixed-root', 0))
    .option('--algorithms <list>', `comma-separated subset of ${COMPARED_ALGORITHMS.join(',')}`, (v: string) => parseComparedAlgorithms(v, '--algorithms'), [...COMPARED_ALGORITHMS])
    .addOption(
      new Option('--optimal-mode <mode>', 'exact: the true optimum; paper: Traff17 best-root convention').choices(['exact', 'paper']).default('exact'),
    )
    .addOption(new Option('--format <fmt>', 'output format').choices(['table', 'csv', 'json']).default('table'))
    .option('--progress', 'show a progress bar on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never show a progress bar')
    .action((opts: ModelCommandOptions) => {
      runModel(opts);
    });

  program
    .command('tree')
    .description('build one gather/scatter tree and draw it as text (or SVG / JSON)')
    .option('--sizes <list>', 'comma-separated block sizes m_0,…,m_{p−1}', parseSizesOption)
    .option('--dist <name>', 'a distribution instead of --sizes')
    .option('--p <n>', 'number of processors (with --dist)', parseIntegerOption('p', 1))
    .option('--b <n>', 'average block size (with --dist)', parseIntegerOption('b', 1), 10)
    .option('--rho <n>', 'ρ of spikes and skewed', parseIntegerOption('rho', 1), 5)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
    .option('--algorithm <name>', 'tree construction (see `vcoll algorithms`)', 'adaptive')
    .option('--root <r>', 'fixed root (default: the construction chooses)', parseIntegerOption('root', 0))
    .option('--alpha <x>', 'start-up latency per message', parseNumberOption('alpha'), 100)
    .option('--beta <x>', 'time per element', parseNumberOption('beta'), 1)
    .option('--gamma <x>', 'local copy time per element', parseNumberOption('gamma'), 1)
    .option('--ports <k>', 'communication ports per processor', parseIntegerOption('ports', 1), 1)
    .option('--copy-all', 'every processor copies its block (Traff18 Lemma 4)', false)
    .option('--operation <op>', 'gather | scatter', parseChoice('operation', ['gather', 'scatter'] as const), 'gather')
    .addOption(new Option('--format <fmt>', 'what to print').choices(['text', 'svg', 'json']).default('text'))
    .option('--svg <file>', 'also write the drawing as SVG to this file')
    .option('--model-file <json>', 'a cost model JSON file (vcoll estimate, or hand-written) instead of --alpha/--beta/--gamma/--ports/--copy-all')
    .action((opts: TreeCommandOptions) => {
      runTree(opts);
    });

  program
    .command('run')
    .description('run one gatherv or scatterv (or the hierarchical gather(v)/scatter(v)) on the simulator, on worker threads or on MPI processes (mpirun), verified and timed')
    .option('--transport <t>', 'sim | threads | mpi (mpirun -np p; VCOLL_MPIRUN, VCOLL_MPIRUN_ARGS choose the launcher and its options)', parseChoice('transport', TRANSPORTS), 'sim')
    .option('--p <n>', 'number of ranks', parseIntegerOption('p', 1), 8)
    .option('--op <op>', 'gatherv | scatterv', parseChoice('op', V_OPERATIONS), 'gatherv')
    .option(
      '--algorithm <name>',
      `${RUN_ALGORITHMS.join(' | ')} (mpi-native: the MPI library's own MPI_Gatherv/MPI_Scatterv, --transport mpi only; hierarchical: TraffRougier14's two-level gather(v) (--op gatherv) or its mirror, the scatter(v) (--op scatterv), needs --per-node)`,
      parseChoice('algorithm', RUN_ALGORITHMS),
      'auto',
    )
    .option('--dist <name>', 'block-size distribution (see `vcoll model --help`)', 'random')
    .option('--b <n>', 'average block size (elements)', parseIntegerOption('b', 1), 100)
    .option('--rho <n>', 'ρ of the spikes and skewed distributions', parseIntegerOption('rho', 1), 5)
    .option('--root <r>', 'the root rank', parseIntegerOption('root', 0), 0)
    .option('--alpha <x>', 'start-up latency per message (model units)', parseNumberOption('alpha'), 100)
    .option('--beta <x>', 'time per element', parseNumberOption('beta'), 1)
    .option('--gamma <x>', 'local copy time per element', parseNumberOption('gamma'), 0)
    .option('--ports <k>', 'communication ports per processor (k > 1: linear, binomial, two-block only)', parseIntegerOption('ports', 1), 1)
    .option('--unit-bytes <n>', 'bytes per element', parseIntegerOption('unit-bytes', 1), 1)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
    .option('--persistent', 'plan once (gathervInit/scattervInit) and time only start()', false)
    .option('--reps <n>', 'timed repetitions (the minimum is reported)', parseIntegerOption('reps', 1), 1)
    .option('--warmup <n>', 'untimed executions first (default: 1 on threads and mpi, 0 on sim)', parseIntegerOption('warmup', 0))
    .option('--format <fmt>', 'json | table', parseChoice('format', ['json', 'table'] as const), 'table')
    .option('--trace <file>', 'sim: write the trace (every message and copy: from, to, bytes, start, end) as JSON')
    .option('--calibrate', 'threads, mpi: measure α, β, γ and the round latency first and use them (µs) for the trees and auto', false)
    .option('--model-file <json>', 'a cost model JSON file (vcoll estimate, or hand-written: linear, pairwise, hierarchical) instead of --alpha/--beta/--gamma/--ports')
    .option('--progress', 'sim: a progress line on stderr (ranks done, virtual time, messages) once the run takes over 1 s (default: when stderr is a terminal)')
    .option('--no-progress', 'never show the progress line')
    .option('--per-node <n>', 'hierarchical: ranks per node (p must be a multiple)', parseIntegerOption('per-node', 1))
    .option('--placement <how>', `hierarchical: ${NODE_PLACEMENTS.join(' | ')} — rank r on node ⌊r/per-node⌋, or that map shuffled (--seed) (default ordered)`, parseChoice('placement', NODE_PLACEMENTS))
    .option('--hier-variant <name>', `hierarchical: ${HIERARCHICAL_VARIANT_NAMES.join(' | ')} (default zero-copy)`, parseChoice('hier-variant', HIERARCHICAL_VARIANT_NAMES))
    .option(
      '--hier-tree <name>',
      `hierarchical: the tree of both levels, ${HIERARCHICAL_TREE_NAMES.join(' | ')} (default binomial; adaptive: Traff18's trees over the blocks and the node totals)`,
      parseChoice('hier-tree', HIERARCHICAL_TREE_NAMES),
    )
    .exitOverride()
    .action(async (cliOpts: RunCommandOptions, cmd: Command) => {
      // the linear model's options given on the command line (--algorithm hierarchical refuses them)
      const givenModelOptions = ['alpha', 'beta', 'gamma', 'ports'].filter((o) => cmd.getOptionValueSource(o) === 'cli');
      const opts: RunCommandOptions = { ...cliOpts, givenModelOptions };
      // loaded on demand: the transports and collectives are not needed by the other commands
      const { runRun, heapForRun } = await import('./run-command.js');
      // a simulation larger than Node's heap limit but within the memory limit: run again with a larger heap
      if (ranAgainWithHeap(heapForRun(opts))) return;
      const report = await runRun(opts);
      if (!report.verified) process.exitCode = 1;
    });

  program
    .command('schedule')
    .description('compile the data phase of one gatherv or scatterv (or a building block) into every rank\'s schedule, print it (text or JSON) and check it')
    .option('--op <op>', SCHEDULE_OPS.join(' | '), parseChoice('op', SCHEDULE_OPS), 'gatherv')
    .option(
      '--algorithm <name>',
      `gatherv, scatterv: ${COMPILED_V_ALGORITHMS.join(' | ')} (default binomial; mpi-native calls the MPI library: not compiled); allgatherv: ${COMPILED_ALLGATHER_ALGORITHMS.join(' | ')} (default ring); the building blocks have one each`,
      parseChoice('algorithm', [...new Set([...V_ALGORITHMS, ...COMPILED_ALLGATHER_ALGORITHMS])]),
    )
    .option('--p <n>', 'number of ranks', parseIntegerOption('p', 1), 8)
    .option('--dist <name>', 'block-size distribution (see `vcoll model --help`)', 'random')
    .option('--b <n>', 'average block size (elements)', parseIntegerOption('b', 1), 10)
    .option('--rho <n>', 'ρ of the spikes and skewed distributions', parseIntegerOption('rho', 1), 5)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
    .option('--root <r>', 'the root rank', parseIntegerOption('root', 0), 0)
    .option('--alpha <x>', 'start-up latency per message (the trees are built for this model)', parseNumberOption('alpha'), 100)
    .option('--beta <x>', 'time per element', parseNumberOption('beta'), 1)
    .option('--gamma <x>', 'local copy time per element', parseNumberOption('gamma'), 0)
    .option('--ports <k>', 'communication ports per processor (k > 1: at most k operations outstanding, copies as messages to oneself)', parseIntegerOption('ports', 1), 1)
    .option('--copy-all', 'every processor copies its block (Traff18 Lemma 4)', false)
    .option('--unit-bytes <n>', 'bytes per element', parseIntegerOption('unit-bytes', 1), 1)
    .option('--format <fmt>', 'text | json', parseChoice('format', ['text', 'json'] as const), 'text')
    .option('--simulate', 'replay the schedule on the simulator under the model above (times only): virtual time, messages, bytes', false)
    .option('--runs <n>', 'with --simulate: runs back to back', parseIntegerOption('runs', 1), 1)
    .option('--no-listing', "text: leave out the ranks' schedules (counts, check and simulation only)")
    .exitOverride()
    .action(async (opts: ScheduleCommandOptions) => {
      const { runScheduleCommand } = await import('./schedule-command.js');
      const report = runScheduleCommand(opts);
      if (report.problems.length > 0) process.exitCode = 1;
    });

  program
    .command('inter')
    .description("Kang19's intergroup allgather/allgatherv settings 1–8: root gathering vs Algorithms 1 and 2, with improvement ratios")
    .option('--transport <t>', 'sim | threads (small groups, real bytes, seconds)', parseChoice('transport', ['sim', 'threads'] as const), 'sim')
    .option('--setting <s>', 'setting 1…8, a comma list, or all', 'all')
    .option('--ranks <n>', 'p + q', parseIntegerOption('ranks', 2), 64)
    .option('--size <bytes>', 'bytes per rank of the larger block (default: the sweep 64 KiB … 8 MiB)', parseIntegerOption('size', 0))
    .option('--alpha <x>', 'start-up time per message (model units)', parseNumberOption('alpha'), 1000)
    .option('--beta <x>', 'time per byte (model units)', parseNumberOption('beta'), 1)
    .option('--warmup <n>', 'untimed rounds first (default: 0 on sim, 2 on threads)', parseIntegerOption('warmup', 0))
    .option('--reps <n>', 'timed rounds, both algorithms interleaved; the minimum of the slowest rank counts (default: 1 on sim, 5 on threads)', parseIntegerOption('reps', 1))
    .option('--format <fmt>', 'json | table', parseChoice('format', ['json', 'table'] as const), 'table')
    .exitOverride()
    .action(async (opts: InterCommandOptions) => {
      const { runInterCommand, heapForInter } = await import('./inter-command.js');
      // a simulation larger than Node's heap limit but within the memory limit: run again with a larger heap
      if (ranAgainWithHeap(heapForInter(opts))) return;
      const reports = await runInterCommand(opts);
      if (!reports.every((r) => r.verified)) process.exitCode = 1;
    });

  program
    .command('estimate')
    .description('measure per-pair α, β by ping-pong (Hockney fit per link, Dichev10 §3) and write the pairwise model as JSON')
    .option('--transport <t>', 'sim | threads | mpi', parseChoice('transport', TRANSPORTS), 'sim')
    .option('--p <n>', "number of ranks (default: the --truth model's size, else 4)", parseIntegerOption('p', 1))
    .option('--truth <file>', 'sim: the model to measure, a model JSON file (default: linear α = 100, β = 1 per element)')
    .option('--sizes <list>', 'comma-separated message sizes in bytes, >= 1 (default 1,1024,4096,16384,65536)', parseSizesOption)
    .option('--reps <k>', 'timed round trips per link and size; the median counts (default 5)', parseIntegerOption('reps', 1))
    .option('--warmup-ms <ms>', 'threads, mpi: untimed ping-pong before measuring, split over the rounds (default 1000)', parseIntegerOption('warmup-ms', 0))
    .option('--unit-bytes <n>', 'bytes per model element: the written β is per element (and --truth is read per element)', parseIntegerOption('unit-bytes', 1), 1)
    .requiredOption('--out <file>', 'write the estimated pairwise model (JSON) here')
    .option('--format <fmt>', 'json | table', parseChoice('format', ['json', 'table'] as const), 'table')
    .exitOverride()
    .action(async (opts: EstimateCommandOptions) => {
      const { runEstimate } = await import('./estimate-command.js');
      await runEstimate(opts);
    });

  program
    .command('bench')
    .description("benchmark gatherv/scatterv algorithms by Traff18's method (warm-ups, repetitions, barrier, slowest process) with GL1/GL2 verdicts; JSON, CSV, HTML report")
    .option('--transport <t>', 'sim | threads | mpi', parseChoice('transport', TRANSPORTS), BENCH_DEFAULTS.transport)
    .option('--ops <list>', "comma-separated: gatherv, scatterv ('none': only --inter-settings)", BENCH_DEFAULTS.ops.join(','))
    .option('--algorithms <list>', `comma-separated: ${V_ALGORITHMS.join(', ')}`, BENCH_DEFAULTS.algorithms.join(','))
    .option('--dists <list>', "comma-separated distributions, 'all', or 'seed000' (the paper's eight)", 'seed000')
    .option('--b <list>', 'average block sizes (elements), comma-separated', parseIntegerListOption('b', 0), [...BENCH_DEFAULTS.bs])
    .option('--p <list>', 'process counts, comma-separated', parseIntegerListOption('p', 0), [...BENCH_DEFAULTS.ps])
    .option('--reps <n>', `timed repetitions per case and variant (default ${BENCH_DEFAULTS.reps}; --quick 10)`, parseIntegerOption('reps', 0))
    .option('--warmup <n>', `untimed executions first (default ${BENCH_DEFAULTS.warmup}; --quick 2)`, parseIntegerOption('warmup', 0))
    .option('--quick', 'fewer repetitions and warm-ups (10 and 2): a first look', false)
    .option('--root <r>', 'the root rank', parseIntegerOption('root', 0), BENCH_DEFAULTS.root)
    .option('--unit-bytes <n>', 'bytes per element (4: MPI_INT, as Traff18)', parseIntegerOption('unit-bytes', 0), BENCH_DEFAULTS.unitBytes)
    .option('--rho <n>', 'ρ of the spikes and skewed distributions', parseIntegerOption('rho', 0), BENCH_DEFAULTS.rho)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), BENCH_DEFAULTS.seed)
    .option('--alpha <x>', 'model: start-up latency per message (sim; trees without --calibrate)', parseNumberOption('alpha'), BENCH_DEFAULTS.model.alpha)
    .option('--beta <x>', 'model: time per element', parseNumberOption('beta'), BENCH_DEFAULTS.model.beta)
    .option('--gamma <x>', 'model: local copy time per element', parseNumberOption('gamma'), BENCH_DEFAULTS.model.gamma)
    .option('--no-calibrate', 'threads, mpi: do not fit α, β, γ to the transport (then no predictions)')
    .option('--persistent', 'plan once (gathervInit/scattervInit) and time the data phase only', false)
    .addOption(new Option('--references <which>', "the guideline references' regular collectives").choices(['vcoll', 'mpi-native', 'none']).default('vcoll'))
    .option('--significance <a>', 'level of the guideline tests', parseNumberOption('significance'), BENCH_DEFAULTS.alpha)
    .option('--inter-settings <list>', "Kang19's intergroup allgather(v) settings 1…8 too (a list, or all): root gathering vs Algorithms 1 and 2 (sim, threads)")
    .option('--inter-sizes <list>', 'bytes per rank of the larger block (default: sim 64 KiB … 8 MiB, threads 16 KiB … 256 KiB)', parseIntegerListOption('inter-sizes', 0))
    .option('--inter-ranks <list>', 'p + q of the intergroup runs (default: sim 64, threads 8)', parseIntegerListOption('inter-ranks', 0))
    .option('--json <file>', 'write the results (configuration included) as JSON')
    .option('--csv <file>', 'write the results as CSV')
    .option('--report <file>', 'write the HTML report too')
    .option('--format <fmt>', 'stdout: table | json', parseChoice('format', ['table', 'json'] as const), 'table')
    .option('--progress', 'show a progress bar on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never show a progress bar')
    .exitOverride()
    .action(async (opts: BenchCommandOptions, cmd: Command) => {
      const { runBenchCommand, heapForBench } = await import('./bench-command.js');
      // a simulation larger than Node's heap limit but within the memory limit: run again with a larger heap
      if (ranAgainWithHeap(heapForBench(opts))) return;
      // --references left at its default: references too large for the simulator's memory are dropped (with a note), not refused
      const r = await runBenchCommand({ ...opts, referencesDefault: cmd.getOptionValueSource('references') === 'default' });
      if (!r.rows.every((x) => x.verified) || !r.inter.every((x) => x.verified)) process.exitCode = 1;
    });

  program
    .command('guidelines')
    .description('print the GL1/GL2 violations of a `vcoll bench --json` results file')
    .argument('<results>', 'a results file of vcoll bench --json')
    .option('--significance <a>', 'judge again at this level', parseNumberOption('significance'))
    .option('--all', 'print every verdict, not only the violations', false)
    .option('--strict', 'exit 1 when a guideline is violated', false)
    .option('--format <fmt>', 'table | json', parseChoice('format', ['table', 'json'] as const), 'table')
    .exitOverride()
    .action(async (file: string, opts: GuidelinesCommandOptions) => {
      const { runGuidelinesCommand } = await import('./bench-command.js');
      const violated = runGuidelinesCommand(file, opts);
      if (opts.strict && violated > 0) process.exitCode = 1;
    });

  program
    .command('report')
    .description('write a self-contained HTML report (SVG plots as Traff18 Figs. 3-10 and Kang19 Figs. 4-6) of a `vcoll bench --json` results file')
    .argument('<results>', 'a results file of vcoll bench --json')
    .requiredOption('--out <file>', 'the HTML file to write')
    .exitOverride()
    .action(async (file: string, opts: ReportCommandOptions) => {
      const { runReportCommand } = await import('./bench-command.js');
      await runReportCommand(file, opts);
    });

  program
    .command('demo')
    .description('the main job: every gatherv/scatterv algorithm on worker threads, verified, measured against the calibrated model (npm start)')
    .option('--p <n>', 'worker threads (ranks)', parseIntegerOption('p', 2), 8)
    .option('--b <n>', 'average block size (elements)', parseIntegerOption('b', 1), 100)
    .option('--root <r>', 'root rank', parseIntegerOption('root', 0), 0)
    .option('--unit-bytes <n>', 'bytes per element', parseIntegerOption('unit-bytes', 1), 1)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
    .option('--reps <n>', 'timed repetitions per case', parseIntegerOption('reps', 1), 5)
    .option('--warmup <n>', 'untimed executions per case', parseIntegerOption('warmup', 0), 2)
    .option('--ops <list>', V_OPERATIONS.join(','), parseList('ops', parseChoice('ops', V_OPERATIONS)))
    .option('--algorithms <list>', PORTABLE_V_ALGORITHMS.join(','), parseList('algorithms', parseChoice('algorithms', PORTABLE_V_ALGORITHMS)))
    .option('--dist <list>', `distributions (default: ${SEED000_DISTRIBUTIONS.join(',')})`, parseList('dist', (s) => parseDistribution(s, '--dist')))
    .exitOverride()
    .action(async (opts: DemoCommandOptions) => {
      const { runDemoCommand } = await import('./demo-command.js');
      await runDemoCommand(opts);
    });

  program
    .command('algorithms')
    .description('list the tree constructions')
    .action(async () => {
      const { TREE_ALGORITHMS } = await import('../trees/registry.js');
      for (const a of TREE_ALGORITHMS) process.stdout.write(`${a.name.padEnd(18)} ${a.description} [${a.source}]\n`);
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // bad input: 2; a run that failed: 1; usage errors of `vcoll run`: commander printed them
    exitOnError(err);
  }
}

// Run when executed directly (`tsx src/cli/main.ts …`).
if (import.meta.url === `file://${process.argv[1]}`) {
  void main(process.argv);
}
