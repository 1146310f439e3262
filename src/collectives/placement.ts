/**
 * Block placement at the root of gatherv/scatterv: where the packed message of a run of
 * ranks lands in (gather) or comes from (scatter) the user's buffer.
 *
 * A packed message holds the blocks of a sequence of ranks back to back, in that order
 * (for a consecutive range lo..hi: rank order). At the root the blocks live at their
 * displacements, `displs[i]·unitBytes`, `counts[i]·unitBytes` bytes each. The placement is
 * the message's buffer at the root: the blocks' views of the user's buffer in sequence
 * order, empty blocks dropped and views adjacent in memory merged — one contiguous view when
 * the blocks follow each other in the buffer in sequence order (the common case: ordered
 * trees, default displacements), otherwise a vectored MessageBuffer (comm/segments.ts) the
 * transport fills (gather) or sends from (scatter) segment by segment. Nothing is staged and
 * nothing is copied: gaps, permuted displacements and the non-ordered two-block trees cost
 * exactly what the evaluator says (no γ for the root beyond its own block), and a persistent
 * scatter sends the buffer's current contents.
 *
 * Cost: O(length of the sequence) once, at planning; O(segments) per message in the
 * transport.
 */
import type { MessageBuffer } from '../comm/segments.js';
import type { VPlanInput } from './variant.js';

/** Prefix sums of `counts`: `prefix[i]` = Σ_{j<i} counts[j] (length p + 1). */
export function prefixSums(counts: ArrayLike<number>): Float64Array {
  const prefix = new Float64Array(counts.length + 1);
  for (let i = 0; i < counts.length; i++) prefix[i + 1] = prefix[i] + counts[i];
  return prefix;
}

/** Elements of the packed range lo..hi (inclusive), from `prefixSums`. */
export function rangeElements(prefix: ArrayLike<number>, lo: number, hi: number): number {
  return prefix[hi + 1] - prefix[lo];
}

/** The root-side description of the blocks: all in elements, `unitBytes` bytes each. */
export interface BlockLayout {
  readonly counts: ArrayLike<number>;
  readonly displs: ArrayLike<number>;
  readonly unitBytes: number;
}

/** The root's BlockLayout from its plan input (counts and displs: root only, validated). */
export function rootLayout(input: Pick<VPlanInput, 'counts' | 'displs' | 'unitBytes'>): BlockLayout {
  return { counts: input.counts as readonly number[], displs: input.displs as readonly number[], unitBytes: input.unitBytes };
}

/** Rank `r`'s block inside `buf` (a view, no copy). */
export function blockView(buf: Uint8Array, layout: BlockLayout, r: number): Uint8Array {
  const u = layout.unitBytes;
  const at = layout.displs[r] * u;
  return buf.subarray(at, at + layout.counts[r] * u);
}

/**
 * Where one packed message goes (gather) or comes from (scatter) in the user's buffer.
 * - `buffer`: receive into / send from this: a view of the user's buffer when the blocks are
 *   contiguous there in sequence order, else their segments in sequence order;
 * - `bytes`: the packed size;
 * - `segments`: how many pieces `buffer` has (0 when empty, 1 when contiguous).
 */
export interface Placement {
  readonly buffer: MessageBuffer;
  readonly bytes: number;
  readonly segments: number;
}

const EMPTY = new Uint8Array(0);

/**
 * The byte runs of the packed message holding the blocks of `ranks`, in that order, in the
 * root's buffer: empty blocks dropped, adjacent ones merged; `run(start, end)` is called for
 * each run in order. Returns the message's bytes. (Also what compiled schedules address:
 * collectives/v-schedule.ts.)
 */
export function sequenceRuns(layout: BlockLayout, ranks: ArrayLike<number>, run: (start: number, end: number) => void): number {
  const { counts, displs, unitBytes: u } = layout;
  let bytes = 0;
  let start = -1;
  let end = -1;
  for (let i = 0; i < ranks.length; i++) {
    const r = ranks[i];
    const n = counts[r] * u;
    if (n === 0) continue;
    const at = displs[r] * u;
    if (start >= 0 && at === end) {
      end += n;
    } else {
      if (start >= 0) run(start, end);
      start = at;
      end = at + n;
    }
    bytes += n;
  }
  if (start >= 0) run(start, end);
  return bytes;
}

/** The placement of the packed message holding the blocks of `ranks`, in that order, in `buf`. */
export function sequencePlacement(buf: Uint8Array, layout: BlockLayout, ranks: ArrayLike<number>): Placement {
  const segs: Uint8Array[] = [];
  const bytes = sequenceRuns(layout, ranks, (start, end) => segs.push(buf.subarray(start, end)));
  if (segs.length === 0) return { buffer: EMPTY, bytes: 0, segments: 0 };
  if (segs.length === 1) return { buffer: segs[0], bytes, segments: 1 };
  return { buffer: segs, bytes, segments: segs.length };
}

/** Consecutive ranks lo..hi in rank order, as one packed message: see `sequencePlacement`. */
export function rangePlacement(buf: Uint8Array, layout: BlockLayout, lo: number, hi: number): Placement {
  const ranks = new Int32Array(Math.max(0, hi - lo + 1));
  for (let i = 0; i < ranks.length; i++) ranks[i] = lo + i;
  return sequencePlacement(buf, layout, ranks);
}
