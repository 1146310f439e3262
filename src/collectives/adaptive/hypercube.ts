/**
 * Geometry of the ordered (incomplete) hypercube of Traff18 §2: at level d the ranks are cut
 * into the ranges [a·2^d .. (a+1)·2^d − 1] (the last one cut at p − 1); round d joins the
 * ranges 2b and 2b + 1 of level d into range b of level d + 1. Every range has a fixed root
 * anyone can compute without communication (Lemma 3 and the remarks after it): its last rank,
 * p − 1 for the incomplete last range. O(1) per query.
 */
import { ceilLog2 } from '../../util/ceil-log.js';

/** A range of the ordered hypercube at some level. */
export interface HyperRange {
  /** Index a of the range at its level. */
  readonly index: number;
  readonly lo: number;
  /** Last rank, cut at p − 1; also the range's fixed root. */
  readonly hi: number;
}

/** ⌈log₂ p⌉: the rounds of the construction and of the data phase (0 for p = 1). */
export function hypercubeRounds(p: number): number {
  return ceilLog2(p);
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
