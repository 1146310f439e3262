/**
 * How `vcoll inter` simulates Kang19's settings (§5) at sizes whose receive buffers do not fit
 * in memory: every block of x logical bytes is simulated with r(x) = x / scale real bytes and
 * the model's β becomes β · scale, so a message's transfer term β · scale · Σ r is its logical
 * β · Σ x (α terms are unchanged). That is exact only when `scale` divides every block; a block
 * keeps at least one real byte (its data is verified), so the real receive buffers never go
 * below one byte per (rank, remote block) pair.
 *
 * The rule (interBlockScale):
 *   1. no scaling while the logical receive buffers fit `maxBytes`;
 *   2. else the smallest power of two that brings them under `maxBytes`, if it divides every
 *      block (exact);
 *   3. else the largest power of two dividing every block (the blocks' "grain"), when the
 *      real buffers then fit the budget max(maxBytes, floorBytes) (exact; e.g. blocks of
 *      64 KiB at p + q = 2^16 are one real byte each);
 *   4. else no exact scale fits (arithmetic block sizes of settings 6 and 8 at large p + q:
 *      n different sizes need n / 2 real bytes per block on average; settings 3 and 4, whose
 *      blocks differ 4×, from p + q = 16384 on): blocks are rounded to the
 *      nearest multiple of the smallest power of two whose rounded buffers fit the budget (at
 *      least one multiple), `blocksExact` is false, and the times are those of the rounded sizes.
 */
import { maxOf } from '../util/extremes.js';

export interface InterBlockScale {
  /** Logical bytes per real byte (a power of two). */
  readonly scale: number;
  /** Real bytes of every block of group A and of group B (frozen: every simulated rank shares them). */
  readonly realA: readonly number[];
  readonly realB: readonly number[];
  /** Every block simulated at its logical size (scale divides it); false: rounded (rule 4). */
  readonly blocksExact: boolean;
  /** Real bytes of all receive buffers together: p · Σ realB + q · Σ realA. */
  readonly realBytes: number;
}

function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** Real bytes of a block of x logical bytes at `scale`: 0 for an empty block, else round(x / scale), at least 1. */
export function realBlockBytes(x: number, scale: number): number {
  return x === 0 ? 0 : Math.max(1, Math.round(x / scale));
}

function realOf(xs: readonly number[], scale: number): readonly number[] {
  return Object.freeze(xs.map((x) => realBlockBytes(x, scale)));
}

/** Σ realBlockBytes(x, scale) over xs, without the array. */
function realSum(xs: readonly number[], scale: number): number {
  let s = 0;
  for (const x of xs) s += realBlockBytes(x, scale);
  return s;
}

/** The largest power of two (≤ 2^40) dividing every nonzero x; 2^40 when all are 0. */
function grainOf(xs: readonly number[], ys: readonly number[]): number {
  let g = 2 ** 40;
  for (const list of [xs, ys]) {
    for (const x of list) {
      while (x % g !== 0) g /= 2;
      if (g === 1) return 1;
    }
  }
  return g;
}

/**
 * The scale and real block sizes of a simulated run of groups with logical block sizes
 * `sizesA` (p ranks) and `sizesB` (q ranks): see the rules above. `floorBytes` is what the
 * caller's memory estimate allows the real buffers beyond `maxBytes` (interSimBytes).
 */
export function interBlockScale(sizesA: readonly number[], sizesB: readonly number[], maxBytes: number, floorBytes: number): InterBlockScale {
  const p = sizesA.length;
  const q = sizesB.length;
  const at = (scale: number, blocksExact: boolean): InterBlockScale => {
    const realA = realOf(sizesA, scale);
    const realB = realOf(sizesB, scale);
    return { scale, realA, realB, blocksExact, realBytes: p * sum(realB) + q * sum(realA) };
  };
  const logical = p * sum(sizesB) + q * sum(sizesA);
  let need = 1;
  while (logical / need > maxBytes) need *= 2;
  const grain = grainOf(sizesA, sizesB);
  if (need <= grain) return at(need, true);
  const budget = Math.max(maxBytes, floorBytes);
  if (logical / grain <= budget) return at(grain, true);
  // rule 4: rounded; every block is at least one real byte, so from the largest block's
  // power of two on all are 1 and the buffers are the floor
  const max = Math.max(maxOf(sizesA, (x) => x), maxOf(sizesB, (x) => x));
  let largest = 1;
  while (largest < max) largest *= 2;
  let scale = 2 * grain;
  while (p * realSum(sizesB, scale) + q * realSum(sizesA, scale) > budget && scale < largest) scale *= 2;
  return at(scale, false);
}

/** The logical sizes a scaled run simulates: real bytes × scale (the requested sizes when exact). */
export function simulatedSizes(real: readonly number[], scale: number): number[] {
  return real.map((r) => r * scale);
}
