/**
 * The shared memory of a threads run: one channel buffer per ordered pair of ranks, one
 * doorbell per rank and one run-wide failure word. Built by `runThreads` on the main thread
 * and handed to every worker.
 *
 * Rank r's doorbell is an Int32 bitmap: a peer s that published data to r, or released ring
 * space r waits for, sets bit s mod 32; rank r collects it with `Atomics.exchange(…, 0)` and
 * looks only at the channels of peers with that bit (exactly one peer per bit up to 32
 * ranks). Next to it, a sleep word that r sets while it sleeps in `Atomics.waitAsync`, so that
 * peers call `Atomics.notify` only then. Each rank's words sit on their own 128-byte line.
 */

import { type Bell, Channel, createChannelBuffer, ringBell } from './channel.js';

/** Int32 words per rank in the bells buffer (128 bytes: one rank per cache line pair). */
const STRIDE = 32;

export interface ThreadsLayout {
  readonly size: number;
  /** `channels[s * size + d]`: the channel from rank s to rank d (null when s = d). */
  readonly channels: readonly (SharedArrayBuffer | null)[];
  /** Rank r's doorbell at word r·32, its sleep word at r·32 + 1; the failure word after them. */
  readonly bells: SharedArrayBuffer;
}

export function createLayout(size: number, channelBytes: number): ThreadsLayout {
  const channels: (SharedArrayBuffer | null)[] = [];
  for (let s = 0; s < size; s++) {
    for (let d = 0; d < size; d++) channels.push(s === d ? null : createChannelBuffer(channelBytes));
  }
  return { size, channels, bells: new SharedArrayBuffer(4 * STRIDE * (size + 1)) };
}

/** The doorbell bit a peer sets in another rank's doorbell. */
export function doorbellBit(peer: number): number {
  return 1 << (peer & 31);
}

/**
 * Rank `rank`'s doorbell as rung by `peer` (its bit; `peer` omitted: every bit, as failures
 * ring it), with the sleep word that gates `Atomics.notify`.
 */
export function bellOf(layout: ThreadsLayout, rank: number, peer?: number, words = new Int32Array(layout.bells)): Bell {
  return { words, index: rank * STRIDE, bit: peer === undefined ? -1 : doorbellBit(peer), sleepIndex: rank * STRIDE + 1 };
}

/** The run-wide failure word: 0 while healthy, then 1 + the rank that failed first. */
export function failureWordOf(layout: ThreadsLayout, words = new Int32Array(layout.bells)): { words: Int32Array; index: number } {
  return { words, index: layout.size * STRIDE };
}

/** The channel from `source` to `dest`, wired so the writer rings dest's doorbell and the reader source's. */
export function channelOf(layout: ThreadsLayout, source: number, dest: number, words = new Int32Array(layout.bells)): Channel | null {
  const buf = layout.channels[source * layout.size + dest];
  if (buf === null) return null;
  return new Channel(buf, { readerBell: bellOf(layout, dest, source, words), writerBell: bellOf(layout, source, dest, words) });
}

/**
 * Records `rank` as the run's failed rank (unless one is recorded already) and wakes every
 * rank; each rank's endpoint then fails its pending operations naming the recorded rank.
 */
export function failRun(layout: ThreadsLayout, rank: number): void {
  const words = new Int32Array(layout.bells);
  const f = failureWordOf(layout, words);
  Atomics.compareExchange(f.words, f.index, 0, rank + 1);
  for (let r = 0; r < layout.size; r++) {
    const bell = bellOf(layout, r, undefined, words);
    ringBell(bell);
    Atomics.notify(words, bell.index); // even if a bit was already set
  }
}

/** Poisons every channel of the run with `rank` as the culprit and wakes every rank. */
export function poisonLayout(layout: ThreadsLayout, rank: number): void {
  failRun(layout, rank);
  const words = new Int32Array(layout.bells);
  for (let s = 0; s < layout.size; s++) {
    for (let d = 0; d < layout.size; d++) channelOf(layout, s, d, words)?.poison(rank);
  }
}
