/**
 * `vcoll bench`'s results on disk: the JSON file (BenchResults whole, configuration included)
 * and the CSV table (one line per row, with the configuration fields a spreadsheet needs to
 * tell runs apart, the statistics and the repetitions' times), and reading a JSON file back
 * with a clear error when it is not one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { InvalidArgumentError } from '../errors.js';
import { RESULTS_SCHEMA, type BenchResults } from './results.js';

export function writeResultsJson(path: string, results: BenchResults): void {
  writeFileSync(path, `${JSON.stringify(results, null, 1)}\n`);
}

/** Reads a results file written by `vcoll bench --json`; InvalidArgumentError(field) otherwise. */
export function readResultsJson(path: string, field = 'results'): BenchResults {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InvalidArgumentError(field, `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new InvalidArgumentError(field, `${path} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const r = data as Partial<BenchResults> | null;
  if (r === null || typeof r !== 'object' || r.schema !== RESULTS_SCHEMA) {
    throw new InvalidArgumentError(field, `${path} is not a vcoll bench results file (schema "${RESULTS_SCHEMA}" expected: write one with vcoll bench --json FILE)`);
  }
  if (!Array.isArray(r.rows) || !Array.isArray(r.verdicts) || typeof r.config !== 'object') {
    throw new InvalidArgumentError(field, `${path}: rows, verdicts or config missing`);
  }
  // JSON has no Infinity: a ratio over a zero median was written as null.
  const verdicts = (r.verdicts as BenchResults['verdicts']).map((v) => (v.ratio === null ? { ...v, ratio: Infinity } : v));
  return { ...(r as BenchResults), verdicts, skipped: Array.isArray(r.skipped) ? r.skipped : [], inter: Array.isArray(r.inter) ? r.inter : [] };
}

/** The CSV columns, in order. */
export const CSV_COLUMNS = [
  'transport',
  'op',
  'kind',
  'name',
  'algorithm',
  'dist',
  'b',
  'p',
  'root',
  'size',
  'max_block',
  'unit_bytes',
  'rho',
  'seed',
  'persistent',
  'calibrated',
  'model_alpha',
  'model_beta',
  'model_gamma',
  'references',
  'significance',
  'warmup',
  'reps',
  'time_unit',
  'min',
  'median',
  'mean',
  'max',
  'q1',
  'q3',
  'stddev',
  'predicted',
  'messages',
  'bytes',
  'verified',
  'gl1',
  'gl2',
  'times',
] as const;

function cell(x: string | number | boolean | undefined): string {
  if (x === undefined) return '';
  const s = String(x);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The results as CSV; gl1 / gl2: the row's verdict where one was judged for it ('held' / 'violated'). */
export function resultsCsv(results: BenchResults): string {
  const c = results.config;
  const verdictOf = (g: 'GL1' | 'GL2', op: string, algorithm: string, dist: string, b: number, p: number): string | undefined =>
    results.verdicts.find((v) => v.guideline === g && v.op === op && v.algorithm === algorithm && v.dist === dist && v.b === b && v.p === p)?.verdict;
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of results.rows) {
    const s = r.stats;
    const alg = r.kind === 'algorithm' ? r.name : undefined;
    lines.push(
      [
        c.transport,
        r.op,
        r.kind,
        r.name,
        r.algorithm,
        r.dist,
        r.b,
        r.p,
        r.root,
        r.size,
        r.maxBlock,
        c.unitBytes,
        c.rho,
        c.seed,
        c.persistent,
        results.calibration !== undefined,
        c.model.alpha,
        c.model.beta,
        c.model.gamma,
        c.references,
        c.alpha,
        c.warmup,
        c.reps,
        results.timeUnit,
        s.min,
        s.median,
        s.mean,
        s.max,
        s.q1,
        s.q3,
        s.stddev,
        r.predicted,
        r.messages,
        r.bytes,
        r.verified,
        alg === undefined ? undefined : verdictOf('GL1', r.op, alg, r.dist, r.b, r.p),
        alg === undefined ? undefined : verdictOf('GL2', r.op, alg, r.dist, r.b, r.p),
        r.times.join(' '),
      ]
        .map(cell)
        .join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The CSV columns of the intergroup cases (seed 003), in order. */
export const INTER_CSV_COLUMNS = ['transport', 'setting', 'ranks', 'p', 'q', 'size', 'k_a', 'k_b', 'time_unit', 'warmup', 'reps', 'root_gathering', 'algorithm', 'ratio', 'expected', 'verified'] as const;

/** The intergroup cases as CSV (`vcoll bench --csv FILE` writes them to FILE with `.inter` before the extension). */
export function interCsv(results: BenchResults): string {
  const c = results.config;
  const lines = [INTER_CSV_COLUMNS.join(',')];
  for (const r of results.inter) {
    lines.push([c.transport, r.setting, r.ranks, r.p, r.q, r.size, r.kA, r.kB, results.timeUnit, c.warmup, c.reps, r.rootGathering, r.algorithm, r.ratio, r.expected, r.verified].map(cell).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** Where the intergroup CSV goes beside `csvPath`: results.csv → results.inter.csv. */
export function interCsvPath(csvPath: string): string {
  return /\.csv$/i.test(csvPath) ? csvPath.replace(/\.csv$/i, '.inter.csv') : `${csvPath}.inter.csv`;
}
