/**
 * barrier: the dissemination barrier (Hensgen, Finkel and Manber 1988). In round k =
 * 0 … ⌈log₂p⌉−1 every rank sends an empty message to (r + 2^k) mod p and waits for one from
 * (r − 2^k) mod p; after the last round every rank has heard, transitively, from every other,
 * so no rank leaves before all have entered. Works for any p (no power-of-two fold).
 *
 * Cost: ⌈log₂p⌉ rounds of 0-byte messages, ⌈log₂p⌉·α when every message costs α and a rank
 * can send and receive at once (full duplex). The simulator charges 0-byte messages nothing,
 * so there the barrier takes no virtual time; it still orders the ranks' clocks. The rounds
 * are a schedule run by the transport's executor (schedule.ts).
 */
import type { Communicator } from '../../comm/communicator.js';
import { nativeOf } from '../native.js';
import { MPI_NATIVE } from '../types.js';
import { basicAlgorithm, type BasicOptions } from './algorithm.js';
import { runBarrierSchedule } from './schedule.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { beginCall } from '../call-scope.js';

/** `options.algorithm` 'mpi-native': the MPI library's MPI_Barrier instead (MPI transport only). */
export async function barrier(comm: Communicator, options?: BasicOptions): Promise<void> {
  comm = beginCall(comm);
  if (basicAlgorithm(comm, options) === MPI_NATIVE) {
    nativeOf(comm, 'barrier').barrier();
    return;
  }
  // the rounds are a schedule (schedule.ts): one native run per call
  await runBarrierSchedule(comm, BASIC_TAG.barrier);
}
