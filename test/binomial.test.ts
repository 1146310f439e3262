import { describe, expect, it } from 'vitest';
import { blockSizes, DETERMINISTIC, type DistributionName } from '../src/workloads/distributions.js';
import { hierarchicalModel, linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import {
  adaptiveBinomialTree,
  adaptiveRounds,
  naturalRoots,
  obliviousBinomialTree,
  obliviousTreeFor,
  roundsFor,
} from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { depths, isOrdered, type Tree } from '../src/trees/tree.js';
import { rng, int } from './helpers/random.js';
import { tables } from './helpers/seed004.js';
import { invalidField } from './helpers/errors.js';


const ceilLog2 = (p: number): number => roundsFor(p, 1);
const sum = (a: readonly number[]): number => a.reduce((x, y) => x + y, 0);
const maxDepth = (t: Tree): number => Math.max(...depths(t));

describe('Traff17 tables: oblivious and adaptive columns (deterministic rows, all six tables)', () => {
  for (const t of tables) {
    const model = linearModel({ alpha: t.alpha, beta: t.beta, gamma: t.gamma });
    for (const row of t.rows) {
      if (!DETERMINISTIC.has(row.distribution as DistributionName)) continue;
      it(`table ${t.table} α=${t.alpha} γ=${t.gamma} ${row.distribution}`, () => {
        const s = blockSizes(row.distribution as DistributionName, { p: t.p, b: t.b, rho: t.rho });
        const of = obliviousBinomialTree(s, model, { root: t.fixedRoot });
        expect(of.time).toBe(row.fixed.oblivious);
        expect(of.root).toBe(t.fixedRoot);
        const ob = obliviousBinomialTree(s, model);
        expect([ob.time, ob.root]).toEqual([row.best.oblivious.time, row.best.oblivious.root]);
        const af = adaptiveBinomialTree(s, model, { root: t.fixedRoot });
        expect(af.time).toBe(row.fixed.adaptive);
        expect(af.root).toBe(t.fixedRoot);
        const ab = adaptiveBinomialTree(s, model);
        expect([ab.time, ab.root]).toEqual([row.best.adaptive.time, row.best.adaptive.root]);
        for (const b of [of, ob, af, ab]) expect(evaluate(b.tree, s, model).time).toBe(b.time);
      });
    }
  }
});

describe('obliviousBinomialTree', () => {
  it('is the rank-ordered binomial tree: natural root p−1, ordered, depth ⌈log₂p⌉', () => {
    for (const p of [1, 2, 3, 5, 8, 11, 16, 100]) {
      const t = obliviousTreeFor(p, p - 1);
      expect(isOrdered(t)).toBe(true);
      expect(maxDepth(t)).toBe(ceilLog2(p));
      // The tree does not depend on the block sizes.
      const m1 = Array.from({ length: p }, (_, i) => i + 1);
      const m2 = Array.from({ length: p }, (_, i) => (p - i) * 7);
      const model = linearModel({ alpha: 3, beta: 1, gamma: 1 });
      const a = obliviousBinomialTree(m1, model, { root: p - 1 });
      const b = obliviousBinomialTree(m2, model, { root: p - 1 });
      expect(a.tree.parent).toEqual(b.tree.parent);
    }
    // p = 8, root 7: 7 receives from 6, 5, 3 (levels 1, 2, 4).
    expect(obliviousTreeFor(8, 7).children[7]).toEqual([6, 5, 3]);
    // fixed root 0: the range containing 0 always receives.
    expect(obliviousTreeFor(8, 0).children[0]).toEqual([1, 3, 7]);
    expect(obliviousTreeFor(8, 5).children[5]).toEqual([4, 7, 3]);
  });

  it('natural roots are {0, 1, 3, …, 2^j − 1, p − 1}', () => {
    expect(naturalRoots(2000)).toEqual([0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 1999]);
    expect(naturalRoots(8)).toEqual([0, 1, 3, 7]);
    expect(naturalRoots(1)).toEqual([0]);
  });

  it('searchAllRoots finds lower times than the natural roots the paper searched (Increasing)', () => {
    const s = blockSizes('increasing', { p: 2000, b: 1000 });
    const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });
    const natural = obliviousBinomialTree(s, model);
    const all = obliviousBinomialTree(s, model, { searchAllRoots: true });
    expect([natural.time, natural.root]).toEqual([2097228, 1999]); // the table's value
    expect([all.time, all.root]).toEqual([2035788, 1792]);
    expect(evaluate(all.tree, s, model).time).toBe(all.time);
  });

  it('searchAllRoots is the minimum over every fixed root (ties lowest)', () => {
    const rnd = rng(5);
    for (let it = 0; it < 20; it++) {
      const p = int(rnd, 1, 20);
      const s = Array.from({ length: p }, () => int(rnd, 0, 50));
      const model = linearModel({ alpha: int(rnd, 0, 20), beta: 1, gamma: int(rnd, 0, 1) });
      const times = Array.from({ length: p }, (_, r) => obliviousBinomialTree(s, model, { root: r }).time);
      const all = obliviousBinomialTree(s, model, { searchAllRoots: true });
      expect(all.time).toBe(Math.min(...times));
      expect(all.root).toBe(times.indexOf(Math.min(...times)));
      expect(obliviousBinomialTree(s, model).time).toBeGreaterThanOrEqual(all.time);
    }
  });
});

describe('adaptiveBinomialTree: Traff18 Lemmas 1, 2, 4', () => {
  it("Lemma 1 (rule 'lemma1', γ = 0, sizes > 0): time = ⌈log₂p⌉α + βΣ_{i≠r} m_i exactly for p = 2^d, at most that otherwise", () => {
    const rnd = rng(1);
    for (let it = 0; it < 300; it++) {
      const p = it < 150 ? 2 ** int(rnd, 0, 9) : int(rnd, 1, 300);
      const s = Array.from({ length: p }, () => int(rnd, 1, 1000));
      const alpha = int(rnd, 0, 500);
      const beta = int(rnd, 1, 3);
      const model = linearModel({ alpha, beta, gamma: 0 });
      const a = adaptiveBinomialTree(s, model, { rule: 'lemma1' });
      const bound = ceilLog2(p) * alpha + beta * (sum(s) - s[a.root]);
      if ((p & (p - 1)) === 0) expect(a.time).toBe(bound);
      else expect(a.time).toBeLessThanOrEqual(bound);
      expect(evaluate(a.tree, s, model).time).toBe(a.time);
      expect(isOrdered(a.tree)).toBe(true);
      // The default rule joins by exact completion time: never slower than Lemma 1's rule.
      const e = adaptiveBinomialTree(s, model);
      expect(e.time).toBeLessThanOrEqual(a.time);
      expect(evaluate(e.tree, s, model).time).toBe(e.time);
    }
  });

  it('the exact rule is faster than Lemma 1 on [10, 1, 3, 3] but not equal to the formula at its own root', () => {
    const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
    const s = [10, 1, 3, 3];
    const l1 = adaptiveBinomialTree(s, model, { rule: 'lemma1' });
    expect([l1.time, l1.root]).toEqual([2 * 100 + 14, 3]); // [0,1] (t = α+1) sends 11 to 3 (t = α+3)
    const ex = adaptiveBinomialTree(s, model);
    expect([ex.time, ex.root]).toEqual([2 * 100 + 9, 0]); // [2,3] sends 6 to 0; 0 waits for 3
    expect(2 * 100 + (sum(s) - s[0])).toBe(207); // Lemma 1's formula at root 0 is not reached
  });

  it('Lemma 4 (copyAll, γ = β): time = dα + βΣ m_i exactly for p = 2^d, at most that otherwise', () => {
    const rnd = rng(2);
    for (let it = 0; it < 200; it++) {
      const p = it < 100 ? 2 ** int(rnd, 0, 8) : int(rnd, 1, 200);
      const s = Array.from({ length: p }, () => int(rnd, 0, 1000));
      const alpha = int(rnd, 1, 300);
      const beta = int(rnd, 1, 3);
      const model = linearModel({ alpha, beta, gamma: beta, copyAll: true });
      const a = adaptiveBinomialTree(s, model);
      const bound = ceilLog2(p) * alpha + beta * sum(s);
      // Zero-size sends are free, so exactness needs non-empty blocks.
      if ((p & (p - 1)) === 0 && s.every((x) => x > 0)) expect(a.time).toBe(bound);
      else expect(a.time).toBeLessThanOrEqual(bound);
      expect(evaluate(a.tree, s, model).time).toBe(a.time);
      for (let v = 0; v < p; v++) expect(a.tree.copyAt[v]).toBe(0);
    }
  });

  /** Lemma 2's bound for a fixed root r: the root receives H_0, H_1, … (data M_j, roots r_j). */
  function lemma2Bound(s: number[], model: CostModel, r: number, alpha: number, beta: number): number {
    const sched = adaptiveRounds(s, model, { root: r, rule: 'lemma1' });
    let before = 0;
    let penalty = 0;
    let messages = 0;
    for (const round of sched.rounds) {
      for (const j of round) {
        if (j.receiver !== r) continue;
        for (let i = 0; i < j.senders.length; i++) {
          const M = j.senderSizes[i];
          penalty = Math.max(penalty, M - s[j.senders[i]] - before);
          before += M;
          messages++;
        }
      }
    }
    expect(messages).toBeLessThanOrEqual(ceilLog2(s.length));
    return ceilLog2(s.length) * alpha + beta * (sum(s) - s[r]) + beta * penalty;
  }

  it('Lemma 2 (fixed root, γ = 0, sizes > 0): time ≤ Lemma 1 bound + β(M_d′ − m_{r_d′} − Σ_{j<d′} M_j)', () => {
    const rnd = rng(3);
    for (let it = 0; it < 300; it++) {
      const p = int(rnd, 1, 300);
      const s = Array.from({ length: p }, () => (rnd() < 0.1 ? int(rnd, 1000, 20000) : int(rnd, 1, 100)));
      const alpha = int(rnd, 0, 300);
      const beta = int(rnd, 1, 2);
      const model = linearModel({ alpha, beta, gamma: 0 });
      const r = int(rnd, 0, p - 1);
      const l1 = adaptiveBinomialTree(s, model, { root: r, rule: 'lemma1' });
      expect(l1.root).toBe(r);
      expect(l1.time).toBeLessThanOrEqual(lemma2Bound(s, model, r, alpha, beta));
      const ex = adaptiveBinomialTree(s, model, { root: r });
      expect(ex.root).toBe(r);
      expect(ex.time).toBeLessThanOrEqual(l1.time);
      expect(evaluate(ex.tree, s, model).time).toBe(ex.time);
    }
  });

  it('Lemma 2 penalty is attained: [1, 1, 50, 50], root 0', () => {
    const model = linearModel({ alpha: 10, beta: 1, gamma: 0 });
    const s = [1, 1, 50, 50];
    const a = adaptiveBinomialTree(s, model, { root: 0, rule: 'lemma1' });
    // 0 gets m_1 at α+1, then waits for [2,3] (done at α+50) and receives 100.
    expect(a.time).toBe(2 * 10 + 150);
    expect(lemma2Bound(s, model, 0, 10, 1)).toBe(2 * 10 + 101 + (100 - 50 - 1));
  });

  it('with a fixed root the range containing the root always receives', () => {
    const rnd = rng(4);
    for (let it = 0; it < 50; it++) {
      const p = int(rnd, 2, 100);
      const s = Array.from({ length: p }, () => int(rnd, 0, 100));
      const r = int(rnd, 0, p - 1);
      const sched = adaptiveRounds(s, linearModel({ alpha: 5, beta: 1, gamma: 1 }), { root: r });
      for (const round of sched.rounds) for (const j of round) if (r >= j.lo && r <= j.hi) expect(j.receiver).toBe(r);
      expect(sched.root).toBe(r);
    }
  });

  it('h = 1 compares exact model times (copy included), ties to the upper rank', () => {
    // L sends: t_L + comm(m_L) + γ·m_U;  U sends: max(γ·m_L, t_U) + comm(m_U).
    const a = 10;
    const g0 = linearModel({ alpha: a, beta: 1, gamma: 0 });
    expect(adaptiveBinomialTree([6, 5], g0)).toMatchObject({ root: 0, time: a + 5 }); // less data sends
    expect(adaptiveBinomialTree([5, 6], g0)).toMatchObject({ root: 1, time: a + 5 });
    expect(adaptiveBinomialTree([5, 5], g0)).toMatchObject({ root: 1, time: a + 5 }); // tie: upper receives
    // γ = β: both directions cost α + m_L + m_U, so the upper rank receives.
    const g1 = linearModel({ alpha: a, beta: 1, gamma: 1 });
    expect(adaptiveBinomialTree([6, 5], g1)).toMatchObject({ root: 1, time: a + 11 });
    // γ = 2 > β: copying the larger block costs more than sending it; the larger block sends.
    const g2 = linearModel({ alpha: a, beta: 1, gamma: 2 });
    expect(adaptiveBinomialTree([6, 5], g2)).toMatchObject({ root: 1, time: a + 6 + 10 });
    expect(adaptiveBinomialTree([5, 6], g2)).toMatchObject({ root: 0, time: a + 6 + 10 });
  });

  it('a receiver without earlier children: copy convention in the join (p = 3)', () => {
    // [0,1] joins first; rank 2 has no partner at h = 1 and is childless at h = 2.
    const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });
    const s = [1, 1, 100];
    const a = adaptiveBinomialTree(s, model);
    // 2 receives (first child to its left: copy after): (10+1+1) + 10 + 2 + 100 = 124;
    // 1 receives: max(12, 0) + 10 + 100 = 122 → rank 1 is the root.
    expect([a.root, a.time]).toEqual([1, 122]);
    expect(evaluate(a.tree, s, model).time).toBe(122);
  });
});

describe('adaptiveBinomialTree: non-homogeneous models', () => {
  it('free root with two ranks picks the cheaper direction exactly', () => {
    const model = pairwiseModel({ alpha: [[0, 50], [1, 0]], beta: [[0, 1], [1, 0]], gamma: 0 });
    // 0 → 1 costs 50 + 10, 1 → 0 costs 1 + 10: rank 0 receives.
    expect(adaptiveBinomialTree([10, 10], model)).toMatchObject({ root: 0, time: 11 });
  });

  it('time equals evaluate for pairwise and hierarchical models, fixed and free roots, 1–4 ports', () => {
    const rnd = rng(6);
    for (let it = 0; it < 80; it++) {
      const p = int(rnd, 1, 40);
      const s = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 100)));
      const ports = int(rnd, 1, 4);
      const copyAll = rnd() < 0.3;
      const mat = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => int(rnd, lo, hi)));
      const model =
        it % 2 === 0
          ? pairwiseModel({ alpha: mat(1, 100), beta: mat(1, 5), gamma: int(rnd, 0, 2), ports, copyAll })
          : hierarchicalModel({
              nodeOf: Array.from({ length: p }, (_, i) => Math.floor(i / 4)),
              intra: { alpha: 2, beta: 1 },
              inter: { alpha: 50, beta: 3 },
              gamma: 1,
              ports,
              copyAll,
            });
      const root = rnd() < 0.5 ? undefined : int(rnd, 0, p - 1);
      for (const rule of ['exact', 'lemma1'] as const) {
        const a = adaptiveBinomialTree(s, model, { root, rule });
        if (root !== undefined) expect(a.root).toBe(root);
        expect(evaluate(a.tree, s, model).time).toBe(a.time);
        expect(isOrdered(a.tree)).toBe(true);
      }
    }
  });
});

describe('adaptiveBinomialTree: k-ported (⌈log_{k+1} p⌉ rounds)', () => {
  it('rounds, depth, joins of at most k+1 ranges, time = evaluate with k ports', () => {
    const rnd = rng(7);
    for (let it = 0; it < 150; it++) {
      const p = int(rnd, 1, 300);
      const k = int(rnd, 1, 5);
      const s = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 1000)));
      const model = linearModel({ alpha: int(rnd, 0, 200), beta: 1, gamma: int(rnd, 0, 1), ports: k, copyAll: rnd() < 0.2 });
      const root = rnd() < 0.5 ? undefined : int(rnd, 0, p - 1);
      const sched = adaptiveRounds(s, model, { root });
      const expected = p === 1 ? 0 : Math.ceil(Math.log(p) / Math.log(k + 1) - 1e-12);
      expect(sched.rounds.length).toBe(expected);
      expect(roundsFor(p, k)).toBe(expected);
      expect(maxDepth(sched.tree)).toBeLessThanOrEqual(expected);
      expect(sched.tree.children[sched.root].length).toBeLessThanOrEqual(k * expected);
      const seen = new Set<number>();
      for (const round of sched.rounds) {
        for (const j of round) {
          expect(j.senders.length).toBeGreaterThanOrEqual(1);
          expect(j.senders.length).toBeLessThanOrEqual(k);
          for (const x of j.senders) {
            expect(seen.has(x)).toBe(false);
            seen.add(x);
          }
        }
      }
      expect(seen.size).toBe(p - 1);
      expect(evaluate(sched.tree, s, model).time).toBe(sched.time);
      expect(isOrdered(sched.tree)).toBe(true);
      if (root !== undefined) expect(sched.root).toBe(root);
    }
  });

  it('free root: k ports never slower than the one-ported tree (random instances)', () => {
    const rnd = rng(8);
    for (let it = 0; it < 300; it++) {
      const p = int(rnd, 2, 120);
      const s = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 100)));
      const alpha = int(rnd, 0, 50);
      const gamma = int(rnd, 0, 1);
      const k = int(rnd, 2, 4);
      const one = adaptiveBinomialTree(s, linearModel({ alpha, beta: 1, gamma }));
      const many = adaptiveBinomialTree(s, linearModel({ alpha, beta: 1, gamma, ports: k }));
      expect(many.time).toBeLessThanOrEqual(one.time);
    }
  });

  it('fixed root: k ports can be slower (different range structure, Lemma 2 penalty) — named instance', () => {
    const s = [60, 22, 84, 36, 86, 33, 13, 73, 47, 42, 76, 50, 0, 69, 24, 65, 17, 0, 0, 22, 22, 0, 89, 19, 6, 99, 28, 79, 0, 39, 96, 89, 3];
    const one = adaptiveBinomialTree(s, linearModel({ alpha: 34, beta: 1, gamma: 1 }), { root: 28 });
    const two = adaptiveBinomialTree(s, linearModel({ alpha: 34, beta: 1, gamma: 1, ports: 2 }), { root: 28 });
    expect([one.time, two.time]).toEqual([1767, 1800]);
    // Rank 28 receives [0..26] (27 ranks) last in the 3-ary structure and waits for it.
    const free1 = adaptiveBinomialTree(s, linearModel({ alpha: 34, beta: 1, gamma: 1 }));
    const free2 = adaptiveBinomialTree(s, linearModel({ alpha: 34, beta: 1, gamma: 1, ports: 2 }));
    expect(free2.time).toBeLessThan(free1.time);
  });

  it('Traff17 distributions, p = 2000: k = 2, 3 ports faster than one port (fixed root 1000 and free)', () => {
    for (const d of ['same', 'decreasing', 'increasing', 'alternating', 'skewed', 'two-blocks', 'random', 'spikes'] as const) {
      const s = blockSizes(d, { p: 2000, b: 1000, rho: 5, seed: 1 });
      for (const root of [undefined, 1000]) {
        const one = adaptiveBinomialTree(s, linearModel({ alpha: 100, beta: 1, gamma: 1 }), { root }).time;
        for (const k of [2, 3]) {
          const model = linearModel({ alpha: 100, beta: 1, gamma: 1, ports: k });
          const many = adaptiveRounds(s, model, { root });
          expect(many.rounds.length).toBe(k === 2 ? 7 : 6);
          expect(many.time).toBeLessThanOrEqual(one);
        }
      }
    }
  });
});

describe('binomial trees: bad input', () => {
  const model = linearModel({ alpha: 1, beta: 1 });
  it('names the offending field', () => {
    for (const build of [obliviousBinomialTree, adaptiveBinomialTree]) {
      expect(invalidField(() => build([1, -1], model))).toBe('sizes[1]');
      expect(invalidField(() => build([0.5, 1], model))).toBe('sizes[0]');
      expect(invalidField(() => build([1, Number.NaN], model))).toBe('sizes[1]');
      expect(invalidField(() => build([Number.POSITIVE_INFINITY], model))).toBe('sizes[0]');
      expect(invalidField(() => build([], model))).toBe('sizes');
      expect(invalidField(() => build([1, 2, 3], model, { root: 3 }))).toBe('root');
      expect(invalidField(() => build([1, 2, 3], model, { root: Number.NaN }))).toBe('root');
    }
    expect(invalidField(() => adaptiveBinomialTree([1, 2], model, { rule: 'fast' as 'exact' }))).toBe('rule');
    expect(invalidField(() => obliviousBinomialTree([1, 2], model, { searchAllRoots: 1 as unknown as boolean }))).toBe('searchAllRoots');
    expect(invalidField(() => adaptiveRounds([1, 2], pairwiseModel({ alpha: [[0]], beta: [[0]] })))).toBe('model');
  });
});
