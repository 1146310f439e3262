/**
 * Ring allgather / allgatherv (Chan et al. 2007 §5; Träff, Ripke, Siebert, Balaji, Thakur and
 * Gropp 2010, the irregular case: Kang19 §3, refs [12], [16]). In step s = 0 … p−2 rank r
 * sends block (r+s) mod p to r−1 and receives block (r+s+1) mod p from r+1, in place in recv
 * (receive and send at once); the own block goes out of `send` in step 0 while it is copied
 * into recv, so the copy overlaps the first transfer. Step 0 is the handshake (handshake.ts,
 * program code): its message carries the 8-byte fingerprint of the sizes in front of the
 * block. Everything after it is a compiled schedule (ringSchedule; schedule.ts): the own
 * block's copy, issued while step 0 is in flight, then steps 1 … p−2, run by the transport's
 * executor (schedule/run.ts bindSchedule) rather than one await per message.
 *
 * Cost (α+βm, blocks m_i): full duplex Σ_s (α + β·max_r m_{(r+s+1) mod p}) + 8β — for equal
 * blocks exactly (p−1)(α+βm) + 8β (when γm ≤ α+βm). One-ported, equal blocks: p even, every
 * step is a cycle of p transfers taking two rounds, 2(p−1)(α+βm) + 16β; p odd ≥ 3, the odd
 * cycle needs a third round that consecutive steps absorb except once, 2p(α+βm) + 24β (both
 * exact on the simulator, test/allgather.test.ts). Bandwidth-optimal (every rank receives
 * each block once), latency linear in p.
 */
import type { RankSchedule, ScheduleStep } from '../../comm/schedule.js';
import { recvBlock } from './blocks.js';
import { firstStep } from './handshake.js';
import {
  addStep,
  bindBuffers,
  blockSpan,
  describeAllgather,
  ownCopy,
  recv,
  runAfterFirstStep,
  scheduleBuffers,
  send,
  type AllgatherRankDescription,
} from './schedule-parts.js';
import { ALLGATHER_TAGS, type AllgathervInput, type AllgathervVariant } from './types.js';

/**
 * This rank's schedule of the ring after its step 0 (the handshake, program code): the own
 * block's copy (a step of its own, issued while step 0 is in flight), then steps s = 1 … p−2,
 * each [receive block (r+s+1) mod p from r+1, send block (r+s) mod p to r−1] at once.
 * `withFirst`: step 0 included instead of the copy's step, [receive block r+1, send the own
 * block, the own copy], as it runs without the handshake (no fingerprint, on `tag`).
 */
export function ringSchedule(d: AllgatherRankDescription, tag: number, withFirst = false): RankSchedule {
  const { rank, p } = d;
  const steps: ScheduleStep[] = [];
  const left = (rank - 1 + p) % p;
  const right = (rank + 1) % p;
  if (withFirst && p > 1) addStep(steps, [recv(right, tag, blockSpan(d, right, false)), send(left, tag, blockSpan(d, rank, true)), ...ownCopy(d)]);
  else addStep(steps, ownCopy(d));
  for (let s = 1; s < p - 1; s++) {
    const out = (rank + s) % p;
    const inn = (rank + s + 1) % p;
    addStep(steps, [recv(right, tag, blockSpan(d, inn, false)), send(left, tag, blockSpan(d, out, true))]);
  }
  return { rank, buffers: scheduleBuffers(d), steps };
}

export async function ringAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const { comm } = input;
  const { rank, size: p } = comm;
  const schedule = ringSchedule(describeAllgather(input), tag);
  const buffers = bindBuffers(input, schedule);
  const lead = input.bytes[rank] > 0 ? 1 : 0; // the own copy overlaps step 0
  const first = p === 1 ? undefined : firstStep(input, 'ring', tag, input.send, recvBlock(input, (rank + 1) % p));
  await runAfterFirstStep(input, schedule, buffers, first, lead);
}

export const RING_ALLGATHER: AllgathervVariant = {
  name: 'ring',
  description: 'ring (Chan et al. 2007, Träff et al. 2010): p−1 steps to the neighbour, in place; bandwidth-optimal, for large blocks',
  run: (input) => ringAllgatherv(input, ALLGATHER_TAGS.ring),
};
