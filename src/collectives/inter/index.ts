/**
 * The intergroup allgather / allgatherv entries (seed 003): validation of what one rank can
 * see, then the algorithm ('segmented', the default: Algorithm 1 / Algorithm 2 of seed 003 §4;
 * 'root-gathering': what the production MPI libraries ship, §3.1). Every rank of both groups
 * must pass the same algorithm. Arguments the remote group contradicts (block sizes, counts)
 * are reported by the rank that receives the contradicting data, as an InvalidArgumentError.
 */
import type { InterCommunicator } from '../../comm/intercomm.js';
import { InvalidArgumentError } from '../../errors.js';
import { blockLayout } from '../args.js';
import { checkBytes } from '../basic/validate.js';
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

/**
 * MPI_Allgather on an intercommunicator: every rank's `send` (k bytes, the same k in its
 * group) lands in every REMOTE rank's `recv` at (local rank)·k; recv holds remoteSize·k' bytes.
 */
export async function interAllgather(inter: InterCommunicator, args: InterAllgatherArgs, options?: InterOptions): Promise<void> {
  const rank = inter.rank;
  const algorithm = algorithmOf(options, rank);
  const send = checkBytes(inter, 'send', args.send);
  const recv = checkBytes(inter, 'recv', args.recv);
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
  const send = checkBytes(inter, 'send', args.send);
  const recv = checkBytes(inter, 'recv', args.recv);
  const unit = args.unitBytes ?? 1;
  if (!Number.isInteger(unit) || unit < 1) throw new InvalidArgumentError('unitBytes', `must be a positive integer, got ${String(unit)}`, { rank });
  if (send.length % unit !== 0) throw new InvalidArgumentError('send', `holds ${send.length} bytes, not a multiple of unitBytes = ${unit}`, { rank });
  const { counts, displs } = blockLayout(rank, inter.remoteSize, args.counts, args.displs, unit, recv.length, 'recv', 'must be an array of counts, one per remote rank');
  const bytes = counts.map((c) => c * unit);
  const offsets = displs.map((d) => d * unit);
  if (algorithm === 'segmented') return segmentedAllgatherv(inter, send, recv, bytes, offsets);
  return rootGathering(inter, send, recv, { bytes, offsets, field: 'counts' }, false);
}
