/**
 * The generic scatter-tree executor and the scatterv variants that run the tree layer's
 * trees: `optimal` (seed 004 Theorem 2; Theorem 1 under per-pair models), `binary`
 * (Theorem 3) and `two-block` (seed 004 §5.2, TWO_Scatterv). Scatter trees are gather trees
 * run backwards and have the same completion times one-ported (seed 004 §5), so the root
 * builds the same trees as for gatherv.
 *
 * Plan (init): as gatherv/tree.ts — the root builds the tree and scatters the schedules in
 * 2⌈log₂p⌉ rounds (about 2⌈log₂p⌉·α + 40p·β in bytes); a persistent plan pays it once.
 *
 * Data phase (start): a rank receives its packed buffer from its parent (a leaf straight
 * into recv, or into a buffer it copies from under model.copyAll), then runs its operations
 * in reverse gather order: it sends each child its part (one at a time, last child first)
 * and copies its own block out where the gather would have copied it in. Empty subtrees
 * receive nothing. The root sends each child's message straight from `send` when its blocks
 * are contiguous there, otherwise it first copies them into a staging buffer (charged γ).
 * Cost on the simulator: evaluate(tree, counts, model, 'scatter').time, plus γ per staged
 * element at the root.
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
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';

/** The data phase of one rank in a scatter tree; returns the function start() runs. */
export function scatterExecutor(input: ScattervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  const { comm, unitBytes: u } = input;
  if (node.parent < 0) return rootScatter(input, node, tag);
  const kids = node.children;
  const k = kids.length;
  const leafDirect = k === 0 && !input.model.copyAll;
  const buf = leafDirect ? input.recv : new Uint8Array(node.total * u);
  const own = buf.subarray(node.ownOffset * u, (node.ownOffset + node.count) * u);
  const views = kids.map((c) => buf.subarray(c.offset * u, (c.offset + c.size) * u));
  return async () => {
    if (node.total > 0) {
      const st = await comm.recv(node.parent, tag, buf);
      expectStatus(comm, st, buf.length, 'scatterv data');
    }
    if (leafDirect) return;
    if (node.copyAt === k) comm.copy(input.recv, own);
    for (let j = k - 1; j >= 0; j--) {
      if (kids[j].size > 0) await comm.send(kids[j].rank, tag, views[j]);
      if (j === node.copyAt) comm.copy(input.recv, own);
    }
  };
}

function rootScatter(input: ScattervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  const { comm } = input;
  const send = input.send as Uint8Array;
  const layout = { counts: input.counts as readonly number[], displs: input.displs as readonly number[], unitBytes: input.unitBytes };
  const kids = node.children;
  const k = kids.length;
  const places: Placement[] = kids.map((c) => sequencePlacement(comm, send, layout, c.ranks ?? [], 'scatter'));
  const own = blockView(send, layout, comm.rank);
  const copyOwn = (): void => {
    if (!input.inPlace) comm.copy(input.recv, own);
  };
  return async () => {
    if (node.copyAt === k) copyOwn();
    for (let j = k - 1; j >= 0; j--) {
      if (kids[j].size > 0) {
        places[j].sync();
        await comm.send(kids[j].rank, tag, places[j].view);
      }
      if (j === node.copyAt) copyOwn();
    }
  };
}

/** A scatterv variant that runs the tree `name` built by the root. */
export function treeScattervVariant(name: TreeVariantName, description: string): ScattervVariant {
  return {
    name,
    description,
    async init(input: ScattervPlanInput): Promise<PersistentCollective> {
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
      return persistentPlan(comm, info, scatterExecutor(input, node, tag));
    },
  };
}

export const OPTIMAL_SCATTERV = treeScattervVariant(
  'optimal',
  'optimal ordered variable-degree tree for the counts (seed 004 Theorem 2; per-pair models: Theorem 1), built by the root, schedules scattered in 2⌈log₂p⌉ rounds',
);
export const BINARY_SCATTERV = treeScattervVariant(
  'binary',
  'optimal ordered binary tree for the counts (seed 004 Theorem 3), built by the root, schedules scattered in 2⌈log₂p⌉ rounds',
);
export const TWO_BLOCK_SCATTERV = treeScattervVariant(
  'two-block',
  'TWO_Scatterv (seed 004 §5.2): binomial scatters over the small- and large-block ranks joined by one transfer; at most two distinct counts',
);
