/**
 * `npm run soak` (tools/soak/): a handful of cases on the simulator and on worker threads run
 * and verify; a planted failure (wrong counts, or a result byte flipped after the op, with the
 * expectation "verified") is reported with a reproducer line that reruns exactly that case,
 * and the exit status is 1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeCase, drawCase, encodeCase, type GenOptions } from '../tools/soak/cases.js';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run soak -- …args` (tools/soak/soak.ts through tsx) to completion. */
function soak(args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tools/soak/soak.ts', '--no-progress', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

interface Summary {
  counts: Record<string, { cases: number; jobs: number; verified: number; expected: number; wrong: number; hang: number; unexpected: number; mixes: number }>;
  failures: { kind: string; reproducer: string; description: string }[];
}

const dir = mkdtempSync(join(tmpdir(), 'vcoll-soak-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const json = (name: string): Summary => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Summary;

const GEN: GenOptions = { mixes: true, faultRate: 0.3, faults: ['throw', 'stuck', 'wrong-count'], pMax: 512 };

describe('soak cases', () => {
  it('are drawn from (seed, index) alone and survive the reproducer token unchanged', () => {
    for (let i = 0; i < 200; i++) {
      const c = drawCase('sim', 9, i, GEN);
      expect(drawCase('sim', 9, i, GEN)).toEqual(c);
      expect(decodeCase(encodeCase(c))).toEqual(c);
      expect(c.p).toBeGreaterThanOrEqual(1);
      expect(c.p).toBeLessThanOrEqual(512);
    }
    const many = Array.from({ length: 400 }, (_, i) => drawCase('sim', 9, i, GEN));
    // the generator reaches mixes, faults, split and inter communicators, persistent plans
    expect(many.some((c) => c.ops.length > 1)).toBe(true);
    expect(many.some((c) => c.fault?.kind === 'wrong-count')).toBe(true);
    expect(many.some((c) => c.comm === 'split') && many.some((c) => c.comm === 'inter')).toBe(true);
    expect(many.some((c) => c.ops.some((s) => s.starts > 0))).toBe(true);
    expect(() => decodeCase('bm90IGEgY2FzZQ')).toThrow();
  });
});

describe('npm run soak', () => {
  it('runs and verifies sim cases (exit 0, every case verified or failed as expected)', async () => {
    const r = await soak(['--transport', 'sim', '--runs', '40', '--seed', '5', '--json', join(dir, 'sim.json')]);
    expect(r.stderr).not.toMatch(/WRONG|HANG|UNEXPECTED [a-z]/);
    expect(r.status).toBe(0);
    const s = json('sim.json');
    expect(s.failures).toEqual([]);
    expect(s.counts.sim.cases).toBe(40);
    expect(s.counts.sim.verified + s.counts.sim.expected).toBe(40);
    expect(s.counts.sim.verified).toBeGreaterThan(20);
    expect(r.stdout).toMatch(/no failure/);
  });

  it('runs and verifies threads cases, batched and with faults alone', async () => {
    // seed 3: a rank exits (p = 3), a rank throws (p = 3, and p = 6 split), and a case without a fault (p = 2)
    const r = await soak(['--transport', 'threads', '--runs', '4', '--seed', '3', '--fault-rate', '0.5', '--fault-kinds', 'throw,exit,wrong-count', '--json', join(dir, 'threads.json')]);
    expect(r.status).toBe(0);
    const s = json('threads.json');
    expect(s.counts.threads.cases).toBe(4);
    expect(s.counts.threads.verified).toBe(1);
    expect(s.counts.threads.expected).toBe(3);

    // several cases in one runThreads call: two different cases of the same p as one job
    const gen = { ...GEN, faultRate: 0, pMax: 8 };
    const a = drawCase('threads', 4, 3, gen);
    let j = 4;
    while (drawCase('threads', 4, j, gen).p !== a.p) j++;
    const b = drawCase('threads', 4, j, gen);
    const batch = await soak(['--case', [a, b].map(encodeCase).join(','), '--json', join(dir, 'batch.json')]);
    expect(batch.status).toBe(0);
    const k = json('batch.json').counts.threads;
    expect([k.cases, k.jobs, k.verified]).toEqual([2, 1, 2]);
  }, 300_000);

  it('reports a planted wrong-count failure with a reproducer that reruns exactly it, and exits 1', async () => {
    const r = await soak(['--transport', 'sim', '--runs', '4', '--seed', '3', '--plant', 'wrong-count', '--json', join(dir, 'plant.json')]);
    expect(r.status).toBe(1);
    const s = json('plant.json');
    expect(s.failures.length).toBeGreaterThan(0);
    const f = s.failures[0];
    // wrong counts must be caught by the library: the planted expectation "verified" then fails as an unexpected error
    expect(f.kind).toBe('unexpected');
    expect(f.description).toMatch(/fault wrong-count@rank \d+ op \d+ \(planted\)/);
    expect(r.stdout).toContain(f.reproducer);
    const token = /--case (\S+)$/.exec(f.reproducer)?.[1] as string;
    expect(f.reproducer).toBe(`npm run soak -- --transport sim --case ${token}`);
    const again = await soak(['--case', token, '--json', join(dir, 'again.json')]);
    expect(again.status).toBe(1);
    const a = json('again.json');
    expect(a.counts.sim.cases).toBe(1);
    expect(a.failures.map((x) => [x.kind, x.description])).toEqual([[f.kind, f.description]]);
  });

  it('reports a planted corrupted result as WRONG on sim and on threads', async () => {
    const sim = await soak(['--transport', 'sim', '--runs', '3', '--seed', '3', '--plant', 'corrupt', '--json', join(dir, 'corrupt.json')]);
    expect(sim.status).toBe(1);
    const s = json('corrupt.json');
    expect(s.counts.sim.wrong).toBeGreaterThan(0);
    expect(s.failures.every((f) => f.kind === 'wrong')).toBe(true);
    expect(sim.stdout).toMatch(/^WRONG sim .*\n .* wrong from index \d+ .*\n {2}npm run soak -- --transport sim --case \S+$/m);

    const thr = await soak(['--transport', 'threads', '--runs', '2', '--seed', '3', '--plant', 'corrupt', '--json', join(dir, 'corrupt-threads.json')]);
    expect(thr.status).toBe(1);
    const t = json('corrupt-threads.json');
    expect(t.counts.threads.wrong).toBeGreaterThan(0);
    expect(thr.stdout).toMatch(/npm run soak -- --transport threads --case \S+/);
  }, 300_000);
});
