/**
 * The generic gather-tree executor and the gatherv variants that run the tree layer's
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
 */
import { inOrder } from '../../comm/request.js';
import { selfCopy } from '../ports.js';
import { expectStatus, type NodeSchedule } from '../node-schedule.js';
import { packedBuffer, rootPlacements } from '../tree-exec.js';
import type { GathervPlanInput } from '../variant.js';

/** The data phase of one rank in a gather tree; returns the function start() runs. */
export function gatherExecutor(input: GathervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  if (node.parent < 0) return rootGather(input, node, tag);
  const { comm } = input;
  const kids = node.children;
  const k = kids.length;
  const { direct, buf, own, views } = packedBuffer(node, input.unitBytes, input.send, input.model.copyAll);
  const ports = input.model.ports;
  if (ports > 1) {
    const ops: (() => Promise<void>)[] = [];
    for (let j = 0; j <= k; j++) {
      if (j === node.copyAt && !direct) ops.push(() => selfCopy(comm, tag, own, input.send));
      if (j < k && kids[j].size > 0) {
        const view = views[j];
        const child = kids[j].rank;
        ops.push(() => comm.recv(child, tag, view).then((st) => expectStatus(comm, st, view.length, 'gatherv data')));
      }
    }
    return async () => {
      await inOrder(ops, ports, run);
      if (node.total > 0) await comm.send(node.parent, tag, buf);
    };
  }
  return async () => {
    for (let j = 0; j <= k; j++) {
      if (j === node.copyAt && !direct) comm.copy(own, input.send);
      if (j < k && kids[j].size > 0) {
        const st = await comm.recv(kids[j].rank, tag, views[j]);
        expectStatus(comm, st, views[j].length, 'gatherv data');
      }
    }
    if (node.total > 0) await comm.send(node.parent, tag, buf);
  };
}

const run = (op: () => Promise<void>): Promise<void> => op();

function rootGather(input: GathervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  const { comm } = input;
  const kids = node.children;
  const k = kids.length;
  const { own, places } = rootPlacements(comm, input.recv as Uint8Array, input, node);
  const ports = input.model.ports;
  if (ports > 1) {
    const ops: (() => Promise<void>)[] = [];
    for (let j = 0; j <= k; j++) {
      if (j === node.copyAt && !input.inPlace) ops.push(() => selfCopy(comm, tag, own, input.send));
      if (j < k && kids[j].size > 0) {
        const place = places[j];
        const child = kids[j].rank;
        ops.push(() => comm.recv(child, tag, place.buffer).then((st) => expectStatus(comm, st, place.bytes, 'gatherv data')));
      }
    }
    return () => inOrder(ops, ports, run);
  }
  return async () => {
    for (let j = 0; j <= k; j++) {
      if (j === node.copyAt && !input.inPlace) comm.copy(own, input.send);
      if (j < k && kids[j].size > 0) {
        const st = await comm.recv(kids[j].rank, tag, places[j].buffer);
        expectStatus(comm, st, places[j].bytes, 'gatherv data');
      }
    }
  };
}
