/**
 * interAllgather by Kang19 Algorithm 1 (§4, "Full-duplex intergroup all-to-all broadcast
 * with message segmentation"). With q ≤ p (the larger group plays A), A is cut into q
 * subgroups s_i of consecutive ranks; every a_j of s_i sends its block to b_i, and b_i sends
 * the t-th of |s_i| near-equal segments of its block to the t-th rank of s_i, one pair per
 * round (isend + irecv on the intercommunicator, full duplex). Each rank receives straight
 * into its place in recv, so one intragroup allgatherv per group (inter.local; counts: the
 * segment sizes in A, |s_i|·k_A in B) completes the operation with no reordering
 * (plan.ts: segmentedRankPlan). The exchange rounds run as a schedule on the
 * intercommunicator (schedule/run.ts bindInterSchedule: the transport's executor), the final
 * allgatherv as its algorithm's schedule (ring, Bruck, the pipelined ring).
 *
 * Cost (α + βm, full duplex): exchange ⌈p/q⌉(α + β·max(k_A, ⌈k_B/⌊p/q⌋⌉)), then the two
 * allgathervs concurrently. When q divides p the blocks are equal and the ring runs:
 * (p−1)(α + β⌈k_B/(p/q)⌉) in A, (q−1)(α + β(p/q)k_A) in B; Theorem 1 (its proof assumes
 * q | p): transfer time ≤ M + k_B, M = max(p·k_A, q·k_B) — met, plus the final allgatherv's
 * 8-byte handshake (allgather/handshake.ts). When q ∤ p (the paper gives no bound, only "almost
 * the same size" blocks), B's blocks are ⌈p/q⌉ or ⌊p/q⌋ of A's blocks and A's segments differ
 * likewise, so the final stage is the pipelined ring (finalStageAlgorithm: β·(total − own)
 * instead of the ring's (n−1)·β·max block) and the transfer time is ≤ M + max(k_A, k_B) + 8β
 * (measured on the simulator, α = 0; M + k_B + 8β when k_A ≤ k_B): the B ranks of the smaller
 * subgroups idle through the last exchange round of k_A and the allgather cannot start before
 * it — Theorem 3's bound for these blocks. Below AUTO_SHORT_BYTES in all the final stage is
 * Bruck, whose uneven rounds exceed that transfer bound (it saves start-ups instead). Kang19
 * settings 2–4 within 5 % of Eq. 5 at 128 ranks and more (test/inter.test.ts). One-ported:
 * every exchange round and every ring step takes two transfers.
 */
import { allgatherv, AUTO_SHORT_BYTES, type AllgathervAlgorithm } from '../allgather/index.js';
import { sizeFacts } from '../allgather/shared-layout.js';
import type { InterCommunicator } from '../../comm/intercomm.js';
import { InvalidArgumentError } from '../../errors.js';
import { segmentedRankPlan } from './plan.js';
import { INTER_TAGS } from './types.js';
import type { RankSchedule, Span } from '../../comm/schedule.js';
import { bindInterSchedule } from '../../schedule/run.js';

export async function segmentedAllgather(inter: InterCommunicator, send: Uint8Array, recv: Uint8Array): Promise<void> {
  const remoteBlock = recv.length / inter.remoteSize;
  const plan = segmentedRankPlan(inter.size, inter.remoteSize, send.length, remoteBlock, inter.rank);
  // the exchange rounds are a schedule on the intercommunicator (its peers remote ranks): one
  // step per round, the receive posted before the send, both at once
  const span = (buffer: number, offset: number, length: number): Span => (length > 0 ? [{ buffer, offset, length }] : []);
  const schedule: RankSchedule = {
    rank: inter.rank,
    buffers: [
      { name: 'send', bytes: send.length },
      { name: 'recv', bytes: recv.length },
    ],
    steps: plan.rounds.map(({ send: s, recv: r }) => ({
      window: 2,
      ops: [
        { kind: 'recv', peer: r.peer, tag: INTER_TAGS.exchange, data: span(1, r.offset, r.length) },
        { kind: 'send', peer: s.peer, tag: INTER_TAGS.exchange, data: span(0, s.offset, s.length) },
      ],
    })),
  };
  await bindInterSchedule(inter, schedule, [send, recv], { recvError: exchangeError(inter, 'recv'), once: true }).run();
  const mine = recv.subarray(plan.displs[inter.rank], plan.displs[inter.rank] + plan.counts[inter.rank]);
  try {
    await allgatherv(inter.local, { send: mine, recv, counts: plan.counts, displs: plan.displs }, { algorithm: finalStageAlgorithm(plan.counts) });
  } catch (e) {
    // The final stage's counts come from the block sizes: if the handshake finds that a
    // neighbour's differ, the ranks of this group passed recv (or send) buffers that disagree.
    if (e instanceof InvalidArgumentError && e.field === 'counts') {
      throw new InvalidArgumentError('recv', `ranks of this group disagree about the block sizes (recv or send lengths differ): ${e.message}`, { rank: inter.rank });
    }
    throw e;
  }
}

/**
 * The final intragroup allgatherv's algorithm (Algorithms 1 and 2), from the counts only (the
 * same on every rank of the group): uneven blocks (beyond the ±1 byte of a near-equal cut) of
 * AUTO_SHORT_BYTES or more in total → 'pipelined-ring' (Träff et al. 2010, Kang19 ref [16]):
 * it costs β·Σ_{i≠r} m_i where the ring pays (p−1)·β·max m; otherwise 'auto' (bruck for short,
 * ring for long equal blocks, where the pipeline only adds start-ups: +0.2 % measured at
 * p = 14, 14 000-byte blocks, α = β = 1).
 */
export function finalStageAlgorithm(counts: readonly number[]): AllgathervAlgorithm {
  // O(1) per rank for the shared (frozen) counts of plan.ts
  const { total, max, min } = sizeFacts(counts);
  return max > min + 1 && total >= AUTO_SHORT_BYTES ? 'pipelined-ring' : 'auto';
}

/**
 * The error of a receive of the intergroup exchanges (ScheduleOptions.recvError) whose length
 * is not the plan's: a message shorter or longer than the plan says means the two groups
 * disagree about the block sizes, which the receiving rank reports as an InvalidArgumentError
 * naming `field` (a longer message: the transport's truncation error is its cause).
 */
export function exchangeError(inter: InterCommunicator, field: string): (peer: number, tag: number, expected: number, got: number | undefined, cause: unknown) => Error {
  return (peer, _tag, expected, got, cause) =>
    got === undefined
      ? new InvalidArgumentError(field, `remote rank ${peer} sent more than the ${expected} bytes expected from it: the groups disagree about the block sizes`, {
          rank: inter.rank,
          cause,
        })
      : new InvalidArgumentError(field, `remote rank ${peer} sent ${got} bytes where ${expected} were expected: the groups disagree about the block sizes`, {
          rank: inter.rank,
        });
}
