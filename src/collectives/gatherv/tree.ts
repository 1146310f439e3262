/**
 * The generic gather-tree executor and the gatherv variants that run the tree layer's
 * trees: `optimal` (seed 004 Theorem 2, fixed root; the per-pair DP of Theorem 1 under a
 * non-homogeneous model), `binary` (seed 004 Theorem 3) and `two-block` (seed 004 §5.2,
 * TWO_Gatherv).
 *
 * Plan (init): the root builds the tree for its counts under options.model and scatters
 * every rank its schedule down the ordered binomial tree (schedule.ts): 2⌈log₂p⌉ rounds,
 * about 2⌈log₂p⌉·α + 40p·β (bytes), plus the builder's time at the root (O(p³) for
 * optimal and binary). A persistent plan pays this once.
 *
 * Data phase (start): exactly the tree as `evaluate` models it, one-ported. A rank receives
 * from its children one at a time in their order, makes its local copy after `copyAt`
 * receives (a rank with children copies its block into its packed buffer; a leaf sends
 * straight from its send buffer, or copies first under model.copyAll, seed 000 Lemma 4),
 * then sends its packed buffer to its parent. Empty subtrees send nothing. The root
 * receives each child's message straight into recv when its blocks are contiguous there,
 * otherwise into a staging buffer it copies out (charged γ; two-block trees and permuted
 * displacements). Cost on the simulator: evaluate(tree, counts, model).time, plus γ per
 * staged element at the root.
 */
import { blockView, sequencePlacement, type Placement } from '../layout.js';
import { V_TAGS } from '../defaults.js';
import {
  buildTree,
  ceilLog2,
  checkOwnCount,
  distributeSchedules,
  encodeSchedules,
  expectStatus,
  nextDataTag,
  persistentPlan,
  type EncodedSchedules,
  type NodeSchedule,
  type TreeVariantName,
} from '../schedule.js';
import type { PersistentCollective } from '../types.js';
import type { GathervPlanInput, GathervVariant } from '../variant.js';

/** The data phase of one rank in a gather tree; returns the function start() runs. */
export function gatherExecutor(input: GathervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  const { comm, unitBytes: u } = input;
  const kids = node.children;
  const k = kids.length;
  if (node.parent < 0) return rootGather(input, node, tag);
  const leafDirect = k === 0 && !input.model.copyAll;
  const buf = leafDirect ? input.send : new Uint8Array(node.total * u);
  const own = buf.subarray(node.ownOffset * u, (node.ownOffset + node.count) * u);
  const views = kids.map((c) => buf.subarray(c.offset * u, (c.offset + c.size) * u));
  return async () => {
    for (let j = 0; j <= k; j++) {
      if (j === node.copyAt && !leafDirect) comm.copy(own, input.send);
      if (j < k && kids[j].size > 0) {
        const st = await comm.recv(kids[j].rank, tag, views[j]);
        expectStatus(comm, st, views[j].length, 'gatherv data');
      }
    }
    if (node.total > 0) await comm.send(node.parent, tag, buf);
  };
}

function rootGather(input: GathervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  const { comm } = input;
  const recv = input.recv as Uint8Array;
  const layout = { counts: input.counts as readonly number[], displs: input.displs as readonly number[], unitBytes: input.unitBytes };
  const kids = node.children;
  const k = kids.length;
  const places: Placement[] = kids.map((c) => sequencePlacement(comm, recv, layout, c.ranks ?? [], 'gather'));
  const own = blockView(recv, layout, comm.rank);
  return async () => {
    for (let j = 0; j <= k; j++) {
      if (j === node.copyAt && !input.inPlace) comm.copy(own, input.send);
      if (j < k && kids[j].size > 0) {
        const st = await comm.recv(kids[j].rank, tag, places[j].view);
        expectStatus(comm, st, places[j].bytes, 'gatherv data');
        places[j].sync();
      }
    }
  };
}

/** A gatherv variant that runs the tree `name` built by the root. */
export function treeGathervVariant(name: TreeVariantName, description: string): GathervVariant {
  return {
    name,
    description,
    async init(input: GathervPlanInput): Promise<PersistentCollective> {
      const { comm, root } = input;
      const tag = nextDataTag(comm, V_TAGS.dataFirst);
      let encoded: EncodedSchedules | undefined;
      if (comm.rank === root) {
        const tree = buildTree(name, input.counts as readonly number[], input.model, root, comm.rank);
        encoded = encodeSchedules(tree, input.counts as readonly number[]);
      }
      const node = await distributeSchedules(comm, root, encoded, { fixed: V_TAGS.schedule, children: V_TAGS.scheduleChildren });
      checkOwnCount(comm, input.count, node);
      const info = { algorithm: name, constructionRounds: 2 * ceilLog2(comm.size), height: node.height };
      return persistentPlan(comm, info, gatherExecutor(input, node, tag));
    },
  };
}

export const OPTIMAL_GATHERV = treeGathervVariant(
  'optimal',
  'optimal ordered variable-degree tree for the counts (seed 004 Theorem 2; per-pair models: Theorem 1), built by the root, schedules scattered in 2⌈log₂p⌉ rounds',
);
export const BINARY_GATHERV = treeGathervVariant(
  'binary',
  'optimal ordered binary tree for the counts (seed 004 Theorem 3), built by the root, schedules scattered in 2⌈log₂p⌉ rounds',
);
export const TWO_BLOCK_GATHERV = treeGathervVariant(
  'two-block',
  'TWO_Gatherv (seed 004 §5.2): binomial gathers over the small- and large-block ranks joined by one transfer; at most two distinct counts',
);
