/**
 * basicAllgather (regular allgather), the building block other collectives use: every rank's block of m
 * bytes (the same m everywhere) lands in every rank's `recv` at offset rank·m. A thin wrapper
 * over the allgather algorithms of collectives/allgather/ (one implementation each), on its
 * own tag BASIC_TAG.allgather:
 * - p a power of two: recursive doubling (Thakur, Rabenseifner and Gropp 2005; Chan et al.
 *   2007 as cited by Traff18 §1), in place in `recv` (allgather/recursive-doubling.ts).
 * - otherwise: Bruck et al. (1997), ⌈log₂p⌉ rounds and one final rotation copy
 *   (allgather/bruck.ts).
 * Cost (full duplex): ⌈log₂p⌉α + β(p−1)m, plus γ(p−1)m for Bruck's rotation (the own block's
 * copy γm overlaps the first round when γm ≤ α+βm). One-ported half duplex: every exchange
 * takes two transfers.
 * A block of a different length is detected by the rank receiving it (InvalidArgumentError
 * ('send') for fewer bytes, a truncation CommunicationError for more); recv not p·m bytes is
 * InvalidArgumentError('recv'), send or recv not a Uint8Array names that field.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { allgatherInput } from '../allgather/args.js';
import { placeOwnData, type PaddedBlocks } from '../allgather/padded.js';
import { regularLayout } from '../allgather/shared-layout.js';
import type { AllgathervInput } from '../allgather/types.js';
import { bruckAllgatherv } from '../allgather/bruck.js';
import { recursiveDoublingAllgatherv } from '../allgather/recursive-doubling.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { beginCall } from '../call-scope.js';

export interface BasicAllgatherArgs {
  /** This rank's block (m bytes, the same m on every rank). */
  readonly send: Uint8Array;
  /** p·m bytes. */
  readonly recv: Uint8Array;
}

export async function basicAllgather(comm: Communicator, args: BasicAllgatherArgs): Promise<void> {
  comm = beginCall(comm);
  // No handshake (allgather/handshake.ts): the algorithm depends on p alone and every message's
  // length is checked, so a rank with another m fails the run without one.
  await run({ ...allgatherInput(comm, args), handshake: false });
}

/**
 * basicAllgather of padded blocks (allgather/padded.ts: the scatter-allgather broadcast's
 * pieces): `send` is this rank's block (blocks.stride bytes: its piece's data, the padding,
 * the trailer); every block's data lands in `blocks.data`, the padding and trailers nowhere.
 * The algorithm, messages, copies and times of basicAllgather with a receive buffer of
 * p·stride bytes, without that buffer (nor Bruck's 'tmp').
 */
export async function paddedAllgather(comm: Communicator, send: Uint8Array, blocks: PaddedBlocks): Promise<void> {
  comm = beginCall(comm);
  const { bytes, offsets } = regularLayout(comm.size, blocks.stride);
  if (send.length !== blocks.stride) throw new InvalidArgumentError('send', `holds ${send.length} bytes, a padded block ${blocks.stride}`, { rank: comm.rank });
  placeOwnData(comm.rank, send, blocks); // its copy in the schedule is charged, and moves nothing
  await run({ comm, send, recv: blocks.data, bytes, offsets, sizesField: 'send', handshake: false, padded: blocks });
}

/** Recursive doubling for p a power of two, else Bruck. */
async function run(input: AllgathervInput): Promise<void> {
  const p = input.comm.size;
  if ((p & (p - 1)) === 0) await recursiveDoublingAllgatherv(input, BASIC_TAG.allgather);
  else await bruckAllgatherv(input, BASIC_TAG.allgather);
}
