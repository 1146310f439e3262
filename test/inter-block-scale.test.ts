/**
 * The scale of `vcoll inter`'s simulated blocks (src/run/inter-block-scale.ts): exact whenever
 * a power of two divides every block within the memory budget, rounded (and said so) otherwise;
 * and runInter's report of it.
 */
import { describe, expect, it } from 'vitest';
import { interBlockScale, realBlockBytes, simulatedSizes } from '../src/run/inter-block-scale.js';
import { runInter } from '../src/run/inter.js';
import { interSetting } from '../src/run/inter-settings.js';

const fill = (n: number, x: number): number[] => new Array<number>(n).fill(x);
const total = (p: number, q: number, a: readonly number[], b: readonly number[]): number =>
  p * b.reduce((s, x) => s + x, 0) + q * a.reduce((s, x) => s + x, 0);

describe('interBlockScale', () => {
  it('no scaling while the logical buffers fit', () => {
    const a = [3, 5, 7];
    const b = [1, 0];
    const r = interBlockScale(a, b, total(3, 2, a, b), 0);
    expect(r).toMatchObject({ scale: 1, blocksExact: true, realA: a, realB: b, realBytes: total(3, 2, a, b) });
  });

  it('the smallest power of two under maxBytes when it divides every block', () => {
    const a = fill(8, 4096);
    const b = fill(4, 1024);
    const logical = total(8, 4, a, b);
    const r = interBlockScale(a, b, logical / 8, 0);
    expect(r.scale).toBe(8);
    expect(r.blocksExact).toBe(true);
    expect(r.realBytes).toBe(logical / 8);
    expect(simulatedSizes(r.realA, r.scale)).toEqual(a);
    expect(simulatedSizes(r.realB, r.scale)).toEqual(b);
  });

  it('never beyond the grain: 64 KiB blocks whose buffers need scale 2^20 are one real byte of 64 KiB each (not 1 MiB)', () => {
    const a = fill(32, 65536);
    const b = fill(32, 65536);
    const r = interBlockScale(a, b, 1, 2 * 32 * 32);
    expect(r).toMatchObject({ scale: 65536, blocksExact: true, realBytes: 2 * 32 * 32 });
    expect(r.realA.every((x) => x === 1)).toBe(true);
  });

  it("two grains (Kang19 setting 3's shape): exact at the smaller grain when the budget holds it, rounded when not", () => {
    const a = fill(25, 65536);
    const b = fill(7, 16384);
    const exactBytes = 25 * 7 * 1 + 7 * 25 * 4;
    const fits = interBlockScale(a, b, 1, exactBytes);
    expect(fits).toMatchObject({ scale: 16384, blocksExact: true, realBytes: exactBytes });
    const tight = interBlockScale(a, b, 1, exactBytes - 1);
    expect(tight.blocksExact).toBe(false);
    expect(tight.scale).toBeGreaterThan(16384);
    expect(tight.realBytes).toBeLessThanOrEqual(exactBytes - 1);
  });

  it('arithmetic sizes: rounded to the nearest multiple (at least one), under the budget, empty blocks stay empty', () => {
    const s = interSetting(6, 1024, 65536);
    const budget = 1024 * 1024;
    const r = interBlockScale(s.sizesA, s.sizesB, 2 ** 20, budget);
    expect(r.blocksExact).toBe(false);
    expect(r.realBytes).toBeLessThanOrEqual(budget);
    // the smallest power of two that fits: half of it would not
    const half = r.scale / 2;
    const halfBytes = total(s.p, s.q, s.sizesA.map((x) => realBlockBytes(x, half)), s.sizesB.map((x) => realBlockBytes(x, half)));
    expect(halfBytes).toBeGreaterThan(budget);
    for (const [x, real] of s.sizesA.map((x, i) => [x, r.realA[i]])) expect(real).toBe(Math.max(1, Math.round(x / r.scale)));
    expect(realBlockBytes(0, 64)).toBe(0);
    expect(realBlockBytes(1, 64)).toBe(1);
    expect(realBlockBytes(96, 64)).toBe(2);
  });
});

describe('runInter reports its scale', () => {
  it('scale 1: exact; a scaled run of equal blocks keeps the transfer terms but says its times are approximate', async () => {
    const unscaled = await runInter({ setting: 1, ranks: 8, size: 4096, alpha: 100, beta: 1, maxBytes: Infinity });
    expect(unscaled).toMatchObject({ scale: 1, exact: true, rounded: false, verified: true });
    const scaled = await runInter({ setting: 1, ranks: 8, size: 4096, alpha: 100, beta: 1, maxBytes: 4096 });
    expect(scaled).toMatchObject({ exact: false, rounded: false, verified: true });
    expect(scaled.scale).toBeGreaterThan(1);
    expect(4096 % scaled.scale).toBe(0);
  });

  it('arithmetic sizes that no scale divides: rounded and verified', async () => {
    const r = await runInter({ setting: 6, ranks: 16, size: 4001, alpha: 100, beta: 1, maxBytes: 4096 });
    expect(r).toMatchObject({ exact: false, rounded: true, verified: true });
  });
});
