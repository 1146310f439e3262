import { describe, expect, it } from 'vitest';
import { DETERMINISTIC, DISTRIBUTIONS, blockSizes, parseDistribution } from '../src/workloads/distributions.js';
import { InvalidArgumentError } from '../src/errors.js';
import { tables } from './helpers/seed004.js';

const sum = (a: number[]): number => a.reduce((s, x) => s + x, 0);

describe('distributions', () => {
  it('deterministic distributions have the problem sizes of Traff17 Table 1 (p = 2000, b = 1000, ρ = 5)', () => {
    for (const row of tables[0].rows) {
      const name = parseDistribution(row.distribution);
      if (!DETERMINISTIC.has(name)) continue;
      expect(sum(blockSizes(name, { p: 2000, b: 1000, rho: 5 })), name).toBe(row.size);
    }
  });

  it('follows the formulas', () => {
    const p = 10;
    const b = 7;
    expect(blockSizes('same', { p, b })).toEqual(new Array(p).fill(7));
    expect(blockSizes('alternating', { p: 4, b })).toEqual([10, 4, 10, 4]);
    expect(blockSizes('decreasing', { p, b })).toEqual(Array.from({ length: p }, (_, i) => Math.floor((2 * b * (p - i)) / p) + 1));
    expect(blockSizes('increasing', { p, b })).toEqual(Array.from({ length: p }, (_, i) => Math.floor((2 * b * (i + 1)) / p) + 1));
    expect(blockSizes('skewed', { p, b, rho: 3 })).toEqual([23, 23, 23, 1, 1, 1, 1, 1, 1, 1]);
    expect(blockSizes('two-blocks', { p, b })).toEqual([35, 0, 0, 0, 0, 0, 0, 0, 0, 35]);
    expect(blockSizes('two-blocks-small', { p, b })).toEqual([7, 0, 0, 0, 0, 0, 0, 0, 0, 7]);
  });

  it('random distributions stay in range, are reproducible from the seed and differ across seeds', () => {
    const p = 5000;
    const b = 100;
    const r = blockSizes('random', { p, b, seed: 42 });
    expect(r).toEqual(blockSizes('random', { p, b, seed: 42 }));
    expect(r).not.toEqual(blockSizes('random', { p, b, seed: 43 }));
    expect(Math.min(...r)).toBe(1);
    expect(Math.max(...r)).toBe(2 * b);
    expect(Math.abs(sum(r) / p - (2 * b + 1) / 2)).toBeLessThan(5);
    const inc = blockSizes('random-increasing', { p, b, seed: 42 });
    expect(inc).toEqual([...r].sort((x, y) => x - y));
    expect(blockSizes('random-decreasing', { p, b, seed: 42 })).toEqual([...r].sort((x, y) => y - x));
    const bucket = blockSizes('bucket', { p, b, seed: 1 });
    expect(Math.min(...bucket)).toBe(51);
    expect(Math.max(...bucket)).toBe(150);
    const spikes = blockSizes('spikes', { p, b, rho: 5, seed: 1 });
    expect(new Set(spikes)).toEqual(new Set([1, 500]));
    const frac = spikes.filter((x) => x === 500).length / p;
    expect(frac).toBeGreaterThan(0.17);
    expect(frac).toBeLessThan(0.23);
  });

  it('every distribution works for p = 1 and p = 2', () => {
    for (const d of DISTRIBUTIONS) {
      expect(blockSizes(d, { p: 1, b: 3 }).length).toBe(1);
      expect(blockSizes(d, { p: 2, b: 3 }).length).toBe(2);
    }
  });

  it('rejects bad parameters with typed errors', () => {
    expect(() => blockSizes('same', { p: 0, b: 1 })).toThrow(InvalidArgumentError);
    expect(() => blockSizes('same', { p: 3, b: 0 })).toThrow(/b/);
    expect(() => blockSizes('spikes', { p: 3, b: 1, rho: 0 })).toThrow(/rho/);
    expect(() => parseDistribution('gaussian')).toThrow(/unknown distribution/);
    expect(parseDistribution('Two blocks')).toBe('two-blocks');
  });
});
