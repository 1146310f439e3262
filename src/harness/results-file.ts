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
  checkShape(path, r);
  // JSON has no Infinity: a ratio over a zero median was written as null.
  const verdicts = (r.verdicts as BenchResults['verdicts']).map((v) => (v.ratio === null ? { ...v, ratio: Infinity } : v));
  return { ...(r as BenchResults), verdicts, skipped: Array.isArray(r.skipped) ? r.skipped : [], inter: Array.isArray(r.inter) ? r.inter : [] };
}

type Kind = 'string' | 'number' | 'boolean' | 'numbers' | 'strings' | 'object';

/** The fields the tables, the CSV and the report read, with their JSON types (null numbers: see verdict ratios). */
const CONFIG_FIELDS: Readonly<Record<string, Kind>> = { transport: 'string', ops: 'strings', dists: 'strings', ps: 'numbers', reps: 'number', warmup: 'number', alpha: 'number', references: 'string', model: 'object' };
const ROW_FIELDS: Readonly<Record<string, Kind>> = {
  op: 'string',
  kind: 'string',
  name: 'string',
  algorithm: 'string',
  dist: 'string',
  b: 'number',
  p: 'number',
  root: 'number',
  size: 'number',
  verified: 'boolean',
  mismatches: 'strings',
  times: 'numbers',
  stats: 'object',
  messages: 'number',
  bytes: 'number',
};
const STATS_FIELDS: Readonly<Record<string, Kind>> = { n: 'number', min: 'number', max: 'number', mean: 'number', median: 'number', q1: 'number', q3: 'number', stddev: 'number' };
const VERDICT_FIELDS: Readonly<Record<string, Kind>> = {
  guideline: 'string',
  op: 'string',
  algorithm: 'string',
  dist: 'string',
  b: 'number',
  p: 'number',
  lhs: 'string',
  rhs: 'string',
  lhsMedian: 'number',
  rhsMedian: 'number',
  pValue: 'number',
  verdict: 'string',
};
const INTER_FIELDS: Readonly<Record<string, Kind>> = { setting: 'number', ranks: 'number', p: 'number', q: 'number', size: 'number', rootGathering: 'number', algorithm: 'number', ratio: 'number', expected: 'number', verified: 'boolean' };

function isKind(v: unknown, k: Kind): boolean {
  switch (k) {
    case 'numbers':
      return Array.isArray(v) && v.every((x) => typeof x === 'number');
    case 'strings':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    default:
      return typeof v === k;
  }
}

/** Every field the readers use has its type, else InvalidArgumentError(`${where}.field`) naming the file. */
function checkFields(path: string, where: string, o: unknown, fields: Readonly<Record<string, Kind>>): void {
  if (!isKind(o, 'object')) throw new InvalidArgumentError(where, `${path}: must be an object, got ${o === null ? 'null' : typeof o}`);
  const rec = o as Record<string, unknown>;
  for (const [f, k] of Object.entries(fields)) {
    const v = rec[f];
    if (!isKind(v, k)) throw new InvalidArgumentError(`${where}.${f}`, `${path}: must be ${k === 'object' ? 'an object' : k === 'numbers' ? 'an array of numbers' : k === 'strings' ? 'an array of strings' : `a ${k}`}, got ${v === null ? 'null' : Array.isArray(v) ? 'an array with other entries' : typeof v}`);
  }
}

/** The rows, verdicts, intergroup rows and configuration as `vcoll bench --json` writes them (not a crash on a damaged file). */
function checkShape(path: string, r: Partial<BenchResults>): void {
  checkFields(path, 'config', r.config, CONFIG_FIELDS);
  (r.rows ?? []).forEach((row, i) => {
    checkFields(path, `rows[${i}]`, row, ROW_FIELDS);
    checkFields(path, `rows[${i}].stats`, row.stats, STATS_FIELDS);
  });
  (r.verdicts ?? []).forEach((v, i) => {
    checkFields(path, `verdicts[${i}]`, v, VERDICT_FIELDS);
    if (v.ratio !== null && typeof v.ratio !== 'number') throw new InvalidArgumentError(`verdicts[${i}].ratio`, `${path}: must be a number, got ${typeof v.ratio}`);
  });
  if (Array.isArray(r.inter)) r.inter.forEach((x, i) => checkFields(path, `inter[${i}]`, x, INTER_FIELDS));
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

/** The CSV columns of the intergroup cases (Kang19), in order. */
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
