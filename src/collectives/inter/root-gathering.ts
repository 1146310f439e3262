/**
 * interAllgather / interAllgatherv by root gathering, what MPICH, MVAPICH and Open MPI ship
 * (Kang19 §3.1, Eq. 2): (1) each group gathers its blocks at local rank 0 (binomial gather;
 * allgatherv: the root first gathers the block sizes, then a linear gatherv, as MPICH's
 * MPIR_Gatherv — with each size goes an 8-byte fingerprint of the remote sizes the rank
 * expects, so the root fails a group whose ranks passed different counts instead of
 * broadcasting data they would misplace); (2) SEQUENTIAL
 * stages: the first group's root sends its gathered data to the other root, which broadcasts
 * it in its group; then the other root sends its group's data back and the first root
 * broadcasts it. Broadcasts: 'scatter-allgather' from BCAST_LONG_BYTES on (the factor-two-off
 * long-message broadcast of the production libraries), binomial below.
 *
 * Allgatherv: each root's message also ends with the 8-byte fingerprint of its group's actual
 * block sizes; the receiving root compares it with the fingerprint of the remote sizes its
 * group agreed on (the counts), so remote blocks that match the counts' total but not their
 * split (counts [5, 0, 6] against blocks of 4, 1, 6 bytes) fail with InvalidArgumentError on
 * 'counts' at that root before it broadcasts, instead of landing at shifted offsets.
 *
 * Which group goes first: the larger one; with equal sizes the low group (its local rank 0 has
 * the lower world rank; InterCommunicator.lowGroup, known locally as in MPICH).
 *
 * Cost (α + βm, full duplex, K_A = p·k_A, K_B = q·k_B, long messages):
 * max(⌈log₂p⌉α + β(K_A − k_A), ⌈log₂q⌉α + β(K_B − k_B)) + (α + βK_A) + 2⌈log₂q⌉α + 2βK_B·(q−1)/q
 * + (α + βK_B) + 2⌈log₂p⌉α + 2βK_A·(p−1)/p ≈ βM + 3β(K_A + K_B) + O(log p)α (Eq. 2).
 * One-ported: the same stages (they are sequential); the broadcasts' exchanges take two transfers.
 */
import { bcast, gather } from '../basic/index.js';
import { gatherv } from '../v-collectives.js';
import type { InterCommunicator } from '../../comm/intercomm.js';
import { InvalidArgumentError } from '../../errors.js';
import { fingerprint } from '../allgather/handshake.js';
import { isPackedLayout, sizeFacts } from '../allgather/shared-layout.js';
import { exchangeError } from './segmented.js';
import type { RankSchedule, Span } from '../../comm/schedule.js';
import { bindInterSchedule } from '../../schedule/run.js';
import { INTER_TAGS } from './types.js';

/** From this many bytes on the broadcast stage uses 'scatter-allgather' (MPICH's short-message limit, 12 KiB). */
export const BCAST_LONG_BYTES = 12288;

/**
 * The remote group's data as this rank must receive it: allgatherv, every block's bytes and
 * offset; allgather, `block` bytes per remote rank back to back (no per-rank arrays: a
 * simulation's ranks would hold the remote group's size in numbers each).
 */
export type RemoteLayout =
  | {
      /** Bytes of every remote rank's block. */
      readonly bytes: readonly number[];
      /** Their byte offsets in recv. */
      readonly offsets: readonly number[];
      /** The field a size disagreement is reported on. */
      readonly field: string;
    }
  | {
      /** Every remote block's bytes (regular allgather: block i at i·block). */
      readonly block: number;
      readonly count: number;
      readonly field: string;
    };

export async function rootGathering(
  inter: InterCommunicator,
  send: Uint8Array,
  recv: Uint8Array,
  remote: RemoteLayout,
  regular: boolean,
): Promise<void> {
  const local = inter.local;
  const { rank, size: n } = inter;
  // (1) Gather the local group's blocks at local rank 0.
  let gathered: Uint8Array | undefined;
  /** Allgatherv, at local rank 0: the byte sizes of the local group's blocks. */
  let localSizes: number[] | undefined;
  if (regular) {
    gathered = rank === 0 ? new Uint8Array(n * send.length) : undefined;
    await gather(local, { send, recv: gathered, root: 0 });
  } else {
    // Each rank's block size and a fingerprint of the remote sizes it expects: the root checks
    // that its group agrees (8 bytes more per rank than MPICH's size gather; no extra message).
    const remoteBytes = 'bytes' in remote ? remote.bytes : [];
    const record = new Float64Array(2);
    record[0] = send.length;
    new Uint8Array(record.buffer, 8).set(fingerprint('counts', remoteBytes));
    const records = rank === 0 ? new Float64Array(2 * n) : undefined;
    await gather(local, { send: new Uint8Array(record.buffer), recv: records === undefined ? undefined : new Uint8Array(records.buffer), root: 0 });
    if (records !== undefined) {
      const fp = new Uint8Array(records.buffer);
      for (let i = 1; i < n; i++) {
        for (let j = 8; j < 16; j++) {
          if (fp[16 * i + j] !== fp[j]) {
            throw new InvalidArgumentError(remote.field, `local rank ${i} passed different remote sizes (counts) than this rank: every rank of a group must pass the same`, { rank });
          }
        }
      }
    }
    const counts = records === undefined ? undefined : Array.from({ length: n }, (_, i) => records[2 * i]);
    localSizes = counts;
    const totalLocal = counts === undefined ? 0 : counts.reduce((a, b) => a + b, 0);
    gathered = rank === 0 ? new Uint8Array(totalLocal) : undefined;
    await gatherv(local, { root: 0, send, recv: gathered, counts }, { algorithm: 'linear' });
  }
  // (2) The remote data arrives contiguously: in recv itself when its layout is contiguous.
  // (O(1) per rank for the frozen layouts a simulation's ranks share: allgather/shared-layout.ts)
  const remoteTotal = 'bytes' in remote ? sizeFacts(remote.bytes).total : remote.block * remote.count;
  const contiguous = 'bytes' in remote ? isPackedLayout(remote.bytes, remote.offsets) : true;
  const incoming = contiguous ? recv.subarray(0, remoteTotal) : new Uint8Array(remoteTotal);
  const algorithm = remoteTotal >= BCAST_LONG_BYTES ? 'scatter-allgather' : 'binomial';
  if (rank === 0 && gathered !== undefined) {
    const first = localGoesFirst(inter);
    // allgatherv: the fingerprint of the block sizes goes after the data (a vectored message)
    const sizesOut = localSizes === undefined ? undefined : fingerprint('counts', localSizes);
    const sizesIn = regular ? undefined : new Uint8Array(8);
    // the exchange between the roots: a one-operation schedule each way on the
    // intercommunicator (the data, then the allgatherv's fingerprint of its block sizes)
    const whole = (buffer: number, bytes: number): Span => (bytes > 0 ? [{ buffer, offset: 0, length: bytes }] : []);
    const message = (kind: 'send' | 'recv', bufs: Uint8Array[]): RankSchedule => ({
      rank,
      buffers: bufs.map((b, i) => ({ name: `part${i}`, bytes: b.length })),
      steps: [{ window: 1, ops: [{ kind, peer: 0, tag: INTER_TAGS.rootExchange, data: bufs.flatMap((b, i) => whole(i, b.length)) }] }],
    });
    const outgoing = sizesOut === undefined ? [gathered] : [gathered, sizesOut];
    const sendOut = (): PromiseLike<void> => bindInterSchedule(inter, message('send', outgoing), outgoing, { once: true }).run();
    const receive = async (): Promise<void> => {
      const into = sizesIn === undefined ? [incoming] : [incoming, sizesIn];
      await bindInterSchedule(inter, message('recv', into), into, { once: true, recvError: exchangeError(inter, remote.field) }).run();
      if (sizesIn !== undefined) checkRemoteSizes(inter, sizesIn, remote);
    };
    if (first) {
      await sendOut();
      await receive();
      await bcast(local, incoming, 0, { algorithm });
    } else {
      await receive();
      await bcast(local, incoming, 0, { algorithm });
      await sendOut();
    }
  } else {
    await bcast(local, incoming, 0, { algorithm });
  }
  if (!contiguous && 'bytes' in remote) {
    for (let i = 0, at = 0; i < remote.bytes.length; at += remote.bytes[i], i++) {
      if (remote.bytes[i] > 0) inter.copy(recv.subarray(remote.offsets[i], remote.offsets[i] + remote.bytes[i]), incoming.subarray(at, at + remote.bytes[i]));
    }
  }
}

/**
 * At a root (allgatherv): the remote root's fingerprint of its group's block sizes must be the
 * fingerprint of the remote sizes this group agreed on; else InvalidArgumentError on 'counts'.
 */
function checkRemoteSizes(inter: InterCommunicator, got: Uint8Array, remote: RemoteLayout): void {
  const bytes = 'bytes' in remote ? remote.bytes : [];
  const want = fingerprint('counts', bytes);
  for (let j = 0; j < 8; j++) {
    if (got[j] !== want[j]) {
      throw new InvalidArgumentError(
        remote.field,
        `the remote group's blocks (${bytes.reduce((a, b) => a + b, 0)} bytes in total, as expected) are split differently from the counts: some remote rank sends another size than its entry`,
        { rank: inter.rank },
      );
    }
  }
}

/** At a root: does this group send first? The larger group; equal sizes: the low group (lower world rank of local rank 0). */
function localGoesFirst(inter: InterCommunicator): boolean {
  return inter.size !== inter.remoteSize ? inter.size > inter.remoteSize : inter.lowGroup;
}
