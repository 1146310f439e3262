/**
 * The node structure of a communicator and the bridge over its nodes, computed locally from
 * `comm.nodeOf` (pure: no communication).
 *
 * Nodes are numbered in the order of their lowest rank (bridge index 0 holds rank 0); a node's
 * members are its ranks in ascending order (local rank = index in `members`). TraffRougier14 §2
 * notes that in MPI the local roots cannot learn the bridge rank of the root's node without a
 * split per root; here every rank knows every rank's node, so the bridge is a list of ranks of
 * the caller's communicator (the leaders: the root on the root's node, else the node's highest
 * rank — the root of its range in the ordered-hypercube trees of both levels, hypercube-role.ts,
 * so its own block never moves inside the node) and needs no communicator of its own.
 *
 * Cost: O(p) time and memory for the node structure (once per communicator, or once for all
 * ranks of a simulation when the caller shares it: HierarchicalOptions.structure), O(log N)
 * for a rank's bridge, O(N) for the root's (its children's rank sequences are views of the
 * structure's `order`, nothing copied).
 */
import { InvalidArgumentError } from '../../errors.js';
import type { TreeRole } from '../basic/tree.js';
import { hypercubeRole } from './hypercube-role.js';

export interface NodeStructure {
  /** p. */
  readonly size: number;
  /** N. */
  readonly nodes: number;
  /** Bridge index of every rank's node. */
  readonly nodeIndex: Int32Array;
  /** Index of every rank among its node's members (its local rank). */
  readonly localIndex: Int32Array;
  /** Members of every node, ascending (views of `order`). */
  readonly members: readonly Int32Array[];
  /** n_max. */
  readonly largestNode: number;
  /** Every rank, node by node in bridge order, each node's members ascending (the node-sorted order π of TraffRougier14 Fig. 2). */
  readonly order: Int32Array;
  /** Node b's members are order[nodeStart[b] … nodeStart[b + 1] − 1] (length N + 1). */
  readonly nodeStart: Int32Array;
  /** The highest rank (last member) of every node: its leader unless the root is on it. */
  readonly leaders: Int32Array;
}

/** The node structure from the node of every rank (`nodeOf(r)`, r = 0 … p−1). O(p). */
export function nodeStructure(p: number, nodeOf: (rank: number) => number): NodeStructure {
  const indexOfNode = new Map<number, number>();
  const nodeIndex = new Int32Array(p);
  const sizes: number[] = [];
  for (let r = 0; r < p; r++) {
    const node = nodeOf(r);
    let b = indexOfNode.get(node);
    if (b === undefined) {
      b = sizes.length;
      indexOfNode.set(node, b);
      sizes.push(0);
    }
    nodeIndex[r] = b;
    sizes[b]++;
  }
  const n = sizes.length;
  const nodeStart = new Int32Array(n + 1);
  let largestNode = 0;
  for (let b = 0; b < n; b++) {
    nodeStart[b + 1] = nodeStart[b] + sizes[b];
    if (sizes[b] > largestNode) largestNode = sizes[b];
  }
  const order = new Int32Array(p);
  const localIndex = new Int32Array(p);
  const fill = nodeStart.slice(0, n);
  for (let r = 0; r < p; r++) {
    const b = nodeIndex[r];
    const at = fill[b]++;
    order[at] = r;
    localIndex[r] = at - nodeStart[b];
  }
  const members: Int32Array[] = new Array<Int32Array>(n);
  const leaders = new Int32Array(n);
  for (let b = 0; b < n; b++) {
    members[b] = order.subarray(nodeStart[b], nodeStart[b + 1]);
    leaders[b] = order[nodeStart[b + 1] - 1];
  }
  return { size: p, nodes: n, nodeIndex, localIndex, members, largestNode, order, nodeStart, leaders };
}

/**
 * Checks, in O(1), that `s` can be the node structure of a communicator of `size` ranks as
 * rank `rank` (whose node is `nodeOf(rank)`) sees it: its size, its own place, and that the
 * leader of its node is on its node. A structure shared by the caller is trusted beyond that.
 */
export function checkStructure(s: unknown, size: number, rank: number, nodeOf: (r: number) => number): NodeStructure {
  const x = s as Partial<NodeStructure> | null;
  const ok =
    x !== null &&
    typeof x === 'object' &&
    x.size === size &&
    x.nodeIndex instanceof Int32Array &&
    x.localIndex instanceof Int32Array &&
    x.leaders instanceof Int32Array &&
    Array.isArray(x.members) &&
    x.nodeIndex.length === size &&
    x.members[x.nodeIndex[rank]]?.[x.localIndex[rank]] === rank &&
    nodeOf(x.leaders[x.nodeIndex[rank]]) === nodeOf(rank);
  if (!ok) {
    throw new InvalidArgumentError('structure', `must be nodeStructure(${size}, nodeOf) of this communicator (rank ${rank} is not where it says)`, { rank });
  }
  return s as NodeStructure;
}

/** The ranks of nodes lo … hi, node by node (bridge order): a view, O(1). */
export function ranksOfNodes(s: NodeStructure, lo: number, hi: number): Int32Array {
  return s.order.subarray(s.nodeStart[lo], s.nodeStart[hi + 1]);
}

/** How many ranks nodes lo … hi hold: O(1). */
export function ranksInNodes(s: NodeStructure, lo: number, hi: number): number {
  return s.nodeStart[hi + 1] - s.nodeStart[lo];
}

/**
 * The bridge for one root node: the ordered-hypercube binomial tree (hypercube-role.ts) over
 * the N node indices rooted at the root's node, and, for the root, the ranks whose blocks a bridge child's message holds.
 */
export interface Bridge {
  readonly rootNode: number;
  /** The leader (rank) of every node except the root's (whose leader is the root itself): the structure's `leaders`. */
  readonly leaders: Int32Array;
  /** This rank's node's place in the bridge tree. */
  readonly role: TreeRole;
  /**
   * Root node only: for each child of `role`, the ranks of the nodes in its range, node by
   * node in bridge order, each node's members ascending: the order of that child's message.
   */
  readonly childRanks: readonly Int32Array[];
}

/** O(log N) (the root node: O(log N) views). */
export function bridgeFor(s: NodeStructure, rootNode: number, myNode: number): Bridge {
  const role = hypercubeRole(s.nodes, rootNode, myNode);
  const childRanks = myNode === rootNode ? role.children.map((c) => ranksOfNodes(s, c.lo, c.hi)) : [];
  return { rootNode, leaders: s.leaders, role, childRanks };
}
