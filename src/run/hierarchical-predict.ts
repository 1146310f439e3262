/**
 * The simulator's time of one two-level gather or gatherv (TraffRougier14 Fig. 1 and Fig. 6:
 * src/collectives/hierarchical/two-level.ts and schedule.ts), computed from the node structure,
 * the block sizes and the cost model without running it: the `predicted` of `vcoll run
 * --algorithm hierarchical`, exact on the simulator for the 'zero-copy' and 'reorder' variants.
 * The same for the two-level scatter and scatterv (`predictTwoLevelScatter`, the mirror), and
 * for either over the adaptive trees of Traff18 (`adaptiveRolesOf`: the trees the distributed
 * construction builds, computed centrally with its decisions): exact for the regular gather and
 * scatter (no construction), the data phase alone for gatherv and scatterv (their
 * constructions come first, or beside the data: not predicted).
 *
 * The two levels form one gather tree over the p ranks: on every node the ordered-hypercube
 * binomial tree (collectives/hierarchical/hypercube-role.ts) over its members in local order,
 * rooted at the root on the root's node and at the highest rank elsewhere; over the nodes the
 * same tree rooted at the root's node,
 * a node's leader sending for it (TraffRougier14 §2). Every rank but the root sends one message
 * to its parent once it has received from all its children: its own block and theirs, plus
 * for gatherv the 8-byte size check (collectives/hierarchical/size-check.ts).
 *
 * Under the simulator's rules (src/transports/sim/sim.ts: one port, half duplex; a transfer
 * starts when both ports are free; waiting transfers start in the order they were matched; a
 * message is matched when its sender posts it, at the time its own receives ended; the
 * processor's copy holds no port) a rank takes its children's messages in the order they
 * become ready:
 *   C(v) = fold over the children c by increasing C(c) of t ← max(t, C(c)) + comm(c, v, S(c)/u)
 * (children ready at the same time give the same t in any order). The root copies its own
 * block from time 0, overlapping the receives, and 'reorder' then copies every other block
 * from the node-ordered buffer into place (TraffRougier14 §4):
 *   time = max(C(root), copy(root, m_root/u)) + Σ_{i≠root} copy(root, m_i/u).
 *
 * Cost: O(p) memory; time O(p) plus the sorting of every rank's k ≤ ⌈log₂N⌉ + ⌈log₂n_max⌉
 * children, in place by insertion (O(k²) each, O(p·k) in all; no array per rank).
 */
import { orderedBinomialRole } from '../collectives/basic/tree.js';
import type { CostModel } from '../model/cost-model.js';
import type { NodeStructure } from '../collectives/hierarchical/index.js';
import {
  adaptiveLevelTree,
  binomialRoles,
  bridgeModel,
  leaderIndex,
  leaderOf,
  nodeModel,
  outermostFirst,
  type LevelRoles,
  type LevelTree,
} from '../collectives/hierarchical/level-trees.js';
import { copySlot, sendOrder } from '../collectives/hierarchical/send-order.js';
import { bridgeFor } from '../collectives/hierarchical/structure.js';

export interface TwoLevelInput {
  readonly structure: NodeStructure;
  /** Every rank's block in bytes. */
  readonly blockBytes: ArrayLike<number>;
  readonly root: number;
  /** Bytes per model unit (element). */
  readonly unitBytes: number;
  /** Bytes every message carries beyond its blocks: 8 for gatherv (the size check), 0 for gather. */
  readonly trailerBytes: number;
  /** 'reorder': the root copies every other block once after the last receive. */
  readonly reorder: boolean;
  /**
   * Every rank that receives copies its own block too, from time 0, overlapping its receives:
   * the flat binomial gather of collectives/basic/gather.ts (its ranges gathered in one buffer)
   * as a one-node structure. Default false (the two-level gather's ranks send their block in place).
   */
  readonly interiorCopies?: boolean;
  /** The tree (default: the binomial two-level tree, `rolesTree(…, binomialRolesOf(…))`); e.g. `rolesTree(…, adaptiveRolesOf(…))`. */
  readonly tree?: { readonly parent: Int32Array; readonly topDown: Int32Array };
}

/** Every rank on one node (O(p)): the flat binomial gather's tree is that structure's node tree. */
export function oneNodeStructure(p: number): NodeStructure {
  const order = new Int32Array(p);
  for (let r = 0; r < p; r++) order[r] = r;
  return { size: p, nodes: 1, nodeIndex: new Int32Array(p), localIndex: order, members: [order], largestNode: p, order, nodeStart: Int32Array.of(0, p), leaders: Int32Array.of(0) };
}

/** The predicted time (model units) of the two-level gather(v) on the simulator (see the module comment). */
export function predictTwoLevel(input: TwoLevelInput, model: Pick<CostModel, 'comm' | 'copy'>): number {
  const { structure: s, blockBytes, root, unitBytes: u, trailerBytes } = input;
  const p = s.size;
  const { parent, topDown } = input.tree ?? rolesTree(s, root, binomialRolesOf(s, root));
  // children of every rank, compressed: kids[first[v] … first[v + 1] − 1]
  const first = new Int32Array(p + 1);
  for (let v = 0; v < p; v++) if (parent[v] >= 0) first[parent[v] + 1]++;
  for (let v = 0; v < p; v++) first[v + 1] += first[v];
  const fill = first.slice(0, p);
  const kids = new Int32Array(Math.max(0, p - 1));
  for (let v = 0; v < p; v++) if (parent[v] >= 0) kids[fill[parent[v]]++] = v;

  let most = 0;
  for (let v = 0; v < p; v++) most = Math.max(most, first[v + 1] - first[v]);
  const order = new Int32Array(most); // v's children by C(c), ties in rank order: a stable insertion sort (no array per rank)
  const bytes = new Float64Array(p); // S(v): the blocks of v's subtree
  const ready = new Float64Array(p); // C(v): when v's receives have ended
  for (let i = p - 1; i >= 0; i--) {
    const v = topDown[i];
    let sum = blockBytes[v];
    const from = first[v];
    const to = first[v + 1];
    const n = to - from;
    for (let j = 0; j < n; j++) {
      const c = kids[from + j];
      let k = j;
      for (; k > 0 && ready[order[k - 1]] > ready[c]; k--) order[k] = order[k - 1];
      order[k] = c;
    }
    let t = 0;
    let instant = 0; // 0-byte messages take no port and no time (they complete when posted)
    for (let j = 0; j < n; j++) {
      const c = order[j];
      sum += bytes[c];
      const msg = bytes[c] + trailerBytes;
      if (msg > 0) t = Math.max(t, ready[c]) + model.comm(c, v, msg / u);
      else instant = Math.max(instant, ready[c]);
    }
    bytes[v] = sum;
    ready[v] = Math.max(t, instant);
    if (input.interiorCopies === true && to > from && v !== root && blockBytes[v] > 0) ready[v] = Math.max(ready[v], model.copy(v, blockBytes[v] / u));
  }
  const own = blockBytes[root];
  let time = Math.max(ready[root], own > 0 ? model.copy(root, own / u) : 0);
  if (input.reorder) {
    for (let v = 0; v < p; v++) if (v !== root && blockBytes[v] > 0) time += model.copy(root, blockBytes[v] / u);
  }
  return time;
}

/** A two-level tree with every rank's children in the order a scatter sends to them: bridge children, then node children, each outermost range first. */
export interface OrderedTree {
  readonly parent: Int32Array;
  /** Every parent before its children. */
  readonly topDown: Int32Array;
  /** Rank v's children are kids[first[v] … first[v + 1] − 1]. */
  readonly first: Int32Array;
  readonly kids: Int32Array;
}

/** The tree the roles of every rank make (`rolesOf(rank)`), O(p + Σ children). */
export function rolesTree(s: NodeStructure, root: number, rolesOf: (rank: number) => LevelRoles): OrderedTree {
  const p = s.size;
  const rootNode = s.nodeIndex[root];
  const parent = new Int32Array(p).fill(-1);
  const first = new Int32Array(p + 1);
  const lists: Int32Array[] = new Array<Int32Array>(p);
  for (let v = 0; v < p; v++) {
    const r = rolesOf(v);
    const members = s.members[s.nodeIndex[v]];
    const out = new Int32Array(r.remote.length + r.local.length);
    let k = 0;
    for (const c of r.remote) out[k++] = leaderOf(s, rootNode, root, c.peer);
    for (const c of r.local) out[k++] = members[c.peer];
    lists[v] = out;
    first[v + 1] = first[v] + out.length;
  }
  const kids = new Int32Array(first[p]);
  for (let v = 0; v < p; v++) {
    kids.set(lists[v], first[v]);
    for (const c of lists[v]) parent[c] = v;
  }
  const topDown = new Int32Array(p);
  topDown[0] = root;
  let n = 1;
  for (let i = 0; i < n; i++) {
    const v = topDown[i];
    for (let j = first[v]; j < first[v + 1]; j++) topDown[n++] = kids[j];
  }
  return { parent, topDown, first, kids };
}

/**
 * Every rank's roles in the flat binomial gather and scatter over all p ranks (collectives/basic:
 * orderedBinomialRole, recursive halving) as one node of a one-node structure (`oneNodeStructure`).
 */
export function flatRolesOf(p: number, root: number): (rank: number) => LevelRoles {
  return (rank) => {
    const r = orderedBinomialRole(p, root, rank);
    return { local: r.children, remote: [], leader: rank === root, parent: r.parent };
  };
}

/** Every rank's roles in the binomial two-level tree rooted at `root` (collectives/hierarchical/level-trees.ts). */
export function binomialRolesOf(s: NodeStructure, root: number): (rank: number) => LevelRoles {
  const rootNode = s.nodeIndex[root];
  return (rank) => binomialRoles(s, bridgeFor(s, rootNode, s.nodeIndex[rank]), root, rank);
}

/**
 * Every rank's roles in the adaptive two-level tree rooted at `root` (Traff18's trees, as the
 * distributed construction builds them: level-trees.ts `adaptiveLevelTree`): each node's tree
 * over its members' `sizes` (model units per rank) rooted at its leader, the bridge's over the
 * node totals rooted at the root's node, decided in `model` as the call decides them. O(p).
 */
export function adaptiveRolesOf(s: NodeStructure, root: number, sizes: ArrayLike<number>, model: CostModel): (rank: number) => LevelRoles {
  const rootNode = s.nodeIndex[root];
  const nodeTrees: LevelTree[] = [];
  const totals = new Float64Array(s.nodes);
  for (let b = 0; b < s.nodes; b++) {
    const members = s.members[b];
    const own = new Float64Array(members.length);
    for (let i = 0; i < members.length; i++) {
      own[i] = sizes[members[i]];
      totals[b] += own[i];
    }
    nodeTrees.push(adaptiveLevelTree(own, nodeModel(model, s, b), leaderIndex(s, rootNode, root, b)));
  }
  const bridge = adaptiveLevelTree(totals, bridgeModel(model, s, root), rootNode);
  return (rank) => {
    const b = s.nodeIndex[rank];
    const li = s.localIndex[rank];
    const t = nodeTrees[b];
    const members = s.members[b];
    const local = outermostFirst(t.joins[li]);
    if (li !== leaderIndex(s, rootNode, root, b)) return { local, remote: [], leader: false, parent: members[t.parent[li]] };
    const up = bridge.parent[b];
    return { local, remote: outermostFirst(bridge.joins[b]), leader: true, parent: up < 0 ? -1 : leaderOf(s, rootNode, root, up) };
  };
}

/** An OrderedTree in the persistent scatterv's send order, with every rank's subtree bytes and tail. */
export interface TailOrderedTree extends OrderedTree {
  /** The bytes of every rank's subtree. */
  readonly bytes: Float64Array;
  /** Every rank's tail (send-order.ts): from its message's arrival to its subtree's end, in the plan's model. */
  readonly tail: Float64Array;
}

/**
 * `tree` with every rank's children in the order the persistent scatterv sends to them
 * (collectives/hierarchical/send-order.ts: decreasing tail in `model`, the model the ranks plan
 * in; ties keep `tree`'s order), computed bottom up as the plan's pass up the tree computes it:
 * the same arithmetic in the same order, so the same order bit for bit. O(p + Σ k log k).
 */
export function tailOrderedTree(tree: OrderedTree, blockBytes: ArrayLike<number>, unitBytes: number, model: Pick<CostModel, 'comm'>): TailOrderedTree {
  const { first, kids, topDown } = tree;
  const p = topDown.length;
  const bytes = new Float64Array(p);
  const tail = new Float64Array(p);
  const out = kids.slice();
  for (let i = p - 1; i >= 0; i--) {
    const v = topDown[i];
    const from = first[v];
    const n = first[v + 1] - from;
    let b = blockBytes[v];
    const tails = new Float64Array(n);
    const costs = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      const c = kids[from + j];
      b += bytes[c];
      tails[j] = tail[c];
      costs[j] = bytes[c] > 0 ? model.comm(v, c, bytes[c] / unitBytes) : 0;
    }
    bytes[v] = b;
    const o = sendOrder(tails, costs);
    tail[v] = o.tail;
    for (let j = 0; j < n; j++) out[from + j] = kids[from + o.order[j]];
  }
  return { ...tree, kids: out, bytes, tail };
}

/**
 * Beside which of its sends the persistent scatterv's root copies its own block (`rootCopyBeside`),
 * as planned-scatter.ts picks it: send-order.ts `copySlot` over the root's sends that move bytes
 * in `tree`'s order (their tails from `tailOrderedTree`), in the model the ranks plan in.
 */
export function plannedRootCopySlot(tree: TailOrderedTree, blockBytes: ArrayLike<number>, root: number, unitBytes: number, model: Pick<CostModel, 'comm' | 'copy'>): number {
  const { first, kids, bytes } = tree;
  const tails: number[] = [];
  const costs: number[] = [];
  for (let j = first[root]; j < first[root + 1]; j++) {
    const c = kids[j];
    if (bytes[c] === 0) continue;
    tails.push(tree.tail[c]);
    costs.push(model.comm(root, c, bytes[c] / unitBytes));
  }
  const own = blockBytes[root];
  return copySlot(tails, costs, own > 0 ? model.copy(root, own / unitBytes) : 0);
}

export interface ScatterPredictInput {
  readonly structure: NodeStructure;
  readonly tree: OrderedTree;
  /** Every rank's block in bytes. */
  readonly blockBytes: ArrayLike<number>;
  readonly root: number;
  /** Bytes per model unit (element). */
  readonly unitBytes: number;
  /**
   * Bytes a message to `child` carries beyond its subtree's blocks, given how many ranks the
   * subtree holds and whether it is a bridge message: the scatterv's counts (binomial: 4 per
   * rank of an inner subtree) or node checks (adaptive: 4 per node of a bridge range).
   */
  readonly extraBytes?: (child: number, ranks: number) => number;
  /** 'reorder': the root copies every other block into its packed buffer before its first send. */
  readonly reorder: boolean;
  /** Every non-root rank with children copies its own block out of the message, after posting its sends (binomial scatterv). */
  readonly interiorCopies?: boolean;
  /**
   * Every rank's copy waits for its last send to end (basic/scatter.ts's window of 1: the flat
   * scatter); otherwise only the root's (the hierarchical scatters send from the root one
   * message at a time, then copy its block) and the others' run beside their sends.
   */
  readonly copyAfterSends?: boolean;
  /**
   * The root copies its own block beside one of its sends that move bytes (the index among
   * them, or the last), from the moment it posts that send, and posts the next once both are
   * over (the scatterv roots, collectives/hierarchical/root-source.ts `sendCopyingOwn`);
   * otherwise after its last send.
   */
  readonly rootCopyBeside?: number | 'last';
}

/**
 * The predicted time (model units) of the two-level scatter(v) on the simulator (the mirror of
 * predictTwoLevel): a rank posts its sends the moment its own message is in (R(v); the root at
 * 0, after packing for 'reorder'), to its children in `tree`'s order, each a transfer of its
 * subtree's bytes (plus `extraBytes`) that starts when the rank's port is free — the child
 * waits with its receive posted: R(c) = previous send's end + comm(v, c, bytes/u); a 0-byte
 * message ends when posted. The root's own copy comes after its last send, another rank's runs
 * beside its sends (the processor's copy holds no port) or after them (`copyAfterSends`);
 * the scatterv roots copy beside one of their sends that move bytes (`rootCopyBeside`: the
 * one-shot ones beside the last, the persistent one beside the one send-order.ts `copySlot` picks).
 * Time = the last rank's end.
 */
export function predictTwoLevelScatter(input: ScatterPredictInput, model: Pick<CostModel, 'comm' | 'copy'>): number {
  const { structure: s, tree, blockBytes, root, unitBytes: u } = input;
  const p = s.size;
  const { first, kids, topDown } = tree;
  // subtree bytes and ranks, bottom up
  const bytes = new Float64Array(p);
  const ranks = new Int32Array(p);
  for (let i = p - 1; i >= 0; i--) {
    const v = topDown[i];
    let b = blockBytes[v];
    let n = 1;
    for (let j = first[v]; j < first[v + 1]; j++) {
      b += bytes[kids[j]];
      n += ranks[kids[j]];
    }
    bytes[v] = b;
    ranks[v] = n;
  }
  const ready = new Float64Array(p); // R(v): v's message is in
  let time = 0;
  if (input.reorder) for (let v = 0; v < p; v++) if (v !== root && blockBytes[v] > 0) ready[root] += model.copy(root, blockBytes[v] / u);
  for (let i = 0; i < p; i++) {
    const v = topDown[i];
    let t = ready[v];
    // the root's copy beside its send number `beside` among those that move bytes (−1: after its sends)
    let beside = -1;
    if (v === root && input.rootCopyBeside !== undefined && blockBytes[v] > 0) {
      if (input.rootCopyBeside === 'last') {
        for (let j = first[v]; j < first[v + 1]; j++) if (bytes[kids[j]] + (input.extraBytes?.(kids[j], ranks[kids[j]]) ?? 0) > 0) beside++;
      } else beside = input.rootCopyBeside;
    }
    let ownCopied = -1;
    let sent = 0;
    for (let j = first[v]; j < first[v + 1]; j++) {
      const c = kids[j];
      const msg = bytes[c] + (input.extraBytes?.(c, ranks[c]) ?? 0);
      if (msg > 0) {
        if (ownCopied >= 0) t = Math.max(t, ownCopied);
        if (sent === beside) ownCopied = t + model.copy(v, blockBytes[v] / u);
        t += model.comm(v, c, msg / u);
        sent++;
      }
      ready[c] = msg > 0 ? t : ready[v];
    }
    let end = t;
    const copies = (v === root || (input.interiorCopies === true && first[v + 1] > first[v])) && blockBytes[v] > 0;
    if (ownCopied >= 0) end = Math.max(end, ownCopied);
    else if (copies) end = Math.max(end, (input.copyAfterSends === true || v === root ? t : ready[v]) + model.copy(v, blockBytes[v] / u));
    time = Math.max(time, end);
  }
  return time;
}
