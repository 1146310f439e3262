import { describe, expect, it } from 'vitest';
import { TooLargeError } from '../src/errors.js';
import { hierarchicalModel, linearModel, type CostModel } from '../src/model/cost-model.js';
import { evaluate } from '../src/trees/evaluate.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { MAX_PAIRWISE_P, optimalPairwiseTree } from '../src/trees/optimal/pairwise.js';
import { isOrdered, type Tree } from '../src/trees/tree.js';
import { rng, int } from './helpers/random.js';
import { randomPairwise, uniformPairwise } from './helpers/models.js';
import { allOrdered, toTree } from './helpers/enumerate.js';
import { errorField } from './helpers/errors.js';




// ---------------------------------------------------------------------------------------
// Every ordered tree (each node's segment grows by adjacent ranges), by enumeration.


function bruteForce(sizes: number[], model: CostModel, trees: Tree[]): Float64Array {
  const best = new Float64Array(sizes.length).fill(Infinity);
  for (const t of trees) {
    const v = evaluate(t, sizes, model).time;
    if (v < best[t.root]) best[t.root] = v;
  }
  return best;
}

describe('optimalPairwiseTree', () => {
  it('the enumeration yields distinct ordered trees', () => {
    expect(allOrdered(1)).toHaveLength(1);
    expect(allOrdered(2)).toHaveLength(2);
    // p = 3: root 0: 0←1←2, 0←2←1, 0←1,2 (two kids); mirror for root 2; root 1: 1←0,2 and 1←2,0
    expect(allOrdered(3)).toHaveLength(3 + 3 + 2);
    for (const p of [3, 4, 5]) {
      const trees = allOrdered(p).map((s) => toTree(p, s));
      for (const t of trees) expect(isOrdered(t)).toBe(true);
      const keys = new Set(trees.map((t) => JSON.stringify(t.children)));
      expect(keys.size).toBe(trees.length);
    }
  });

  it('equals brute force over all ordered trees (random per-pair matrices, every root)', () => {
    const rnd = rng(31);
    const byP = new Map<number, Tree[]>();
    for (let trial = 0; trial < 60; trial++) {
      const p = int(rnd, 1, 6);
      if (!byP.has(p)) byP.set(p, allOrdered(p).map((s) => toTree(p, s)));
      const trees = byP.get(p)!;
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 40)));
      const model = randomPairwise(p, rnd, { copyAll: rnd() < 0.2, real: trial % 3 === 2 });
      const brute = bruteForce(sizes, model, trees);
      const best = optimalPairwiseTree(sizes, model);
      expect(best.time).toBe(Math.min(...brute));
      expect(best.root).toBe(brute.indexOf(Math.min(...brute)));
      expect(evaluate(best.tree, sizes, model).time).toBe(best.time);
      expect(isOrdered(best.tree)).toBe(true);
      for (let r = 0; r < p; r++) {
        const t = optimalPairwiseTree(sizes, model, { root: r });
        expect(t.root).toBe(r);
        expect(t.time).toBe(brute[r]);
        expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
        expect(isOrdered(t.tree)).toBe(true);
      }
    }
  });

  it('hierarchical models: equals brute force', () => {
    const rnd = rng(32);
    const trees = allOrdered(6).map((s) => toTree(6, s));
    for (let trial = 0; trial < 8; trial++) {
      const sizes = Array.from({ length: 6 }, () => int(rnd, 0, 50));
      const model = hierarchicalModel({
        nodeOf: [0, 0, 1, 1, 2, 2].map((x) => (trial % 2 === 0 ? x : 2 - x)),
        intra: { alpha: int(rnd, 0, 5), beta: 1 },
        inter: { alpha: int(rnd, 10, 100), beta: int(rnd, 1, 4) },
        gamma: int(rnd, 0, 2),
      });
      const brute = bruteForce(sizes, model, trees);
      const t = optimalPairwiseTree(sizes, model);
      expect(t.time).toBe(Math.min(...brute));
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
    }
  });

  it('with uniform matrices equals the homogeneous optimalTree (exact mode), every root', () => {
    const rnd = rng(33);
    for (let trial = 0; trial < 12; trial++) {
      const p = int(rnd, 1, 40);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.1 ? 0 : int(rnd, 1, 500)));
      const [alpha, beta, gamma] = [int(rnd, 0, 200), int(rnd, 0, 3), int(rnd, 0, 3)];
      const copyAll = trial % 4 === 3;
      const lin = linearModel({ alpha, beta, gamma, copyAll });
      const uni = uniformPairwise(p, alpha, beta, gamma, copyAll);
      const a = optimalPairwiseTree(sizes, uni);
      const b = optimalTree(sizes, lin, { mode: 'exact' });
      expect(a.time).toBe(b.time);
      expect(optimalPairwiseTree(sizes, lin).time).toBe(b.time); // a linear model through the per-pair DP
      for (const r of new Set([0, Math.floor(p / 2), p - 1, int(rnd, 0, p - 1)])) {
        const x = optimalPairwiseTree(sizes, uni, { root: r });
        expect(x.time).toBe(optimalTree(sizes, lin, { root: r }).time);
        expect(evaluate(x.tree, sizes, uni).time).toBe(x.time);
      }
    }
  });

  it('a larger instance (p = 64) is consistent: DP = evaluate, ordered, no root beats the best', () => {
    const rnd = rng(34);
    const p = 64;
    const sizes = Array.from({ length: p }, () => int(rnd, 1, 1000));
    const model = randomPairwise(p, rnd);
    const best = optimalPairwiseTree(sizes, model);
    expect(evaluate(best.tree, sizes, model).time).toBe(best.time);
    expect(isOrdered(best.tree)).toBe(true);
    for (const r of [0, 31, 63]) {
      const t = optimalPairwiseTree(sizes, model, { root: r });
      expect(t.time).toBeGreaterThanOrEqual(best.time);
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
    }
  });

  it('errors name the field', () => {
    const model = uniformPairwise(3, 1, 1, 1);
    expect(errorField(() => optimalPairwiseTree([], model))).toBe('sizes');
    expect(errorField(() => optimalPairwiseTree([1, 2, Number.NaN], model))).toBe('sizes[2]');
    expect(errorField(() => optimalPairwiseTree([1, 2, 3], model, { root: 3 }))).toBe('root');
    expect(errorField(() => optimalPairwiseTree([1, 2], model))).toBe('model');
    expect(errorField(() => optimalPairwiseTree([1, 2, 3], linearModel({ alpha: 1, beta: 1, ports: 3 })))).toBe('model');
    const p = MAX_PAIRWISE_P + 1;
    expect(() => optimalPairwiseTree(new Array<number>(p).fill(1), uniformPairwise(p, 1, 1, 0))).toThrow(TooLargeError);
    expect(errorField(() => optimalPairwiseTree(new Array<number>(p).fill(1), uniformPairwise(p, 1, 1, 0)))).toBe('p');
  });
});
