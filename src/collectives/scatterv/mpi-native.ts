/**
 * mpi-native scatterv: the MPI library's own MPI_Scatterv (through `comm.native`, the MPI
 * transport only), so that what production MPI libraries ship sits in the same table as vcoll's
 * algorithms. The plan converts the root's counts and displacements to byte counts and byte
 * displacements (Int32Array, MPI_BYTE; each ≤ 2³¹ − 1, else InvalidArgumentError naming
 * `counts[i]` / `displs[i]`) once; `start()` makes the blocking call. At the root with
 * `inPlace` the receive buffer is MPI_IN_PLACE (its block stays in `send`).
 *
 * Cost: whatever the library does. Open MPI 4.1.4's MPI_Scatterv is linear (coll/basic; its
 * coll/tuned has no scatterv of its own): the root sends every block directly, like vcoll's
 * `linear`, Σ_{i≠r}(α + β·m_i) at the root; MPICH's is linear too. Reported as height 1 (p > 1),
 * no construction rounds.
 *
 * Source: the MPI standard (MPI_Scatterv, MPI-4.1 §6.6) and the library the binding is built
 * against (native/vcoll_mpi.c). Elsewhere (simulator, threads) every rank fails at once with
 * UnavailableError('mpi-transport'); `auto` never picks this variant.
 */
import { nativeVariant } from '../native.js';
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';

export const MPI_NATIVE_SCATTERV: ScattervVariant = nativeVariant<ScattervPlanInput>(
  'scatterv',
  "the MPI library's own MPI_Scatterv (MPI transport only; Open MPI 4.1.4: linear, coll/basic)",
  (input) => ['recv', input.recv.length],
  (native, layout, input) =>
    layout === undefined
      ? native.scatterv(null, null, null, input.recv, input.root)
      : native.scatterv(input.send as Uint8Array, layout.counts, layout.displs, input.inPlace ? null : input.recv, input.root),
);
