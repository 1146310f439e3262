/**
 * One rank's part of a hierarchical gather or gatherv run (TraffRougier14, `vcoll run --algorithm
 * hierarchical`): its block from the deterministic pattern (src/run/data.ts), the call —
 * hierarchicalGather or hierarchicalGatherv — timed between synchronisations, its traffic
 * counted, and its data checked byte for byte after every execution: its send buffer
 * unchanged, and at the root the receive buffer equal to the reference. The same code runs on
 * the simulator (VIRTUAL_TIMER, every rank's buffers views of one shared arena, one node
 * structure shared by all) and on worker threads or MPI processes (WALL_TIMER).
 */
import { hierarchicalGather, hierarchicalGatherv, type HierarchicalInfo, type HierarchicalOptions, type HierarchicalVariantName } from '../collectives/hierarchical/index.js';
import type { Communicator } from '../comm/communicator.js';
import { InvalidArgumentError } from '../errors.js';
import { CountingCommunicator } from './counting.js';
import { blockOf, caseCounts, firstMismatch, fullBuffer, poison, rankView, type SharedCaseData } from './data.js';
import { timedRuns, type RankTimer, type TimedExecution } from './rank.js';
import type { CaseBlocks } from './spec.js';

/** What every rank of a hierarchical run needs: plain data (structured-clone safe). */
export interface HierarchicalRankCase extends CaseBlocks {
  /** 'gather': hierarchicalGather (every block b elements); 'gatherv': hierarchicalGatherv. */
  readonly collective: 'gather' | 'gatherv';
  readonly variant: HierarchicalVariantName;
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
  /** The root's: what the call reports (undefined on the other ranks). */
  readonly info: HierarchicalInfo | undefined;
}

/** What the ranks of one process share (the simulator): the case data and the call's options, node structure included. */
export interface HierarchicalShared {
  readonly data: SharedCaseData;
  readonly options: HierarchicalOptions;
}

/** Runs the case's executions on this rank. `comm` is the plain communicator; traffic is counted on a wrapper. */
export function runHierarchicalOnRank(comm: Communicator, c: HierarchicalRankCase, timer: RankTimer, shared?: HierarchicalShared): Promise<HierarchicalRankResult> {
  try {
    const counting = new CountingCommunicator(comm);
    const exec = new HierarchicalExecution(comm, counting, c, shared);
    const isRoot = comm.rank === c.root;
    return timedRuns(comm, counting, c, timer, exec).then(({ mismatch, times, messages, bytes, info }) => ({
      rank: comm.rank,
      mismatch,
      times,
      messages,
      bytes,
      info: isRoot ? info : undefined,
    }));
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * One rank's hierarchical gather or gatherv of a case: its buffers, the call, the checks. One
 * object per rank, no closures; with shared data (the simulator) it keeps only its send buffer
 * (a view of the arena), and finds its block in the reference when it checks.
 */
class HierarchicalExecution implements TimedExecution<HierarchicalInfo> {
  private readonly me: number;
  private readonly isRoot: boolean;
  private readonly counts: readonly number[];
  private readonly options: HierarchicalOptions;
  private readonly data: SharedCaseData | undefined;
  /** This rank's block as the reference has it (its own copy; undefined with shared data: a view of the reference), and its send buffer. */
  private readonly mine: Uint8Array | undefined;
  private readonly send: Uint8Array;
  /** The root's reference and receive buffer. */
  private readonly expected: Uint8Array | undefined;
  private readonly recv: Uint8Array | undefined;

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
    this.options = shared?.options ?? { variant: c.variant };
    if (data !== undefined) {
      this.mine = undefined;
      this.send = rankView(data, data.arena, me);
      this.send.set(rankView(data, data.reference, me));
    } else {
      this.mine = blockOf(me, counts[me], u);
      this.send = this.mine.slice();
    }
    this.expected = this.isRoot ? (data?.reference ?? fullBuffer(counts, u)) : undefined;
    this.recv = this.expected !== undefined ? new Uint8Array(this.expected.length) : undefined;
  }

  run(): Promise<HierarchicalInfo> {
    const { c, send, recv } = this;
    return c.collective === 'gather'
      ? hierarchicalGather(this.counting, { send, recv, root: c.root }, this.options)
      : hierarchicalGatherv(
          this.counting,
          this.isRoot ? { send, recv, root: c.root, counts: this.counts, unitBytes: c.unitBytes } : { send, root: c.root, unitBytes: c.unitBytes },
          this.options,
        );
  }

  prepare(): void {
    if (this.recv !== undefined && this.expected !== undefined) poison(this.recv, this.expected);
  }

  check(): string | undefined {
    const { recv, expected, me, data } = this;
    const mine = this.mine ?? rankView(data as SharedCaseData, (data as SharedCaseData).reference, me);
    return (
      firstMismatch(this.send, mine, `rank ${me} send buffer (changed)`) ??
      (recv !== undefined && expected !== undefined ? firstMismatch(recv, expected, `root ${me} receive buffer`) : undefined)
    );
  }
}
