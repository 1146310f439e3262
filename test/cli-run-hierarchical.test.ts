/**
 * `vcoll run --algorithm hierarchical`: the hierarchical gather and gatherv of TraffRougier14 (and
 * their mirror, the scatter and scatterv, over binomial or adaptive trees) from the command line — verified at the root on the simulator for several (p, ranks per node,
 * placement, variant, root), the simulated time equal to the two-level evaluation
 * (src/run/hierarchical-predict.ts) and that evaluation checked against the round count of
 * TraffRougier14 §2 and the copy cost of §4; worker threads and the two-level model file;
 * typed errors (status 2); the node structure built once per run, not per rank; the memory
 * estimate and the heap re-run; the JSON contract (every field of the other algorithms kept);
 * --persistent (hierarchicalGathervInit / hierarchicalScattervInit planned once, start() timed).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runRun, heapForRun, type RunCommandOptions } from '../src/cli/run-command.js';
import { nodeStructure } from '../src/collectives/hierarchical/structure.js';
import { HIERARCHICAL_VARIANT_NAMES } from '../src/collectives/hierarchical/index.js';
import { SIM_RUN_HIERARCHICAL_RANK_BYTES, simCaseRankBytes } from '../src/run/case-limits.js';
import { nodeMap } from '../src/run/hierarchical-case.js';
import type { RunReport } from '../src/run/job.js';
import { blockSizes } from '../src/workloads/distributions.js';
import { RUN_DEFAULTS, sink, vcoll } from './helpers/cli.js';

// counts the node structures built (by the run, and by the library's per-communicator cache)
vi.mock('../src/collectives/hierarchical/structure.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../src/collectives/hierarchical/structure.js')>();
  return { ...orig, nodeStructure: vi.fn(orig.nodeStructure) };
});

const HIER: RunCommandOptions = { ...RUN_DEFAULTS, algorithm: 'hierarchical', perNode: 4, p: 32 };

async function inProcess(opts: Partial<RunCommandOptions>): Promise<RunReport> {
  const out = sink();
  const report = await runRun({ ...HIER, ...opts }, out.stream);
  expect(JSON.parse(out.text())).toEqual(JSON.parse(JSON.stringify(report)));
  return report;
}

/** Equal up to rounding (the simulator and the evaluator add the same terms, not always in the same order). */
function expectSameTime(got: number, want: number, what: string): void {
  expect(Math.abs(got - want), `${what}: ${got} vs ${want}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want)));
}

async function failure(opts: Partial<RunCommandOptions>): Promise<{ code: string; field: string; message: string }> {
  try {
    await runRun({ ...HIER, ...opts }, sink().stream);
  } catch (e) {
    return e as { code: string; field: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('vcoll run --algorithm hierarchical on the simulator', () => {
  it('prints one JSON object: every field of the other algorithms, and the hierarchical ones', () => {
    const r = vcoll(['run', '--p', '48', '--algorithm', 'hierarchical', '--per-node', '8', '--placement', 'random', '--root', '13', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const o = JSON.parse(lines[0]) as RunReport;
    const linear = JSON.parse(vcoll(['run', '--p', '48', '--algorithm', 'linear', '--format', 'json']).stdout) as RunReport;
    for (const key of Object.keys(linear)) expect(o, key).toHaveProperty(key);
    expect(o).toMatchObject({
      verified: true,
      transport: 'sim',
      op: 'gatherv',
      algorithm: 'hierarchical',
      requestedAlgorithm: 'hierarchical',
      p: 48,
      root: 13,
      collective: 'gatherv',
      variant: 'zero-copy',
      nodes: 6,
      perNode: 8,
      largestNode: 8,
      placement: 'random',
      modelKind: 'hierarchical',
      twoLevel: { intra: { alpha: 0.5, beta: 1 / 4000 }, inter: { alpha: 2, beta: 1 / 3200 }, gamma: 1 / 5000 },
      model: { alpha: 2, beta: 1 / 3200, gamma: 1 / 5000 },
      messages: 47,
      constructionRounds: 0,
      mismatches: [],
    });
    expectSameTime(o.time, o.predicted, 'time');
    // every block but the root's travels, each message with its 8-byte size check
    const sizes = blockSizes('random', { p: 48, b: 100, seed: 1 });
    expect(o.bytes).toBeGreaterThanOrEqual(sizes.reduce((a, x) => a + x, 0) - sizes[13] + 47 * 8);
    expect(o.size).toBe(sizes.reduce((a, x) => a + x, 0));
  });

  it('verifies, and takes exactly the two-level evaluation, for several p, ranks per node, placements, variants, roots and unit sizes', async () => {
    const cases: Partial<RunCommandOptions>[] = [
      { p: 32, perNode: 4 },
      { p: 36, perNode: 6, placement: 'random', root: 35, hierVariant: 'reorder' },
      { p: 64, perNode: 16, placement: 'random', root: 17, dist: 'same', b: 7 },
      { p: 64, perNode: 16, root: 40, dist: 'same', b: 9, hierVariant: 'reorder', unitBytes: 3 },
      { p: 30, perNode: 1, placement: 'random', root: 4, dist: 'spikes' },
      { p: 27, perNode: 27, root: 26, dist: 'decreasing', unitBytes: 4 },
      { p: 40, perNode: 8, placement: 'random', root: 9, hierVariant: 'flat', dist: 'same', b: 5 },
      { p: 1, perNode: 1 },
    ];
    for (const c of cases) {
      const r = await inProcess(c);
      const what = JSON.stringify(c);
      expect(r.verified, what).toBe(true);
      expect(r.variant, what).toBe(c.hierVariant ?? 'zero-copy');
      expect(r.collective, what).toBe(c.dist === 'same' ? 'gather' : 'gatherv');
      expect(r.nodes, what).toBe((c.p as number) / (c.perNode as number));
      expect(r.messages, what).toBe((c.p as number) - 1);
      expectSameTime(r.time, r.predicted, what);
    }
  });

  it("the flat gatherv's prediction is its data phase: the run adds the scatter of the counts", async () => {
    const r = await inProcess({ p: 32, perNode: 4, hierVariant: 'flat' });
    expect(r.verified).toBe(true);
    expect(r.constructionRounds).toBe(5);
    expect(r.time).toBeGreaterThan(r.predicted);
  });

  it('the evaluation: α only, 2^a nodes × 2^b ranks ordered take a + b rounds (TraffRougier14 §2); reorder costs γ·Σ_{i≠root} m_i more (§4)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcoll-hier-'));
    try {
      const file = (name: string, nodeOf: Int32Array, o: { beta: number; gamma: number }): string => {
        const f = join(dir, name);
        const spec = { format: 'vcoll-cost-model', version: 1, kind: 'hierarchical', nodeOf: Array.from(nodeOf), intra: { alpha: 1, beta: o.beta }, inter: { alpha: 1, beta: o.beta }, gamma: o.gamma, ports: 1, copyAll: false };
        writeFileSync(f, JSON.stringify(spec));
        return f;
      };
      for (const [nodes, per] of [
        [4, 4],
        [8, 2],
        [2, 16],
      ]) {
        const p = nodes * per;
        const r = await inProcess({ p, perNode: undefined, modelFile: file(`a${p}.json`, nodeMap(p, per, 'ordered', 1), { beta: 0, gamma: 0 }), dist: 'same', b: 3 });
        expect(r.verified).toBe(true);
        expect(r.placement).toBe('model-file');
        expect(r.perNode).toBeUndefined();
        expect(r.time).toBe(Math.log2(nodes) + Math.log2(per));
        expect(r.predicted).toBe(r.time);
      }
      const p = 24;
      const f = file('g.json', nodeMap(p, 6, 'random', 3), { beta: 0.5, gamma: 2 });
      const root = 7;
      const z = await inProcess({ p, perNode: undefined, modelFile: f, root, dist: 'spikes' });
      const o = await inProcess({ p, perNode: undefined, modelFile: f, root, dist: 'spikes', hierVariant: 'reorder' });
      const sizes = blockSizes('spikes', { p, b: 100, seed: 1 });
      expectSameTime(o.time - z.time, 2 * (sizes.reduce((a, x) => a + x, 0) - sizes[root]), 'reorder − zero-copy');
      expectSameTime(o.predicted - z.predicted, o.time - z.time, 'predicted difference');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--trace writes every message of the run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcoll-hier-trace-'));
    try {
      const file = join(dir, 't.json');
      const r = await inProcess({ p: 16, perNode: 4, trace: file });
      const trace = JSON.parse(readFileSync(file, 'utf8')) as { messages: { bytes: number }[] };
      expect(trace.messages).toHaveLength(r.simTotalMessages as number);
      expect(trace.messages.reduce((a, m) => a + m.bytes, 0)).toBe(r.simTotalBytes);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints a table with the nodes', async () => {
    const out = sink();
    await runRun({ ...HIER, format: 'table', placement: 'random' }, out.stream);
    expect(out.text()).toMatch(/hierarchical \(hierarchicalGatherv, zero-copy\)/);
    expect(out.text()).toMatch(/8 × 4 ranks each, placement random/);
    expect(out.text()).toMatch(/verified\s*│\s*yes/);
  });
});

describe('vcoll run --algorithm hierarchical --op scatterv, and --hier-tree adaptive', () => {
  it('the scatter and scatterv verify on every rank and take exactly the two-level evaluation (binomial tree; the regular ones also adaptive)', async () => {
    const cases: Partial<RunCommandOptions>[] = [
      { op: 'scatterv', p: 32, perNode: 4 },
      { op: 'scatterv', p: 36, perNode: 6, placement: 'random', root: 35, hierVariant: 'reorder', dist: 'spikes' },
      { op: 'scatterv', p: 64, perNode: 16, placement: 'random', root: 17, dist: 'same', b: 7 },
      { op: 'scatterv', p: 64, perNode: 16, root: 40, dist: 'same', b: 9, hierVariant: 'reorder', unitBytes: 3 },
      { op: 'scatterv', p: 48, perNode: 8, placement: 'random', root: 5, dist: 'same', b: 6, hierTree: 'adaptive', unitBytes: 2 },
      { op: 'gatherv', p: 48, perNode: 8, placement: 'random', root: 9, dist: 'same', b: 6, hierTree: 'adaptive', hierVariant: 'reorder' },
      { op: 'scatterv', p: 27, perNode: 27, root: 26, dist: 'decreasing', unitBytes: 4 },
      { op: 'scatterv', p: 40, perNode: 8, placement: 'random', root: 9, hierVariant: 'flat', dist: 'same', b: 5 },
      { op: 'scatterv', p: 1, perNode: 1 },
    ];
    for (const c of cases) {
      const r = await inProcess(c);
      const what = JSON.stringify(c);
      expect(r.verified, what).toBe(true);
      expect(r.op, what).toBe(c.op);
      const regular = c.dist === 'same';
      expect(r.collective, what).toBe(c.op === 'gatherv' ? (regular ? 'gather' : 'gatherv') : regular ? 'scatter' : 'scatterv');
      expect(r.tree, what).toBe(c.hierTree ?? 'binomial');
      expect(r.messages, what).toBe((c.p as number) - 1);
      expect(r.constructionRounds, what).toBe(0);
      expectSameTime(r.time, r.predicted, what);
    }
  });

  it('adaptive gatherv and scatterv: verified, the construction rounds of both levels reported, at least the predicted data phase', async () => {
    for (const op of ['gatherv', 'scatterv'] as const) {
      for (const c of [
        { p: 48, perNode: 8, placement: 'random', root: 13, dist: 'increasing' },
        { p: 36, perNode: 4, root: 0, dist: 'two-blocks', hierVariant: 'reorder' },
      ] as Partial<RunCommandOptions>[]) {
        const r = await inProcess({ ...c, op, hierTree: 'adaptive' });
        const what = `${op} ${JSON.stringify(c)}`;
        expect(r.verified, what).toBe(true);
        expect(r).toMatchObject({ tree: 'adaptive', collective: op, op });
        const nodes = (c.p as number) / (c.perNode as number);
        const per = c.perNode as number;
        const rounds = (x: number): number => (x <= 2 ? Math.ceil(Math.log2(x)) : Math.ceil(Math.log2(x)) + 1);
        expect(r.constructionRounds, what).toBe(rounds(per) + rounds(nodes));
        expect(r.height, what).toBe(Math.ceil(Math.log2(nodes)) + Math.ceil(Math.log2(per)));
        expect(r.time, what).toBeGreaterThanOrEqual(r.predicted);
      }
    }
  });

  it('JSON: every field of the other algorithms, the hierarchical ones, and tree', () => {
    const r = vcoll(['run', '--p', '24', '--op', 'scatterv', '--algorithm', 'hierarchical', '--per-node', '6', '--hier-tree', 'adaptive', '--dist', 'spikes', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout) as RunReport;
    const linear = JSON.parse(vcoll(['run', '--p', '24', '--op', 'scatterv', '--algorithm', 'linear', '--format', 'json']).stdout) as RunReport;
    for (const key of Object.keys(linear)) expect(o, key).toHaveProperty(key);
    expect(o).toMatchObject({ verified: true, op: 'scatterv', algorithm: 'hierarchical', collective: 'scatterv', variant: 'zero-copy', tree: 'adaptive', nodes: 4, perNode: 6, modelKind: 'hierarchical' });
  });

  it('the table names the call and the trees', async () => {
    const out = sink();
    await runRun({ ...HIER, op: 'scatterv', hierTree: 'adaptive', format: 'table' }, out.stream);
    expect(out.text()).toMatch(/hierarchical \(hierarchicalScatterv, zero-copy, adaptive trees\)/);
  });

  it('worker threads: scatter and scatterv, both trees, verified on every rank', async () => {
    for (const hierTree of ['binomial', 'adaptive'] as const) {
      for (const dist of ['random', 'same']) {
        const r = await inProcess({ transport: 'threads', op: 'scatterv', p: 8, perNode: 2, placement: 'random', dist, hierTree, root: 3, reps: 2 });
        expect(r.verified, `${hierTree} ${dist}`).toBe(true);
        expect(r).toMatchObject({ transport: 'threads', timeUnit: 's', nodes: 4, tree: hierTree, collective: dist === 'same' ? 'scatter' : 'scatterv' });
      }
    }
  }, 60_000);
});

describe('vcoll run --algorithm hierarchical --persistent', () => {
  // a start() is exactly the evaluation of its tree's data phase on the simulator: measured within 2e-14 relative
  const expectDataPhase = (r: RunReport, what: string): void => expect(r.time / r.predicted, `${what}: ${r.time} vs ${r.predicted}`).toBeCloseTo(1, 12);

  it('on the simulator: gatherv and scatterv, both trees, zero-copy and reorder — planned once (sizes, constructions), start() timed: the data phase', async () => {
    const p = 48;
    for (const op of ['gatherv', 'scatterv'] as const) {
      for (const hierTree of ['adaptive', 'binomial'] as const) {
        for (const hierVariant of ['zero-copy', 'reorder'] as const) {
          const c: Partial<RunCommandOptions> = { op, hierTree, hierVariant, p, perNode: 8, placement: 'random', root: 13, dist: 'spikes' };
          const what = JSON.stringify(c);
          const r = await inProcess({ ...c, persistent: true, reps: 2 });
          const once = await inProcess(c);
          expect(r, what).toMatchObject({ verified: true, persistent: true, collective: op, tree: hierTree, variant: hierVariant, messages: p - 1, mismatches: [] });
          expect(once.persistent, what).toBe(false);
          expect(once).not.toHaveProperty('planTime');
          expect(r.repTimes, what).toHaveLength(2);
          // the simulator's every message: the planning once, then the data phase per start()
          expect(r.simTotalMessages, what).toBe((r.planMessages as number) + 2 * r.messages);
          expect(r.simTotalBytes, what).toBe((r.planBytes as number) + 2 * r.bytes);
          expect(r.constructionRounds, what).toBe(once.constructionRounds);
          // planning: the sizes once over every edge (planned-gather.ts, planned-scatter.ts; scatterv: and the tails back up), and the adaptive constructions
          expect(r.planTime, what).toBeGreaterThan(0);
          const edges = op === 'gatherv' ? p - 1 : 2 * (p - 1);
          if (hierTree === 'adaptive') expect(r.planMessages, what).toBeGreaterThan(edges);
          else expect(r.planMessages, what).toBe(edges);
          // start(): the tree's data alone, exactly its evaluation, no slower than the one-shot call (which carries size checks or counts)
          for (const t of r.repTimes) expectDataPhase({ ...r, time: t }, what);
          expectDataPhase(r, what);
          expect(r.time, what).toBeLessThanOrEqual(once.time);
          if (hierTree === 'adaptive') expect(r.time, what).toBeLessThan(once.time);
        }
      }
    }
  });

  it('--dist same runs the irregular call (the regular ones have no persistent form): collective gatherv / scatterv', async () => {
    for (const op of ['gatherv', 'scatterv'] as const) {
      const c: Partial<RunCommandOptions> = { op, hierTree: 'adaptive', p: 32, perNode: 4, dist: 'same', b: 6, root: 5 };
      const r = await inProcess({ ...c, persistent: true });
      expect(r, op).toMatchObject({ verified: true, persistent: true, collective: op, op, dist: 'same' });
      expect(r.planMessages, op).toBeGreaterThan(0);
      expectDataPhase(r, op);
      expect((await inProcess(c)).collective, op).toBe(op === 'gatherv' ? 'gather' : 'scatter');
    }
  });

  it('the command line: JSON has persistent, planTime, planMessages, planBytes (every field of a persistent flat run); the table the planning row', async () => {
    const r = vcoll(['run', '--p', '32', '--op', 'scatterv', '--algorithm', 'hierarchical', '--per-node', '4', '--hier-tree', 'adaptive', '--dist', 'spikes', '--persistent', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout) as RunReport;
    const flat = await runRun({ ...RUN_DEFAULTS, p: 32, op: 'scatterv', algorithm: 'adaptive', persistent: true }, sink().stream);
    for (const key of Object.keys(flat)) expect(o, key).toHaveProperty(key);
    expect(o).toMatchObject({ verified: true, persistent: true, collective: 'scatterv', tree: 'adaptive', messages: 31 });
    expect(o.planTime).toBeGreaterThan(0);
    expect(o.planMessages).toBeGreaterThan(0);
    expect(o.planBytes).toBeGreaterThan(0);
    const out = sink();
    await runRun({ ...HIER, op: 'scatterv', hierTree: 'adaptive', persistent: true, format: 'table' }, out.stream);
    expect(out.text()).toMatch(/hierarchical \(hierarchicalScatterv, zero-copy, adaptive trees\), persistent/);
    expect(out.text()).toMatch(/planning\s*│\s*[\d.]+, \d+ messages, \d+ bytes/);
  });

  it('worker threads: planned once, started every repetition, verified on every rank', async () => {
    const r = await inProcess({ transport: 'threads', op: 'gatherv', p: 8, perNode: 2, placement: 'random', dist: 'same', hierTree: 'adaptive', hierVariant: 'reorder', root: 3, reps: 2, persistent: true });
    expect(r).toMatchObject({ verified: true, transport: 'threads', timeUnit: 's', persistent: true, collective: 'gatherv', tree: 'adaptive', messages: 7, mismatches: [] });
    expect(r.repTimes).toHaveLength(2);
    expect(r.planTime).toBeGreaterThan(0);
    expect(r.planMessages).toBeGreaterThan(0);
  }, 60_000);
});

describe('the node structure is built once per run', () => {
  const built = vi.mocked(nodeStructure);
  beforeEach(() => built.mockClear());

  it('on the simulator: one structure for all ranks (the run\'s), whatever p, variant or repetitions', async () => {
    for (const opts of [
      { p: 64, perNode: 8 },
      { p: 256, perNode: 16, placement: 'random', reps: 3, warmup: 1 },
      { p: 96, perNode: 4, dist: 'same', hierVariant: 'reorder', reps: 2 },
    ] as Partial<RunCommandOptions>[]) {
      built.mockClear();
      const r = await inProcess(opts);
      expect(r.verified).toBe(true);
      expect(built, JSON.stringify(opts)).toHaveBeenCalledTimes(1);
      expect(built.mock.calls[0][0]).toBe(opts.p);
    }
  });
});

describe('vcoll run --algorithm hierarchical on worker threads', () => {
  it('every variant, ordered and random placement, gather and gatherv: verified, in seconds', async () => {
    for (const hierVariant of HIERARCHICAL_VARIANT_NAMES) {
      for (const [placement, dist] of [
        ['ordered', 'random'],
        ['random', 'same'],
      ] as const) {
        const r = await inProcess({ transport: 'threads', p: 8, perNode: 2, placement, dist, hierVariant, root: 5, reps: 2 });
        expect(r.verified, `${hierVariant} ${placement} ${dist}`).toBe(true);
        expect(r).toMatchObject({ transport: 'threads', timeUnit: 's', nodes: 4, perNode: 2, variant: hierVariant });
        // one message per rank but the root (the flat gatherv scatters the counts first)
        if (hierVariant !== 'flat' || dist === 'same') expect(r.messages).toBe(7);
        expect(r.repTimes).toHaveLength(2);
      }
    }
  }, 60_000);
});

describe('typed errors (exit status 2)', () => {
  it('p not a multiple of the ranks per node names both numbers', async () => {
    const e = await failure({ p: 10, perNode: 4 });
    expect(e).toMatchObject({ code: 'INVALID_ARGUMENT', field: '--per-node' });
    expect(e.message).toMatch(/--p 10 is not a multiple of 4/);
    const r = vcoll(['run', '--p', '10', '--algorithm', 'hierarchical', '--per-node', '4']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--per-node.*10.*4/);
    expect(r.stdout).toBe('');
  });

  it('--op must be gatherv or scatterv; --hier-tree must name a tree', async () => {
    expect(await failure({ op: 'allgatherv' as RunCommandOptions['op'] })).toMatchObject({ code: 'INVALID_ARGUMENT', field: '--op' });
    expect(await failure({ hierTree: 'bogus' as RunCommandOptions['hierTree'] })).toMatchObject({ code: 'INVALID_ARGUMENT', field: '--hier-tree' });
    const r = vcoll(['run', '--p', '8', '--op', 'scatterv', '--algorithm', 'hierarchical', '--per-node', '4', '--hier-tree', 'bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--hier-tree/);
  });

  it('--alpha, --beta, --gamma, --ports given on the command line are refused (their defaults are not: the runs above)', () => {
    const r = vcoll(['run', '--p', '8', '--algorithm', 'hierarchical', '--per-node', '4', '--beta', '2']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/invalid --beta: .*two-level model/);
  });

  it('options that make no sense with it, or without it', async () => {
    const cases: [Partial<RunCommandOptions>, string][] = [
      [{ perNode: undefined }, '--per-node'],
      [{ perNode: 0 }, '--per-node'],
      [{ transport: 'threads', calibrate: true }, '--calibrate'],
      [{ givenModelOptions: ['ports'] }, '--ports'],
      [{ root: 32 }, '--root'],
      [{ algorithm: 'linear', perNode: 4 }, '--per-node'],
      [{ algorithm: 'binomial', perNode: undefined, placement: 'random' }, '--placement'],
      [{ algorithm: 'auto', perNode: undefined, hierVariant: 'flat' }, '--hier-variant'],
      [{ algorithm: 'adaptive', perNode: undefined, hierTree: 'adaptive' }, '--hier-tree'],
    ];
    for (const [opts, field] of cases) {
      expect(await failure(opts), JSON.stringify(opts)).toMatchObject({ code: 'INVALID_ARGUMENT', field });
    }
  });

  it('--persistent is no longer refused: it runs the irregular call, planned once', async () => {
    const r = await inProcess({ persistent: true });
    expect(r).toMatchObject({ verified: true, persistent: true, collective: 'gatherv', mismatches: [] });
    const s = await inProcess({ persistent: true, op: 'scatterv', dist: 'same' });
    expect(s).toMatchObject({ verified: true, persistent: true, collective: 'scatterv' });
  });

  it('a model file must be hierarchical, for p ranks, and place the ranks alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcoll-hier-model-'));
    try {
      const linear = join(dir, 'linear.json');
      writeFileSync(linear, JSON.stringify({ format: 'vcoll-cost-model', version: 1, kind: 'linear', alpha: 1, beta: 1, gamma: 0, ports: 1, copyAll: false }));
      const hier = join(dir, 'hier.json');
      const spec = { format: 'vcoll-cost-model', version: 1, kind: 'hierarchical', nodeOf: [0, 0, 1, 1], intra: { alpha: 1, beta: 0 }, inter: { alpha: 2, beta: 0 }, gamma: 0, ports: 1, copyAll: false };
      writeFileSync(hier, JSON.stringify(spec));
      const twoPorts = join(dir, 'two-ports.json');
      writeFileSync(twoPorts, JSON.stringify({ ...spec, ports: 2 }));
      expect(await failure({ p: 4, perNode: undefined, modelFile: linear })).toMatchObject({ field: '--model-file' });
      expect(await failure({ p: 4, perNode: 2, modelFile: hier })).toMatchObject({ field: '--per-node' });
      expect(await failure({ p: 8, perNode: undefined, modelFile: hier })).toMatchObject({ field: '--model-file' });
      expect(await failure({ p: 4, perNode: undefined, modelFile: twoPorts })).toMatchObject({ field: '--model-file' });
      const ok = await inProcess({ p: 4, perNode: undefined, modelFile: hier, root: 3 });
      expect(ok).toMatchObject({ verified: true, nodes: 2, largestNode: 2, placement: 'model-file' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('memory: estimated before anything runs, and the heap re-run', () => {
  const saved = process.env.VCOLL_MAX_MEMORY;
  afterEach(() => {
    if (saved === undefined) delete process.env.VCOLL_MAX_MEMORY;
    else process.env.VCOLL_MAX_MEMORY = saved;
  });

  it('the estimate is SIM_RUN_HIERARCHICAL_RANK_BYTES per rank: refused at once above the limit, naming --p', async () => {
    expect(simCaseRankBytes({ algorithm: 'hierarchical' })).toBe(SIM_RUN_HIERARCHICAL_RANK_BYTES);
    process.env.VCOLL_MAX_MEMORY = '64M';
    const e = await failure({ p: 2 ** 16, perNode: 256 });
    expect(e).toMatchObject({ code: 'TOO_LARGE', field: '--p' });
    const kib = (SIM_RUN_HIERARCHICAL_RANK_BYTES / 1024).toFixed(1);
    expect(e.message).toContain(`simulating gatherv (hierarchical) with 65536 ranks (${kib} KiB per rank)`);
  });

  it('heapForRun asks for a larger heap when the ranks need more than Node\'s and fit the memory limit', () => {
    process.env.VCOLL_MAX_MEMORY = '1T';
    const mib = heapForRun({ ...HIER, p: 2 ** 20, perNode: 256 });
    expect(mib).toBe(Math.ceil((2 * 2 ** 20 * SIM_RUN_HIERARCHICAL_RANK_BYTES) / 2 ** 20));
    expect(heapForRun({ ...HIER, p: 2 ** 20, perNode: 3 })).toBeUndefined(); // refused by the run itself
    expect(heapForRun({ ...HIER, transport: 'threads' })).toBeUndefined();
  });

  it('p = 16384 under a 64 MiB heap: vcoll runs itself again with the heap its ranks need', () => {
    const r = spawnSync(
      process.execPath,
      ['--max-old-space-size=64', '--import', 'tsx', 'src/cli/main.ts', 'run', '--p', '16384', '--algorithm', 'hierarchical', '--per-node', '64', '--format', 'json'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.stderr).toMatch(/running with a [\d.]+ [MG]iB JavaScript heap \(node --max-old-space-size=\d+/);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ verified: true, p: 16384, nodes: 256, messages: 16383 });
  }, 120_000);
});
