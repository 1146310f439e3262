/**
 * The allgather(v) handshake: how every algorithm makes sure that all ranks run the same
 * algorithm on the same block sizes before any receive that could be left unmatched.
 *
 * No rank can see locally that another passed a different m (allgather), different counts
 * (allgatherv) or a different algorithm — and `auto` picks from the sizes, so different sizes
 * can mean different algorithms, tags and partners: a hang, or, where only the sum of a
 * message's blocks is checked (Bruck), silently misplaced data. So every algorithm's first
 * message goes to the LEFT neighbour r−1, on one tag all algorithms share (ALLGATHER_TAGS
 * .handshake), and starts with an 8-byte fingerprint of the algorithm's name and the block
 * sizes as this rank sees them; the first receive, from the right neighbour r+1, compares it
 * with this rank's own. Every rank's first step is the same whatever it chose, so these messages
 * always match; if every rank's right neighbour agrees, all ranks agree (the ring is connected),
 * and a rank whose neighbour disagrees (another fingerprint, or a first message of another
 * length) throws an InvalidArgumentError (field 'send' for allgather's m, 'counts' for
 * allgatherv), and the transports fail the others fast.
 *
 * Cost: 8 bytes more on one message (ring, Bruck: their first step goes to the left anyway);
 * one extra message, α + 8β, for the algorithms whose first message goes elsewhere (recursive
 * doubling, the pipelined ring).
 */
import type { Communicator, MessageData, Request, Status } from '../../comm/communicator.js';
import { byteLength } from '../../comm/segments.js';
import { InvalidArgumentError, TruncationError } from '../../errors.js';
import { checkReceived } from './blocks.js';
import { ALLGATHER_TAGS, type AllgathervInput } from './types.js';

/** Bytes of the fingerprint. */
export const FINGERPRINT_BYTES = 8;

/**
 * Fingerprints of frozen size arrays, by algorithm name: the ranks of one process (a
 * simulation's) pass the same frozen arrays (shared-layout.ts), and hashing them on every rank
 * would cost O(p) per rank, O(p²) in all.
 */
const FINGERPRINTS = new WeakMap<readonly number[], Map<string, Uint8Array>>();

/**
 * A 2×32-bit FNV-1a-style fingerprint of an algorithm's name and the block sizes (8 bytes, a
 * new array on every call; computed once per frozen `bytes` and name).
 */
export function fingerprint(algorithm: string, bytes: readonly number[]): Uint8Array {
  if (!Object.isFrozen(bytes)) return computeFingerprint(algorithm, bytes);
  let byName = FINGERPRINTS.get(bytes);
  if (byName === undefined) {
    byName = new Map();
    FINGERPRINTS.set(bytes, byName);
  }
  let fp = byName.get(algorithm);
  if (fp === undefined) {
    fp = computeFingerprint(algorithm, bytes);
    byName.set(algorithm, fp);
  }
  return fp.slice();
}

function computeFingerprint(algorithm: string, bytes: readonly number[]): Uint8Array {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ bytes.length;
  for (let i = 0; i < algorithm.length; i++) h1 = Math.imul(h1 ^ algorithm.charCodeAt(i), 0x01000193) >>> 0;
  for (const b of bytes) {
    h1 = Math.imul(h1 ^ (b >>> 0), 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ Math.floor(b / 2 ** 32) ^ (b & 0xffff), 0x5bd1e995) >>> 0;
  }
  return new Uint8Array(Uint32Array.of(h1, h2).buffer);
}

function asList(d: MessageData): readonly ArrayBufferView[] {
  return ArrayBuffer.isView(d) ? [d] : d;
}

/** The first step of an allgather algorithm, with the fingerprint in front of its payloads. */
export interface FirstStep {
  /** The send to the left neighbour (fingerprint + `payload`). */
  readonly w: Request<void>;
  /**
   * Waits for the receive from the right neighbour (fingerprint + `into`) and checks it: a
   * different fingerprint, a shorter message or a longer one (the transport's truncation) all
   * mean the neighbour passed other sizes or another algorithm — InvalidArgumentError.
   */
  received(): Promise<void>;
}

/**
 * Posts the first step of `algorithm`: sends [fingerprint, payload] to rank − 1 and receives
 * [fingerprint, into] from rank + 1, on the handshake tag. p ≥ 2. With `input.handshake` false,
 * the same step without the fingerprint, on the algorithm's own `tag`.
 */
export function firstStep(input: AllgathervInput, algorithm: string, tag: number, payload: MessageData, into: MessageData): FirstStep {
  const { comm } = input;
  const p = comm.size;
  const left = (comm.rank - 1 + p) % p;
  const right = (comm.rank + 1) % p;
  if (input.handshake === false) {
    const r = comm.irecv(right, tag, into);
    const w = comm.isend(left, tag, payload);
    const expected = byteLength(into);
    return { w, received: async () => checkReceived(comm, await r, expected) };
  }
  const mine = fingerprint(algorithm, input.bytes);
  const theirs = new Uint8Array(FINGERPRINT_BYTES);
  const expected = FINGERPRINT_BYTES + byteLength(into);
  const r = comm.irecv(right, ALLGATHER_TAGS.handshake, [theirs, ...asList(into)]);
  const w = comm.isend(left, ALLGATHER_TAGS.handshake, [mine, ...asList(payload)]);
  return {
    w,
    async received(): Promise<void> {
      let st: Status;
      try {
        st = await r;
      } catch (e) {
        if (e instanceof TruncationError) disagree(comm, input, right, algorithm, e);
        throw e;
      }
      for (let j = 0; j < FINGERPRINT_BYTES; j++) {
        if (theirs[j] !== mine[j]) disagree(comm, input, right, algorithm);
      }
      if (st.bytes !== expected) disagree(comm, input, right, algorithm);
    },
  };
}

/** The handshake alone (for algorithms whose first message goes elsewhere): α + 8β. */
export async function handshake(input: AllgathervInput, algorithm: string): Promise<void> {
  if (input.comm.size === 1 || input.handshake === false) return;
  const step = firstStep(input, algorithm, ALLGATHER_TAGS.handshake, [], []);
  await step.received();
  await step.w;
}

function disagree(comm: Communicator, input: AllgathervInput, right: number, algorithm: string, cause?: unknown): never {
  const field = input.sizesField ?? 'counts';
  const what = field === 'send' ? 'a different block size (send length)' : 'different counts';
  throw new InvalidArgumentError(field, `rank ${right} passed ${what} or another algorithm than this rank (${algorithm}): every rank must pass the same`, {
    rank: comm.rank,
    cause,
  });
}
