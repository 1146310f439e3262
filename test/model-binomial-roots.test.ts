/**
 * The model-based binomial trees of Dichev10 §2 with the root left to the construction try
 * every root: the per-parent preference orders are computed once (they do not depend on the
 * root), so the search costs O(p²) model predictions instead of O(p³), with the very trees
 * the per-root scan picks. And the size limits of the tree constructions, as a pure function.
 */
import { describe, expect, it } from 'vitest';
import { TooLargeError } from '../src/errors.js';
import { linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { obliviousTreeFor } from '../src/trees/binomial.js';
import { evaluate, type Operation } from '../src/trees/evaluate.js';
import { MODEL_BINOMIAL_PAIRWISE_ROOT_SEARCH_MAX_P, MODEL_BINOMIAL_ROOT_SEARCH_MAX_P, modelBinomialTree, modelBinomialTreeFor, type BinomialMapping } from '../src/trees/model-binomial.js';
import { TRAFF_ROOT_SEARCH_MAX_P } from '../src/trees/model-traff.js';
import { TREE_ALGORITHMS, checkTreeSize, treeLimit } from '../src/trees/registry.js';
import type { Tree } from '../src/trees/tree.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomPairwise(p: number, seed: number, integer = false): CostModel {
  const r = rng(seed);
  const v = (lo: number, w: number): number => (integer ? lo + Math.floor(r() * 3) : lo + r() * w);
  const alpha = Array.from({ length: p }, () => Array.from({ length: p }, () => v(50, 100)));
  const beta = Array.from({ length: p }, () => Array.from({ length: p }, () => v(1, 1)));
  return pairwiseModel({ alpha, beta, gamma: 0.5 });
}

/** Counts the model's predictions. */
function counting(model: CostModel): { model: CostModel; calls: () => number } {
  let n = 0;
  const counted: CostModel = {
    kind: model.kind,
    ports: model.ports,
    copyAll: model.copyAll,
    size: model.size,
    linear: model.linear,
    bounds: model.bounds,
    comm: (f, t, u) => {
      n++;
      return model.comm(f, t, u);
    },
    copy: (v, u) => model.copy(v, u),
  };
  return { model: counted, calls: () => n };
}

/** The search as the module comment states it: every root, each mapping's per-root scan, then the guard. */
function reference(m: number[], model: CostModel, mappings: BinomialMapping[], guard: boolean, op: Operation): { tree: Tree; time: number } {
  let best: { tree: Tree; time: number } | undefined;
  for (let r = 0; r < m.length; r++) {
    const trees = mappings.map((x) => modelBinomialTreeFor(m, model, r, x, op));
    if (guard) trees.push(obliviousTreeFor(m.length, r, model.copyAll));
    for (const tree of trees) {
      const time = evaluate(tree, m, model, op).time;
      if (best === undefined || time < best.time) best = { tree, time };
    }
  }
  return best as { tree: Tree; time: number };
}

describe('model-based binomial trees, every root tried', () => {
  it('costs O(p²) model predictions under a per-pair model (the per-root scan needed O(p³))', () => {
    const p = 120;
    const r = rng(3);
    const sizes = Array.from({ length: p }, () => Math.floor(r() * 100));
    const { model, calls } = counting(randomPairwise(p, 7));
    modelBinomialTree(sizes, model, { mapping: 'best', guard: true });
    // preferences: 2 mappings × p² keys; evaluation: 3 trees × p roots × (p − 1) edges
    expect(calls()).toBeLessThanOrEqual(5 * p * p);
  });

  it('a fixed root still scans: O(p²) predictions per mapping', () => {
    const p = 120;
    const { model, calls } = counting(randomPairwise(p, 8));
    modelBinomialTree(new Array<number>(p).fill(10), model, { root: 5, mapping: 'best', guard: true });
    expect(calls()).toBeLessThanOrEqual(2 * p * p);
  });

  const cases: Array<[string, (p: number, seed: number) => CostModel, (p: number, seed: number) => number[]]> = [
    ['per-pair', (p, s) => randomPairwise(p, s), (p, s) => Array.from({ length: p }, (_, i) => Math.floor(rng(s + i)() * 50))],
    ['per-pair with ties', (p, s) => randomPairwise(p, s, true), (p) => new Array<number>(p).fill(4)],
    ['homogeneous, distinct blocks', () => linearModel({ alpha: 10, beta: 1, gamma: 1 }), (p, s) => Array.from({ length: p }, (_, i) => Math.floor(rng(s * 31 + i)() * 9))],
    ['homogeneous, equal blocks', () => linearModel({ alpha: 10, beta: 1 }), (p) => new Array<number>(p).fill(3)],
  ];
  for (const [name, makeModel, makeSizes] of cases) {
    for (const op of ['gather', 'scatter'] as const) {
      it(`picks the trees of the per-root scan: ${name}, ${op}`, () => {
        for (const p of [1, 2, 3, 7, 16, 33]) {
          for (let seed = 1; seed <= 3; seed++) {
            const model = makeModel(p, seed);
            const m = makeSizes(p, seed);
            for (const [mapping, list, guard] of [
              ['min-first', ['min-first'], false],
              ['max-first', ['max-first'], false],
              ['best', ['min-first', 'max-first'], true],
            ] as const) {
              const got = modelBinomialTree(m, model, { mapping, guard, op });
              const want = reference(m, model, [...list], guard, op);
              expect(got.time).toBe(want.time);
              expect(Array.from(got.tree.parent)).toEqual(Array.from(want.tree.parent));
              expect(got.tree.children).toEqual(want.tree.children);
            }
          }
        }
      });
    }
  }
});

describe('treeLimit / checkTreeSize', () => {
  const lin = linearModel({ alpha: 100, beta: 1 });
  const pw = (p: number): CostModel => randomPairwise(p, 1);

  it('gives the per-pair DP limit for optimal under a per-pair model, before any work', () => {
    expect(treeLimit('optimal', pw(2))).toBe(160);
    expect(treeLimit('optimal', lin)).toBe(20000);
    expect(treeLimit('binary', lin)).toBe(4096);
    expect(treeLimit('binary', pw(2))).toBe(160);
    expect(treeLimit('non-ordered-exact', lin)).toBe(10);
    expect(treeLimit('model-binomial-guarded', pw(2))).toBeUndefined();
    expect(treeLimit('no-such-tree', lin)).toBeUndefined();
    let err: unknown;
    try {
      checkTreeSize('optimal', 3000, pw(2));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TooLargeError);
    expect((err as TooLargeError).field).toBe('p');
    expect((err as Error).message).toMatch(/3000 > 160 .*'optimal'/);
    expect(() => checkTreeSize('optimal', 160, pw(2))).not.toThrow();
    expect(() => checkTreeSize('adaptive', 1e7, lin)).not.toThrow();
  });

  it('choosing the root of a Dichev10 tree (every root tried) is limited: TooLargeError at once, a fixed root is not', () => {
    const cases = [
      ['model-binomial-guarded', MODEL_BINOMIAL_ROOT_SEARCH_MAX_P],
      ['model-binomial-min', MODEL_BINOMIAL_ROOT_SEARCH_MAX_P],
      ['model-traff-guarded', TRAFF_ROOT_SEARCH_MAX_P],
      ['traff', TRAFF_ROOT_SEARCH_MAX_P],
    ] as const;
    for (const [name, limit] of cases) {
      expect(treeLimit(name, lin, { bestRoot: true })).toBe(limit);
      expect(treeLimit(name, lin)).toBeUndefined();
      expect(() => checkTreeSize(name, limit + 1, lin, { bestRoot: true })).toThrow(/choosing its root/);
      const alg = TREE_ALGORITHMS.find((a) => a.name === name);
      const sizes = Array.from({ length: limit + 1 }, (_, i) => (i * 7) % 13);
      expect(() => alg?.build(sizes, lin)).toThrow(TooLargeError);
      expect(alg?.build(sizes, lin, { root: 3 }).root).toBe(3);
    }
    expect(treeLimit('model-binomial-guarded', pw(2), { bestRoot: true })).toBe(MODEL_BINOMIAL_PAIRWISE_ROOT_SEARCH_MAX_P);
    const n = MODEL_BINOMIAL_PAIRWISE_ROOT_SEARCH_MAX_P + 1;
    expect(() => modelBinomialTree(new Array<number>(n).fill(1), pw(n), { mapping: 'best', guard: true })).toThrow(TooLargeError);
    expect(treeLimit('optimal', lin, { bestRoot: true })).toBe(20000);
  });

  for (const alg of TREE_ALGORITHMS) {
    for (const [kind, model] of [
      ['linear', () => lin],
      ['per-pair', pw],
    ] as const) {
      it(`agrees with the builder: ${alg.name}, ${kind}`, () => {
        const limit = treeLimit(alg.name, model(2));
        if (limit === undefined || limit > 5000) return; // no limit, or too large to build here
        const over = new Array<number>(limit + 1).fill(1);
        expect(() => checkTreeSize(alg.name, limit + 1, model(limit + 1))).toThrow(TooLargeError);
        if (alg.name.startsWith('optimal') && alg.name !== 'optimal-pairwise' && kind === 'per-pair') return; // the registry entry wants a homogeneous model
        expect(() => alg.build(over, model(limit + 1))).toThrow(TooLargeError);
      });
    }
  }
});
