import { describe, expect, it } from 'vitest';
import { TooLargeError } from '../src/errors.js';
import { blockSizes, DETERMINISTIC, type DistributionName } from '../src/workloads/distributions.js';
import { hierarchicalModel, linearModel, type CostModel } from '../src/model/cost-model.js';
import { MAX_PAIRWISE_BINARY_P, optimalBinaryTree, solveBinary } from '../src/trees/optimal/binary.js';
import { evaluate } from '../src/trees/evaluate.js';
import { postOrder, TreeBuilder, type Tree } from '../src/trees/tree.js';
import { rng, int } from './helpers/random.js';
import { randomPairwise, uniformPairwise } from './helpers/models.js';
import { tables } from './helpers/seed004.js';
import { errorField } from './helpers/errors.js';
import { BIG } from './helpers/big.js';





// ---------------------------------------------------------------------------------------
// An independent enumeration of every ordered binary tree (the five shapes of Theorem 3).

interface Sub {
  root: number;
  kids: Sub[];
  copyAt: number;
}

function allBinary(p: number): Sub[] {
  const memo = new Map<number, Sub[]>();
  const go = (i: number, j: number): Sub[] => {
    const key = i * p + j;
    const hit = memo.get(key);
    if (hit) return hit;
    const out: Sub[] = [];
    if (i === j) out.push({ root: i, kids: [], copyAt: 0 });
    else {
      for (const t of go(i + 1, j)) out.push({ root: i, kids: [t], copyAt: 0 });
      for (const t of go(i, j - 1)) out.push({ root: j, kids: [t], copyAt: 1 });
      for (let k = i + 1; k < j; k++) {
        for (const a of go(i + 1, k)) for (const b of go(k + 1, j)) out.push({ root: i, kids: [a, b], copyAt: 0 });
      }
      for (let k = i; k <= j - 2; k++) {
        for (const a of go(i, k)) for (const b of go(k + 1, j - 1)) out.push({ root: j, kids: [a, b], copyAt: 2 });
      }
      for (let r = i + 1; r < j; r++) {
        for (const a of go(i, r - 1)) for (const b of go(r + 1, j)) out.push({ root: r, kids: [a, b], copyAt: 1 });
      }
    }
    memo.set(key, out);
    return out;
  };
  return go(0, p - 1);
}

function toTree(p: number, s: Sub): Tree {
  const b = new TreeBuilder(p, s.root);
  const stack = [s];
  while (stack.length > 0) {
    const v = stack.pop()!;
    for (const c of v.kids) {
      b.addChild(v.root, c.root);
      stack.push(c);
    }
    b.setCopyAt(v.root, v.copyAt);
  }
  return b.build();
}

/** Brute-force optimum per root (Infinity where no tree exists). */
function bruteForce(sizes: number[], model: CostModel): Float64Array {
  const p = sizes.length;
  const best = new Float64Array(p).fill(Infinity);
  for (const s of allBinary(p)) {
    const t = evaluate(toTree(p, s), sizes, model).time;
    if (t < best[s.root]) best[s.root] = t;
  }
  return best;
}

/** Binary, every subtree a consecutive range, the copy between the left and the right children. */
function checkShape(tree: Tree): void {
  const lo = new Int32Array(tree.p);
  const hi = new Int32Array(tree.p);
  for (const v of postOrder(tree)) {
    const kids = tree.children[v];
    expect(kids.length).toBeLessThanOrEqual(2);
    let a = v;
    let b = v;
    for (const c of kids) {
      a = Math.min(a, lo[c]);
      b = Math.max(b, hi[c]);
    }
    const size = 1 + kids.reduce((s, c) => s + hi[c] - lo[c] + 1, 0);
    expect(b - a + 1).toBe(size); // consecutive
    // children in rank order, the copy at v's rank position
    for (let k = 1; k < kids.length; k++) expect(lo[kids[k]]).toBeGreaterThan(hi[kids[k - 1]]);
    expect(tree.copyAt[v]).toBe(kids.filter((c) => c < v).length);
    lo[v] = a;
    hi[v] = b;
  }
}

/** Straightforward O(p³) homogeneous DP (no pruning, no blocking) as a reference. */
function referenceDp(sizes: number[], alpha: number, beta: number, gamma: number): { best: number; perRoot: (r: number) => number } {
  const p = sizes.length;
  const P = [0];
  for (const s of sizes) P.push(P[P.length - 1] + s);
  const c = (i: number, j: number): number => {
    const s = P[j + 1] - P[i];
    return s > 0 ? alpha + beta * s : 0;
  };
  const g = (v: number): number => gamma * sizes[v];
  const B = Array.from({ length: p }, () => new Float64Array(p));
  const cases = (i: number, j: number, root: number): number => {
    let best = Infinity;
    const any = root < 0;
    if (any || root === i) {
      best = Math.min(best, Math.max(g(i), B[i + 1][j]) + c(i + 1, j));
      for (let k = i + 1; k < j; k++) {
        const first = Math.max(g(i), B[i + 1][k]) + c(i + 1, k);
        best = Math.min(best, Math.max(first, B[k + 1][j]) + c(k + 1, j));
      }
    }
    if (any || root === j) {
      best = Math.min(best, B[i][j - 1] + c(i, j - 1) + g(j));
      for (let k = i; k <= j - 2; k++) best = Math.min(best, Math.max(B[i][k] + c(i, k), B[k + 1][j - 1]) + c(k + 1, j - 1) + g(j));
    }
    for (let r = i + 1; r < j; r++) {
      if (any || root === r) best = Math.min(best, Math.max(B[i][r - 1] + c(i, r - 1) + g(r), B[r + 1][j]) + c(r + 1, j));
    }
    return best;
  };
  for (let len = 2; len <= p; len++) for (let i = 0; i + len <= p; i++) B[i][i + len - 1] = cases(i, i + len - 1, -1);
  return { best: B[0][p - 1], perRoot: (r) => (p === 1 ? 0 : cases(0, p - 1, r)) };
}

describe('optimalBinaryTree: small instances against brute force', () => {
  it('enumerates the expected number of shapes', () => {
    // p = 1, 2, 3: 1, 2, 1+1+1+1+ (root 0: [1..2] as 2 trees + two singletons) …
    expect(allBinary(1)).toHaveLength(1);
    expect(allBinary(2)).toHaveLength(2);
    expect(allBinary(3)).toHaveLength(2 + 1 + 2 + 1 + 1); // root 0: 2 one-child + 1 two-child; root 2 mirror; root 1
  });

  it('homogeneous models: DP = brute force for every root, time = evaluate', () => {
    const rnd = rng(11);
    for (let trial = 0; trial < 60; trial++) {
      const p = int(rnd, 1, 7);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 30)));
      const model = linearModel({ alpha: int(rnd, 0, 30), beta: int(rnd, 0, 3), gamma: int(rnd, 0, 5), copyAll: rnd() < 0.2 });
      const brute = bruteForce(sizes, model);
      const best = optimalBinaryTree(sizes, model);
      expect(best.time).toBe(Math.min(...brute));
      expect(best.root).toBe(brute.indexOf(Math.min(...brute))); // smallest best root
      expect(evaluate(best.tree, sizes, model).time).toBe(best.time);
      checkShape(best.tree);
      for (let r = 0; r < p; r++) {
        const t = optimalBinaryTree(sizes, model, { root: r });
        expect(t.root).toBe(r);
        expect(t.tree.root).toBe(r);
        expect(t.time).toBe(brute[r]);
        expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
        expect(evaluate(t.tree, sizes, model, 'scatter').time).toBe(t.time);
        checkShape(t.tree);
      }
    }
  });

  it('non-homogeneous (pairwise) models: DP = brute force for every root, time = evaluate', () => {
    const rnd = rng(12);
    for (let trial = 0; trial < 40; trial++) {
      const p = int(rnd, 1, 6);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 30)));
      const model = randomPairwise(p, rnd, { copyAll: rnd() < 0.2, real: trial % 2 === 1 });
      const brute = bruteForce(sizes, model);
      const best = optimalBinaryTree(sizes, model);
      expect(best.time).toBe(Math.min(...brute));
      expect(evaluate(best.tree, sizes, model).time).toBe(best.time);
      for (let r = 0; r < p; r++) {
        const t = optimalBinaryTree(sizes, model, { root: r });
        expect(t.time).toBe(brute[r]);
        expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
        checkShape(t.tree);
      }
    }
  });

  it('a hierarchical model goes through the per-pair DP and matches brute force', () => {
    const rnd = rng(13);
    for (let trial = 0; trial < 10; trial++) {
      const p = int(rnd, 2, 6);
      const sizes = Array.from({ length: p }, () => int(rnd, 1, 30));
      const model = hierarchicalModel({
        nodeOf: Array.from({ length: p }, (_, i) => Math.floor(i / 2)),
        intra: { alpha: 1, beta: 1 },
        inter: { alpha: 20, beta: 3 },
        gamma: 1,
      });
      const brute = bruteForce(sizes, model);
      const t = optimalBinaryTree(sizes, model);
      expect(t.time).toBe(Math.min(...brute));
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
    }
  });
});

describe('optimalBinaryTree: larger instances', () => {
  it('the pruned, cache-blocked homogeneous DP equals a plain O(p³) DP (p up to 300)', () => {
    const rnd = rng(21);
    const cases: [number, number[]][] = [
      [300, Array.from({ length: 300 }, () => int(rnd, 1, 2000))],
      [270, Array.from({ length: 270 }, (_, i) => (i % 7 === 0 ? 0 : int(rnd, 1, 50)))],
      [97, Array.from({ length: 97 }, (_, i) => (i === 0 || i === 96 ? 5000 : 0))],
      [260, Array.from({ length: 260 }, () => 1000)],
    ];
    for (const [p, sizes] of cases) {
      const [alpha, beta, gamma] = [int(rnd, 0, 500), int(rnd, 0, 2), int(rnd, 0, 2)];
      const model = linearModel({ alpha, beta, gamma });
      const ref = referenceDp(sizes, alpha, beta, gamma);
      const sol = solveBinary(sizes, model);
      const best = sol.best();
      expect(best.time).toBe(ref.best);
      expect(evaluate(best.tree, sizes, model).time).toBe(best.time);
      checkShape(best.tree);
      for (const r of [0, 1, Math.floor(p / 3), Math.floor(p / 2), p - 2, p - 1]) {
        const t = sol.rooted(r);
        expect(t.time).toBe(ref.perRoot(r));
        expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
      }
      // the best root is the smallest one reaching the optimum
      let smallest = -1;
      for (let r = 0; r < p && smallest < 0; r++) if (ref.perRoot(r) === ref.best) smallest = r;
      expect(best.root).toBe(smallest);
    }
  });

  it('non-integer costs: DP = evaluate exactly', () => {
    const rnd = rng(22);
    const p = 150;
    const sizes = Array.from({ length: p }, () => int(rnd, 0, 100));
    const model = linearModel({ alpha: 3.7, beta: 0.13, gamma: 0.071 });
    const sol = solveBinary(sizes, model);
    for (const t of [sol.best(), sol.rooted(0), sol.rooted(77), sol.rooted(p - 1)]) {
      expect(evaluate(t.tree, sizes, model).time).toBe(t.time);
    }
  });

  it('the per-pair DP with uniform matrices equals the homogeneous DP (p = 40)', () => {
    const rnd = rng(23);
    for (let trial = 0; trial < 3; trial++) {
      const p = 40;
      const sizes = Array.from({ length: p }, () => int(rnd, 0, 100));
      const [alpha, beta, gamma] = [int(rnd, 0, 50), int(rnd, 0, 3), int(rnd, 0, 3)];
      const hom = solveBinary(sizes, linearModel({ alpha, beta, gamma }));
      const pair = solveBinary(sizes, uniformPairwise(p, alpha, beta, gamma));
      expect(pair.best().time).toBe(hom.best().time);
      expect(pair.best().root).toBe(hom.best().root);
      for (const r of [0, 5, 20, 39]) expect(pair.rooted(r).time).toBe(hom.rooted(r).time);
    }
  });

  it('reports progress up to the total', () => {
    const calls: [number, number][] = [];
    optimalBinaryTree(blockSizes('random', { p: 100, b: 10 }), linearModel({ alpha: 1, beta: 1, gamma: 1 }), {
      onProgress: (d, t) => calls.push([d, t]),
    });
    expect(calls.length).toBeGreaterThan(1);
    for (let k = 1; k < calls.length; k++) expect(calls[k][0]).toBeGreaterThanOrEqual(calls[k - 1][0]);
    const [done, total] = calls[calls.length - 1];
    expect(done).toBe(total);
    // the per-pair DP reports per range length
    const pairCalls: [number, number][] = [];
    optimalBinaryTree([1, 2, 3, 4, 5], uniformPairwise(5, 1, 1, 1), { onProgress: (d, t) => pairCalls.push([d, t]) });
    expect(pairCalls).toHaveLength(5);
    expect(pairCalls[4][0]).toBe(pairCalls[4][1]);
  });

  it('p = 1 and p = 2', () => {
    const model = linearModel({ alpha: 10, beta: 1, gamma: 2 });
    const one = optimalBinaryTree([5], model);
    expect(one.time).toBe(10); // the lone root copies its block: γ·5
    expect(one.root).toBe(0);
    const copyAll = optimalBinaryTree([5], linearModel({ alpha: 10, beta: 1, gamma: 2, copyAll: true }));
    expect(copyAll.time).toBe(10);
    // root 0: max(2·3, 0) + 10 + 4 = 20; root 1: 0 + 10 + 3 + 2·4 = 21
    expect(optimalBinaryTree([3, 4], model)).toMatchObject({ time: 20, root: 0 });
    expect(optimalBinaryTree([3, 4], model, { root: 1 }).time).toBe(21);
  });
});

describe('optimalBinaryTree: errors', () => {
  const model = linearModel({ alpha: 1, beta: 1, gamma: 1 });
  it('names the offending field', () => {
    expect(errorField(() => optimalBinaryTree([], model))).toBe('sizes');
    expect(errorField(() => optimalBinaryTree([1, -1], model))).toBe('sizes[1]');
    expect(errorField(() => optimalBinaryTree([1, 1.5], model))).toBe('sizes[1]');
    expect(errorField(() => optimalBinaryTree([1, 2, 3], model, { root: 3 }))).toBe('root');
    expect(errorField(() => optimalBinaryTree([1, 2, 3], model, { root: -1 }))).toBe('root');
    expect(errorField(() => optimalBinaryTree([1, 2, 3], model, { root: 0.5 }))).toBe('root');
    expect(errorField(() => optimalBinaryTree([1, 2], linearModel({ alpha: 1, beta: 1, ports: 2 })))).toBe('model');
    expect(errorField(() => optimalBinaryTree([1, 2], uniformPairwise(3, 1, 1, 1)))).toBe('model');
    expect(errorField(() => optimalBinaryTree([1, 2], null as unknown as CostModel))).toBe('model');
    expect(errorField(() => optimalBinaryTree([1, 2], model, { onProgress: 3 as unknown as () => void }))).toBe('onProgress');
    expect(errorField(() => solveBinary([1, 2], model).rooted(2))).toBe('root');
  });
  it('refuses a non-homogeneous p above the limit with TooLargeError(p)', () => {
    const p = MAX_PAIRWISE_BINARY_P + 1;
    const big = uniformPairwise(p, 1, 1, 0);
    expect(() => optimalBinaryTree(new Array<number>(p).fill(1), big)).toThrow(TooLargeError);
    expect(errorField(() => optimalBinaryTree(new Array<number>(p).fill(1), big))).toBe('p');
  });
});

// ---------------------------------------------------------------------------------------
// Traff17 tables, column "Binary": fixed root 1000 and best root, p = 2000.

/** Default run: two distributions with many case-4 nodes and large blocks, plus the cheap two-blocks. */
const DEFAULT_ROWS = new Set(['increasing', 'skewed', 'two-blocks']);

describe('Traff17 tables, binary column (p = 2000)', () => {
  for (const table of tables) {
    const model = linearModel({ alpha: table.alpha, beta: table.beta, gamma: table.gamma });
    for (const row of table.rows) {
      const dist = row.distribution as DistributionName;
      if (!DETERMINISTIC.has(dist)) continue;
      if (!BIG && !DEFAULT_ROWS.has(dist)) continue;
      it(`Table ${table.table} (α=${table.alpha}, γ=${table.gamma}) ${dist}`, () => {
        const sizes = blockSizes(dist, { p: table.p, b: table.b, rho: table.rho });
        const sol = solveBinary(sizes, model);
        const fixed = sol.rooted(table.fixedRoot);
        expect(fixed.time).toBe(row.fixed.binary);
        expect(fixed.root).toBe(table.fixedRoot);
        const best = sol.best();
        expect(best.time).toBe(row.best.binary.time);
        expect(best.root).toBe(row.best.binary.root);
        expect(evaluate(best.tree, sizes, model).time).toBe(best.time);
        expect(evaluate(fixed.tree, sizes, model).time).toBe(fixed.time);
      });
    }
  }
});
