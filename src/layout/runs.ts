/**
 * Explicit runs of a range of elements (TraffRougier14 §5, "type normalization"): the
 * (offset, length) runs of elements first … first + count − 1 of a layout's repetition, in
 * element order, adjacent runs merged (a run starting where the previous one ends extends
 * it) and empty runs dropped; overlap detection for anything that writes through a layout.
 * Cost: O(runs) time and space; the overlap check is O(runs) when the runs ascend in memory,
 * O(runs log runs) otherwise.
 */
import { InvalidArgumentError } from '../errors.js';
import { forEachRun, requireLayout, type Layout } from './layout.js';

/** Merged runs, in element units: run t covers offsets[t] … offsets[t] + lengths[t] − 1. */
export interface Runs {
  readonly offsets: number[];
  readonly lengths: number[];
  /** The end of the farthest run (0 when there are none). */
  readonly end: number;
}

/** The merged runs of elements first … first + count − 1 of `layout`. */
export function runs(layout: Layout, first: number, count: number): Runs {
  requireLayout(layout);
  const offsets: number[] = [];
  const lengths: number[] = [];
  let end = 0;
  let last = -1;
  forEachRun(layout, first, count, (o, l) => {
    if (last >= 0 && offsets[last] + lengths[last] === o) {
      lengths[last] += l;
    } else {
      offsets.push(o);
      lengths.push(l);
      last++;
    }
    if (o + l > end) end = o + l;
  });
  return { offsets, lengths, end };
}

/**
 * The first element offset covered by two runs, or -1 when the runs are disjoint (what a
 * receive or an unpack through a layout needs: no element written twice).
 */
export function firstOverlap(r: Runs): number {
  const { offsets, lengths } = r;
  let ascending = true;
  for (let t = 1; t < offsets.length && ascending; t++) {
    if (offsets[t] < offsets[t - 1] + lengths[t - 1]) ascending = false;
  }
  if (ascending) return -1;
  const order = Array.from({ length: offsets.length }, (_, t) => t).sort((a, b) => offsets[a] - offsets[b]);
  let best = -1;
  let reach = offsets[order[0]] + lengths[order[0]];
  for (let u = 1; u < order.length; u++) {
    const t = order[u];
    if (offsets[t] < reach) {
      if (best < 0 || offsets[t] < best) best = offsets[t];
    }
    reach = Math.max(reach, offsets[t] + lengths[t]);
  }
  return best;
}

/** Throws InvalidArgumentError('layout') when the runs overlap (writes through a layout). */
export function requireDisjoint(r: Runs): void {
  const at = firstOverlap(r);
  if (at >= 0) {
    throw new InvalidArgumentError('layout', `runs overlap at element ${at}: writing through this layout would write it twice`);
  }
}
