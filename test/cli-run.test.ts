import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockSizes } from '../src/workloads/distributions.js';
import { PORTABLE_V_ALGORITHMS } from '../src/collectives/v-variants.js';
import { runRun, type RunCommandOptions } from '../src/cli/run-command.js';
import type { Communicator } from '../src/comm/communicator.js';
import { linearModel } from '../src/model/cost-model.js';
import { CountingCommunicator } from '../src/run/counting.js';
import { summarize, type RunReport } from '../src/run/job.js';
import { predictTime } from '../src/run/predict.js';
import { obliviousTreeFor } from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { VIRTUAL_TIMER, runCaseOnRank } from '../src/run/rank.js';
import { CASE_DEFAULTS, SEED000_DISTRIBUTIONS } from '../src/run/spec.js';
import { runSim } from '../src/transports/sim/index.js';
import { twoBlockDomains } from '../src/trees/two-block.js';
import { RUN_DEFAULTS, sink, vcoll } from './helpers/cli.js';

const defaults = RUN_DEFAULTS;

async function inProcess(opts: Partial<RunCommandOptions>): Promise<RunReport> {
  const out = sink();
  const report = await runRun({ ...defaults, ...opts }, out.stream);
  // the printed object is the returned report
  expect(JSON.parse(out.text())).toEqual(JSON.parse(JSON.stringify(report)));
  return report;
}

describe('vcoll run as a process', () => {
  it('prints one JSON object with the contract fields, verified, on the simulator', () => {
    const r = vcoll(['run', '--transport', 'sim', '--p', '16', '--op', 'gatherv', '--algorithm', 'linear', '--dist', 'same', '--b', '10', '--root', '5', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const o = JSON.parse(lines[0]) as RunReport;
    for (const f of ['verified', 'time', 'messages', 'bytes', 'rounds', 'timeUnit', 'predicted', 'algorithm', 'p', 'root'] as const) expect(o).toHaveProperty(f);
    expect(o.verified).toBe(true);
    expect(o.timeUnit).toBe('model');
    expect(o.algorithm).toBe('linear');
    expect(o.p).toBe(16);
    expect(o.root).toBe(5);
    // linear gatherv of 16 equal blocks of 10 bytes: the root receives 15 messages of 10 bytes
    expect(o.bytes).toBe(15 * 10);
    expect(o.messages).toBeGreaterThanOrEqual(15);
    expect(o.messages).toBe(o.simTotalMessages);
    expect(o.time).toBeGreaterThan(0);
  });

  it('scatterv with --persistent on the simulator: the data phase takes the model time of its tree', () => {
    const r = vcoll(['run', '--p', '12', '--op', 'scatterv', '--algorithm', 'optimal', '--dist', 'decreasing', '--b', '50', '--root', '3', '--alpha', '100', '--beta', '1', '--gamma', '1', '--persistent', '--format', 'json']);
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout) as RunReport;
    expect(o.verified).toBe(true);
    expect(o.persistent).toBe(true);
    expect(o.time).toBe(o.predicted);
    expect(o.planMessages).toBeGreaterThan(0);
  });

  it('--ports k: binomial runs k-ported on the simulator, at the k-ported prediction; the DPs reject it (status 2)', () => {
    const base = ['run', '--p', '16', '--op', 'gatherv', '--dist', 'spikes', '--gamma', '1', '--persistent', '--format', 'json'];
    const one = JSON.parse(vcoll([...base, '--algorithm', 'binomial']).stdout) as RunReport;
    const r = vcoll([...base, '--algorithm', 'binomial', '--ports', '2']);
    expect(r.status).toBe(0);
    const two = JSON.parse(r.stdout) as RunReport;
    expect(two.verified).toBe(true);
    expect(two.model).toEqual({ alpha: 100, beta: 1, gamma: 1, ports: 2 });
    expect(two.time).toBe(two.predicted);
    expect(two.time).toBeLessThan(one.time);
    const bad = vcoll([...base, '--algorithm', 'optimal', '--ports', '2']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/one-ported/);
  });

  it('exits with status 2 and a clear message on a bad option', () => {
    const bad: [string[], RegExp][] = [
      [['--p', '4', '--root', '4'], /--root/],
      [['--op', 'allgatherv'], /--op/],
      [['--frobnicate'], /frobnicate/],
      // a rank rejects it: more than two block sizes for a two-block tree
      [['--algorithm', 'two-block', '--dist', 'random'], /two distinct block sizes/],
    ];
    for (const [args, message] of bad) {
      const r = vcoll(['run', ...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });

  it('rejects bad options with a typed error naming the option', async () => {
    const cases: [Partial<RunCommandOptions>, string][] = [
      [{ algorithm: 'fastest' as RunCommandOptions['algorithm'] }, '--algorithm'],
      [{ dist: 'bimodal' }, '--dist'],
      [{ p: 0 }, '--p'],
      [{ reps: 0 }, '--reps'],
      [{ root: -1 }, '--root'],
      [{ unitBytes: 1.5 }, '--unit-bytes'],
      [{ alpha: -1 }, '--alpha'],
      [{ transport: 'threads', trace: '/tmp/never-written.json' }, '--trace'],
      [{ calibrate: true }, '--calibrate'],
      [{ transport: 'threads', p: 1, calibrate: true }, '--calibrate'],
    ];
    for (const [opts, field] of cases) {
      await expect(runRun({ ...defaults, ...opts }, sink().stream)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', field });
    }
  });

  it('runs on worker threads (p = 4) and reports measured seconds', () => {
    const r = vcoll(['run', '--transport', 'threads', '--p', '4', '--op', 'gatherv', '--algorithm', 'adaptive', '--dist', 'spikes', '--b', '100', '--root', '2', '--reps', '3', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout) as RunReport;
    expect(o.verified).toBe(true);
    expect(o.transport).toBe('threads');
    expect(o.timeUnit).toBe('s');
    expect(o.repTimes).toHaveLength(3);
    expect(o.time).toBe(Math.min(...o.repTimes));
    expect(o.time).toBeGreaterThan(0);
    expect(o.time).toBeLessThan(1);
    const sizes = blockSizes('spikes', { p: 4, b: 100, seed: 1 });
    // every non-root block reaches the root at least once
    expect(o.bytes).toBeGreaterThanOrEqual(sizes.reduce((a, x) => a + x, 0) - sizes[2]);
  }, 60_000);

  it('prints a table by default', () => {
    const r = vcoll(['run', '--p', '5', '--algorithm', 'binomial']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/verified\s*│\s*yes/);
    expect(r.stdout).toMatch(/binomial/);
  });
});

/** Flips the first byte of every non-empty message rank `bad` sends. */
class Corrupting extends CountingCommunicator {
  constructor(
    inner: Communicator,
    private readonly bad: number,
  ) {
    super(inner);
  }

  // every message goes through isend, where the fault is injected: no native schedules
  override get bindValidatedSchedule(): Communicator['bindValidatedSchedule'] {
    return undefined;
  }

  override isend(dest: number, tag: number, data: Uint8Array): PromiseLike<void> {
    if (this.rank !== this.bad || data.length === 0) return super.isend(dest, tag, data);
    const copy = data.slice();
    copy[0] ^= 0x40;
    return super.isend(dest, tag, copy);
  }
}

describe('vcoll run --trace', () => {
  it('writes every message and copy of the run as JSON, consistent with the report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcoll-trace-'));
    try {
      const file = join(dir, 'trace.json');
      const report = await inProcess({ algorithm: 'two-block', dist: 'spikes', gamma: 1, p: 6, trace: file });
      const trace = JSON.parse(readFileSync(file, 'utf8')) as {
        messages: { from: number; to: number; bytes: number; start: number; end: number }[];
        copies: { rank: number; bytes: number; start: number; end: number }[];
      };
      expect(trace.messages.length).toBe(report.simTotalMessages);
      expect(trace.messages.reduce((a, m) => a + m.bytes, 0)).toBe(report.simTotalBytes);
      for (const m of trace.messages) {
        expect(m.from).not.toBe(m.to);
        expect(m.end - m.start).toBe(100 + m.bytes); // α + β·bytes, one-byte elements
      }
      // every copy is a rank's own block (γ = 1 per byte): the root's, and interior nodes'; no staging
      expect(trace.copies.map((c) => c.rank)).toContain(0);
      expect(new Set(trace.copies.map((c) => c.rank)).size).toBe(trace.copies.length);
      for (const c of trace.copies) expect(c.end - c.start).toBe(c.bytes);
      expect(Math.max(...trace.messages.map((m) => m.end), ...trace.copies.map((c) => c.end))).toBe(report.time);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('verification', () => {
  it('reports verified false, with the rank and byte, when a block arrives corrupted', async () => {
    const c = { ...CASE_DEFAULTS, algorithm: 'linear', dist: 'same', b: 4, root: 0 } as const;
    const sim = await runSim(5, (comm) => runCaseOnRank(new Corrupting(comm, 3), c, VIRTUAL_TIMER), { model: linearModel(c.model) });
    const report = summarize('sim', 5, c, sim.results, 'model');
    expect(report.verified).toBe(false);
    // block 3 starts at byte 12 of the root's buffer
    expect(report.mismatches).toEqual([expect.stringMatching(/root 0 receive buffer: byte 12 /)]);
  });

  it('reports verified false when a scatterv block is not delivered at all', async () => {
    const c = { ...CASE_DEFAULTS, op: 'scatterv', algorithm: 'linear', dist: 'same', b: 3, root: 1 } as const;
    // rank 2 pretends to receive: the collective never writes its buffer
    const sim = await runSim(
      3,
      (comm) =>
        runCaseOnRank(
          comm.rank === 2
            ? new (class extends CountingCommunicator {
                // every receive goes through irecv, where the fault is injected
                override get bindValidatedSchedule(): Communicator['bindValidatedSchedule'] {
                  return undefined;
                }

                override irecv(source: number, tag: number, into: Uint8Array) {
                  return super.irecv(source, tag, new Uint8Array(into.length));
                }
              })(comm)
            : comm,
          c,
          VIRTUAL_TIMER,
        ),
      { model: linearModel(c.model) },
    );
    const report = summarize('sim', 3, c, sim.results, 'model');
    expect(report.verified).toBe(false);
    expect(report.mismatches).toEqual([expect.stringMatching(/rank 2 receive buffer: byte 0 /)]);
  });
});

describe('vcoll run in process (simulator)', () => {
  it('verifies every algorithm on both operations, every Traff18 distribution, with several roots', async () => {
    const p = 11;
    for (const op of ['gatherv', 'scatterv'] as const) {
      for (const algorithm of PORTABLE_V_ALGORITHMS) {
        for (const [k, dist] of SEED000_DISTRIBUTIONS.entries()) {
          if (algorithm === 'two-block') {
            try {
              twoBlockDomains(blockSizes(dist, { p, b: 20, seed: 3 }));
            } catch {
              continue;
            }
          }
          const root = (k * 4) % p;
          const o = await inProcess({ p, op, algorithm, dist, b: 20, seed: 3, root, unitBytes: 1 + (k % 3) * 3, gamma: k % 2 });
          expect(o.verified, `${op} ${algorithm} ${dist}`).toBe(true);
          if (algorithm !== 'auto') expect(o.algorithm).toBe(algorithm);
          expect(o.messages).toBe(o.simTotalMessages);
          expect(o.rounds).toBe(o.constructionRounds + o.height);
        }
      }
    }
  }, 60_000);

  it('a persistent data phase on the simulator takes exactly the predicted time of the tree each algorithm follows', async () => {
    for (const op of ['gatherv', 'scatterv'] as const) {
      for (const algorithm of PORTABLE_V_ALGORITHMS) {
        for (const [k, dist] of (['spikes', 'alternating', 'decreasing', 'two-blocks'] as const).entries()) {
          if (algorithm === 'two-block' && dist === 'decreasing') continue;
          const o = await inProcess({ p: 10 + k, op, algorithm, dist, b: 30, root: (3 * k + 1) % 10, gamma: k % 2, alpha: 50, beta: 2, persistent: true });
          expect(o.verified).toBe(true);
          // γ > 0 included: the root receives non-adjacent ranges (two-block) into the blocks' views, no staging copy
          expect(o.time, `${op} ${algorithm} ${dist}`).toBe(o.predicted);
        }
      }
    }
  }, 60_000);

  it('a round latency is auto\'s and the prediction\'s: added per level of the data-phase tree', () => {
    const p = 8;
    const c = { ...CASE_DEFAULTS, algorithm: 'binomial' as const, dist: 'same' as const, b: 10 };
    const sizes = blockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
    const model = linearModel(c.model);
    const base = predictTime('binomial', 'gatherv', sizes, model, 0);
    expect(base).toBe(evaluate(obliviousTreeFor(p, 0), sizes, model).time);
    expect(predictTime('binomial', 'gatherv', sizes, model, 0, 7)).toBe(base + 7 * 3);
    expect(predictTime('linear', 'scatterv', sizes, model, 0, 7)).toBe(predictTime('linear', 'scatterv', sizes, model, 0) + 7);
  });

  it('linear gatherv on the simulator costs what the model says: p − 1 messages at the root, one after the other', async () => {
    const o = await inProcess({ p: 9, algorithm: 'linear', dist: 'same', b: 7, alpha: 10, beta: 2, gamma: 0, root: 0 });
    expect(o.time).toBe(8 * (10 + 2 * 7));
    expect(o.time).toBe(o.predicted);
    expect(o.height).toBe(1);
  });

  it('persistent plans count their planning traffic apart from the execution', async () => {
    const once = await inProcess({ p: 10, algorithm: 'binary', dist: 'increasing', b: 30, gamma: 1 });
    const plan = await inProcess({ p: 10, algorithm: 'binary', dist: 'increasing', b: 30, gamma: 1, persistent: true, reps: 2 });
    expect(plan.verified).toBe(true);
    expect(plan.time).toBe(plan.predicted);
    expect(plan.repTimes).toEqual([plan.time, plan.time]);
    expect((plan.planMessages ?? 0) + plan.messages).toBe(once.messages);
    expect(plan.simTotalMessages).toBe((plan.planMessages ?? 0) + 2 * plan.messages);
  });
});

describe('vcoll run --model-file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vcoll-run-model-'));
  const p = 6;
  // two "sites": ranks 0–2 and 3–5, a slow link between them
  const alpha = Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => (i === j ? 0 : (i < 3) === (j < 3) ? 10 : 400)));
  const beta = Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => (i === j ? 0 : (i < 3) === (j < 3) ? 1 : 8)));
  const file = join(dir, 'pairwise.json');
  writeFileSync(file, JSON.stringify({ format: 'vcoll-cost-model', version: 1, kind: 'pairwise', ports: 1, copyAll: false, alpha, beta, gamma: 0 }));

  it('the simulator charges the file′s per-pair model, the trees are built for it, and the run takes exactly the prediction', async () => {
    for (const algorithm of ['model-binomial-guarded', 'model-traff-guarded', 'optimal', 'binomial'] as const) {
      for (const op of ['gatherv', 'scatterv'] as const) {
        const out = sink();
        const r = await runRun({ ...defaults, p, op, algorithm, modelFile: file, persistent: true, format: 'json' }, out.stream); // persistent: the data phase alone is timed
        expect(r.verified, `${algorithm} ${op}`).toBe(true);
        expect(r.modelKind).toBe('pairwise');
        expect(r.time, `${algorithm} ${op}`).toBe(r.predicted);
      }
    }
    // the per-pair model matters: the same run under the linear defaults takes another time
    const linear = await runRun({ ...defaults, p, algorithm: 'binomial', format: 'json' }, sink().stream);
    const pairwise = await runRun({ ...defaults, p, algorithm: 'binomial', modelFile: file, format: 'json' }, sink().stream);
    expect(pairwise.time).not.toBe(linear.time);
  });

  it('a model for another p, --calibrate with it, or a missing file exit with status 2 naming the option', () => {
    for (const [args, re] of [
      [['run', '--p', '4', '--model-file', file], /--model-file/],
      [['run', '--transport', 'threads', '--p', '6', '--calibrate', '--model-file', file], /--calibrate/],
      [['run', '--model-file', join(dir, 'missing.json')], /--model-file/],
    ] as const) {
      const r = vcoll([...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(re);
    }
  });
});
