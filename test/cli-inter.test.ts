/**
 * `vcoll inter`: the JSON contract {setting, p, q, kA, kB, rootGathering, algorithm,
 * ratio}, verified data, the settings' group and block sizes, Eq. (5), the table form, and
 * status 2 with the option named on bad input.
 */
import { describe, expect, it } from 'vitest';
import { runInterCommand } from '../src/cli/inter-command.js';
import { expectedRatio, groupSizes, interSetting, PAPER_RATIOS } from '../src/run/inter-settings.js';
import type { InterReport } from '../src/run/inter.js';
import { vcoll } from './helpers/cli.js';

describe('vcoll inter', () => {
  it('prints the contract fields as JSON, verified, for the issue\'s command shape', () => {
    const r = vcoll(['inter', '--transport', 'sim', '--setting', '3', '--ranks', '64', '--size', '65536', '--format', 'json']);
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout) as InterReport;
    expect(o).toMatchObject({ setting: 3, p: 50, q: 14, kA: 65536, kB: 16384, verified: true });
    expect(o.rootGathering).toBeGreaterThan(o.algorithm);
    expect(o.ratio).toBeCloseTo(o.rootGathering / o.algorithm, 10);
    expect(o.expected).toBeCloseTo(4.21, 10);
  });

  it('a scaled run says so: exact false, a note on stderr, a marked table row; an unscaled one is exact and silent', async () => {
    const out: string[] = [];
    const notes: string[] = [];
    const [scaled] = await runInterCommand({ transport: 'sim', setting: '1', ranks: 8, size: 2 ** 23, alpha: 1000, beta: 1, format: 'table' }, (l) => out.push(l), (l) => notes.push(l));
    expect(scaled).toMatchObject({ exact: false, rounded: false, verified: true, scale: 2 });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/setting 1 at p \+ q = 8, size 8388608: every block is simulated with 1\/2 of its bytes and β × 2; the times are approximate/);
    expect(out.join('\n')).toMatch(/\* scaled blocks: approximate times/);
    const quiet: string[] = [];
    const [exact] = await runInterCommand({ transport: 'sim', setting: '6', ranks: 8, size: 4096, alpha: 1000, beta: 1, format: 'json' }, () => undefined, (l) => quiet.push(l));
    expect(exact).toMatchObject({ exact: true, rounded: false, scale: 1, verified: true });
    expect(quiet).toEqual([]);
  });

  it('the settings: group sizes (25/7 as in the paper) and Eq. (5) for the paper\'s group sizes', () => {
    expect(groupSizes(2, 256)).toEqual({ p: 200, q: 56 });
    expect(groupSizes(7, 64)).toEqual({ p: 50, q: 14 });
    expect(groupSizes(1, 64)).toEqual({ p: 32, q: 32 });
    for (const s of [1, 2, 3, 4, 5, 7] as const) {
      const set = interSetting(s, 256, 1 << 20);
      expect(expectedRatio(set.sizesA, set.sizesB)).toBeCloseTo(PAPER_RATIOS[s], 2);
    }
    // arithmetic sizes: the ratio tends to the paper's as the groups grow
    for (const s of [6, 8] as const) {
      const set = interSetting(s, 256, 1 << 20);
      expect(Math.abs(expectedRatio(set.sizesA, set.sizesB) - PAPER_RATIOS[s])).toBeLessThan(0.05);
      expect(Math.max(...set.sizesA)).toBe(1 << 20);
    }
  });

  it('a sweep prints a table with every setting and size, all verified', async () => {
    const lines: string[] = [];
    const reports = await runInterCommand(
      { transport: 'sim', setting: '1,6', ranks: 8, size: 4096, alpha: 10, beta: 1, format: 'table' },
      (l) => lines.push(l),
    );
    expect(reports.map((r) => r.setting)).toEqual([1, 6]);
    expect(reports.every((r) => r.verified)).toBe(true);
    expect(lines.join('\n')).toMatch(/root gathering/);
  });

  it('runs for real on worker threads (small groups, real bytes, seconds), verified', () => {
    const r = vcoll(['inter', '--transport', 'threads', '--setting', '7', '--ranks', '5', '--size', '3000', '--format', 'json']);
    const one = vcoll(['inter', '--transport', 'threads', '--setting', '2', '--ranks', '3', '--size', '100', '--warmup', '0', '--reps', '1', '--format', 'json']);
    expect(one.status).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ setting: 2, transport: 'threads', verified: true, warmup: 0, reps: 1 });
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout) as InterReport;
    expect(o).toMatchObject({ setting: 7, p: 4, q: 1, transport: 'threads', scale: 1, verified: true, warmup: 2, reps: 5 });
    expect(o.rootGathering).toBeGreaterThan(0);
    expect(o.algorithm).toBeGreaterThan(0);
  });

  it('bad options exit with status 2 and name the option', () => {
    const bad: [string[], RegExp][] = [
      [['inter', '--setting', '9'], /--setting/],
      [['inter', '--ranks', '1'], /--ranks/],
      [['inter', '--reps', '0'], /--reps/],
      [['inter', '--warmup', '-1'], /--warmup/],
      [['inter', '--transport', 'threads', '--setting', '1', '--ranks', '8', '--size', '100000000'], /size/],
    ];
    for (const [args, re] of bad) {
      const r = vcoll(args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(re);
    }
  });
});
