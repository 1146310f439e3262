/**
 * Block placement at the root of gatherv/scatterv: where the packed message of a run of
 * ranks lands in (gather) or comes from (scatter) the user's buffer.
 *
 * A packed message holds the blocks of a sequence of ranks back to back, in that order
 * (for a consecutive range lo..hi: rank order). At the root the blocks live at their
 * displacements, `displs[i]·unitBytes`, `counts[i]·unitBytes` bytes each. When the non-empty
 * blocks of the sequence follow each other in the buffer exactly in sequence order, the
 * message can go straight into (come straight out of) the user's buffer: a direct view, no
 * copy. Otherwise it goes through a staging buffer and its blocks are copied out (gather,
 * after the receive) or in (scatter, before the send) through `comm.copy`, so the
 * simulator charges γ per copied element as for any other local copy.
 *
 * Cost: deciding is O(length of the sequence); a staged run copies its bytes once.
 */
import type { Communicator } from '../comm/communicator.js';
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
 * Where one packed message goes (gather) or comes from (scatter).
 * - `view`: the bytes to receive into / send from, exactly the packed size;
 * - `direct`: `view` is a view of the user's buffer (nothing to copy);
 * - `sync()`: gather: copies the staged blocks out to their displacements (call after the
 *   receive); scatter: copies the blocks in from their displacements (call before every
 *   send, so a persistent plan sends the current contents). No-op when direct.
 */
export interface Placement {
  readonly view: Uint8Array;
  readonly direct: boolean;
  readonly bytes: number;
  sync(): void;
}

const noop = (): void => {};

/**
 * The placement of the packed message holding the blocks of `ranks` in that order.
 * `direction` 'gather': the message arrives and `sync` copies it out into `buf`;
 * 'scatter': `sync` fills it from `buf` and the message leaves.
 */
export function sequencePlacement(
  comm: Communicator,
  buf: Uint8Array,
  layout: BlockLayout,
  ranks: ArrayLike<number>,
  direction: 'gather' | 'scatter',
): Placement {
  const { counts, displs, unitBytes: u } = layout;
  let bytes = 0;
  let start = -1;
  let end = -1;
  let contiguous = true;
  for (let i = 0; i < ranks.length; i++) {
    const r = ranks[i];
    const n = counts[r] * u;
    if (n === 0) continue;
    const at = displs[r] * u;
    if (start < 0) start = at;
    else if (at !== end) contiguous = false;
    end = at + n;
    bytes += n;
  }
  if (start < 0) return { view: buf.subarray(0, 0), direct: true, bytes: 0, sync: noop };
  if (contiguous) return { view: buf.subarray(start, end), direct: true, bytes, sync: noop };
  const staging = new Uint8Array(bytes);
  const pieces: { readonly packed: Uint8Array; readonly user: Uint8Array }[] = [];
  let off = 0;
  for (let i = 0; i < ranks.length; i++) {
    const r = ranks[i];
    const n = counts[r] * u;
    if (n === 0) continue;
    const at = displs[r] * u;
    pieces.push({ packed: staging.subarray(off, off + n), user: buf.subarray(at, at + n) });
    off += n;
  }
  const sync =
    direction === 'gather'
      ? () => {
          for (const piece of pieces) comm.copy(piece.user, piece.packed);
        }
      : () => {
          for (const piece of pieces) comm.copy(piece.packed, piece.user);
        };
  return { view: staging, direct: false, bytes, sync };
}

/** Consecutive ranks lo..hi in rank order, as one packed message: see `sequencePlacement`. */
export function rangePlacement(
  comm: Communicator,
  buf: Uint8Array,
  layout: BlockLayout,
  lo: number,
  hi: number,
  direction: 'gather' | 'scatter',
): Placement {
  const ranks = new Int32Array(Math.max(0, hi - lo + 1));
  for (let i = 0; i < ranks.length; i++) ranks[i] = lo + i;
  return sequencePlacement(comm, buf, layout, ranks, direction);
}
