/**
 * Entry point of one rank's worker thread: builds the rank's endpoint over the shared channels
 * and its world communicator (comm/group.ts) on it, imports the rank program
 * (`export default async function (comm, args)`), runs it and reports the result; a failure
 * poisons the rank's channels before it is reported. For the deadlock monitor (run.ts,
 * deadlock.ts) it beats the rank's heartbeat on a timer and records the rank finished once its
 * program returned and drained, or failed; a rank failed by a deadlock reports what it waited
 * for and poisons nothing.
 */

import { parentPort, workerData } from 'node:worker_threads';
import type { Communicator } from '../../comm/communicator.js';
import { createWorldCommunicator } from '../../comm/group.js';
import { CommunicationError, DeadlockError } from '../../errors.js';
import { ThreadsEndpoint } from './endpoint.js';
import { HEARTBEAT_OFFSET, RANK_FINISHED, bellOf, channelOf, failureWordOf, rankWordsOf, type ThreadsLayout } from './layout.js';

export interface WorkerInit {
  readonly rank: number;
  readonly layout: ThreadsLayout;
  readonly programUrl: string;
  readonly args: unknown;
  /** The node of every rank (absent: all on node 0). */
  readonly nodes?: readonly number[];
  /** The progress loop's spin budget (absent: the endpoint's default). */
  readonly spinLoads?: number;
  /** How often the rank's heartbeat beats (ms; absent: no deadlock monitor, no beat). */
  readonly heartbeatMs?: number;
}

/** What a worker posts back to `runThreads`. */
export type WorkerReport =
  | { readonly type: 'done'; readonly rank: number; readonly result: unknown }
  | {
      readonly type: 'error';
      readonly rank: number;
      readonly message: string;
      readonly stack: string | undefined;
      /** The peer whose failure caused this one (undefined: this rank failed on its own). */
      readonly causedBy: number | undefined;
      /** The run deadlocked: this rank's pending operations then (DeadlockError.ranks). */
      readonly waitsFor?: readonly string[];
    };

async function main(): Promise<void> {
  const init = workerData as WorkerInit;
  const port = parentPort;
  if (port === null) throw new Error('vcoll threads worker must run in a worker thread');
  const { rank, layout } = init;
  const words = new Int32Array(layout.bells);
  const endpoint = new ThreadsEndpoint({
    rank,
    size: layout.size,
    outgoing: Array.from({ length: layout.size }, (_, d) => channelOf(layout, rank, d, words)),
    incoming: Array.from({ length: layout.size }, (_, s) => channelOf(layout, s, rank, words)),
    bell: bellOf(layout, rank, undefined, words),
    failure: failureWordOf(layout, words),
    nodes: init.nodes,
    spinLoads: init.spinLoads,
    monitor: init.heartbeatMs === undefined ? undefined : rankWordsOf(layout, rank, words),
  });
  const own = rankWordsOf(layout, rank, words);
  // The heartbeat: beats while the event loop turns (not while the program's JS computes).
  const heartbeat =
    init.heartbeatMs === undefined ? undefined : setInterval(() => Atomics.add(words, own.index + HEARTBEAT_OFFSET, 1), init.heartbeatMs).unref();
  // The endpoint checks every argument as the world communicator would: validated once.
  const comm = createWorldCommunicator(endpoint, { endpointChecks: true });
  // A pending Atomics.waitAsync does not keep a thread alive: hold the event loop open
  // while the program runs.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    const mod = (await import(init.programUrl)) as { default?: unknown };
    const program = mod.default;
    if (typeof program !== 'function') {
      throw new Error(`${init.programUrl} has no default export function (comm, args)`);
    }
    const result: unknown = await (program as (c: Communicator, a: unknown) => unknown)(comm, init.args);
    await endpoint.drain();
    if (endpoint.failed !== undefined) throw endpoint.failed;
    Atomics.store(words, own.index, RANK_FINISHED);
    port.postMessage({ type: 'done', rank, result } satisfies WorkerReport);
  } catch (e) {
    // Failed by a deadlock (whatever the program made of the DeadlockError): no rank is to blame.
    const deadlock = endpoint.failed instanceof DeadlockError ? endpoint.failed : undefined;
    const peer = e instanceof CommunicationError && e.rank !== undefined && e.rank !== rank ? e.rank : undefined;
    if (peer === undefined && deadlock === undefined) endpoint.poisonAll(rank);
    Atomics.store(words, own.index, RANK_FINISHED);
    const err = e instanceof Error ? e : new Error(String(e));
    port.postMessage({
      type: 'error',
      rank,
      message: err.message,
      stack: err.stack,
      causedBy: peer,
      waitsFor: deadlock?.ranks[0]?.waitsFor,
    } satisfies WorkerReport);
  } finally {
    clearInterval(keepAlive);
    if (heartbeat !== undefined) clearInterval(heartbeat);
  }
}

await main();
