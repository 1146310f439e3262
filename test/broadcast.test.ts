import { describe, expect, it } from 'vitest';
import { hierarchicalModel, linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { broadcastTime, optimalBroadcastTree } from '../src/trees/broadcast.js';
import { MAX_PAIRWISE_P } from '../src/trees/optimal/pairwise.js';
import { isOrdered, TreeBuilder, type Tree } from '../src/trees/tree.js';
import { rng, int } from './helpers/random.js';
import { randomPairwise, uniformPairwise } from './helpers/models.js';
import { allOrdered, toTree } from './helpers/enumerate.js';
import { errorField } from './helpers/errors.js';


function transpose(p: number, model: CostModel): CostModel {
  // comm(i → j, 1) and comm(i → j, 2) determine α, β of a pairwise model
  const a = Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => (i === j ? 0 : 2 * model.comm(j, i, 1) - model.comm(j, i, 2))));
  const b = Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => (i === j ? 0 : model.comm(j, i, 2) - model.comm(j, i, 1))));
  return pairwiseModel({ alpha: a, beta: b });
}

/** A random tree (not necessarily ordered): a random parent among the earlier ranks of a permutation. */
function randomTree(p: number, rnd: () => number): Tree {
  const perm = Array.from({ length: p }, (_, i) => i);
  for (let i = p - 1; i > 0; i--) {
    const j = int(rnd, 0, i);
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  const b = new TreeBuilder(p, perm[0]);
  for (let i = 1; i < p; i++) b.addChild(perm[int(rnd, 0, i - 1)], perm[i]);
  return b.build();
}

/**
 * Event simulation of a broadcast: every rank, once informed, sends to its children in the
 * reverse of their stored (gather) order, one after the other; the time is the last arrival.
 */
function simulateBroadcast(tree: Tree, m: number, model: CostModel): number {
  const informed = new Float64Array(tree.p);
  const queue = [tree.root];
  let last = 0;
  while (queue.length > 0) {
    const v = queue.shift()!;
    let t = informed[v];
    const kids = tree.children[v];
    for (let l = kids.length - 1; l >= 0; l--) {
      t += model.comm(v, kids[l], m);
      informed[kids[l]] = t;
      last = Math.max(last, t);
      queue.push(kids[l]);
    }
  }
  // a leaf is done when informed; an inner node's subtree finishes later, covered by `last`
  return last;
}


const log2ceil = (p: number): number => {
  let d = 0;
  while (2 ** d < p) d++;
  return d;
};

describe('broadcastTime', () => {
  it('equals an event simulation of the sends (any tree, integer and real costs)', () => {
    const rnd = rng(41);
    for (let trial = 0; trial < 60; trial++) {
      const p = int(rnd, 1, 30);
      const tree = randomTree(p, rnd);
      const m = int(rnd, 0, 20);
      const real = trial % 2 === 1;
      const model = trial % 3 === 0 ? linearModel({ alpha: int(rnd, 0, 9), beta: int(rnd, 0, 3) }) : randomPairwise(p, rnd, { real });
      const t = broadcastTime(tree, m, model);
      const sim = simulateBroadcast(tree, m, model);
      if (real) expect(t).toBeCloseTo(sim, 9);
      else expect(t).toBe(sim);
    }
  });

  it('a reduction over the tree takes the time of a broadcast with the transposed costs', () => {
    const rnd = rng(42);
    for (let trial = 0; trial < 20; trial++) {
      const p = int(rnd, 2, 12);
      const tree = randomTree(p, rnd);
      const model = randomPairwise(p, rnd);
      expect(broadcastTime(tree, 7, model, 'reduction')).toBe(broadcastTime(tree, 7, transpose(p, model), 'broadcast'));
    }
  });

  it('known values: a chain and a star', () => {
    const model = linearModel({ alpha: 10, beta: 2 });
    const chain = new TreeBuilder(4, 0).addChild(0, 1).addChild(1, 2).addChild(2, 3).build();
    expect(broadcastTime(chain, 5, model)).toBe(3 * 20);
    const star = new TreeBuilder(4, 0).addChild(0, 1).addChild(0, 2).addChild(0, 3).build();
    expect(broadcastTime(star, 5, model)).toBe(3 * 20);
    expect(broadcastTime(star, 0, model)).toBe(0); // nothing to send
  });
});

describe('optimalBroadcastTree', () => {
  it('homogeneous: ⌈log₂ p⌉·(α + β·m) for every p up to 300 and every root of small p, ordered', () => {
    const model = linearModel({ alpha: 7, beta: 3 });
    for (let p = 1; p <= 300; p++) {
      const t = optimalBroadcastTree(p, 11, model);
      expect(t.time).toBe(log2ceil(p) * (7 + 3 * 11));
      expect(t.root).toBe(0);
      expect(broadcastTime(t.tree, 11, model)).toBe(t.time);
      expect(isOrdered(t.tree)).toBe(true);
      if (p <= 40) {
        for (let r = 0; r < p; r++) {
          const f = optimalBroadcastTree(p, 11, model, { root: r });
          expect(f.root).toBe(r);
          expect(f.time).toBe(t.time);
          expect(broadcastTime(f.tree, 11, model)).toBe(f.time);
          expect(isOrdered(f.tree)).toBe(true);
        }
      }
    }
    for (const [p, r] of [[2000, 1000], [4097, 4096], [100000, 12345]]) {
      const t = optimalBroadcastTree(p, 1, model, { root: r });
      expect(t.time).toBe(log2ceil(p) * 10);
      expect(broadcastTime(t.tree, 1, model)).toBe(t.time);
    }
    expect(optimalBroadcastTree(9, 0, model).time).toBe(0);
    expect(optimalBroadcastTree(9, 5, linearModel({ alpha: 0, beta: 0 })).time).toBe(0);
  });

  it('the per-pair DP with uniform costs equals the homogeneous construction', () => {
    for (const p of [1, 2, 3, 5, 8, 13, 17, 33]) {
      const uni = uniformPairwise(p, 4, 1);
      const lin = linearModel({ alpha: 4, beta: 1 });
      const a = optimalBroadcastTree(p, 6, uni);
      expect(a.time).toBe(optimalBroadcastTree(p, 6, lin).time);
      expect(a.time).toBe(log2ceil(p) * 10);
      for (const r of new Set([0, p >> 1, p - 1])) expect(optimalBroadcastTree(p, 6, uni, { root: r }).time).toBe(a.time);
    }
  });

  it('per-pair costs: DP = brute force over all ordered trees and = broadcastTime, both operations', () => {
    const rnd = rng(43);
    const byP = new Map<number, Tree[]>();
    for (let trial = 0; trial < 40; trial++) {
      const p = int(rnd, 1, 6);
      if (!byP.has(p)) byP.set(p, allOrdered(p).map((s) => toTree(p, s)));
      const trees = byP.get(p)!;
      const model = randomPairwise(p, rnd, { real: trial % 4 === 3 });
      const m = int(rnd, 1, 9);
      for (const operation of ['broadcast', 'reduction'] as const) {
        const brute = new Float64Array(p).fill(Infinity);
        for (const t of trees) brute[t.root] = Math.min(brute[t.root], broadcastTime(t, m, model, operation));
        const best = optimalBroadcastTree(p, m, model, { operation });
        expect(best.time).toBe(Math.min(...brute));
        expect(best.root).toBe(brute.indexOf(Math.min(...brute)));
        expect(broadcastTime(best.tree, m, model, operation)).toBe(best.time);
        for (let r = 0; r < p; r++) {
          const t = optimalBroadcastTree(p, m, model, { root: r, operation });
          expect(t.time).toBe(brute[r]);
          expect(broadcastTime(t.tree, m, model, operation)).toBe(t.time);
          expect(isOrdered(t.tree)).toBe(true);
        }
      }
    }
  });

  it('hierarchical costs: DP = broadcastTime, never worse than the homogeneous bound with the slow link', () => {
    const p = 24;
    const model = hierarchicalModel({
      nodeOf: Array.from({ length: p }, (_, i) => Math.floor(i / 4)),
      intra: { alpha: 1, beta: 1 },
      inter: { alpha: 50, beta: 2 },
    });
    const t = optimalBroadcastTree(p, 10, model, { root: 5 });
    expect(broadcastTime(t.tree, 10, model)).toBe(t.time);
    expect(t.time).toBeLessThanOrEqual(log2ceil(p) * (50 + 2 * 10));
    expect(t.time).toBeGreaterThanOrEqual(log2ceil(p) * (1 + 10));
  });

  it('errors name the field', () => {
    const lin = linearModel({ alpha: 1, beta: 1 });
    expect(errorField(() => optimalBroadcastTree(0, 1, lin))).toBe('p');
    expect(errorField(() => optimalBroadcastTree(2.5, 1, lin))).toBe('p');
    expect(errorField(() => optimalBroadcastTree(4, -1, lin))).toBe('m');
    expect(errorField(() => optimalBroadcastTree(4, 1.5, lin))).toBe('m');
    expect(errorField(() => optimalBroadcastTree(4, 1, lin, { root: 4 }))).toBe('root');
    expect(errorField(() => optimalBroadcastTree(4, 1, lin, { operation: 'gather' as 'broadcast' }))).toBe('operation');
    expect(errorField(() => optimalBroadcastTree(4, 1, uniformPairwise(3, 1, 1)))).toBe('model');
    expect(errorField(() => optimalBroadcastTree(4, 1, linearModel({ alpha: 1, beta: 1, ports: 2 })))).toBe('model');
    const p = MAX_PAIRWISE_P + 1;
    expect(errorField(() => optimalBroadcastTree(p, 1, uniformPairwise(p, 1, 1)))).toBe('p');
    const tree = new TreeBuilder(3, 0).addChild(0, 1).addChild(0, 2).build();
    expect(errorField(() => broadcastTime(tree, -2, lin))).toBe('m');
    expect(errorField(() => broadcastTime(tree, 1, uniformPairwise(4, 1, 1)))).toBe('model');
    expect(errorField(() => broadcastTime(null as unknown as Tree, 1, lin))).toBe('tree');
    expect(errorField(() => broadcastTime(tree, 1, lin, 'scatter' as 'broadcast'))).toBe('operation');
  });
});
