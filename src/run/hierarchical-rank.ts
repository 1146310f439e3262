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
import { sharedBlockSizes } from '../workloads/distributions.js';
import { CountingCommunicator } from './counting.js';
import { blockOf, firstMismatch, fullBuffer, poison, rankView, type SharedCaseData } from './data.js';
import type { RankTimer } from './rank.js';
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
export async function runHierarchicalOnRank(comm: Communicator, c: HierarchicalRankCase, timer: RankTimer, shared?: HierarchicalShared): Promise<HierarchicalRankResult> {
  const p = comm.size;
  const me = comm.rank;
  const isRoot = me === c.root;
  const u = c.unitBytes;
  const counts = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  const data = shared?.data;
  if (data !== undefined && (data.counts !== counts || data.unitBytes !== u)) {
    throw new InvalidArgumentError('shared', `rank ${me}: the shared case data was built for other block sizes than case ${c.dist} p ${p}`, { rank: me });
  }
  const options: HierarchicalOptions = shared?.options ?? { variant: c.variant };
  const mine = data !== undefined ? rankView(data, data.reference, me) : blockOf(me, counts[me], u);
  let send: Uint8Array;
  if (data !== undefined) {
    send = rankView(data, data.arena, me);
    send.set(mine);
  } else send = mine.slice();
  const expected = isRoot ? (data?.reference ?? fullBuffer(counts, u)) : undefined;
  const recv = expected !== undefined ? new Uint8Array(expected.length) : undefined;
  const counting = new CountingCommunicator(comm);
  const call = (): Promise<HierarchicalInfo> =>
    c.collective === 'gather'
      ? hierarchicalGather(counting, { send, recv, root: c.root }, options)
      : hierarchicalGatherv(counting, isRoot ? { send, recv, root: c.root, counts, unitBytes: u } : { send, root: c.root, unitBytes: u }, options);

  let mismatch: string | undefined;
  const times: number[] = [];
  let messages = 0;
  let bytes = 0;
  let info: HierarchicalInfo | undefined;
  for (let i = 0; i < c.warmup + c.reps; i++) {
    if (recv !== undefined && expected !== undefined) poison(recv, expected);
    await timer.sync(comm);
    counting.reset();
    const t0 = timer.now(comm);
    info = await call();
    const t = timer.now(comm) - t0;
    if (i >= c.warmup) times.push(t);
    if (i === c.warmup) {
      messages = counting.counter.messages;
      bytes = counting.counter.bytes;
    }
    mismatch ??=
      firstMismatch(send, mine, `rank ${me} send buffer (changed)`) ??
      (recv !== undefined && expected !== undefined ? firstMismatch(recv, expected, `root ${me} receive buffer`) : undefined);
  }
  return { rank: me, mismatch, times, messages, bytes, info: isRoot ? info : undefined };
}
