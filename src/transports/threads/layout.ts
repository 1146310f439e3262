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
 *
 * Also on that line, the words the deadlock monitor of `runThreads` reads (run.ts): the rank's
 * state (RANK_RUNNING, RANK_WAITING while its progress loop sleeps with operations pending,
 * RANK_FINISHED once its program returned and drained, or failed), its progress word (the
 * number of times its loop went to sleep, published as it goes to sleep: a rank that is asleep
 * at two looks with the same count slept in between) and its heartbeat (a counter its worker's
 * event loop increments on a timer: a rank whose JS computes does not beat).
 */

import { type Bell, Channel, createChannelBuffer, ringBell } from './channel.js';

/** Int32 words per rank in the bells buffer (128 bytes: one rank per cache line pair). */
const STRIDE = 32;
/** Offsets in a rank's words: doorbell, sleep word, then what the deadlock monitor reads. */
const SLEEP = 1;
const STATE = 2;
/** From the state word (see `RankWords`). */
export const PROGRESS_OFFSET = 1;
export const HEARTBEAT_OFFSET = 2;

/** A rank's state word: running (or not started): its JS may do anything. */
export const RANK_RUNNING = 0;
/** A rank's state word: its progress loop sleeps on the doorbell with ≥ 1 operation pending. */
export const RANK_WAITING = 1;
/** A rank's state word: its program returned and its operations drained, or it failed. */
export const RANK_FINISHED = 2;
/** The failure word's value once the deadlock monitor found the run deadlocked. */
export const RUN_DEADLOCKED = -1;

export interface ThreadsLayout {
  readonly size: number;
  /** `channels[s * size + d]`: the channel from rank s to rank d (null when s = d). */
  readonly channels: readonly (SharedArrayBuffer | null)[];
  /**
   * Rank r's doorbell at word r·32, its sleep word at r·32 + 1, its state, progress and heartbeat
   * words at r·32 + 2, 3, 4; the failure word after every rank's.
   */
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
  return { words, index: rank * STRIDE, bit: peer === undefined ? -1 : doorbellBit(peer), sleepIndex: rank * STRIDE + SLEEP };
}

/**
 * Rank `rank`'s words for the deadlock monitor: its state word at `index`, its progress word at
 * `index + PROGRESS_OFFSET`, its heartbeat at `index + HEARTBEAT_OFFSET`.
 */
export interface RankWords {
  readonly words: Int32Array;
  readonly index: number;
}

export function rankWordsOf(layout: ThreadsLayout, rank: number, words = new Int32Array(layout.bells)): RankWords {
  return { words, index: rank * STRIDE + STATE };
}

/**
 * The run-wide failure word: 0 while healthy, then 1 + the rank that failed first, or
 * RUN_DEADLOCKED once the deadlock monitor found the run deadlocked.
 */
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
  ringEveryone(layout, words);
}

/**
 * Records the run as deadlocked unless a failure is recorded already (returns whether it did)
 * and wakes every rank; each rank's endpoint then fails its pending operations with a
 * DeadlockError listing them.
 */
export function declareDeadlock(layout: ThreadsLayout): boolean {
  const words = new Int32Array(layout.bells);
  const f = failureWordOf(layout, words);
  if (Atomics.compareExchange(f.words, f.index, 0, RUN_DEADLOCKED) !== 0) return false;
  ringEveryone(layout, words);
  return true;
}

function ringEveryone(layout: ThreadsLayout, words: Int32Array<SharedArrayBuffer>): void {
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
