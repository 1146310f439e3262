/**
 * Recursive-doubling allgather (Thakur, Rabenseifner and Gropp 2005 §4.1; Kang19 §3, ref
 * [15]), in place in recv, any block sizes. Let q = 2^⌊log₂p⌋ and e = p − q.
 * - p = q: in round k = 0 … log₂p − 1 rank r exchanges, with partner r ⊕ 2^k, all blocks of
 *   its aligned group of 2^k ranks (one vectored message each way).
 * - p ≠ q (our choice; MPICH instead runs a distance-halving repair of the missing blocks):
 *   the e extra ranks fold in. Pre-step: rank q+i (i < e) sends its block to rank i. Then the
 *   first q ranks run recursive doubling where rank i's "block" is blocks i and q+i. Post-step:
 *   rank i sends all p−1 blocks but q+i's to rank q+i.
 * Cost (full duplex, equal blocks m, γm ≤ α+βm for the overlapped own copy):
 *   p = 2^k: kα + β(p−1)m. One-ported: every exchange is two transfers, 2kα + 2β(p−1)m.
 *   otherwise (full duplex): (⌊log₂p⌋+2)α + βm·(1 + Σ_{k<log₂q} (2^k + min(2^k, e)) + (p−1)):
 *   the pre-step, the rounds (the slowest pair holds the extra blocks of ranks 0 … 2^k−1)
 *   and the post-step. Latency-optimal for p = 2^k; use Bruck for other p.
 * Plus, first, the handshake (handshake.ts): one message of 8 bytes to the left neighbour and
 * one from the right, α + 8β (2α + 16β one-ported), before round 0. Everything after the
 * handshake (program code) is a compiled schedule (recursiveDoublingSchedule; schedule.ts),
 * run by the transport's executor (schedule/run.ts bindSchedule).
 */
import type { RankSchedule, ScheduleOp, ScheduleStep } from '../../comm/schedule.js';
import { handshake } from './handshake.js';
import {
  addStep,
  bindAllgather,
  bindBuffers,
  blockSpan,
  describeAllgather,
  ownCopy,
  recv,
  runsSpan,
  scheduleBuffers,
  send,
  type AllgatherRankDescription,
  type RankRun,
} from './schedule-parts.js';
import { placePadded } from './padded.js';
import { ALLGATHER_TAGS, type AllgathervInput, type AllgathervVariant } from './types.js';

/** The largest power of two ≤ p. */
export function pof2Below(p: number): number {
  let q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

/** Ranks g … g+n−1 of the first q, then their extra partners (i+q < p): two runs of consecutive ranks. */
function group(g: number, n: number, q: number, p: number): RankRun[] {
  return [
    [g, g + n],
    [g + q, Math.max(g, Math.min(g + n, p - q)) + q],
  ];
}

/**
 * This rank's schedule of recursive doubling after the handshake (which is separate, program
 * code). An extra rank r ≥ q: [send its block to r − q, copy its own block], then [receive all
 * other blocks from r − q]. A rank r < q: [receive block r + q] when it has an extra partner,
 * then per round [receive the partner's group, send its own group, the own block's copy in
 * round 0] at once, then [send all blocks but r + q's to r + q] when it has one.
 */
export function recursiveDoublingSchedule(d: AllgatherRankDescription, tag: number): RankSchedule {
  const { rank, p } = d;
  const q = pof2Below(p);
  const steps: ScheduleStep[] = [];
  const done = { own: false };
  const own = (): ScheduleOp[] => {
    if (done.own) return [];
    done.own = true;
    return ownCopy(d);
  };
  if (rank >= q) {
    // an extra rank: hand the block to rank − q, get everything back from it
    const partner = rank - q;
    const others: RankRun[] = [
      [0, rank],
      [rank + 1, p],
    ];
    addStep(steps, [send(partner, tag, blockSpan(d, rank, true)), ...own()]);
    addStep(steps, [recv(partner, tag, runsSpan(d, others, false))]);
    return { rank, buffers: scheduleBuffers(d), steps };
  }
  if (rank + q < p) addStep(steps, [recv(rank + q, tag, blockSpan(d, rank + q, false))]);
  for (let mask = 1; mask < q; mask *= 2) {
    const partner = rank ^ mask;
    const mine = group(rank & ~(mask - 1), mask, q, p);
    const theirs = group(partner & ~(mask - 1), mask, q, p);
    addStep(steps, [recv(partner, tag, runsSpan(d, theirs, false)), send(partner, tag, runsSpan(d, mine, true)), ...own()]);
  }
  addStep(steps, own());
  if (rank + q < p) {
    const all: RankRun[] = [
      [0, rank + q],
      [rank + q + 1, p],
    ];
    addStep(steps, [send(rank + q, tag, runsSpan(d, all, true))]);
  }
  return { rank, buffers: scheduleBuffers(d), steps };
}

export async function recursiveDoublingAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const schedule = recursiveDoublingSchedule(describeAllgather(input), tag);
  // padded blocks (padded.ts): the same schedule placed onto their data and a sink
  const placed = input.padded === undefined ? undefined : placePadded(describeAllgather(input), schedule, input.padded);
  const bound = placed === undefined ? bindAllgather(input, schedule, bindBuffers(input, schedule)) : bindAllgather(input, placed.schedule, placed.buffers);
  await handshake(input, 'recursive-doubling'); // its first partner is r ⊕ 1, not the handshake's neighbours
  await bound.run();
}

export const RECURSIVE_DOUBLING_ALLGATHER: AllgathervVariant = {
  name: 'recursive-doubling',
  description: 'recursive doubling (Thakur et al. 2005): ⌈log₂p⌉ exchanges with rank ⊕ 2^k, in place; extra ranks of p ≠ 2^k fold in (2 more steps)',
  run: (input) => recursiveDoublingAllgatherv(input, ALLGATHER_TAGS.recursiveDoubling),
};
