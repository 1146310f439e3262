/**
 * How one tree edge of the hierarchical gathers carries a subtree's blocks: as a list of
 * segments (the blocks received from the children and the rank's own block, never copied
 * into one buffer) sent as one vectored message.
 *
 * Sizes known (regular gather: every block is m bytes, so a range of k ranks is k·m; every
 * edge into the root, which holds counts): the receiver posts a buffer of exactly that size.
 * Sizes unknown (gatherv below the root: only the root knows counts): the receiver takes the
 * message with `recvAlloc` (MPI_Mprobe + MPI_Mrecv: a buffer of the message's size), so every
 * edge is one message of exactly the subtree's data, α + βD, whatever D.
 */
import { scratchBuffer } from '../../comm/scratch.js';
import type { Communicator } from '../../comm/communicator.js';
import { expectBytes } from '../bytes.js';

/** A subtree's blocks in order, as segments. */
export interface Pieces {
  readonly segs: readonly Uint8Array[];
  readonly bytes: number;
}

export const NO_PIECES: Pieces = { segs: [], bytes: 0 };

/** Concatenation of pieces (segments only, nothing copied). */
export function joinPieces(parts: readonly Pieces[]): Pieces {
  const segs: Uint8Array[] = [];
  let bytes = 0;
  for (const p of parts) {
    for (const s of p.segs) if (s.length > 0) segs.push(s);
    bytes += p.bytes;
  }
  return { segs, bytes };
}

export function piecesOf(block: Uint8Array): Pieces {
  return block.length === 0 ? NO_PIECES : { segs: [block], bytes: block.length };
}

const EMPTY = new Uint8Array(0);

function data(p: Pieces): Uint8Array | readonly Uint8Array[] {
  return p.segs.length === 0 ? EMPTY : p.segs.length === 1 ? p.segs[0] : p.segs;
}

/** Receives `bytes` bytes from `source` (the receiver knows the size). `field` names what a short message means. */
export async function recvKnown(comm: Communicator, source: number, tag: number, bytes: number, field: string): Promise<Pieces> {
  const buf = scratchBuffer(comm, bytes);
  const st = await comm.recv(source, tag, buf);
  expectBytes(comm, field, st, bytes);
  return piecesOf(buf);
}

/** Sends pieces to a receiver that knows their size. */
export function sendKnown(comm: Communicator, dest: number, tag: number, p: Pieces): Promise<void> {
  return comm.send(dest, tag, data(p));
}

/** Receives a subtree's pieces of unknown size (the whole message, in a buffer of its size). */
export async function recvUnknown(comm: Communicator, source: number, tag: number): Promise<Pieces> {
  const { data } = await comm.recvAlloc(source, tag);
  return piecesOf(data);
}
