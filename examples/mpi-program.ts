/**
 * Your own program under mpirun: one gatherv with vcoll's adaptive tree and one with the MPI
 * library's MPI_Gatherv (the `mpi-native` variant), checked against each other on the root.
 *
 *   npm run build && npm run build:mpi      # dist/ and the native binding (needs mpicc)
 *   mpirun -n 4 node --import tsx examples/mpi-program.ts
 *
 * Open MPI wants `--oversubscribe` for more ranks than cores and `--allow-run-as-root` as root:
 *   mpirun --oversubscribe --allow-run-as-root -n 4 node --import tsx examples/mpi-program.ts
 */
import { gatherv, runMpiRank } from 'vcoll';

await runMpiRank(async (comm, world) => {
  const root = comm.size - 1;
  const counts = Array.from({ length: comm.size }, (_, r) => 1 + 1000 * (r % 3)); // irregular blocks
  const send = new Uint8Array(counts[comm.rank]).map((_, i) => (comm.rank * 7 + i) & 255);
  const gathered: Uint8Array[] = [];
  for (const algorithm of ['adaptive', 'mpi-native'] as const) {
    const recv = comm.rank === root ? new Uint8Array(counts.reduce((a, b) => a + b)) : undefined;
    const t0 = world.wtime();
    const info = await gatherv(comm, { root, send, recv, counts: comm.rank === root ? counts : undefined }, { algorithm });
    const us = ((world.wtime() - t0) * 1e6).toFixed(0);
    if (recv !== undefined) {
      gathered.push(recv);
      console.log(`${algorithm}: ${recv.length} bytes at root ${root} in ${us} µs (tree height ${info.height})`);
    }
  }
  if (comm.rank === root) {
    if (!gathered[0].every((x, i) => x === gathered[1][i])) throw new Error('adaptive and MPI_Gatherv disagree');
    console.log(`ok: ${comm.size} ranks, ${world.info.library.split(',')[0].trim()}`);
  }
});
