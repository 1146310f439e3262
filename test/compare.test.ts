import { describe, expect, it } from 'vitest';
import { DISTRIBUTIONS, blockSizes } from '../src/workloads/distributions.js';
import { linearModel } from '../src/model/cost-model.js';
import { adaptiveBinomialTree } from '../src/trees/adaptive.js';
import { obliviousBinomialTree } from '../src/trees/binomial.js';
import { linearTree } from '../src/trees/linear.js';
import { compareTrees, outsidePaperConvention } from '../src/trees/compare.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { optimalBinaryTree } from '../src/trees/optimal/binary.js';
import { TreeBuilder } from '../src/trees/tree.js';
import { int, rng } from './helpers/random.js';

describe('compareTrees', () => {
  it('reports the paper optimum where it differs from the exact one', () => {
    // seed-free smallest case (docs/optimal-dp.md): exact 4 at root 2, paper 5
    const rows = compareTrees([1, 1, 2], linearModel({ alpha: 1, beta: 1, gamma: 0 }), { roots: 'best', algorithms: ['optimal'] });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ algorithm: 'optimal', root: 'best', time: 4, rootRank: 2 });
    expect(rows[0].alternative).toEqual({ mode: 'paper', time: 5, rootRank: expect.any(Number) });
    const paper = compareTrees([1, 1, 2], linearModel({ alpha: 1, beta: 1, gamma: 0 }), { roots: 'best', algorithms: ['optimal'], optimalMode: 'paper' });
    expect(paper[0]).toMatchObject({ time: 5, alternative: { mode: 'exact', time: 4, rootRank: 2 } });
  });

  it("an exact tree of the paper's shape has the paper time (the skip is sound)", () => {
    const rnd = rng(11);
    let skipped = 0;
    let shaped = 0;
    for (let n = 0; n < 1500; n++) {
      const p = int(rnd, 1, 40);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.15 ? 0 : int(rnd, 1, 50)));
      const model = linearModel({ alpha: int(rnd, 0, 60), beta: int(rnd, 0, 3), gamma: int(rnd, 0, 2) });
      const exact = optimalTree(sizes, model);
      const paper = optimalTree(sizes, model, { mode: 'paper' });
      if (outsidePaperConvention(exact.tree)) shaped++;
      else {
        skipped++;
        expect(paper.time).toBe(exact.time);
      }
      expect(paper.time).toBeGreaterThanOrEqual(exact.time);
      expect(outsidePaperConvention(paper.tree)).toBe(false);
    }
    expect(skipped).toBeGreaterThan(50);
    expect(shaped).toBeGreaterThan(0);
  });

  it('binary rows come from one table for both roots and equal the builder', () => {
    const sizes = Array.from({ length: 60 }, (_, i) => (i * 37) % 23);
    const model = linearModel({ alpha: 20, beta: 1, gamma: 1 });
    const rows = compareTrees(sizes, model, { algorithms: ['binary'], fixedRoot: 17 });
    expect(rows.map((r) => r.root)).toEqual(['fixed', 'best']);
    expect(rows[0].time).toBe(optimalBinaryTree(sizes, model, { root: 17 }).time);
    expect(rows[0].rootRank).toBe(17);
    const best = optimalBinaryTree(sizes, model);
    expect(rows[1]).toMatchObject({ time: best.time, rootRank: best.root });
  });

  it("detects the shape outside the paper's convention", () => {
    const several = new TreeBuilder(3, 2).addChild(2, 1).addChild(2, 0).build();
    expect(outsidePaperConvention(several)).toBe(true);
    const one = new TreeBuilder(3, 2).addChild(2, 0).addChild(0, 1).build();
    expect(outsidePaperConvention(one)).toBe(false);
    // rank 2 takes 1 then 0 while still the last rank, before its right child 3
    const inner = new TreeBuilder(4, 2).addChild(2, 1).addChild(2, 0).addChild(2, 3).build();
    expect(outsidePaperConvention(inner)).toBe(true);
    const rightFirst = new TreeBuilder(4, 2).addChild(2, 1).addChild(2, 3).addChild(2, 0).build();
    expect(outsidePaperConvention(rightFirst)).toBe(false);
  });

  it('validates its options', () => {
    const model = linearModel({ alpha: 1, beta: 1 });
    expect(() => compareTrees([1, 2, 3], model, { fixedRoot: 3 })).toThrow(/fixedRoot/);
    expect(() => compareTrees([1, -2, 3], model)).toThrow(/sizes\[1\]/);
  });
});

describe('the optimal DP is never beaten by another ordered construction', () => {
  it('random instances, every distribution, fixed and best root', () => {
    const rnd = rng(2024);
    let n = 0;
    for (let trial = 0; trial < 120; trial++) {
      const dist = DISTRIBUTIONS[trial % DISTRIBUTIONS.length];
      const p = int(rnd, 1, 150);
      const sizes = blockSizes(dist, { p, b: int(rnd, 1, 200), seed: trial });
      const model = linearModel({ alpha: int(rnd, 0, 300), beta: int(rnd, 0, 3), gamma: int(rnd, 0, 2), copyAll: rnd() < 0.15 });
      const fixed = int(rnd, 0, p - 1);
      for (const root of [undefined, fixed]) {
        const opt = optimalTree(sizes, model, { root }).time;
        const others = [
          linearTree(sizes, model, { root }),
          obliviousBinomialTree(sizes, model, { root, searchAllRoots: true }),
          adaptiveBinomialTree(sizes, model, { root }),
          optimalBinaryTree(sizes, model, { root }),
        ];
        for (const o of others) {
          expect(opt, `${dist} p=${p} root=${String(root)}`).toBeLessThanOrEqual(o.time);
          n++;
        }
      }
    }
    expect(n).toBe(120 * 2 * 4);
  });
});
