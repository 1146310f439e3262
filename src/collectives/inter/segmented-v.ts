/**
 * interAllgatherv by Kang19 Algorithm 2 (§4.1). (0) A size check: local rank r sends its
 * block size to remote rank r mod q' and compares the sizes it receives with `counts` (so
 * disagreeing counts are reported as an InvalidArgumentError, never a hang); (1) an allreduce
 * of [size, mismatch, agreement terms] gives the group's byte total K and the verdicts (the
 * remote sizes; whether this group's ranks passed the same counts, agreement.ts), an exscan of the sizes
 * each rank's global byte index R; (2) the exchange: [0, K) is cut into near-equal segments,
 * one per REMOTE rank; a sender sends the pieces of its block to their receivers in rank order
 * (blocking sends), a receiver takes its senders in §4.1's order (the higher multi-target
 * sender first, the senders between, the lower multi-target sender last), both directions
 * concurrently (plan.ts: vSendPieces, vRecvPlan; each stream a schedule on the
 * intercommunicator, the two run at once); (3) one intragroup allgatherv of the received
 * segments (near-equal counts) on inter.local, in place, then a copy to `displs` if recv is
 * not contiguous.
 *
 * Cost (α + βm, full duplex, K_A = Σk_A,i, K_B = Σk_B,j): size check ⌈q/p⌉(α + 8β);
 * allreduce and exscan O(log p)(α + 16β); exchange ≤ (senders and receivers per rank)·α +
 * β·(K_A/q + max k_A) on the A→B side (symmetrically B→A); the final allgatherv's counts are a
 * near-equal cut (±1 byte), so finalStageAlgorithm keeps 'auto' (ring: (p−1)(α + β⌈K_B/p⌉)).
 * Theorem 3: transfer time ≤ max(K_A + max k_A, K_B + max k_B) + O(log pq). One-ported: the
 * two directions of the exchange and every ring step take two transfers.
 */
import { allgatherv } from '../allgather/index.js';
import { allreduce, exscan } from '../basic/index.js';
import type { Request } from '../../comm/communicator.js';
import type { InterCommunicator } from '../../comm/intercomm.js';
import { InvalidArgumentError } from '../../errors.js';
import { AGREEMENT_TERMS, agreementTerms, allAgree } from './agreement.js';
import { isPackedLayout, sharedPrefixSums } from '../allgather/shared-layout.js';
import { vRecvPlan, vSendPieces, type Piece } from './plan.js';
import { exchangeError, finalStageAlgorithm } from './segmented.js';
import type { RankSchedule } from '../../comm/schedule.js';
import { bindInterSchedule } from '../../schedule/run.js';
import { INTER_TAGS } from './types.js';

/** `remoteBytes[j]`: bytes of remote rank j's block; `remoteOffsets[j]`: its byte offset in recv. */
export async function segmentedAllgatherv(
  inter: InterCommunicator,
  send: Uint8Array,
  recv: Uint8Array,
  remoteBytes: readonly number[],
  remoteOffsets: readonly number[],
): Promise<void> {
  const { rank, size: n, remoteSize: nr } = inter;
  const local = inter.local;
  // (0) The size check.
  const mine = new Uint8Array(Float64Array.of(send.length).buffer);
  const from: number[] = [];
  for (let j = rank; j < nr; j += n) from.push(j);
  const got = from.map(() => new Float64Array(1));
  const ops: Request<unknown>[] = from.map((j, i) => inter.irecv(j, INTER_TAGS.sizes, new Uint8Array(got[i].buffer)));
  ops.push(inter.isend(rank % nr, INTER_TAGS.sizes, mine));
  await inter.waitAll(ops);
  let bad = -1;
  from.forEach((j, i) => {
    if (bad < 0 && got[i][0] !== remoteBytes[j]) bad = j;
  });
  // (1) Total, verdict (the remote sizes, and whether this group's ranks passed the same counts) and prefix.
  const red = new Float64Array(2 + AGREEMENT_TERMS);
  await allreduce(local, { send: Float64Array.of(send.length, bad >= 0 ? 1 : 0, ...agreementTerms(remoteBytes)), recv: red, op: 'sum' });
  if (red[1] > 0) {
    const what = bad >= 0 ? `remote rank ${bad} sends ${got[from.indexOf(bad)][0]} bytes, counts give ${remoteBytes[bad]}` : 'another rank of this group found counts that disagree with what the remote group sends';
    throw new InvalidArgumentError('counts', what, { rank });
  }
  if (!allAgree(red, 2, n)) {
    throw new InvalidArgumentError('counts', 'the ranks of this group passed different counts (or unitBytes): every rank must pass the remote group′s sizes', { rank });
  }
  const total = red[0];
  const pre = new Float64Array(1);
  await exscan(local, { send: Float64Array.of(send.length), recv: pre, op: 'sum' });
  const prefix = rank === 0 ? 0 : pre[0];
  // (2) The exchange, both directions at once.
  const remotePrefix = sharedPrefixSums(remoteBytes);
  const remoteTotal = remotePrefix[nr];
  const contiguous = isPackedLayout(remoteBytes, remoteOffsets);
  const incoming = contiguous ? recv.subarray(0, remoteTotal) : new Uint8Array(remoteTotal);
  const sendPieces = vSendPieces(total, nr, prefix, send.length);
  const plan = vRecvPlan(remoteBytes, remotePrefix, n, rank);
  // Two streams, each a schedule on the intercommunicator run by the transport's executor,
  // both running at once: the sends one at a time in receiver order, the receives one at a
  // time in §4.1's order (a stream is one step of window 1).
  const stream = (kind: 'send' | 'recv', pieces: readonly Piece[], bytes: number): RankSchedule => ({
    rank,
    buffers: [{ name: kind === 'send' ? 'send' : 'incoming', bytes }],
    steps: pieces.length === 0 ? [] : [{ window: 1, ops: pieces.map((pc) => ({ kind, peer: pc.peer, tag: INTER_TAGS.exchange, data: pc.length > 0 ? [{ buffer: 0, offset: pc.offset, length: pc.length }] : [] })) }],
  });
  const sending = bindInterSchedule(inter, stream('send', sendPieces, send.length), [send], { once: true }).run();
  const receiving = bindInterSchedule(inter, stream('recv', plan.pieces, incoming.length), [incoming], { once: true, recvError: exchangeError(inter, 'counts') }).run();
  await Promise.all([sending, receiving]);
  // (3) The final allgatherv, in place.
  await allgatherv(local, {
    send: incoming.subarray(plan.start, plan.start + plan.length),
    recv: incoming,
    counts: plan.counts,
    displs: plan.displs,
  }, { algorithm: finalStageAlgorithm(plan.counts) });
  if (!contiguous) {
    for (let j = 0; j < nr; j++) {
      if (remoteBytes[j] > 0) inter.copy(recv.subarray(remoteOffsets[j], remoteOffsets[j] + remoteBytes[j]), incoming.subarray(remotePrefix[j], remotePrefix[j + 1]));
    }
  }
}
