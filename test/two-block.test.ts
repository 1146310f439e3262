import { describe, expect, it } from 'vitest';
import { blockSizes } from '../src/workloads/distributions.js';
import { linearModel, pairwiseModel } from '../src/model/cost-model.js';
import { adaptiveBinomialTree } from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { exactNonOrderedOptimal } from '../src/trees/non-ordered.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { postOrder } from '../src/trees/tree.js';
import { twoBlockDomains, twoBlockTree } from '../src/trees/two-block.js';
import { rng, int } from './helpers/random.js';
import { invalidField } from './helpers/errors.js';


/** Edges between ranks of different block sizes. */
function crossEdges(parent: Int32Array, sizes: readonly number[]): number {
  let n = 0;
  for (let v = 0; v < sizes.length; v++) if (parent[v] >= 0 && sizes[parent[v]] !== sizes[v]) n++;
  return n;
}

describe('twoBlockTree: Traff17 Lemma 2', () => {
  it('in the regime γl ≥ T_s: time = γl + α + β(p−1)s = the exact non-ordered optimum, < adaptive', () => {
    const rnd = rng(20);
    for (let it = 0; it < 40; it++) {
      const p = int(rnd, 2, 10);
      const j = int(rnd, 0, p - 1);
      const s = int(rnd, 1, 5);
      const alpha = int(rnd, 1, 20);
      const beta = int(rnd, 1, 2);
      const gamma = int(rnd, 1, beta); // γ ≤ β
      // T_s ≤ ⌈log₂(p−1)⌉α + β(p−2)s + γs; choose l so that γl exceeds it.
      const l = Math.ceil((4 * alpha + beta * p * s + gamma * s) / gamma) + int(rnd, 0, 50);
      const sizes = Array.from({ length: p }, (_, i) => (i === j ? l : s));
      const model = linearModel({ alpha, beta, gamma });
      const t = twoBlockTree(sizes, model);
      const lemma = gamma * l + alpha + beta * (p - 1) * s;
      expect(t.time).toBe(lemma);
      expect(t.root).toBe(j);
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
      expect(exactNonOrderedOptimal(sizes, model).time).toBe(lemma);
      const ad = adaptiveBinomialTree(sizes, model);
      if (p > 2) expect(t.time).toBeLessThan(ad.time);
      // Ordered trees need two messages at the root unless the large block is rank 0
      // (rank p−1 copies only after its first, left, receive in the ordered convention).
      const op = optimalTree(sizes, model);
      if (j === 0 || p === 2) expect(op.time).toBe(lemma);
      else expect(op.time).toBeGreaterThan(lemma);
    }
  });

  it('the root copies first and receives the small domain in one message', () => {
    const sizes = [2, 2, 2, 500, 2, 2, 2, 2];
    const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const t = twoBlockTree(sizes, model);
    expect(t.root).toBe(3);
    expect(t.tree.children[3]).toHaveLength(1);
    expect(t.tree.copyAt[3]).toBe(0);
    expect(t.time).toBe(500 + 10 + 7 * 2);
    // The adaptive binomial tree pays ⌈log₂p⌉ messages at the root.
    expect(adaptiveBinomialTree(sizes, model).time).toBe(500 + 3 * 10 + 7 * 2);
  });

  it('outside the regime it is still a valid tree, ≥ the exact optimum, time = evaluate', () => {
    const rnd = rng(21);
    for (let it = 0; it < 40; it++) {
      const p = int(rnd, 1, 9);
      const s = int(rnd, 0, 20);
      const l = s + int(rnd, 1, 40);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.3 ? l : s));
      const model = linearModel({ alpha: int(rnd, 0, 30), beta: 1, gamma: int(rnd, 0, 1), copyAll: rnd() < 0.2 });
      const root = rnd() < 0.5 ? undefined : int(rnd, 0, p - 1);
      const t = twoBlockTree(sizes, model, { root });
      expect(postOrder(t.tree)).toHaveLength(p);
      if (root !== undefined) expect(t.root).toBe(root);
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
      expect(t.time).toBeGreaterThanOrEqual(exactNonOrderedOptimal(sizes, model, { root }).time);
    }
  });

  it('is two domain gathers plus one transfer (free root), also under per-pair costs and k ports', () => {
    const rnd = rng(22);
    for (let it = 0; it < 30; it++) {
      const p = int(rnd, 2, 80);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.25 ? 5000 : 1));
      if (new Set(sizes).size < 2) sizes[0] = sizes[0] === 1 ? 5000 : 1;
      const mat = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, lo, hi)));
      const model =
        it % 2 === 0
          ? linearModel({ alpha: 100, beta: 1, gamma: 1, ports: int(rnd, 1, 3) })
          : pairwiseModel({ alpha: mat(10, 200), beta: mat(1, 2), gamma: 1 });
      const t = twoBlockTree(sizes, model);
      expect(crossEdges(t.tree.parent, sizes)).toBe(1);
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
    }
  });

  it('Traff17 Spikes and Skewed (p = 500, α = 100, β = 1): against adaptive and optimal ordered trees', () => {
    for (const gamma of [1, 0]) {
      const model = linearModel({ alpha: 100, beta: 1, gamma });
      for (const d of ['spikes', 'skewed'] as const) {
        const s = blockSizes(d, { p: 500, b: 1000, rho: 5, seed: 1 });
        const two = twoBlockTree(s, model);
        const ad = adaptiveBinomialTree(s, model);
        const op = optimalTree(s, model);
        expect(evaluate(two.tree, s, model).time).toBe(two.time);
        // Best root: never worse than the adaptive binomial tree, within one α of the ordered optimum.
        expect(two.time).toBeLessThan(ad.time);
        expect(two.time - op.time).toBe(100);
        // Fixed root 250: TWO beats the adaptive tree.
        const twoF = twoBlockTree(s, model, { root: 250 });
        const adF = adaptiveBinomialTree(s, model, { root: 250 });
        expect(twoF.root).toBe(250);
        expect(evaluate(twoF.tree, s, model).time).toBe(twoF.time);
        expect(twoF.time).toBeLessThan(adF.time);
      }
    }
    // Exact figures for the deterministic Skewed instance (γ = 1).
    const sk = blockSizes('skewed', { p: 500, b: 1000, rho: 5 });
    const m1 = linearModel({ alpha: 100, beta: 1, gamma: 1 });
    expect(twoBlockTree(sk, m1).time).toBe(500895);
    expect(adaptiveBinomialTree(sk, m1).time).toBe(501395);
    expect(optimalTree(sk, m1).time).toBe(500795);
  });

  it('one size only: a single regular (adaptive binomial) gather', () => {
    const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const s = new Array(13).fill(7);
    const t = twoBlockTree(s, model);
    const a = adaptiveBinomialTree(s, model);
    expect([t.time, t.root]).toEqual([a.time, a.root]);
    expect(twoBlockTree(s, model, { root: 4 }).time).toBe(adaptiveBinomialTree(s, model, { root: 4 }).time);
  });

  it('domains', () => {
    expect(twoBlockDomains([3, 9, 3, 9, 9])).toEqual({ small: 3, large: 9, smallRanks: [0, 2], largeRanks: [1, 3, 4] });
    expect(twoBlockDomains([0, 0])).toEqual({ small: 0, large: 0, smallRanks: [0, 1], largeRanks: [] });
  });

  it('bad input: more than two sizes, and the usual field errors', () => {
    const model = linearModel({ alpha: 1, beta: 1 });
    expect(invalidField(() => twoBlockTree([1, 2, 3], model))).toBe('sizes');
    expect(invalidField(() => twoBlockTree(blockSizes('random', { p: 50, b: 10 }), model))).toBe('sizes');
    expect(invalidField(() => twoBlockTree([1, -1], model))).toBe('sizes[1]');
    expect(invalidField(() => twoBlockTree([1, 1.5], model))).toBe('sizes[1]');
    expect(invalidField(() => twoBlockTree([Number.NaN], model))).toBe('sizes[0]');
    expect(invalidField(() => twoBlockTree([], model))).toBe('sizes');
    expect(invalidField(() => twoBlockTree([1, 2], model, { root: 2 }))).toBe('root');
  });
});
