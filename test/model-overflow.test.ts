/**
 * Finite but overflowing cost models: every tree builder rejects a model under which a tree's
 * time would overflow (requireFiniteCosts) with an InvalidArgumentError naming the parameter,
 * instead of looping on infinite costs; just below the bound every builder still returns a
 * finite time that the evaluator confirms.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../src/errors.js';
import {
  MAX_MODEL_TIME,
  hierarchicalModel,
  linearModel,
  pairwiseModel,
  requireFiniteCosts,
  type CostModel,
} from '../src/model/cost-model.js';
import { optimalBroadcastTree } from '../src/trees/broadcast.js';
import { bruteForceOrderedOptimal } from '../src/trees/brute-force.js';
import { evaluate } from '../src/trees/evaluate.js';
import { TREE_ALGORITHMS } from '../src/trees/registry.js';

const P = 5;
const sizes = [10, 10, 10, 10, 10];
type Param = 'alpha' | 'beta' | 'gamma';
const base = { alpha: 100, beta: 1, gamma: 1 };

function matrix(v: number): number[][] {
  return Array.from({ length: P }, () => Array.from({ length: P }, () => v));
}

function models(param: Param, value: number): Array<[string, CostModel]> {
  const lin = { ...base, [param]: value };
  // a per-pair model with the large value on one pair only
  const a = matrix(base.alpha);
  const b = matrix(base.beta);
  if (param === 'alpha') a[3][1] = value;
  if (param === 'beta') b[3][1] = value;
  const g = param === 'gamma' ? [1, 1, value, 1, 1] : 1;
  const hier = {
    nodeOf: [0, 0, 1, 1, 1],
    intra: { alpha: 50, beta: 0.5 },
    inter: { alpha: param === 'alpha' ? value : base.alpha, beta: param === 'beta' ? value : base.beta },
    gamma: param === 'gamma' ? value : base.gamma,
  };
  return [
    ['linear', linearModel(lin)],
    ['pairwise', pairwiseModel({ alpha: a, beta: b, gamma: g })],
    ['hierarchical', hierarchicalModel(hier)],
  ];
}

function expectRejected(f: () => unknown, param: Param): void {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(InvalidArgumentError);
  expect((err as InvalidArgumentError).field).toBe(param);
  expect((err as Error).message).toContain('Number.MAX_VALUE');
}

/** Whether the construction takes a model of this kind at all (with ordinary parameters). */
function accepts(alg: (typeof TREE_ALGORITHMS)[number], kind: string): boolean {
  const model = (models('alpha', base.alpha).find(([k]) => k === kind) as [string, CostModel])[1];
  try {
    alg.build(sizes, model);
    return true;
  } catch (e) {
    expect((e as InvalidArgumentError).field).toBe('model');
    return false;
  }
}

describe('overflowing models are rejected by every tree builder', () => {
  for (const param of ['alpha', 'beta', 'gamma'] as const) {
    for (const [kind, model] of models(param, 1e308)) {
      for (const alg of TREE_ALGORITHMS) {
        it(`${alg.name}, ${kind} model, ${param} = 1e308`, () => {
          if (!accepts(alg, kind)) return; // needs a homogeneous model: rejects this one as before
          expectRejected(() => alg.build(sizes, model, { root: 2 }), param);
          expectRejected(() => alg.build(sizes, model), param);
        });
      }
      it(`brute force and broadcast, ${kind} model, ${param} = 1e308`, () => {
        expectRejected(() => bruteForceOrderedOptimal(sizes, model, 2), param);
        if (param !== 'gamma') expectRejected(() => optimalBroadcastTree(P, 10, model), param);
      });
    }
  }

  it('names the bound, the value and p', () => {
    expect(() => requireFiniteCosts(linearModel({ alpha: 1e308, beta: 1 }), sizes)).toThrow(/alpha: 1e\+308 .*p = 5, T = 50/);
  });

  it('a hand-made per-pair model without bounds is probed', () => {
    const inner = pairwiseModel({ alpha: matrix(1), beta: matrix(1) });
    const handMade: CostModel = {
      kind: 'pairwise',
      ports: 1,
      copyAll: false,
      size: P,
      linear: undefined,
      comm: (f, t, u) => (f === 4 && t === 0 && u > 0 ? 1e308 * u : inner.comm(f, t, u)),
      copy: (r, u) => inner.copy(r, u),
    };
    expectRejected(() => TREE_ALGORITHMS[0].build(sizes, handMade), 'beta');
  });
});

describe('just below the bound every builder still works', () => {
  // (p − 1)·(α + β·T) + γ·T ≈ 4·1e297 + … < MAX_MODEL_TIME ≈ 4.2e298
  for (const param of ['alpha', 'beta', 'gamma'] as const) {
    const value = param === 'alpha' ? 1e297 : param === 'beta' ? 1e295 : 1e296;
    for (const [kind, model] of models(param, value)) {
      for (const alg of TREE_ALGORITHMS) {
        it(`${alg.name}, ${kind} model, ${param} = ${value}`, () => {
          for (const root of [2, undefined]) {
            let built;
            try {
              built = alg.build(sizes, model, root === undefined ? {} : { root });
            } catch (e) {
              // a construction that needs a homogeneous model rejects the others as before
              expect(e).toBeInstanceOf(InvalidArgumentError);
              expect((e as InvalidArgumentError).field).toBe('model');
              continue;
            }
            expect(Number.isFinite(built.time)).toBe(true);
            expect(built.time).toBeLessThanOrEqual(MAX_MODEL_TIME);
            if (root !== undefined) expect(built.root).toBe(root);
            expect(built.time).toBe(evaluate(built.tree, sizes, model).time);
          }
        });
      }
    }
  }
});

describe('non-finite and negative parameters are rejected where the model is made', () => {
  for (const v of [Number.NaN, -1, Infinity, -Infinity]) {
    for (const param of ['alpha', 'beta', 'gamma'] as const) {
      it(`linear ${param} = ${v}`, () => {
        expect(() => linearModel({ ...base, [param]: v })).toThrow(InvalidArgumentError);
      });
    }
    it(`pairwise alpha[1][2] = ${v}`, () => {
      const a = matrix(1);
      a[1][2] = v;
      expect(() => pairwiseModel({ alpha: a, beta: matrix(1) })).toThrow(/alpha\[1\]\[2\]/);
    });
  }
});
