/**
 * What the tree-run gatherv/scatterv variants (`binomial` and every root-built tree of the
 * variant table: `optimal`, `binary`, `two-block`, the Dichev10 trees) share: the plan phase
 * and a rank's buffers. The data phases themselves are the gather
 * executor (gatherv/tree.ts) and the scatter executor (scatterv/tree.ts).
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
 * Buffers (no communication, O(children) views): a non-root rank's packed buffer with views
 * of its own block and of each child's message, where a leaf that does not copy (no
 * model.copyAll, Traff18 Lemma 4) uses its user block directly; the root's placement of
 * each child's message in the user's buffer (collectives/placement.ts: the blocks' views at
 * their displacements, a vectored buffer when they are not contiguous — no staging).
 */
import type { Communicator } from '../comm/communicator.js';
import { ceilLog2 } from '../util/ceil-log.js';
import { V_TAGS } from './defaults.js';
import { blockView, rootLayout, sequencePlacement, type Placement } from './placement.js';
import {
  binomialNode,
  binomialSchedule,
  buildTree,
  checkOwnCount,
  distributeSchedules,
  encodeSchedules,
  nextDataTag,
  persistentPlan,
  scatterFixed,
  type EncodedSchedules,
  type NodeSchedule,
} from './node-schedule.js';
import type { PersistentCollective } from './types.js';
import type { VVariantName } from './v-variants.js';
import type { VPlanInput } from './variant.js';

/**
 * This rank's schedule in the binomial tree: the root scatters its counts down the tree.
 * Collective; ⌈log₂p⌉ rounds.
 */
export async function binomialPlan(
  comm: Communicator,
  root: number,
  counts: readonly number[] | undefined,
  ownCount: number,
  copyAll: boolean,
): Promise<NodeSchedule> {
  const p = comm.size;
  const me = comm.rank;
  let rangeCounts: ArrayLike<number>;
  if (p === 1) {
    rangeCounts = counts ?? [ownCount];
  } else {
    const all = me === root ? Int32Array.from(counts as readonly number[]) : undefined;
    rangeCounts = await scatterFixed(comm, binomialNode(p, root, me), 1, all, V_TAGS.counts);
  }
  const node = binomialSchedule(p, root, me, rangeCounts, copyAll);
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

/** The data phase of one rank for its schedule: returns the function start() runs. */
export type TreeExecutor<I> = (input: I, node: NodeSchedule, tag: number) => () => Promise<void>;

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
 * runs `executor` on it.
 */
export function treeVariant<I extends VPlanInput>(
  name: string,
  op: 'gatherv' | 'scatterv',
  description: string,
  executor: TreeExecutor<I>,
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
        ? await binomialPlan(comm, input.root, input.counts, input.count, input.model.copyAll)
        : await rootTreePlan(input, name, op);
      const info = { algorithm, constructionRounds: (binomial ? 1 : 2) * ceilLog2(comm.size), height: node.height };
      return persistentPlan(comm, info, executor(input, node, tag));
    },
  };
}

/** A non-root rank's packed buffer and its pieces. */
export interface PackedBuffer {
  /** A leaf that does not copy: `buf` is the user's block itself. */
  readonly direct: boolean;
  readonly buf: Uint8Array;
  /** This rank's block in `buf` (unused when direct). */
  readonly own: Uint8Array;
  /** Each child's message in `buf`, in the schedule's child order. */
  readonly views: readonly Uint8Array[];
}

/** The packed buffer of a non-root rank; `block` is its user block (count·unitBytes bytes). */
export function packedBuffer(node: NodeSchedule, unitBytes: number, block: Uint8Array, copyAll: boolean): PackedBuffer {
  const u = unitBytes;
  const direct = node.children.length === 0 && !copyAll;
  const buf = direct ? block : new Uint8Array(node.total * u);
  const own = buf.subarray(node.ownOffset * u, (node.ownOffset + node.count) * u);
  const views = node.children.map((c) => buf.subarray(c.offset * u, (c.offset + c.size) * u));
  return { direct, buf, own, views };
}

/**
 * The root's own block and each child's message placed in the user's buffer `buf`: the
 * blocks' views at their displacements, vectored when not contiguous (collectives/placement.ts).
 */
export function rootPlacements(
  comm: Communicator,
  buf: Uint8Array,
  input: VPlanInput,
  node: NodeSchedule,
): { readonly own: Uint8Array; readonly places: readonly Placement[] } {
  const layout = rootLayout(input);
  const places = node.children.map((c) => sequencePlacement(buf, layout, c.ranks ?? []));
  return { own: blockView(buf, layout, comm.rank), places };
}
