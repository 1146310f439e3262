/**
 * The generic scatter-tree executor and the scatterv variants that run the tree layer's
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
 */
import { inOrder } from '../../comm/request.js';
import { selfCopy } from '../ports.js';
import { expectStatus, type NodeSchedule } from '../node-schedule.js';
import { packedBuffer, rootPlacements } from '../tree-exec.js';
import type { ScattervPlanInput } from '../variant.js';

/** The data phase of one rank in a scatter tree; returns the function start() runs. */
export function scatterExecutor(input: ScattervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  if (node.parent < 0) return rootScatter(input, node, tag);
  const { comm } = input;
  const kids = node.children;
  const k = kids.length;
  const { direct, buf, own, views } = packedBuffer(node, input.unitBytes, input.recv, input.model.copyAll);
  const ports = input.model.ports;
  if (ports > 1) {
    const ops = scatterSequence(k, node.copyAt, direct ? null : () => selfCopy(comm, tag, input.recv, own), (j) =>
      kids[j].size > 0 ? () => comm.send(kids[j].rank, tag, views[j]) : null,
    );
    return async () => {
      if (node.total > 0) {
        const st = await comm.recv(node.parent, tag, buf);
        expectStatus(comm, st, buf.length, 'scatterv data');
      }
      await inOrder(ops, ports, run);
    };
  }
  return async () => {
    if (node.total > 0) {
      const st = await comm.recv(node.parent, tag, buf);
      expectStatus(comm, st, buf.length, 'scatterv data');
    }
    if (direct) return;
    if (node.copyAt === k) comm.copy(input.recv, own);
    for (let j = k - 1; j >= 0; j--) {
      if (kids[j].size > 0) await comm.send(kids[j].rank, tag, views[j]);
      if (j === node.copyAt) comm.copy(input.recv, own);
    }
  };
}

function rootScatter(input: ScattervPlanInput, node: NodeSchedule, tag: number): () => Promise<void> {
  const { comm } = input;
  const kids = node.children;
  const k = kids.length;
  const { own, places } = rootPlacements(comm, input.send as Uint8Array, input, node);
  const copyOwn = (): void => {
    if (!input.inPlace) comm.copy(input.recv, own);
  };
  const ports = input.model.ports;
  if (ports > 1) {
    const ops = scatterSequence(k, node.copyAt, input.inPlace ? null : () => selfCopy(comm, tag, input.recv, own), (j) =>
      kids[j].size > 0 ? () => comm.send(kids[j].rank, tag, places[j].buffer) : null,
    );
    return () => inOrder(ops, ports, run);
  }
  return async () => {
    if (node.copyAt === k) copyOwn();
    for (let j = k - 1; j >= 0; j--) {
      if (kids[j].size > 0) await comm.send(kids[j].rank, tag, places[j].buffer);
      if (j === node.copyAt) copyOwn();
    }
  };
}

const run = (op: () => Promise<void>): Promise<void> => op();

/**
 * A scatter node's operations in order (the gather sequence reversed): the copy first if it
 * comes after every child in the gather, then each child from the last, the copy right after
 * the child it follows in the gather. Null entries (no copy, empty subtree) are left out.
 */
function scatterSequence(
  k: number,
  copyAt: number,
  copy: (() => Promise<void>) | null,
  send: (j: number) => (() => Promise<void>) | null,
): (() => Promise<void>)[] {
  const ops: (() => Promise<void>)[] = [];
  if (copyAt === k && copy !== null) ops.push(copy);
  for (let j = k - 1; j >= 0; j--) {
    const s = send(j);
    if (s !== null) ops.push(s);
    if (j === copyAt && copy !== null) ops.push(copy);
  }
  return ops;
}
