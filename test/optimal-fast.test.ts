/**
 * The crossing kernel (src/trees/optimal/crossing-kernel.ts) against the full-scan kernels
 * (src/trees/optimal/kernel.ts): every table cell and choice must be identical, so the
 * times, the trees and the reported roots are too. Also checks that its monotonicity
 * fallbacks (scanned cells, partial cells, deque rebuilds) are exercised.
 */
import { describe, expect, it } from 'vitest';
import { blockSizes, DISTRIBUTIONS } from '../src/workloads/distributions.js';
import { linearModel } from '../src/model/cost-model.js';
import { evaluate } from '../src/trees/evaluate.js';
import {
  crossingAnyRootTables,
  crossingEligible,
  crossingFixedRootTables,
  newStats,
  type CrossingStats,
} from '../src/trees/optimal/crossing-kernel.js';
import { anyRootTables, fixedRootTables, type DpInput } from '../src/trees/optimal/kernel.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { naiveOptimal } from '../src/trees/optimal/reference.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Prm {
  alpha: number;
  beta: number;
  gamma: number;
  copyAll: boolean;
}

/** The same DpInput that optimal/homogeneous.ts prepares. */
function dpInput(sizes: ArrayLike<number>, prm: Prm): DpInput {
  const p = sizes.length;
  const m = Float64Array.from(sizes);
  const P = new Float64Array(p + 1);
  for (let i = 0; i < p; i++) P[i + 1] = P[i] + m[i];
  const leaf = new Float64Array(p);
  if (prm.copyAll) for (let i = 0; i < p; i++) leaf[i] = prm.gamma * m[i];
  const nz = new Int32Array(p + 1);
  nz[p] = p;
  for (let i = p - 1; i >= 0; i--) nz[i] = m[i] > 0 ? i : nz[i + 1];
  return { p, m, P, alpha: prm.alpha, beta: prm.beta, gamma: prm.gamma, leaf, nz };
}

function addStats(into: CrossingStats, s: CrossingStats): void {
  for (const k of Object.keys(into) as Array<keyof CrossingStats>) into[k] += s[k];
}

/** First cell where two tables differ, or −1. */
function firstDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  for (let q = 0; q < a.length; q++) if (a[q] !== b[q]) return q;
  return -1;
}

/** Random integer instance: a distribution, some blocks zeroed, integer α, β, γ (0 included). */
function instance(rand: () => number, t: number, pMax: number): { sizes: number[]; prm: Prm } {
  const dist = DISTRIBUTIONS[t % DISTRIBUTIONS.length];
  const p = 2 + Math.floor(rand() * (pMax - 1));
  const zero = rand() < 0.5 ? 0 : rand() * 0.4;
  const b = 1 + Math.floor(rand() * (rand() < 0.5 ? 20 : 1000));
  const sizes = Array.from(blockSizes(dist, { p, b, seed: t }), (x) => (rand() < zero ? 0 : x));
  const pick = (n: number): number => (rand() < 0.2 ? 0 : Math.floor(rand() * n));
  const prm = { alpha: pick(rand() < 0.5 ? 10 : 1000), beta: pick(4), gamma: pick(4), copyAll: rand() < 0.25 };
  return { sizes, prm };
}

describe('crossing kernel = full scan, every cell and choice', () => {
  it('best root: all distributions, zero blocks, copyAll, α, β, γ ∈ integers with 0, p ≤ 300', () => {
    const rand = rng(11);
    const total = newStats();
    for (let t = 0; t < 800; t++) {
      const { sizes, prm } = instance(rand, t, t % 8 === 0 ? 300 : 90);
      const input = dpInput(sizes, prm);
      expect(crossingEligible(input)).toBe(true);
      const full = anyRootTables(input, 'exact');
      const fast = crossingAnyRootTables(input);
      addStats(total, fast.stats);
      const q = firstDiff(full.cs, fast.cs);
      expect(q, `instance ${t}: Cs differs at ${q}`).toBe(-1);
      expect(firstDiff(full.choice, fast.choice), `instance ${t}: choices`).toBe(-1);
    }
    // the fast path carries most cells, and every fallback is taken somewhere
    expect(total.fastCells).toBeGreaterThan(total.cells / 2);
    expect(total.brokenCells).toBeGreaterThan(0);
    expect(total.partialCells).toBeGreaterThan(0);
    expect(total.dequeRebuilds).toBeGreaterThan(0);
    expect(total.scannedSplits).toBeGreaterThan(0);
  });

  it('fixed root (first, last, random): Cs and F, every cell and choice', () => {
    const rand = rng(12);
    const total = newStats();
    for (let t = 0; t < 800; t++) {
      const { sizes, prm } = instance(rand, t, t % 8 === 0 ? 300 : 90);
      const p = sizes.length;
      const r = t % 4 === 0 ? 0 : t % 4 === 1 ? p - 1 : Math.floor(rand() * p);
      const input = dpInput(sizes, prm);
      const full = fixedRootTables(input, r);
      const fast = crossingFixedRootTables(input, r);
      addStats(total, fast.stats);
      expect(firstDiff(full.f, fast.f), `instance ${t}: F`).toBe(-1);
      expect(firstDiff(full.fChoice, fast.fChoice), `instance ${t}: F choices`).toBe(-1);
      expect(firstDiff(full.cs, fast.cs), `instance ${t}: Cs`).toBe(-1);
      expect(firstDiff(full.choice, fast.choice), `instance ${t}: Cs choices`).toBe(-1);
    }
    expect(total.fastCells).toBeGreaterThan(total.cells / 2);
    expect(total.brokenCells).toBeGreaterThan(0);
    expect(total.partialCells).toBeGreaterThan(0);
    expect(total.dequeRebuilds).toBeGreaterThan(0);
  });

  it('many ties: equal blocks, β = 0, α = 0', () => {
    for (const p of [12, 40, 97]) {
      for (const prm of [
        { alpha: 3, beta: 0, gamma: 1, copyAll: false },
        { alpha: 0, beta: 1, gamma: 0, copyAll: false },
        { alpha: 0, beta: 0, gamma: 0, copyAll: false },
        { alpha: 5, beta: 2, gamma: 2, copyAll: true },
      ]) {
        for (const sizes of [new Array<number>(p).fill(4), Array.from({ length: p }, (_, i) => (i % 3 === 0 ? 0 : 2))]) {
          const input = dpInput(sizes, prm);
          const full = anyRootTables(input, 'exact');
          const fast = crossingAnyRootTables(input);
          expect(firstDiff(full.cs, fast.cs)).toBe(-1);
          expect(firstDiff(full.choice, fast.choice)).toBe(-1);
          for (const r of [0, p >> 1, p - 1]) {
            const ff = fixedRootTables(input, r);
            const cf = crossingFixedRootTables(input, r);
            expect(firstDiff(ff.f, cf.f)).toBe(-1);
            expect(firstDiff(ff.fChoice, cf.fChoice)).toBe(-1);
          }
        }
      }
    }
  });
});

describe('optimalTree: crossing (auto) = full scan (kernel: scan) = reference', () => {
  it('time, root, tree, evaluate(tree).time; best and fixed root, both modes', () => {
    const rand = rng(13);
    for (let t = 0; t < 60; t++) {
      const { sizes, prm } = instance(rand, t, 120);
      const model = linearModel(prm);
      const p = sizes.length;
      for (const root of [undefined, Math.floor(rand() * p)]) {
        for (const mode of ['exact', 'paper'] as const) {
          const fast = optimalTree(sizes, model, { root, mode });
          const scan = optimalTree(sizes, model, { root, mode, kernel: 'scan' });
          expect([fast.time, fast.root]).toEqual([scan.time, scan.root]);
          expect(fast.tree.children).toEqual(scan.tree.children);
          expect(evaluate(fast.tree, sizes, model).time).toBe(fast.time);
          if (t % 4 === 0) {
            const nv = naiveOptimal(sizes, prm, { root, mode });
            expect([fast.time, fast.root]).toEqual([nv.time, nv.root]);
          }
        }
      }
    }
  });
});

describe('eligibility: the crossing is used only where it is exact', () => {
  it('integer, non-negative α, β, γ below the 2^53 bound', () => {
    const sizes = [3, 0, 5, 7];
    expect(crossingEligible(dpInput(sizes, { alpha: 100, beta: 1, gamma: 1, copyAll: false }))).toBe(true);
    expect(crossingEligible(dpInput(sizes, { alpha: 0, beta: 0, gamma: 0, copyAll: true }))).toBe(true);
    expect(crossingEligible(dpInput(sizes, { alpha: 0.5, beta: 1, gamma: 1, copyAll: false }))).toBe(false);
    expect(crossingEligible(dpInput(sizes, { alpha: 1, beta: 1.25, gamma: 1, copyAll: false }))).toBe(false);
    expect(crossingEligible(dpInput(sizes, { alpha: 1, beta: 1, gamma: 0.1, copyAll: false }))).toBe(false);
    expect(crossingEligible(dpInput([2 ** 40, 2 ** 40], { alpha: 1, beta: 2 ** 12, gamma: 1, copyAll: false }))).toBe(false);
    expect(crossingEligible(dpInput([2 ** 40, 2 ** 40], { alpha: 1, beta: 1, gamma: 1, copyAll: false }))).toBe(true);
  });

  it('real-valued parameters take the full scan and still equal it', () => {
    const rand = rng(14);
    for (let t = 0; t < 20; t++) {
      const { sizes } = instance(rand, t, 60);
      const prm = { alpha: rand() * 300, beta: rand() * 2, gamma: rand() * 2, copyAll: rand() < 0.3 };
      const model = linearModel(prm);
      const a = optimalTree(sizes, model);
      const b = optimalTree(sizes, model, { kernel: 'scan' });
      expect([a.time, a.root]).toEqual([b.time, b.root]);
    }
  });

  it("rejects an unknown kernel with a typed error naming 'kernel'", () => {
    expect(() => optimalTree([1, 2], linearModel({ alpha: 1, beta: 1 }), { kernel: 'fast' as 'scan' })).toThrow(/kernel/);
  });
});
