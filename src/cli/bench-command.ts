/**
 * `vcoll bench`, `vcoll guidelines` and `vcoll report`: the benchmark harness on the
 * command line (src/harness/harness.ts does the work): runs write JSON and CSV, `guidelines`
 * prints the violations of a results file, `report` turns it into a self-contained HTML page.
 */
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import { writeFileSync } from 'node:fs';
import { BENCH_DEFAULTS } from '../harness/bench-defaults.js';
import { runBench, simBenchHeapBytes } from '../harness/harness.js';
import { heapToRaise } from '../util/limits.js';
import { evaluateGuidelines } from '../harness/guidelines.js';
import type { BenchConfig, BenchResults, GuidelineVerdict } from '../harness/results.js';
import { interCsv, interCsvPath, readResultsJson, resultsCsv, writeResultsJson } from '../harness/results-file.js';
import { InvalidArgumentError } from '../errors.js';
import type { TransportName, VOperation } from '../run/spec.js';
import { parseSettings } from './inter-command.js';
import { parseDistributionList } from './model-command.js';
import { checkOutputPath } from './options.js';

export interface BenchCommandOptions {
  transport: TransportName;
  ops: string;
  algorithms: string;
  dists: string;
  b: number[];
  p: number[];
  reps?: number;
  warmup?: number;
  quick: boolean;
  root: number;
  unitBytes: number;
  rho: number;
  seed: number;
  alpha: number;
  beta: number;
  gamma: number;
  calibrate: boolean;
  persistent: boolean;
  references: BenchConfig['references'];
  significance: number;
  json?: string;
  csv?: string;
  report?: string;
  format: 'table' | 'json';
  progress?: boolean;
  interSettings?: string;
  interSizes?: number[];
  interRanks?: number[];
  /**
   * --references was not given (the CLI's default 'vcoll'): on the simulator, references that
   * would not fit in memory at some p are left out there with a note on stderr and in the
   * results' `referencesDropped`; given explicitly (or unset here), such a run is refused.
   */
  referencesDefault?: boolean;
}

/** Kang19's sweep on the simulator (64 KiB … 8 MiB per rank); on threads real bytes, so smaller. */
const INTER_SIZES = { sim: [65536, 262144, 1048576, 4194304, 8388608], threads: [16384, 65536, 262144] } as const;
const INTER_RANKS = { sim: [64], threads: [8] } as const;

const list = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

function interSettingsOf(v: string | undefined): number[] {
  if (v === undefined || v.trim() === '' || v.trim() === 'none') return [];
  return parseSettings(v.trim(), '--inter-settings');
}

/** The configuration the options describe (validated by runBench before any work). */
export function benchConfigOf(o: BenchCommandOptions): BenchConfig {
  return {
    ...BENCH_DEFAULTS,
    transport: o.transport,
    ops: (o.ops.trim() === 'none' ? [] : list(o.ops)) as VOperation[],
    algorithms: list(o.algorithms),
    dists: o.dists.trim() === 'seed000' ? BENCH_DEFAULTS.dists : parseDistributionList(o.dists, '--dists'),
    bs: o.b,
    ps: o.p,
    reps: o.reps ?? (o.quick ? 10 : BENCH_DEFAULTS.reps),
    warmup: o.warmup ?? (o.quick ? 2 : BENCH_DEFAULTS.warmup),
    root: o.root,
    unitBytes: o.unitBytes,
    rho: o.rho,
    seed: o.seed,
    model: { alpha: o.alpha, beta: o.beta, gamma: o.gamma },
    calibrate: o.calibrate && o.transport !== 'sim',
    persistent: o.persistent,
    references: o.references,
    alpha: o.significance,
    interSettings: interSettingsOf(o.interSettings),
    interSizes: o.interSizes ?? [...(o.transport === 'sim' ? INTER_SIZES.sim : INTER_SIZES.threads)],
    interRanks: o.interRanks ?? [...(o.transport === 'sim' ? INTER_RANKS.sim : INTER_RANKS.threads)],
  };
}

function progressBar(show: boolean, forced: boolean): cliProgress.SingleBar | undefined {
  if (!show) return undefined;
  return new cliProgress.SingleBar(
    {
      format: 'bench [{bar}] {value}/{total} cases {label}',
      stream: process.stderr,
      clearOnComplete: true,
      hideCursor: true,
      noTTYOutput: forced,
      notTTYSchedule: 1000,
    },
    cliProgress.Presets.shades_classic,
  );
}

/** A time for tables: µs for seconds, as is for model units. */
export function timeText(x: number, unit: BenchResults['timeUnit']): string {
  if (unit === 'model') return x.toPrecision(4);
  const us = x * 1e6;
  return us >= 100 ? us.toFixed(0) : us.toPrecision(3);
}

/** One line per case: each variant's median, and the guidelines it violated. */
export function resultsTable(r: BenchResults): string {
  const names = [...new Set(r.rows.filter((x) => x.kind === 'algorithm').map((x) => x.name))];
  const refs = [
    { kind: 'gl1', head: 'GL1: regular(m)' },
    { kind: 'gl2', head: 'GL2: mock-up' },
  ].filter((f) => r.rows.some((x) => x.kind === f.kind));
  const unit = r.timeUnit === 'model' ? 'model units' : 'µs';
  const table = new Table({
    head: ['op', 'p', 'dist', 'b', ...names, ...refs.map((f) => f.head), 'violations'],
    style: { head: [], border: [] },
  });
  const cases = new Map<string, BenchResults['rows'][number][]>();
  for (const row of r.rows) {
    const k = `${row.op}|${row.p}|${row.dist}|${row.b}`;
    const at = cases.get(k);
    if (at) at.push(row);
    else cases.set(k, [row]);
  }
  const cellOf = (row: BenchResults['rows'][number] | undefined): string =>
    row === undefined ? '' : `${timeText(row.stats.median, r.timeUnit)}${row.verified ? '' : ' UNVERIFIED'}`;
  for (const rows of cases.values()) {
    const x = rows[0];
    const violated = r.verdicts.filter((v) => v.verdict === 'violated' && v.op === x.op && v.p === x.p && v.dist === x.dist && v.b === x.b);
    table.push([
      x.op,
      String(x.p),
      x.dist,
      String(x.b),
      ...names.map((n) => cellOf(rows.find((y) => y.kind === 'algorithm' && y.name === n))),
      ...refs.map((f) => cellOf(rows.find((y) => y.kind === f.kind))),
      violated.map((v) => `${v.guideline} ${v.algorithm}`).join(', '),
    ]);
  }
  return `medians (${unit}) over ${r.config.reps} repetitions after ${r.config.warmup} warm-ups, slowest process; ${r.config.transport}\n${table.toString()}\n`;
}

/** Kang19's intergroup cases: both algorithms' times and the improvement beside Eq. (5). */
export function interTable(r: BenchResults): string {
  const table = new Table({
    head: ['setting', 'p + q', 'p', 'q', 'size (B)', 'root gathering', 'Algorithm 1/2', 'improvement', 'Eq. (5)', 'verified'],
    style: { head: [], border: [] },
  });
  for (const x of r.inter) {
    table.push([
      String(x.setting),
      String(x.ranks),
      String(x.p),
      String(x.q),
      String(x.size),
      timeText(x.rootGathering, r.timeUnit),
      timeText(x.algorithm, r.timeUnit),
      x.ratio.toFixed(2),
      x.expected.toFixed(2),
      x.verified ? 'yes' : 'NO',
    ]);
  }
  return `intergroup allgather (settings 1-4, Algorithm 1) and allgatherv (5-8, Algorithm 2) vs root gathering (Kang19), ${r.timeUnit === 'model' ? 'model units' : 'µs'}, minimum over ${r.config.reps} repetitions\n${table.toString()}\n`;
}

/** The violations (or every verdict) as a table. */
export function verdictTable(verdicts: readonly GuidelineVerdict[], unit: BenchResults['timeUnit']): string {
  const table = new Table({
    head: ['guideline', 'op', 'algorithm', 'dist', 'b', 'p', 'left', 'right', 'left median', 'right median', 'ratio', 'p-value', 'verdict'],
    style: { head: [], border: [] },
  });
  for (const v of verdicts) {
    table.push([
      v.guideline,
      v.op,
      v.algorithm,
      v.dist,
      String(v.b),
      String(v.p),
      v.lhs,
      v.rhs,
      timeText(v.lhsMedian, unit),
      timeText(v.rhsMedian, unit),
      Number.isFinite(v.ratio) ? v.ratio.toFixed(2) : String(v.ratio),
      v.pValue < 1e-4 ? v.pValue.toExponential(1) : v.pValue.toFixed(4),
      v.verdict,
    ]);
  }
  return table.toString();
}

function verdictSummary(r: BenchResults): string {
  const parts: string[] = [];
  for (const g of ['GL1', 'GL2'] as const) {
    const all = r.verdicts.filter((v) => v.guideline === g);
    if (all.length === 0) continue;
    parts.push(`${g}: ${all.filter((v) => v.verdict === 'violated').length} of ${all.length} violated`);
  }
  if (parts.length === 0) return (r.referencesDropped?.length ?? 0) > 0 ? 'no guideline verdicts (the references were left out)' : 'no guideline verdicts (no references)';
  return `${parts.join('; ')} (one-sided Wilcoxon rank-sum, α = ${r.config.alpha})`;
}

/**
 * The heap (MiB) to run `vcoll bench --transport sim` again with (src/cli/heap-rerun.ts) when
 * its ranks need more than Node's heap limit but fit the memory limit; else undefined.
 */
export function heapForBench(o: BenchCommandOptions): number | undefined {
  let config: BenchConfig;
  try {
    config = benchConfigOf(o);
  } catch {
    return undefined; // runBenchCommand reports it
  }
  const bytes = simBenchHeapBytes(config);
  return bytes === undefined ? undefined : heapToRaise(bytes);
}

export async function runBenchCommand(o: BenchCommandOptions, out: NodeJS.WritableStream = process.stdout): Promise<BenchResults> {
  // the files are written after the run: checked before it, not to lose the results
  if (o.json !== undefined) checkOutputPath('--json', o.json);
  if (o.csv !== undefined) {
    checkOutputPath('--csv', o.csv);
    checkOutputPath('--csv', interCsvPath(o.csv));
  }
  if (o.report !== undefined) checkOutputPath('--report', o.report);
  const config = benchConfigOf(o);
  if (o.report !== undefined) {
    // vega and vega-lite are optional: when they are missing, say so now, not after the whole run
    const { loadPlotting } = await import('../report/charts.js');
    await loadPlotting();
  }
  const bar = progressBar(o.progress ?? Boolean(process.stderr.isTTY), o.progress === true);
  let started = false;
  let results: BenchResults;
  try {
    results = await runBench(config, {
      referencesTooLarge: o.referencesDefault === true ? 'drop' : 'refuse',
      onNote: (text) => process.stderr.write(`vcoll: note: ${text}\n`),
      onProgress: (done, total, label) => {
        if (!bar) return;
        if (!started) {
          bar.start(total, 0, { label: '' });
          started = true;
        }
        bar.update(done, { label });
      },
    });
  } finally {
    bar?.stop();
  }
  if (o.json !== undefined) writeResultsJson(o.json, results);
  if (o.csv !== undefined) {
    writeFileSync(o.csv, resultsCsv(results));
    if (results.inter.length > 0) writeFileSync(interCsvPath(o.csv), interCsv(results));
  }
  if (o.report !== undefined) {
    const { renderReport } = await import('../report/html.js');
    writeFileSync(o.report, await renderReport(results));
  }
  if (o.format === 'json') {
    out.write(`${JSON.stringify(results)}\n`);
  } else {
    if (results.rows.length > 0) out.write(resultsTable(results));
    if (results.inter.length > 0) out.write(interTable(results));
    const violated = results.verdicts.filter((v) => v.verdict === 'violated');
    out.write(`${verdictSummary(results)}\n`);
    for (const d of results.referencesDropped ?? []) out.write(`references left out at p = ${d.p} (${d.references.join(', ')}): ${d.reason}\n`);
    if (violated.length > 0) out.write(`${verdictTable(violated, results.timeUnit)}\n`);
    const bad = [
      ...results.rows.filter((x) => !x.verified).map((x) => `${x.op} ${x.name} ${x.dist} b=${x.b} p=${x.p}: ${x.mismatches[0] ?? ''}`),
      ...results.inter.filter((x) => !x.verified).map((x) => `intergroup setting ${x.setting} ranks=${x.ranks} size=${x.size}`),
    ];
    out.write(bad.length === 0 ? 'every execution verified\n' : `NOT VERIFIED: ${bad.join('; ')}\n`);
    const csvs = o.csv === undefined ? '' : `; CSV: ${o.csv}${results.inter.length > 0 ? `, ${interCsvPath(o.csv)}` : ''}`;
    out.write(`${results.seconds.toFixed(1)} s${o.json ? `; JSON: ${o.json}` : ''}${csvs}${o.report ? `; report: ${o.report}` : ''}\n`);
  }
  return results;
}

export interface GuidelinesCommandOptions {
  significance?: number;
  all: boolean;
  format: 'table' | 'json';
  strict: boolean;
}

/** Prints a results file's guideline violations (re-judged at --significance when given). Returns how many. */
export function runGuidelinesCommand(file: string, o: GuidelinesCommandOptions, out: NodeJS.WritableStream = process.stdout): number {
  const r = readResultsJson(file, 'results-file');
  if (o.significance !== undefined && !(o.significance > 0 && o.significance < 1)) {
    throw new InvalidArgumentError('--significance', `must be in (0, 1), got ${o.significance}`);
  }
  const verdicts = o.significance === undefined ? r.verdicts : evaluateGuidelines(r.rows, o.significance);
  const violated = verdicts.filter((v) => v.verdict === 'violated');
  const shown = o.all ? verdicts : violated;
  if (o.format === 'json') {
    out.write(`${JSON.stringify(shown)}\n`);
  } else {
    const alpha = o.significance ?? r.config.alpha;
    out.write(`${file}: ${violated.length} of ${verdicts.length} guideline checks violated (one-sided Wilcoxon rank-sum, α = ${alpha}; ${r.config.transport}, ${r.config.reps} repetitions)\n`);
    if (shown.length > 0) out.write(`${verdictTable(shown, r.timeUnit)}\n`);
  }
  return violated.length;
}

export interface ReportCommandOptions {
  out: string;
}

export async function runReportCommand(file: string, o: ReportCommandOptions, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  checkOutputPath('--out', o.out);
  const r = readResultsJson(file, 'results-file');
  const { renderReport } = await import('../report/html.js');
  writeFileSync(o.out, await renderReport(r));
  out.write(`report written to ${o.out} (${r.rows.length} rows, ${r.verdicts.filter((v) => v.verdict === 'violated').length} violations)\n`);
}
