/** Endpoints of the threads transport driven in one thread: p ranks over one shared layout. */
import { ThreadsEndpoint } from '../../src/transports/threads/endpoint.js';
import { bellOf, channelOf, createLayout, failRun, failureWordOf } from '../../src/transports/threads/layout.js';

/** p endpoints with rings of `ring` bytes, and `fail(rank)` marking that rank failed. */
export function threadsWorld(p: number, ring: number): { eps: ThreadsEndpoint[]; fail: (rank: number) => void } {
  const layout = createLayout(p, ring);
  const words = new Int32Array(layout.bells);
  const eps = Array.from(
    { length: p },
    (_, rank) =>
      new ThreadsEndpoint({
        rank,
        size: p,
        outgoing: Array.from({ length: p }, (_, d) => channelOf(layout, rank, d, words)),
        incoming: Array.from({ length: p }, (_, s) => channelOf(layout, s, rank, words)),
        bell: bellOf(layout, rank, undefined, words),
        failure: failureWordOf(layout, words),
      }),
  );
  return { eps, fail: (rank) => failRun(layout, rank) };
}
