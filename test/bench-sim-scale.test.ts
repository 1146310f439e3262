/**
 * `vcoll bench --transport sim` at up to 2^20 ranks: the p cap per transport, the memory
 * estimate checked before any work (src/harness/bench-limits.ts) — the algorithms too large:
 * TooLargeError('p'); the guideline references too large beside them: refused
 * (TooLargeError('references') naming each and the largest p it fits at) or, with --references
 * left at its default, dropped at that p with a note and `referencesDropped` in the results —
 * and the simulator's results folded across ranks (BenchCollector) as the harness folds
 * per-rank results.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BENCH_DEFAULTS } from '../src/harness/bench-defaults.js';
import { BENCH_MAX_P, BENCH_SIM_MAX_P, checkSimBenchMemory, runBench, validateBenchConfig } from '../src/harness/harness.js';
import { ALL_REFERENCES, SIM_BENCH_REFERENCE_RUN_BYTES } from '../src/harness/bench-limits.js';
import { BenchCollector, type BenchProgramCase } from '../src/harness/bench-program.js';
import { readResultsJson } from '../src/harness/results-file.js';
import type { BenchConfig } from '../src/harness/results.js';
import type { RunCase } from '../src/run/spec.js';
import { InvalidArgumentError, TooLargeError } from '../src/errors.js';
import { vcoll } from './helpers/cli.js';

const SIM: BenchConfig = {
  ...BENCH_DEFAULTS,
  transport: 'sim',
  ops: ['gatherv', 'scatterv'],
  algorithms: ['linear'],
  dists: ['random'],
  bs: [1],
  ps: [8],
  reps: 1,
  warmup: 0,
  calibrate: false,
};

const GiB = 2 ** 30;
const dir = mkdtempSync(join(tmpdir(), 'vcoll-bench-scale-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const savedMemory = process.env.VCOLL_MAX_MEMORY;
afterEach(() => {
  if (savedMemory === undefined) delete process.env.VCOLL_MAX_MEMORY;
  else process.env.VCOLL_MAX_MEMORY = savedMemory;
});

/** runBench's rejection, how long it took (ms) and whether anything ran (a progress report). */
async function refusal(config: BenchConfig, options: Parameters<typeof runBench>[1] = {}): Promise<{ error: unknown; ms: number; progressed: boolean }> {
  let progressed = false;
  const t0 = performance.now();
  const error = await runBench(config, { ...options, onProgress: () => (progressed = true) }).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - t0, progressed };
}

describe('the p cap', () => {
  it('is 2^20 on the simulator and 4096 on threads and MPI', () => {
    expect(BENCH_SIM_MAX_P).toBe(2 ** 20);
    expect(BENCH_MAX_P).toBe(4096);
    expect(validateBenchConfig({ ...SIM, ps: [2 ** 20] }).ps).toEqual([2 ** 20]);
    expect(() => validateBenchConfig({ ...SIM, ps: [2 ** 20 + 1] })).toThrow(InvalidArgumentError);
    for (const transport of ['threads', 'mpi'] as const) {
      const c = { ...SIM, transport, calibrate: false, references: 'none' as const };
      expect(validateBenchConfig({ ...c, ps: [4096] }).ps).toEqual([4096]);
      let e: unknown;
      try {
        validateBenchConfig({ ...c, ps: [4097] });
      } catch (x) {
        e = x;
      }
      expect(e, transport).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).field).toBe('p');
      expect((e as Error).message).toMatch(/\[1, 4096\]/);
    }
  });
});

describe('memory checked before any work', () => {
  it('the algorithms too large at p = 2^20: TooLargeError(p) at once, with the largest p that fits', { timeout: 10_000 }, async () => {
    process.env.VCOLL_MAX_MEMORY = '8G';
    const { error, ms, progressed } = await refusal({ ...SIM, ps: [2 ** 20], references: 'none' });
    expect(error).toBeInstanceOf(TooLargeError);
    expect((error as TooLargeError).field).toBe('p');
    expect((error as Error).message).toMatch(/simulating 1048576 ranks of --algorithms linear .*per rank.*fits up to p = \d+/);
    expect(progressed).toBe(false);
    expect(ms).toBeLessThan(5000);
  });

  it('explicit references too large beside the algorithms: TooLargeError(references) at once, naming each and its largest p, pointing at --references none', { timeout: 10_000 }, async () => {
    // 65536 ranks of linear fit in 1.5 GiB, with the references (≥ 30 KiB per rank more) they do not
    process.env.VCOLL_MAX_MEMORY = '1500M';
    const { error, ms, progressed } = await refusal({ ...SIM, ps: [65536], dists: ['same', 'random'] }, { referencesTooLarge: 'refuse' });
    expect(error).toBeInstanceOf(TooLargeError);
    expect((error as TooLargeError).field).toBe('references');
    const text = (error as Error).message;
    for (const name of ['gather(m)', 'allreduce + gather(p·max)', 'scatter(m)', 'allreduce + scatter(p·max)']) {
      expect(text).toContain(`${name} up to p = `);
    }
    expect(text).toMatch(/at p = 65536 .*fit up to p = \d+ together/);
    expect(text).toContain('--references none');
    expect(progressed).toBe(false);
    expect(ms).toBeLessThan(5000);
    // refusing is the library's default
    expect((await refusal({ ...SIM, ps: [65536] })).error).toBeInstanceOf(TooLargeError);
  });

  it('at p = 2^20 the plan names the references and their largest p (explicit limits: 64 GiB of heap, 1 TiB in all)', { timeout: 10_000 }, () => {
    const limits = { memoryBytes: 2 ** 40, heapBytes: 64 * GiB, seconds: Infinity };
    const c = { ...SIM, ps: [2 ** 20], algorithms: ['linear', 'binomial', 'adaptive'] };
    // they fit in 64 GiB …
    expect(checkSimBenchMemory(c, 'refuse', limits)).toEqual([]);
    // … not in 24 GiB of heap, where the algorithms alone (18 KiB per rank) still do
    const small = { ...limits, heapBytes: 24 * GiB };
    const t0 = performance.now();
    let e: unknown;
    try {
      checkSimBenchMemory(c, 'refuse', small);
    } catch (x) {
      e = x;
    }
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(e).toBeInstanceOf(TooLargeError);
    expect((e as TooLargeError).field).toBe('references');
    const [d] = checkSimBenchMemory(c, 'drop', small);
    expect(d.p).toBe(2 ** 20);
    expect(d.references).toEqual(['allreduce + gather(p·max)', 'allreduce + scatter(p·max)']);
    expect(d.reason).toMatch(/heap limit/);
    const together = d.largestP[ALL_REFERENCES];
    expect(together).toBeGreaterThan(0);
    expect(together).toBeLessThan(2 ** 20);
    // at the largest p they fit, at one more they do not
    expect(checkSimBenchMemory({ ...c, ps: [together] }, 'refuse', small)).toEqual([]);
    expect(checkSimBenchMemory({ ...c, ps: [together + 1] }, 'drop', small)).toHaveLength(1);
    // the references' own constant is what makes the difference
    expect(SIM_BENCH_REFERENCE_RUN_BYTES).toBeGreaterThan(16 * 1024);
  });

  it('threads and MPI: no simulator estimate', () => {
    expect(checkSimBenchMemory({ ...SIM, transport: 'threads', ps: [4096] }, 'refuse', { memoryBytes: 1, heapBytes: 1, seconds: 1 })).toEqual([]);
  });
});

describe('references left at their default: dropped where they do not fit', () => {
  it('runs the algorithms, keeps the references where they fit, says which were dropped and why', { timeout: 60_000 }, async () => {
    // 1024 ranks of linear fit in 24 MiB, with the references they do not; 8 ranks fit either way
    process.env.VCOLL_MAX_MEMORY = '24M';
    const notes: string[] = [];
    const r = await runBench({ ...SIM, ps: [8, 1024] }, { referencesTooLarge: 'drop', onNote: (t) => notes.push(t) });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/guideline references \(allreduce \+ gather\(p·max\), allreduce \+ scatter\(p·max\)\) are left out at p = 1024: .*VCOLL_MAX_MEMORY/);
    expect(r.referencesDropped).toHaveLength(1);
    const [d] = r.referencesDropped ?? [];
    expect(d.p).toBe(1024);
    expect(d.references).toEqual(['allreduce + gather(p·max)', 'allreduce + scatter(p·max)']);
    expect(d.largestP[ALL_REFERENCES]).toBeGreaterThanOrEqual(8);
    expect(d.largestP[ALL_REFERENCES]).toBeLessThan(1024);
    expect(r.rows.filter((x) => x.p === 1024).map((x) => x.kind)).toEqual(['algorithm', 'algorithm']);
    expect(r.rows.filter((x) => x.p === 8).map((x) => x.kind)).toEqual(['algorithm', 'gl2', 'algorithm', 'gl2']);
    expect(r.rows.every((x) => x.verified)).toBe(true);
    expect(r.verdicts.map((v) => v.p)).toEqual([8, 8]);
    // nothing dropped: no such field
    delete process.env.VCOLL_MAX_MEMORY;
    const all = await runBench({ ...SIM, ps: [8] }, { referencesTooLarge: 'drop', onNote: (t) => notes.push(t) });
    expect('referencesDropped' in all).toBe(false);
    expect(notes).toHaveLength(1);
  });

  it('the CLI: a note on stderr and referencesDropped in the JSON; --references vcoll given explicitly: refused, exit 2', { timeout: 120_000 }, () => {
    const json = join(dir, 'dropped.json');
    const args = ['bench', '--transport', 'sim', '--p', '8,1024', '--b', '1', '--dists', 'random', '--algorithms', 'linear', '--ops', 'gatherv', '--reps', '1', '--warmup', '0', '--no-progress'];
    const env = { VCOLL_MAX_MEMORY: '24M' };
    const run = vcoll([...args, '--json', json], env);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^vcoll: note: the guideline references \(allreduce \+ gather\(p·max\)\) are left out at p = 1024/);
    expect(run.stdout).toMatch(/references left out at p = 1024/);
    const r = readResultsJson(json);
    expect(r.referencesDropped?.map((d) => d.p)).toEqual([1024]);
    expect(r.referencesDropped?.[0].reason).toMatch(/VCOLL_MAX_MEMORY/);
    expect(r.config.references).toBe('vcoll');
    const explicit = vcoll([...args, '--references', 'vcoll'], env);
    expect(explicit.status).toBe(2);
    expect(explicit.stderr).toMatch(/references too large: at p = 1024 .*allreduce \+ gather\(p·max\) up to p = \d+.*--references none/);
    expect(explicit.stdout).toBe('');
  });
});

describe("the simulator's results folded across ranks", () => {
  it('BenchCollector: slowest rank per execution, traffic summed, the lowest ranks’ mismatches in rank order, the root’s info', () => {
    const base: RunCase = { op: 'gatherv', algorithm: 'linear', dist: 'random', b: 1, rho: 5, seed: 1, root: 2, unitBytes: 4, model: { alpha: 100, beta: 1, gamma: 0 }, persistent: false, reps: 3, warmup: 0 };
    const cases: BenchProgramCase[] = [{ base, variants: [{ kind: 'algorithm', algorithm: 'linear' }] }];
    const k = new BenchCollector(cases);
    const info = { algorithm: 'linear' as const, constructionRounds: 0, height: 1 };
    // ranks finish in any order
    for (const rank of [9, 3, 0, 12, 2, 7, 5, 1, 11, 4, 10, 8, 6]) {
      k.add(0, 0, rank, rank === 2, { times: [rank, 20 - rank, 5], mismatch: rank % 2 === 1 ? `rank ${rank}` : undefined, messages: 1, bytes: rank, info: rank === 2 ? info : undefined });
    }
    const t = k.totals(0, 0);
    expect(t.times).toEqual([12, 20, 5]);
    expect(t.messages).toBe(13);
    expect(t.bytes).toBe(78);
    expect(t.mismatches).toEqual(['rank 1', 'rank 3', 'rank 5', 'rank 7', 'rank 9', 'rank 11']);
    expect(t.info).toBe(info);
    for (let rank = 13; rank < 40; rank++) k.add(0, 0, rank, false, { times: [0, 0, 0], mismatch: `rank ${rank}`, messages: 0, bytes: 0, info: undefined });
    expect(k.totals(0, 0).mismatches).toEqual(['rank 1', 'rank 3', 'rank 5', 'rank 7', 'rank 9', 'rank 11', 'rank 13', 'rank 14']);
  });
});
