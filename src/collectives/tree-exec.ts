/**
 * What the tree-run gatherv/scatterv variants (`binomial` and every root-built tree of the
 * variant table: `optimal`, `binary`, `two-block`, the Dichev10 trees) share: the plan phase
 * and the persistent plan. The data phases themselves are schedules compiled by the gather
 * tree (gatherv/tree.ts, treeGather) and the scatter tree (scatterv/tree.ts, treeScatter),
 * run by the transport's executor (collectives/compiled-plan.ts).
 *
 * Plan (init), every rank: take the plan's data tag (node-schedule.ts, nextDataTag), get its
 * NodeSchedule, check its own count against the root's entry, and wrap the executor's data
 * phase in a persistent plan.
 * - `binomial`: the root scatters its counts down the ordered binomial tree (Traff18 §2,
 *   Lemma 2), one Int32 per rank: ⌈log₂p⌉ rounds, about ⌈log₂p⌉·α + 4(p − 1)·β per byte;
 *   each rank derives its schedule locally (node-schedule.ts, binomialSchedule).
 * - `optimal`, `binary`, `two-block` (Traff17 Theorems 1–3, §5.2): the root builds the tree
 *   for its counts under options.model (O(p³) for optimal and binary) and scatters every
 *   rank's schedule: 2⌈log₂p⌉ rounds, about 2⌈log₂p⌉·α + 40p·β per byte (node-schedule.ts).
 * A persistent plan pays this once.
 *
 * Buffers (no communication): a non-root rank's packed buffer of its subtree's blocks, where a
 * leaf that does not copy (no model.copyAll, Traff18 Lemma 4) uses its user block directly;
 * the root receives into (sends from) the user's buffer at the blocks' displacements, one
 * range per child when they are contiguous, else the blocks' ranges (collectives/placement.ts:
 * a vectored message, no staging). See collectives/schedule-builder.ts, treePieces.
 */
import type { Communicator } from '../comm/communicator.js';
import { ceilLog2 } from '../util/ceil-log.js';
import { V_TAGS } from './defaults.js';
import {
  binomialNode,
  binomialSchedule,
  buildTree,
  checkOwnCount,
  distributeSchedules,
  encodeSchedules,
  nextDataTag,
  scatterFixed,
  type EncodedSchedules,
  type NodeSchedule,
} from './node-schedule.js';
import type { PersistentCollective } from './types.js';
import { CommunicationError } from '../errors.js';
import type { RankSchedule } from '../comm/schedule.js';
import { compiledPlan, describeRank } from './compiled-plan.js';
import type { VRankDescription } from './schedule-builder.js';
import type { VVariantName } from './v-variants.js';
import type { GathervPlanInput, ScattervPlanInput, VPlanInput } from './variant.js';

/**
 * This rank's schedule in the binomial tree: the root scatters its counts down the tree.
 * Collective; ⌈log₂p⌉ rounds. Awaited in the variant's init without a frame of its own (a
 * simulation holds one suspended chain per rank): `binomialCounts` starts the scatter,
 * `binomialNodeSchedule` finishes.
 */
function binomialCounts(comm: Communicator, root: number, counts: readonly number[] | undefined, ownCount: number): Promise<ArrayLike<number>> | ArrayLike<number> {
  const p = comm.size;
  if (p === 1) return counts ?? [ownCount];
  const me = comm.rank;
  const all = me === root ? Int32Array.from(counts as readonly number[]) : undefined;
  return scatterFixed(comm, binomialNode(p, root, me), 1, all, V_TAGS.counts);
}

function binomialNodeSchedule(comm: Communicator, root: number, rangeCounts: ArrayLike<number>, ownCount: number, copyAll: boolean): NodeSchedule {
  const node = binomialSchedule(comm.size, root, comm.rank, rangeCounts, copyAll);
  checkOwnCount(comm, ownCount, node);
  return node;
}

/** This rank's schedule in the tree `name` the root builds for its counts. Collective; 2⌈log₂p⌉ rounds. */
export async function rootTreePlan(input: VPlanInput, name: string, op: 'gatherv' | 'scatterv'): Promise<NodeSchedule> {
  const { comm, root } = input;
  let encoded: EncodedSchedules | undefined;
  if (comm.rank === root) {
    const counts = input.counts as readonly number[];
    encoded = encodeSchedules(buildTree(name, counts, input.model, root, comm.rank, op), counts);
  }
  const node = await distributeSchedules(comm, root, encoded, { fixed: V_TAGS.schedule, children: V_TAGS.scheduleChildren });
  checkOwnCount(comm, input.count, node);
  return node;
}

/** The compiler of one rank's data phase on its tree (gatherv/tree.ts treeGather, scatterv/tree.ts treeScatter). */
export type TreeCompiler = (d: VRankDescription, node: NodeSchedule, tag: number) => RankSchedule;

/** The `binomial` variants' description. */
export const BINOMIAL_DESCRIPTION =
  "block-size oblivious rank-ordered binomial tree with the fixed root (the tree layer's `oblivious`); the root scatters its counts first (⌈log₂p⌉ rounds)";

export interface TreeVariant<I> {
  readonly name: VVariantName;
  readonly description: string;
  init(input: I): Promise<PersistentCollective>;
}

/**
 * The variant `name` that plans its tree (see the module comment: `binomial` from the counts
 * scattered down the binomial tree, any other name the registry's tree the root builds) and
 * runs the schedule `compile` makes of it.
 */
export function treeVariant<I extends GathervPlanInput | ScattervPlanInput>(
  name: string,
  op: 'gatherv' | 'scatterv',
  description: string,
  compile: TreeCompiler,
): TreeVariant<I> {
  // the names come from the variant table (v-variants.ts), which defines VVariantName
  const algorithm = name as VVariantName;
  const binomial = name === 'binomial';
  return {
    name: algorithm,
    description,
    async init(input: I): Promise<PersistentCollective> {
      const { comm } = input;
      const tag = nextDataTag(comm, V_TAGS.dataFirst);
      const node = binomial
        ? binomialNodeSchedule(comm, input.root, await binomialCounts(comm, input.root, input.counts, input.count), input.count, input.model.copyAll)
        : await rootTreePlan(input, name, op);
      const info = { algorithm, constructionRounds: (binomial ? 1 : 2) * ceilLog2(comm.size), height: node.height };
      // a message of another length than the tree says: the transport's error of a longer one,
      // the rank and sizes of a shorter one
      const recvError = (peer: number, _tag: number, expected: number, got: number | undefined, cause: unknown): Error =>
        got === undefined
          ? (cause as Error)
          : new CommunicationError(`rank ${comm.rank}: ${op} data from rank ${peer} has ${got} bytes, expected ${expected}`, { rank: comm.rank });
      return compiledPlan(input, compile(describeRank(input), node, tag), info, { recvError });
    },
  };
}
