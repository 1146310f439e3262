/**
 * Block helpers the allgather algorithms share: a block's view in `recv`, the source of a
 * block when sending (this rank's own block is sent straight from `send`, so its copy into
 * `recv` can overlap the first transfer), vectored messages of several blocks in place, and
 * the received-length check. Cost: O(blocks) per message besides the bytes.
 */
import type { Communicator, Status } from '../../comm/communicator.js';
import { expectBytes } from '../bytes.js';
import type { AllgathervInput } from './types.js';

const EMPTY = new Uint8Array(0);

/** Block `i`'s place in recv. */
export function recvBlock(input: AllgathervInput, i: number): Uint8Array {
  const at = input.offsets[i];
  return input.recv.subarray(at, at + input.bytes[i]);
}

/** Where block `i` is sent from: `send` for this rank's own block, else its place in recv. */
export function sendBlock(input: AllgathervInput, i: number): Uint8Array {
  return i === input.comm.rank ? input.send : recvBlock(input, i);
}

/** One message of the blocks `ranks` in that order (empty blocks left out): a view, segments or nothing. */
export function blocksMessage(input: AllgathervInput, ranks: readonly number[], sending: boolean): Uint8Array | Uint8Array[] {
  const segs: Uint8Array[] = [];
  for (const i of ranks) if (input.bytes[i] > 0) segs.push(sending ? sendBlock(input, i) : recvBlock(input, i));
  if (segs.length === 0) return EMPTY;
  return segs.length === 1 ? segs[0] : segs;
}

/** Total bytes of the blocks `ranks`. */
export function blocksBytes(input: AllgathervInput, ranks: readonly number[]): number {
  let n = 0;
  for (const i of ranks) n += input.bytes[i];
  return n;
}

/** This rank's own block from send into recv (a local copy, γ per byte on the simulator). */
export function copyOwn(input: AllgathervInput): void {
  const { comm } = input;
  if (input.bytes[comm.rank] > 0) comm.copy(recvBlock(input, comm.rank), input.send);
}

/** A message of `expected` bytes: anything shorter means some rank's buffers differ (field 'send'). */
export function checkReceived(comm: Communicator, st: Status, expected: number): void {
  expectBytes(comm, 'send', st, expected);
}
