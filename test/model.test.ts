import { describe, expect, it } from 'vitest';
import { hierarchicalModel, linearModel, pairwiseModel } from '../src/model/cost-model.js';
import { validateSizes, validateRoot } from '../src/model/validate.js';
import { invalidField } from './helpers/errors.js';

describe('linear model', () => {
  it('charges α + βm per message, nothing for an empty transfer, γm per copy', () => {
    const m = linearModel({ alpha: 100, beta: 2, gamma: 0.5 });
    expect(m.comm(0, 1, 10)).toBe(120);
    expect(m.comm(0, 1, 0)).toBe(0);
    expect(m.copy(3, 10)).toBe(5);
    expect(m.linear).toEqual({ alpha: 100, beta: 2, gamma: 0.5 });
    expect(m.ports).toBe(1);
    expect(m.copyAll).toBe(false);
  });

  it('rejects negative, non-finite and malformed parameters, naming the field', () => {
    expect(invalidField(() => linearModel({ alpha: -1, beta: 1 }))).toBe('alpha');
    expect(invalidField(() => linearModel({ alpha: 1, beta: Number.NaN }))).toBe('beta');
    expect(invalidField(() => linearModel({ alpha: 1, beta: 1, gamma: Infinity }))).toBe('gamma');
    expect(invalidField(() => linearModel({ alpha: 1, beta: 1, ports: 0 }))).toBe('ports');
    expect(invalidField(() => linearModel({ alpha: 1, beta: 1, ports: 1.5 }))).toBe('ports');
  });
});

describe('pairwise model', () => {
  it('uses α_ij + β_ij m', () => {
    const m = pairwiseModel({ alpha: [[0, 1], [2, 0]], beta: [[0, 3], [4, 0]], gamma: [1, 2] });
    expect(m.comm(0, 1, 10)).toBe(31);
    expect(m.comm(1, 0, 10)).toBe(42);
    expect(m.comm(1, 0, 0)).toBe(0);
    expect(m.copy(1, 3)).toBe(6);
    expect(m.size).toBe(2);
    expect(m.linear).toBeUndefined();
  });

  it('rejects malformed matrices', () => {
    expect(invalidField(() => pairwiseModel({ alpha: [[0, 1]], beta: [[0, 1]] }))).toBe('alpha[0]');
    expect(invalidField(() => pairwiseModel({ alpha: [[0, 1], [1]], beta: [[0, 1], [1, 0]] }))).toBe('alpha[1]');
    expect(invalidField(() => pairwiseModel({ alpha: [[0, 1], [1, 0]], beta: [[0, -1], [1, 0]] }))).toBe('beta[0][1]');
    expect(invalidField(() => pairwiseModel({ alpha: [[0, 1], [1, 0]], beta: [[0, 1]] }))).toBe('beta');
    expect(invalidField(() => pairwiseModel({ alpha: [], beta: [] }))).toBe('alpha');
    expect(invalidField(() => pairwiseModel({ alpha: [[0, 1], [1, 0]], beta: [[0, 1], [1, 0]], gamma: [1] }))).toBe('gamma');
  });
});

describe('hierarchical model', () => {
  it('distinguishes intra- and inter-node pairs', () => {
    const m = hierarchicalModel({ nodeOf: [0, 0, 1, 1], intra: { alpha: 1, beta: 0.1 }, inter: { alpha: 10, beta: 1 }, gamma: 0.01 });
    expect(m.comm(0, 1, 10)).toBe(2);
    expect(m.comm(1, 2, 10)).toBe(20);
    expect(m.comm(1, 2, 0)).toBe(0);
    expect(m.linear).toBeUndefined();
    const one = hierarchicalModel({ nodeOf: [0, 0], intra: { alpha: 1, beta: 2 }, inter: { alpha: 10, beta: 1 } });
    expect(one.linear).toEqual({ alpha: 1, beta: 2, gamma: 0 });
  });

  it('rejects bad node numbers and parameters', () => {
    expect(invalidField(() => hierarchicalModel({ nodeOf: [0, -1], intra: { alpha: 1, beta: 1 }, inter: { alpha: 1, beta: 1 } }))).toBe('nodeOf[1]');
    expect(invalidField(() => hierarchicalModel({ nodeOf: [0, 1], intra: { alpha: -1, beta: 1 }, inter: { alpha: 1, beta: 1 } }))).toBe('intra.alpha');
  });
});

describe('size and root validation', () => {
  it('accepts non-negative integers', () => {
    expect(Array.from(validateSizes([0, 3, 5]))).toEqual([0, 3, 5]);
  });
  it('names the bad entry', () => {
    expect(invalidField(() => validateSizes([1, -2]))).toBe('sizes[1]');
    expect(invalidField(() => validateSizes([1, 2.5]))).toBe('sizes[1]');
    expect(invalidField(() => validateSizes([Number.NaN]))).toBe('sizes[0]');
    expect(invalidField(() => validateSizes([1, Infinity]))).toBe('sizes[1]');
    expect(invalidField(() => validateSizes([]))).toBe('sizes');
    expect(invalidField(() => validateRoot(4, 4))).toBe('root');
    expect(invalidField(() => validateRoot(-1, 4))).toBe('root');
    expect(invalidField(() => validateRoot(0.5, 4))).toBe('root');
  });
});
