/**
 * How one tree edge of the hierarchical gathers carries a subtree's blocks: as a list of
 * segments (the blocks received from the children and the rank's own block, never copied
 * into one buffer) sent as one vectored message, and — when the receiver cannot know the
 * size — with the size in front.
 *
 * Sizes known (regular gather: every block is m bytes, so a range of k ranks is k·m; every
 * edge into the root, which holds counts): the receiver posts a buffer of exactly that size.
 *
 * Sizes unknown (gatherv below the root: only the root knows counts): the sender puts an
 * 8-byte header (the subtree's byte count D, float64 little-endian) in front.
 * - D ≤ EAGER_BYTES: one message header + data; the receiver posts 8 + EAGER_BYTES bytes and
 *   keeps the data as a view of that buffer (no copy). Cost: α + β(8 + D), as without header.
 * - D > EAGER_BYTES: the header alone, then the data into a buffer of exactly D bytes. Cost:
 *   one more α per edge (α + 8β), which is at most α/(β·EAGER_BYTES) of the transfer.
 * So small problems — where rounds matter — keep ⌈log₂N⌉ + ⌈log₂n⌉ rounds; large ones pay one
 * extra α per edge whose receiver is not the root. The memory cost is EAGER_BYTES + 8 per
 * eager receive.
 */
import type { Communicator } from '../../comm/communicator.js';
import { CommunicationError } from '../../errors.js';
import { expectBytes } from '../basic/validate.js';
import { EAGER_BYTES } from './types.js';

/** A subtree's blocks in order, as segments. */
export interface Pieces {
  readonly segs: readonly Uint8Array[];
  readonly bytes: number;
}

export const NO_PIECES: Pieces = { segs: [], bytes: 0 };

const HEADER = 8;

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
  const buf = new Uint8Array(bytes);
  const st = await comm.recv(source, tag, buf);
  expectBytes(comm, field, st, bytes);
  return piecesOf(buf);
}

/** Sends pieces to a receiver that knows their size. */
export function sendKnown(comm: Communicator, dest: number, tag: number, p: Pieces): Promise<void> {
  return comm.send(dest, tag, data(p));
}

function header(bytes: number): Uint8Array {
  const h = new Uint8Array(HEADER);
  new DataView(h.buffer).setFloat64(0, bytes, true);
  return h;
}

/** Sends pieces with their size in front (eager up to EAGER_BYTES, else header then data). */
export async function sendSized(comm: Communicator, dest: number, tag: number, p: Pieces): Promise<void> {
  const h = header(p.bytes);
  if (p.bytes <= EAGER_BYTES) {
    await comm.send(dest, tag, [h, ...p.segs]);
    return;
  }
  await comm.waitAll([comm.isend(dest, tag, h), comm.isend(dest, tag, data(p))]);
}

/** Receives what `sendSized` sent. */
export async function recvSized(comm: Communicator, source: number, tag: number): Promise<Pieces> {
  const buf = new Uint8Array(HEADER + EAGER_BYTES);
  const st = await comm.recv(source, tag, buf);
  const bad = (what: string): CommunicationError =>
    new CommunicationError(`hierarchical gatherv: ${what} from rank ${source}`, { rank: comm.rank });
  if (st.bytes < HEADER) throw bad(`a ${st.bytes}-byte message where a size header was expected`);
  const d = new DataView(buf.buffer).getFloat64(0, true);
  if (!Number.isSafeInteger(d) || d < 0) throw bad(`a bad size header (${d})`);
  if (d <= EAGER_BYTES) {
    if (st.bytes !== HEADER + d) throw bad(`${st.bytes - HEADER} data bytes under a header of ${d}`);
    return d === 0 ? NO_PIECES : { segs: [buf.subarray(HEADER, HEADER + d)], bytes: d };
  }
  if (st.bytes !== HEADER) throw bad(`${st.bytes - HEADER} eager bytes under a header of ${d} (> ${EAGER_BYTES})`);
  const out = new Uint8Array(d);
  const st2 = await comm.recv(source, tag, out);
  if (st2.bytes !== d) throw bad(`${st2.bytes} bytes after a header of ${d}`);
  return piecesOf(out);
}
