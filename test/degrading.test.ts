/**
 * The degrading adaptive tree (src/trees/degrading.ts), at the model level: a valid tree whose
 * time is evaluate's, never slower than min(adaptive, linear) on the cases tried (seed 000's
 * distributions and random instances), faster where adaptive makes the root wait, and typed
 * errors for the models it does not cover.
 */
import { describe, expect, it } from 'vitest';
import { adaptiveBinomialTree } from '../src/trees/adaptive.js';
import { degradingTree } from '../src/trees/degrading.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import { hierarchicalModel, linearModel, pairwiseModel } from '../src/model/cost-model.js';
import { SEED000_DISTRIBUTIONS } from '../src/run/spec.js';
import { blockSizes, DISTRIBUTIONS, type DistributionName } from '../src/workloads/distributions.js';
import { int, rng } from './helpers/random.js';

// seed 000's distributions as the main job runs them, and Traff18's own two blocks (m_0 = m_{p−1} = b)
const SEED000: readonly DistributionName[] = [...SEED000_DISTRIBUTIONS, 'two-blocks-small'];

function check(sizes: number[], alpha: number, gamma: number, root: number): { d: number; best: number } {
  const model = linearModel({ alpha, beta: 1, gamma });
  const t = degradingTree(sizes, model, { root });
  expect(t.root).toBe(root);
  // time is the exact evaluator's, gather and scatter alike; every rank in the tree once (build checks it)
  expect(t.time).toBe(evaluate(t.tree, sizes, model).time);
  expect(evaluate(t.tree, sizes, model, 'scatter').time).toBe(t.time);
  const a = evaluate(adaptiveBinomialTree(sizes, model, { root }).tree, sizes, model).time;
  const l = evaluate(linearTree(sizes, model, { root }).tree, sizes, model).time;
  return { d: t.time, best: Math.min(a, l) };
}

describe('degradingTree', () => {
  it("seed 000's distributions, b = 1 … 10^4, p = 64 and 560, roots 0 and p/2, α 1 and 100, γ 0 and 1: never slower than min(adaptive, linear)", () => {
    let below = 0;
    for (const dist of SEED000) {
      for (const b of [1, 10, 100, 1000, 10000]) {
        for (const p of [64, 560]) {
          const sizes = blockSizes(dist, { p, b });
          for (const root of [0, p / 2]) {
            for (const alpha of [1, 100]) {
              for (const gamma of [0, 1]) {
                const { d, best } = check(sizes, alpha, gamma, root);
                expect(d, `${dist} b=${b} p=${p} root=${root} α=${alpha} γ=${gamma}`).toBeLessThanOrEqual(best);
                if (d <= 0.9 * best) below++;
              }
            }
          }
        }
      }
    }
    // it degrades for real: increasing/decreasing at small b, spikes at b = 100 and 1000
    expect(below).toBeGreaterThanOrEqual(20);
  });

  it('spikes, b = 1000, p = 64, root 0, α = 100: opens late partners and beats both by more than 10 %', () => {
    const sizes = blockSizes('spikes', { p: 64, b: 1000 });
    const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
    const t = degradingTree(sizes, model, { root: 0 });
    expect(t.stats.opened).toBeGreaterThan(0);
    const { d, best } = check(sizes, 100, 0, 0);
    expect(d).toBeLessThanOrEqual(0.9 * best);
  });

  it('random instances (every distribution, p 2 … 300, random roots, α 0 … 10^4, γ 0 … 2): never slower than min(adaptive, linear)', () => {
    const rnd = rng(20261127);
    for (let n = 0; n < 400; n++) {
      const dist = DISTRIBUTIONS[int(rnd, 0, DISTRIBUTIONS.length - 1)];
      const p = int(rnd, 2, 300);
      const sizes = blockSizes(dist, { p, b: [1, 10, 100, 1000][int(rnd, 0, 3)], seed: int(rnd, 1, 1000) });
      if (rnd() < 0.2) for (let i = 0; i < p; i++) if (rnd() < 0.3) sizes[i] = 0;
      const root = int(rnd, 0, p - 1);
      const alpha = [0, 1, 10, 100, 1000, 10000][int(rnd, 0, 5)];
      const gamma = [0, 0.5, 1, 2][int(rnd, 0, 3)];
      const { d, best } = check(sizes, alpha, gamma, root);
      expect(d, `${dist} p=${p} root=${root} α=${alpha} γ=${gamma} sizes=${sizes.join(',')}`).toBeLessThanOrEqual(best * (1 + 1e-12));
    }
  });

  it('no root given: the free adaptive construction’s root; p = 1 and all-empty blocks', () => {
    const sizes = blockSizes('random', { p: 100, b: 100 });
    const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });
    expect(degradingTree(sizes, model).root).toBe(adaptiveBinomialTree(sizes, model).root);
    expect(degradingTree([7], model)).toMatchObject({ root: 0, time: 7 });
    const empty = degradingTree([0, 0, 0, 0, 0], model, { root: 2 });
    expect(empty.time).toBe(0);
    expect(empty.stats.rootChildren).toBe(4);
  });

  it('per-pair and hierarchical models: a valid tree whose time is the evaluator\'s, start-ups and per-unit costs read per rank', () => {
    const rnd = rng(17);
    for (let t = 0; t < 40; t++) {
      const p = int(rnd, 2, 40);
      const matrix = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, lo, hi)));
      const nodeOf = Array.from({ length: p }, (_, i) => Math.floor(i / int(rnd, 1, 8)));
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 2000)));
      const root = int(rnd, 0, p - 1);
      for (const model of [
        pairwiseModel({ alpha: matrix(0, 3000), beta: matrix(1, 4), gamma: 1 }),
        hierarchicalModel({ nodeOf, intra: { alpha: 10, beta: 1 }, inter: { alpha: 1000, beta: 2 }, gamma: 1 }),
      ]) {
        const d = degradingTree(sizes, model, { root });
        expect(d.root).toBe(root);
        expect(d.time).toBe(evaluate(d.tree, sizes, model).time);
        expect(d.tree.parent.filter((x) => x < 0).length).toBe(1);
      }
    }
  });

  it('typed errors: k ports, copyAll, bad sizes and roots', () => {
    const sizes = [1, 2, 3];
    expect(() => degradingTree(sizes, linearModel({ alpha: 1, beta: 1, ports: 2 }))).toThrow(expect.objectContaining({ field: 'model' }));
    expect(() => degradingTree(sizes, linearModel({ alpha: 1, beta: 1, copyAll: true }))).toThrow(expect.objectContaining({ field: 'model' }));
    expect(() => degradingTree([1, -1], linearModel({ alpha: 1, beta: 1 }))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => degradingTree(sizes, linearModel({ alpha: 1, beta: 1 }), { root: 3 })).toThrow(expect.objectContaining({ field: 'root' }));
  });
});
