/**
 * allgather (regular): every rank's block of m bytes (the same m everywhere) lands in every
 * rank's `recv` at offset rank·m.
 * - p a power of two: recursive doubling (Thakur, Rabenseifner and Gropp 2005; Chan et al.
 *   2007 as cited by seed 000 §1), in place in `recv`: in round k a rank exchanges the 2^k
 *   blocks of its aligned group with the partner group rank ⊕ 2^k.
 * - otherwise: Bruck et al. (1997): in round k a rank sends the first min(2^k, p−2^k) blocks
 *   of its rotated buffer to rank − 2^k and receives as many from rank + 2^k; one final
 *   rotation copy puts the blocks in rank order.
 * Cost (full duplex): ⌈log₂p⌉α + β(p−1)m, plus γm for the own block (and γpm for Bruck's
 * rotation). One-ported half duplex: every exchange takes two transfers.
 * A block of a different length is detected by the rank receiving it (InvalidArgumentError
 * ('send') for fewer bytes, a truncation CommunicationError for more).
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { sendrecv } from './sendrecv.js';
import { BASIC_TAG } from './tags.js';
import { checkBytes, expectBytes } from './validate.js';

export interface AllgatherArgs {
  /** This rank's block (m bytes, the same m on every rank). */
  readonly send: Uint8Array;
  /** p·m bytes. */
  readonly recv: Uint8Array;
}

export async function allgather(comm: Communicator, args: AllgatherArgs): Promise<void> {
  const send = checkBytes(comm, 'send', args.send);
  const recv = checkBytes(comm, 'recv', args.recv);
  const { rank, size: p } = comm;
  const m = send.length;
  if (recv.length !== p * m) {
    throw new InvalidArgumentError('recv', `holds ${recv.length} bytes, p·m = ${p}·${m} = ${p * m} needed`, { rank });
  }
  if ((p & (p - 1)) === 0) await recursiveDoubling(comm, send, recv, m);
  else await bruck(comm, send, recv, m);
}

async function recursiveDoubling(comm: Communicator, send: Uint8Array, recv: Uint8Array, m: number): Promise<void> {
  const { rank, size: p } = comm;
  comm.copy(recv.subarray(rank * m, (rank + 1) * m), send);
  for (let mask = 1; mask < p; mask *= 2) {
    const partner = rank ^ mask;
    const mine = rank & ~(mask - 1);
    const theirs = partner & ~(mask - 1);
    const st = await sendrecv(
      comm,
      BASIC_TAG.allgather,
      partner,
      recv.subarray(mine * m, (mine + mask) * m),
      partner,
      recv.subarray(theirs * m, (theirs + mask) * m),
    );
    expectBytes(comm, 'send', st, mask * m);
  }
}

async function bruck(comm: Communicator, send: Uint8Array, recv: Uint8Array, m: number): Promise<void> {
  const { rank, size: p } = comm;
  // tmp block j holds the block of rank (rank + j) mod p.
  const tmp = new Uint8Array(p * m);
  comm.copy(tmp.subarray(0, m), send);
  for (let d = 1; d < p; d *= 2) {
    const n = Math.min(d, p - d);
    const to = (rank - d + p) % p;
    const from = (rank + d) % p;
    const st = await sendrecv(comm, BASIC_TAG.allgather, to, tmp.subarray(0, n * m), from, tmp.subarray(d * m, (d + n) * m));
    expectBytes(comm, 'send', st, n * m);
  }
  comm.copy(recv.subarray(rank * m), tmp.subarray(0, (p - rank) * m));
  comm.copy(recv.subarray(0, rank * m), tmp.subarray((p - rank) * m));
}
