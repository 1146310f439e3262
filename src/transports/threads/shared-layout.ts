/**
 * The shared memory of a threads run: one channel slot per ordered pair of ranks, one
 * doorbell per rank and one run-wide failure word. Built by `runThreads` on the main thread
 * and handed to every worker.
 *
 * Channel memory is O(p · active peers), not O(p²): the slots lie in a few large arenas
 * (SharedArrayBuffers of at most ARENA_MAX_BYTES, reserved up front) whose pages the operating
 * system commits only when they are first written, and a slot is first written only when its
 * sender opens it for its first message (`channelSource`, which also marks the pair in the
 * in-use bitmap: what `poisonLayout` poisons and `channelsInUse` counts). A rank that never
 * sends to a peer costs that pair nothing but address space; a reader looks at a slot only once
 * its sender marked it.
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
 * event loop increments on a timer: a rank whose JS computes does not beat), whether that timer
 * found it idle outside vcoll, and whether the monitor declared it blocked outside vcoll
 * (deadlock.ts).
 */

import { InvalidArgumentError } from '../../errors.js';
import { type Bell, CHANNEL_CONTROL_BYTES, Channel, ringBell } from './channel.js';
import type { ChannelSource } from './endpoint.js';

/** Int32 words per rank in the bells buffer (128 bytes: one rank per cache line pair). */
const STRIDE = 32;
/** Offsets in a rank's words: doorbell, sleep word, then what the deadlock monitor reads. */
const SLEEP = 1;
const STATE = 2;
/** From the state word (see `RankWords`). */
export const PROGRESS_OFFSET = 1;
export const HEARTBEAT_OFFSET = 2;
/**
 * 1 while the worker's latest beat found the rank idle outside vcoll: in its program (imported,
 * not yet returned), no vcoll operation pending, nothing but timers active on its event loop
 * (no I/O, module load or message port in flight) and that loop mostly idle since the last
 * beat (worker.ts) — it can only be awaiting a timer or a promise nothing will settle.
 */
export const IDLE_OFFSET = 3;
/** Beats that did not find the rank idle outside vcoll (IDLE_OFFSET): any counts against it. */
export const BUSY_BEATS_OFFSET = 5;
/** 1 once the deadlock monitor declared the run deadlocked with this rank blocked outside vcoll. */
export const OUTSIDE_OFFSET = 4;

/** A rank's state word: running (or not started): its JS may do anything. */
export const RANK_RUNNING = 0;
/** A rank's state word: its progress loop sleeps on the doorbell with ≥ 1 operation pending. */
export const RANK_WAITING = 1;
/** A rank's state word: its program returned and its operations drained, or it failed. */
export const RANK_FINISHED = 2;
/** The failure word's value once the deadlock monitor found the run deadlocked. */
export const RUN_DEADLOCKED = -1;

/** Largest arena (bytes of address space; pages are committed as they are written). */
export const ARENA_MAX_BYTES = 2 ** 30;

export interface ThreadsLayout {
  readonly size: number;
  /** Ring bytes of every channel. */
  readonly channelBytes: number;
  /** Bytes of a slot: a channel's control block and ring. */
  readonly slotBytes: number;
  /** Slots per arena (the last arena may hold fewer). */
  readonly slotsPerArena: number;
  /**
   * The arenas: the channel from s to d (s ≠ d) is slot s·(size − 1) + (d < s ? d : d − 1),
   * at byte (slot mod slotsPerArena)·slotBytes of arena ⌊slot / slotsPerArena⌋.
   */
  readonly arenas: readonly SharedArrayBuffer[];
  /** Bit s·size + d: rank s opened its channel to d (it may hold data). */
  readonly inUse: SharedArrayBuffer;
  /**
   * Rank r's doorbell at word r·32, its sleep word at r·32 + 1, its state, progress, heartbeat,
   * idle, outside and busy-beats words at r·32 + 2 … 7; the failure word after every rank's.
   */
  readonly bells: SharedArrayBuffer;
}

export function createLayout(size: number, channelBytes: number): ThreadsLayout {
  if (!Number.isInteger(channelBytes) || channelBytes < 16 || channelBytes > 2 ** 30 || (channelBytes & (channelBytes - 1)) !== 0) {
    throw new InvalidArgumentError('channelBytes', `must be a power of two in [16, 2^30], got ${channelBytes}`);
  }
  const slotBytes = CHANNEL_CONTROL_BYTES + channelBytes;
  const slots = size * (size - 1);
  const slotsPerArena = Math.max(1, Math.floor(ARENA_MAX_BYTES / slotBytes));
  const arenas: SharedArrayBuffer[] = [];
  for (let first = 0; first < slots; first += slotsPerArena) {
    arenas.push(new SharedArrayBuffer(Math.min(slotsPerArena, slots - first) * slotBytes));
  }
  return {
    size,
    channelBytes,
    slotBytes,
    slotsPerArena,
    arenas,
    inUse: new SharedArrayBuffer(4 * Math.ceil((size * size) / 32)),
    bells: new SharedArrayBuffer(4 * STRIDE * (size + 1)),
  };
}

/** Address space the channel arenas of a run of `size` ranks reserve (bytes; committed as written). */
export function arenaBytes(size: number, channelBytes: number): number {
  return size * (size - 1) * (CHANNEL_CONTROL_BYTES + channelBytes);
}

function pairBit(layout: ThreadsLayout, source: number, dest: number): { word: number; bit: number } {
  const i = source * layout.size + dest;
  return { word: i >>> 5, bit: 1 << (i & 31) };
}

/** Whether `source` opened its channel to `dest`. */
export function channelInUse(layout: ThreadsLayout, source: number, dest: number, used = new Int32Array(layout.inUse)): boolean {
  const { word, bit } = pairBit(layout, source, dest);
  return (Atomics.load(used, word) & bit) !== 0;
}

/** How many channels of the run were opened (by their senders) so far. */
export function channelsInUse(layout: ThreadsLayout): number {
  const used = new Int32Array(layout.inUse);
  let n = 0;
  for (let i = 0; i < used.length; i++) {
    let w = Atomics.load(used, i);
    while (w !== 0) {
      w &= w - 1;
      n++;
    }
  }
  return n;
}

/**
 * Rank `rank`'s channels, opened lazily (ThreadsEndpoint `channels`): `to(d)` marks the pair in
 * use before the first byte is written; `from(s)` is a view, `written(s)` whether s opened it.
 */
export function channelSource(layout: ThreadsLayout, rank: number, words = new Int32Array(layout.bells)): ChannelSource {
  const used = new Int32Array(layout.inUse);
  return {
    to: (dest) => {
      const { word, bit } = pairBit(layout, rank, dest);
      if ((Atomics.load(used, word) & bit) === 0) Atomics.or(used, word, bit);
      return channelOf(layout, rank, dest, words) as Channel;
    },
    from: (source) => channelOf(layout, source, rank, words) as Channel,
    written: (source) => channelInUse(layout, source, rank, used),
  };
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

/** The ranks the deadlock monitor declared blocked outside vcoll (OUTSIDE_OFFSET), in rank order. */
export function blockedOutside(layout: ThreadsLayout, words = new Int32Array(layout.bells)): number[] {
  const out: number[] = [];
  for (let r = 0; r < layout.size; r++) if (Atomics.load(words, r * STRIDE + STATE + OUTSIDE_OFFSET) !== 0) out.push(r);
  return out;
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
  if (source === dest) return null;
  const slot = source * (layout.size - 1) + (dest < source ? dest : dest - 1);
  const arena = layout.arenas[Math.floor(slot / layout.slotsPerArena)];
  return new Channel(arena, {
    byteOffset: (slot % layout.slotsPerArena) * layout.slotBytes,
    capacity: layout.channelBytes,
    readerBell: bellOf(layout, dest, source, words),
    writerBell: bellOf(layout, source, dest, words),
  });
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

/** Poisons every channel of the run in use with `rank` as the culprit and wakes every rank. */
export function poisonLayout(layout: ThreadsLayout, rank: number): void {
  failRun(layout, rank);
  const words = new Int32Array(layout.bells);
  const used = new Int32Array(layout.inUse);
  for (let s = 0; s < layout.size; s++) {
    for (let d = 0; d < layout.size; d++) if (s !== d && channelInUse(layout, s, d, used)) channelOf(layout, s, d, words)?.poison(rank);
  }
}
