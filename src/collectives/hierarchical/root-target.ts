/**
 * Where the root of the hierarchical gathers receives what its node's local children and its
 * bridge children send. Every such message holds the blocks of a sequence of ranks (a range
 * of the root's node in local order, or the nodes of a bridge range node by node, each in
 * local order: the node-sorted order π of TraffRougier14 Fig. 2).
 *
 * - zero-copy (TraffRougier14 §6, Fig. 6): the message is received straight into `recv` through a
 *   layout (src/layout/) under the element-count semantics: the message's elements are the
 *   first `count` elements of an indexed-block layout whose block j sits at the displacement
 *   of the message's j-th rank (gather, and any message whose blocks are equal), or of an
 *   indexed layout (gatherv); `views` turns it into the vectored receive (adjacent blocks
 *   merged, one view when they are contiguous). The root copies exactly one thing: its own
 *   block, from `send` to its place in `recv` (γ·m_root), overlapped with the first receives.
 * - reorder (TraffRougier14 Fig. 1, Fig. 2, §4: what MPI allows): the messages land back to back
 *   in a contiguous intermediate buffer in node order (the root's own block left out); after
 *   the last receive the root copies every other rank's block from there to its place in
 *   `recv`, one explicit copy per non-empty block — γ·Σ_{i≠root} m_i more than zero-copy, the
 *   MPI_Unpack step of TraffRougier14 §4 — plus the same copy of its own block.
 *
 * Cost of building a target: O(p) per call (the offsets depend on counts).
 */
import type { Communicator } from '../../comm/communicator.js';
import { VcollError } from '../../errors.js';
import { indexed, indexedBlock, views, type Layout } from '../../layout/index.js';
import { blockView, type BlockLayout, type Placement } from '../placement.js';
import type { NodeStructure } from './structure.js';

export interface RootTarget {
  /** Where the message holding the blocks of `ranks`, in that order, is received. */
  place(ranks: ArrayLike<number>): Placement;
  /** The bytes the root's counts give rank `rank`. */
  blockBytes(rank: number): number;
  /** Copies the root's own block into `recv`. */
  copyOwn(): void;
  /** After every receive: whatever the variant still has to do. */
  finish(): void;
}

/** What a target needs from the call. */
export interface TargetInput {
  readonly comm: Communicator;
  readonly root: number;
  readonly send: Uint8Array;
  readonly recv: Uint8Array;
  readonly layout: BlockLayout;
  readonly structure: NodeStructure;
}

function copyOwn(t: TargetInput): void {
  const own = blockView(t.recv, t.layout, t.root);
  if (own.length > 0) t.comm.copy(own, t.send);
}

/**
 * The root's receive layout for a message holding the blocks of `ranks` in that order (seed
 * 002 Fig. 6's roottype, per message): indexed-block when the blocks are equal, else indexed.
 */
export function messageLayout(layout: BlockLayout, ranks: ArrayLike<number>): Layout {
  const n = ranks.length;
  const displs = new Float64Array(n);
  const lengths = new Float64Array(n);
  let equal = true;
  for (let j = 0; j < n; j++) {
    displs[j] = layout.displs[ranks[j]];
    lengths[j] = layout.counts[ranks[j]];
    if (lengths[j] !== lengths[0]) equal = false;
  }
  return equal ? indexedBlock(n > 0 ? lengths[0] : 0, displs) : indexed(lengths, displs);
}

export function zeroCopyTarget(t: TargetInput): RootTarget {
  const u = t.layout.unitBytes;
  return {
    place: (ranks) => {
      const l = messageLayout(t.layout, ranks);
      const buffer = views(l, t.recv, 0, l.size, u);
      const bytes = l.size * u;
      return { buffer, bytes, segments: Array.isArray(buffer) ? buffer.length : bytes > 0 ? 1 : 0 };
    },
    blockBytes: (r) => t.layout.counts[r] * u,
    copyOwn: () => copyOwn(t),
    finish: () => {},
  };
}

/**
 * The root's node-ordered intermediate buffer of 'reorder' (TraffRougier14 Fig. 1, §4): every
 * block but the root's, back to back in node order π; `place` gives a message's slice (its
 * ranks must be consecutive in that order). Shared by the gather's target and the scatter's
 * source (root-source.ts).
 */
export interface NodeOrderedBuffer {
  readonly inter: Uint8Array;
  /** Byte offset of rank r's block in `inter`. */
  readonly offset: Float64Array;
  /** The ranks in node order, the root left out. */
  readonly order: readonly number[];
  place(ranks: ArrayLike<number>): Placement;
}

export function nodeOrderedBuffer(s: NodeStructure, layout: BlockLayout, root: number, rank: number): NodeOrderedBuffer {
  const u = layout.unitBytes;
  const offset = new Float64Array(s.size);
  const order: number[] = [];
  let total = 0;
  for (const r of s.order) {
    if (r === root) continue;
    offset[r] = total;
    total += layout.counts[r] * u;
    order.push(r);
  }
  const inter = new Uint8Array(total);
  return {
    inter,
    offset,
    order,
    place: (ranks) => {
      if (ranks.length === 0) return { buffer: inter.subarray(0, 0), bytes: 0, segments: 0 };
      const start = offset[ranks[0]];
      let bytes = 0;
      for (let i = 0; i < ranks.length; i++) {
        const r = ranks[i];
        if (offset[r] !== start + bytes || r === root) {
          throw new VcollError('INTERNAL', `reorder: rank ${r} is not next in node order`, { rank });
        }
        bytes += layout.counts[r] * u;
      }
      return { buffer: inter.subarray(start, start + bytes), bytes, segments: bytes > 0 ? 1 : 0 };
    },
  };
}

export function reorderTarget(t: TargetInput): RootTarget {
  const { layout } = t;
  const u = layout.unitBytes;
  const { inter, offset, order, place } = nodeOrderedBuffer(t.structure, layout, t.root, t.comm.rank);
  return {
    place,
    blockBytes: (r) => layout.counts[r] * u,
    copyOwn: () => copyOwn(t),
    finish: () => {
      for (const r of order) {
        const n = layout.counts[r] * u;
        if (n > 0) t.comm.copy(blockView(t.recv, layout, r), inter.subarray(offset[r], offset[r] + n));
      }
    },
  };
}
