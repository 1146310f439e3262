/** Random and uniform per-pair cost models for tests, and the simulator's port-model cases. */
import { linearModel, pairwiseModel, type CostModel } from '../../src/model/cost-model.js';
import type { PortSetting } from '../../src/transports/sim/types.js';
import { int } from './random.js';

/** A model and the simulator's port setting for it (default the model's ports). */
export interface ModelCase {
  readonly model: CostModel;
  readonly ports?: PortSetting;
  readonly name: string;
}

/** One-ported, full duplex and k-ported models, with and without γ and copyAll (the schedule executors' cases). */
export const PORT_MODELS: readonly ModelCase[] = [
  { name: '1 port', model: linearModel({ alpha: 100, beta: 1, gamma: 0 }) },
  { name: '1 port, γ', model: linearModel({ alpha: 20, beta: 1, gamma: 1 }) },
  { name: '1 port, copyAll', model: linearModel({ alpha: 30, beta: 2, gamma: 1, copyAll: true }) },
  { name: 'full duplex', model: linearModel({ alpha: 25, beta: 1, gamma: 1 }), ports: 'full-duplex' },
  { name: '2 ports', model: linearModel({ alpha: 10, beta: 1, gamma: 1, ports: 2 }) },
  { name: '2 ports, copyAll', model: linearModel({ alpha: 40, beta: 1, gamma: 2, ports: 2, copyAll: true }) },
  { name: '3 ports', model: linearModel({ alpha: 5, beta: 1, gamma: 1, ports: 3 }) },
  { name: '3 ports, copyAll', model: linearModel({ alpha: 7, beta: 3, gamma: 1, ports: 3, copyAll: true }) },
];

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
