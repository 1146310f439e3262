import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { linearModel, pairwiseModel } from '../src/model/cost-model.js';
import { evaluate } from '../src/trees/evaluate.js';
import { TreeBuilder, isOrdered, postOrder, depths } from '../src/trees/tree.js';
import { VcollError } from '../src/errors.js';
import { randomTree } from './helpers/trees.js';
import { rng } from './helpers/random.js';

describe('evaluate: hand-computed trees', () => {
  const model = linearModel({ alpha: 10, beta: 1, gamma: 2 });

  it('a single rank only copies its block into the result', () => {
    const t = new TreeBuilder(1, 0).build();
    expect(evaluate(t, [5], model).time).toBe(model.copy(0, 5));
    expect(evaluate(t, [0], model).time).toBe(0);
  });

  it('star gathered to rank 0: copy overlaps the first (right) child', () => {
    // children 1 then 2; copy first (γ·m0 = 6), overlapped with nothing to wait for.
    const t = new TreeBuilder(3, 0).addChild(0, 1).addChild(0, 2).build();
    expect(t.copyAt[0]).toBe(0);
    // t = 6; then max(6, 0) + 10 + 4 = 20; then 20 + 10 + 5 = 35
    expect(evaluate(t, [3, 4, 5], model).time).toBe(35);
  });

  it('last rank as root copies after its first (left) child', () => {
    const t = new TreeBuilder(2, 1).addChild(1, 0).build();
    expect(t.copyAt[1]).toBe(1);
    // C = 0 + (10 + 3) + 2*4 = 21
    expect(evaluate(t, [3, 4], model).time).toBe(21);
  });

  it('a chain waits for the subtree to finish', () => {
    // 2 -> 1 -> 0 : C(1) = max(γ m1, 0) + comm(m2) = max(8, 0)... 1's first child 2 is right: copy overlaps
    const t = new TreeBuilder(3, 0).addChild(0, 1).addChild(1, 2).build();
    // C(1) = max(2*4, 0) + 10 + 5 = 23; C(0) = max(2*3, 23) + 10 + 9 = 42
    expect(evaluate(t, [3, 4, 5], model).time).toBe(42);
    expect(Array.from(evaluate(t, [3, 4, 5], model).subtreeSize)).toEqual([12, 9, 5]);
  });

  it('zero-size transfers cost nothing', () => {
    const t = new TreeBuilder(3, 1).addChild(1, 0).addChild(1, 2).build();
    // child 0 has size 0: no message. C = 0 (+0) then copy 2*4 = 8, then 8 + 10 + 5 = 23
    expect(evaluate(t, [0, 4, 5], model).time).toBe(23);
  });

  it('copyAll (seed 000 Lemma 4) charges leaves for their copy', () => {
    const m = linearModel({ alpha: 10, beta: 1, gamma: 1, copyAll: true });
    const t = new TreeBuilder(2, 0).addChild(0, 1).build();
    // leaf copies 4, root copy 3 overlaps: max(3, 4) + 14 = 18
    expect(evaluate(t, [3, 4], m).time).toBe(18);
  });

  it('two ports receive two subtrees at once', () => {
    const m2 = linearModel({ alpha: 10, beta: 1, gamma: 0, ports: 2 });
    const t = new TreeBuilder(3, 0).addChild(0, 1).addChild(0, 2).build();
    expect(evaluate(t, [0, 5, 5], m2).time).toBe(15);
    expect(evaluate(t, [0, 5, 5], linearModel({ alpha: 10, beta: 1 })).time).toBe(30);
  });

  it('pairwise model uses the (child, parent) cost for gather and (parent, child) for scatter', () => {
    const a = [
      [0, 1],
      [100, 0],
    ];
    const b = [
      [0, 0],
      [0, 0],
    ];
    const m = pairwiseModel({ alpha: a, beta: b });
    const t = new TreeBuilder(2, 0).addChild(0, 1).build();
    expect(evaluate(t, [1, 1], m, 'gather').time).toBe(100);
    expect(evaluate(t, [1, 1], m, 'scatter').time).toBe(1);
  });

  it('rejects a mismatched size vector and a model of another size', () => {
    const t = new TreeBuilder(2, 0).addChild(0, 1).build();
    expect(() => evaluate(t, [1, 2, 3], model)).toThrow(/sizes/);
    const m = pairwiseModel({ alpha: [[0]], beta: [[0]] });
    expect(() => evaluate(t, [1, 2], m)).toThrow(/model/);
    expect(() => evaluate(t, [1, 2], pairwiseModel({ alpha: [[0, 1], [1, 0]], beta: [[0, 1], [1, 0]] }))).not.toThrow();
  });
});

describe('evaluate: properties', () => {
  it('one-ported gather and scatter have the same completion time on any tree', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 40, maxLength: 40 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 5 }),
        (p, seed, raw, alpha, beta, gamma) => {
          const rnd = rng(seed);
          const root = Math.floor(rnd() * p);
          const t = randomTree(p, root, rnd);
          const sizes = raw.slice(0, p);
          const model = linearModel({ alpha, beta, gamma });
          expect(evaluate(t, sizes, model, 'scatter').time).toBe(evaluate(t, sizes, model, 'gather').time);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('completion time is at least the root\'s one-ported receive volume', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), fc.integer({ min: 0, max: 1e6 }), (p, seed) => {
        const rnd = rng(seed);
        const t = randomTree(p, 0, rnd);
        const sizes = Array.from({ length: p }, () => Math.floor(rnd() * 50));
        const model = linearModel({ alpha: 3, beta: 2, gamma: 1 });
        const ev = evaluate(t, sizes, model);
        const lower = t.children[0].reduce((s, c) => s + model.comm(c, 0, ev.subtreeSize[c]), 0);
        expect(ev.time).toBeGreaterThanOrEqual(lower);
        expect(ev.subtreeSize[0]).toBe(sizes.reduce((a, x) => a + x, 0));
      }),
      { numRuns: 200 },
    );
  });

  it('handles a chain of 100000 ranks without recursion', () => {
    const p = 100_000;
    const b = new TreeBuilder(p, 0);
    for (let v = 1; v < p; v++) b.addChild(v - 1, v);
    const t = b.build();
    expect(isOrdered(t)).toBe(true);
    expect(depths(t)[p - 1]).toBe(p - 1);
    const ev = evaluate(t, new Array(p).fill(1), linearModel({ alpha: 1, beta: 0, gamma: 0 }));
    expect(ev.time).toBe(p - 1);
  });
});

describe('tree structure checks', () => {
  it('detects ordered and non-ordered trees', () => {
    const ordered = new TreeBuilder(4, 1).addChild(1, 2).addChild(2, 3).addChild(1, 0).build();
    expect(isOrdered(ordered)).toBe(true);
    const jump = new TreeBuilder(3, 0).addChild(0, 2).addChild(0, 1).build();
    expect(isOrdered(jump)).toBe(false);
  });

  it('refuses incomplete trees and double parents', () => {
    expect(() => new TreeBuilder(3, 0).addChild(0, 1).build()).toThrow(VcollError);
    expect(() => new TreeBuilder(3, 0).addChild(0, 1).addChild(2, 1)).toThrow(/already has a parent/);
    expect(() => new TreeBuilder(3, 3)).toThrow(/root/);
    expect(() => new TreeBuilder(0, 0)).toThrow(/p/);
  });

  it('postOrder lists children before parents', () => {
    const t = randomTree(50, 7, rng(3));
    const order = postOrder(t);
    const pos = new Int32Array(50);
    order.forEach((v, i) => (pos[v] = i));
    for (let v = 0; v < 50; v++) if (t.parent[v] >= 0) expect(pos[v]).toBeLessThan(pos[t.parent[v]]);
  });
});
