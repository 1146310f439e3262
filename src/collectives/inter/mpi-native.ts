/**
 * mpi-native interAllgather / interAllgatherv: the MPI library's own MPI_Allgather /
 * MPI_Allgatherv on the MPI intercommunicator (`inter.native`, the MPI transport only; the first
 * use makes that intercommunicator, collective over both groups), so that what the production
 * libraries ship (root gathering, Kang19 §3.1) sits in the same table as vcoll's algorithms.
 * Elsewhere (simulator, threads) every rank of both groups fails at once with
 * UnavailableError('mpi-transport') (native.ts: nativeInterOf), after the arguments are checked.
 *
 * Cost: whatever the library does (MPICH and Open MPI: root gathering, Eq. 2 of Kang19 §3.1).
 */
import { nativeByteLayout, nativeBytes, nativeInterOf } from '../native.js';
import type { InterAllgatherInput, InterAllgathervInput } from './types.js';

/**
 * The MPI library's MPI_Allgather on the intercommunicator. The binding's allgather receives
 * blocks of the local block's size, so when the two groups' block sizes differ (k ≠ k′, seen
 * alike by every rank of both groups) both groups call MPI_Allgatherv with equal counts instead.
 */
export function nativeAllgather({ inter, send, recv, k }: InterAllgatherInput): void {
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
export function nativeAllgatherv({ inter, send, recv, counts, displs, unitBytes }: InterAllgathervInput): void {
  const rank = inter.rank;
  const native = nativeInterOf(inter, 'interAllgatherv');
  nativeBytes('send', send.length, rank);
  const bytes = nativeByteLayout(counts, displs, unitBytes, rank);
  native.allgatherv(send, recv, bytes.counts, bytes.displs);
}
