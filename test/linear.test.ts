import { describe, expect, it } from 'vitest';
import { blockSizes, DETERMINISTIC, type DistributionName } from '../src/workloads/distributions.js';
import { linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import { rng } from './helpers/random.js';
import { tables } from './helpers/seed004.js';
import { invalidField } from './helpers/errors.js';



function randomPairwise(p: number, rnd: () => number, extra: { ports?: number; copyAll?: boolean } = {}): CostModel {
  const mat = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => lo + Math.floor(rnd() * (hi - lo))));
  return pairwiseModel({ alpha: mat(1, 50), beta: mat(1, 4), gamma: Array.from({ length: p }, () => Math.floor(rnd() * 3)), ...extra });
}

describe('linearTree: Traff17 tables (linear column, deterministic rows)', () => {
  for (const t of tables) {
    const model = linearModel({ alpha: t.alpha, beta: t.beta, gamma: t.gamma });
    for (const row of t.rows) {
      if (!DETERMINISTIC.has(row.distribution as DistributionName)) continue;
      it(`table ${t.table} α=${t.alpha} γ=${t.gamma} ${row.distribution}`, () => {
        const s = blockSizes(row.distribution as DistributionName, { p: t.p, b: t.b, rho: t.rho });
        const fixed = linearTree(s, model, { root: t.fixedRoot });
        expect(fixed.time).toBe(row.fixed.linear);
        expect(fixed.root).toBe(t.fixedRoot);
        const best = linearTree(s, model);
        expect(best.time).toBe(row.best.linear.time);
        expect(best.root).toBe(row.best.linear.root);
      });
    }
  }
});

describe('linearTree: structure and exact time', () => {
  it('is a star: the root receives from every other rank in rank order, copies first', () => {
    const r = linearTree([3, 1, 4, 1, 5], linearModel({ alpha: 10, beta: 1, gamma: 1 }), { root: 2 });
    expect(r.root).toBe(2);
    expect(r.tree.children[2]).toEqual([0, 1, 3, 4]);
    for (const v of [0, 1, 3, 4]) {
      expect(r.tree.parent[v]).toBe(2);
      expect(r.tree.children[v]).toEqual([]);
    }
    expect(r.tree.copyAt[2]).toBe(0);
    // 4 messages + the whole non-root data + the root's copy.
    expect(r.time).toBe(4 * 10 + (3 + 1 + 1 + 5) + 4);
  });

  it('zero-size blocks send nothing', () => {
    const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });
    expect(linearTree([0, 7, 0, 0], model, { root: 0 }).time).toBe(100 + 7);
    expect(linearTree([0, 0, 0], model, { root: 1 }).time).toBe(0);
    expect(linearTree([9], model).time).toBe(9); // p = 1: nothing received; the root copies its block
    expect(linearTree([9], linearModel({ alpha: 1, beta: 1, gamma: 2, copyAll: true })).time).toBe(18);
  });

  it('best root = cheapest, ties to the lowest rank (homogeneous closed form)', () => {
    const model = linearModel({ alpha: 5, beta: 2, gamma: 1 });
    // T(r) = Σ_{i≠r}(α + β m_i) + γ m_r: the largest block is the best root.
    expect(linearTree([1, 9, 3, 9], model).root).toBe(1);
    // γ = β: every root costs the same except for the saved α of a non-empty root block.
    expect(linearTree([4, 4, 4], linearModel({ alpha: 5, beta: 1, gamma: 1 })).root).toBe(0);
    expect(linearTree([0, 0, 3], linearModel({ alpha: 5, beta: 1, gamma: 1 })).root).toBe(2);
  });

  it('best root equals the brute-force minimum and time equals evaluate (many models)', () => {
    const rnd = rng(42);
    for (let it = 0; it < 60; it++) {
      const p = 1 + Math.floor(rnd() * 12);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : Math.floor(rnd() * 40)));
      const kind = it % 4;
      const ports = 1 + (it % 3);
      const model =
        kind === 0
          ? linearModel({ alpha: Math.floor(rnd() * 20), beta: 1, gamma: Math.floor(rnd() * 2) })
          : kind === 1
            ? linearModel({ alpha: 7, beta: 2, gamma: 1, ports, copyAll: rnd() < 0.5 })
            : randomPairwise(p, rnd, { ports, copyAll: kind === 3 });
      let bestT = Infinity;
      let bestR = -1;
      for (let r = 0; r < p; r++) {
        const f = linearTree(sizes, model, { root: r });
        expect(f.root).toBe(r);
        expect(f.time).toBe(evaluate(f.tree, sizes, model, 'gather').time);
        if (f.time < bestT) {
          bestT = f.time;
          bestR = r;
        }
      }
      const best = linearTree(sizes, model);
      expect(best.time).toBe(bestT);
      expect(best.root).toBe(bestR);
      expect(best.time).toBe(evaluate(best.tree, sizes, model).time);
    }
  });
});

describe('linearTree: bad input', () => {
  const model = linearModel({ alpha: 1, beta: 1 });
  it('names the offending field', () => {
    expect(invalidField(() => linearTree([1, -2, 3], model))).toBe('sizes[1]');
    expect(invalidField(() => linearTree([1, 2.5], model))).toBe('sizes[1]');
    expect(invalidField(() => linearTree([Number.NaN], model))).toBe('sizes[0]');
    expect(invalidField(() => linearTree([], model))).toBe('sizes');
    expect(invalidField(() => linearTree([1, 2], model, { root: 2 }))).toBe('root');
    expect(invalidField(() => linearTree([1, 2], model, { root: -1 }))).toBe('root');
    expect(invalidField(() => linearTree([1, 2], model, { root: 0.5 }))).toBe('root');
    const pw = pairwiseModel({ alpha: [[0, 1], [1, 0]], beta: [[0, 1], [1, 0]] });
    expect(invalidField(() => linearTree([1, 2, 3], pw))).toBe('model');
    expect(invalidField(() => linearTree([1, 2, 3], null as unknown as CostModel))).toBe('model');
  });
});
