/**
 * Worker thread of the two-core crossing kernel (Traff17 Theorem 2, §3.2, Figure 6; driver:
 * optimal/parallel-kernel.ts). Takes blocks of columns (fillBlocks) and fills them with
 * CrossingCs.block over the shared tables, waiting for the previous block row by row
 * (optimal/parallel-sync.ts), until none is left; then writes its stats and reports DONE.
 * Cost: about half of the O(p²)-cell crossing kernel when both threads run.
 *
 * It never leaves the calling thread waiting without a word: an exception is posted on the
 * port and raises the stop flag; process.exit raises it from the 'exit' handler. When the
 * calling thread has given up (stop flag 2), the worker just ends.
 */
import { workerData } from 'node:worker_threads';
import { CrossingCs } from './crossing-kernel.js';
import { CTRL, fillBlocks, STOP, WORKER, writeStats, SharedBlockSync, type ParallelWorkerInit } from './parallel-sync.js';

/** Unwinds the worker when the calling thread has stopped the run. */
class Stopped extends Error {}

const stopped = (): never => {
  throw new Stopped();
};

/** Hands `error` to the calling thread: on the port first, then the stop flag it polls. */
function fail(init: ParallelWorkerInit, error: unknown): void {
  const { ctrl, port } = init;
  if (Atomics.load(ctrl, CTRL.STOP) !== STOP.NONE) return;
  try {
    port.postMessage(error);
  } catch {
    port.postMessage(new Error(String(error))); // not cloneable
  }
  Atomics.store(ctrl, CTRL.STOP, STOP.WORKER_FAILED);
}

function run(init: ParallelWorkerInit): void {
  const { input, tables, width, schedule, progress, ctrl, stats, hooks } = init;
  process.on('exit', (code) => {
    if (Atomics.load(ctrl, CTRL.STATE) === WORKER.RUNNING) fail(init, new Error(`the worker thread exited with code ${code}`));
  });
  try {
    if (hooks.neverStart === true || Atomics.load(ctrl, CTRL.STOP) !== STOP.NONE) return;
    if (Atomics.compareExchange(ctrl, CTRL.STATE, WORKER.NOT_STARTED, WORKER.RUNNING) !== WORKER.NOT_STARTED) return;
    Atomics.notify(ctrl, CTRL.STATE);
    const sync = new SharedBlockSync(progress, ctrl, Infinity, stopped, stopped);
    const st = new CrossingCs(input, tables, width);
    const failAt = hooks.failAtColumn ?? -1;
    const exitAt = hooks.exitAtColumn ?? -1;
    const columns = fillBlocks(st, sync, ctrl, width, schedule, 1, (j0, j1) => {
      if (failAt >= j0 && failAt < j1) throw new Error(`test hook: the worker fails at column ${failAt}`);
      if (exitAt >= j0 && exitAt < j1) process.exit(1);
    });
    writeStats(stats, st.stats, { columns, waits: sync.waits, sleeps: sync.sleeps, waitMs: sync.waitMs });
    Atomics.store(ctrl, CTRL.STATE, WORKER.DONE);
    Atomics.notify(ctrl, CTRL.STATE);
  } catch (e) {
    if (!(e instanceof Stopped)) fail(init, e);
  } finally {
    init.port.close();
  }
}

run(workerData as ParallelWorkerInit);
