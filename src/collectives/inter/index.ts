/**
 * The intergroup allgather / allgatherv entries (seed 003): validation of what one rank can
 * see, then the algorithm ('segmented', the default: Algorithm 1 / Algorithm 2 of seed 003 §4;
 * 'root-gathering': what the production MPI libraries ship, §3.1). Every rank of both groups
 * must pass the same algorithm. Arguments the remote group contradicts (block sizes, counts)
 * are reported by the rank that receives the contradicting data, as an InvalidArgumentError.
 */
import type { InterCommunicator } from '../../comm/intercomm.js';
import { InvalidArgumentError } from '../../errors.js';
import { rootGathering } from './root-gathering.js';
import { segmentedAllgather } from './segmented.js';
import { segmentedAllgatherv } from './segmented-v.js';
import {
  INTER_ALLGATHER_ALGORITHMS,
  type InterAllgatherAlgorithm,
  type InterAllgatherArgs,
  type InterAllgathervArgs,
  type InterOptions,
} from './types.js';

export * from './types.js';
export { partOf, partSize, partStart, prefixSums, segmentedRankPlan, subgroupOf, subgroupStarts, vRecvPlan, vSendPieces } from './plan.js';
export type { Piece, SegmentedRankPlan, VRecvPlan } from './plan.js';
export { BCAST_LONG_BYTES } from './root-gathering.js';

function algorithmOf(options: InterOptions | undefined, rank: number): InterAllgatherAlgorithm {
  const a = options?.algorithm ?? 'segmented';
  if (!INTER_ALLGATHER_ALGORITHMS.includes(a)) {
    throw new InvalidArgumentError('algorithm', `must be one of ${INTER_ALLGATHER_ALGORITHMS.join(', ')}, got ${String(a)}`, { rank });
  }
  return a;
}

function bytesField(x: unknown, field: string, rank: number): Uint8Array {
  if (!(x instanceof Uint8Array)) throw new InvalidArgumentError(field, 'must be a Uint8Array', { rank });
  return x;
}

/**
 * MPI_Allgather on an intercommunicator: every rank's `send` (k bytes, the same k in its
 * group) lands in every REMOTE rank's `recv` at (local rank)·k; recv holds remoteSize·k' bytes.
 */
export async function interAllgather(inter: InterCommunicator, args: InterAllgatherArgs, options?: InterOptions): Promise<void> {
  const rank = inter.rank;
  const algorithm = algorithmOf(options, rank);
  const send = bytesField(args.send, 'send', rank);
  const recv = bytesField(args.recv, 'recv', rank);
  if (recv.length % inter.remoteSize !== 0) {
    throw new InvalidArgumentError('recv', `holds ${recv.length} bytes, not a multiple of the remote group's size ${inter.remoteSize}`, { rank });
  }
  const k = recv.length / inter.remoteSize;
  if (algorithm === 'segmented') return segmentedAllgather(inter, send, recv);
  const bytes = new Array<number>(inter.remoteSize).fill(k);
  return rootGathering(inter, send, recv, { bytes, offsets: bytes.map((_, i) => i * k), field: 'recv' }, true);
}

/**
 * MPI_Allgatherv on an intercommunicator: every rank's `send` (any size) lands in every REMOTE
 * rank's `recv` at displs[local rank]·unitBytes; `counts` / `displs` describe the remote group.
 */
export async function interAllgatherv(inter: InterCommunicator, args: InterAllgathervArgs, options?: InterOptions): Promise<void> {
  const rank = inter.rank;
  const algorithm = algorithmOf(options, rank);
  const send = bytesField(args.send, 'send', rank);
  const recv = bytesField(args.recv, 'recv', rank);
  const unit = args.unitBytes ?? 1;
  if (!Number.isInteger(unit) || unit < 1) throw new InvalidArgumentError('unitBytes', `must be a positive integer, got ${String(unit)}`, { rank });
  const nr = inter.remoteSize;
  const counts = args.counts as unknown;
  if (!Array.isArray(counts) || counts.length !== nr) {
    throw new InvalidArgumentError('counts', `must be an array of ${nr} counts (one per remote rank)`, { rank });
  }
  const displs = args.displs as unknown;
  if (displs !== undefined && (!Array.isArray(displs) || displs.length !== nr)) {
    throw new InvalidArgumentError('displs', `must be an array of ${nr} displacements (one per remote rank)`, { rank });
  }
  if (send.length % unit !== 0) throw new InvalidArgumentError('send', `holds ${send.length} bytes, not a multiple of unitBytes = ${unit}`, { rank });
  const bytes: number[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (let j = 0; j < nr; j++) {
    const c: unknown = counts[j];
    if (typeof c !== 'number' || !Number.isSafeInteger(c) || c < 0) throw new InvalidArgumentError(`counts[${j}]`, `must be an integer ≥ 0, got ${String(c)}`, { rank });
    const d: unknown = displs === undefined ? at / unit : (displs as unknown[])[j];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) throw new InvalidArgumentError(`displs[${j}]`, `must be an integer ≥ 0, got ${String(d)}`, { rank });
    bytes.push(c * unit);
    offsets.push(d * unit);
    if (c > 0 && (d + c) * unit > recv.length) {
      throw new InvalidArgumentError('recv', `holds ${recv.length} bytes; remote block ${j} needs [${d * unit}, ${(d + c) * unit})`, { rank });
    }
    at += c * unit;
  }
  const order = bytes.map((_, j) => j).filter((j) => bytes[j] > 0).sort((a, b) => offsets[a] - offsets[b]);
  for (let i = 1; i < order.length; i++) {
    const [a, b] = [order[i - 1], order[i]];
    if (offsets[b] < offsets[a] + bytes[a]) throw new InvalidArgumentError(`displs[${Math.max(a, b)}]`, `remote blocks ${Math.min(a, b)} and ${Math.max(a, b)} overlap`, { rank });
  }
  if (algorithm === 'segmented') return segmentedAllgatherv(inter, send, recv, bytes, offsets);
  return rootGathering(inter, send, recv, { bytes, offsets, field: 'counts' }, false);
}
