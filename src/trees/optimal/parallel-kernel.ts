/**
 * The crossing kernel (optimal/crossing-kernel.ts; Traff17 Theorem 2, §3.2, Figure 6, exact
 * rule, best root) on two cores, synchronously: the calling thread and one worker thread
 * (optimal/parallel-worker.ts) fill the same tables, in SharedArrayBuffers. Both take blocks
 * of columns in ascending order from a shared counter and fill each block row by row
 * (CrossingCs.block); cell (i, j) needs row i left of j and row i's state, so the first column
 * of a block fills row i only after the previous block has finished it (optimal/parallel-sync.ts).
 * Every cell is computed by the same code (CrossingCs.cell) with the same operands and
 * operations as on one core, so the tables are identical bit for bit. Cost: the one-core
 * kernel's O(p²) cells split between two threads, plus an atomic store per block row.
 * docs/optimal-dp.md, "Two cores", has the argument and the measurements.
 *
 * The calling thread starts at once and the worker joins when it has booted (tens of ms from
 * dist/, a few hundred from the sources under tsx), so start-up costs little; a worker that
 * never boots only leaves all the work to the caller. Memory: the tables of the one-core
 * kernel (shared instead of private) plus each thread's column state (12 bytes per rank and
 * column of a block).
 *
 * Failure: the calling thread blocks only in bounded Atomics.wait slices, checking a stop flag
 * that the worker raises when it throws (its error comes over a MessagePort, read with
 * receiveMessageOnPort) or exits; a worker that dies without a word is detected when the
 * block it holds has not moved for `stallMs`. Either way the caller gets a DpWorkerError. The
 * worker is unreferenced at once and terminated before returning or throwing.
 */
import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import { VcollError } from '../../errors.js';
import { isTsModule, siblingModuleUrl, startModuleWorker } from '../../util/worker-boot.js';
import { blockWidth, CrossingCs, newCrossingTables, type CrossingAnyRootTables } from './crossing-kernel.js';
import { columnWork, Progress, sumColumnWork, type DpInput, type ProgressSink } from './kernel.js';
import {
  addStats,
  CTRL,
  CTRL_INTS,
  fillBlocks,
  STATS_LENGTH,
  STOP,
  WORKER,
  SharedBlockSync,
  type BlockSchedule,
  type ParallelWorkerInit,
  type ThreadStats,
  type WorkerHooks,
} from './parallel-sync.js';

/**
 * Smallest p for which optimalTree uses two cores by default (when the machine has two),
 * from dist/ and from the TypeScript sources (where the worker first loads tsx, some 200 ms).
 * Below them the worker joins too late to pay for its start-up: measured break-even about
 * p = 1500 from dist/ and 2500 from the sources (docs/optimal-dp.md, "Two cores").
 */
export const PARALLEL_MIN_P = 2000;
export const PARALLEL_MIN_P_TS = 3000;

const WORKER_URL = siblingModuleUrl(import.meta.url, 'parallel-worker');
const NEEDS_TS = isTsModule(import.meta.url);

/** True when optimalTree should use two cores by default for p ranks. */
export function twoCoresPay(p: number): boolean {
  return p >= (NEEDS_TS ? PARALLEL_MIN_P_TS : PARALLEL_MIN_P) && availableParallelism() >= 2;
}

/** The worker thread of the two-core DP failed: it threw (`cause`), exited, or stopped making progress. */
export class DpWorkerError extends VcollError {
  readonly reason: 'failed' | 'stalled';

  constructor(reason: 'failed' | 'stalled', message: string, options?: { cause?: unknown }) {
    super('INTERNAL', message, options);
    this.name = 'DpWorkerError';
    this.reason = reason;
  }
}

/** Internal knobs, for tests and tools (not part of optimalTree's options). */
export interface ParallelOptions {
  /** A block that has not moved for this long means the worker is gone (ms; default 60 s). */
  readonly stallMs?: number;
  /**
   * Wait for the worker to start before taking the first block (up to `stallMs`), so that a
   * 'dynamic' run shares even a small table. By default the calling thread starts at once.
   */
  readonly startTogether?: boolean;
  /** Columns per block (default blockWidth(p); any width gives the same tables). */
  readonly width?: number;
  /** How the threads share the blocks (default 'dynamic'). */
  readonly schedule?: BlockSchedule;
  readonly hooks?: WorkerHooks;
}

export interface ParallelAnyRootTables extends CrossingAnyRootTables {
  /** The calling thread's part. */
  readonly main: ThreadStats;
  /** The worker thread's part (all 0 if it started after the last block was taken). */
  readonly worker: ThreadStats;
}

/**
 * Cs (exact rule) for every range on two cores; the same tables, choices and summed
 * CrossingStats as crossingAnyRootTables. Needs crossingEligible(input).
 */
export function parallelAnyRootTables(input: DpInput, onProgress?: ProgressSink, opts: ParallelOptions = {}): ParallelAnyRootTables {
  const { p } = input;
  const stallMs = opts.stallMs ?? 60_000;
  const width = opts.width ?? blockWidth(p);
  const schedule = opts.schedule ?? 'dynamic';
  const blocks = Math.ceil(p / width);
  const tables = newCrossingTables(p, true);
  const progress = new Int32Array(new SharedArrayBuffer(4 * blocks));
  const ctrl = new Int32Array(new SharedArrayBuffer(4 * CTRL_INTS));
  const workerStats = new Float64Array(new SharedArrayBuffer(8 * STATS_LENGTH));
  const { port1, port2 } = new MessageChannel();
  const init: ParallelWorkerInit = {
    input,
    tables,
    width,
    schedule,
    progress,
    ctrl,
    stats: workerStats,
    port: port2,
    hooks: opts.hooks ?? {},
  };
  // a worker that cannot start or boot leaves the work to this thread ('dynamic') or stalls
  // the run ('alternate'); its 'error' event would come too late to tell, but must be handled
  let thread: Worker | undefined;
  try {
    thread = startModuleWorker(WORKER_URL, NEEDS_TS, { workerData: init, transferList: [port2] });
    thread.unref();
    thread.on('error', () => {});
  } catch (e) {
    port2.close();
    if (schedule === 'alternate') {
      port1.close();
      throw new DpWorkerError('failed', 'could not start the worker thread of the two-core optimal-tree DP', { cause: e });
    }
  }
  let ok = false;
  try {
    const stopped = (code: number): never => {
      if (code === STOP.WORKER_FAILED) {
        const cause = receiveMessageOnPort(port1)?.message as unknown;
        const what = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
        throw new DpWorkerError('failed', `the worker thread of the two-core optimal-tree DP failed (${what})`, { cause });
      }
      throw new DpWorkerError('failed', 'the two-core optimal-tree DP was stopped');
    };
    const stalled = (what: string, ms: number): never => {
      throw new DpWorkerError(
        'stalled',
        `the worker thread of the two-core optimal-tree DP stopped making progress (or never started): ` +
          `waited ${(ms / 1000).toFixed(1)} s for ${what}`,
      );
    };
    const sync = new SharedBlockSync(progress, ctrl, stallMs, stopped, stalled);
    if (opts.startTogether === true) sync.sleep(ctrl, CTRL.STATE, WORKER.RUNNING, 'the worker thread to start');
    const st = new CrossingCs(input, tables, width);
    const prog = new Progress(onProgress, sumColumnWork(p, 0));
    let complete = 0; // blocks [0..complete) are finished
    let done = 0;
    const report = (): void => {
      for (;;) {
        const j0 = complete * width;
        const j1 = Math.min(j0 + width, p);
        if (complete >= blocks || Atomics.load(progress, complete) !== j1) break;
        for (let j = j0; j < j1; j++) done += columnWork(0, j);
        complete++;
      }
      prog.report(done);
    };
    fillBlocks(st, sync, ctrl, width, schedule, 0, undefined, onProgress === undefined ? undefined : report);
    // the last block finished means every block has (its row 0 waited for the previous one's)
    sync.waitRows(blocks - 1, p);
    let worker: ThreadStats = { columns: 0, waits: 0, sleeps: 0, waitMs: 0 };
    const main: ThreadStats = { columns: 0, waits: sync.waits, sleeps: sync.sleeps, waitMs: sync.waitMs };
    if (Atomics.compareExchange(ctrl, CTRL.STATE, WORKER.NOT_STARTED, WORKER.CLOSED) !== WORKER.NOT_STARTED) {
      sync.sleep(ctrl, CTRL.STATE, WORKER.DONE, 'the worker thread to finish');
      worker = addStats(st.stats, workerStats);
    }
    main.columns = p - worker.columns;
    prog.report(sumColumnWork(p, 0));
    ok = true;
    return { cs: tables.cs, choice: tables.choice, nChoice: undefined, stats: st.stats, main, worker };
  } finally {
    if (!ok) Atomics.store(ctrl, CTRL.STOP, STOP.MAIN_STOPPED);
    port1.close();
    void thread?.terminate();
  }
}
