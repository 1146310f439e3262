/** The simulator's progress callback (SimOptions.progress), its pass-through and `vcoll run --progress`. */
import { describe, expect, it } from 'vitest';
import { runRun, type RunCommandOptions } from '../src/cli/run-command.js';
import { formatSimTime, simProgressLine, SimProgressBar, type ProgressStream } from '../src/cli/sim-progress-bar.js';
import { InvalidArgumentError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runOnSim } from '../src/run/job.js';
import { VIRTUAL_TIMER, runCaseOnRank } from '../src/run/rank.js';
import { CASE_DEFAULTS, type RunCase } from '../src/run/spec.js';
import { runSim, type SimProgress, type SimResult } from '../src/transports/sim/index.js';
import { RUN_DEFAULTS, sink, vcoll } from './helpers/cli.js';

const P = 64;

function caseOf(algorithm: RunCase['algorithm'], extra: Partial<RunCase> = {}): RunCase {
  return { ...CASE_DEFAULTS, algorithm, dist: 'spikes', b: 20, reps: 2, ...extra };
}

function simulate(c: RunCase, progress?: (p: SimProgress) => void): Promise<SimResult<unknown>> {
  return runSim(P, (comm) => runCaseOnRank(comm, c, VIRTUAL_TIMER), {
    model: linearModel(c.model),
    trace: true,
    ...(progress !== undefined ? { progress, progressEveryMs: 0 } : {}),
  });
}

function expectMonotone(calls: readonly SimProgress[]): void {
  for (let i = 1; i < calls.length; i++) {
    expect(calls[i].time).toBeGreaterThanOrEqual(calls[i - 1].time);
    expect(calls[i].messages).toBeGreaterThanOrEqual(calls[i - 1].messages);
    expect(calls[i].bytes).toBeGreaterThanOrEqual(calls[i - 1].bytes);
    expect(calls[i].ranksDone).toBeGreaterThanOrEqual(calls[i - 1].ranksDone);
    expect(calls[i].ranksStarted).toBeGreaterThanOrEqual(calls[i - 1].ranksStarted);
    expect(calls[i].wallMs).toBeGreaterThanOrEqual(calls[i - 1].wallMs);
  }
}

describe('SimOptions.progress', () => {
  for (const [name, c] of [
    ['linear gatherv', caseOf('linear')],
    ['binomial scatterv, persistent (native schedules)', caseOf('binomial', { op: 'scatterv', persistent: true })],
    ['adaptive gatherv', caseOf('adaptive')],
  ] as const) {
    it(`${name}: monotone calls, the last one the run's totals; virtual times and trace unchanged`, async () => {
      const calls: SimProgress[] = [];
      const observed = await simulate(c, (p) => calls.push({ ...p }));
      const plain = await simulate(c);
      // an observer: the same run, event for event
      expect(observed.time).toBe(plain.time);
      expect(observed.finish).toEqual(plain.finish);
      expect(observed.messages).toBe(plain.messages);
      expect(observed.bytes).toBe(plain.bytes);
      expect(observed.trace).toEqual(plain.trace);
      expect(observed.results).toEqual(plain.results);
      // forced to every check: called during the run, not only at its end
      expect(calls.length).toBeGreaterThan(2);
      expect(calls.some((x) => x.messages > 0 && x.messages < plain.messages)).toBe(true);
      expectMonotone(calls);
      for (const x of calls) expect(x.ranks).toBe(P);
      const last = calls[calls.length - 1];
      expect(last.ranksDone).toBe(P);
      expect(last.messages).toBe(plain.messages);
      expect(last.bytes).toBe(plain.bytes);
      expect(last.time).toBe(plain.time);
    });
  }

  it('at the default interval a short run gets only the final call', async () => {
    const c = caseOf('linear');
    const calls: SimProgress[] = [];
    const r = await runSim(P, (comm) => runCaseOnRank(comm, c, VIRTUAL_TIMER), { model: linearModel(c.model), progress: (p) => calls.push({ ...p }) });
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(3); // a slow machine may pass 250 ms
    expect(calls[calls.length - 1]).toMatchObject({ ranksDone: P, ranks: P, messages: r.messages, bytes: r.bytes, time: r.time });
  });

  it('rejects a bad callback or interval; a callback that throws fails the run', async () => {
    const model = linearModel({ alpha: 1, beta: 1, gamma: 0 });
    const prog = async (): Promise<void> => {};
    await expect(runSim(2, prog, { model, progressEveryMs: -1 })).rejects.toThrow(InvalidArgumentError);
    await expect(runSim(2, prog, { model, progressEveryMs: Number.NaN })).rejects.toThrow(InvalidArgumentError);
    await expect(runSim(2, prog, { model, progress: 3 as unknown as () => void })).rejects.toThrow(InvalidArgumentError);
    const boom = new Error('observer failed');
    await expect(
      runSim(2, prog, {
        model,
        progress: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
  });

  it('runOnSim forwards onProgress (job.ts)', async () => {
    const calls: SimProgress[] = [];
    const report = await runOnSim(P, caseOf('binomial'), { onProgress: (p) => calls.push({ ...p }) });
    expect(report.verified).toBe(true);
    const last = calls[calls.length - 1];
    expect(last).toMatchObject({ ranksDone: P, ranks: P, messages: report.simTotalMessages, bytes: report.simTotalBytes });
    expectMonotone(calls);
  });
});

const progress = (over: Partial<SimProgress>): SimProgress => ({ time: 0, messages: 0, bytes: 0, ranksDone: 0, ranksStarted: 1_048_576, ranks: 1_048_576, wallMs: 0, ...over });

function fakeStream(isTTY: boolean, columns?: number): ProgressStream & { text: () => string } {
  const chunks: string[] = [];
  return {
    isTTY,
    columns,
    write: (s: string) => {
      chunks.push(s);
      return true;
    },
    text: () => chunks.join(''),
  };
}

describe('the progress line', () => {
  it('reads as ranks done, virtual time, messages and wall time', () => {
    expect(simProgressLine(progress({ ranksDone: 412_331, time: 1.234e7, messages: 412_330, wallMs: 12_430 }))).toBe(
      '[sim] p=1048576  ranks done 412,331/1,048,576 (39%)  t=1.23e7  msgs 412,330  12.4 s',
    );
    expect(formatSimTime(0)).toBe('0');
    expect(formatSimTime(4555)).toBe('4555');
    expect(formatSimTime(12.3456)).toBe('12.35');
    expect(formatSimTime(26_283_557)).toBe('2.63e7');
    // 100% only when every rank is done
    expect(simProgressLine(progress({ ranks: 1000, ranksStarted: 1000, ranksDone: 999 }))).toContain('(99%)');
    // the start-up: ranks started, no virtual time yet
    expect(simProgressLine(progress({ ranksStarted: 262_144, wallMs: 3_140 }))).toBe('[sim] p=1048576  starting ranks 262,144/1,048,576 (25%)  3.1 s');
  });

  it('draws nothing before afterMs, redraws with \\r, ends with one newline', () => {
    const s = fakeStream(false);
    const bar = new SimProgressBar(s, 1000);
    bar.update(progress({ wallMs: 500 }));
    expect(s.text()).toBe('');
    bar.update(progress({ wallMs: 1200, ranksDone: 10, messages: 123_456 }));
    bar.update(progress({ wallMs: 1400, ranksDone: 11, messages: 12 }));
    bar.end();
    bar.end();
    bar.update(progress({ wallMs: 1700 }));
    const text = s.text();
    expect(text.startsWith('\r[sim] p=1048576  ranks done 10/')).toBe(true);
    expect(text.split('\r')).toHaveLength(3);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().endsWith('msgs 12  1.4 s')).toBe(true);
    expect(text.match(/\n/g)).toHaveLength(1);
    // no terminal: the shorter line is padded over the longer one
    const [, first, second] = text.split('\r');
    expect(second.replace('\n', '').length).toBeGreaterThanOrEqual(first.length);
  });

  it('a run shorter than afterMs leaves stderr empty, even on end', () => {
    const s = fakeStream(true, 80);
    const bar = new SimProgressBar(s);
    bar.update(progress({ wallMs: 999 }));
    bar.end();
    expect(s.text()).toBe('');
  });

  it('on a terminal: clears to the end of the line and stays narrower than it', () => {
    const wide = fakeStream(true, 200);
    new SimProgressBar(wide, 0).update(progress({ wallMs: 5 }));
    expect(wide.text().startsWith('\r[sim] p=1048576 ')).toBe(true);
    expect(wide.text().endsWith('\u001b[K')).toBe(true);
    const narrow = fakeStream(true, 40);
    new SimProgressBar(narrow, 0).update(progress({ wallMs: 5 }));
    const line = narrow.text().replace('\r', '').replace('\x1b[K', '');
    expect(line.length).toBe(39);
    expect(line.startsWith('ranks done 0/')).toBe(true);
  });
});

describe('vcoll run --progress', () => {
  const opts: RunCommandOptions = { ...RUN_DEFAULTS, p: P, algorithm: 'linear' };

  it('in process: the bar goes to stderr, stdout is the same as without it', async () => {
    const withOut = sink();
    const withErr = sink();
    await runRun({ ...opts, progress: true }, withOut.stream, { stderr: withErr.stream, afterMs: 0 });
    const plainOut = sink();
    const plainErr = sink();
    await runRun({ ...opts, progress: false }, plainOut.stream, { stderr: plainErr.stream, afterMs: 0 });
    expect(withOut.text()).toBe(plainOut.text());
    expect(plainErr.text()).toBe('');
    const err = withErr.text();
    expect(err).toMatch(/^\r\[sim\] p=64 {2}ranks done /);
    expect(err).toContain('ranks done 64/64 (100%)');
    expect(err.endsWith('\n')).toBe(true);
    // table format too: nothing of the bar on stdout
    const tableOut = sink();
    await runRun({ ...opts, format: 'table', progress: true }, tableOut.stream, { stderr: sink().stream, afterMs: 0 });
    expect(tableOut.text()).not.toContain('[sim]');
  });

  it('as a process: --progress and --no-progress parse, stdout is byte-identical, a short run draws nothing', () => {
    const args = ['run', '--transport', 'sim', '--p', '16', '--op', 'gatherv', '--algorithm', 'linear', '--format', 'json'];
    const on = vcoll([...args, '--progress']);
    const off = vcoll([...args, '--no-progress']);
    expect(on.status).toBe(0);
    expect(off.status).toBe(0);
    expect(on.stdout).toBe(off.stdout);
    expect(JSON.parse(on.stdout)).toMatchObject({ verified: true, p: 16 });
    expect(on.stderr).toBe('');
    expect(off.stderr).toBe('');
  });
});

describe('progress during the start-up (every program runs up to its first wait before virtual time moves)', () => {
  it('reports ranks started as they start, then ranks done; the run is unchanged', async () => {
    const p = 8192;
    const c = { ...CASE_DEFAULTS, algorithm: 'binomial' } as const satisfies RunCase;
    const calls: SimProgress[] = [];
    const program = (comm: Parameters<typeof runCaseOnRank>[0]): ReturnType<typeof runCaseOnRank> => runCaseOnRank(comm, c, VIRTUAL_TIMER);
    const observed = await runSim(p, program, { model: linearModel(c.model), progress: (x) => calls.push({ ...x }), progressEveryMs: 0 });
    const plain = await runSim(p, program, { model: linearModel(c.model) });
    expect(observed.time).toBe(plain.time);
    expect(observed.finish).toEqual(plain.finish);
    const starting = calls.filter((x) => x.ranksStarted < p);
    // one report per 1024 programs started, before any of them is done or any time has passed
    expect(starting.length).toBeGreaterThanOrEqual(p / 1024 - 1);
    for (const x of starting) expect(x).toMatchObject({ ranksDone: 0, time: 0, messages: 0 });
    expectMonotone(calls);
    expect(calls[calls.length - 1]).toMatchObject({ ranksStarted: p, ranksDone: p });
  });
});

