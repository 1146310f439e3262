/**
 * The deadlock monitor of a threads run (`runThreads` ticks it on the main thread). It reads,
 * for every rank, the words shared-layout.ts describes — state, progress (sleep count), heartbeat,
 * idle flag and busy beats, doorbell — and finds the run deadlocked when, for `deadlockMs`:
 * - every rank is RANK_WAITING (its progress loop sleeps with operations pending),
 *   RANK_FINISHED, or blocked outside vcoll — RANK_RUNNING and every beat of its worker found
 *   it idle (IDLE_OFFSET: in its program, no vcoll operation pending, only timers active and
 *   its thread's event loop mostly idle: it awaits a timer or a promise nothing settles; a
 *   module load or I/O in flight, or JS computing in pieces between timers, is not idle) —
 *   and at least one rank is WAITING, or none is but at least one has FINISHED (the ranks
 *   still running are then all blocked outside once every other rank returned, as the root
 *   of a gather that never gathers once every block was sent; ranks that all sleep outside
 *   vcoll before any has finished are merely sleeping);
 * - no rank's state or progress word changed (a rank waiting at two looks with the same
 *   progress slept throughout: nothing woke it);
 * - at every look, every waiting rank's doorbell is empty (a rung doorbell is news the rank
 *   has not looked at yet; bytes lying in a channel are not: a rank asleep with a full ring
 *   it does not read is stuck; a rank outside vcoll looks at no doorbell) and the heartbeat of
 *   every waiting or outside rank moved at one of the last two looks (its event loop turns: a
 *   rank whose JS computes is not waiting but busy; one late timer is forgiven);
 * - and, at the look that declares it, every waiting or outside rank's heartbeat moved since
 *   the last.
 * A look that breaks any of the first three starts the count again. Then it marks the ranks
 * blocked outside (OUTSIDE_OFFSET: their peers' DeadlockErrors name them, as the simulator's
 * "blocked outside the communicator"), records RUN_DEADLOCKED in the run's failure word
 * (unless a failure is recorded already) and rings every rank.
 *
 * Why this is a deadlock: while every loop sleeps on an empty doorbell, no rank has anything to
 * move — each sleeps until a peer writes to or reads from one of its channels, and every peer
 * is asleep too or gone. Only program code outside vcoll (a timer, I/O) could still act, and a
 * program that awaits such events for longer than `deadlockMs` while every other rank waits for
 * it, or has finished, is taken for deadlocked: the documented rule (raise `deadlockMs` or pass
 * Infinity). With no rank waiting, a rank blocked outside has no peer left to talk to: it
 * could only go on alone, and the simulator reports the same program (its event loop drains)
 * as blocked outside the communicator.
 */

import {
  BUSY_BEATS_OFFSET,
  HEARTBEAT_OFFSET,
  IDLE_OFFSET,
  OUTSIDE_OFFSET,
  PROGRESS_OFFSET,
  RANK_FINISHED,
  RANK_RUNNING,
  RANK_WAITING,
  bellOf,
  declareDeadlock,
  failureWordOf,
  rankWordsOf,
  type ThreadsLayout,
} from './shared-layout.js';

/** Default `deadlockMs`: VCOLL_THREADS_DEADLOCK_MS if it is a number > 0 (or Infinity), else 10 s. */
export const DEFAULT_DEADLOCK_MS = 10_000;

export function defaultDeadlockMs(): number {
  const env = process.env.VCOLL_THREADS_DEADLOCK_MS;
  const n = Number(env);
  return env !== undefined && env !== '' && n > 0 ? n : DEFAULT_DEADLOCK_MS;
}

/** How often the monitor looks (ms): a quarter of `deadlockMs`, within [10, 100]. */
export function monitorIntervalMs(deadlockMs: number): number {
  return Math.min(100, Math.max(10, Math.floor(deadlockMs / 4)));
}

/** How often a worker beats (ms): twice per look. */
export function heartbeatIntervalMs(deadlockMs: number): number {
  return Math.max(5, Math.floor(monitorIntervalMs(deadlockMs) / 2));
}

/** Looks in a row without a beat after which a waiting rank counts as busy (its JS computes). */
const BUSY_LOOKS = 2;

export class DeadlockMonitor {
  private readonly words: Int32Array<SharedArrayBuffer>;
  private readonly failIndex: number;
  private readonly size: number;
  private readonly state: Int32Array;
  private readonly progress: Int32Array;
  private readonly beat: Int32Array;
  private readonly bell: Int32Array;
  private readonly busyBeats: Int32Array;
  private readonly lastBusyBeats: Int32Array;
  private readonly lastState: Int32Array;
  private readonly lastProgress: Int32Array;
  private readonly lastBeat: Int32Array;
  /** Looks in a row at which the rank's heartbeat had not moved. */
  private readonly silent: Int32Array;
  /** When the current stretch of looks that each looked deadlocked began (-1: none). */
  private since = -1;
  /** The ranks' states when the deadlock was declared (null: not declared). */
  private declaredStates: Int32Array | null = null;
  /** Whether each rank was blocked outside vcoll at the current look (and at the declaration). */
  private readonly outside: Uint8Array;

  constructor(
    private readonly layout: ThreadsLayout,
    private readonly deadlockMs: number,
  ) {
    const p = layout.size;
    this.size = p;
    this.words = new Int32Array(layout.bells);
    this.failIndex = failureWordOf(layout, this.words).index;
    this.state = new Int32Array(p);
    this.progress = new Int32Array(p);
    this.beat = new Int32Array(p);
    this.bell = new Int32Array(p);
    this.busyBeats = new Int32Array(p);
    this.lastBusyBeats = new Int32Array(p);
    for (let r = 0; r < p; r++) {
      const s = rankWordsOf(layout, r, this.words).index;
      this.state[r] = s;
      this.progress[r] = s + PROGRESS_OFFSET;
      this.beat[r] = s + HEARTBEAT_OFFSET;
      this.bell[r] = bellOf(layout, r, undefined, this.words).index;
      this.busyBeats[r] = s + BUSY_BEATS_OFFSET;
    }
    this.lastState = new Int32Array(p).fill(-1);
    this.lastProgress = new Int32Array(p);
    this.lastBeat = new Int32Array(p);
    this.silent = new Int32Array(p);
    this.outside = new Uint8Array(p);
  }

  /** Whether this monitor declared the run deadlocked. */
  get declared(): boolean {
    return this.declaredStates !== null;
  }

  /** Whether `rank` had finished when the deadlock was declared. */
  finishedAtDeclaration(rank: number): boolean {
    return this.declaredStates !== null && this.declaredStates[rank] === RANK_FINISHED;
  }

  /** Whether `rank` was blocked outside vcoll (in its program, its event loop idle) when the deadlock was declared. */
  outsideAtDeclaration(rank: number): boolean {
    return this.declaredStates !== null && this.outside[rank] === 1;
  }

  /** Looks at every rank once (at time `now`, ms); returns true when it declared a deadlock now. */
  tick(now: number): boolean {
    if (this.declaredStates !== null) return false;
    const w = this.words;
    if (Atomics.load(w, this.failIndex) !== 0) return false; // failed: the failure path handles it
    let stuck = true;
    let hold = false;
    let changed = false;
    let waiting = 0;
    let outside = 0;
    let finished = 0;
    for (let r = 0; r < this.size; r++) {
      // State first, then progress: a rank publishes its progress before it turns WAITING.
      const st = Atomics.load(w, this.state[r]);
      const prog = Atomics.load(w, this.progress[r]);
      const hb = Atomics.load(w, this.beat[r]);
      const silent = hb === this.lastBeat[r] ? this.silent[r] + 1 : 0;
      this.silent[r] = silent;
      if (st !== this.lastState[r] || prog !== this.lastProgress[r]) changed = true;
      this.lastState[r] = st;
      this.lastProgress[r] = prog;
      this.lastBeat[r] = hb;
      this.outside[r] = 0;
      // A beat that found the rank not idle since the last look (it loads, does I/O, runs vcoll).
      const busyBeats = Atomics.load(w, this.busyBeats[r]);
      const busied = busyBeats !== this.lastBusyBeats[r];
      this.lastBusyBeats[r] = busyBeats;
      if (st === RANK_WAITING) {
        waiting++;
        if (silent >= BUSY_LOOKS || Atomics.load(w, this.bell[r]) !== 0) stuck = false;
        else if (silent > 0) hold = true;
      } else if (st === RANK_RUNNING && silent < BUSY_LOOKS && !busied && Atomics.load(w, this.state[r] + IDLE_OFFSET) !== 0) {
        // In its program, outside vcoll, its event loop idle but for timers: awaiting something else.
        this.outside[r] = 1;
        outside++;
        if (silent > 0) hold = true;
      } else if (st === RANK_FINISHED) finished++;
      else stuck = false;
    }
    // Someone must be stuck in or for vcoll: a rank waiting in it, or a rank outside it that
    // the finished ones left behind (ranks that all sleep on timers, none finished, just sleep).
    if (!stuck || (waiting === 0 && (outside === 0 || finished === 0))) {
      this.since = -1;
      return false;
    }
    if (changed || this.since < 0) {
      this.since = now;
      return false;
    }
    if (hold || now - this.since < this.deadlockMs) return false;
    // Marked before the failure word: a rank that sees the deadlock finds them marked.
    for (let r = 0; r < this.size; r++) if (this.outside[r] === 1) Atomics.store(w, this.state[r] + OUTSIDE_OFFSET, 1);
    if (!declareDeadlock(this.layout)) {
      for (let r = 0; r < this.size; r++) Atomics.store(w, this.state[r] + OUTSIDE_OFFSET, 0);
      return false;
    }
    this.declaredStates = Int32Array.from(this.lastState);
    return true;
  }
}
