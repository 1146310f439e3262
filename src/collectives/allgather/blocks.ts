/**
 * Block helpers the allgather algorithms' program code shares (the handshake and the pipelined
 * ring; the compiled data phases address blocks as spans, schedule-parts.ts): a block's view in
 * `recv`, the own block's copy, and the received-length check. O(1) each besides the bytes.
 */
import type { Communicator, Status } from '../../comm/communicator.js';
import { expectBytes } from '../bytes.js';
import type { AllgathervInput } from './types.js';

/** Block `i`'s place in recv. */
export function recvBlock(input: AllgathervInput, i: number): Uint8Array {
  const at = input.offsets[i];
  return input.recv.subarray(at, at + input.bytes[i]);
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
