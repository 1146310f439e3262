/**
 * The node structure of a communicator and the bridge over its nodes, computed locally from
 * `comm.nodeOf` (pure: no communication).
 *
 * Nodes are numbered in the order of their lowest rank (bridge index 0 holds rank 0); a node's
 * members are its ranks in ascending order, which is also the order of the node communicator
 * `splitByNode` returns (local rank = index in `members`). TraffRougier14 §2 notes that in MPI the
 * local roots cannot learn the bridge rank of the root's node without a split per root; here
 * every rank knows every rank's node, so the bridge is a list of ranks of the caller's
 * communicator (the leaders: the root on the root's node, else the node's lowest rank) and
 * needs no communicator of its own.
 *
 * Cost: O(p) time and memory for the node structure (once per communicator), O(p) for a
 * bridge (once per root node, cache.ts).
 */
import { orderedBinomialRole, type TreeRole } from '../basic/tree.js';

export interface NodeStructure {
  /** p. */
  readonly size: number;
  /** N. */
  readonly nodes: number;
  /** Bridge index of every rank's node. */
  readonly nodeIndex: Int32Array;
  /** Index of every rank among its node's members (its rank in the node communicator). */
  readonly localIndex: Int32Array;
  /** Members of every node, ascending. */
  readonly members: readonly Int32Array[];
  /** n_max. */
  readonly largestNode: number;
}

/** The node structure from the node of every rank (`nodeOf(r)`, r = 0 … p−1). */
export function nodeStructure(p: number, nodeOf: (rank: number) => number): NodeStructure {
  const indexOfNode = new Map<number, number>();
  const nodeIndex = new Int32Array(p);
  const lists: number[][] = [];
  for (let r = 0; r < p; r++) {
    const node = nodeOf(r);
    let b = indexOfNode.get(node);
    if (b === undefined) {
      b = lists.length;
      indexOfNode.set(node, b);
      lists.push([]);
    }
    nodeIndex[r] = b;
    lists[b].push(r);
  }
  const localIndex = new Int32Array(p);
  let largestNode = 0;
  const members = lists.map((l) => {
    l.forEach((r, i) => (localIndex[r] = i));
    largestNode = Math.max(largestNode, l.length);
    return Int32Array.from(l);
  });
  return { size: p, nodes: lists.length, nodeIndex, localIndex, members, largestNode };
}

/**
 * The bridge for one root node: the ordered binomial tree over the N node indices rooted at
 * the root's node, and, for the root, the ranks whose blocks a bridge child's message holds.
 */
export interface Bridge {
  readonly rootNode: number;
  /** The leader (rank) of every node except the root's (whose leader is the root itself). */
  readonly leaders: Int32Array;
  /** This rank's node's place in the bridge tree. */
  readonly role: TreeRole;
  /**
   * Root node only: for each child of `role`, the ranks of the nodes in its range, node by
   * node in bridge order, each node's members ascending: the order of that child's message.
   */
  readonly childRanks: readonly Int32Array[];
}

export function bridgeFor(s: NodeStructure, rootNode: number, myNode: number): Bridge {
  const leaders = Int32Array.from(s.members, (m) => m[0]);
  const role = orderedBinomialRole(s.nodes, rootNode, myNode);
  const childRanks = myNode === rootNode ? role.children.map((c) => ranksOfNodes(s, c.lo, c.hi)) : [];
  return { rootNode, leaders, role, childRanks };
}

/** The members of nodes lo … hi, node by node (bridge order). */
function ranksOfNodes(s: NodeStructure, lo: number, hi: number): Int32Array {
  let n = 0;
  for (let b = lo; b <= hi; b++) n += s.members[b].length;
  const out = new Int32Array(n);
  let at = 0;
  for (let b = lo; b <= hi; b++) {
    out.set(s.members[b], at);
    at += s.members[b].length;
  }
  return out;
}
