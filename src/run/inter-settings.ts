/**
 * The eight parameter settings of Kang19 §5 and the improvement ratio its Eq. (5) predicts.
 *
 * Groups A (p ranks) and B (q ranks), `ranks` = p + q; `size` = bytes per rank of the larger
 * block (the papers' "maximum message size per node"):
 *   1  p = q,        k_A = k_B = size                         (allgather)
 *   2  p/q = 25/7,   k_A = k_B = size                         (allgather)
 *   3  p/q = 25/7,   k_A = size, k_B = size/4                 (allgather; A sends more)
 *   4  p/q = 25/7,   k_B = size, k_A = size/4                 (allgather; B sends more)
 *   5  = 1 through allgatherv;   6  p = q, arithmetic block sizes (allgatherv)
 *   7  = 2 through allgatherv;   8  p/q = 25/7, arithmetic block sizes (allgatherv)
 * Arithmetic: rank i of a group of n ranks sends ⌈size·(i+1)/n⌉ bytes (the largest is size,
 * the mean ≈ size/2 in both groups). The factors 4 of settings 3 and 4 are the ones for which
 * Eq. (5) gives the paper's 4.21 and 6.68.
 *
 * Eq. (5): the root-gathering algorithm as MPICH implements it has transfer time
 * (M + 3·ΣA + 3·ΣB)·t_w, the new algorithms M·t_w, M = max(ΣA, ΣB) (ΣX: group X's bytes), so the
 * improvement tends to (M + 3ΣA + 3ΣB)/M as messages grow: 7.0, 4.84, 4.21, 6.68, 7.0, 7.0, 4.84,
 * 4.84 for settings 1–8 (with the paper's group sizes; the arithmetic settings approach these
 * values as the groups grow).
 */
import { InvalidArgumentError } from '../errors.js';
import { maxOf } from '../util/extremes.js';

export type InterSettingNumber = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
export const INTER_SETTINGS: readonly InterSettingNumber[] = [1, 2, 3, 4, 5, 6, 7, 8];

/** The paper's expected improvement ratios (Eq. 5), settings 1–8. */
export const PAPER_RATIOS: Readonly<Record<InterSettingNumber, number>> = { 1: 7.0, 2: 4.84, 3: 4.21, 4: 6.68, 5: 7.0, 6: 7.0, 7: 4.84, 8: 4.84 };

export interface InterSetting {
  readonly setting: InterSettingNumber;
  readonly p: number;
  readonly q: number;
  /** allgatherv (settings 5–8) or allgather (1–4). */
  readonly vector: boolean;
  /** Bytes of every rank of A and of B. */
  readonly sizesA: readonly number[];
  readonly sizesB: readonly number[];
  /** Block sizes reported as k_A / k_B: the largest block of each group. */
  readonly kA: number;
  readonly kB: number;
}

/** Group sizes of a setting for `ranks` = p + q ranks (25/7 settings: p = round(25·ranks/32)). */
export function groupSizes(setting: InterSettingNumber, ranks: number): { p: number; q: number } {
  if (!Number.isInteger(ranks) || ranks < 2) throw new InvalidArgumentError('ranks', `must be an integer >= 2, got ${ranks}`);
  const square = setting === 1 || setting === 5 || setting === 6;
  let p = square ? Math.ceil(ranks / 2) : Math.round((25 * ranks) / 32);
  p = Math.min(ranks - 1, Math.max(1, p));
  return { p, q: ranks - p };
}

function arithmetic(n: number, size: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.ceil((size * (i + 1)) / n));
}

export function interSetting(setting: InterSettingNumber, ranks: number, size: number): InterSetting {
  if (!INTER_SETTINGS.includes(setting)) throw new InvalidArgumentError('setting', `must be one of 1…8, got ${String(setting)}`);
  if (!Number.isInteger(size) || size < 0) throw new InvalidArgumentError('size', `must be an integer >= 0, got ${size}`);
  const { p, q } = groupSizes(setting, ranks);
  const quarter = Math.floor(size / 4);
  let a: number[];
  let b: number[];
  if (setting === 6 || setting === 8) {
    a = arithmetic(p, size);
    b = arithmetic(q, size);
  } else {
    const kA = setting === 4 ? quarter : size;
    const kB = setting === 3 ? quarter : size;
    a = new Array<number>(p).fill(kA);
    b = new Array<number>(q).fill(kB);
  }
  // a loop, not Math.max(...a): spreading a group of 2^17 or more ranks overflows the stack
  return { setting, p, q, vector: setting >= 5, sizesA: a, sizesB: b, kA: Math.max(0, maxOf(a, (x) => x)), kB: Math.max(0, maxOf(b, (x) => x)) };
}

/** Eq. (5) for given block sizes: (M + 3ΣA + 3ΣB)/M. */
export function expectedRatio(sizesA: readonly number[], sizesB: readonly number[]): number {
  const sa = sizesA.reduce((x, y) => x + y, 0);
  const sb = sizesB.reduce((x, y) => x + y, 0);
  const m = Math.max(sa, sb);
  return m === 0 ? 1 : (m + 3 * sa + 3 * sb) / m;
}
