/**
 * bcast: broadcast of `buf` from `root`. Every rank passes a buffer of the same length; a
 * shorter message than expected is an InvalidArgumentError('buf'), a longer one a truncation
 * CommunicationError on the receiver.
 *
 * - 'binomial' (default): the ordered binomial tree of tree.ts (Chan et al. 2007 as cited by
 *   Traff18 §1). Every rank receives the whole buffer once from its parent, then sends it to
 *   its children, largest subtree first. Cost (one-ported, m bytes): ⌈log₂p⌉(α + βm);
 *   exactly k(α + βm) for p = 2^k. Its data phase is a schedule run by the transport's
 *   executor (schedule.ts).
 * - 'scatter-allgather' (long messages; van de Geijn, as surveyed by Chan et al. 2007): the
 *   buffer is cut into p pieces of ⌈m/p⌉ bytes (the last ones padded), the root scatters them
 *   (binomial, scatter.ts) and every rank allgathers them (allgather.ts). Cost (full duplex,
 *   γ = 0): 2⌈log₂p⌉α + 2β(p−1)⌈m/p⌉ ≈ 2⌈log₂p⌉α + 2βm, against ⌈log₂p⌉βm for the tree. When p
 *   does not divide m, each piece also carries the root's m (8 bytes: 2β(p−1)·8 more) so that a
 *   rank whose length rounds to the same piece size but differs is rejected, plus the copies
 *   in and out of the padded buffer. Memory: the root's padded buffer, p(⌈m/p⌉ + 8) bytes;
 *   elsewhere O(⌈m/p⌉ + 8) besides `buf` (the allgather places each piece's data in `buf`
 *   and keeps no padding or trailer: allgather/padded.ts).
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { basicAllgather, paddedAllgather } from './allgather.js';
import { scatter } from './scatter.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { runBcastSchedule } from './schedule.js';
import { checkBytes, checkRoot } from './validate.js';
import { beginCall } from '../call-scope.js';

export type BcastAlgorithm = 'binomial' | 'scatter-allgather';

export interface BcastOptions {
  /** Default 'binomial'; every rank must pass the same. */
  readonly algorithm?: BcastAlgorithm;
}

export async function bcast(comm: Communicator, buf: Uint8Array, root: number, options?: BcastOptions): Promise<void> {
  comm = beginCall(comm);
  checkRoot(comm, root);
  checkBytes(comm, 'buf', buf);
  const algorithm = options?.algorithm ?? 'binomial';
  if (algorithm === 'scatter-allgather') return scatterAllgather(comm, buf, root);
  if (algorithm !== 'binomial') {
    throw new InvalidArgumentError('algorithm', `must be 'binomial' or 'scatter-allgather', got ${String(algorithm)}`, { rank: comm.rank });
  }
  // the data phase is a schedule (schedule.ts): one native run per call
  await runBcastSchedule(comm, buf, root, BASIC_TAG.bcast);
}

/** Bytes of the length trailer of each piece when p does not divide the length. */
const TRAILER = 8;

async function scatterAllgather(comm: Communicator, buf: Uint8Array, root: number): Promise<void> {
  const p = comm.size;
  const n = buf.length;
  if (n % p === 0) {
    // p pieces of n/p bytes back to back in `buf` itself: no copy. A rank whose length differs
    // from the root's gets pieces of another size: scatter or allgather reject it.
    const mine = new Uint8Array(n / p);
    await scatter(comm, { send: comm.rank === root ? buf : undefined, recv: mine, root });
    await basicAllgather(comm, { send: mine, recv: buf });
    return;
  }
  // p pieces of ⌈n/p⌉ bytes (the last ones padded), each followed by the root's length n, so
  // that a rank whose length differs but rounds to the same piece size is told so (never a
  // truncated or padded copy in silence).
  const piece = Math.ceil(n / p);
  const stride = piece + TRAILER;
  const whole = comm.rank === root ? paddedPieces(comm, buf, piece, stride) : undefined;
  const mine = new Uint8Array(stride);
  await scatter(comm, { send: whole, recv: mine, root });
  const rootLength = new DataView(mine.buffer).getFloat64(piece, true);
  if (rootLength !== n) {
    throw new InvalidArgumentError('buf', `holds ${n} bytes, the root's holds ${rootLength}; every rank must pass the same length`, { rank: comm.rank });
  }
  // The allgather of the padded pieces: its messages as long as ever, but no rank holds the
  // p·stride bytes of padding and trailers (O(p²) over a simulation's ranks): each piece's
  // data lands in `buf` directly (allgather/padded.ts).
  await paddedAllgather(comm, mine, { piece, stride, data: buf });
  if (comm.rank !== root) chargeCopiesOut(comm, n, piece);
}

/** At the root: the p padded pieces of `buf`, each followed by its length n (one copy per piece, as ever). */
function paddedPieces(comm: Communicator, buf: Uint8Array, piece: number, stride: number): Uint8Array {
  const p = comm.size;
  const n = buf.length;
  const whole = new Uint8Array(stride * p);
  const view = new DataView(whole.buffer);
  for (let i = 0; i < p; i++) {
    const from = Math.min(n, i * piece);
    comm.copy(whole.subarray(i * stride, i * stride + Math.min(n, from + piece) - from), buf.subarray(from, Math.min(n, from + piece)));
    view.setFloat64(i * stride + piece, n, true);
  }
  return whole;
}

/**
 * The copies of the pieces out of the padded buffer into `buf`, one per non-empty piece, each
 * charged as the algorithm makes it (γ per byte on the simulator, in piece order): their bytes
 * are in place already (paddedAllgather), so the simulator charges them without moving
 * anything, in O(1) when they cost nothing; real transports have nothing to do.
 */
function chargeCopiesOut(comm: Communicator, n: number, piece: number): void {
  const clock = comm.clock;
  if (clock === undefined || n === 0) return;
  const pieces = Math.ceil(n / piece);
  clock.chargeCopies(piece, pieces - 1);
  clock.chargeCopies(n - (pieces - 1) * piece, 1);
}
