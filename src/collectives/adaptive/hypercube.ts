/**
 * Geometry of the ordered (incomplete) hypercube of Traff18 §2: at level d the ranks are cut
 * into the ranges [a·2^d .. (a+1)·2^d − 1] (the last one cut at p − 1); round d joins the
 * ranges 2b and 2b + 1 of level d into range b of level d + 1. Every range has a fixed root
 * anyone can compute without communication (Lemma 3 and the remarks after it): its last rank,
 * p − 1 for the incomplete last range. O(1) per query.
 *
 * k ports (Theorem 1's k-ported remark; the (k+1)-ary ordered hypercube of trees/adaptive.ts):
 * at level t the ranges are [a·(k+1)^t .. (a+1)·(k+1)^t − 1] (cut at p − 1), round t joins
 * the up to k + 1 ranges b(k+1) … b(k+1) + k of level t into range b of level t + 1, and a
 * range's fixed root is again its last rank. `groupOf` and `levelRange*` give that geometry
 * for any k (k = 1 is the binary hypercube above).
 */
import { ceilLog, ceilLog2 } from '../../util/ceil-log.js';

/** A range of the ordered hypercube at some level. */
export interface HyperRange {
  /** Index a of the range at its level. */
  readonly index: number;
  readonly lo: number;
  /** Last rank, cut at p − 1; also the range's fixed root. */
  readonly hi: number;
}

/**
 * ⌈log₂ p⌉ (⌈log_{k+1} p⌉ with `ports` = k): the rounds of the construction and the height
 * bound of the data phase (0 for p = 1).
 */
export function hypercubeRounds(p: number, ports = 1): number {
  return ports === 1 ? ceilLog2(p) : ceilLog(p, ports + 1);
}

/** The level-d range with index a (undefined when it holds no rank). */
export function rangeAt(index: number, d: number, p: number): HyperRange | undefined {
  const w = 2 ** d;
  const lo = index * w;
  if (index < 0 || lo >= p) return undefined;
  return { index, lo, hi: Math.min(lo + w - 1, p - 1) };
}

/** The level-d range that contains rank v. */
export function rangeOf(v: number, d: number, p: number): HyperRange {
  return rangeAt(Math.floor(v / 2 ** d), d, p) as HyperRange;
}

/** The range joined with `r` in round d (r is a level-d range), or undefined when r passes through. */
export function partnerOf(r: HyperRange, d: number, p: number): HyperRange | undefined {
  return rangeAt(r.index ^ 1, d, p);
}

/** Fixed root of a range: its last rank (p − 1 for the incomplete last range). */
export function fixedRootOf(r: HyperRange): number {
  return r.hi;
}

/** True when rank x lies in r. */
export function contains(r: HyperRange, x: number): boolean {
  return x >= r.lo && x <= r.hi;
}

/** The ranges of one round of the (k+1)-ary hypercube that are joined into one (k ports). */
export interface RangeGroup {
  /** Index (at the round's level) of the group's first range. */
  readonly first: number;
  /** Ranges in the group, 1 … k + 1 (1: the range passes through the round). */
  readonly n: number;
}

/** The group of rank v's level range in the round whose ranges have `width` = (k+1)^t ranks. O(1). */
export function groupOf(v: number, width: number, ports: number, p: number): RangeGroup {
  const K = ports + 1;
  const index = Math.floor(v / width);
  const first = index - (index % K);
  const ranges = Math.ceil(p / width);
  return { first, n: Math.min(K, ranges - first) };
}

/** First rank of the range with index `index` at the level of `width` ranks per range. */
export function levelRangeLo(index: number, width: number): number {
  return index * width;
}

/** Last rank (and fixed root) of the range with index `index` at the level of `width` ranks per range, cut at p − 1. */
export function levelRangeHi(index: number, width: number, p: number): number {
  return Math.min((index + 1) * width, p) - 1;
}
