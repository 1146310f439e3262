/**
 * `runThreads`: runs a rank program on p ranks over worker threads connected by
 * SharedArrayBuffer channels (one SPSC channel per ordered pair of ranks, costing memory only
 * once its sender writes to it: shared-layout.ts). Up to `workers` threads run; with more
 * ranks, each thread runs a block of them. The program is a module that exports
 * `default async function (comm, args)`; each rank's return value comes back by structured
 * clone. A rank that throws or exits poisons the run, so every other rank's pending operations
 * fail fast with an error naming it, and `runThreads` rejects with a CommunicationError whose
 * `cause` is the rank's own error (class and fields kept: wire.ts), as runSim's. A run that
 * would not fit in memory is refused before anything starts (TooLargeError).
 *
 * Never a hang: a deadlock monitor on the main thread (deadlock.ts) finds the run deadlocked
 * when every rank's progress loop has slept with operations pending and nothing rang it (or
 * the rank finished) for `deadlockMs` — mismatched collectives, a receive with no matching
 * send, a rank waiting for one that returned. Every waiting rank's pending operations then fail
 * with a DeadlockError listing them, and `runThreads` rejects with a DeadlockError naming every
 * rank and what it waited for (or that it had finished). A rank whose JS computes is never
 * taken for blocked (its worker's heartbeat stops), but one whose program awaits something
 * other than vcoll (timers, I/O) for longer than `deadlockMs` while every other rank waits for
 * it, or has finished, is: raise `deadlockMs` or pass Infinity for such programs. A rank idle
 * outside vcoll (in its program, nothing of vcoll pending, only timers active, its thread's
 * event loop idle) while the others wait or have all finished is named blocked outside the
 * communicator; the run then ends once the waiting ranks reported.
 *
 * Works both from TypeScript sources (workers then load `tsx`) and from the compiled `dist/`.
 */

import { availableParallelism, totalmem } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CommunicationError, DeadlockError, InvalidArgumentError, TooLargeError, type DeadlockedRank } from '../../errors.js';
import { badTimeout, timeoutFromEnv } from '../../comm/timeout.js';
import { DeadlockMonitor, defaultDeadlockMs, heartbeatIntervalMs, monitorIntervalMs } from './deadlock.js';
import { CHANNEL_CONTROL_BYTES } from './channel.js';
import { arenaBytes, createLayout, poisonLayout } from './shared-layout.js';
import { checkArgsCloneable, fromWire } from './wire.js';
import type { WorkerInit, WorkerReport } from './worker.js';
import { programUrlOf } from '../program-url.js';
import { isTsModule, siblingModuleUrl, startModuleWorker } from '../../util/worker-boot.js';

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
   * some 20-30 µs, or 0 when ranks share worker threads (see `workers`); 0: sleep at once;
   * Infinity: never sleep). Spinning trades CPU for latency: with more ranks than cores a
   * smaller budget leaves the cores to the ranks that work.
   */
  readonly spinLoads?: number;
  /**
   * After how long without progress a run whose every rank waits (or has finished) is
   * reported as deadlocked, in ms (> 0; default: the VCOLL_THREADS_DEADLOCK_MS environment
   * variable, else 10000; Infinity: never). Every waiting rank's pending operations then fail
   * with a DeadlockError listing them and `runThreads` rejects with a DeadlockError naming
   * every rank. A rank computing in JS is never taken for blocked, but a program that awaits
   * non-vcoll events (timers, I/O) for longer than this while every other rank waits for it,
   * or has finished, is reported as deadlocked: raise it, or pass Infinity. Ranks that never sleep
   * (`spinLoads` Infinity) are never seen waiting.
   */
  readonly deadlockMs?: number;
  /**
   * How many worker threads run the p ranks (an integer in [1, p]; default: p, at most
   * VCOLL_THREADS_WORKERS if set, else max(16, 4 × os.availableParallelism())). With fewer
   * workers than ranks, each worker runs a contiguous block of ranks concurrently on one
   * thread (each with its own endpoint, communicator and copy of `args`, but sharing the
   * program module's top-level state): a worker costs some 20 MB, a rank sharing one far less.
   * A rank computing in JS then also holds up the ranks of its thread.
   */
  readonly workers?: number;
  /**
   * Per-operation timeout in ms (> 0; default: the VCOLL_TIMEOUT_MS environment variable, else
   * none; Infinity: none): a send or receive of a rank still pending after this long fails with
   * a TimeoutError naming the rank, the peer and the operation, and the run rejects naming it.
   */
  readonly timeoutMs?: number;
}

/** Default ring size of a channel (bytes). */
const DEFAULT_CHANNEL_BYTES = 64 * 1024;

/** Default number of workers at most: VCOLL_THREADS_WORKERS if an integer ≥ 1, else max(16, 4 × cores). */
export function defaultMaxWorkers(): number {
  const env = Number(process.env.VCOLL_THREADS_WORKERS);
  if (Number.isInteger(env) && env >= 1) return env;
  return Math.max(16, 4 * availableParallelism());
}

// What a threads run costs, fitted (with some margin) to the peak RSS of `vcoll run --transport
// threads --op gatherv --algorithm linear` on Node 20 / x86-64, 16 workers: 331 MB at p = 100,
// 408 MB at 400, 611 MB at 1000, 1127 MB at 2000 — the main thread, a worker thread with vcoll
// loaded (~19 MB), a rank's endpoint, communicator and program state (~0.2 MB), the per-peer
// state every rank keeps for every other (matching slots, caches: ~110 B), and the channel
// slots a rank typically writes (a tree or a ring: two peers).
const BASE_BYTES = 64 * 2 ** 20;
const WORKER_BYTES = 20 * 2 ** 20;
const RANK_BYTES = 256 * 2 ** 10;
const PEER_BYTES = 128;
const TYPICAL_PEERS = 2;
/** Address space the channel arenas may reserve (committed only as written). */
const ARENA_ADDRESS_MAX = 2 ** 44;

/**
 * What a threads run of p ranks on `workers` workers needs, in bytes (its channels beyond a
 * few peers per rank come on top, as its ranks use them).
 */
export function threadsMemoryEstimate(p: number, workers: number, channelBytes = DEFAULT_CHANNEL_BYTES): number {
  return BASE_BYTES + workers * WORKER_BYTES + p * RANK_BYTES + p * p * PEER_BYTES + p * TYPICAL_PEERS * (CHANNEL_CONTROL_BYTES + channelBytes);
}

/** The memory a threads run may use: 3/4 of the machine's (or the process's cgroup limit). */
export function threadsMemoryLimit(): number {
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.() ?? 0;
  const total = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  return Math.floor(0.75 * total);
}

const gib = (n: number): string => `${(n / 2 ** 30).toFixed(n < 2 ** 30 ? 2 : 1)} GiB`;

/** Refuses (TooLargeError) a run that cannot fit, before anything is allocated or started. */
function checkMemory(p: number, workers: number, channelBytes: number): void {
  const need = threadsMemoryEstimate(p, workers, channelBytes);
  const limit = threadsMemoryLimit();
  if (need > limit) {
    throw new TooLargeError(
      'p',
      `${p} ranks on ${workers} worker threads need about ${gib(need)} (${workers} workers × ${WORKER_BYTES / 2 ** 20} MiB + ${p} ranks × ${RANK_BYTES / 2 ** 10} KiB + ${p}² peer states × ${PEER_BYTES} B + channels), more than the limit of ${gib(limit)} (3/4 of this machine's memory); use fewer ranks or workers, or the simulator`,
    );
  }
  const arena = arenaBytes(p, channelBytes);
  if (arena > ARENA_ADDRESS_MAX) {
    throw new TooLargeError(
      'p',
      `${p} ranks with ${channelBytes}-byte rings reserve ${gib(arena)} of address space for their channels, more than the limit of ${gib(ARENA_ADDRESS_MAX)}; use fewer ranks or a smaller channelBytes`,
    );
  }
}

const SELF_IS_TS = isTsModule(import.meta.url);
const WORKER_URL = siblingModuleUrl(import.meta.url, 'worker');

/**
 * Starts the rank worker. From TypeScript sources (or for a .ts program) the worker boots
 * through tsx (util/worker-boot.ts); from `dist/` it is a plain module worker.
 */
function startWorker(init: WorkerInit, needsTs: boolean): Worker {
  return startModuleWorker(WORKER_URL, needsTs, { workerData: init });
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
  const programUrl = programUrlOf(programModuleUrl);
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
  checkArgsCloneable(args);
  const timeoutMs = options.timeoutMs ?? timeoutFromEnv('VCOLL_TIMEOUT_MS');
  const badTime = badTimeout(timeoutMs ?? Infinity);
  if (badTime !== undefined) throw new InvalidArgumentError('timeoutMs', badTime);
  const channelBytes = options.channelBytes ?? DEFAULT_CHANNEL_BYTES;
  const nWorkers = options.workers ?? Math.min(p, defaultMaxWorkers());
  if (!(Number.isInteger(nWorkers) && nWorkers >= 1 && nWorkers <= p)) {
    throw new InvalidArgumentError('workers', `must be an integer in [1, p = ${p}], got ${String(nWorkers)}`);
  }
  checkMemory(p, nWorkers, channelBytes);
  // Ranks sharing a thread gain nothing from spinning for each other: they sleep at once.
  const rankSpin = spinLoads ?? (nWorkers < p && process.env.VCOLL_THREADS_SPIN === undefined ? 0 : undefined);
  const layout = createLayout(p, channelBytes);
  const needsTs = SELF_IS_TS || isTsModule(programUrl);
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
    // What each rank reported: 'done', its pending operations when the run deadlocked, or an
    // error; 'outside': the monitor found it blocked outside vcoll (it reports nothing).
    const reports = new Array<Report | undefined>(p);
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
    // `cause`: the rank's own error (rebuilt with its class and fields), as runSim keeps it.
    const failRank = (rank: number, message: string, causedBy: number | undefined, cause?: unknown): void => {
      if (causedBy !== undefined) {
        secondary ??= new CommunicationError(`rank ${causedBy} failed (seen by rank ${rank}): ${message}`, {
          rank: causedBy,
          cause,
        });
      } else {
        primary ??= new CommunicationError(`rank ${rank} failed: ${message}`, { rank, cause });
        poisonLayout(layout, rank);
      }
      reports[rank] ??= { error: message };
      startGrace();
      settle(rank);
    };

    if (monitor !== undefined) {
      monitorTimer = setInterval(() => {
        if (!monitor.tick(performance.now())) return;
        startGrace();
        // A rank blocked outside vcoll never sees the deadlock: the run ends once the others reported.
        for (let r = 0; r < p; r++) {
          if (!settled[r] && monitor.outsideAtDeclaration(r)) {
            reports[r] = 'outside';
            settle(r);
          }
        }
      }, monitorIntervalMs(deadlockMs)).unref();
    }

    const heartbeatMs = monitored ? heartbeatIntervalMs(deadlockMs) : undefined;
    for (let k = 0; k < nWorkers; k++) {
      // Worker k runs a contiguous block of ranks (one rank per worker unless p > workers).
      const first = Math.floor((k * p) / nWorkers);
      const ranks = Array.from({ length: Math.floor(((k + 1) * p) / nWorkers) - first }, (_, i) => first + i);
      const init: WorkerInit = { ranks, layout, programUrl, args, nodes, spinLoads: rankSpin, heartbeatMs, timeoutMs };
      const w = startWorker(init, needsTs);
      workers.push(w);
      w.on('message', (m: WorkerReport) => {
        const rank = m.rank;
        if (settled[rank]) return; // e.g. a rank taken for blocked outside vcoll that woke later
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
          failRank(rank, m.message, m.causedBy, fromWire(m.error));
        }
      });
      // The worker died: every rank of it that had not reported fails.
      w.on('error', (e: Error) => {
        for (const rank of ranks) if (!settled[rank]) failRank(rank, e.message, undefined, e);
      });
      w.on('exit', (code) => {
        if (finished) return;
        for (const rank of ranks) if (!settled[rank]) failRank(rank, `worker exited with code ${code}`, undefined);
      });
    }
  });
}

/** What a rank reported (see `runThreads`). */
type Report = 'done' | 'outside' | readonly string[] | { error: string };

/** Ranks (waiting ones) and operations per rank the run's DeadlockError message shows. */
const MESSAGE_RANKS = 16;
const MESSAGE_OPS = 4;

/** The run's DeadlockError: every rank with what it waited for, had finished, or reported. */
function deadlockError(
  p: number,
  deadlockMs: number,
  reports: readonly (Report | undefined)[],
  monitor: DeadlockMonitor,
): DeadlockError {
  const ranks: DeadlockedRank[] = [];
  const waiting: string[] = [];
  const finishedRanks: number[] = [];
  const outside: string[] = [];
  const other: string[] = [];
  for (let r = 0; r < p; r++) {
    const rep = reports[r];
    if (rep === 'outside') {
      ranks.push({ rank: r, finished: false, waitsFor: [] });
      outside.push(`rank ${r} blocked outside the communicator (its program awaits something other than vcoll)`);
    } else if (rep === 'done' || (rep === undefined && monitor.finishedAtDeclaration(r))) {
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
  parts.push(...outside.slice(0, MESSAGE_RANKS));
  if (outside.length > MESSAGE_RANKS) parts.push(`${outside.length - MESSAGE_RANKS} more ranks blocked outside the communicator`);
  if (finishedRanks.length > 0) parts.push(`${finishedRanks.length === 1 ? 'rank' : 'ranks'} ${finishedRanks.join(', ')} finished`);
  parts.push(...other);
  return new DeadlockError(`deadlock: no rank progressed for ${deadlockMs} ms: ${parts.join('; ')}`, ranks);
}
