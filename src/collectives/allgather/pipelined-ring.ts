/**
 * Pipelined ring allgatherv for large irregular blocks (Träff, Ripke, Siebert, Balaji, Thakur
 * and Gropp 2010, "A pipelined algorithm for large, irregular all-gather problems"; cited by
 * Kang19 §3 as ref [16] for the final intragroup allgatherv of Algorithm 1 when q ∤ p).
 *
 * Every block i of m_i bytes is cut into c_i = ⌈m_i/S⌉ near-equal chunks (chunkBytes below:
 * S = max(1, ⌈total/(PIPELINE_CHUNKS_PER_RANK·p)⌉), a function of the counts only, the same on
 * every rank), so that every ring step moves about S bytes whatever the block sizes. Rank r
 * streams to r+1 its own chunks, then every chunk it receives from r−1 except those of block
 * r+1 (r+1's own), in the order received; it receives from r−1 the chunks of blocks r−1, r−2,
 * …, r+1, in that order. Two concurrent streams per rank rather than lock-step rounds: the
 * receive stream posts one irecv at a time, in order; the send stream posts one isend at a
 * time, each as soon as its chunk is there (own, or received) — so a link is never held up by
 * a slower neighbour's step, and chunks of slightly different sizes cost their own size, not
 * the largest in flight (a lock-step version measured up to 1.7 % slower for Kang19 setting
 * 4). In place in recv (the own chunks go out of `send` while the own block is copied into
 * recv), no reordering. No deadlock: every rank always has its next receive posted, and a chunk
 * not yet delivered is always available to send at some rank. The streams start with the
 * handshake (handshake.ts): the number of messages depends on the counts, so a rank with
 * different counts must be caught before it leaves a receive unmatched (one α + 8β message to
 * the left neighbour, at the start).
 *
 * Cost (α+βm): #steps·(α + βS) with #steps ≈ C − c_r (C = Σ c_i ≤ total/S + p) plus a lag of
 * one step per empty block on the way — full duplex ≈ β·Σ_{i≠r} m_i + O(pβS) + (total/S + p)α,
 * i.e. bandwidth-optimal for irregular blocks (the plain ring pays β·max_i m_i every step,
 * (p−1)·β·max m), latency ~ (PIPELINE_CHUNKS_PER_RANK + 1)·p·α instead of (p−1)α. Measured on
 * the simulator (α = 0, full duplex) the streams reach β·Σ_{i≠r} m_i exactly for Kang19's
 * 25/7 blocks with 2, 4, 8 or 32 chunks per rank (the fill overlaps); more chunks only add
 * start-ups, hence 4 (the rule S = ⌈total/(4p)⌉). One-ported: each chunk is a send and a
 * receive on the one port: for equal blocks cut into equal chunks exactly the ring's time
 * (α = 0: 2(p−1)βm + 16β for p even, 2pβm + 24β for p odd; tested), measured up to 2.4 times
 * the full-duplex time for uneven blocks.
 */
import { partStart } from '../../util/parts.js';
import { checkReceived, copyOwn } from './blocks.js';
import { firstStep } from './handshake.js';
import { ALLGATHER_TAGS, type AllgathervInput, type AllgathervVariant } from './types.js';

/** The target number of chunks per rank: S = ⌈total/(this·p)⌉. */
export const PIPELINE_CHUNKS_PER_RANK = 4;

/** The chunk bound S (bytes) for blocks `bytes`: max(1, ⌈total/(PIPELINE_CHUNKS_PER_RANK·p)⌉). */
export function chunkBytes(bytes: readonly number[]): number {
  let total = 0;
  for (const b of bytes) total += b;
  return Math.max(1, Math.ceil(total / (PIPELINE_CHUNKS_PER_RANK * Math.max(1, bytes.length))));
}

/** Chunk count of a block of `m` bytes: ⌈m/S⌉ (0 for an empty block). */
function chunksOf(m: number, s: number): number {
  return Math.ceil(m / s);
}

export async function pipelinedRingAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const { comm, bytes, offsets, recv, send } = input;
  const { rank, size: p } = comm;
  if (p === 1) {
    copyOwn(input);
    return;
  }
  const right = (rank + 1) % p;
  const left = (rank - 1 + p) % p;
  const s = chunkBytes(bytes);
  // The receive sequence: blocks r−1, r−2, …, r+1, each chunk by chunk (byte ranges in recv).
  const recvAt: number[] = [];
  const recvLen: number[] = [];
  let lastBlockChunks = 0;
  for (let d = 1; d < p; d++) {
    const i = (rank - d + p) % p;
    const c = chunksOf(bytes[i], s);
    for (let j = 0; j < c; j++) {
      const a = partStart(bytes[i], c, j);
      recvAt.push(offsets[i] + a);
      recvLen.push(partStart(bytes[i], c, j + 1) - a);
    }
    if (d === p - 1) lastBlockChunks = c;
  }
  const nRecv = recvAt.length;
  const own = bytes[rank];
  const ownChunks = chunksOf(own, s);
  // The send sequence: own chunks, then the receive sequence without block r+1 (its tail).
  const nSend = ownChunks + nRecv - lastBlockChunks;
  const sendView = (u: number): Uint8Array => {
    if (u < ownChunks) return send.subarray(partStart(own, ownChunks, u), partStart(own, ownChunks, u + 1));
    const t = u - ownChunks;
    return recv.subarray(recvAt[t], recvAt[t] + recvLen[t]);
  };
  // Two concurrent streams: receives from the left one chunk at a time, in order; sends to
  // the right one chunk at a time, each as soon as it is available (own, or received).
  let received = 0;
  let wake: (() => void) | undefined;
  // The message count depends on the counts: a rank whose counts differ would leave a receive
  // unmatched. So the streams start with the handshake (handshake.ts; 8 bytes to the left,
  // from the right): the receive stream takes no chunk before its fingerprint matched.
  const first = firstStep(input, 'pipelined-ring', ALLGATHER_TAGS.handshake, [], []);
  const receiving = (async () => {
    await first.received();
    for (let t = 0; t < nRecv; t++) {
      const st = await comm.irecv(left, tag, recv.subarray(recvAt[t], recvAt[t] + recvLen[t]));
      checkReceived(comm, st, recvLen[t]);
      received++;
      const w = wake;
      wake = undefined;
      w?.();
    }
  })();
  const sending = (async () => {
    await first.w;
    for (let u = 0; u < nSend; u++) {
      while (u >= ownChunks && u - ownChunks >= received) await new Promise<void>((resolve) => (wake = resolve));
      await comm.isend(right, tag, sendView(u));
    }
  })();
  copyOwn(input); // overlaps the first transfer (the own chunks go out of `send`)
  await Promise.all([receiving, sending]);
}

export const PIPELINED_RING_ALLGATHER: AllgathervVariant = {
  name: 'pipelined-ring',
  description:
    'pipelined ring (Träff et al. 2010): blocks cut into chunks of ≈ total/(4p) bytes streamed around the ring; bandwidth-optimal for large irregular blocks',
  run: (input) => pipelinedRingAllgatherv(input, ALLGATHER_TAGS.pipelinedRing),
};
