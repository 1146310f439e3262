/**
 * The generic scatter tree's data phase (a compiled schedule) and the scatterv variants that run the tree layer's
 * trees: `optimal` (Traff17 Theorem 2; Theorem 1 under per-pair models), `binary`
 * (Theorem 3) and `two-block` (Traff17 §5.2, TWO_Scatterv). Scatter trees are gather trees
 * run backwards and have the same completion times one-ported (Traff17 §5), so the root
 * builds the same trees as for gatherv.
 *
 * Plan (init, collectives/tree-exec.ts): as gatherv/tree.ts — the root builds the tree and
 * scatters the schedules in 2⌈log₂p⌉ rounds (about 2⌈log₂p⌉·α + 40p·β in bytes); a
 * persistent plan pays it once.
 *
 * Data phase (start): a rank receives its packed buffer from its parent (a leaf straight
 * into recv, or into a buffer it copies from under model.copyAll), then runs its operations
 * in reverse gather order: it sends each child its part (one at a time, last child first)
 * and copies its own block out where the gather would have copied it in. Empty subtrees
 * receive nothing. The root sends each child's message straight from `send`: one view when
 * its blocks are contiguous there, else the blocks' views as one vectored send
 * (collectives/placement.ts), so a persistent plan sends the current contents and nothing is
 * staged. With model.ports = k > 1 the same sequence runs with at most k operations
 * outstanding and the copy as a message to itself (collectives/ports.ts). Cost on the
 * simulator: exactly evaluate(tree, counts, model, 'scatter').time, for any k.
 *
 * The trees of Dichev10 §2 (`model-binomial-min`, `-max`, `-guarded`, `traff`,
 * `model-traff`, `model-traff-guarded`) run the same way (gatherv/tree.ts,
 * treeVariant): the root builds them for the scatter — the model-based ones predict
 * parent → child here — and scatters the schedules in 2⌈log₂p⌉ rounds.
  *
 * The data phase is compiled (`treeScatter`) into one step of the sequence above (window
 * model.ports) and, for a non-root rank, one step of its message from its parent
 * (before the sequence), run by the transport's executor (collectives/compiled-plan.ts).
 */
import type { ScheduleOp } from '../../comm/schedule.js';
import type { NodeSchedule } from '../node-schedule.js';
import { localCopy, recv, send, Buffers, Steps, treePieces, type RankSchedule, type VRankDescription } from '../schedule-builder.js';

/** This rank's schedule of the scatter tree of `node` (see the module comment). */
export function treeScatter(d: VRankDescription, node: NodeSchedule, tag: number): RankSchedule {
  const b = new Buffers();
  const steps = new Steps();
  const x = treePieces('scatterv', d, node, b);
  const kids = node.children;
  const k = kids.length;
  if (node.parent >= 0 && node.total > 0) steps.add([recv(node.parent, tag, x.whole)], 1);
  // the gather sequence reversed (scatterv/tree.ts, scatterSequence)
  const ops: ScheduleOp[] = [];
  const own = (): void => {
    if (x.copies) localCopy(ops, tag, d.ports, x.block, x.own);
  };
  if (node.copyAt === k) own();
  for (let j = k - 1; j >= 0; j--) {
    if (kids[j].size > 0) ops.push(send(kids[j].rank, tag, x.children[j]));
    if (j === node.copyAt) own();
  }
  steps.add(ops, d.ports);
  return { rank: d.rank, buffers: b.list, steps: steps.list };
}
