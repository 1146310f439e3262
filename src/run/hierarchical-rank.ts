/**
 * One rank's part of a hierarchical gather, gatherv, scatter or scatterv run (TraffRougier14 and
 * its mirror, `vcoll run --algorithm hierarchical`): its block from the deterministic pattern
 * (src/run/data.ts), the call timed between synchronisations, its traffic counted, and its data
 * checked byte for byte after every execution — gathers: its send buffer unchanged, and at the
 * root the receive buffer equal to the reference; scatters: its receive buffer equal to its
 * block, and at the root the send buffer unchanged. Persistent (gatherv and scatterv only), the
 * call is planned once before the executions (hierarchicalGathervInit /
 * hierarchicalScattervInit, timed between synchronisations and its traffic counted on its own)
 * and every execution, warm-ups included, is the plan's start(). The same code runs on the simulator
 * (VIRTUAL_TIMER, every rank's buffers views of one shared arena, one node structure and one
 * tree model shared by all) and on worker threads or MPI processes (WALL_TIMER).
 */
import {
  hierarchicalGather,
  hierarchicalGatherv,
  hierarchicalGathervInit,
  hierarchicalScatter,
  hierarchicalScatterv,
  hierarchicalScattervInit,
  type HierarchicalGathervArgs,
  type HierarchicalInfo,
  type HierarchicalOptions,
  type HierarchicalPlan,
  type HierarchicalScattervArgs,
  type HierarchicalTreeName,
  type HierarchicalVariantName,
} from '../collectives/hierarchical/index.js';
import type { Communicator } from '../comm/communicator.js';
import { InvalidArgumentError } from '../errors.js';
import { CountingCommunicator } from './counting.js';
import { blockOf, caseCounts, firstMismatch, fullBuffer, poison, rankView, type SharedCaseData } from './data.js';
import { treeModelOf, usesTreeModel, type HierarchicalCollective, type TwoLevelParams } from './hierarchical-case.js';
import { timedRuns, type RankTimer, type TimedExecution } from './rank.js';
import type { CaseBlocks } from './spec.js';

/** What every rank of a hierarchical run needs: plain data (structured-clone safe). */
export interface HierarchicalRankCase extends CaseBlocks {
  /** The library call: hierarchicalGather / hierarchicalScatter (every block b elements) or hierarchicalGatherv / hierarchicalScatterv. */
  readonly collective: HierarchicalCollective;
  readonly variant: HierarchicalVariantName;
  readonly tree: HierarchicalTreeName;
  /** The run's two-level machine, per element: what tree 'adaptive' builds its trees for and a persistent scatterv orders its sends by (hierarchical-case.ts treeModelOf). */
  readonly twoLevel: TwoLevelParams;
  /** Plan once (hierarchicalGathervInit / hierarchicalScattervInit) and time only start(); gatherv and scatterv only. */
  readonly persistent: boolean;
}

/** The options of a call of case `c` on `comm` (threads, MPI: each rank builds its tree model from comm.nodeOf; the one-shot binomial calls use none). */
function callOptions(comm: Communicator, c: HierarchicalRankCase): HierarchicalOptions {
  if (!usesTreeModel(c)) return { variant: c.variant, tree: c.tree };
  const nodeOf = Int32Array.from({ length: comm.size }, (_, r) => comm.nodeOf(r));
  return { variant: c.variant, tree: c.tree, model: treeModelOf(c, nodeOf) };
}

/** What one rank reports. */
export interface HierarchicalRankResult {
  readonly rank: number;
  /** Undefined when every execution left this rank's data exactly as the reference. */
  readonly mismatch: string | undefined;
  /** Time of each timed execution on this rank (timer units). */
  readonly times: number[];
  /** Messages and bytes this rank sent in the first timed execution. */
  readonly messages: number;
  readonly bytes: number;
  /** Persistent only: time of the planning call (the *Init; timer units). */
  readonly planTime: number | undefined;
  /** Persistent only: messages and bytes this rank sent while planning (0 otherwise). */
  readonly planMessages: number;
  readonly planBytes: number;
  /** The root's: what the call reports (undefined on the other ranks). */
  readonly info: HierarchicalInfo | undefined;
}

/** What the ranks of one process share (the simulator): the case data and the call's options, node structure included. */
export interface HierarchicalShared {
  readonly data: SharedCaseData;
  readonly options: HierarchicalOptions;
}

/** What planning took on this rank (persistent), or nothing (one-shot). */
interface Planning {
  readonly planTime: number | undefined;
  readonly planMessages: number;
  readonly planBytes: number;
}

const NOT_PLANNED: Planning = { planTime: undefined, planMessages: 0, planBytes: 0 };

/** Plans a persistent case once, timed between synchronisations, its traffic counted (as rank.ts plans the flat cases). */
async function planOnRank(comm: Communicator, counting: CountingCommunicator, timer: RankTimer, exec: HierarchicalExecution): Promise<Planning> {
  await timer.sync(comm);
  counting.reset();
  const t0 = timer.now(comm);
  await exec.plan();
  const planTime = timer.now(comm) - t0;
  return { planTime, planMessages: counting.counter.messages, planBytes: counting.counter.bytes };
}

/**
 * Runs the case's executions on this rank (persistent: plans first). `comm` is the plain
 * communicator; traffic is counted on a wrapper.
 */
export function runHierarchicalOnRank(comm: Communicator, c: HierarchicalRankCase, timer: RankTimer, shared?: HierarchicalShared): Promise<HierarchicalRankResult> {
  try {
    const counting = new CountingCommunicator(comm);
    const exec = new HierarchicalExecution(comm, counting, c, shared);
    const isRoot = comm.rank === c.root;
    const planned = c.persistent ? planOnRank(comm, counting, timer, exec) : Promise.resolve(NOT_PLANNED);
    return planned.then((plan) =>
      timedRuns(comm, counting, c, timer, exec).then(({ mismatch, times, messages, bytes, info }) => ({
        rank: comm.rank,
        mismatch,
        times,
        messages,
        bytes,
        planTime: plan.planTime,
        planMessages: plan.planMessages,
        planBytes: plan.planBytes,
        info: isRoot ? info : undefined,
      })),
    );
  } catch (e) {
    return Promise.reject(e);
  }
}

const isScatter = (c: HierarchicalRankCase): boolean => c.collective === 'scatter' || c.collective === 'scatterv';

/**
 * One rank's hierarchical call of a case: its buffers, the call (or, once planned, its plan's
 * start()), the checks. One object per rank, no closures; with shared data (the simulator) it
 * keeps views of the arena (gathers: its send buffer; scatters: its receive buffer), and finds
 * its block in the reference when it checks. The buffers are the same objects for every
 * execution: a plan binds them once, prepare() poisons them in place.
 */
class HierarchicalExecution implements TimedExecution<HierarchicalInfo> {
  private readonly me: number;
  private readonly isRoot: boolean;
  private readonly counts: readonly number[];
  private readonly options: HierarchicalOptions;
  private readonly data: SharedCaseData | undefined;
  /** This rank's block as the reference has it (its own copy; undefined with shared data: a view of the reference). */
  private readonly mine: Uint8Array | undefined;
  /** Gathers: this rank's send buffer; scatters: its receive buffer. */
  private readonly own: Uint8Array;
  /** The root's reference of its full buffer (gathers: recv; scatters: send), and that buffer. */
  private readonly expected: Uint8Array | undefined;
  private readonly full: Uint8Array | undefined;
  /** Persistent: the plan every execution starts (set by plan()). */
  private planned: HierarchicalPlan | undefined;

  constructor(
    comm: Communicator,
    private readonly counting: CountingCommunicator,
    private readonly c: HierarchicalRankCase,
    shared: HierarchicalShared | undefined,
  ) {
    const p = comm.size;
    const me = comm.rank;
    this.me = me;
    this.isRoot = me === c.root;
    const u = c.unitBytes;
    const data = shared?.data;
    const counts = caseCounts(c, p, data);
    this.counts = counts;
    if (data !== undefined && (data.counts !== counts || data.unitBytes !== u)) {
      throw new InvalidArgumentError('shared', `rank ${me}: the shared case data was built for other block sizes than case ${c.dist} p ${p}`, { rank: me });
    }
    this.data = data;
    this.options = shared?.options ?? callOptions(comm, c);
    const scatter = isScatter(c);
    if (data !== undefined) {
      this.mine = undefined;
      this.own = rankView(data, data.arena, me);
      if (!scatter) this.own.set(rankView(data, data.reference, me));
    } else {
      this.mine = blockOf(me, counts[me], u);
      this.own = scatter ? new Uint8Array(this.mine.length) : this.mine.slice();
    }
    this.expected = this.isRoot ? (data?.reference ?? fullBuffer(counts, u)) : undefined;
    this.full = this.expected === undefined ? undefined : scatter ? this.expected.slice() : new Uint8Array(this.expected.length);
  }

  private gathervArgs(): HierarchicalGathervArgs {
    const { c, own, full } = this;
    const root = c.root;
    return this.isRoot ? { send: own, recv: full, root, counts: this.counts, unitBytes: c.unitBytes } : { send: own, root, unitBytes: c.unitBytes };
  }

  private scattervArgs(): HierarchicalScattervArgs {
    const { c, own, full } = this;
    const root = c.root;
    return this.isRoot ? { send: full, recv: own, root, counts: this.counts, unitBytes: c.unitBytes } : { recv: own, root, unitBytes: c.unitBytes };
  }

  /** Plans the case once (persistent: gatherv and scatterv): run() then starts the plan. */
  async plan(): Promise<void> {
    const { c, counting, options } = this;
    switch (c.collective) {
      case 'gatherv':
        this.planned = await hierarchicalGathervInit(counting, this.gathervArgs(), options);
        return;
      case 'scatterv':
        this.planned = await hierarchicalScattervInit(counting, this.scattervArgs(), options);
        return;
      default:
        throw new InvalidArgumentError('persistent', `rank ${this.me}: hierarchical ${c.collective} has no persistent form (persistent runs call gatherv or scatterv)`, { rank: this.me });
    }
  }

  run(): Promise<HierarchicalInfo> {
    const plan = this.planned;
    if (plan !== undefined) return plan.start().then(() => plan.info);
    const { c, own, full, counting, options } = this;
    const root = c.root;
    switch (c.collective) {
      case 'gather':
        return hierarchicalGather(counting, { send: own, recv: full, root }, options);
      case 'gatherv':
        return hierarchicalGatherv(counting, this.gathervArgs(), options);
      case 'scatter':
        return hierarchicalScatter(counting, { send: full, recv: own, root }, options);
      case 'scatterv':
        return hierarchicalScatterv(counting, this.scattervArgs(), options);
    }
  }

  private reference(): Uint8Array {
    const { data, me } = this;
    return this.mine ?? rankView(data as SharedCaseData, (data as SharedCaseData).reference, me);
  }

  prepare(): void {
    if (isScatter(this.c)) poison(this.own, this.reference());
    else if (this.full !== undefined && this.expected !== undefined) poison(this.full, this.expected);
  }

  check(): string | undefined {
    const { full, expected, me } = this;
    const mine = this.reference();
    if (isScatter(this.c)) {
      return (
        firstMismatch(this.own, mine, `rank ${me} receive buffer`) ??
        (full !== undefined && expected !== undefined ? firstMismatch(full, expected, `root ${me} send buffer (changed)`) : undefined)
      );
    }
    return (
      firstMismatch(this.own, mine, `rank ${me} send buffer (changed)`) ??
      (full !== undefined && expected !== undefined ? firstMismatch(full, expected, `root ${me} receive buffer`) : undefined)
    );
  }
}
