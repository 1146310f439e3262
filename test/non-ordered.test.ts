import { describe, expect, it } from 'vitest';
import { TooLargeError } from '../src/errors.js';
import { blockSizes } from '../src/workloads/distributions.js';
import { linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { adaptiveBinomialTree } from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import {
  decreasingRerankTree,
  exactNonOrderedOptimal,
  EXACT_NON_ORDERED_MAX_P,
  permutedModel,
} from '../src/trees/non-ordered.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { isOrdered, postOrder, TreeBuilder, type Tree } from '../src/trees/tree.js';
import { rng, int } from './helpers/random.js';
import { invalidField } from './helpers/errors.js';


function permutations<T>(a: readonly T[]): T[][] {
  if (a.length <= 1) return [[...a]];
  const out: T[][] = [];
  a.forEach((x, i) => {
    for (const rest of permutations([...a.slice(0, i), ...a.slice(i + 1)])) out.push([x, ...rest]);
  });
  return out;
}

/** Minimum completion time over every tree (parents, child orders, copy positions) rooted at r. */
function bruteForce(sizes: number[], model: CostModel, r: number): number {
  const p = sizes.length;
  let best = Infinity;
  const parent = new Array<number>(p).fill(-1);
  const others = Array.from({ length: p }, (_, i) => i).filter((i) => i !== r);
  const tryShapes = (): void => {
    // reject cycles: every node must reach r
    for (const v of others) {
      let x = v;
      for (let steps = 0; x !== r; steps++) {
        if (steps > p) return;
        x = parent[x];
      }
    }
    const kids: number[][] = Array.from({ length: p }, () => []);
    for (const v of others) kids[parent[v]].push(v);
    const options = kids.map((k) => permutations(k).flatMap((order) => Array.from({ length: k.length + 1 }, (_, c) => ({ order, c }))));
    const choice = new Array<{ order: number[]; c: number }>(p);
    const rec = (v: number): void => {
      if (v === p) {
        const b = new TreeBuilder(p, r);
        for (let u = 0; u < p; u++) for (const c of choice[u].order) b.addChild(u, c);
        for (let u = 0; u < p; u++) b.setCopyAt(u, choice[u].c);
        best = Math.min(best, evaluate(b.build(), sizes, model).time);
        return;
      }
      for (const o of options[v]) {
        choice[v] = o;
        rec(v + 1);
      }
    };
    rec(0);
  };
  const assign = (i: number): void => {
    if (i === others.length) return tryShapes();
    for (let q = 0; q < p; q++) {
      if (q === others[i]) continue;
      parent[others[i]] = q;
      assign(i + 1);
    }
  };
  assign(0);
  return best;
}

function isSpanningTree(t: Tree, p: number): boolean {
  return t.p === p && postOrder(t).length === p && t.parent[t.root] === -1;
}

describe('exactNonOrderedOptimal (Traff17 Proposition 2)', () => {
  it('matches a brute force over every tree for p ≤ 4 (and p = 5 on a few instances)', () => {
    const rnd = rng(10);
    for (let it = 0; it < 24; it++) {
      const p = it < 20 ? int(rnd, 1, 4) : 5;
      const sizes = Array.from({ length: p }, () => int(rnd, 0, 12));
      const model =
        it % 3 === 2
          ? pairwiseModel({
              alpha: Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, 0, 9))),
              beta: Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, 1, 3))),
              gamma: Array.from({ length: p }, () => int(rnd, 0, 2)),
              copyAll: it % 2 === 0,
            })
          : linearModel({ alpha: int(rnd, 0, 9), beta: 1, gamma: int(rnd, 0, 2), copyAll: it % 4 === 1 });
      const r = int(rnd, 0, p - 1);
      const ex = exactNonOrderedOptimal(sizes, model, { root: r });
      expect(ex.root).toBe(r);
      expect(ex.time).toBe(bruteForce(sizes, model, r));
      expect(evaluate(ex.tree, sizes, model).time).toBe(ex.time);
    }
  });

  it('≤ the optimal ordered tree (exact mode), best and fixed roots, on random instances; time = evaluate', () => {
    const rnd = rng(11);
    let strict = 0;
    for (let it = 0; it < 80; it++) {
      const p = int(rnd, 1, 8);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.15 ? 0 : int(rnd, 1, 30)));
      const model = linearModel({ alpha: int(rnd, 0, 15), beta: 1, gamma: int(rnd, 0, 1), copyAll: rnd() < 0.2 });
      const ex = exactNonOrderedOptimal(sizes, model);
      const op = optimalTree(sizes, model, { mode: 'exact' });
      expect(ex.time).toBeLessThanOrEqual(op.time);
      if (ex.time < op.time) strict++;
      expect(evaluate(ex.tree, sizes, model).time).toBe(ex.time);
      const r = int(rnd, 0, p - 1);
      const exr = exactNonOrderedOptimal(sizes, model, { root: r });
      expect(exr.time).toBeLessThanOrEqual(optimalTree(sizes, model, { root: r }).time);
      expect(exr.time).toBeGreaterThanOrEqual(ex.time);
      // ... and ≤ every other construction.
      expect(ex.time).toBeLessThanOrEqual(adaptiveBinomialTree(sizes, model).time);
      expect(ex.time).toBeLessThanOrEqual(linearTree(sizes, model).time);
    }
    expect(strict).toBeGreaterThan(0);
  });

  it('best root: ties to the lowest rank', () => {
    const model = linearModel({ alpha: 1, beta: 1, gamma: 0 });
    const ex = exactNonOrderedOptimal([3, 3, 3], model);
    expect(ex.root).toBe(0);
    expect(ex.time).toBe(exactNonOrderedOptimal([3, 3, 3], model, { root: 2 }).time);
  });

  it('named instance: [14, 4, 5, 7], α = 2, β = 1, γ = 0 — non-ordered 20 < ordered 21', () => {
    const sizes = [14, 4, 5, 7];
    const model = linearModel({ alpha: 2, beta: 1, gamma: 0 });
    const ex = exactNonOrderedOptimal(sizes, model);
    const op = optimalTree(sizes, model, { mode: 'exact' });
    expect(ex.time).toBe(20);
    expect(op.time).toBe(21);
    expect(isOrdered(ex.tree)).toBe(false);
    expect(evaluate(ex.tree, sizes, model).time).toBe(20);
  });

  it('named instance: Lemma 2 with the large block in the middle — [1, 1, 100, 1, 1], α = 10, β = γ = 1: 114 < 124', () => {
    const sizes = [1, 1, 100, 1, 1];
    const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const ex = exactNonOrderedOptimal(sizes, model);
    expect([ex.time, ex.root]).toEqual([100 + 10 + 4, 2]); // γl + α + β(p−1)s
    expect(optimalTree(sizes, model).time).toBe(124);
  });

  it('bad input: p > 10 is TooLargeError, k ports rejected, sizes/root named', () => {
    const model = linearModel({ alpha: 1, beta: 1 });
    expect(EXACT_NON_ORDERED_MAX_P).toBe(10);
    const big = () => exactNonOrderedOptimal(new Array(11).fill(1), model);
    expect(big).toThrow(TooLargeError);
    try {
      big();
    } catch (e) {
      expect((e as TooLargeError).field).toBe('p');
    }
    expect(() => exactNonOrderedOptimal(new Array(10).fill(1), model)).not.toThrow();
    expect(invalidField(() => exactNonOrderedOptimal([1, 2], linearModel({ alpha: 1, beta: 1, ports: 2 })))).toBe('model.ports');
    expect(invalidField(() => exactNonOrderedOptimal([1, -2], model))).toBe('sizes[1]');
    expect(invalidField(() => exactNonOrderedOptimal([1, 2], model, { root: 5 }))).toBe('root');
    expect(invalidField(() => decreasingRerankTree([1, 2.5], model))).toBe('sizes[1]');
    expect(invalidField(() => decreasingRerankTree([1, Number.NaN], model))).toBe('sizes[1]');
    expect(invalidField(() => decreasingRerankTree([], model))).toBe('sizes');
    expect(invalidField(() => decreasingRerankTree([1, 2], model, { root: 2 }))).toBe('root');
    expect(invalidField(() => decreasingRerankTree([1, 2], model, { builder: 3 as never }))).toBe('builder');
  });
});

describe('decreasingRerankTree (Traff17 §5.1, heuristic of [19])', () => {
  it('is a valid spanning tree whose time is evaluate(), fixed and free roots, several models', () => {
    const rnd = rng(12);
    for (let it = 0; it < 60; it++) {
      const p = int(rnd, 1, 60);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 500)));
      const mat = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, lo, hi)));
      const model: CostModel =
        it % 2 === 0
          ? linearModel({ alpha: int(rnd, 0, 100), beta: 1, gamma: int(rnd, 0, 1), ports: int(rnd, 1, 3) })
          : pairwiseModel({ alpha: mat(1, 100), beta: mat(1, 3), gamma: 1 });
      const root = rnd() < 0.5 ? undefined : int(rnd, 0, p - 1);
      const t = decreasingRerankTree(sizes, model, { root });
      expect(isSpanningTree(t.tree, p)).toBe(true);
      if (root !== undefined) expect(t.root).toBe(root);
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
    }
  });

  it('re-ranks by decreasing size: the tree over sorted sizes, mapped back (non-ordered)', () => {
    const sizes = [5, 8, 1, 7, 2, 6, 3, 4];
    const model = linearModel({ alpha: 10, beta: 1, gamma: 0 });
    const t = decreasingRerankTree(sizes, model);
    const sorted = adaptiveBinomialTree([8, 7, 6, 5, 4, 3, 2, 1], model);
    const realOf = [1, 3, 5, 0, 7, 6, 4, 2]; // virtual rank → real rank
    expect(t.root).toBe(realOf[sorted.root]);
    expect(t.time).toBe(sorted.time);
    for (let v = 0; v < 8; v++) {
      expect(t.tree.children[realOf[v]]).toEqual(sorted.tree.children[v].map((c) => realOf[c]));
    }
    expect(isOrdered(t.tree)).toBe(false);
    // Fixed root: the root is virtual rank 0, the others follow by decreasing size.
    const f = decreasingRerankTree(sizes, model, { root: 2 });
    const vf = adaptiveBinomialTree([1, 8, 7, 6, 5, 4, 3, 2], model, { root: 0 });
    expect([f.root, f.time]).toEqual([2, vf.time]);
  });

  it('Increasing and Decreasing become the same problem (p = 2000, Traff17 parameters)', () => {
    const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });
    const inc = blockSizes('increasing', { p: 2000, b: 1000 });
    const dec = blockSizes('decreasing', { p: 2000, b: 1000 });
    const ri = decreasingRerankTree(inc, model);
    const rd = decreasingRerankTree(dec, model);
    expect(ri.time).toBe(rd.time);
    expect(ri.time).toBe(2004100); // = the adaptive best root on Decreasing (table 1)
    // Fixed root 1000: the ordered adaptive tree pays for the order (table 1: 2955452 and 2266244).
    const ai = adaptiveBinomialTree(inc, model, { root: 1000 });
    const ad = adaptiveBinomialTree(dec, model, { root: 1000 });
    expect([ai.time, ad.time]).toEqual([2955452, 2266244]);
    const fi = decreasingRerankTree(inc, model, { root: 1000 });
    const fd = decreasingRerankTree(dec, model, { root: 1000 });
    expect(fi.time).toBe(2005096);
    expect(fd.time).toBe(2005097);
    expect(fi.time).toBeLessThan(ai.time);
    expect(fd.time).toBeLessThan(ad.time);
    // γ = 0: Increasing with the best root beats the ordered adaptive tree (2002307, table 1).
    const m0 = linearModel({ alpha: 100, beta: 1, gamma: 0 });
    expect(adaptiveBinomialTree(inc, m0).time).toBe(2002307);
    expect(decreasingRerankTree(inc, m0).time).toBe(2002099);
  });

  it('takes an injected builder (the optimal ordered DP over virtual ranks)', () => {
    const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
    const inc = blockSizes('increasing', { p: 300, b: 1000 });
    const dec = blockSizes('decreasing', { p: 300, b: 1000 });
    const viaOpt = decreasingRerankTree(inc, model, { builder: (s, m, o) => optimalTree(s, m, o) });
    expect(viaOpt.time).toBe(optimalTree(dec, model).time);
    expect(viaOpt.time).toBeLessThanOrEqual(optimalTree(inc, model).time);
    expect(evaluate(viaOpt.tree, inc, model).time).toBe(viaOpt.time);
    const fixed = decreasingRerankTree(inc, model, { root: 150, builder: (s, m, o) => optimalTree(s, m, o) });
    expect(fixed.root).toBe(150);
    expect(evaluate(fixed.tree, inc, model).time).toBe(fixed.time);
  });

  it('permutedModel maps costs to the real ranks', () => {
    const base = pairwiseModel({ alpha: [[0, 1, 2], [3, 0, 4], [5, 6, 0]], beta: [[0, 1, 1], [1, 0, 1], [1, 1, 0]], gamma: [1, 2, 3] });
    const v = permutedModel(base, [2, 0, 1]);
    expect(v.comm(0, 1, 10)).toBe(base.comm(2, 0, 10));
    expect(v.comm(1, 2, 10)).toBe(base.comm(0, 1, 10));
    expect(v.comm(1, 2, 0)).toBe(0);
    expect(v.copy(0, 10)).toBe(base.copy(2, 10));
    expect(v.size).toBe(3);
  });
});
