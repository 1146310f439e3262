/**
 * The intergroup allgather / allgatherv entries (Kang19): validation of what one rank can
 * see, then the algorithm's row of the table (variants.ts: 'segmented', the default: Algorithm 1
 * / Algorithm 2 of Kang19 §4; 'root-gathering': what the production MPI libraries ship, §3.1,
 * over point-to-point; 'mpi-native': the MPI library's own MPI_Allgather(v), MPI transport only).
 * Every rank of both groups must pass the same algorithm. Arguments the remote group contradicts (block sizes, counts)
 * are reported by the rank that receives the contradicting data, as an InvalidArgumentError.
 */
import type { InterCommunicator } from '../../comm/intercomm.js';
import { InvalidArgumentError } from '../../errors.js';
import { sharedBlockLayout } from '../allgather/shared-layout.js';
import { beginInterCall } from '../call-scope.js';
import { checkBytes } from '../bytes.js';
import type { InterAllgatherArgs, InterAllgathervArgs, InterOptions } from './types.js';
import { INTER_ALLGATHER_ALGORITHMS, interAllgatherRow, type InterAllgatherAlgorithm, type InterAllgatherVariantRow } from './variants.js';

export * from './types.js';
export { INTER_ALLGATHER_ALGORITHMS, INTER_ALLGATHER_VARIANTS, interAllgatherRow, type InterAllgatherVariantRow } from './variants.js';
export { partOf, partSize, partStart, prefixSums, segmentedRankPlan, subgroupOf, subgroupStarts, vRecvPlan, vSendPieces } from './plan.js';
export type { Piece, SegmentedRankPlan, VRecvPlan } from './plan.js';
export { BCAST_LONG_BYTES } from './root-gathering.js';

/** The row of the algorithm in `options` (default 'segmented'), or an InvalidArgumentError naming the list. */
function algorithmOf(options: InterOptions | undefined, rank: number): InterAllgatherVariantRow<InterAllgatherAlgorithm> {
  const a = options?.algorithm ?? 'segmented';
  const row = INTER_ALLGATHER_ALGORITHMS.includes(a) ? interAllgatherRow(a) : undefined;
  if (row === undefined) {
    throw new InvalidArgumentError('algorithm', `must be one of ${INTER_ALLGATHER_ALGORITHMS.join(', ')}, got ${String(a)}`, { rank });
  }
  return row;
}

/** What both entries check first, on the call's intercommunicator: the algorithm and the two buffers. */
function begin(inter: InterCommunicator, args: { readonly send: unknown; readonly recv: unknown }, options: InterOptions | undefined) {
  const rank = inter.rank;
  return { rank, algorithm: algorithmOf(options, rank), send: checkBytes(inter, 'send', args.send), recv: checkBytes(inter, 'recv', args.recv) };
}

/**
 * MPI_Allgather on an intercommunicator: every rank's `send` (k bytes, the same k in its
 * group) lands in every REMOTE rank's `recv` at (local rank)·k; recv holds remoteSize·k' bytes.
 */
export async function interAllgather(inter: InterCommunicator, args: InterAllgatherArgs, options?: InterOptions): Promise<void> {
  inter = beginInterCall(inter);
  const { rank, algorithm, send, recv } = begin(inter, args, options);
  if (recv.length % inter.remoteSize !== 0) {
    throw new InvalidArgumentError('recv', `holds ${recv.length} bytes, not a multiple of the remote group's size ${inter.remoteSize}`, { rank });
  }
  const k = recv.length / inter.remoteSize;
  return algorithm.allgather({ inter, send, recv, k });
}

/**
 * MPI_Allgatherv on an intercommunicator: every rank's `send` (any size) lands in every REMOTE
 * rank's `recv` at displs[local rank]·unitBytes; `counts` / `displs` describe the remote group.
 */
export async function interAllgatherv(inter: InterCommunicator, args: InterAllgathervArgs, options?: InterOptions): Promise<void> {
  inter = beginInterCall(inter);
  const { rank, algorithm, send, recv } = begin(inter, args, options);
  const unit = args.unitBytes ?? 1;
  if (!Number.isInteger(unit) || unit < 1) throw new InvalidArgumentError('unitBytes', `must be a positive integer, got ${String(unit)}`, { rank });
  if (send.length % unit !== 0) throw new InvalidArgumentError('send', `holds ${send.length} bytes, not a multiple of unitBytes = ${unit}`, { rank });
  // (shared read-only by the calls passing the same frozen counts: allgather/shared-layout.ts)
  const { counts, displs, bytes, offsets } = sharedBlockLayout(rank, inter.remoteSize, args.counts, args.displs, unit, recv.length, 'recv', 'must be an array of counts, one per remote rank');
  return algorithm.allgatherv({ inter, send, recv, counts, displs, unitBytes: unit, bytes, offsets });
}
