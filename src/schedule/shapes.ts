/**
 * Compiled schedules kept by shape: a collective whose schedule is a pure function of its
 * arguments (a building block of collectives/basic, a round of adaptive's construction) names
 * that shape with a key and gets the same RankSchedule object for the same key — and so what
 * the executors derived from it (bindSchedule's validation, the MPI transport's encoding) —
 * instead of compiling and checking it again. The most recent SHAPES_KEPT are kept.
 */
import type { RankSchedule } from '../comm/schedule.js';

const shapes = new Map<string, RankSchedule>();
const SHAPES_KEPT = 64;

/**
 * The schedule of `key` (a building block and every argument its compiler takes), compiled by
 * `make` the first time: a call of the same shape reuses the schedule object — and so what the
 * executors derived from it (bindSchedule's validation, MPI's encoding) — instead of compiling
 * and checking it again. Schedules are immutable, so sharing them is safe.
 */
export function scheduleOfShape(key: string, make: () => RankSchedule): RankSchedule {
  let s = shapes.get(key);
  if (s !== undefined) {
    // most recently used last
    shapes.delete(key);
  } else {
    s = make();
    if (shapes.size >= SHAPES_KEPT) shapes.delete(shapes.keys().next().value as string);
  }
  shapes.set(key, s);
  return s;
}

