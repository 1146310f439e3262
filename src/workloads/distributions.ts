/**
 * Block-size distributions of the papers' experiments (Traff18 §5, Traff17 §5.1), for
 * p processors with average block size b. Random ones draw from a seeded xoroshiro128+
 * generator (pure-rand), so every instance is reproducible from (name, p, b, ρ, seed).
 *
 * | name              | m_i                                                             |
 * |-------------------|-----------------------------------------------------------------|
 * | same              | b                                                               |
 * | random            | uniform in [1, 2b]                                              |
 * | random-increasing | random, sorted increasingly                                     |
 * | random-decreasing | random, sorted decreasingly                                     |
 * | bucket            | ⌊b/2⌋ + uniform in [1, b]                                       |
 * | spikes            | ρ·b with probability 1/ρ, else 1                                |
 * | increasing        | ⌊2b(i+1)/p⌋ + 1                                                 |
 * | decreasing        | ⌊2b(p−i)/p⌋ + 1                                                 |
 * | alternating       | b + ⌊b/2⌋ for even i, b − ⌊b/2⌋ for odd i                       |
 * | skewed            | ⌊p·b/ρ⌋ for the first ρ ranks (all ranks if p ≤ ρ), else 1     |
 * | two-blocks        | m_0 = m_{p−1} = ⌊p·b/2⌋, others 0 (Traff17); p = 1: ⌊p·b/2⌋   |
 * | two-blocks-small  | m_0 = m_{p−1} = b, others 0 (Traff18's variant)               |
 */
import prand from 'pure-rand';
import { InvalidArgumentError } from '../errors.js';
import { requireInteger } from '../model/validate.js';

/**
 * The distributions, one row each: name, display label (as the papers' tables write it) and
 * whether its sizes depend on the seed. DISTRIBUTIONS, DISTRIBUTION_LABELS and DETERMINISTIC
 * are derived from it.
 */
const DISTRIBUTION_TABLE = [
  { name: 'same', label: 'Same', seeded: false },
  { name: 'random', label: 'Random', seeded: true },
  { name: 'random-increasing', label: 'Random increasing', seeded: true },
  { name: 'random-decreasing', label: 'Random decreasing', seeded: true },
  { name: 'bucket', label: 'Bucket', seeded: true },
  { name: 'spikes', label: 'Spikes', seeded: true },
  { name: 'increasing', label: 'Increasing', seeded: false },
  { name: 'decreasing', label: 'Decreasing', seeded: false },
  { name: 'alternating', label: 'Alternating', seeded: false },
  { name: 'skewed', label: 'Skewed', seeded: false },
  { name: 'two-blocks', label: 'Two blocks', seeded: false },
  { name: 'two-blocks-small', label: 'Two blocks (b)', seeded: false },
] as const;

export type DistributionName = (typeof DISTRIBUTION_TABLE)[number]['name'];

export const DISTRIBUTIONS: readonly DistributionName[] = DISTRIBUTION_TABLE.map((d) => d.name);

/** Display names as the papers' tables write them. */
export const DISTRIBUTION_LABELS: Readonly<Record<DistributionName, string>> = Object.fromEntries(
  DISTRIBUTION_TABLE.map((d) => [d.name, d.label]),
) as Record<DistributionName, string>;

/** Distributions whose sizes do not depend on the seed. */
export const DETERMINISTIC: ReadonlySet<DistributionName> = new Set(DISTRIBUTION_TABLE.filter((d) => !d.seeded).map((d) => d.name));

export interface DistributionParams {
  /** Number of processors, >= 1. */
  p: number;
  /** Average block size, >= 1 (elements). */
  b: number;
  /** ρ of spikes and skewed, >= 1 integer (default 5, as in both papers). */
  rho?: number;
  /** Seed of the random distributions (default 1). */
  seed?: number;
}

export function isDistributionName(name: string): name is DistributionName {
  return (DISTRIBUTIONS as readonly string[]).includes(name);
}

export function parseDistribution(name: string, field = 'distribution'): DistributionName {
  const key = name.trim().toLowerCase().replace(/[\s_]+/g, '-');
  if (isDistributionName(key)) return key;
  throw new InvalidArgumentError(field, `unknown distribution "${name}"; choose one of ${DISTRIBUTIONS.join(', ')}`);
}

/** The block sizes m_0..m_{p−1} of a distribution. */
export function blockSizes(name: DistributionName, params: DistributionParams): number[] {
  if (!isDistributionName(name)) {
    throw new InvalidArgumentError('distribution', `unknown distribution "${String(name)}"; choose one of ${DISTRIBUTIONS.join(', ')}`);
  }
  const p = requireInteger('p', params.p, 1);
  const b = requireInteger('b', params.b, 1);
  const rho = requireInteger('rho', params.rho ?? 5, 1);
  const seed = requireInteger('seed', params.seed ?? 1, -(2 ** 31), 2 ** 31 - 1);
  builds++;
  const rng = prand.xoroshiro128plus(seed);
  const uniform = (lo: number, hi: number): number => prand.unsafeUniformIntDistribution(lo, hi, rng);
  const m = new Array<number>(p);
  switch (name) {
    case 'same':
      m.fill(b);
      break;
    case 'random':
    case 'random-increasing':
    case 'random-decreasing':
      for (let i = 0; i < p; i++) m[i] = uniform(1, 2 * b);
      if (name === 'random-increasing') m.sort((x, y) => x - y);
      if (name === 'random-decreasing') m.sort((x, y) => y - x);
      break;
    case 'bucket':
      for (let i = 0; i < p; i++) m[i] = Math.floor(b / 2) + uniform(1, b);
      break;
    case 'spikes':
      // probability 1/ρ: one draw in [0, ρ) hits 0.
      for (let i = 0; i < p; i++) m[i] = uniform(0, rho - 1) === 0 ? rho * b : 1;
      break;
    case 'increasing':
      for (let i = 0; i < p; i++) m[i] = Math.floor((2 * b * (i + 1)) / p) + 1;
      break;
    case 'decreasing':
      for (let i = 0; i < p; i++) m[i] = Math.floor((2 * b * (p - i)) / p) + 1;
      break;
    case 'alternating':
      for (let i = 0; i < p; i++) m[i] = i % 2 === 0 ? b + Math.floor(b / 2) : b - Math.floor(b / 2);
      break;
    case 'skewed':
      for (let i = 0; i < p; i++) m[i] = i < rho ? Math.floor((p * b) / rho) : 1;
      break;
    case 'two-blocks':
    case 'two-blocks-small': {
      const big = name === 'two-blocks' ? Math.floor((p * b) / 2) : b;
      m.fill(0);
      m[0] = big;
      m[p - 1] = big;
      break;
    }
  }
  return m;
}

/** How many distributions blockSizes has built in this process (work counts for tests). */
let builds = 0;

/** The number of distributions blockSizes has built in this process so far. */
export function blockSizesBuilt(): number {
  return builds;
}

/** sharedBlockSizes' last distributions, by (name, p, b, ρ, seed). */
const shared = new Map<string, readonly number[]>();
const SHARED_KEPT = 4;

/**
 * blockSizes, built once per process for the same (name, p, b, ρ, seed) and handed to every
 * caller: the simulated ranks of a run share one process and each needs the distribution (the
 * root its counts, every rank its own block), so building it per rank cost O(p²) in all. The
 * last few distributions are kept. The array is shared: callers must not change it.
 */
export function sharedBlockSizes(name: DistributionName, params: DistributionParams): readonly number[] {
  const key = `${String(name)} ${params.p} ${params.b} ${params.rho ?? 5} ${params.seed ?? 1}`;
  const hit = shared.get(key);
  if (hit !== undefined) return hit;
  const sizes = blockSizes(name, params);
  if (shared.size >= SHARED_KEPT) shared.delete(shared.keys().next().value as string);
  shared.set(key, sizes);
  return sizes;
}
