/**
 * Entry point of a worker thread running one or more ranks: builds each rank's endpoint over
 * the shared channels and its world communicator (comm/group.ts) on it, imports the rank
 * program (`export default async function (comm, args)`) once, runs it for every rank
 * concurrently (each with its own copy of the arguments) and reports each result; a failure
 * poisons the rank's channels before it is reported. For the deadlock monitor (run.ts,
 * deadlock.ts) it beats the rank's heartbeat on a timer (noting at each beat whether the rank is
 * idle outside vcoll) and records the rank finished once its program returned and drained, or
 * failed; a rank failed by a deadlock reports what it waited for and poisons nothing. Errors
 * cross to the main thread as data (wire.ts) and keep their class and fields.
 */

import { performance } from 'node:perf_hooks';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { Communicator } from '../../comm/communicator.js';
import { createWorldCommunicator } from '../../comm/group.js';
import { CommunicationError, DeadlockError } from '../../errors.js';
import { ThreadsEndpoint } from './endpoint.js';
import { toWire, type WireError } from './wire.js';
import {
  BUSY_BEATS_OFFSET,
  HEARTBEAT_OFFSET,
  IDLE_OFFSET,
  RANK_FINISHED,
  bellOf,
  blockedOutside,
  channelSource,
  failRun,
  failureWordOf,
  rankWordsOf,
  type ThreadsLayout,
} from './shared-layout.js';

export interface WorkerInit {
  /** The ranks this worker runs (each with its own endpoint and communicator, sharing the thread). */
  readonly ranks: readonly number[];
  readonly layout: ThreadsLayout;
  readonly programUrl: string;
  readonly args: unknown;
  /** The node of every rank (absent: all on node 0). */
  readonly nodes?: readonly number[];
  /** The progress loop's spin budget (absent: the endpoint's default). */
  readonly spinLoads?: number;
  /** How often the rank's heartbeat beats (ms; absent: no deadlock monitor, no beat). */
  readonly heartbeatMs?: number;
  /** The per-operation timeout (ms; absent: none). */
  readonly timeoutMs?: number;
}

/** What a worker posts back to `runThreads`. */
export type WorkerReport =
  | { readonly type: 'done'; readonly rank: number; readonly result: unknown }
  | {
      readonly type: 'error';
      readonly rank: number;
      readonly message: string;
      readonly stack: string | undefined;
      /** The error itself, as data (rebuilt with its class and fields by `fromWire`). */
      readonly error: WireError;
      /** The peer whose failure caused this one (undefined: this rank failed on its own). */
      readonly causedBy: number | undefined;
      /** The run deadlocked: this rank's pending operations then (DeadlockError.ranks). */
      readonly waitsFor?: readonly string[];
    };

/**
 * Above this share of the time since the last beat spent running callbacks (event-loop
 * utilization), the thread's loop counts as busy: its JS computes in pieces between timers
 * (`setTimeout(…, 0)` between chunks), it does not await them. A thread that only awaits
 * timers runs nothing but the beats (a utilization near 0).
 */
const LOOP_BUSY = 0.5;

/** Whether nothing but timers is active on this thread's event loop (no I/O, port or load in flight). */
function onlyTimers(): boolean {
  for (const r of process.getActiveResourcesInfo()) if (r !== 'Timeout') return false;
  return true;
}

/** One rank of this worker: its endpoint, communicator and monitor words. */
interface RankRun {
  readonly rank: number;
  readonly endpoint: ThreadsEndpoint;
  readonly comm: Communicator;
  readonly words: number;
  /** Its program has been called and has not returned. */
  inProgram: boolean;
}

async function main(): Promise<void> {
  const init = workerData as WorkerInit;
  const port = parentPort;
  if (port === null) throw new Error('vcoll threads worker must run in a worker thread');
  const { layout } = init;
  const words = new Int32Array(layout.bells);
  const outside = (): number[] => blockedOutside(layout, words);
  const runs: RankRun[] = init.ranks.map((rank) => {
    const endpoint = new ThreadsEndpoint({
      rank,
      size: layout.size,
      channels: channelSource(layout, rank, words),
      bell: bellOf(layout, rank, undefined, words),
      failure: failureWordOf(layout, words),
      nodes: init.nodes,
      spinLoads: init.spinLoads,
      monitor: init.heartbeatMs === undefined ? undefined : rankWordsOf(layout, rank, words),
      blockedOutside: outside,
    });
    // The endpoint checks every argument as the world communicator would: validated once.
    const comm = createWorldCommunicator(endpoint, { endpointChecks: true, timeoutMs: init.timeoutMs });
    return { rank, endpoint, comm, words: rankWordsOf(layout, rank, words).index, inProgram: false };
  });
  // The heartbeat: beats while the event loop turns (not while a program's JS computes), and
  // tells whether each rank is idle outside vcoll (shared-layout.ts IDLE_OFFSET): in its program,
  // nothing of vcoll pending, nothing but timers active and the loop mostly idle since the
  // last beat (per thread: a thread-mate's work makes every rank of the thread look busy).
  let loop = performance.eventLoopUtilization();
  const beat = (): void => {
    const now = performance.eventLoopUtilization();
    const loopBusy = performance.eventLoopUtilization(now, loop).utilization > LOOP_BUSY;
    loop = now;
    const timersOnly = !loopBusy && onlyTimers();
    for (const r of runs) {
      Atomics.add(words, r.words + HEARTBEAT_OFFSET, 1);
      const idle = r.inProgram && r.endpoint.idle && timersOnly;
      Atomics.store(words, r.words + IDLE_OFFSET, idle ? 1 : 0);
      if (!idle) Atomics.add(words, r.words + BUSY_BEATS_OFFSET, 1);
    }
  };
  const heartbeat = init.heartbeatMs === undefined ? undefined : setInterval(beat, init.heartbeatMs).unref();
  // A pending Atomics.waitAsync does not keep a thread alive: hold the event loop open
  // while the programs run.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    let program: ((c: Communicator, a: unknown) => unknown) | undefined;
    let loadError: unknown;
    try {
      const mod = (await import(init.programUrl)) as { default?: unknown };
      if (typeof mod.default !== 'function') throw new Error(`${init.programUrl} has no default export function (comm, args)`);
      program = mod.default as (c: Communicator, a: unknown) => unknown;
    } catch (e) {
      loadError = e;
    }
    // Ranks sharing this thread get their own copy of the arguments (shared memory stays shared).
    const shared = runs.length > 1;
    await Promise.all(runs.map((r) => runRank(r, port, layout, words, program, loadError, shared ? structuredClone(init.args) : init.args)));
  } finally {
    clearInterval(keepAlive);
    if (heartbeat !== undefined) clearInterval(heartbeat);
  }
}

/** Runs one rank's program and reports its result or error. */
async function runRank(
  r: RankRun,
  port: MessagePort,
  layout: ThreadsLayout,
  words: Int32Array,
  program: ((c: Communicator, a: unknown) => unknown) | undefined,
  loadError: unknown,
  args: unknown,
): Promise<void> {
  const { rank, endpoint } = r;
  try {
    if (program === undefined) throw loadError;
    r.inProgram = true;
    const result: unknown = await program(r.comm, args);
    r.inProgram = false;
    await endpoint.drain();
    if (endpoint.failed !== undefined) throw endpoint.failed;
    Atomics.store(words, r.words, RANK_FINISHED);
    port.postMessage({ type: 'done', rank, result } satisfies WorkerReport);
  } catch (e) {
    r.inProgram = false;
    // Failed by a deadlock (whatever the program made of the DeadlockError): no rank is to blame.
    const deadlock = endpoint.failed instanceof DeadlockError ? endpoint.failed : undefined;
    const peer = e instanceof CommunicationError && e.rank !== undefined && e.rank !== rank ? e.rank : undefined;
    if (peer === undefined && deadlock === undefined) {
      endpoint.poisonAll(rank);
      failRun(layout, rank); // rings every rank, also those whose channels with this one it never opened
    }
    Atomics.store(words, r.words, RANK_FINISHED);
    const err = e instanceof Error ? e : new Error(String(e));
    port.postMessage({
      type: 'error',
      rank,
      message: err.message,
      stack: err.stack,
      error: toWire(e),
      causedBy: peer,
      waitsFor: deadlock?.ranks[0]?.waitsFor,
    } satisfies WorkerReport);
  }
}

await main();
