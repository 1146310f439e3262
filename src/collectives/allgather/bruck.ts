/**
 * Bruck allgather / allgatherv (Bruck, Ho, Kipnis, Upfal and Weathersby 1997 §3; Thakur et
 * al. 2005 §4.1 for MPI; Kang19 §3, ref [14]), any p, ⌈log₂p⌉ rounds. Rank r keeps the
 * blocks of ranks r, r+1, … (mod p) packed back to back in a temporary buffer, in that order
 * (its own block stays in `send` and goes first in every message as a segment). In round
 * k with d = 2^k it sends its first n = min(d, p−d) blocks to r−d and receives n blocks,
 * those of ranks r+d … r+d+n−1, from r+d, appending them. A final rotation copies the
 * packed blocks to their displacements (one copy per run of blocks contiguous in recv: two
 * for the default layout). Variable blocks need no more than their sizes, known everywhere —
 * the allgatherv suited to small irregular blocks (few rounds, one copy of everything).
 * Round 0 is the handshake (handshake.ts): its message carries the 8-byte fingerprint of the
 * sizes in front of the block, so ranks whose counts differ fail instead of misplacing data.
 * Everything after round 0 is a compiled schedule (bruckSchedule; schedule.ts): the own
 * block's copy (issued while round 0 is in flight), the rounds d ≥ 2 and the rotation's
 * copies, run by the transport's executor (schedule/run.ts bindSchedule); 'tmp' is allocated
 * once per call.
 * Cost (full duplex, equal blocks m): ⌈log₂p⌉α + β(p−1)m + 8β + γ(p−1)m for the rotation
 * (the own block's copy overlaps round 0 when γm ≤ α+βm). Irregular: Σ_k (α + β·max_r of the n
 * blocks r receives in round k) + γ·(total − m_r). One-ported: every round's transfers
 * r → r−d form cycles needing two or three transfer slots; measured on the simulator (equal
 * blocks, γ = 0) exactly twice the full-duplex time for p = 2^k, more for other p (e.g.
 * p = 6, α = 10, βm = 5: 150 one-ported against 3α + 5βm = 55 full duplex).
 */
import type { RankSchedule, ScheduleOp, ScheduleStep } from '../../comm/schedule.js';
import { firstStep } from './handshake.js';
import {
  addStep,
  bindBuffers,
  copy,
  describeAllgather,
  ownCopy,
  recv,
  RECV,
  runAfterFirstStep,
  scheduleBuffers,
  send,
  SEND,
  span,
  TMP,
  type AllgatherRankDescription,
} from './schedule-parts.js';
import { placePadded } from './padded.js';
import { packedPrefix } from './shared-layout.js';
import { ALLGATHER_TAGS, type AllgathervInput, type AllgathervVariant } from './types.js';

/**
 * Where relative block j ≥ 1 (rank + j mod p) lies in tmp: [at(j), at(j + 1)); at(p) is tmp's
 * size. O(1) per call from the prefix sums of a layout shared by the ranks (`prefix`: the
 * bytes before relative block j are a cyclic run of blocks), else from a table of p + 1 built
 * here (O(p) per rank).
 */
function packedAt(d: AllgatherRankDescription, prefix: readonly number[] | undefined): (j: number) => number {
  const { rank, p, bytes } = d;
  if (prefix !== undefined) {
    const total = prefix[p];
    const from = (rank + 1) % p;
    return (j) => {
      if (j <= 1) return 0;
      const end = from + j - 1;
      return end <= p ? prefix[end] - prefix[from] : total - prefix[from] + prefix[end - p];
    };
  }
  const at = new Array<number>(p + 1);
  at[0] = 0;
  at[1] = 0;
  for (let j = 1; j < p; j++) at[j + 1] = at[j] + bytes[(rank + j) % p];
  return (j) => at[j];
}

/**
 * The rotation: the packed blocks of tmp to their places in recv, one copy per run of blocks
 * contiguous in recv (walking the blocks in tmp's order, O(p)). With a packed layout's prefix
 * sums the runs are known: blocks rank+1 … p−1 (at the start of tmp), then 0 … rank−1 — the
 * same copies, in O(1).
 */
function rotation(d: AllgatherRankDescription, at: (j: number) => number, prefix: readonly number[] | undefined): ScheduleOp[] {
  const { rank, p, bytes, offsets } = d;
  const ops: ScheduleOp[] = [];
  if (prefix !== undefined) {
    const tail = prefix[p] - prefix[rank + 1];
    if (tail > 0) ops.push(copy(span(RECV, prefix[rank + 1], tail), span(TMP, 0, tail)));
    if (prefix[rank] > 0) ops.push(copy(span(RECV, 0, prefix[rank]), span(TMP, tail, prefix[rank])));
    return ops;
  }
  let runTmp = 0;
  let runRecv = -1;
  let runLen = 0;
  const flush = (): void => {
    if (runLen > 0) ops.push(copy(span(RECV, runRecv, runLen), span(TMP, runTmp, runLen)));
  };
  for (let j = 1; j < p; j++) {
    const i = (rank + j) % p;
    if (bytes[i] === 0) continue;
    if (runLen > 0 && offsets[i] === runRecv + runLen) {
      runLen += bytes[i];
      continue;
    }
    flush();
    runTmp = at(j);
    runRecv = offsets[i];
    runLen = bytes[i];
  }
  flush();
  return ops;
}

/**
 * This rank's schedule of Bruck after round 0 (the handshake, program code): the own block's
 * copy (a step of its own, issued while round 0 is in flight), then rounds d = 2, 4, … < p,
 * each [receive n = min(d, p−d) blocks from r+d into tmp, send the own block (from 'send')
 * and the first n−1 packed ones to r−d as one message] at once, then the rotation: one copy
 * per run of packed blocks contiguous in recv. `withFirst`: round 0 included instead of the
 * copy's step, [receive block r+1 into tmp, send the own block to r−1, the own copy], as it
 * runs without the handshake (no fingerprint, on `tag`).
 */
export function bruckSchedule(d: AllgatherRankDescription, tag: number, withFirst = false): RankSchedule {
  const { rank, p, bytes } = d;
  const prefix = packedPrefix(bytes, d.offsets);
  const at = packedAt(d, prefix);
  const steps: ScheduleStep[] = [];
  const mine = span(SEND, 0, bytes[rank]);
  if (withFirst && p > 1) addStep(steps, [recv((rank + 1) % p, tag, span(TMP, 0, at(2))), send((rank - 1 + p) % p, tag, mine), ...ownCopy(d)]);
  else addStep(steps, ownCopy(d));
  for (let dist = 2; dist < p; dist *= 2) {
    const n = Math.min(dist, p - dist);
    const into = span(TMP, at(dist), at(dist + n) - at(dist));
    addStep(steps, [recv((rank + dist) % p, tag, into), send((rank - dist + p) % p, tag, [...mine, ...span(TMP, 0, at(n))])]);
  }
  addStep(steps, rotation(d, at, prefix));
  return { rank, buffers: scheduleBuffers(d, at(p)), steps };
}

export async function bruckAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const { comm, send: own } = input;
  const { rank, size: p } = comm;
  const schedule = bruckSchedule(describeAllgather(input), tag);
  const lead = input.bytes[rank] > 0 ? 1 : 0; // the own copy overlaps round 0
  if (input.padded !== undefined) {
    // padded blocks (padded.ts): the same schedule placed onto their data and a sink, no 'tmp'
    const placed = placePadded(describeAllgather(input), schedule, input.padded);
    const next = span(TMP, 0, input.bytes[(rank + 1) % p]);
    const first = p === 1 ? undefined : firstStep(input, 'bruck', tag, placed.view(span(SEND, 0, input.bytes[rank])), placed.view(next));
    await runAfterFirstStep(input, placed.schedule, placed.buffers, first, lead);
    return;
  }
  const buffers = bindBuffers(input, schedule); // 'tmp' allocated here, once per call
  // round 0 (d = 1) is the handshake (handshake.ts): the own block to rank − 1, block rank + 1
  // from rank + 1 into the start of tmp, fingerprint first
  const tmp = buffers[TMP];
  const first = p === 1 ? undefined : firstStep(input, 'bruck', tag, own.length === 0 ? tmp.subarray(0, 0) : own, tmp.subarray(0, input.bytes[(rank + 1) % p]));
  await runAfterFirstStep(input, schedule, buffers, first, lead);
}

export const BRUCK_ALLGATHER: AllgathervVariant = {
  name: 'bruck',
  description: 'Bruck et al. 1997: ⌈log₂p⌉ rounds for any p, blocks packed, one final rotation; for small (irregular) blocks',
  run: (input) => bruckAllgatherv(input, ALLGATHER_TAGS.bruck),
};
