/**
 * The threads endpoint's side of deadlock detection (the monitor is deadlock.ts, run by
 * `runThreads`): the rank's words for the monitor, written on the progress loop's sleep path
 * and nowhere else — one more sleep in the progress word, then RANK_WAITING in the state word
 * (unless the worker already recorded RANK_FINISHED), and RANK_RUNNING again on waking — and
 * the DeadlockError the rank fails with once the monitor declared the run deadlocked.
 */

import { DeadlockError } from '../../errors.js';
import { PROGRESS_OFFSET, RANK_RUNNING, RANK_WAITING } from './shared-layout.js';

/** Pending operations a DeadlockError lists (in `ranks`; its message shows fewer), the rest counted. */
export const DEADLOCK_LIST_MAX = 64;
/** Pending operations a DeadlockError's message shows. */
const DEADLOCK_MESSAGE_MAX = 8;

/**
 * A rank's state word (`words[index]`) and progress word for the deadlock monitor
 * (shared-layout.ts `rankWordsOf`).
 */
export class MonitorWords {
  /** How many times the progress loop went to sleep. */
  private sleeps = 0;

  constructor(
    private readonly words: Int32Array,
    private readonly index: number,
  ) {}

  /** The loop goes to sleep with operations pending: one more sleep (published first), then waiting. */
  asleep(): void {
    this.sleeps = (this.sleeps + 1) | 0;
    Atomics.store(this.words, this.index + PROGRESS_OFFSET, this.sleeps);
    Atomics.compareExchange(this.words, this.index, RANK_RUNNING, RANK_WAITING);
  }

  /** The loop woke up. */
  awake(): void {
    Atomics.compareExchange(this.words, this.index, RANK_WAITING, RANK_RUNNING);
  }
}

/**
 * The error of rank `rank` once the run deadlocked: `waitsFor` are its pending operations (at
 * most DEADLOCK_LIST_MAX, as `pendingOperations` lists them); `blockedOutside` names the ranks
 * the monitor found blocked outside vcoll.
 */
export function deadlockError(rank: number, waitsFor: string[], blockedOutside: (() => readonly number[]) | undefined): DeadlockError {
  const shown = waitsFor.slice(0, DEADLOCK_MESSAGE_MAX);
  if (waitsFor.length > shown.length) shown.push('…');
  const what = waitsFor.length === 0 ? 'nothing pending' : `waits for ${shown.join(', ')}`;
  const outside = blockedOutside?.() ?? [];
  const shownOutside = outside.slice(0, DEADLOCK_MESSAGE_MAX).map((r) => `rank ${r} blocked outside the communicator`);
  if (outside.length > shownOutside.length) shownOutside.push(`${outside.length - shownOutside.length} more ranks blocked outside`);
  const message =
    outside.length === 0
      ? `deadlock: every rank of the run waits for a message that will never come (or has finished); rank ${rank} ${what}`
      : `deadlock: every rank of the run waits for a message that will never come, has finished or is blocked outside the communicator (${shownOutside.join(', ')}: its program awaits something other than vcoll); rank ${rank} ${what}`;
  return new DeadlockError(message, [{ rank, finished: false, waitsFor }], { rank });
}
