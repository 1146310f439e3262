/**
 * Where the root of the hierarchical scatters sends each child's message from: the mirror of
 * root-target.ts (TraffRougier14 §6 for the gather; the scatter is its reverse). Every message
 * holds the blocks of a sequence of ranks in the node-sorted order π of TraffRougier14 Fig. 2
 * (a range of the root's node in local order, or the nodes of a bridge range node by node).
 *
 * - zero-copy: the message is sent straight out of `send` through the same per-message layout
 *   the gather receives through (root-target.ts `messageLayout`: indexed-block at the ranks'
 *   displacements when the message's blocks are equal, else indexed), turned into a vectored
 *   send by `views` (adjacent blocks merged, one view when contiguous). The root copies one
 *   block: its own, `send` → `recv` (γ·m_root), while one of its messages is on its way
 *   (`sendCopyingOwn`: the copy holds no port).
 * - reorder (what MPI allows: MPI_Pack, then a scatter of contiguous pieces): before its first
 *   send the root copies every other rank's block into a contiguous intermediate buffer in
 *   node order (γ·Σ_{i≠root} m_i, on the critical path) and sends every message as one slice
 *   of it; then the same copy of its own block.
 *
 * Cost of building a source: O(p) per call (offsets from counts).
 */
import type { Communicator } from '../../comm/communicator.js';
import { byteLength, type MessageData } from '../../comm/segments.js';
import { views } from '../../layout/index.js';
import { blockView, type BlockLayout, type Placement } from '../placement.js';
import { messageLayout, nodeOrderedBuffer } from './root-target.js';
import type { NodeStructure } from './structure.js';

export interface RootSource {
  /** What the message holding the blocks of `ranks`, in that order, is sent from. */
  place(ranks: ArrayLike<number>): Placement;
  /** The bytes the root's counts give rank `rank`. */
  blockBytes(rank: number): number;
  /** Before the first send: what the variant has to do first (reorder: pack every other block). */
  prepare(): void;
  /** Copies the root's own block from `send` into its `recv`. */
  copyOwn(): void;
}

/**
 * One rank's part of a hierarchical scatterv, whatever carries it (two-level-scatter.ts,
 * adaptive-scatter.ts, planned-scatter.ts add their trees): index.ts `scattervArgs` builds it.
 */
export interface ScatterRank {
  readonly comm: Communicator;
  readonly structure: NodeStructure;
  readonly root: number;
  /** Where this rank's block goes: exactly count·unitBytes bytes. */
  readonly recv: Uint8Array;
  readonly count: number;
  readonly unitBytes: number;
  /** Root only: where its messages come from, and its counts. */
  readonly source: RootSource | undefined;
  readonly counts: readonly number[] | undefined;
}

/** What a source needs from the call. */
export interface SourceInput {
  readonly comm: Communicator;
  readonly root: number;
  /** The root's send buffer (every block at its displacement). */
  readonly send: Uint8Array;
  /** The root's own block's destination. */
  readonly recv: Uint8Array;
  readonly layout: BlockLayout;
  readonly structure: NodeStructure;
}

function copyOwn(t: SourceInput): void {
  const own = blockView(t.send, t.layout, t.root);
  if (own.length > 0) t.comm.copy(t.recv, own);
}

export function zeroCopySource(t: SourceInput): RootSource {
  const u = t.layout.unitBytes;
  return {
    place: (ranks) => {
      const l = messageLayout(t.layout, ranks);
      const buffer = views(l, t.send, 0, l.size, u, 'read');
      const bytes = l.size * u;
      return { buffer, bytes, segments: Array.isArray(buffer) ? buffer.length : bytes > 0 ? 1 : 0 };
    },
    blockBytes: (r) => t.layout.counts[r] * u,
    prepare: () => {},
    copyOwn: () => copyOwn(t),
  };
}

export function reorderSource(t: SourceInput): RootSource {
  const { layout } = t;
  const u = layout.unitBytes;
  const { inter, offset, order, place } = nodeOrderedBuffer(t.structure, layout, t.root, t.comm.rank);
  return {
    place,
    blockBytes: (r) => layout.counts[r] * u,
    prepare: () => {
      for (const r of order) {
        const n = layout.counts[r] * u;
        if (n > 0) t.comm.copy(inter.subarray(offset[r], offset[r] + n), blockView(t.send, layout, r));
      }
    },
    copyOwn: () => copyOwn(t),
  };
}

/** One message of the root: to whom, with which tag, what. */
export interface RootSend {
  readonly peer: number;
  readonly tag: number;
  readonly data: MessageData;
}

/**
 * The root's sends, one at a time in the given order (each matched in order, whenever its
 * receiver posts), and its own block's copy beside one of them: the processor's copy holds no
 * port, so it costs nothing unless it outlasts that transfer, the next send waiting for both
 * (src/run/hierarchical-predict.ts `rootCopyBeside`). `beside`: the index among the sends that
 * move bytes ('last': the last of them, which delays no send). With no bytes to send the copy
 * comes last.
 */
export async function sendCopyingOwn(comm: Communicator, source: RootSource, sends: readonly RootSend[], beside: number | 'last'): Promise<void> {
  let k = beside;
  if (k === 'last') {
    k = -1;
    for (const x of sends) if (byteLength(x.data) > 0) k++;
  }
  let moving = 0;
  let copied = false;
  for (const x of sends) {
    if (!copied && byteLength(x.data) > 0 && moving++ === k) {
      const transfer = comm.send(x.peer, x.tag, x.data);
      copied = true;
      source.copyOwn();
      await transfer;
    } else {
      await comm.send(x.peer, x.tag, x.data);
    }
  }
  if (!copied) source.copyOwn();
}
