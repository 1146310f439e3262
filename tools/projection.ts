/**
 * `npm run projection`: at which number of processes p would vcoll's tree gathervs over MPI
 * (`adaptive`: Traff18's adaptive binomial tree; `optimal`: Traff17's optimal ordered tree)
 * beat the MPI library's linear MPI_Gatherv? A projection by the α-β (Hockney) model, for
 * p far beyond what this machine runs:
 *
 *   1. α (µs per message) and β (µs per byte) of this machine's MPI: measured by ping-pong on
 *      2 MPI processes (estimatePairwiseOnMpi, what `vcoll estimate --transport mpi` runs), or
 *      read from `--model FILE` (what `vcoll estimate --transport mpi --p N --out FILE` writes);
 *      the median over the links.
 *   2. c (µs): the extra time vcoll's schedule executor adds per message hop over the MPI
 *      library's own: median(linear) − median(C loop) of tools/mpi-schedule-bench.ts at p = 2,
 *      b = 1 (one message per call; clamped at 0), or `--exec-us X`.
 *   3. For p = 2, 4, 8, … ≤ `--max-p`, every b and distribution, root 0, the simulator's
 *      (= the evaluator's, src/trees/evaluate.ts) completion time of
 *        MPI_Gatherv    the linear tree under linearModel({ alpha: α,     beta: β, gamma: 0 })
 *        vcoll adaptive the adaptive tree under linearModel({ alpha: α + c, beta: β, gamma: 0 })
 *        vcoll optimal  the optimal tree  under linearModel({ alpha: α + c, beta: β, gamma: 0 }),
 *                       only up to `--max-optimal-p` (O(p³) construction)
 *      (trees built for that root and model, as src/run/predict.ts builds them; one model
 *      element = 1 byte). Nothing is run at these p: it is the model's prediction.
 *
 * Prints a markdown table (smallest p at which each tree is predicted faster than MPI_Gatherv,
 * and the ratio MPI_Gatherv / vcoll at a few p); `--write FILE` (re)writes the doc
 * (docs/projection.md), `--json FILE` writes every number.
 *
 *   npm run projection -- [--model FILE] [--exec-us X] [--max-p 65536] [--max-optimal-p 512]
 *                         [--b 1,100,10000] [--dist same,random,spikes] [--at 64,512,1024,65536]
 *                         [--reps 20] [--seed 1] [--rho 5] [--write docs/projection.md] [--json FILE]
 */
import { VARIANTS as SCHEDULE_BENCH_VARIANTS } from './mpi-schedule-bench.js';
import { Command } from 'commander';
import { median } from 'simple-statistics';
import { execFileSync } from 'node:child_process';
import { realpathSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { readModelFile } from '../src/cli/model-file.js';
import { checkOutputPath, parseIntegerListOption, parseIntegerOption, parseNumberOption } from '../src/cli/options.js';
import { InvalidArgumentError } from '../src/errors.js';
import { linearModel, type CostModel } from '../src/model/cost-model.js';
import { estimatePairwiseOnMpi, type PairwiseEstimate } from '../src/run/estimate-pairwise.js';
import { runMpi } from '../src/transports/mpi/run.js';
import { evaluate } from '../src/trees/evaluate.js';
import { findTreeAlgorithm, type TreeAlgorithm } from '../src/trees/registry.js';
import { blockSizes, DISTRIBUTION_LABELS, parseDistribution, type DistributionName } from '../src/workloads/distributions.js';

// ---------------------------------------------------------------------------------------------
// Inputs: α, β and c.

/** α, β (µs, µs per byte) and where they come from. */
interface Hockney {
  readonly alpha: number;
  readonly beta: number;
  readonly source: string;
  /** Per link (off-diagonal), when known. */
  readonly links?: { readonly alpha: number[]; readonly beta: number[]; readonly residual?: number[]; readonly clamped?: number };
}

const offDiagonal = (m: readonly (readonly number[])[]): number[] => m.flatMap((row, i) => row.filter((_, j) => j !== i));

/** α, β measured by ping-pong on 2 MPI processes (the pairwise estimate of `vcoll estimate --transport mpi`, unitBytes 1). */
async function measureHockney(reps: number): Promise<Hockney> {
  const est: PairwiseEstimate = await estimatePairwiseOnMpi(2, { reps });
  if (est.unit !== 'us') throw new Error(`the MPI estimate came back in '${est.unit}', not µs`);
  const alpha = offDiagonal(est.alpha);
  const beta = offDiagonal(est.beta);
  return {
    alpha: median(alpha),
    beta: median(beta),
    source: `measured: ping-pong on 2 MPI processes (estimatePairwiseOnMpi, sizes ${est.sizes.join(', ')} B, median of ${est.reps} round trips), median over ${alpha.length} links`,
    links: { alpha, beta, residual: offDiagonal(est.residual), clamped: est.clamped },
  };
}

/**
 * α, β of a model file (`vcoll estimate … --out FILE`, or any linear model): the median over the
 * links; β per byte (a file written with `--unit-bytes N` has β per N bytes, divided back here).
 */
function hockneyOfFile(path: string): Hockney {
  const { spec, meta } = readModelFile(path, '--model');
  if (meta.unit !== undefined && meta.unit !== 'us') {
    throw new InvalidArgumentError('--model', `${path} is in '${meta.unit}', not µs: use a model measured on MPI (vcoll estimate --transport mpi)`);
  }
  const perElement = /per element of (\d+) B/.exec(meta.description ?? '');
  const unitBytes = perElement === null ? 1 : Number(perElement[1]);
  const from = `model file ${path}${meta.unit === undefined ? ' (no unit given: taken as µs)' : ''}${unitBytes !== 1 ? `, β per ${unitBytes} B converted to per byte` : ''}`;
  if (spec.kind === 'linear') return { alpha: spec.alpha, beta: spec.beta / unitBytes, source: from };
  if (spec.kind === 'pairwise') {
    if (spec.alpha.length < 2) throw new InvalidArgumentError('--model', `${path} has a single rank: no link to take α, β from`);
    const alpha = offDiagonal(spec.alpha);
    const beta = offDiagonal(spec.beta).map((x) => x / unitBytes);
    return { alpha: median(alpha), beta: median(beta), source: `${from}, median over ${alpha.length} links`, links: { alpha, beta } };
  }
  throw new InvalidArgumentError('--model', `${path} is a hierarchical model: give a linear or pairwise one (vcoll estimate --transport mpi)`);
}

/** What tools/mpi-schedule-bench.ts's rank program returns (root: times; everywhere: library). */
interface ScheduleBenchResult {
  /** [b][variant][run] seconds per call. */
  readonly times: number[][][];
  readonly library: string;
  readonly mismatch?: string;
}

/** Indices into the bench's VARIANTS: 'C loop' (MPI_Gatherv in a C loop) and 'linear' (vcoll's executor, start() awaited). */
const BENCH_C_LOOP = SCHEDULE_BENCH_VARIANTS.indexOf('C loop');
const BENCH_LINEAR = SCHEDULE_BENCH_VARIANTS.indexOf('linear');
const BENCH_CALLS = 20000;

interface ExecutorCost {
  readonly c: number;
  readonly source: string;
  /** Measured: µs per call of each run, and their medians. */
  readonly measured?: { readonly cLoopUs: number[]; readonly linearUs: number[]; readonly cLoopMedianUs: number; readonly linearMedianUs: number; readonly calls: number; readonly runs: number };
  readonly library?: string;
}

/** c = median(linear) − median(C loop) of the schedule bench at p = 2, b = 1 (one hop per call), in µs, at least 0. */
async function measureExecutorCost(runs: number): Promise<ExecutorCost> {
  const ranks = await runMpi<ScheduleBenchResult>(
    2,
    new URL('./mpi-schedule-bench.ts', import.meta.url),
    { bs: [1], calls: BENCH_CALLS, runs },
    { timeoutMs: 600_000 },
  );
  const bad = ranks.map((r) => r.mismatch).find((m) => m !== undefined);
  if (bad !== undefined) throw new Error(`the schedule bench delivered wrong data: ${bad}`);
  const t = ranks[0].times[0];
  const cLoopUs = t[BENCH_C_LOOP].map((s) => s * 1e6);
  const linearUs = t[BENCH_LINEAR].map((s) => s * 1e6);
  const cLoopMedianUs = median(cLoopUs);
  const linearMedianUs = median(linearUs);
  return {
    c: Math.max(0, linearMedianUs - cLoopMedianUs),
    source: `measured: tools/mpi-schedule-bench.ts on 2 MPI processes, b = 1 B, ${BENCH_CALLS} back-to-back calls × ${runs} runs (variants interleaved), median(linear) − median(C loop)`,
    measured: { cLoopUs, linearUs, cLoopMedianUs, linearMedianUs, calls: BENCH_CALLS, runs },
    library: ranks[0].library,
  };
}

// ---------------------------------------------------------------------------------------------
// The projection.

interface Point {
  readonly p: number;
  /** Predicted completion times (µs). */
  readonly gatherv: number;
  readonly adaptive: number;
  /** Absent above --max-optimal-p. */
  readonly optimal?: number;
}

/** When a tree is predicted faster than MPI_Gatherv on the p grid. */
interface Crossing {
  /** Smallest p predicted faster (undefined: never on the grid). */
  readonly first?: number;
  /** Smallest p from which it is predicted faster at every larger p of the grid (undefined: not at the grid's end). */
  readonly steady?: number;
}

interface CaseResult {
  readonly b: number;
  readonly dist: DistributionName;
  readonly points: Point[];
  readonly adaptive: Crossing;
  readonly optimal: Crossing;
}

function crossing(points: readonly Point[], pick: (x: Point) => number | undefined): Crossing {
  const rows = points.filter((x) => pick(x) !== undefined);
  const wins = rows.map((x) => (pick(x) as number) < x.gatherv);
  const firstAt = wins.indexOf(true);
  let steadyAt: number | undefined;
  for (let k = wins.length - 1; k >= 0 && wins[k]; k--) steadyAt = k;
  return {
    ...(firstAt >= 0 ? { first: rows[firstAt].p } : {}),
    ...(steadyAt !== undefined ? { steady: rows[steadyAt].p } : {}),
  };
}

function tree(name: string): TreeAlgorithm {
  const alg = findTreeAlgorithm(name);
  if (alg === undefined) throw new Error(`no tree construction '${name}'`);
  return alg;
}

/** The evaluator's completion time of `alg`'s tree for these blocks, built and evaluated under `model`, root 0. */
function predict(alg: TreeAlgorithm, counts: readonly number[], model: CostModel): number {
  const built = alg.build(counts, model, { root: 0, op: 'gather' });
  return evaluate(built.tree, counts, model, 'gather').time;
}

function project(o: { alpha: number; beta: number; c: number; ps: number[]; bs: number[]; dists: DistributionName[]; maxOptimalP: number; rho: number; seed: number }): CaseResult[] {
  const mpi = linearModel({ alpha: o.alpha, beta: o.beta, gamma: 0 });
  const vcoll = linearModel({ alpha: o.alpha + o.c, beta: o.beta, gamma: 0 });
  const [linear, adaptive, optimal] = [tree('linear'), tree('adaptive'), tree('optimal')];
  const out: CaseResult[] = [];
  for (const b of o.bs) {
    for (const dist of o.dists) {
      const points: Point[] = o.ps.map((p) => {
        const counts = blockSizes(dist, { p, b, rho: o.rho, seed: o.seed });
        return {
          p,
          gatherv: predict(linear, counts, mpi),
          adaptive: predict(adaptive, counts, vcoll),
          ...(p <= o.maxOptimalP ? { optimal: predict(optimal, counts, vcoll) } : {}),
        };
      });
      out.push({ b, dist, points, adaptive: crossing(points, (x) => x.adaptive), optimal: crossing(points, (x) => x.optimal) });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Text.

const num = (x: number): string => (x === 0 ? '0' : Math.abs(x) >= 100 ? x.toFixed(0) : Number(x.toPrecision(3)).toString());
const ratio = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

function crossingText(x: Crossing, last: number | undefined): string {
  if (last === undefined) return '—';
  if (x.first === undefined) return `never (p ≤ ${last})`;
  if (x.steady === undefined) return `${x.first} (slower again at p = ${last})`;
  return x.steady === x.first ? String(x.first) : `${x.first} (steadily from ${x.steady})`;
}

function markdownTable(results: readonly CaseResult[], at: readonly number[]): string {
  const head = ['b (B/rank)', 'distribution', 'adaptive faster from p', 'optimal faster from p', ...at.map((p) => `p = ${p}: A, O`)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const r of results) {
    const lastP = r.points[r.points.length - 1]?.p;
    const lastOptimalP = r.points.filter((x) => x.optimal !== undefined).pop()?.p;
    const cells = at.map((p) => {
      const x = r.points.find((y) => y.p === p);
      if (x === undefined) return '—';
      return `${ratio(x.gatherv / x.adaptive)}, ${x.optimal === undefined ? '—' : ratio(x.gatherv / x.optimal)}`;
    });
    lines.push(`| ${[String(r.b), DISTRIBUTION_LABELS[r.dist], crossingText(r.adaptive, lastP), crossingText(r.optimal, lastOptimalP), ...cells].join(' | ')} |`);
  }
  return lines.join('\n') + '\n';
}

/** The predicted times at every p of one case (µs), as a markdown table. */
function detailTable(r: CaseResult): string {
  const lines = ['| p | MPI_Gatherv (µs) | vcoll adaptive (µs) | vcoll optimal (µs) |', '| ---: | ---: | ---: | ---: |'];
  for (const x of r.points) lines.push(`| ${x.p} | ${num(x.gatherv)} | ${num(x.adaptive)} | ${x.optimal === undefined ? '—' : num(x.optimal)} |`);
  return lines.join('\n') + '\n';
}

function firstLine(s: string): string {
  return s.split('\n')[0].trim();
}

function mpiLibrary(fromRun: string | undefined): string {
  if (fromRun !== undefined && fromRun.trim() !== '') return firstLine(fromRun);
  try {
    const launcher = process.env.VCOLL_MPIRUN ?? 'mpirun';
    return `${firstLine(execFileSync(launcher, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))} (launcher's --version)`;
  } catch {
    return 'unknown';
  }
}

function nproc(): number {
  try {
    return Number(execFileSync('nproc', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    return availableParallelism();
  }
}

const shellWord = (s: string): string => (/^[\w./,=:@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

// ---------------------------------------------------------------------------------------------
// main

interface Options {
  model?: string;
  execUs?: number;
  maxP: number;
  maxOptimalP: number;
  b: number[];
  dist: DistributionName[];
  at: number[];
  reps: number;
  execRuns: number;
  seed: number;
  rho: number;
  write?: string;
  json?: string;
  detail: boolean;
  sensitivity: boolean;
}

async function main(): Promise<void> {
  const o = new Command()
    .name('projection')
    .description(
      "model projection: from which p vcoll's adaptive / optimal gatherv trees over MPI are predicted to beat the MPI library's linear MPI_Gatherv " +
        '(α-β model with this machine\'s α, β and the executor\'s per-message cost c)',
    )
    .option('--model <file>', 'take α, β from this model JSON (vcoll estimate --transport mpi --p N --out FILE): the median over the links; default: measure on 2 MPI processes')
    .option('--exec-us <x>', "the executor's cost per message hop c (µs); default: measure with tools/mpi-schedule-bench.ts", parseNumberOption('exec-us', 0))
    .option('--max-p <n>', 'largest p of the grid p = 2, 4, 8, …', parseIntegerOption('max-p', 2), 65536)
    .option('--max-optimal-p <n>', 'largest p at which the optimal tree (O(p³) to build) is computed', parseIntegerOption('max-optimal-p', 0), 512)
    .option('--b <list>', 'bytes per rank (the average block size)', parseIntegerListOption('b', 1), [1, 100, 10000])
    .option('--dist <list>', 'block-size distributions (src/workloads/distributions.ts)', (v: string) => v.split(',').map((d) => parseDistribution(d, '--dist')), [
      'same',
      'random',
      'spikes',
    ] as DistributionName[])
    .option('--at <list>', 'the p at which to give the ratio MPI_Gatherv / vcoll', parseIntegerListOption('at', 2), [64, 512, 1024, 65536])
    .option('--reps <n>', 'timed round trips per link and size when measuring α, β', parseIntegerOption('reps', 1), 20)
    .option('--exec-runs <n>', 'runs of the schedule bench when measuring c (the median over them counts)', parseIntegerOption('exec-runs', 1), 3)
    .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
    .option('--rho <n>', 'ρ of spikes', parseIntegerOption('rho', 1), 5)
    .option('--write <file>', '(re)write this markdown doc (docs/projection.md) with the table')
    .option('--json <file>', 'write every number to FILE')
    .option('--no-detail', 'no per-p tables of predicted times in the doc')
    .option('--no-sensitivity', "no second table with α = the library's own MPI_Gatherv time per call (C loop, p = 2, b = 1 B; only when c is measured)")
    .parse()
    .opts<Options>();
  if (o.write !== undefined) checkOutputPath('--write', o.write);
  if (o.json !== undefined) checkOutputPath('--json', o.json);
  const ps: number[] = [];
  for (let p = 2; p <= o.maxP; p *= 2) ps.push(p);
  const at = o.at.filter((p) => ps.includes(p));
  const t0 = performance.now();
  const load0 = loadavg()[0];

  const ab = o.model !== undefined ? hockneyOfFile(o.model) : await measureHockney(o.reps);
  process.stderr.write(`α = ${num(ab.alpha)} µs, β = ${ab.beta.toExponential(3)} µs/B (${ab.source})\n`);
  const ec: ExecutorCost = o.execUs !== undefined ? { c: o.execUs, source: 'given: --exec-us' } : await measureExecutorCost(o.execRuns);
  process.stderr.write(`c = ${num(ec.c)} µs (${ec.source})\n`);

  const grid = { ps, bs: o.b, dists: o.dist, maxOptimalP: o.maxOptimalP, rho: o.rho, seed: o.seed };
  const results = project({ alpha: ab.alpha, beta: ab.beta, c: ec.c, ...grid });
  // Sensitivity: α := the library's own time per MPI_Gatherv at p = 2, b = 1 B (C loop, this run),
  // i.e. what one message costs the root when the library runs it back to back.
  const altAlpha = ec.measured?.cLoopMedianUs;
  const sensitivity = altAlpha === undefined || o.sensitivity === false ? undefined : project({ alpha: altAlpha, beta: ab.beta, c: ec.c, ...grid });
  const seconds = (performance.now() - t0) / 1000;
  const load1 = loadavg()[0];
  const loadText = `load average (1 min) ${load0.toFixed(2)} before the measurements, ${load1.toFixed(2)} after, on ${nproc()} cores`;
  const table = markdownTable(results, at);
  const sensitivityTable = sensitivity === undefined ? undefined : markdownTable(sensitivity, at);
  const library = mpiLibrary(ec.library);
  const cores = nproc();
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const command = ['npm run projection', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2).map(shellWord)] : [])].join(' ');
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

  process.stdout.write(
    `\nα = ${num(ab.alpha)} µs per message, β = ${ab.beta.toExponential(3)} µs per byte, c = ${num(ec.c)} µs per message (vcoll's executor); ` +
      `${library}; ${cores} cores; root 0; seed ${o.seed}, ρ ${o.rho}\n` +
      `columns "p = N: A, O": predicted MPI_Gatherv time / vcoll adaptive time, MPI_Gatherv / vcoll optimal at p = N (> 1: vcoll faster; —: optimal not computed above p = ${o.maxOptimalP})\n\n` +
      table +
      (sensitivityTable === undefined || altAlpha === undefined
        ? ''
        : `\nsensitivity: the same with α = ${num(altAlpha)} µs (the library's own MPI_Gatherv per call at p = 2, b = 1 B in a C loop, this run):\n\n` +
          sensitivityTable) +
      `\n${seconds.toFixed(1)} s; ${loadText}\n`,
  );

  if (o.json !== undefined) {
    const doc = {
      generated: date,
      command,
      machine: { nproc: cores, cpu, mpiLibrary: library, loadavgBefore: load0, loadavgAfter: load1 },
      alphaUs: ab.alpha,
      betaUsPerByte: ab.beta,
      executorUs: ec.c,
      hockney: ab,
      executor: ec,
      options: { maxP: o.maxP, maxOptimalP: o.maxOptimalP, b: o.b, dist: o.dist, root: 0, seed: o.seed, rho: o.rho },
      results,
      ...(sensitivity !== undefined ? { sensitivity: { alphaUs: altAlpha, results: sensitivity } } : {}),
    };
    writeFileSync(o.json, JSON.stringify(doc, null, 2) + '\n');
    process.stderr.write(`numbers written to ${o.json}\n`);
  }

  if (o.write !== undefined) {
    const m = ec.measured;
    const linkLine =
      ab.links === undefined
        ? ''
        : `  (per link: α ${ab.links.alpha.map(num).join(', ')} µs; β ${ab.links.beta.map((x) => x.toExponential(3)).join(', ')} µs/B` +
          (ab.links.residual !== undefined ? `; fit residual RMS ${ab.links.residual.map(num).join(', ')} µs` : '') +
          (ab.links.clamped ? `; ${ab.links.clamped} negative fitted value(s) set to 0` : '') +
          ')\n';
    const execLines =
      m === undefined
        ? ''
        : `  (per call at p = 2, b = 1 B: MPI_Gatherv in a C loop ${m.cLoopUs.map(num).join(', ')} µs, median ${num(m.cLoopMedianUs)}; ` +
          `vcoll's linear schedule ${m.linearUs.map(num).join(', ')} µs, median ${num(m.linearMedianUs)}; ` +
          `linear − C loop run by run: ${m.linearUs.map((x, i) => num(x - m.cLoopUs[i])).join(', ')} µs)\n`;
    const pick = o.b.includes(100) && o.dist.includes('random') ? results.find((r) => r.b === 100 && r.dist === 'random') : results[0];
    const doc =
      `# Projection: from which p do vcoll's gatherv trees over MPI beat MPI_Gatherv?\n\n` +
      `A **model projection**, not a measurement at scale: the α-β (Hockney) model's prediction — the simulator's (= evaluator's, ` +
      `src/trees/evaluate.ts) completion time — of the MPI library's linear MPI_Gatherv against vcoll's \`adaptive\` ` +
      `(Traff18's adaptive binomial tree) and \`optimal\` (Traff17's optimal ordered tree) gatherv run by vcoll's schedule executor ` +
      `over MPI, with the parameters below measured on this machine. Generated by \`tools/projection.ts\`.\n\n` +
      `- Regenerate: \`${command}\`\n` +
      `- Date: ${date}\n` +
      `- Machine: \`nproc\` = ${cores} (${cpu}); MPI library: ${library}; ${loadText}${Math.max(load0, load1) > cores ? ' (more runnable tasks than cores: other jobs shared the machine)' : ''}\n` +
      `- α = ${num(ab.alpha)} µs per message, β = ${ab.beta.toExponential(3)} µs per byte — ${ab.source}\n` +
      linkLine +
      `- c = ${num(ec.c)} µs per message — vcoll's executor's extra cost per message hop over the MPI library's own; ${ec.source}\n` +
      execLines +
      `\n## Model\n\n` +
      `For p = ${ps[0]}, ${ps[1] ?? ''}, … ${ps[ps.length - 1]} (powers of two), b ∈ {${o.b.join(', ')}} bytes per rank on average, ` +
      `distributions ${o.dist.map((d) => DISTRIBUTION_LABELS[d]).join(', ')} (src/workloads/distributions.ts, seed ${o.seed}, ρ = ${o.rho}), root 0, one port:\n\n` +
      `- **MPI_Gatherv** = the linear tree (every rank sends straight to the root, one after the other) under \`linearModel({ alpha: α, beta: β, gamma: 0 })\`;\n` +
      `- **vcoll adaptive**, **vcoll optimal** = those trees (built for root 0 under this model) under \`linearModel({ alpha: α + c, beta: β, gamma: 0 })\`: ` +
      `the executor's cost c charged on every message. The optimal tree takes O(p³) to build: computed up to p = ${o.maxOptimalP} only (— beyond).\n\n` +
      `## Result\n\n` +
      `"faster from p": the smallest p of the grid at which the tree is predicted faster than MPI_Gatherv ("steadily from": from there on at every larger p). ` +
      `Columns "p = N: A, O": the predicted ratio MPI_Gatherv time / vcoll adaptive time (A) and MPI_Gatherv / vcoll optimal (O) at p = N (> 1: vcoll predicted faster; — : not computed).\n\n` +
      table +
      (o.detail && pick !== undefined
        ? `\nPredicted times for b = ${pick.b}, ${DISTRIBUTION_LABELS[pick.dist]} (every case is in \`--json\`):\n\n` + detailTable(pick)
        : '') +
      (sensitivityTable === undefined || altAlpha === undefined
        ? ''
        : `\n### Sensitivity to α\n\n` +
          `The α above is the one-way time of a ping-pong through vcoll's point-to-point over MPI (a half round trip, latency included), ` +
          `${ratio(ab.alpha / altAlpha)}× the library's own time per MPI_Gatherv at p = 2, b = 1 B run back to back in C ` +
          `(${num(altAlpha)} µs, same run). The model charges α on every message the root receives one after the other, so the ` +
          `linear gather pays it p − 1 times: the larger α, the better the trees look. ` +
          `The same projection with **α = ${num(altAlpha)} µs** (β, c unchanged) — the other end of the plausible range ` +
          `(back-to-back calls overlap latencies, so this α leaves latency out):\n\n` +
          sensitivityTable) +
      `\n## Caveat: read before acting on it\n\n` +
      `- This is the α-β model with a **constant per-message executor cost c**: no contention (the root's single port is the only ` +
      `serialisation), no network topology or hierarchy (every pair of ranks costs the same α, β), no noise, no protocol switches ` +
      `(eager/rendezvous), no memory or cache effects. MPI_Gatherv is modelled as the linear algorithm (what Open MPI and MPICH ship); ` +
      `a library may use another.\n` +
      `- α, β and c were **measured only at p ≤ 4 on one machine** (${o.model === undefined ? 'here: 2 MPI processes on this machine, shared memory between cores' : `α, β here: from ${o.model}`}): every p above that ` +
      `is extrapolated by the model. α is the one-way time of vcoll's point-to-point over MPI (what \`vcoll estimate --transport mpi\` measures), ` +
      `so it contains per-message costs of vcoll's transport beyond the library's own; a larger α favours the trees (the linear ` +
      `gather pays α p − 1 times, a tree about log₂ p times).\n` +
      (altAlpha !== undefined
        ? `- The conclusion depends on α: with α = ${num(ab.alpha)} µs (ping-pong) and with α = ${num(altAlpha)} µs (the library's own ` +
          `per-call cost) the crossovers above differ; neither is the library's true per-message cost at the root of a large gather.\n`
        : '') +
      (m !== undefined
        ? `- c is a small difference of two short timings on a machine shared with other jobs: run by run it was ` +
          `${m.linearUs.map((x, i) => num(x - m.cLoopUs[i])).join(', ')} µs here (the median counts). The larger c, the later the trees win; ` +
          `re-run (\`--exec-runs N\` for more runs) or give \`--exec-us\` to see how the crossover moves.\n`
        : '') +
      `- Real clusters differ (inter-node α and β depend on the network and the MPI library's protocols, and the root's link is shared): the ` +
      `crossover p can move by orders of magnitude.\n` +
      `- Re-run \`npm run projection\` on your own machine — with \`--model FILE\` from \`vcoll estimate --transport mpi --p N --out FILE\` ` +
      `run on your hosts — before acting on it, and confirm at the largest p you can run (\`npm run bench:mpi-gatherv\`).\n`;
    writeFileSync(o.write, doc);
    process.stderr.write(`doc written to ${o.write}\n`);
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await main();
  } catch (e) {
    if (!(e instanceof InvalidArgumentError)) throw e;
    process.stderr.write(`projection: ${e.message}\n`);
    process.exitCode = 2;
  }
}
