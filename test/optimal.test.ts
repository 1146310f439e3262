/**
 * Optimal ordered trees (Traff17 Theorem 2) and the exhaustive search they are checked
 * against. The full reproduction of Traff17's six tables (108 DPs at p = 2000, several
 * minutes) runs with VCOLL_BIG=1; by default the Table 1 γ = 0 Increasing row, where the
 * exact and paper modes differ.
 */
import { describe, expect, it } from 'vitest';
import { blockSizes, DETERMINISTIC, DISTRIBUTIONS, parseDistribution } from '../src/workloads/distributions.js';
import { TooLargeError, VcollError } from '../src/errors.js';
import { hierarchicalModel, linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { BRUTE_FORCE_MAX_P, bruteForceOrderedOptimal, orderedTrees } from '../src/trees/brute-force.js';
import { evaluate } from '../src/trees/evaluate.js';
import { optimalTree, type OptimalMode } from '../src/trees/optimal/homogeneous.js';
import { isOrdered, TreeBuilder, type Tree } from '../src/trees/tree.js';
import { naiveOptimal } from '../src/trees/optimal/reference.js';
import { invalidField } from './helpers/errors.js';
import { tables, type FixtureRow, type FixtureTable } from './helpers/seed004.js';
import { BIG } from './helpers/big.js';

/** Deterministic generator (LCG) so every failure is reproducible. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Instance {
  sizes: number[];
  prm: { alpha: number; beta: number; gamma: number; copyAll: boolean };
  model: CostModel;
  root: number | undefined;
}

function randomInstance(rand: () => number, p: number, opts: { integer: boolean; gammaZero?: boolean; fixed?: boolean }): Instance {
  const sizes = Array.from({ length: p }, () => (rand() < 0.15 ? 0 : Math.floor(rand() * (opts.integer ? 20 : 2000))));
  const pick = (scale: number): number => (opts.integer ? Math.floor(rand() * scale) : rand() * scale);
  const prm = {
    alpha: pick(opts.integer ? 12 : 500),
    beta: rand() < 0.1 ? 0 : pick(opts.integer ? 3 : 2),
    gamma: opts.gammaZero ? 0 : pick(opts.integer ? 3 : 2),
    copyAll: rand() < 0.25,
  };
  const fixed = opts.fixed ?? rand() < 0.5;
  return { sizes, prm, model: linearModel(prm), root: fixed ? Math.floor(rand() * p) : undefined };
}

function checkBuilt(inst: Instance, mode: OptimalMode): number {
  const r = optimalTree(inst.sizes, inst.model, { root: inst.root, mode });
  expect(isOrdered(r.tree)).toBe(true);
  expect(r.tree.p).toBe(inst.sizes.length);
  expect(r.tree.root).toBe(r.root);
  if (inst.root !== undefined) expect(r.root).toBe(inst.root);
  expect(evaluate(r.tree, inst.sizes, inst.model).time).toBe(r.time);
  expect(evaluate(r.tree, inst.sizes, inst.model, 'scatter').time).toBe(r.time);
  return r.time;
}

describe('optimalTree: reported time equals evaluate(tree)', () => {
  it('random real α, β, γ (γ = 0 and γ > 0), fixed and best root, both modes', () => {
    const rand = rng(1);
    for (let t = 0; t < 120; t++) {
      const p = 1 + Math.floor(rand() * 70);
      const inst = randomInstance(rand, p, { integer: false, gammaZero: t % 2 === 0 });
      const exact = checkBuilt(inst, 'exact');
      const paper = checkBuilt(inst, 'paper');
      expect(exact).toBeLessThanOrEqual(paper);
      if (inst.root !== undefined) expect(paper).toBe(exact);
    }
  });

  it('every distribution at p = 300 (random α, β, γ)', () => {
    const rand = rng(2);
    for (const dist of DISTRIBUTIONS) {
      const sizes = blockSizes(dist, { p: 300, b: 1 + Math.floor(rand() * 500), seed: 7 });
      const prm = { alpha: rand() * 300, beta: rand() * 2, gamma: rand() * 2, copyAll: false };
      const model = linearModel(prm);
      for (const root of [undefined, 0, 150, 299]) {
        const inst = { sizes, prm, model, root };
        expect(checkBuilt(inst, 'exact')).toBeLessThanOrEqual(checkBuilt(inst, 'paper'));
      }
    }
  });
});

describe('optimalTree equals exhaustive search over all ordered trees (p = 1..7)', () => {
  it('integer instances with zero blocks, copyAll sometimes, fixed and best root', () => {
    const rand = rng(3);
    let differ = 0;
    for (let t = 0; t < 700; t++) {
      const p = 1 + (t % 7);
      const inst = randomInstance(rand, p, { integer: true });
      const bf = bruteForceOrderedOptimal(inst.sizes, inst.model, inst.root);
      const dp = optimalTree(inst.sizes, inst.model, { root: inst.root });
      expect(dp.time).toBe(bf.time);
      const paper = optimalTree(inst.sizes, inst.model, { root: inst.root, mode: 'paper' });
      expect(paper.time).toBeGreaterThanOrEqual(bf.time);
      if (paper.time > bf.time) differ++;
    }
    // the paper's restriction (a last-rank root takes one message) does lose sometimes
    expect(differ).toBeGreaterThan(0);
  });

  it('real-valued instances', () => {
    const rand = rng(4);
    for (let t = 0; t < 200; t++) {
      const p = 2 + (t % 6);
      const inst = randomInstance(rand, p, { integer: false });
      const bf = bruteForceOrderedOptimal(inst.sizes, inst.model, inst.root);
      expect(optimalTree(inst.sizes, inst.model, { root: inst.root }).time).toBe(bf.time);
    }
  });

  it('the smallest kind of instance where the paper mode is not optimal', () => {
    // γ = 0: root 2 (the last rank) receives from 1, then from 0: 2 + 2 = 4; the paper's
    // rule lets a last-rank root take one message only, and its best tree takes 5
    const sizes = [1, 1, 2];
    const model = linearModel({ alpha: 1, beta: 1, gamma: 0 });
    const exact = optimalTree(sizes, model);
    expect(exact.time).toBe(4);
    expect(exact.time).toBe(bruteForceOrderedOptimal(sizes, model).time);
    expect(exact.root).toBe(2);
    expect(exact.tree.children[2]).toEqual([1, 0]);
    expect(optimalTree(sizes, model, { mode: 'paper' }).time).toBe(5);
  });
});

describe('optimalTree equals a straightforward implementation of the recurrence', () => {
  it('values and best roots (tie order of docs/MODEL.md), p up to 120, both modes', () => {
    const rand = rng(5);
    for (let t = 0; t < 60; t++) {
      const p = 2 + Math.floor(rand() * 120);
      const inst = randomInstance(rand, p, { integer: t % 2 === 0 });
      for (const mode of ['exact', 'paper'] as const) {
        const dp = optimalTree(inst.sizes, inst.model, { root: inst.root, mode });
        const nv = naiveOptimal(inst.sizes, inst.prm, { root: inst.root, mode });
        expect(dp.time).toBe(nv.time);
        expect(dp.root).toBe(nv.root);
      }
    }
  });

  it('β = 0 and equal blocks (many ties): same roots as the reference', () => {
    for (const p of [5, 16, 33, 64]) {
      for (const prm of [
        { alpha: 3, beta: 0, gamma: 1, copyAll: false },
        { alpha: 1, beta: 1, gamma: 0, copyAll: false },
      ]) {
        const sizes = new Array<number>(p).fill(4);
        for (const mode of ['exact', 'paper'] as const) {
          const dp = optimalTree(sizes, linearModel(prm), { mode });
          const nv = naiveOptimal(sizes, prm, { mode });
          expect([dp.time, dp.root]).toEqual([nv.time, nv.root]);
        }
      }
    }
  });
});

describe('Same distribution: the binomial value ⌈log₂p⌉α + β(p−1)b + γb', () => {
  it.each([2, 3, 5, 8, 13, 64, 100, 257])('p = %i', (p) => {
    for (const [alpha, beta, gamma, b] of [
      [100, 1, 1, 1000],
      [1, 1, 0, 10],
      [1000, 2, 3, 7],
    ]) {
      const model = linearModel({ alpha, beta, gamma });
      const sizes = blockSizes('same', { p, b });
      const expected = Math.ceil(Math.log2(p)) * alpha + beta * (p - 1) * b + gamma * b;
      expect(optimalTree(sizes, model).time).toBe(expected);
      expect(optimalTree(sizes, model, { mode: 'paper' }).time).toBe(expected);
    }
  });
});


/** Cells where the true optimum (exact) beats the paper's best-root number. */
const EXACT_BETTER = new Map<string, number>([
  ['1/0/increasing', 2001999],
  ['2/0/increasing', 2001009],
  ['3/0/increasing', 2011712],
]);

/**
 * Default run (each cell is a p = 2000 DP, several seconds): Table 1 γ = 0, Increasing, where
 * exact and paper differ (paper time and root 1998, exact time, fixed root).
 * VCOLL_BIG=1: every deterministic cell of all six tables (times and best roots).
 */
function selected(t: FixtureTable, row: FixtureRow): boolean {
  if (BIG) return true;
  return t.table === 1 && t.gamma === 0 && row.distribution === 'increasing';
}

describe('Traff17 tables: the optimal column, deterministic rows', () => {
  for (const t of tables) {
    const model = linearModel({ alpha: t.alpha, beta: t.beta, gamma: t.gamma });
    for (const row of t.rows) {
      const dist = parseDistribution(row.distribution);
      if (!DETERMINISTIC.has(dist) || !selected(t, row)) continue;
      const name = `Table ${t.table} (α=${t.alpha}, γ=${t.gamma}) ${row.distribution}`;
      const key = `${t.table}/${t.gamma}/${row.distribution}`;
      const sizes = blockSizes(dist, { p: t.p, b: t.b, rho: t.rho });
      it(`${name}: best root, paper mode = table (time and root); exact mode`, () => {
        const paper = optimalTree(sizes, model, { mode: 'paper' });
        expect(paper.time).toBe(row.best.optimal.time);
        expect(paper.root).toBe(row.best.optimal.root);
        expect(evaluate(paper.tree, sizes, model).time).toBe(paper.time);
        if (BIG || EXACT_BETTER.has(key)) {
          const exact = optimalTree(sizes, model);
          expect(evaluate(exact.tree, sizes, model).time).toBe(exact.time);
          expect(exact.time).toBeLessThanOrEqual(paper.time);
          expect(exact.time).toBe(EXACT_BETTER.get(key) ?? paper.time);
        }
      });
      if (BIG || row.distribution === 'increasing') {
        it(`${name}: fixed root ${t.fixedRoot} = table`, () => {
          const fixed = optimalTree(sizes, model, { root: t.fixedRoot });
          expect(fixed.time).toBe(row.fixed.optimal);
          expect(fixed.root).toBe(t.fixedRoot);
          expect(evaluate(fixed.tree, sizes, model).time).toBe(fixed.time);
        });
      }
    }
  }
});

describe('edge cases', () => {
  const model = linearModel({ alpha: 5, beta: 2, gamma: 3 });
  it('p = 1: no communication; the root copies its block', () => {
    expect(optimalTree([7], model).time).toBe(model.copy(0, 7));
    expect(optimalTree([7], model, { root: 0 }).time).toBe(model.copy(0, 7));
    const all = linearModel({ alpha: 5, beta: 2, gamma: 3, copyAll: true });
    const r = optimalTree([7], all);
    expect(r.time).toBe(21);
    expect(evaluate(r.tree, [7], all).time).toBe(21);
  });

  it('p = 2: the faster of the two one-message trees', () => {
    // root 0 overlaps its copy: max(3·4, 0) + 5 + 2·6 = 29; root 1 copies after: 5 + 2·4 + 3·6 = 31
    const best = optimalTree([4, 6], model);
    expect(best.time).toBe(29);
    expect(best.root).toBe(0);
    expect(optimalTree([4, 6], model, { root: 1 }).time).toBe(31);
    expect(optimalTree([4, 6], model, { mode: 'paper' }).time).toBe(29);
  });

  it('zero-size blocks send no message', () => {
    expect(optimalTree([0, 0, 0, 0], model).time).toBe(0);
    expect(optimalTree([0, 0, 0, 0], model, { root: 2 }).time).toBe(0);
    // only the root's block is non-empty: no message, but a node with children copies its
    // block (evaluate's convention, also for empty children): γ·9
    expect(optimalTree([0, 9, 0], model, { root: 1 }).time).toBe(27);
    // one non-empty block elsewhere: exactly one message of 9
    expect(optimalTree([0, 9, 0, 0], model, { root: 3 }).time).toBe(5 + 18);
    for (const sizes of [
      [0, 5, 0, 0, 3, 0],
      [0, 0, 1],
      [2, 0, 0, 0, 0, 0, 2],
    ]) {
      for (const root of [undefined, 0, sizes.length - 1]) {
        expect(optimalTree(sizes, model, { root }).time).toBe(bruteForceOrderedOptimal(sizes, model, root).time);
      }
    }
  });

  it('accepts typed arrays and an explicit root: undefined', () => {
    const sizes = Float64Array.from([3, 1, 4, 1, 5]);
    expect(optimalTree(sizes, model, { root: undefined }).time).toBe(optimalTree([3, 1, 4, 1, 5], model).time);
  });

  it('onProgress ends at (total, total) and never goes back', () => {
    for (const root of [undefined, 20]) {
      const calls: Array<[number, number]> = [];
      optimalTree(blockSizes('random', { p: 60, b: 10 }), model, { root, onProgress: (d, t) => calls.push([d, t]) });
      expect(calls.length).toBeGreaterThan(1);
      const total = calls[0][1];
      for (let q = 1; q < calls.length; q++) expect(calls[q][0]).toBeGreaterThanOrEqual(calls[q - 1][0]);
      expect(calls[calls.length - 1]).toEqual([total, total]);
    }
  });
});

describe('bad input: typed errors naming the field', () => {
  const model = linearModel({ alpha: 1, beta: 1, gamma: 1 });
  it('sizes', () => {
    expect(invalidField(() => optimalTree([1, -2, 3], model))).toBe('sizes[1]');
    expect(invalidField(() => optimalTree([1, 2.5], model))).toBe('sizes[1]');
    expect(invalidField(() => optimalTree([Number.NaN], model))).toBe('sizes[0]');
    expect(invalidField(() => optimalTree([], model))).toBe('sizes');
    expect(invalidField(() => optimalTree([2 ** 52, 2 ** 52], model))).toBe('sizes');
    expect(invalidField(() => bruteForceOrderedOptimal([1, -1], model))).toBe('sizes[1]');
  });
  it('root', () => {
    expect(invalidField(() => optimalTree([1, 2, 3], model, { root: 3 }))).toBe('root');
    expect(invalidField(() => optimalTree([1, 2, 3], model, { root: -1 }))).toBe('root');
    expect(invalidField(() => optimalTree([1, 2, 3], model, { root: 1.5 }))).toBe('root');
    expect(invalidField(() => bruteForceOrderedOptimal([1, 2], model, 2))).toBe('root');
  });
  it('model: non-homogeneous or k-ported, pointing to the pairwise DP', () => {
    const pw = pairwiseModel({
      alpha: [
        [0, 1],
        [2, 0],
      ],
      beta: [
        [0, 1],
        [1, 0],
      ],
    });
    expect(invalidField(() => optimalTree([1, 2], pw))).toBe('model');
    expect(() => optimalTree([1, 2], pw)).toThrow(/optimalPairwiseTree/);
    const hier = hierarchicalModel({ nodeOf: [0, 0, 1], intra: { alpha: 1, beta: 1 }, inter: { alpha: 9, beta: 2 } });
    expect(invalidField(() => optimalTree([1, 2, 3], hier))).toBe('model');
    expect(invalidField(() => optimalTree([1, 2], linearModel({ alpha: 1, beta: 1, ports: 2 })))).toBe('model');
    // a hierarchical model on one node is homogeneous and accepted
    const one = hierarchicalModel({ nodeOf: [0, 0, 0], intra: { alpha: 1, beta: 1 }, inter: { alpha: 9, beta: 2 } });
    expect(optimalTree([1, 2, 3], one).time).toBe(optimalTree([1, 2, 3], linearModel({ alpha: 1, beta: 1 })).time);
  });
  it('options', () => {
    expect(invalidField(() => optimalTree([1, 2], model, { mode: 'best' as OptimalMode }))).toBe('mode');
    expect(invalidField(() => optimalTree([1, 2], model, { pruning: 'fast' as 'none' }))).toBe('pruning');
    expect(invalidField(() => optimalTree([1, 2], model, { mode: 'paper', pruning: 'monotone' }))).toBe('pruning');
  });
  it('brute force refuses large p', () => {
    expect(() => bruteForceOrderedOptimal(new Array<number>(BRUTE_FORCE_MAX_P + 1).fill(1), model)).toThrow(TooLargeError);
  });
});

describe('exhaustive enumeration of ordered trees', () => {
  const catalan = (n: number): number => (n === 0 ? 1 : (catalan(n - 1) * 2 * (2 * n - 1)) / (n + 1));
  const key = (t: Tree): string => `${t.root}:${JSON.stringify(t.children)}`;

  it('counts 2^(p−1)·Catalan(p−1) distinct ordered trees', () => {
    for (let p = 1; p <= 8; p++) {
      const seen = new Set<string>();
      for (const t of orderedTrees(p)) {
        expect(isOrdered(t)).toBe(true);
        seen.add(key(t));
      }
      expect(seen.size).toBe(2 ** (p - 1) * catalan(p - 1));
    }
  });

  it('equals the ordered trees among all trees with all child orders (p ≤ 5)', () => {
    const permutations = (a: number[]): number[][] =>
      a.length <= 1 ? [a] : a.flatMap((x, q) => permutations([...a.slice(0, q), ...a.slice(q + 1)]).map((rest) => [x, ...rest]));
    for (let p = 1; p <= 5; p++) {
      const all = new Set<string>();
      // every function v -> parent[v] with exactly one fixed point (the root), every child order
      for (let code = 0; code < p ** p; code++) {
        const parent = Array.from({ length: p }, (_, v) => Math.floor(code / p ** v) % p);
        const roots = parent.flatMap((u, v) => (u === v ? [v] : []));
        if (roots.length !== 1) continue;
        const root = roots[0];
        const kids: number[][] = Array.from({ length: p }, () => []);
        for (let v = 0; v < p; v++) if (v !== root) kids[parent[v]].push(v);
        const orders = kids.map((k) => permutations(k));
        const pick = new Array<number>(p).fill(0);
        let more = true;
        while (more) {
          const b = new TreeBuilder(p, root);
          for (let v = 0; v < p; v++) for (const ch of orders[v][pick[v]]) b.addChild(v, ch);
          try {
            const t = b.build();
            if (isOrdered(t)) all.add(key(t));
          } catch (e) {
            if (!(e instanceof VcollError)) throw e; // a cycle: not a tree
          }
          let v = 0;
          while (v < p && ++pick[v] === orders[v].length) pick[v++] = 0;
          more = v < p;
        }
      }
      const gen = new Set<string>();
      for (const t of orderedTrees(p)) gen.add(key(t));
      expect(gen.size).toBe(all.size);
      expect([...gen].sort()).toEqual([...all].sort());
    }
  });
});

describe("pruning: 'monotone' (opt-in heuristic)", () => {
  it('returns a valid ordered tree whose time is its evaluated time, never below the optimum', () => {
    const rand = rng(9);
    for (let t = 0; t < 80; t++) {
      const p = 1 + Math.floor(rand() * 80);
      const inst = randomInstance(rand, p, { integer: t % 2 === 0 });
      const h = optimalTree(inst.sizes, inst.model, { root: inst.root, pruning: 'monotone' });
      expect(isOrdered(h.tree)).toBe(true);
      expect(evaluate(h.tree, inst.sizes, inst.model).time).toBe(h.time);
      expect(h.time).toBeGreaterThanOrEqual(optimalTree(inst.sizes, inst.model, { root: inst.root }).time);
    }
  });

  it('is not exact: a counterexample (docs/optimal-dp.md)', () => {
    const sizes = [2, 6, 7, 4];
    const model = linearModel({ alpha: 1, beta: 1, gamma: 2 });
    const exact = optimalTree(sizes, model);
    expect(exact.time).toBe(bruteForceOrderedOptimal(sizes, model).time);
    expect(optimalTree(sizes, model, { pruning: 'monotone' }).time).toBeGreaterThan(exact.time);
  });
});
