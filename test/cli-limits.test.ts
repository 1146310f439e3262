/**
 * The command line and the public entries refuse what they cannot do before doing any of it:
 * too many ranks or too much data for the memory, too long a computation (TooLargeError, exit
 * status 2, naming the option, the estimate and the limit), output files that cannot be
 * written, and bad usage (exit 2). The hang guards are generous: a refusal comes at once.
 */
import { spawnSync } from 'node:child_process';
import { getHeapStatistics } from 'node:v8';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runReportCommand } from '../src/cli/bench-command.js';
import { runBench } from '../src/harness/harness.js';
import { BENCH_DEFAULTS } from '../src/harness/bench-defaults.js';
import { gatherv } from '../src/collectives/index.js';
import { CommunicationError, InvalidArgumentError, TooLargeError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { modelToJson, type PairwiseModelSpec } from '../src/model/model-json.js';
import { checkMemory, resourceLimits } from '../src/util/limits.js';
import { heapForInter } from '../src/cli/inter-command.js';
import { interSimBytes } from '../src/run/inter.js';
import { runSim } from '../src/transports/sim/index.js';
import { fixtureResults } from './fixtures/bench-results.js';
import { sink, vcoll } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'vcoll-limits-'));
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/** Runs vcoll and measures how long it took (ms). */
function timed(args: readonly string[], env: Record<string, string> = {}): ReturnType<typeof vcoll> & { ms: number } {
  const t0 = Date.now();
  const r = vcoll(args, env);
  return { ...r, ms: Date.now() - t0 };
}

describe('usage errors exit with status 2', () => {
  it('a bad --format choice, an unknown command, no command, an unknown option', () => {
    for (const args of [['model', '--format', 'yaml'], ['bogus'], [], ['algorithms', '--bogus']]) {
      const r = vcoll(args);
      expect(r.status, args.join(' ')).toBe(2);
    }
  });

  it('--version prints the package version and exits 0', () => {
    const r = vcoll(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it("model --dist '' names --dist (no empty table)", () => {
    const r = vcoll(['model', '--dist', '', '--p', '8']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--dist/);
    expect(r.stdout).toBe('');
  });
});

describe('requests too large are refused at once (exit 2, naming the option, the estimate and the limit)', () => {
  it('model --p 100000000 (cheap algorithms only: no tree limit to hit)', () => {
    const r = timed(['model', '--p', '100000000', '--algorithms', 'linear', '--dist', 'same']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--p too large: .*about .* above the limit of/);
    expect(r.ms).toBeLessThan(20_000);
  });

  it('model: the O(p³) dynamic programs are refused on their estimated time (VCOLL_MAX_SECONDS)', () => {
    const r = timed(['model', '--p', '3000', '--algorithms', 'linear,binary', '--dist', 'same', '--root', 'fixed'], { VCOLL_MAX_SECONDS: '10' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--p too large: building linear, binary for 3000 ranks takes about .* \(estimated\), above the limit of 10 s \(VCOLL_MAX_SECONDS/);
    expect(r.ms).toBeLessThan(20_000);
  });

  it('run --transport sim --p 10000000, tree --dist same --p 100000000, inter --ranks 100000000', () => {
    for (const args of [
      ['run', '--transport', 'sim', '--p', '10000000'],
      ['tree', '--dist', 'same', '--p', '100000000'],
      ['inter', '--ranks', '100000000', '--setting', '1', '--size', '1024'],
    ]) {
      const r = timed(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/too large: .*needs about .* above the limit of/);
      expect(r.ms, args.join(' ')).toBeLessThan(20_000);
    }
  });

  it('run --b 99999999999: a typed error naming --b, not "Invalid typed array length"', () => {
    const r = timed(['run', '--p', '8', '--b', '99999999999']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--b too large: the root's buffer would hold/);
    expect(r.stderr).not.toMatch(/Invalid typed array length/);
  });

  it('run --p 8 --b 100000000 under VCOLL_MAX_MEMORY=1G: the data estimate is refused', () => {
    const r = timed(['run', '--p', '8', '--b', '100000000', '--algorithm', 'linear'], { VCOLL_MAX_MEMORY: '1G' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--b too large: the data .* needs about .* above the limit of 1\.00 GiB \(VCOLL_MAX_MEMORY/);
  });

  it('run --model-file (per pair, p = 200) --algorithm optimal: the tree limit before any rank starts, exit 2', () => {
    const p = 200;
    const row = (i: number): number[] => Array.from({ length: p }, (_, j) => (i === j ? 0 : 10));
    const spec: PairwiseModelSpec = { kind: 'pairwise', alpha: Array.from({ length: p }, (_, i) => row(i)), beta: Array.from({ length: p }, (_, i) => row(i).map((x) => x / 10)), gamma: 0, ports: 1, copyAll: false };
    const file = join(dir, 'pairwise-200.json');
    writeFileSync(file, modelToJson(spec));
    for (const transport of ['sim', 'threads']) {
      const r = timed(['run', '--transport', transport, '--model-file', file, '--p', String(p), '--algorithm', 'optimal']);
      expect(r.status, transport).toBe(2);
      expect(r.stderr, transport).toMatch(/--p too large: 200 > 160/);
    }
  });

  it('estimate --p 2000 (simulated ping-pong over every pair)', () => {
    const r = timed(['estimate', '--p', '2000', '--out', join(dir, 'est.json')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--p too large: estimating 3998000 links/);
    expect(r.ms).toBeLessThan(20_000);
  });

  it('runSim refuses a p whose ranks alone exceed the memory, before allocating', async () => {
    await expect(runSim(2 ** 40, async () => 0, { model: linearModel({ alpha: 1, beta: 1 }) })).rejects.toThrow(TooLargeError);
  });

  it('runBench refuses blocks whose data exceed the memory, before any work', async () => {
    const config = { ...BENCH_DEFAULTS, transport: 'sim' as const, ops: ['gatherv' as const], algorithms: ['linear'], dists: ['same' as const], bs: [2 ** 40], ps: [8], reps: 1, warmup: 0, calibrate: false, references: 'none' as const, interSettings: [] };
    await expect(runBench(config)).rejects.toThrow(/b too large/);
  });

  it('VCOLL_MAX_MEMORY: a bad value is an InvalidArgumentError naming it; "off" lifts the limit', () => {
    expect(() => resourceLimits({ VCOLL_MAX_MEMORY: 'lots' })).toThrow(/VCOLL_MAX_MEMORY/);
    expect(resourceLimits({ VCOLL_MAX_MEMORY: '2G' }).memoryBytes).toBe(2 ** 31);
    expect(resourceLimits({ VCOLL_MAX_MEMORY: 'off' }).memoryBytes).toBe(Infinity);
    expect(() => checkMemory('x', 2 ** 31 + 1, 'something', { limits: resourceLimits({ VCOLL_MAX_MEMORY: '2G' }) })).toThrow(/x too large: something needs about 2\.00 GiB, above the limit of 2\.00 GiB/);
  });
});

describe('output files are checked before the work', () => {
  const missing = '/nonexistent-vcoll-dir/out.file';
  it('bench --json / --csv / --report, run --trace, tree --svg, report --out: exit 2 at once, nothing run', () => {
    const bench = ['bench', '--transport', 'sim', '--p', '4', '--b', '10', '--dists', 'same', '--algorithms', 'linear', '--reps', '1', '--warmup', '0', '--references', 'none', '--no-progress'];
    const results = join(dir, 'fixture.json');
    writeFileSync(results, JSON.stringify(fixtureResults()));
    for (const args of [
      [...bench, '--json', missing],
      [...bench, '--csv', missing],
      [...bench, '--report', missing],
      ['run', '--trace', missing],
      ['tree', '--sizes', '1,2,3', '--svg', missing],
      ['report', results, '--out', missing],
    ]) {
      const r = vcoll(args);
      const option = args.find((a) => ['--json', '--csv', '--report', '--trace', '--svg', '--out'].includes(a));
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`invalid ${option}: cannot write ${missing}`);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });
});

describe('typed errors instead of crashes', () => {
  it('report: rows with null fields name the field', async () => {
    const r = fixtureResults();
    const bad = { ...r, rows: r.rows.map((x, i) => (i === 1 ? { ...x, stats: null, times: null } : x)) };
    const file = join(dir, 'null-rows.json');
    writeFileSync(file, JSON.stringify(bad));
    const e = await runReportCommand(file, { out: join(dir, 'r.html') }, sink().stream).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).field).toMatch(/^rows\[1\]\.(stats|times)/);
  });

  it('a count given as a string is shown with its type', async () => {
    const p = 2;
    const run = runSim(
      p,
      (comm) =>
        gatherv(comm, {
          root: 0,
          send: new Uint8Array(2),
          recv: comm.rank === 0 ? new Uint8Array(4) : undefined,
          counts: comm.rank === 0 ? ([2, '2'] as unknown as number[]) : undefined,
        }),
      { model: linearModel({ alpha: 1, beta: 1 }) },
    );
    const e = await run.then(
      () => undefined,
      (x: unknown) => (x instanceof CommunicationError && x.cause !== undefined ? x.cause : x),
    );
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as Error).message).toContain('got "2" (string)');
  });
});

describe('vcoll run on the simulator runs again with a larger heap when Node’s is too small', () => {
  /** `vcoll …args` with Node's heap limited to `mib` MiB. */
  const smallHeap = (mib: number, args: readonly string[], env: Record<string, string> = {}): ReturnType<typeof vcoll> =>
    spawnSync(process.execPath, [`--max-old-space-size=${mib}`, '--import', 'tsx', 'src/cli/main.ts', ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, ...env },
    });
  const args = ['run', '--transport', 'sim', '--p', '20000', '--algorithm', 'linear', '--format', 'json'];

  it('p = 20000 under a 64 MiB heap: rerun with the heap its ranks need, same output as a direct run', () => {
    const r = smallHeap(64, args);
    expect(r.stderr).toMatch(/running with a [\d.]+ [MG]iB JavaScript heap \(node --max-old-space-size=\d+/);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { verified: boolean; p: number; messages: number };
    expect(report).toMatchObject({ verified: true, p: 20000, messages: 19999 });
  });

  it('VCOLL_HEAP_RERUN=off keeps Node’s limit: refused at once, naming it', () => {
    const r = smallHeap(64, args, { VCOLL_HEAP_RERUN: 'off' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--p.*max-old-space-size/s);
    expect(r.stdout).toBe('');
  });
});

describe('vcoll inter on the simulator runs again with a larger heap when Node’s is too small', () => {
  const smallHeap = (mib: number, args: readonly string[], env: Record<string, string> = {}): ReturnType<typeof vcoll> =>
    spawnSync(process.execPath, [`--max-old-space-size=${mib}`, '--import', 'tsx', 'src/cli/main.ts', ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, ...env },
    });
  const args = (ranks: number): string[] => ['inter', '--transport', 'sim', '--ranks', String(ranks), '--setting', '1', '--size', '65536', '--format', 'json'];

  it('heapForInter: the estimate (interSimBytes) above Node’s heap limit and within the memory limit; never for threads', () => {
    const limits = resourceLimits();
    expect(heapForInter({ transport: 'threads', ranks: 2 ** 16 })).toBeUndefined();
    const small = heapForInter({ transport: 'sim', ranks: 64 });
    if (interSimBytes(64) <= getHeapStatistics().heap_size_limit) expect(small).toBeUndefined();
    const big = heapForInter({ transport: 'sim', ranks: 2 ** 16 });
    if (interSimBytes(2 ** 16) <= limits.memoryBytes) expect(big).toBe(Math.ceil(Math.min(2 * interSimBytes(2 ** 16), limits.memoryBytes) / 2 ** 20));
    else expect(big).toBeUndefined();
  });

  it('64 ranks under a 64 MiB heap: rerun with the heap the estimate asks for, verified', () => {
    const r = smallHeap(64, args(64));
    expect(r.stderr).toMatch(/running with a [\d.]+ [MG]iB JavaScript heap \(node --max-old-space-size=\d+/);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ setting: 1, p: 32, q: 32, verified: true });
  });

  it('VCOLL_HEAP_RERUN=off keeps Node’s limit: refused at once, naming it', () => {
    const r = smallHeap(64, args(8192), { VCOLL_HEAP_RERUN: 'off' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--ranks.*max-old-space-size/s);
    expect(r.stdout).toBe('');
  });
});

describe('vcoll bench on the simulator runs again with a larger heap when Node’s is too small', () => {
  const smallHeap = (mib: number, args: readonly string[], env: Record<string, string> = {}): ReturnType<typeof vcoll> =>
    spawnSync(process.execPath, [`--max-old-space-size=${mib}`, '--import', 'tsx', 'src/cli/main.ts', ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, ...env },
    });
  const args = ['bench', '--transport', 'sim', '--p', '20000', '--ops', 'gatherv', '--algorithms', 'linear', '--dists', 'same', '--b', '1', '--reps', '1', '--warmup', '0', '--references', 'none', '--format', 'json', '--no-progress'];

  it('p = 20000 under a 64 MiB heap: rerun with the heap the estimate asks for, verified', () => {
    const r = smallHeap(64, args);
    expect(r.stderr).toMatch(/running with a [\d.]+ [MG]iB JavaScript heap \(node --max-old-space-size=\d+/);
    expect(r.status, r.stderr).toBe(0);
    const results = JSON.parse(r.stdout) as { rows: { p: number; verified: boolean }[] };
    expect(results.rows.length).toBeGreaterThan(0);
    expect(results.rows.every((x) => x.p === 20000 && x.verified)).toBe(true);
  });

  it('VCOLL_HEAP_RERUN=off keeps Node’s limit: refused at once, naming it', () => {
    const r = smallHeap(64, args, { VCOLL_HEAP_RERUN: 'off' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/max-old-space-size/);
    expect(r.stdout).toBe('');
  });
});
