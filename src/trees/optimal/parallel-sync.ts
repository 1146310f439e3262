/**
 * Synchronization of the two-core crossing kernel (Traff17 Theorem 2, §3.2, Figure 6; the
 * kernel is optimal/crossing-kernel.ts, the driver optimal/parallel-kernel.ts, the worker
 * optimal/parallel-worker.ts). Both threads take blocks of columns (64 from p = 1024 on:
 * crossing-kernel.ts blockWidth) from a shared counter (fillBlocks) and fill them row by row;
 * the first column of block b fills row i once block b − 1 has finished row i (BlockSync).
 * Shared state: one Int32 progress counter per block, and a small control block (next block,
 * worker state, stop flag, sleepers). Cost: an atomic store per row of a block (up to 64
 * cells), and an atomic load when the cached progress of the previous block does not suffice;
 * a thread sleeps (Atomics.wait, in slices of WAIT_SLICE_MS) only after spinning SPIN_MS.
 * No Node-specific API at run time: the worker thread and the calling thread both import it.
 */
import { newStats, type BlockSync, type CrossingCs, type CrossingStats, type CrossingTables } from './crossing-kernel.js';
import type { DpInput } from './kernel.js';
import type { MessagePort } from 'node:worker_threads';

/** Int32 slots of the control block, 64 bytes apart (no false sharing between them). */
export const CTRL = {
  /** Next block to take (Atomics.add). */
  NEXT: 0,
  /** The worker: 0 not started, 1 running, 2 done (its stats written), 3 closed (the main thread finished alone). */
  STATE: 16,
  /** 0: running; 1: the worker failed (its error is on the port); 2: the main thread gave up. */
  STOP: 32,
  /** Threads inside Atomics.wait on a progress counter (publishers notify only when > 0). */
  SLEEPERS: 48,
} as const;
export const CTRL_INTS = 64;

export const WORKER = { NOT_STARTED: 0, RUNNING: 1, DONE: 2, CLOSED: 3 } as const;
export const STOP = { NONE: 0, WORKER_FAILED: 1, MAIN_STOPPED: 2 } as const;

/**
 * How long a waiting thread spins before it sleeps (ms). Waits are short (a row of the other
 * thread's block) unless that thread was descheduled; a sleep costs a futex wake-up, which on
 * a VM can take longer than the wait itself, and two threads that sleep in turn slow down
 * each other, so spin first.
 */
const SPIN_MS = 2;
/** Longest single sleep: the stop flag and the stall clock are checked this often (ms). */
export const WAIT_SLICE_MS = 10;

/** Test-only hooks of the worker (never set by optimalTree). */
export interface WorkerHooks {
  /** Do nothing, as a worker that never booted. */
  readonly neverStart?: boolean;
  /** Throw an Error when starting the block that holds this column. */
  readonly failAtColumn?: number;
  /** Call process.exit(1) when starting the block that holds this column (a worker that dies without a word). */
  readonly exitAtColumn?: number;
}

/**
 * How the threads share the blocks: 'dynamic' (default) each takes the next block from the
 * shared counter; 'alternate' (tests) the calling thread takes blocks 0, 2, 4 …, the worker
 * 1, 3, 5 …, so both take part and every block boundary is crossed between them.
 */
export type BlockSchedule = 'dynamic' | 'alternate';

/** What the worker thread receives (structured clone: the tables and counters stay shared). */
export interface ParallelWorkerInit {
  readonly input: DpInput;
  readonly tables: CrossingTables;
  readonly width: number;
  readonly schedule: BlockSchedule;
  readonly progress: Int32Array;
  readonly ctrl: Int32Array;
  /** The worker's CrossingStats and ThreadStats (writeStats), written before STATE = DONE. */
  readonly stats: Float64Array;
  readonly port: MessagePort;
  readonly hooks: WorkerHooks;
}

/**
 * Fills blocks of `width` columns until none is left, as thread `thread` (0: the calling
 * thread, 1: the worker) of `schedule`; `before` and `after` run around each block. Returns
 * the number of columns filled.
 */
export function fillBlocks(
  st: CrossingCs,
  sync: BlockSync,
  ctrl: Int32Array,
  width: number,
  schedule: BlockSchedule,
  thread: 0 | 1,
  before?: (j0: number, j1: number) => void,
  after?: () => void,
): number {
  const p = st.input.p;
  let columns = 0;
  for (let n = 0; ; n++) {
    const b = schedule === 'alternate' ? 2 * n + thread : Atomics.add(ctrl, CTRL.NEXT, 1);
    const j0 = b * width;
    if (j0 >= p) return columns;
    const j1 = Math.min(j0 + width, p);
    before?.(j0, j1);
    st.block(j0, j1, sync, b);
    columns += j1 - j0;
    after?.();
  }
}

export const STAT_KEYS = Object.keys(newStats()) as ReadonlyArray<keyof CrossingStats>;

/** How a thread's part of a two-core run went. */
export interface ThreadStats {
  /** Columns it filled. */
  columns: number;
  /** Times it had to wait for the other thread's block; of them, times it slept; time waiting (ms). */
  waits: number;
  sleeps: number;
  waitMs: number;
}

/** Length of the shared stats buffer: CrossingStats then ThreadStats. */
export const STATS_LENGTH = STAT_KEYS.length + 4;

export function writeStats(into: Float64Array, s: CrossingStats, t: ThreadStats): void {
  STAT_KEYS.forEach((k, q) => (into[q] = s[k]));
  const n = STAT_KEYS.length;
  into[n] = t.columns;
  into[n + 1] = t.waits;
  into[n + 2] = t.sleeps;
  into[n + 3] = t.waitMs;
}

/** Adds the CrossingStats in `from` (writeStats layout) to `into`; returns the ThreadStats. */
export function addStats(into: CrossingStats, from: Float64Array): ThreadStats {
  STAT_KEYS.forEach((k, q) => (into[k] += from[q]));
  const n = STAT_KEYS.length;
  return { columns: from[n], waits: from[n + 1], sleeps: from[n + 2], waitMs: from[n + 3] };
}

/**
 * BlockSync over shared counters: progress[b] = rows of block b finished (CrossingCs.block).
 * A waiting thread spins, then sleeps in slices; on every slice it checks the stop flag (and
 * calls `stopped`, which throws) and how long the counter has not moved (`stalled` after
 * `stallMs`, which throws).
 */
export class SharedBlockSync implements BlockSync {
  constructor(
    private readonly progress: Int32Array,
    private readonly ctrl: Int32Array,
    private readonly stallMs: number,
    private readonly stopped: (code: number) => never,
    private readonly stalled: (what: string, ms: number) => never,
  ) {}

  /** Waits that did not find the rows finished at once; of them, how many slept; time spent waiting (ms). */
  waits = 0;
  sleeps = 0;
  waitMs = 0;

  waitRows(b: number, rows: number): number {
    const v = Atomics.load(this.progress, b);
    return v >= rows ? v : this.spin(b, rows);
  }

  private spin(b: number, rows: number): number {
    const progress = this.progress;
    this.waits++;
    const t0 = performance.now();
    let v = 0;
    for (let s = 1; ; s++) {
      v = Atomics.load(progress, b);
      if (v >= rows) break;
      if ((s & 1023) === 0 && performance.now() - t0 > SPIN_MS) {
        this.sleeps++;
        v = this.sleep(progress, b, rows, `block ${b} to finish ${rows} rows`);
        break;
      }
    }
    this.waitMs += performance.now() - t0;
    return v;
  }

  publish(b: number, rows: number): void {
    Atomics.store(this.progress, b, rows);
    if (Atomics.load(this.ctrl, CTRL.SLEEPERS) > 0) Atomics.notify(this.progress, b);
  }

  /** Blocks until a[q] ≥ target, or throws through `stopped` / `stalled`. */
  sleep(a: Int32Array, q: number, target: number, what: string): number {
    const ctrl = this.ctrl;
    let last = Atomics.load(a, q);
    let since = Date.now();
    for (;;) {
      const stop = Atomics.load(ctrl, CTRL.STOP);
      if (stop !== STOP.NONE) this.stopped(stop);
      Atomics.add(ctrl, CTRL.SLEEPERS, 1);
      let v = Atomics.load(a, q);
      if (v < target) Atomics.wait(a, q, v, WAIT_SLICE_MS);
      Atomics.sub(ctrl, CTRL.SLEEPERS, 1);
      v = Atomics.load(a, q);
      if (v >= target) return v;
      const now = Date.now();
      if (v !== last) {
        last = v;
        since = now;
      } else if (now - since > this.stallMs) this.stalled(what, now - since);
    }
  }
}
