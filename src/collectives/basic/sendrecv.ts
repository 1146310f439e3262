/** MPI_Sendrecv: a send and a receive started together; resolves with the receive's status once both are done. */
import type { Communicator, Status } from '../../comm/communicator.js';

export async function sendrecv(
  comm: Communicator,
  tag: number,
  dest: number,
  data: Uint8Array,
  source: number,
  into: Uint8Array,
): Promise<Status> {
  const r = comm.irecv(source, tag, into);
  await comm.waitAll<unknown>([r, comm.isend(dest, tag, data)]);
  return r;
}
