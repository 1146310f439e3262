/**
 * One rank's part of running one case: builds its block(s) from the deterministic pattern,
 * runs gatherv/scatterv (or plans it once with *Init and runs start()), times every
 * execution between synchronisations, counts its traffic, and verifies its data byte for
 * byte after every execution. The same code runs on the simulator and on worker threads;
 * only the timer differs (virtual clock vs. performance.now after a barrier).
 */
import { barrier } from '../collectives/basic/index.js';
import { gatherv, gathervInit, scatterv, scattervInit } from '../collectives/index.js';
import type { Communicator } from '../comm/communicator.js';
import type { CollectiveInfo, CollectiveOptions, GathervArgs, PersistentCollective, ScattervArgs } from '../collectives/types.js';
import { CommunicationError, InvalidArgumentError } from '../errors.js';
import { CountingCommunicator } from './counting.js';
import { blockOf, caseCounts, firstMismatch, fullBuffer, poison, prefixDispls, rankView, type SharedCaseData } from './data.js';
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

/** One timed unit of any collective on one rank: run it, poison what it writes, check what it wrote. */
export interface TimedExecution<I> {
  /** Runs the operation once (or start() of the plan). */
  run(): Promise<I>;
  /** Poisons the buffers the operation writes. */
  prepare(): void;
  /** Checks this rank's data; a message on the first difference. */
  check(): string | undefined;
}

/** One timed unit of a gatherv/scatterv case. */
export type Execution = TimedExecution<CollectiveInfo>;

/** A case made ready on one rank: its execution and, persistent, what planning took. */
export interface PreparedCase {
  readonly exec: Execution;
  readonly planTime: number | undefined;
  readonly planMessages: number;
  readonly planBytes: number;
}

/** The collective options of case `c`, built once per case object (every rank of a simulation shares them). */
const CASE_OPTIONS = new WeakMap<RunCase, CollectiveOptions>();

function caseOptions(c: RunCase): CollectiveOptions {
  let o = CASE_OPTIONS.get(c);
  if (o === undefined) {
    o = { algorithm: c.algorithm, model: caseModel(c), auto: { roundLatency: c.roundLatency ?? 0 } };
    CASE_OPTIONS.set(c, o);
  }
  return o;
}

/**
 * Builds this rank's blocks and buffers for case `c` and, persistent, plans it once (timed
 * between synchronisations, its traffic counted on `counting`, which wraps `comm`). With
 * `shared` (every rank in one process: the simulator), the rank's block and its own buffer
 * are views of the shared reference and arena instead of copies of its own.
 */
export function prepareCase(
  comm: Communicator,
  counting: CountingCommunicator,
  c: RunCase,
  timer: RankTimer,
  shared?: SharedCaseData,
): Promise<PreparedCase> {
  try {
    const exec = caseExecution(comm, counting, c, shared);
    if (!c.persistent) return Promise.resolve({ exec, planTime: undefined, planMessages: 0, planBytes: 0 });
    return planCase(comm, counting, timer, exec);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Plans a persistent case once, timed between synchronisations, its traffic counted. */
async function planCase(comm: Communicator, counting: CountingCommunicator, timer: RankTimer, exec: CaseExecution<GathervArgs | ScattervArgs>): Promise<PreparedCase> {
  await timer.sync(comm);
  counting.reset();
  const t0 = timer.now(comm);
  await exec.plan();
  const planTime = timer.now(comm) - t0;
  return { exec, planTime, planMessages: counting.counter.messages, planBytes: counting.counter.bytes };
}

/** This rank's blocks, buffers and execution object for case `c` (views of `shared` when given). */
function caseExecution(comm: Communicator, counting: CountingCommunicator, c: RunCase, shared: SharedCaseData | undefined): GathervExecution | ScattervExecution {
  const p = comm.size;
  const me = comm.rank;
  const isRoot = me === c.root;
  const counts = caseCounts(c, p, shared);
  const u = c.unitBytes;
  if (shared !== undefined && (shared.counts !== counts || shared.unitBytes !== u)) {
    throw new InvalidArgumentError('shared', `rank ${me}: the shared case data was built for other block sizes than case ${c.dist} p ${p}`, { rank: me });
  }
  const options = caseOptions(c);
  const mine = shared !== undefined ? rankView(shared, shared.reference, me) : blockOf(me, counts[me], u);

  let exec: GathervExecution | ScattervExecution;
  if (c.op === 'gatherv') {
    let send: Uint8Array;
    if (shared !== undefined) {
      send = rankView(shared, shared.arena, me);
      send.set(mine);
    } else send = mine.slice();
    const expected = isRoot ? (shared?.reference ?? fullBuffer(counts, u)) : undefined;
    const recv = expected ? new Uint8Array(expected.length) : undefined;
    const args: GathervArgs = isRoot
      ? { root: c.root, send, recv, counts, displs: prefixDispls(counts), unitBytes: u }
      : { root: c.root, send, unitBytes: u };
    exec = new GathervExecution(counting, options, me, mine, args, expected);
  } else {
    const full = isRoot ? (shared?.reference ?? fullBuffer(counts, u)) : undefined;
    const send = full?.slice();
    const recv = shared !== undefined ? rankView(shared, shared.arena, me) : new Uint8Array(mine.length);
    const args: ScattervArgs = isRoot
      ? { root: c.root, recv, count: counts[me], send, counts, displs: prefixDispls(counts), unitBytes: u }
      : { root: c.root, recv, count: counts[me], unitBytes: u };
    exec = new ScattervExecution(counting, options, me, mine, args, full);
  }

  return exec;
}

/**
 * One rank's execution of a case: the call (or, once planned, its plan's start()), and the
 * checks of the buffers against the reference. One object per rank, no closures (a simulated
 * run holds one per rank).
 */
abstract class CaseExecution<A extends GathervArgs | ScattervArgs> implements Execution {
  protected planned: PersistentCollective | undefined;

  constructor(
    protected readonly counting: CountingCommunicator,
    protected readonly options: CollectiveOptions,
    protected readonly me: number,
    /** This rank's block as the reference has it. */
    protected readonly mine: Uint8Array,
    protected readonly args: A,
    /** The root's reference of the buffer the root holds every block of (gatherv: receive, scatterv: send). */
    protected readonly full: Uint8Array | undefined,
  ) {}

  /** Plans the case once (persistent): run() then starts the plan. */
  async plan(): Promise<void> {
    this.planned = await this.init();
  }

  run(): Promise<CollectiveInfo> {
    const plan = this.planned;
    if (plan === undefined) return this.once();
    return plan.start().then(() => plan.info);
  }

  protected abstract init(): Promise<PersistentCollective>;
  protected abstract once(): Promise<CollectiveInfo>;
  abstract prepare(): void;
  abstract check(): string | undefined;
}

class GathervExecution extends CaseExecution<GathervArgs> {
  protected init(): Promise<PersistentCollective> {
    return gathervInit(this.counting, this.args, this.options);
  }

  protected once(): Promise<CollectiveInfo> {
    return gatherv(this.counting, this.args, this.options);
  }

  prepare(): void {
    const recv = this.args.recv;
    if (recv !== undefined && this.full !== undefined) poison(recv, this.full);
  }

  check(): string | undefined {
    const recv = this.args.recv;
    return (
      firstMismatch(this.args.send, this.mine, `rank ${this.me} send buffer (changed)`) ??
      (recv !== undefined && this.full !== undefined ? firstMismatch(recv, this.full, `root ${this.me} receive buffer`) : undefined)
    );
  }
}

class ScattervExecution extends CaseExecution<ScattervArgs> {
  protected init(): Promise<PersistentCollective> {
    return scattervInit(this.counting, this.args, this.options);
  }

  protected once(): Promise<CollectiveInfo> {
    return scatterv(this.counting, this.args, this.options);
  }

  prepare(): void {
    poison(this.args.recv, this.mine);
  }

  check(): string | undefined {
    const send = this.args.send;
    return (
      firstMismatch(this.args.recv, this.mine, `rank ${this.me} receive buffer`) ??
      (send !== undefined && this.full !== undefined ? firstMismatch(send, this.full, `root ${this.me} send buffer (changed)`) : undefined)
    );
  }
}

/**
 * Runs one case on this rank. `comm` is the plain communicator; traffic is counted on a
 * wrapper. One state machine from the first execution to the result (a simulation holds one
 * per rank).
 */
export function runCaseOnRank(comm: Communicator, c: RunCase, timer: RankTimer, shared?: SharedCaseData): Promise<RankCaseResult> {
  let runner: CaseRunner;
  try {
    const counting = new CountingCommunicator(comm);
    const exec = caseExecution(comm, counting, c, shared);
    runner = new CaseRunner(comm, counting, c.warmup, c.warmup + c.reps, timer, exec);
    if (!c.persistent) return runner.run();
    return planCase(comm, counting, timer, exec).then((prepared) => {
      runner.planned = prepared;
      return runner.run();
    });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** What a rank's timed executions give. */
export interface TimedRuns<I> {
  /** Undefined when every execution left this rank's data exactly as the reference. */
  readonly mismatch: string | undefined;
  /** Time of each timed execution (timer units). */
  readonly times: number[];
  /** Messages and bytes this rank sent in the first timed execution. */
  readonly messages: number;
  readonly bytes: number;
  /** What the last execution returned. */
  readonly info: I | undefined;
}

/**
 * `c.warmup` untimed then `c.reps` timed executions of `exec` on this rank, each prepared,
 * started after a synchronisation and checked; traffic counted on `counting`.
 */
export function timedRuns<I>(comm: Communicator, counting: CountingCommunicator, c: { readonly warmup: number; readonly reps: number }, timer: RankTimer, exec: TimedExecution<I>): Promise<TimedRuns<I>> {
  return new TimedRunsRunner(comm, counting, c.warmup, c.warmup + c.reps, timer, exec).run();
}

/**
 * timedRuns as a state machine driven by callbacks (no suspended async frame: a simulation
 * holds one per rank while they all wait); what it resolves with is the subclass's `result`.
 */
abstract class TimedRunner<I, R> {
  private i = 0;
  protected mismatch: string | undefined;
  protected readonly times: number[] = [];
  protected messages = 0;
  protected bytes = 0;
  protected info: I | undefined;
  private t0 = 0;
  private resolve: (r: R) => void = noop;
  private reject: (e: unknown) => void = noop;
  private readonly failed = (e: unknown): void => this.reject(e);

  constructor(
    protected readonly comm: Communicator,
    private readonly counting: CountingCommunicator,
    private readonly warmup: number,
    private readonly total: number,
    private readonly timer: RankTimer,
    private readonly exec: TimedExecution<I>,
  ) {}

  protected abstract result(): R;

  run(): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      this.next();
    });
  }

  /** The next execution, or the result after the last. */
  private next(): void {
    if (this.i >= this.total) {
      let r: R;
      try {
        r = this.result();
      } catch (e) {
        this.reject(e);
        return;
      }
      this.resolve(r);
      return;
    }
    try {
      this.exec.prepare();
      this.timer.sync(this.comm).then(this.synced, this.failed);
    } catch (e) {
      this.reject(e);
    }
  }

  private readonly synced = (): void => {
    try {
      this.counting.reset();
      this.t0 = this.timer.now(this.comm);
      this.exec.run().then(this.ran, this.failed);
    } catch (e) {
      this.reject(e);
    }
  };

  private readonly ran = (info: I): void => {
    try {
      this.info = info;
      const t = this.timer.now(this.comm) - this.t0;
      const i = this.i;
      if (i >= this.warmup) this.times.push(t);
      if (i === this.warmup) {
        this.messages = this.counting.counter.messages;
        this.bytes = this.counting.counter.bytes;
      }
      this.mismatch ??= this.exec.check();
      this.i++;
    } catch (e) {
      this.reject(e);
      return;
    }
    this.next();
  };
}

class TimedRunsRunner<I> extends TimedRunner<I, TimedRuns<I>> {
  protected result(): TimedRuns<I> {
    const { mismatch, times, messages, bytes, info } = this;
    return { mismatch, times, messages, bytes, info };
  }
}

/** A case's timed executions on one rank, and (persistent) what its planning took. */
class CaseRunner extends TimedRunner<CollectiveInfo, RankCaseResult> {
  planned: PreparedCase | undefined;

  protected result(): RankCaseResult {
    const plan = this.planned;
    return {
      rank: this.comm.rank,
      mismatch: this.mismatch,
      times: this.times,
      planTime: plan?.planTime,
      messages: this.messages,
      bytes: this.bytes,
      planMessages: plan?.planMessages ?? 0,
      planBytes: plan?.planBytes ?? 0,
      info: this.info as CollectiveInfo,
    };
  }
}

const noop = (): void => {};
