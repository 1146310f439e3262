/** Endpoints of the threads transport driven in one thread: p ranks over one shared layout. */
import { ThreadsEndpoint } from '../../src/transports/threads/endpoint.js';
import { bellOf, channelOf, channelSource, createLayout, failRun, failureWordOf, rankWordsOf, type ThreadsLayout } from '../../src/transports/threads/shared-layout.js';

export interface ThreadsWorld {
  readonly eps: ThreadsEndpoint[];
  /** Marks `rank` failed. */
  readonly fail: (rank: number) => void;
  readonly layout: ThreadsLayout;
  /** The shared words (bells, failure, per-rank monitor words). */
  readonly words: Int32Array;
}

/**
 * p endpoints with rings of `ring` bytes; `monitored`: they publish their state for the
 * deadlock monitor (rankWordsOf); `spinLoads`: their spin budget; `lazy`: channels open on first
 * use, as the workers' do (channelSource), instead of all p² up front.
 */
export function threadsWorld(p: number, ring: number, opts: { monitored?: boolean; spinLoads?: number; lazy?: boolean } = {}): ThreadsWorld {
  const layout = createLayout(p, ring);
  const words = new Int32Array(layout.bells);
  const eps = Array.from(
    { length: p },
    (_, rank) =>
      new ThreadsEndpoint({
        rank,
        size: p,
        ...(opts.lazy === true
          ? { channels: channelSource(layout, rank, words) }
          : {
              outgoing: Array.from({ length: p }, (_, d) => channelOf(layout, rank, d, words)),
              incoming: Array.from({ length: p }, (_, s) => channelOf(layout, s, rank, words)),
            }),
        bell: bellOf(layout, rank, undefined, words),
        failure: failureWordOf(layout, words),
        ...(opts.monitored === true ? { monitor: rankWordsOf(layout, rank, words) } : {}),
        ...(opts.spinLoads !== undefined ? { spinLoads: opts.spinLoads } : {}),
      }),
  );
  return { eps, fail: (rank) => failRun(layout, rank), layout, words };
}
