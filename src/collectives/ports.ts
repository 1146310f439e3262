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
 * Runs `op` on every item in order with at most `window` operations outstanding: item j
 * starts once fewer than `window` of the earlier ones are unfinished (the evaluator's k-port
 * rule, docs/MODEL.md "Ports"); rejects with the first failure.
 */
export function inOrder<T>(items: readonly T[], window: number, op: (x: T) => PromiseLike<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let next = 0;
    let running = 0;
    let done = 0;
    let failed = false;
    const launch = (): void => {
      while (!failed && running < window && next < items.length) {
        running++;
        op(items[next++]).then(
          () => {
            running--;
            if (++done === items.length) resolve();
            else launch();
          },
          (e: unknown) => {
            failed = true;
            reject(e);
          },
        );
      }
    };
    if (items.length === 0) resolve();
    else launch();
  });
}

/**
 * The local copy of `src` into `dst` as a message to oneself (the receive is posted first, so
 * a transport copies once): on the simulator it is charged γ per unit and holds a port.
 */
export function selfCopy(comm: Communicator, tag: number, dst: Uint8Array, src: Uint8Array): Promise<void> {
  const me = comm.rank;
  const ops: Request<unknown>[] = [comm.irecv(me, tag, dst), comm.isend(me, tag, src)];
  return comm.waitAll(ops).then(() => undefined);
}
