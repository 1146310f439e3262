/** `vcoll schedule`: the compiled data phase of one gatherv/scatterv, printed and checked. */
import { describe, expect, it } from 'vitest';
import { formatScheduleReport, runScheduleCommand, type ScheduleCommandOptions, type ScheduleReport } from '../src/cli/schedule-command.js';
import { compileAllgatherSchedule } from '../src/collectives/allgather/schedule.js';
import { compileVSchedule } from '../src/collectives/v-schedule.js';
import { UnavailableError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { bindSchedule } from '../src/schedule/run.js';
import { runSim } from '../src/transports/sim/index.js';
import { blockSizes } from '../src/workloads/distributions.js';
import { sink, vcoll } from './helpers/cli.js';

const defaults: ScheduleCommandOptions = {
  op: 'gatherv',
  algorithm: 'binomial',
  p: 8,
  dist: 'spikes',
  b: 10,
  rho: 5,
  seed: 1,
  root: 0,
  alpha: 100,
  beta: 1,
  gamma: 0,
  ports: 1,
  copyAll: false,
  unitBytes: 1,
  format: 'text',
};

function inProcess(opts: Partial<ScheduleCommandOptions>): { report: ScheduleReport; text: string } {
  const out = sink();
  const report = runScheduleCommand({ ...defaults, ...opts }, out.stream);
  return { report, text: out.text() };
}

describe('vcoll schedule in process', () => {
  it('text: the counts, the listing of every rank and "check: ok"', () => {
    const { report, text } = inProcess({});
    expect(report.problems).toEqual([]);
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe(`counts: ${blockSizes('spikes', { p: 8, b: 10 }).join(',')}`);
    expect(lines[1]).toBe("schedule 'gatherv binomial': 8 ranks");
    for (let r = 0; r < 8; r++) expect(text).toContain(`rank ${r}: buffers`);
    expect(lines[lines.length - 1]).toBe('check: ok');
    // the root receives, the others send (tags of the first plan's data: 0x40000380)
    expect(text).toContain('recv ← 1 tag 0x40000380');
    expect(text).toContain('send → 0 tag 0x40000380');
  });

  it('the building blocks: reduce with its combines, allreduce, barrier; checked clean', () => {
    const red = inProcess({ op: 'reduce', p: 5, root: 2, b: 2, unitBytes: 8 });
    expect(red.report.problems).toEqual([]);
    expect(red.report.counts).toEqual([2, 2, 2, 2, 2]);
    expect(red.text).toContain("schedule 'reduce binomial': 5 ranks");
    expect(red.text).toContain('combine part0[0..16) ⊕= part1[0..16) (16 B)');
    expect(red.text.trim().endsWith('check: ok')).toBe(true);
    const all = inProcess({ op: 'allreduce', p: 6, b: 3, format: 'json' });
    const o = JSON.parse(all.text) as { label: string; ranks: { steps: { ops: { kind: string }[] }[] }[]; problems: unknown[] };
    expect(o.label).toBe('allreduce recursive doubling');
    expect(o.problems).toEqual([]);
    expect(o.ranks.flatMap((r) => r.steps.flatMap((s) => s.ops)).some((op) => op.kind === 'combine')).toBe(true);
    expect(inProcess({ op: 'barrier', p: 3 }).report.counts).toEqual([0, 0, 0]);
    expect(() => inProcess({ op: 'exscan', p: 1 })).toThrow(/at least 2 ranks/);
  });

  it('json: the WorldSchedule with its counts and an empty `problems`', () => {
    const opts = { format: 'json' as const, op: 'scatterv' as const, algorithm: 'two-block', dist: 'two-blocks', p: 9, root: 4, unitBytes: 4, ports: 2, gamma: 1 };
    const { report, text } = inProcess(opts);
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(1);
    const o = JSON.parse(lines[0]) as { label: string; counts: number[]; ranks: unknown[]; problems: unknown[] };
    expect(o.label).toBe('scatterv two-block');
    expect(o.problems).toEqual([]);
    const model = linearModel({ alpha: 100, beta: 1, gamma: 1, ports: 2 });
    const want = compileVSchedule('scatterv', 'two-block', report.counts, { root: 4, model, unitBytes: 4 });
    expect(o.ranks).toEqual(JSON.parse(JSON.stringify(want.ranks)));
    expect(o.counts).toEqual(report.counts);
  });

  it('every compiled algorithm and op checks ok on a default case', () => {
    for (const algorithm of ['linear', 'adaptive', 'binomial', 'optimal', 'binary', 'traff', 'model-traff', 'model-binomial-min']) {
      for (const op of ['gatherv', 'scatterv'] as const) {
        const { report, text } = inProcess({ algorithm, op, dist: 'random', p: 13, root: 5, copyAll: true, gamma: 1 });
        expect(report.problems, `${op} ${algorithm}`).toEqual([]);
        expect(text.trim().endsWith('check: ok')).toBe(true);
      }
    }
  });

  it('refuses mpi-native (not compiled), a root outside p and a variant restriction', () => {
    expect(() => inProcess({ algorithm: 'mpi-native' })).toThrow(UnavailableError);
    expect(() => inProcess({ algorithm: 'degrading', ports: 2 })).toThrow(/ports/);
    expect(() => inProcess({ root: 8 })).toThrow(/--root/);
    expect(() => inProcess({ algorithm: 'optimal', ports: 2 })).toThrow(/ports/);
  });
});

describe('vcoll schedule --simulate', () => {
  it('replays the schedule under the model: the times of rank programs running it on the simulator', async () => {
    const opts = { algorithm: 'adaptive', p: 12, dist: 'random', gamma: 1, root: 3, simulate: true, runs: 3 };
    const { report, text } = inProcess(opts);
    const sim = report.simulation;
    if (sim === undefined) throw new Error('no simulation');
    const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });
    const world = compileVSchedule('gatherv', 'adaptive', report.counts, { root: 3, model });
    const res = await runSim(
      12,
      async (comm) => {
        const rs = world.ranks[comm.rank];
        const bound = bindSchedule(comm, rs, rs.buffers.map((b) => new Uint8Array(b.bytes)));
        for (let k = 0; k < 3; k++) await bound.run();
      },
      { model },
    );
    expect(sim.finish).toEqual(res.finish);
    expect(sim.time).toBe(res.time);
    expect(sim.messages).toBe(res.messages);
    expect(sim.bytes).toBe(res.bytes);
    expect(sim.runs).toBe(3);
    expect(text).toContain(`simulated (3 runs back to back): time ${res.time}, ${res.messages} messages, ${res.bytes} bytes`);
  });

  it('json: the field `simulation`; --no-listing: the counts summed up, no rank listing', () => {
    const j = JSON.parse(inProcess({ op: 'allreduce', p: 6, simulate: true, format: 'json' }).text) as { simulation: { time: number; messages: number; runs: number } };
    expect(j.simulation.runs).toBe(1);
    expect(j.simulation.messages).toBe(12);
    expect(j.simulation.time).toBeGreaterThan(0);
    const short = inProcess({ p: 40, simulate: true, listing: false }).text.trim().split('\n');
    expect(short).toHaveLength(4);
    expect(short[0]).toMatch(/^counts: 40 blocks, \d+ elements \(\d+ to \d+ per rank\)$/);
    expect(short[1]).toBe("schedule 'gatherv binomial': 40 ranks");
    expect(short[2]).toBe('check: ok');
    expect(short[3]).toMatch(/^simulated \(1 run\): time \d+, 39 messages/);
    expect(() => inProcess({ simulate: true, runs: 0 })).toThrow(/--runs/);
    // the summed-up counts of a very large p (no spread of 300 000 arguments)
    const counts = Array.from({ length: 300_000 }, (_, i) => i % 7);
    const text = formatScheduleReport({ counts, schedule: { label: 'x', ranks: [] }, problems: [] }, false);
    expect(text.split('\n')[0]).toBe(`counts: 300000 blocks, ${counts.reduce((a, b) => a + b, 0)} elements (0 to 6 per rank)`);
    expect(JSON.parse(inProcess({ format: 'json' }).text)).not.toHaveProperty('simulation');
  });
});

describe('vcoll schedule --op allgatherv', () => {
  it('ring by default, recursive doubling and Bruck: the whole data phase, checked; simulated as rank programs running it', async () => {
    const ring = inProcess({ op: 'allgatherv', algorithm: undefined, p: 5, dist: 'random', b: 4 });
    expect(ring.report.problems).toEqual([]);
    expect(ring.text).toContain("schedule 'allgatherv ring (with its first step)': 5 ranks");
    for (const algorithm of ['recursive-doubling', 'bruck'] as const) {
      const { report } = inProcess({ op: 'allgatherv', algorithm, p: 7, dist: 'spikes', b: 6, unitBytes: 2, simulate: true, runs: 2 });
      const sim = report.simulation;
      if (sim === undefined) throw new Error('no simulation');
      const world = compileAllgatherSchedule(algorithm, report.counts.map((c) => 2 * c), undefined, { firstStep: true });
      const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
      const res = await runSim(
        7,
        async (comm) => {
          const rs = world.ranks[comm.rank];
          const bound = bindSchedule(comm, rs, rs.buffers.map((b) => new Uint8Array(b.bytes)));
          for (let k = 0; k < 2; k++) await bound.run();
        },
        // β per element of --unit-bytes bytes, as for gatherv
        { model, unitBytes: 2 },
      );
      expect(sim.finish, algorithm).toEqual(res.finish);
      expect(sim.messages).toBe(res.messages);
    }
  });

  it('pipelined-ring: one step of two streams (receives; sends, each after its chunk’s receive), checked; a gatherv algorithm is refused', () => {
    const { report, text } = inProcess({ op: 'allgatherv', algorithm: 'pipelined-ring', p: 3, b: 5 });
    expect(report.problems).toEqual([]);
    expect(text).toContain('(window 1 per stream, 2 streams):');
    expect(text).toMatch(/stream 1 \(\d+ ops\):/);
    expect(text).toMatch(/send → 1 tag 0x[0-9a-f]+ {2}recv\[\d+\.\.\d+\) \(\d+ B\) {2}after op \d+/);
    expect(() => inProcess({ op: 'allgatherv', algorithm: 'adaptive' })).toThrow(/allgatherv is compiled for ring, recursive-doubling, bruck, pipelined-ring/);
    const proc = vcoll(['schedule', '--op', 'allgatherv', '--algorithm', 'pipelined-ring', '--p', '4', '--format', 'json']);
    expect(proc.status).toBe(0);
    const json = JSON.parse(proc.stdout) as { label: string; problems: unknown[]; ranks: { steps: { streams?: number[]; after?: number[] }[] }[] };
    expect(json.label).toBe('allgatherv pipelined-ring');
    expect(json.problems).toEqual([]);
    expect(json.ranks[0].steps.some((s) => s.streams?.length === 2 && s.after?.length !== undefined)).toBe(true);
  });
});

describe('vcoll schedule as a process', () => {
  it('prints the schedule and check: ok; usage errors exit 2', () => {
    const r = vcoll(['schedule', '--op', 'gatherv', '--algorithm', 'binomial', '--p', '8', '--dist', 'spikes', '--b', '10']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("schedule 'gatherv binomial': 8 ranks");
    expect(r.stdout.trim().endsWith('check: ok')).toBe(true);
    const adaptive = vcoll(['schedule', '--op', 'gatherv', '--algorithm', 'adaptive', '--p', '16', '--dist', 'spikes']);
    expect(adaptive.status).toBe(0);
    expect(adaptive.stdout).toContain("schedule 'gatherv adaptive': 16 ranks");
    expect(adaptive.stdout.trim().endsWith('check: ok')).toBe(true);
    const bad = vcoll(['schedule', '--algorithm', 'mpi-native']);
    expect(bad.status).toBe(2);
  });
});
