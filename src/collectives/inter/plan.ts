/**
 * The communication plans of Kang19's intergroup allgather algorithms, pure and synchronous
 * (no communication): who sends which bytes to whom, in which order, and the counts of the
 * final intragroup allgatherv. segmented.ts and segmented-v.ts execute them.
 *
 * - Algorithm 1 (Kang19 §4, interAllgather): with q ≤ p (the larger group plays A; with
 *   p = q both views coincide), A is cut into q subgroups s_i of consecutive ranks
 *   (r = p mod q; |s_i| = ⌈p/q⌉ for i < r, ⌊p/q⌋ after). Every a_j of s_i sends its whole block
 *   to b_i; b_i cuts its block into |s_i| near-equal segments and sends segment t to the t-th
 *   rank of s_i. A's ranks then hold B's segments in rank order, B's ranks A's blocks in rank
 *   order: one allgatherv per group, without reordering, completes the operation.
 *   Exchange cost (full duplex): ⌈p/q⌉ rounds of α + β·max(k_A, ⌈k_B/|s_i|⌉).
 * - Algorithm 2 (Kang19 §4.1, interAllgatherv): every byte of a group's data gets its global
 *   index (rank order); the index range [0, K) is cut into n near-equal segments, n the size
 *   of the REMOTE group (⌈K/n⌉ for the first K mod n receivers, ⌊K/n⌋ after); a sender sends
 *   the intersection of its block with every segment to that segment's receiver, in receiver
 *   rank order; a receiver takes its senders in the order of §4.1: the multi-target sender of
 *   higher rank first, then the senders between, then the multi-target sender of lower rank.
 *
 * Byte counts throughout (elements are cut anywhere: the segments are bytes).
 */
import { partOf, partSize, partStart } from '../../util/parts.js';

export { partOf, partSize, partStart } from '../../util/parts.js';

/** A contiguous piece exchanged with one remote rank. */
export interface Piece {
  /** The remote rank. */
  readonly peer: number;
  /** Byte offset (in the buffer the plan says). */
  readonly offset: number;
  /** Bytes (Algorithm 2 never lists empty pieces; Algorithm 1's rounds may hold empty ones). */
  readonly length: number;
}

/** Algorithm 1's subgroups of A (p ranks) for q partners: subgroup i is [start[i], start[i + 1]). */
export function subgroupStarts(p: number, q: number): number[] {
  return Array.from({ length: q + 1 }, (_, i) => partStart(p, q, i));
}

/** Which subgroup a_j is in, and its index in that subgroup. */
export function subgroupOf(p: number, q: number, j: number): { readonly index: number; readonly offset: number } {
  const index = partOf(p, q, j);
  return { index, offset: j - partStart(p, q, index) };
}

/** One rank's part of Algorithm 1. */
export interface SegmentedRankPlan {
  /** This group plays A (the larger group; with equal sizes both groups do, consistently). */
  readonly isA: boolean;
  /**
   * The exchange as rounds, in order: round t sends `send` (offset in this rank's send block)
   * and receives `recv` (offset in this rank's recv buffer), both with the same peer. Pieces
   * may be empty (0 bytes): the message pattern depends on the group sizes only, so blocks of
   * the wrong size are detected by their receiver instead of leaving a receive unmatched.
   */
  readonly rounds: readonly { readonly send: Piece; readonly recv: Piece }[];
  /** The final intragroup allgatherv over the local group: bytes and byte offsets in recv. */
  readonly counts: readonly number[];
  readonly displs: readonly number[];
}

/**
 * Algorithm 1 as local rank `rank` of a group of `localSize` ranks with blocks of `localBlock`
 * bytes sees it, the remote group having `remoteSize` ranks with `remoteBlock`-byte blocks.
 * recv holds the remote blocks in remote rank order (remoteSize·remoteBlock bytes).
 */
export function segmentedRankPlan(
  localSize: number,
  remoteSize: number,
  localBlock: number,
  remoteBlock: number,
  rank: number,
): SegmentedRankPlan {
  const isA = localSize >= remoteSize;
  // the final allgatherv's counts are the group's, not the rank's: built once per group (shared)
  const { counts, displs } = groupArrays(`1:${localSize}:${remoteSize}:${localBlock}:${remoteBlock}`, localSize, (i) => {
    if (isA) {
      // Local = A (p = localSize), remote = B (q = remoteSize, blocks k_B = remoteBlock).
      const { index, offset } = subgroupOf(localSize, remoteSize, i);
      const n = partSize(localSize, remoteSize, index);
      return [partSize(remoteBlock, n, offset), index * remoteBlock + partStart(remoteBlock, n, offset)];
    }
    // Local = B (q = localSize), remote = A (p = remoteSize, blocks k_A = remoteBlock).
    return [partSize(remoteSize, localSize, i) * remoteBlock, partStart(remoteSize, localSize, i) * remoteBlock];
  });
  if (isA) {
    const [p, q, kA] = [localSize, remoteSize, localBlock];
    const { index } = subgroupOf(p, q, rank);
    const round = { send: { peer: index, offset: 0, length: kA }, recv: { peer: index, offset: displs[rank], length: counts[rank] } };
    return { isA, rounds: [round], counts, displs };
  }
  const [q, p, kB, kA] = [localSize, remoteSize, localBlock, remoteBlock];
  const start = partStart(p, q, rank);
  const n = partSize(p, q, rank);
  const rounds: { send: Piece; recv: Piece }[] = [];
  for (let t = 0; t < n; t++) {
    rounds.push({
      send: { peer: start + t, offset: partStart(kB, n, t), length: partSize(kB, n, t) },
      recv: { peer: start + t, offset: (start + t) * kA, length: kA },
    });
  }
  return { isA, rounds, counts, displs };
}

/**
 * Algorithm 2, sending side: the pieces of this rank's block (`size` bytes at global index
 * `prefix` of its group's `total` bytes) for the `remoteSize` receivers, in receiver rank
 * order; offsets are in this rank's block.
 */
export function vSendPieces(total: number, remoteSize: number, prefix: number, size: number): Piece[] {
  const out: Piece[] = [];
  if (size === 0) return out;
  const first = partOf(total, remoteSize, prefix);
  const last = partOf(total, remoteSize, prefix + size - 1);
  for (let r = first; r <= last; r++) {
    const lo = Math.max(prefix, partStart(total, remoteSize, r));
    const hi = Math.min(prefix + size, partStart(total, remoteSize, r + 1));
    if (hi > lo) out.push({ peer: r, offset: lo - prefix, length: hi - lo });
  }
  return out;
}

/** Algorithm 2, receiving side, as local rank `rank` of `localSize` ranks sees it. */
export interface VRecvPlan {
  /** This rank's segment of the remote data: [start, start + length) in the global byte index. */
  readonly start: number;
  readonly length: number;
  /** The pieces in the order this rank takes them; offsets are global byte indices of the remote data. */
  readonly pieces: readonly Piece[];
  /** Segment sizes of every local rank (the final allgatherv's counts, bytes). */
  readonly counts: readonly number[];
  /** Their global start indices (the final allgatherv's displacements in the remote data). */
  readonly displs: readonly number[];
}

/**
 * The receive side of Algorithm 2: `remoteBytes` are the remote group's block sizes (bytes),
 * `remotePrefix` their prefix sums (length remoteSize + 1). Senders whose block meets this
 * rank's segment are taken in §4.1's order: the higher multi-target sender (one that also
 * sends to other receivers) first, then the senders between in rank order, then the lower
 * multi-target sender.
 */
export function vRecvPlan(remoteBytes: readonly number[], remotePrefix: readonly number[], localSize: number, rank: number): VRecvPlan {
  const total = remotePrefix[remoteBytes.length];
  const { counts, displs } = groupArrays(`2:${total}:${localSize}`, localSize, (i) => [partSize(total, localSize, i), partStart(total, localSize, i)]);
  const start = displs[rank];
  const length = counts[rank];
  const end = start + length;
  const senders: Piece[] = [];
  if (length > 0) {
    // The first sender whose block contains index `start` (blocks are [prefix[j], prefix[j+1])).
    let lo = 0;
    let hi = remoteBytes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (remotePrefix[mid] <= start) lo = mid;
      else hi = mid - 1;
    }
    for (let j = lo; j < remoteBytes.length && remotePrefix[j] < end; j++) {
      const a = Math.max(start, remotePrefix[j]);
      const b = Math.min(end, remotePrefix[j] + remoteBytes[j]);
      if (b > a) senders.push({ peer: j, offset: a, length: b - a });
    }
  }
  const multi = (s: Piece): boolean => s.length < remoteBytes[s.peer];
  const ordered: Piece[] = [];
  if (senders.length <= 1) ordered.push(...senders);
  else {
    const first = senders[0];
    const last = senders[senders.length - 1];
    const middle = senders.slice(1, -1);
    const lowMulti = multi(first);
    const highMulti = multi(last);
    if (highMulti) ordered.push(last);
    if (!lowMulti) ordered.push(first);
    ordered.push(...middle);
    if (!highMulti) ordered.push(last);
    if (lowMulti) ordered.push(first);
  }
  return { start, length, pieces: ordered, counts, displs };
}

/**
 * The final allgatherv's counts and displacements are a function of a few group-wide numbers
 * (the `key`), the same on every rank of the group: built once and shared (frozen) by the
 * ranks of this process — a simulation's ranks, which would otherwise hold n numbers each
 * (O(n²) for a group of n). The last GROUP_ARRAYS_KEPT keys are kept.
 */
function groupArrays(key: string, n: number, entry: (i: number) => readonly [number, number]): { counts: readonly number[]; displs: readonly number[] } {
  let got = GROUP_ARRAYS.get(key);
  if (got === undefined) {
    const counts = new Array<number>(n);
    const displs = new Array<number>(n);
    for (let i = 0; i < n; i++) [counts[i], displs[i]] = entry(i);
    got = { counts: Object.freeze(counts), displs: Object.freeze(displs) };
    if (GROUP_ARRAYS.size >= GROUP_ARRAYS_KEPT) GROUP_ARRAYS.delete(GROUP_ARRAYS.keys().next().value as string);
    GROUP_ARRAYS.set(key, got);
    GROUP_ARRAYS_BUILT.count++;
  }
  return got;
}

const GROUP_ARRAYS_KEPT = 16;
const GROUP_ARRAYS = new Map<string, { counts: readonly number[]; displs: readonly number[] }>();
/** How many group arrays were built (tests: once per group, not once per rank). */
export const GROUP_ARRAYS_BUILT = { count: 0 };

/** Exclusive prefix sums (length n + 1). */
export function prefixSums(xs: readonly number[]): number[] {
  const out = [0];
  for (const x of xs) out.push(out[out.length - 1] + x);
  return out;
}
