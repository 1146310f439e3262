/**
 * How one tree edge of the hierarchical gatherv carries a subtree's blocks: as a list of
 * segments (the rank's own block and the blocks its children sent, never copied into one
 * buffer) sent as one vectored message.
 *
 * Sizes known (every edge into the root, which holds counts; the regular gather's edges, every
 * block m bytes): the receiver posts a buffer of exactly that size. Sizes unknown (gatherv below
 * the root: only the root knows counts): the receiver takes the message with `recvAlloc`
 * (MPI_Mprobe + MPI_Mrecv: a buffer of the message's size), so every edge is one message of
 * exactly the subtree's data, α + βD, whatever D. That buffer is then the receiver's own: it
 * forwards the child's blocks as a view of it, or, when they come last in its own message, the
 * buffer whole with its own size check written over the child's (two-level.ts, size-check.ts).
 */
import type { MessageData } from '../../comm/segments.js';

const EMPTY = new Uint8Array(0);

/** Segments as one message: nothing, the one view, or the list. */
export function messageOf(segs: Uint8Array[]): MessageData {
  return segs.length === 0 ? EMPTY : segs.length === 1 ? segs[0] : segs;
}
