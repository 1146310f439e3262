/**
 * `auto`'s decisions are part of the behaviour: the same counts, model and options must give
 * the same algorithm (and the same predicted times, to the last bit) from one version to the
 * next. This test recomputes the root's decision (predictAuto + chooseAuto) and the every-rank
 * shortcut (linearWinsForAnyCounts) over every distribution of the benchmark set (Traff18 §5),
 * several p, roots, models, unit sizes and round latencies, and compares them with the
 * fixture recorded from the implementation before the variant table
 * (test/fixtures/auto-decisions.json: the decisions in order, and a SHA-256 of every
 * prediction). Regenerate only for an intended change: VCOLL_RECORD_AUTO=1 npx vitest run test/auto-decisions.test.ts.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUTO_ORDER, chooseAuto, linearWinsForAnyCounts, predictAuto } from '../src/collectives/auto.js';
import { linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { blockSizes, DISTRIBUTIONS } from '../src/workloads/distributions.js';

const FIXTURE = new URL('./fixtures/auto-decisions.json', import.meta.url);

function models(p: number): [string, CostModel][] {
  const alpha = Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => 20 + (((i * p + j) * 7919) % 97)));
  const beta = Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => 0.5 + (((i * p + j) * 104729) % 13) / 10));
  return [
    ['a100b1g0', linearModel({ alpha: 100, beta: 1, gamma: 0 })],
    ['a10b1g1', linearModel({ alpha: 10, beta: 1, gamma: 1 })],
    ['a1000b0.1', linearModel({ alpha: 1000, beta: 0.1, gamma: 0.05 })],
    ['copyAll', linearModel({ alpha: 50, beta: 2, gamma: 1, copyAll: true })],
    ['ports2', linearModel({ alpha: 100, beta: 1, gamma: 0, ports: 2 })],
    ['pairwise', pairwiseModel({ alpha, beta, gamma: 0.1 })],
  ];
}

function decisions(): { labels: string[]; decisions: string; sha256: string } {
  const labels: string[] = [];
  let out = '';
  const hash = createHash('sha256');
  const all = new Set<string>(AUTO_ORDER);
  for (const dist of DISTRIBUTIONS) {
    for (const p of [1, 2, 3, 5, 8, 13, 16, 33, 64, 100]) {
      for (const b of [1, 100, 10000]) {
        const counts = blockSizes(dist, { p, b, rho: 5, seed: 7 });
        for (const [label, model] of models(p)) {
          for (const root of [...new Set([0, Math.floor(p / 2), p - 1])]) {
            for (const unitBytes of [1, 8]) {
              for (const latency of [0, 30, 400]) {
                const pred = predictAuto(counts, model, root, unitBytes, all, latency);
                const wins = linearWinsForAnyCounts(p, root, model, unitBytes, all, latency);
                // one character a case: the index of the choice in AUTO_ORDER, upper case (A, B, …)
                // when every rank could tell linear wins for any counts
                const code = AUTO_ORDER.indexOf(chooseAuto(pred));
                out += String.fromCharCode((wins ? 65 : 97) + code);
                labels.push(`${dist} p=${p} b=${b} ${label} root=${root} unitBytes=${unitBytes} latency=${latency}`);
                hash.update(JSON.stringify(pred));
              }
            }
          }
        }
      }
    }
  }
  return { labels, decisions: out, sha256: hash.digest('hex') };
}

describe('auto decisions', () => {
  it('are those recorded before the variant table, over every distribution, p, root, model, unit and latency', () => {
    const now = decisions();
    if (process.env.VCOLL_RECORD_AUTO === '1') {
      writeFileSync(FIXTURE, JSON.stringify({ order: AUTO_ORDER, decisions: now.decisions, sha256: now.sha256 }) + '\n');
    }
    const want = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { order: string[]; decisions: string; sha256: string };
    expect(AUTO_ORDER).toEqual(want.order);
    expect(now.decisions.length).toBe(want.decisions.length);
    for (let i = 0; i < want.decisions.length; i++) {
      if (now.decisions[i] !== want.decisions[i]) expect(`${now.labels[i]}: ${now.decisions[i]}`).toBe(`${now.labels[i]}: ${want.decisions[i]}`);
    }
    expect(now.sha256).toBe(want.sha256);
    // not a degenerate fixture: auto picks at least three algorithms, and the shortcut fires sometimes
    expect(new Set(want.decisions.toLowerCase()).size).toBeGreaterThanOrEqual(3);
    expect(want.decisions).toMatch(/[A-Z]/);
  });
});
