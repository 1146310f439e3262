/**
 * The generic gather tree's data phase (a compiled schedule) and the gatherv variants that run the tree layer's
 * trees: `optimal` (Traff17 Theorem 2, fixed root; the per-pair DP of Theorem 1 under a
 * non-homogeneous model), `binary` (Traff17 Theorem 3) and `two-block` (Traff17 §5.2,
 * TWO_Gatherv).
 *
 * Plan (init, collectives/tree-exec.ts): the root builds the tree for its counts under
 * options.model and scatters every rank its schedule down the ordered binomial tree
 * (node-schedule.ts): 2⌈log₂p⌉ rounds, about 2⌈log₂p⌉·α + 40p·β (bytes), plus the builder's time
 * at the root (O(p³) for optimal and binary). A persistent plan pays this once.
 *
 * Data phase (start): exactly the tree as `evaluate` models it. One-ported, a rank receives
 * from its children one at a time in their order, makes its local copy after `copyAt`
 * receives (a rank with children copies its block into its packed buffer; a leaf sends
 * straight from its send buffer, or copies first under model.copyAll, Traff18 Lemma 4),
 * then sends its packed buffer to its parent. Empty subtrees send nothing. The root
 * receives each child's message straight into recv: one view when its blocks are
 * contiguous there, else the blocks' views as one vectored receive (two-block trees, gaps,
 * permuted displacements; collectives/placement.ts), so nothing is staged or copied. With
 * model.ports = k > 1 the same sequence runs with at most k operations outstanding and the
 * copy as a message to itself (collectives/ports.ts). Cost on the simulator: exactly
 * evaluate(tree, counts, model).time, whatever the displacements and k.
 *
 * The trees of Dichev10 §2 for heterogeneous networks (`model-binomial-min`, `-max`,
 * `-guarded`, `traff`, `model-traff`, `model-traff-guarded`; src/trees/model-binomial.ts,
 * model-traff.ts) run the same way through `treeVariant`: the root builds the tree of
 * that name from the tree registry for its counts under options.model — for the operation
 * at hand, since the model-based trees predict child → parent for a gather and parent →
 * child for a scatter (O(p²) for the binomial mappings, O(p log² p) to O(p² log p) for
 * Träff) — and the schedules go out exactly as for `optimal` (2⌈log₂p⌉ rounds). Cost on the
 * simulator: exactly evaluate(tree, counts, model, op).time.
  *
 * The data phase is compiled (`treeGather`) into one step of the sequence above (window
 * model.ports) and, for a non-root rank, one step of its message to its parent
 * (after the sequence), run by the transport's executor (collectives/compiled-plan.ts).
 */
import type { ScheduleOp } from '../../comm/schedule.js';
import type { NodeSchedule } from '../node-schedule.js';
import { localCopy, recv, send, Buffers, Steps, treePieces, type RankSchedule, type VRankDescription } from '../schedule-builder.js';

/** This rank's schedule of the gather tree of `node` (see the module comment). */
export function treeGather(d: VRankDescription, node: NodeSchedule, tag: number): RankSchedule {
  const b = new Buffers();
  const steps = new Steps();
  const x = treePieces('gatherv', d, node, b);
  const kids = node.children;
  const k = kids.length;
  const ops: ScheduleOp[] = [];
  for (let j = 0; j <= k; j++) {
    if (j === node.copyAt && x.copies) localCopy(ops, tag, d.ports, x.own, x.block);
    if (j < k && kids[j].size > 0) ops.push(recv(kids[j].rank, tag, x.children[j]));
  }
  steps.add(ops, d.ports);
  if (node.parent >= 0 && node.total > 0) steps.add([send(node.parent, tag, x.whole)], 1);
  return { rank: d.rank, buffers: b.list, steps: steps.list };
}
