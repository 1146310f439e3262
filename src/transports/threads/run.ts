/**
 * `runThreads`: runs a rank program on p worker threads connected by SharedArrayBuffer
 * channels (one SPSC channel per ordered pair of ranks). The program is a module that
 * exports `default async function (comm, args)`; each rank's return value comes back by
 * structured clone. A rank that throws or exits poisons every channel, so every other
 * rank's pending operations fail fast with an error naming it, and `runThreads` rejects.
 *
 * Never a hang: a deadlock monitor on the main thread (deadlock.ts) finds the run deadlocked
 * when every rank's progress loop has slept with operations pending and nothing rang it (or
 * the rank finished) for `deadlockMs` — mismatched collectives, a receive with no matching
 * send, a rank waiting for one that returned. Every waiting rank's pending operations then fail
 * with a DeadlockError listing them, and `runThreads` rejects with a DeadlockError naming every
 * rank and what it waited for (or that it had finished). A rank whose JS computes is never
 * taken for blocked (its worker's heartbeat stops), but one whose program awaits something
 * other than vcoll (timers, I/O) for longer than `deadlockMs` while every other rank waits for
 * it is: raise `deadlockMs` or pass Infinity for such programs.
 *
 * Works both from TypeScript sources (workers then load `tsx`) and from the compiled `dist/`.
 */

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CommunicationError, DeadlockError, InvalidArgumentError, type DeadlockedRank } from '../../errors.js';
import { DeadlockMonitor, defaultDeadlockMs, heartbeatIntervalMs, monitorIntervalMs } from './deadlock.js';
import { createLayout, poisonLayout } from './layout.js';
import type { WorkerInit, WorkerReport } from './worker.js';

export interface RunThreadsOptions {
  /** Ring size of every channel in bytes (a power of two; default 64 KiB). */
  readonly channelBytes?: number;
  /** After a failure, how long to wait for the other ranks to stop before terminating them (ms). */
  readonly failureGraceMs?: number;
  /**
   * The node of every rank as `comm.nodeOf` reports it (default: all on node 0, which is the
   * truth for threads); lets hierarchical algorithms be exercised on one machine.
   */
  readonly nodes?: readonly number[];
  /**
   * How many loads of its doorbell a rank spins, when it has nothing to do, before it sleeps
   * in `Atomics.waitAsync` (default: the VCOLL_THREADS_SPIN environment variable, else 2000,
   * some 20-30 µs; 0: sleep at once; Infinity: never sleep). Spinning trades CPU for latency:
   * with more ranks than cores a smaller budget leaves the cores to the ranks that work.
   */
  readonly spinLoads?: number;
  /**
   * After how long without progress a run whose every rank waits (or has finished) is
   * reported as deadlocked, in ms (> 0; default: the VCOLL_THREADS_DEADLOCK_MS environment
   * variable, else 10000; Infinity: never). Every waiting rank's pending operations then fail
   * with a DeadlockError listing them and `runThreads` rejects with a DeadlockError naming
   * every rank. A rank computing in JS is never taken for blocked, but a program that awaits
   * non-vcoll events (timers, I/O) for longer than this while every other rank waits for it
   * is reported as deadlocked: raise it, or pass Infinity. Ranks that never sleep
   * (`spinLoads` Infinity) are never seen waiting.
   */
  readonly deadlockMs?: number;
}

const SELF_IS_TS = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(SELF_IS_TS ? './worker.ts' : './worker.js', import.meta.url);

function isTs(url: string): boolean {
  return /\.[cm]?ts$/.test(new URL(url).pathname);
}

/**
 * Starts the rank worker. From TypeScript sources (or for a .ts program) the worker boots
 * through tsx's `tsImport` (Node 20 applies neither `--import tsx` nor `module.register` to
 * worker threads reliably); from `dist/` it is a plain module worker.
 */
function startWorker(init: WorkerInit, needsTs: boolean): Worker {
  if (!needsTs) return new Worker(WORKER_URL, { workerData: init });
  // The ESM build of tsx's API: its CommonJS build cannot be used from an eval worker.
  const cjs = createRequire(import.meta.url).resolve('tsx/esm/api');
  const api = pathToFileURL(cjs.replace(/index\.cjs$/, 'index.mjs')).href;
  const boot =
    `import(${JSON.stringify(api)}).then((m) => m.tsImport(${JSON.stringify(WORKER_URL.href)}, ${JSON.stringify(WORKER_URL.href)}))` +
    `.catch((e) => { process.nextTick(() => { throw e; }); });`;
  return new Worker(boot, { eval: true, workerData: init });
}

/**
 * Runs `p` ranks of the program at `programModuleUrl` (a file URL or path) and resolves with
 * their results in rank order.
 */
export async function runThreads<R = unknown>(
  p: number,
  programModuleUrl: string | URL,
  args?: unknown,
  options: RunThreadsOptions = {},
): Promise<R[]> {
  if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be a positive integer, got ${p}`);
  const programUrl =
    programModuleUrl instanceof URL
      ? programModuleUrl.href
      : /^[a-z]+:/i.test(programModuleUrl)
        ? programModuleUrl
        : new URL(programModuleUrl, `file://${process.cwd()}/`).href;
  const nodes = options.nodes;
  if (nodes !== undefined) {
    if (!Array.isArray(nodes) || nodes.length !== p) {
      throw new InvalidArgumentError('nodes', `must list one node per rank (${p})`);
    }
    nodes.forEach((n: unknown, i) => {
      if (!Number.isInteger(n) || (n as number) < 0) {
        throw new InvalidArgumentError(`nodes[${i}]`, `must be a non-negative integer, got ${String(n)}`);
      }
    });
  }
  const spinLoads = options.spinLoads;
  if (spinLoads !== undefined && !(typeof spinLoads === 'number' && spinLoads >= 0)) {
    throw new InvalidArgumentError('spinLoads', `must be a number >= 0, got ${String(spinLoads)}`);
  }
  const deadlockMs = options.deadlockMs ?? defaultDeadlockMs();
  if (!(typeof deadlockMs === 'number' && deadlockMs > 0)) {
    throw new InvalidArgumentError('deadlockMs', `must be a number > 0 (Infinity: never), got ${String(deadlockMs)}`);
  }
  const monitored = deadlockMs !== Infinity;
  const layout = createLayout(p, options.channelBytes ?? 64 * 1024);
  const needsTs = SELF_IS_TS || isTs(programUrl);
  const grace = options.failureGraceMs ?? 2000;

  return new Promise<R[]>((resolve, reject) => {
    const results = new Array<R>(p);
    const settled = new Array<boolean>(p).fill(false);
    let remaining = p;
    let primary: CommunicationError | undefined;
    let secondary: CommunicationError | undefined;
    let failed = false;
    let finished = false;
    let graceTimer: NodeJS.Timeout | undefined;
    // What each rank reported: 'done', its pending operations when the run deadlocked, or an error.
    const reports = new Array<'done' | readonly string[] | { error: string } | undefined>(p);
    const monitor = monitored ? new DeadlockMonitor(layout, deadlockMs) : undefined;
    let monitorTimer: NodeJS.Timeout | undefined;

    const workers: Worker[] = [];
    const finish = (): void => {
      if (finished) return;
      finished = true;
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      if (monitorTimer !== undefined) clearInterval(monitorTimer);
      for (const w of workers) void w.terminate();
      if (monitor?.declared === true) reject(deadlockError(p, deadlockMs, reports, monitor));
      else if (failed) reject(primary ?? secondary);
      else resolve(results);
    };
    const startGrace = (): void => {
      if (!failed) {
        failed = true;
        graceTimer = setTimeout(finish, grace);
      }
    };
    const settle = (rank: number): void => {
      if (settled[rank]) return;
      settled[rank] = true;
      remaining--;
      if (remaining === 0) finish();
    };
    const failRank = (rank: number, message: string, causedBy: number | undefined): void => {
      if (causedBy !== undefined) {
        secondary ??= new CommunicationError(`rank ${causedBy} failed (seen by rank ${rank}): ${message}`, {
          rank: causedBy,
        });
      } else {
        primary ??= new CommunicationError(`rank ${rank} failed: ${message}`, { rank });
        poisonLayout(layout, rank);
      }
      reports[rank] ??= { error: message };
      startGrace();
      settle(rank);
    };

    if (monitor !== undefined) {
      monitorTimer = setInterval(() => {
        if (monitor.tick(performance.now())) startGrace();
      }, monitorIntervalMs(deadlockMs)).unref();
    }

    for (let rank = 0; rank < p; rank++) {
      const heartbeatMs = monitored ? heartbeatIntervalMs(deadlockMs) : undefined;
      const init: WorkerInit = { rank, layout, programUrl, args, nodes, spinLoads, heartbeatMs };
      const w = startWorker(init, needsTs);
      workers.push(w);
      w.on('message', (m: WorkerReport) => {
        if (m.type === 'done') {
          results[rank] = m.result as R;
          reports[rank] = 'done';
          settle(rank);
        } else if (m.waitsFor !== undefined) {
          // Failed by the deadlock: what it waited for (no rank to blame, nothing to poison).
          reports[rank] = m.waitsFor;
          startGrace();
          settle(rank);
        } else {
          failRank(rank, m.message, m.causedBy);
        }
      });
      w.on('error', (e: Error) => failRank(rank, e.message, undefined));
      w.on('exit', (code) => {
        if (!settled[rank] && !finished) failRank(rank, `worker exited with code ${code}`, undefined);
      });
    }
  });
}

/** Ranks (waiting ones) and operations per rank the run's DeadlockError message shows. */
const MESSAGE_RANKS = 16;
const MESSAGE_OPS = 4;

/** The run's DeadlockError: every rank with what it waited for, had finished, or reported. */
function deadlockError(
  p: number,
  deadlockMs: number,
  reports: readonly ('done' | readonly string[] | { error: string } | undefined)[],
  monitor: DeadlockMonitor,
): DeadlockError {
  const ranks: DeadlockedRank[] = [];
  const waiting: string[] = [];
  const finishedRanks: number[] = [];
  const other: string[] = [];
  for (let r = 0; r < p; r++) {
    const rep = reports[r];
    if (rep === 'done' || (rep === undefined && monitor.finishedAtDeclaration(r))) {
      ranks.push({ rank: r, finished: true, waitsFor: [] });
      finishedRanks.push(r);
    } else if (Array.isArray(rep)) {
      const ops = rep as readonly string[];
      ranks.push({ rank: r, finished: false, waitsFor: ops });
      const shown = ops.slice(0, MESSAGE_OPS).join(', ') + (ops.length > MESSAGE_OPS ? ', …' : '');
      waiting.push(`rank ${r} waits for ${ops.length === 0 ? 'nothing' : shown}`);
    } else {
      ranks.push({ rank: r, finished: false, waitsFor: [] });
      other.push(rep === undefined ? `rank ${r} did not report (terminated)` : `rank ${r} failed: ${(rep as { error: string }).error}`);
    }
  }
  const parts = waiting.slice(0, MESSAGE_RANKS);
  if (waiting.length > MESSAGE_RANKS) parts.push(`${waiting.length - MESSAGE_RANKS} more ranks waiting`);
  if (finishedRanks.length > 0) parts.push(`${finishedRanks.length === 1 ? 'rank' : 'ranks'} ${finishedRanks.join(', ')} finished`);
  parts.push(...other);
  return new DeadlockError(`deadlock: no rank progressed for ${deadlockMs} ms: ${parts.join('; ')}`, ranks);
}
