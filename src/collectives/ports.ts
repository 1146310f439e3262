/**
 * k ports in the collectives: a rank runs its operations in the tree's sequence order with at
 * most model.ports of them outstanding, and with k > 1 makes its local copy a message to
 * itself, which holds one port (docs/MODEL.md "Ports: one convention for evaluate and the
 * simulator"). With these two rules a tree executed on the simulator finishes exactly at
 * `evaluate`'s k-ported time.
 */
import type { Communicator } from '../comm/communicator.js';
import type { Request } from '../comm/request.js';


/**
 * The local copy of `src` into `dst` as a message to oneself (the receive is posted first, so
 * a transport copies once): on the simulator it is charged γ per unit and holds a port.
 */
export function selfCopy(comm: Communicator, tag: number, dst: Uint8Array, src: Uint8Array): Promise<void> {
  const me = comm.rank;
  const ops: Request<unknown>[] = [comm.irecv(me, tag, dst), comm.isend(me, tag, src)];
  return comm.waitAll(ops).then(() => undefined);
}
