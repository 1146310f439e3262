/**
 * mpi-native gatherv: the MPI library's own MPI_Gatherv (through `comm.native`, the MPI
 * transport only), so that what production MPI libraries ship sits in the same table as vcoll's
 * algorithms. The plan converts the root's counts and displacements to byte counts and byte
 * displacements (Int32Array, MPI_BYTE; each ≤ 2³¹ − 1, else InvalidArgumentError naming
 * `counts[i]` / `displs[i]`) once; `start()` makes the blocking call. At the root with
 * `inPlace` the send buffer is MPI_IN_PLACE (its block already at its displacement).
 *
 * Cost: whatever the library does. Open MPI 4.1.4's MPI_Gatherv is linear (coll/basic; its
 * coll/tuned has no gatherv of its own): the root receives every block directly, like vcoll's
 * `linear`, Σ_{i≠r}(α + β·m_i) at the root; MPICH's is linear too. Reported as height 1 (p > 1),
 * no construction rounds.
 *
 * Source: the MPI standard (MPI_Gatherv, MPI-4.1 §6.5) and the library the binding is built
 * against (native/vcoll_mpi.c). Elsewhere (simulator, threads) every rank fails at once with
 * UnavailableError('mpi-transport'); `auto` never picks this variant.
 */
import { nativeVariant } from '../native.js';
import type { GathervPlanInput, GathervVariant } from '../variant.js';

export const MPI_NATIVE_GATHERV: GathervVariant = nativeVariant<GathervPlanInput>(
  'gatherv',
  "the MPI library's own MPI_Gatherv (MPI transport only; Open MPI 4.1.4: linear, coll/basic)",
  (input) => ['send', input.send.length],
  (native, layout, input) =>
    layout === undefined
      ? native.gatherv(input.send, null, null, null, input.root)
      : native.gatherv(input.inPlace ? null : input.send, input.recv as Uint8Array, layout.counts, layout.displs, input.root),
);
