/**
 * The shared memory of a threads run: one channel buffer per ordered pair of ranks and one
 * bell word per rank. Built by `runThreads` on the main thread and handed to every worker.
 */

import { type Bell, Channel, createChannelBuffer } from './channel.js';

export interface ThreadsLayout {
  readonly size: number;
  /** `channels[s * size + d]`: the channel from rank s to rank d (null when s = d). */
  readonly channels: readonly (SharedArrayBuffer | null)[];
  /** Int32 word r: the bell rank r sleeps on. */
  readonly bells: SharedArrayBuffer;
}

export function createLayout(size: number, channelBytes: number): ThreadsLayout {
  const channels: (SharedArrayBuffer | null)[] = [];
  for (let s = 0; s < size; s++) {
    for (let d = 0; d < size; d++) channels.push(s === d ? null : createChannelBuffer(channelBytes));
  }
  return { size, channels, bells: new SharedArrayBuffer(4 * size) };
}

export function bellOf(layout: ThreadsLayout, rank: number): Bell {
  return { words: new Int32Array(layout.bells), index: rank };
}

/** The channel from `source` to `dest`, wired so the writer rings dest's bell and the reader source's. */
export function channelOf(layout: ThreadsLayout, source: number, dest: number): Channel | null {
  const buf = layout.channels[source * layout.size + dest];
  if (buf === null) return null;
  return new Channel(buf, { readerBell: bellOf(layout, dest), writerBell: bellOf(layout, source) });
}

/** Poisons every channel of the run with `rank` as the culprit and wakes every rank. */
export function poisonLayout(layout: ThreadsLayout, rank: number): void {
  for (let s = 0; s < layout.size; s++) {
    for (let d = 0; d < layout.size; d++) channelOf(layout, s, d)?.poison(rank);
  }
}
