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
 * receive stream posts one receive at a time, in order; the send stream posts one send at a
 * time, each as soon as its chunk is there (own, or received) — so a link is never held up by
 * a slower neighbour's step, and chunks of slightly different sizes cost their own size, not
 * the largest in flight (a lock-step version measured up to 1.7 % slower for Kang19 setting
 * 4). In place in recv (the own chunks go out of `send` while the own block is copied into
 * recv), no reordering. No deadlock: every rank always has its next receive posted, and a chunk
 * not yet delivered is always available to send at some rank (schedule/check.ts checks each
 * compiled schedule). The streams follow the handshake (handshake.ts): the number of messages
 * depends on the counts, so a rank with different counts must be caught before it leaves a
 * receive unmatched (one α + 8β message to the left neighbour, at the start).
 *
 * The streams are a compiled schedule (pipelinedRingSchedule: one step whose `streams` are the
 * receives and the sends, window 1 each, every forwarded chunk's send `after` its receive;
 * comm/schedule.ts), run by the transport's executor once the handshake has completed — in C
 * over MPI, in the channels' executor on threads, in the engine on the simulator — not one
 * await per chunk.
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
import type { RankSchedule, ScheduleOp, ScheduleStep, Span } from '../../comm/schedule.js';
import { partStart } from '../../util/parts.js';
import { firstStep } from './handshake.js';
import {
  addStep,
  bindBuffers,
  describeAllgather,
  ownCopy,
  recv,
  RECV,
  runAfterFirstStep,
  scheduleBuffers,
  send,
  SEND,
  span,
  type AllgatherRankDescription,
} from './schedule-parts.js';
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

/**
 * This rank's schedule of the pipelined ring after the handshake (handshake.ts, program code):
 * step 0 the own block's copy (issued while the handshake is in flight; none when empty), then
 * one step of two streams, one operation outstanding each (comm/schedule.ts `streams`): the
 * receives from r−1 of the chunks of blocks r−1, r−2, …, r+1, in order, into their places in
 * recv; the sends to r+1 of the own chunks (from 'send'), then of every received chunk but
 * block r+1's, each after its receive (`after`).
 */
export function pipelinedRingSchedule(d: AllgatherRankDescription, tag: number): RankSchedule {
  const { rank, p, bytes, offsets } = d;
  const steps: ScheduleStep[] = [];
  addStep(steps, ownCopy(d));
  if (p > 1) {
    const right = (rank + 1) % p;
    const left = (rank - 1 + p) % p;
    const s = chunkBytes(bytes);
    // the chunks received, in order: blocks r−1, r−2, …, r+1
    const chunks: Span[] = [];
    let lastBlockChunks = 0;
    for (let dist = 1; dist < p; dist++) {
      const i = (rank - dist + p) % p;
      const c = chunksOf(bytes[i], s);
      for (let j = 0; j < c; j++) {
        const a = partStart(bytes[i], c, j);
        chunks.push(span(RECV, offsets[i] + a, partStart(bytes[i], c, j + 1) - a));
      }
      if (dist === p - 1) lastBlockChunks = c;
    }
    const recvs = chunks.map((c) => recv(left, tag, c));
    const own = bytes[rank];
    const ownChunks = chunksOf(own, s);
    const sends: ScheduleOp[] = [];
    const after: number[] = new Array<number>(recvs.length).fill(-1);
    for (let u = 0; u < ownChunks; u++) {
      const a = partStart(own, ownChunks, u);
      sends.push(send(right, tag, span(SEND, a, partStart(own, ownChunks, u + 1) - a)));
      after.push(-1);
    }
    for (let t = 0; t < recvs.length - lastBlockChunks; t++) {
      sends.push(send(right, tag, chunks[t]));
      after.push(t);
    }
    const ops = [...recvs, ...sends];
    if (ops.length > 0) steps.push({ ops, window: 1, streams: [recvs.length, sends.length], after });
  }
  return { rank, buffers: scheduleBuffers(d), steps };
}

/**
 * The pipelined ring: the handshake (program code; its receive checked before any chunk is
 * received), the own copy overlapping it, then the compiled streams (pipelinedRingSchedule)
 * run by the transport's executor.
 */
export async function pipelinedRingAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const { comm } = input;
  const schedule = pipelinedRingSchedule(describeAllgather(input), tag);
  const buffers = bindBuffers(input, schedule);
  const lead = input.bytes[comm.rank] > 0 ? 1 : 0; // the own copy overlaps the handshake
  const first = comm.size === 1 ? undefined : firstStep(input, 'pipelined-ring', ALLGATHER_TAGS.handshake, [], []);
  await runAfterFirstStep(input, schedule, buffers, first, lead);
}

export const PIPELINED_RING_ALLGATHER: AllgathervVariant = {
  name: 'pipelined-ring',
  description:
    'pipelined ring (Träff et al. 2010): blocks cut into chunks of ≈ total/(4p) bytes streamed around the ring; bandwidth-optimal for large irregular blocks',
  run: (input) => pipelinedRingAllgatherv(input, ALLGATHER_TAGS.pipelinedRing),
};
