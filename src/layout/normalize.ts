/**
 * Normalisation (TraffRougier14 §5; Träff 2014, "optimal MPI datatype normalization", TraffRougier14 ref.
 * [11]): one repetition of any layout rewritten in the simplest equivalent constructor — same
 * elements in the same order, same size and extent: contiguous if it is one run at 0, a vector
 * if its merged runs have one length at a constant stride from 0, indexed-block if they have
 * one length, else indexed; `resized` keeps the extent when the simpler form's differs.
 * Meant for layouts with few runs: it materialises the runs (an implicit bucket or stretched
 * type becomes explicit). Cost: O(runs) time and space.
 */
import { contiguous, indexedBlock, resized, vector } from './basic.js';
import { indexed } from './indexed.js';
import { requireLayout, type Layout } from './layout.js';
import { runs } from './runs.js';

function simplest(offsets: readonly number[], lengths: readonly number[]): Layout {
  const n = offsets.length;
  if (n === 0) return contiguous(0);
  if (n === 1 && offsets[0] === 0) return contiguous(lengths[0]);
  const len = lengths[0];
  if (!lengths.every((l) => l === len)) return indexed(lengths, offsets);
  const stride = n > 1 ? offsets[1] - offsets[0] : 0;
  const regular = offsets[0] === 0 && stride >= 0 && offsets.every((o, t) => o === t * stride);
  return regular ? vector(n, len, stride) : indexedBlock(len, offsets);
}

/** The simplest layout with the same elements, order, size and extent as `layout`. */
export function normalize(layout: Layout): Layout {
  requireLayout(layout);
  const r = runs(layout, 0, layout.size);
  const out = simplest(r.offsets, r.lengths);
  return out.extent === layout.extent ? out : resized(out, layout.extent);
}
