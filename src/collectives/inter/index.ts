/**
 * The intergroup allgather / allgatherv entries (seed 003): validation of what one rank can
 * see, then the algorithm ('segmented', the default: Algorithm 1 / Algorithm 2 of seed 003 §4;
 * 'root-gathering': what the production MPI libraries ship, §3.1, over point-to-point;
 * 'mpi-native': the MPI library's own MPI_Allgather(v), MPI transport only). Every rank of both groups
 * must pass the same algorithm. Arguments the remote group contradicts (block sizes, counts)
 * are reported by the rank that receives the contradicting data, as an InvalidArgumentError.
 */
import type { InterCommunicator } from '../../comm/intercomm.js';
import { InvalidArgumentError } from '../../errors.js';
import { blockLayout } from '../args.js';
import { beginInterCall } from '../call-scope.js';
import { nativeByteLayout, nativeBytes, nativeInterOf } from '../native.js';
import { MPI_NATIVE } from '../types.js';
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
 * The MPI library's MPI_Allgather on the intercommunicator (first use: makes the MPI
 * intercommunicator, collective over both groups). The binding's allgather receives blocks of
 * the local block's size, so when the two groups' block sizes differ (k ≠ k′, seen alike by
 * every rank of both groups) both groups call MPI_Allgatherv with equal counts instead.
 */
function nativeAllgather(inter: InterCommunicator, send: Uint8Array, recv: Uint8Array, k: number): void {
  const rank = inter.rank;
  const native = nativeInterOf(inter, 'interAllgather');
  nativeBytes('send', send.length, rank);
  if (k === send.length) {
    native.allgather(send, recv);
    return;
  }
  const q = inter.remoteSize;
  const { counts, displs } = nativeByteLayout(new Array<number>(q).fill(k), Array.from({ length: q }, (_, i) => i * k), 1, rank);
  native.allgatherv(send, recv, counts, displs);
}

/** The MPI library's MPI_Allgatherv on the intercommunicator: the remote group's counts and displacements in bytes. */
function nativeAllgatherv(inter: InterCommunicator, send: Uint8Array, recv: Uint8Array, counts: number[], displs: number[], unit: number): void {
  const rank = inter.rank;
  const native = nativeInterOf(inter, 'interAllgatherv');
  nativeBytes('send', send.length, rank);
  const bytes = nativeByteLayout(counts, displs, unit, rank);
  native.allgatherv(send, recv, bytes.counts, bytes.displs);
}

/**
 * MPI_Allgather on an intercommunicator: every rank's `send` (k bytes, the same k in its
 * group) lands in every REMOTE rank's `recv` at (local rank)·k; recv holds remoteSize·k' bytes.
 */
export async function interAllgather(inter: InterCommunicator, args: InterAllgatherArgs, options?: InterOptions): Promise<void> {
  inter = beginInterCall(inter);
  const rank = inter.rank;
  const algorithm = algorithmOf(options, rank);
  const send = checkBytes(inter, 'send', args.send);
  const recv = checkBytes(inter, 'recv', args.recv);
  if (recv.length % inter.remoteSize !== 0) {
    throw new InvalidArgumentError('recv', `holds ${recv.length} bytes, not a multiple of the remote group's size ${inter.remoteSize}`, { rank });
  }
  const k = recv.length / inter.remoteSize;
  if (algorithm === MPI_NATIVE) return nativeAllgather(inter, send, recv, k);
  if (algorithm === 'segmented') return segmentedAllgather(inter, send, recv);
  const bytes = new Array<number>(inter.remoteSize).fill(k);
  return rootGathering(inter, send, recv, { bytes, offsets: bytes.map((_, i) => i * k), field: 'recv' }, true);
}

/**
 * MPI_Allgatherv on an intercommunicator: every rank's `send` (any size) lands in every REMOTE
 * rank's `recv` at displs[local rank]·unitBytes; `counts` / `displs` describe the remote group.
 */
export async function interAllgatherv(inter: InterCommunicator, args: InterAllgathervArgs, options?: InterOptions): Promise<void> {
  inter = beginInterCall(inter);
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
  if (algorithm === MPI_NATIVE) return nativeAllgatherv(inter, send, recv, counts, displs, unit);
  if (algorithm === 'segmented') return segmentedAllgatherv(inter, send, recv, bytes, offsets);
  return rootGathering(inter, send, recv, { bytes, offsets, field: 'counts' }, false);
}
