/** Rank program: leaves a receive that nothing will match pending and returns (the job must still end cleanly). */
import type { Communicator } from '../../src/comm/communicator.js';

export default async function pendingRecv(comm: Communicator): Promise<number> {
  void comm.irecv(0, 99, new Uint8Array(4));
  void comm.irecvAlloc(0, 98);
  await Promise.all([
    comm.send((comm.rank + 1) % comm.size, 1, new Uint8Array(70000)),
    comm.recv((comm.rank - 1 + comm.size) % comm.size, 1, new Uint8Array(70000)),
  ]);
  return comm.rank;
}
