/**
 * `vcoll bench` (Traff18 §5's method): on the simulator the run is deterministic and every measured data
 * phase equals the model's prediction; references and verdicts are there; bad configuration
 * fails before any work with the field named; a small run on worker threads is verified and
 * calibrated; the CLI writes JSON and CSV, and `vcoll guidelines` reads them back.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_DEFAULTS } from '../src/harness/bench-defaults.js';
import { runBench, validateBenchConfig } from '../src/harness/harness.js';
import { CSV_COLUMNS, INTER_CSV_COLUMNS, interCsv, interCsvPath, readResultsJson, resultsCsv } from '../src/harness/results-file.js';
import type { BenchConfig, BenchResults } from '../src/harness/results.js';
import { InvalidArgumentError } from '../src/errors.js';
import { vcoll } from './helpers/cli.js';
import { renderBenchReport, runBench as runBenchFromIndex } from '../src/index.js';

const SIM: BenchConfig = {
  ...BENCH_DEFAULTS,
  transport: 'sim',
  algorithms: ['linear', 'binomial', 'adaptive', 'optimal', 'two-block'],
  dists: ['same', 'random', 'spikes', 'two-blocks'],
  bs: [1, 10, 100],
  ps: [4, 7],
  reps: 5,
  warmup: 1,
  calibrate: false,
  persistent: true,
  model: { alpha: 100, beta: 1, gamma: 0.5 },
};

const dir = mkdtempSync(join(tmpdir(), 'vcoll-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Rows without the run's clock (what must repeat exactly). */
const stable = (r: BenchResults): unknown => ({ rows: r.rows, verdicts: r.verdicts, skipped: r.skipped });

describe('vcoll bench on the simulator', () => {
  it('is deterministic, verified, and every data phase takes exactly the predicted time', async () => {
    const a = await runBench(SIM);
    const b = await runBench(SIM);
    expect(stable(b)).toEqual(stable(a));
    expect(a.timeUnit).toBe('model');
    const algorithms = a.rows.filter((r) => r.kind === 'algorithm');
    // 2 ops × 4 dists × 3 b × 2 p cases; two-block runs only where there are at most two sizes.
    expect(algorithms.length).toBe(2 * 4 * 3 * 2 * 4 + a.rows.filter((r) => r.name === 'two-block').length);
    expect(a.skipped.every((s) => s.algorithm === 'two-block' && s.reason === 'more than two block sizes')).toBe(true);
    expect(a.skipped.length).toBeGreaterThan(0);
    for (const r of a.rows) {
      expect(r.verified, `${r.op} ${r.name} ${r.dist} b=${r.b} p=${r.p}: ${r.mismatches.join('; ')}`).toBe(true);
      expect(r.times).toHaveLength(SIM.reps);
      // The simulator repeats itself exactly.
      expect(r.stats.min).toBe(r.stats.max);
    }
    for (const r of algorithms) {
      expect(r.predictedCovers).toBe('whole');
      expect(r.stats.median, `${r.op} ${r.name} ${r.dist} b=${r.b} p=${r.p}`).toBe(r.predicted);
    }
  });

  it('non-persistent: a prediction that covers the whole run equals it; one of the data phase alone is below it', async () => {
    const r = await runBench({ ...SIM, persistent: false, algorithms: ['linear', 'binomial', 'adaptive', 'optimal'], dists: ['random', 'spikes'], ps: [8] });
    const rows = r.rows.filter((x) => x.kind === 'algorithm');
    expect(rows.filter((x) => x.name === 'linear').every((x) => x.predictedCovers === 'whole')).toBe(true);
    expect(rows.filter((x) => x.name === 'adaptive').every((x) => x.predictedCovers === 'data')).toBe(true);
    for (const row of rows) {
      if (row.predictedCovers === 'whole') expect(row.stats.median, `${row.name} ${row.dist} b=${row.b}`).toBe(row.predicted);
      else expect(row.stats.median, `${row.name} ${row.dist} b=${row.b}`).toBeGreaterThan(row.predicted ?? Infinity);
    }
  });

  it('measures GL1 (on same) and GL2 references and judges them: the slower side is the violated one', async () => {
    const r = await runBench({ ...SIM, persistent: false, algorithms: ['linear', 'adaptive'], dists: ['same', 'random'], bs: [1, 1000], ps: [8] });
    const refs = r.rows.filter((x) => x.kind !== 'algorithm');
    expect(refs.filter((x) => x.kind === 'gl1').every((x) => x.dist === 'same')).toBe(true);
    expect(refs.filter((x) => x.kind === 'gl1')).toHaveLength(2 * 2);
    expect(refs.filter((x) => x.kind === 'gl2')).toHaveLength(2 * 2 * 2);
    expect(refs.map((x) => x.name)).toContain('allreduce + gather(p·max)');
    expect(refs.map((x) => x.name)).toContain('scatter(m)');
    expect(r.verdicts.filter((v) => v.guideline === 'GL1')).toHaveLength(2 * 2 * 2);
    expect(r.verdicts.filter((v) => v.guideline === 'GL2')).toHaveLength(2 * 2 * 2 * 2);
    // Deterministic samples: a verdict is 'violated' exactly when the left side is slower.
    for (const v of r.verdicts) expect(v.verdict, `${v.guideline} ${v.op} ${v.algorithm} ${v.dist} b=${v.b}`).toBe(v.lhsMedian > v.rhsMedian ? 'violated' : 'held');
    expect(r.verdicts.some((v) => v.verdict === 'violated')).toBe(true);
    expect(r.verdicts.some((v) => v.verdict === 'held')).toBe(true);
  });

  it('without references: no reference rows, no verdicts', async () => {
    const r = await runBench({ ...SIM, references: 'none', algorithms: ['linear'], dists: ['same'], bs: [10], ps: [4] });
    expect(r.rows.map((x) => x.kind)).toEqual(['algorithm', 'algorithm']);
    expect(r.verdicts).toEqual([]);
  });
});

describe('bad configuration fails before any work, naming the field', () => {
  const bad: [string, Partial<BenchConfig>][] = [
    ['algorithms', { algorithms: ['linear', 'fastest'] }],
    ['algorithms', { algorithms: ['mpi-native'] }],
    ['dists', { dists: ['same', 'lumpy' as BenchConfig['dists'][number]] }],
    ['b', { bs: [10, -1] }],
    ['b', { bs: [0] }],
    ['b', { bs: [] }],
    ['p', { ps: [0] }],
    ['p', { ps: [2.5] }],
    ['ops', { ops: ['allgather' as BenchConfig['ops'][number]] }],
    ['root', { root: 4, ps: [4, 8] }],
    ['reps', { reps: 0 }],
    ['transport', { transport: 'tcp' as BenchConfig['transport'] }],
    ['calibrate', { calibrate: true }],
    ['references', { references: 'mpi-native' }],
    ['significance', { alpha: 1 }],
    ['model.beta', { model: { alpha: 1, beta: -1, gamma: 0 } }],
  ];
  it.each(bad)('%s: %o', async (field, patch) => {
    const config = { ...SIM, ...patch };
    let progressed = false;
    const e = await runBench(config, { onProgress: () => (progressed = true) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).field).toBe(field);
    expect(progressed).toBe(false);
    expect(() => validateBenchConfig(config)).toThrow(InvalidArgumentError);
  });
});

describe('vcoll bench on worker threads', () => {
  it('calibrates, verifies every execution and predicts in seconds', async () => {
    const r = await runBench({
      ...BENCH_DEFAULTS,
      transport: 'threads',
      algorithms: ['linear', 'adaptive'],
      dists: ['same', 'spikes'],
      bs: [1, 100],
      ps: [3],
      reps: 4,
      warmup: 1,
      calibrate: true,
    });
    expect(r.timeUnit).toBe('s');
    expect(r.calibration?.unit).toBe('µs');
    expect(r.calibration?.alpha).toBeGreaterThan(0);
    expect(r.calibrations?.map((k) => k.p)).toEqual([3]);
    expect(r.calibrations?.[0].alpha).toBe(r.calibration?.alpha);
    expect(r.rows.every((x) => x.verified)).toBe(true);
    expect(r.rows.every((x) => x.times.length === 4 && x.times.every((t) => t > 0 && t < 5))).toBe(true);
    const algorithms = r.rows.filter((x) => x.kind === 'algorithm');
    expect(algorithms.every((x) => x.predicted !== undefined && x.predicted > 0 && x.predicted < 1)).toBe(true);
    expect(r.verdicts.length).toBe(2 * (2 * 2 * 2) + 2 * 2 * 2); // GL2 for every algorithm row, GL1 on same
  }, 120_000);
});

describe('the library API', () => {
  it('runs a bench and renders its report from the package entry point', async () => {
    const r = await runBenchFromIndex({ ...SIM, algorithms: ['linear', 'adaptive'], dists: ['same', 'random'], bs: [1, 100], ps: [4] });
    const html = await renderBenchReport(r);
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    // One chart per operation at p = 4.
    expect(html.match(/<figure class="chart"/g)).toHaveLength(2);
    expect(html).toContain('<svg');
  });
});

describe('results files and the CLI', () => {
  it('CSV: one line per row under the documented header, configuration and times included', async () => {
    const r = await runBench({ ...SIM, algorithms: ['linear'], dists: ['same'], bs: [10], ps: [4] });
    const lines = resultsCsv(r).trimEnd().split('\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(r.rows.length + 1);
    const cells = lines[1].split(',');
    expect(cells[CSV_COLUMNS.indexOf('transport')]).toBe('sim');
    expect(cells[CSV_COLUMNS.indexOf('reps')]).toBe(String(SIM.reps));
    expect(cells[CSV_COLUMNS.indexOf('times')].split(' ')).toHaveLength(SIM.reps);
    expect(cells[CSV_COLUMNS.indexOf('model_alpha')]).toBe(String(SIM.model.alpha));
  });

  it('intergroup settings: rows beside Eq. (5), verified, in their own CSV', async () => {
    const r = await runBench({ ...SIM, ops: [], interSettings: [1, 6], interSizes: [4096, 65536], interRanks: [8] });
    expect(r.rows).toEqual([]);
    expect(r.inter.map((x) => [x.setting, x.size])).toEqual([
      [1, 4096],
      [1, 65536],
      [6, 4096],
      [6, 65536],
    ]);
    for (const x of r.inter) {
      expect(x.verified).toBe(true);
      expect(x.ratio).toBeCloseTo(x.rootGathering / x.algorithm, 12);
      // Root gathering moves every block three more times: the new algorithm is faster.
      expect(x.ratio).toBeGreaterThan(1);
      expect(x.expected).toBe(7);
    }
    const lines = interCsv(r).trimEnd().split('\n');
    expect(lines[0]).toBe(INTER_CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(5);
    expect(interCsvPath('out/r.csv')).toBe('out/r.inter.csv');
    await expect(runBench({ ...SIM, transport: 'mpi', calibrate: false, interSettings: [9], interSizes: [1], interRanks: [4] })).rejects.toThrow(InvalidArgumentError);
  });

  it('vcoll bench writes JSON and CSV; vcoll guidelines reads the JSON back; bad input exits 2', () => {
    const json = join(dir, 'r.json');
    const csv = join(dir, 'r.csv');
    const run = vcoll(['bench', '--transport', 'sim', '--p', '4', '--b', '1,100', '--dists', 'same,random', '--algorithms', 'linear,adaptive', '--reps', '3', '--warmup', '0', '--json', json, '--csv', csv, '--no-progress']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/every execution verified/);
    const r = readResultsJson(json);
    expect(r.config.bs).toEqual([1, 100]);
    expect(r.rows.length).toBeGreaterThan(0);
    expect(readFileSync(csv, 'utf8').split('\n')[0]).toBe(CSV_COLUMNS.join(','));
    const g = vcoll(['guidelines', json, '--all']);
    expect(g.status).toBe(0);
    expect(g.stdout).toMatch(new RegExp(`${r.verdicts.filter((v) => v.verdict === 'violated').length} of ${r.verdicts.length} guideline checks violated`));
    const strict = vcoll(['guidelines', json, '--strict']);
    expect(strict.status).toBe(r.verdicts.some((v) => v.verdict === 'violated') ? 1 : 0);
    const badB = vcoll(['bench', '--transport', 'sim', '--b', '10,-5', '--no-progress']);
    expect(badB.status).toBe(2);
    expect(badB.stderr).toMatch(/--b/);
    const badAlg = vcoll(['bench', '--transport', 'sim', '--algorithms', 'nope', '--no-progress']);
    expect(badAlg.status).toBe(2);
    expect(badAlg.stderr).toMatch(/algorithms: unknown algorithm "nope"/);
    const notResults = vcoll(['guidelines', csv]);
    expect(notResults.status).toBe(2);
    expect(notResults.stderr).toMatch(/not JSON|not a vcoll bench results file/);
  }, 60_000);
});
