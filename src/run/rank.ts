/**
 * One rank's part of running one case: builds its block(s) from the deterministic pattern,
 * runs gatherv/scatterv (or plans it once with *Init and runs start()), times every
 * execution between synchronisations, counts its traffic, and verifies its data byte for
 * byte after every execution. The same code runs on the simulator and on worker threads;
 * only the timer differs (virtual clock vs. performance.now after a barrier).
 */
import { sharedBlockSizes } from '../workloads/distributions.js';
import { barrier } from '../collectives/basic/index.js';
import { gatherv, gathervInit, scatterv, scattervInit } from '../collectives/index.js';
import type { Communicator } from '../comm/communicator.js';
import type { CollectiveInfo, CollectiveOptions, GathervArgs, ScattervArgs } from '../collectives/types.js';
import { CommunicationError } from '../errors.js';
import { CountingCommunicator } from './counting.js';
import { blockOf, firstMismatch, fullBuffer, poison, prefixDispls } from './data.js';
import { caseModel, type RunCase } from './spec.js';

/** How a rank synchronises with the others before an execution and reads its clock. */
export interface RankTimer {
  /** Unit of `now()`: 'model' (virtual time) or 's' (seconds). */
  readonly unit: 'model' | 's';
  sync(comm: Communicator): Promise<void>;
  now(comm: Communicator): number;
}

/** The simulator's virtual clock: ideal zero-cost barrier, time in model units. */
export const VIRTUAL_TIMER: RankTimer = {
  unit: 'model',
  sync: (comm) => {
    if (!comm.clock) throw new CommunicationError('the virtual timer needs a communicator with a clock (the simulator)', { rank: comm.rank });
    return comm.clock.sync();
  },
  now: (comm) => {
    if (!comm.clock) throw new CommunicationError('the virtual timer needs a communicator with a clock (the simulator)', { rank: comm.rank });
    return comm.clock.now();
  },
};

/** Real time: a dissemination barrier, then performance.now() in seconds. */
export const WALL_TIMER: RankTimer = {
  unit: 's',
  sync: (comm) => barrier(comm),
  now: () => performance.now() / 1000,
};

/** What one rank reports for one case. */
export interface RankCaseResult {
  readonly rank: number;
  /** Undefined when every execution left this rank's data exactly as the reference. */
  readonly mismatch: string | undefined;
  /** Time of each timed execution on this rank (timer units). */
  readonly times: number[];
  /** Persistent only: time of the planning call (*Init). */
  readonly planTime: number | undefined;
  /** Messages and bytes this rank sent in one (the first timed) execution. */
  readonly messages: number;
  readonly bytes: number;
  /** Persistent only: messages and bytes this rank sent while planning. */
  readonly planMessages: number;
  readonly planBytes: number;
  readonly info: CollectiveInfo;
}

/** One timed unit of a case on one rank: run it, poison what it writes, check what it wrote. */
export interface Execution {
  /** Runs the operation once (or start() of the plan). */
  run(): Promise<CollectiveInfo>;
  /** Poisons the buffers the operation writes. */
  prepare(): void;
  /** Checks this rank's data; a message on the first difference. */
  check(): string | undefined;
}

/** A case made ready on one rank: its execution and, persistent, what planning took. */
export interface PreparedCase {
  readonly exec: Execution;
  readonly planTime: number | undefined;
  readonly planMessages: number;
  readonly planBytes: number;
}

/**
 * Builds this rank's blocks and buffers for case `c` and, persistent, plans it once (timed
 * between synchronisations, its traffic counted on `counting`, which wraps `comm`).
 */
export async function prepareCase(comm: Communicator, counting: CountingCommunicator, c: RunCase, timer: RankTimer): Promise<PreparedCase> {
  const p = comm.size;
  const me = comm.rank;
  const isRoot = me === c.root;
  const counts = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  const u = c.unitBytes;
  const options: CollectiveOptions = { algorithm: c.algorithm, model: caseModel(c), auto: { roundLatency: c.roundLatency ?? 0 } };
  const mine = blockOf(me, counts[me], u);

  let makeExecution: (persistentStart?: () => Promise<void>, info?: CollectiveInfo) => Execution;
  let gArgs: GathervArgs | undefined;
  let sArgs: ScattervArgs | undefined;
  if (c.op === 'gatherv') {
    const send = mine.slice();
    const expected = isRoot ? fullBuffer(counts, u) : undefined;
    const recv = expected ? new Uint8Array(expected.length) : undefined;
    gArgs = isRoot ? { root: c.root, send, recv, counts, displs: prefixDispls(counts), unitBytes: u } : { root: c.root, send, unitBytes: u };
    const args = gArgs;
    makeExecution = (start, info) => ({
      run: start && info ? () => start().then(() => info) : () => gatherv(counting, args, options),
      prepare: () => {
        if (recv && expected) poison(recv, expected);
      },
      check: () =>
        firstMismatch(send, mine, `rank ${me} send buffer (changed)`) ??
        (recv && expected ? firstMismatch(recv, expected, `root ${me} receive buffer`) : undefined),
    });
  } else {
    const full = isRoot ? fullBuffer(counts, u) : undefined;
    const send = full?.slice();
    const recv = new Uint8Array(mine.length);
    sArgs = isRoot
      ? { root: c.root, recv, count: counts[me], send, counts, displs: prefixDispls(counts), unitBytes: u }
      : { root: c.root, recv, count: counts[me], unitBytes: u };
    const args = sArgs;
    makeExecution = (start, info) => ({
      run: start && info ? () => start().then(() => info) : () => scatterv(counting, args, options),
      prepare: () => poison(recv, mine),
      check: () =>
        firstMismatch(recv, mine, `rank ${me} receive buffer`) ??
        (send && full ? firstMismatch(send, full, `root ${me} send buffer (changed)`) : undefined),
    });
  }

  if (!c.persistent) return { exec: makeExecution(), planTime: undefined, planMessages: 0, planBytes: 0 };
  await timer.sync(comm);
  counting.reset();
  const t0 = timer.now(comm);
  const plan = gArgs ? await gathervInit(counting, gArgs, options) : await scattervInit(counting, sArgs as ScattervArgs, options);
  const planTime = timer.now(comm) - t0;
  return { exec: makeExecution(() => plan.start(), plan.info), planTime, planMessages: counting.counter.messages, planBytes: counting.counter.bytes };
}

/** Runs one case on this rank. `comm` is the plain communicator; traffic is counted on a wrapper. */
export async function runCaseOnRank(comm: Communicator, c: RunCase, timer: RankTimer): Promise<RankCaseResult> {
  const me = comm.rank;
  const counting = new CountingCommunicator(comm);
  const { exec, planTime, planMessages, planBytes } = await prepareCase(comm, counting, c, timer);

  let mismatch: string | undefined;
  const times: number[] = [];
  let messages = 0;
  let bytes = 0;
  let info: CollectiveInfo | undefined;
  for (let i = 0; i < c.warmup + c.reps; i++) {
    exec.prepare();
    await timer.sync(comm);
    counting.reset();
    const t0 = timer.now(comm);
    info = await exec.run();
    const t = timer.now(comm) - t0;
    const timed = i >= c.warmup;
    if (timed) times.push(t);
    if (i === c.warmup) {
      messages = counting.counter.messages;
      bytes = counting.counter.bytes;
    }
    mismatch ??= exec.check();
  }
  return { rank: me, mismatch, times, planTime, messages, bytes, planMessages, planBytes, info: info as CollectiveInfo };
}
