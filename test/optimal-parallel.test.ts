/**
 * The two-core crossing kernel (src/trees/optimal/parallel-kernel.ts; Traff17 Theorem 2, §3.2)
 * against the one-core one (src/trees/optimal/crossing-kernel.ts): every Cs cell and choice
 * and every work counter must be identical, so optimalTree's time, root and tree are too.
 * Random instances of every distribution with zero blocks, copyAll and α, β, γ ∈ integers
 * with 0, p from 2 to 3000, several block widths and both block schedules. Also the error
 * path: a worker that throws, exits or never starts gives a DpWorkerError, never a hang.
 * Correctness and work counts only, no wall-clock time.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { blockSizes, DISTRIBUTIONS } from '../src/workloads/distributions.js';
import { linearModel } from '../src/model/cost-model.js';
import { InvalidArgumentError, VcollError } from '../src/errors.js';
import { evaluate } from '../src/trees/evaluate.js';
import { blockWidth, crossingAnyRootTables, crossingEligible, newStats, type CrossingStats } from '../src/trees/optimal/crossing-kernel.js';
import { anyRootTables, sumColumnWork, type DpInput } from '../src/trees/optimal/kernel.js';
import { dpInputOf, optimalTree } from '../src/trees/optimal/homogeneous.js';
import {
  DpWorkerError,
  PARALLEL_MIN_P,
  PARALLEL_MIN_P_TS,
  parallelAnyRootTables,
  twoCoresPay,
  type ParallelAnyRootTables,
  type ParallelOptions,
} from '../src/trees/optimal/parallel-kernel.js';
import type { BuiltTree } from '../src/trees/types.js';
import { int, rng } from './helpers/random.js';

interface Case {
  sizes: number[];
  model: ReturnType<typeof linearModel>;
}

/** A random integer instance: distribution `t mod 12`, some blocks zeroed, α, β, γ with 0, copyAll a quarter of the time. */
function randomCase(rand: () => number, t: number, p: number): Case {
  const dist = DISTRIBUTIONS[t % DISTRIBUTIONS.length];
  const zero = rand() < 0.4 ? 0 : rand() * 0.5;
  const b = int(rand, 1, rand() < 0.5 ? 20 : 1000);
  const sizes = Array.from(blockSizes(dist, { p, b, seed: 100 + t }), (x) => (rand() < zero ? 0 : x));
  const pick = (n: number): number => (rand() < 0.2 ? 0 : int(rand, 0, n));
  return { sizes, model: linearModel({ alpha: pick(rand() < 0.5 ? 10 : 1000), beta: pick(3), gamma: pick(3), copyAll: rand() < 0.25 }) };
}

type Table = Float64Array | Int16Array | Int32Array;

/** Where two tables first differ: −1 if nowhere, −2 if their lengths do. */
const firstDiff = (a: Table, b: Table): number => (a.length === b.length ? a.findIndex((x, q) => x !== b[q]) : -2);

function expectSameTree(a: BuiltTree, b: BuiltTree): void {
  expect([a.time, a.root]).toEqual([b.time, b.root]);
  expect(Array.from(a.tree.parent)).toEqual(Array.from(b.tree.parent));
  expect(a.tree.children).toEqual(b.tree.children);
  expect(Array.from(a.tree.copyAt)).toEqual(Array.from(b.tree.copyAt));
}

/** Two-core tables of `input` with `opts` against the one-core kernel: cells, choices, counters, column split. */
function checkTables(input: DpInput, opts: ParallelOptions, label: string): ParallelAnyRootTables {
  const one = crossingAnyRootTables(input);
  const two = parallelAnyRootTables(input, undefined, opts);
  expect(firstDiff(one.cs, two.cs), `${label}: Cs`).toBe(-1);
  expect(firstDiff(one.choice, two.choice), `${label}: choices`).toBe(-1);
  expect(two.stats, `${label}: work counters`).toEqual(one.stats);
  expect(two.main.columns + two.worker.columns).toBe(input.p);
  if (opts.schedule === 'alternate' && input.p > (opts.width ?? blockWidth(input.p))) expect(two.worker.columns, `${label}: worker's share`).toBeGreaterThan(0);
  return two;
}

describe('two cores = one core, every cell, choice and work counter', () => {
  it('alternating blocks of 1 to 16 columns: every distribution, zero blocks, copyAll, p = 2..3000', () => {
    const rand = rng(21);
    const ps = [2, 3, 4, 5, 7, 9, 13, 20, 33, 64, 100, 150, 257, 400, 613, 900, 1500, 3000];
    const widths = [1, 2, 3, 5, 8, 16];
    const total = newStats();
    ps.forEach((p, t) => {
      const { sizes, model } = randomCase(rand, t, p);
      const input = dpInputOf(sizes, model);
      expect(crossingEligible(input)).toBe(true);
      // narrow blocks synchronize every few cells: keep them to the smaller tables
      const width = p <= 400 ? widths[t % widths.length] : [16, 11, 8][t % 3];
      const { stats } = checkTables(input, { schedule: 'alternate', width }, `p=${p} width=${width} ${DISTRIBUTIONS[t % DISTRIBUTIONS.length]}`);
      for (const k of Object.keys(total) as Array<keyof CrossingStats>) total[k] += stats[k];
    });
    // the instances take every path of the crossing kernel
    for (const k of Object.keys(total) as Array<keyof CrossingStats>) expect(total[k], k).toBeGreaterThan(0);
  });

  it('every distribution at p = 500 and 1000 with blocks of 4 to 15 columns, and the full scan at p = 90', () => {
    const rand = rng(22);
    for (let t = 0; t < DISTRIBUTIONS.length; t++) {
      const p = t % 2 === 0 ? 500 : 1000;
      const { sizes, model } = randomCase(rand, t + 7, p);
      checkTables(dpInputOf(sizes, model), { schedule: 'alternate', width: 4 + t }, `${DISTRIBUTIONS[(t + 7) % DISTRIBUTIONS.length]} p=${p}`);
    }
    const { sizes, model } = randomCase(rand, 3, 90);
    const input = dpInputOf(sizes, model);
    const full = anyRootTables(input, 'exact');
    const two = parallelAnyRootTables(input, undefined, { schedule: 'alternate', width: 3 });
    expect(firstDiff(full.cs, two.cs)).toBe(-1);
    expect(firstDiff(full.choice, two.choice)).toBe(-1);
  });

  it('many ties (equal blocks, β = 0, α = 0) and the dynamic schedule, started together', () => {
    const p = 700;
    for (const prm of [
      { alpha: 3, beta: 0, gamma: 1 },
      { alpha: 0, beta: 1, gamma: 0 },
      { alpha: 0, beta: 0, gamma: 0 },
    ]) {
      const input = dpInputOf(new Array<number>(p).fill(4), linearModel(prm));
      checkTables(input, { schedule: 'alternate', width: 6 }, `equal blocks ${JSON.stringify(prm)}`);
    }
    const rand = rng(23);
    const { sizes, model } = randomCase(rand, 1, 2500);
    const two = checkTables(dpInputOf(sizes, model), { startTogether: true }, 'dynamic, p=2500');
    expect(two.worker.columns).toBeGreaterThan(0);
    expect(two.main.columns).toBeGreaterThan(0);
  });
});

describe('optimalTree: workers 2 = workers 1', () => {
  it('time, root, tree and evaluate(tree).time; tiny p forced to two cores', () => {
    const rand = rng(24);
    for (const [t, p] of [2, 3, 6, 40, 333, 2048].entries()) {
      const { sizes, model } = randomCase(rand, t + 2, p);
      const one = optimalTree(sizes, model, { workers: 1 });
      const two = optimalTree(sizes, model, { workers: 2 });
      expectSameTree(two, one);
      expect(evaluate(two.tree, sizes, model).time).toBe(two.time);
    }
  });

  it('paper mode, fixed root and real costs (one-core kernels) give the same trees with workers: 2', () => {
    const rand = rng(25);
    const { sizes, model } = randomCase(rand, 5, 120);
    for (const opts of [{ mode: 'paper' as const }, { root: 17 }, { root: 60, mode: 'paper' as const }]) {
      expectSameTree(optimalTree(sizes, model, { ...opts, workers: 2 }), optimalTree(sizes, model, { ...opts, workers: 1 }));
    }
    const real = linearModel({ alpha: 10.5, beta: 0.75, gamma: 0.25 });
    expectSameTree(optimalTree(sizes, real, { workers: 2 }), optimalTree(sizes, real, { workers: 1 }));
  });

  it('progress is monotone and ends at the total work', () => {
    const rand = rng(26);
    const p = 1000;
    const { sizes, model } = randomCase(rand, 1, p);
    const seen: number[] = [];
    optimalTree(sizes, model, { workers: 2, onProgress: (done, total) => seen.push(done / total) });
    expect(seen.length).toBeGreaterThan(1);
    for (let q = 1; q < seen.length; q++) expect(seen[q]).toBeGreaterThanOrEqual(seen[q - 1]);
    expect(seen[seen.length - 1]).toBe(1);
    expect(sumColumnWork(p, 0)).toBeGreaterThan(0);
  });

  it('two cores by default only from PARALLEL_MIN_P ranks on (PARALLEL_MIN_P_TS from the sources); workers must be 1 or 2', () => {
    expect(PARALLEL_MIN_P_TS).toBeGreaterThanOrEqual(PARALLEL_MIN_P);
    expect(twoCoresPay(PARALLEL_MIN_P_TS - 1)).toBe(false);
    expect(twoCoresPay(PARALLEL_MIN_P_TS)).toBe(availableParallelism() >= 2);
    const model = linearModel({ alpha: 1, beta: 1 });
    expect(() => optimalTree([1, 2, 3], model, { workers: 3 as 2 })).toThrow(InvalidArgumentError);
    expect(() => optimalTree([1, 2, 3], model, { workers: 0 as 1 })).toThrow(/workers/);
  });
});

describe('a failing worker gives a typed error, never a hang', () => {
  const input = dpInputOf(
    blockSizes('random', { p: 400, b: 100, seed: 3 }),
    linearModel({ alpha: 100, beta: 1, gamma: 1 }),
  );

  /** The DpWorkerError `f` throws. */
  function workerError(f: () => unknown): DpWorkerError {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(DpWorkerError);
      expect(e).toBeInstanceOf(VcollError);
      expect((e as DpWorkerError).code).toBe('INTERNAL');
      return e as DpWorkerError;
    }
    throw new Error('expected a DpWorkerError');
  }

  it('an exception in the worker comes back as the cause', () => {
    for (const failAtColumn of [8, 8 * 25 + 3]) {
      const e = workerError(() => parallelAnyRootTables(input, undefined, { schedule: 'alternate', width: 8, hooks: { failAtColumn } }));
      expect(e.reason).toBe('failed');
      expect(e.message).toMatch(/worker thread .* failed .*test hook/);
      expect((e.cause as Error).message).toContain(`fails at column ${failAtColumn}`);
    }
  });

  it('a worker that exits is reported', () => {
    const e = workerError(() =>
      parallelAnyRootTables(input, undefined, { schedule: 'alternate', width: 8, stallMs: 5000, hooks: { exitAtColumn: 40 } }),
    );
    expect(e.reason).toBe('failed');
    expect(e.message).toMatch(/exited with code 1/);
  });

  it('a worker that never starts: the calling thread does the work (dynamic), or a stall error (alternate)', () => {
    const one = crossingAnyRootTables(input);
    const alone = parallelAnyRootTables(input, undefined, { hooks: { neverStart: true } });
    expect(alone.worker.columns).toBe(0);
    expect(firstDiff(one.cs, alone.cs)).toBe(-1);
    expect(alone.stats).toEqual(one.stats);
    const e = workerError(() => parallelAnyRootTables(input, undefined, { schedule: 'alternate', width: 8, stallMs: 300, hooks: { neverStart: true } }));
    expect(e.reason).toBe('stalled');
    expect(e.message).toMatch(/never started/);
  });

  it("an exception on the calling thread (the caller's progress callback) stops the worker and propagates", () => {
    const { sizes, model } = randomCase(rng(27), 1, 600);
    let calls = 0;
    const boom = new Error('progress sink failed');
    expect(() =>
      optimalTree(sizes, model, {
        workers: 2,
        onProgress: () => {
          if (++calls === 3) throw boom;
        },
      }),
    ).toThrow(boom);
    // and the next run is fine
    const again = optimalTree(sizes, model, { workers: 2 });
    expectSameTree(again, optimalTree(sizes, model, { workers: 1 }));
  });
});
