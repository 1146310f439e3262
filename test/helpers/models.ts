/** Random and uniform per-pair cost models for tests. */
import { pairwiseModel, type CostModel } from '../../src/model/cost-model.js';
import { int } from './random.js';

/** α_ij ∈ [0, alphaMax], β_ij ∈ [0, betaMax], γ_i ∈ [0, gammaMax]; integers unless `real`. */
export function randomPairwise(
  p: number,
  rnd: () => number,
  opts: { copyAll?: boolean; real?: boolean; alphaMax?: number; betaMax?: number; gammaMax?: number } = {},
): CostModel {
  const v = (lo: number, hi: number) => (opts.real ? lo + rnd() * (hi - lo) : int(rnd, lo, hi));
  const mat = (lo: number, hi: number) => Array.from({ length: p }, () => Array.from({ length: p }, () => v(lo, hi)));
  return pairwiseModel({
    alpha: mat(0, opts.alphaMax ?? 60),
    beta: mat(0, opts.betaMax ?? 5),
    gamma: Array.from({ length: p }, () => v(0, opts.gammaMax ?? 4)),
    copyAll: opts.copyAll,
  });
}

/** The same α, β for every pair: a per-pair model equal to `linearModel({alpha, beta, gamma})`. */
export function uniformPairwise(p: number, alpha: number, beta: number, gamma = 0, copyAll = false): CostModel {
  const fill = (x: number) => Array.from({ length: p }, () => new Array<number>(p).fill(x));
  return pairwiseModel({ alpha: fill(alpha), beta: fill(beta), gamma, copyAll });
}
