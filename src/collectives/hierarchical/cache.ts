/**
 * What the hierarchical gathers and scatters keep per communicator (a WeakMap on the communicator object,
 * so it goes when the communicator goes):
 * - the node structure (structure.ts), computed locally from `comm.nodeOf` on first use: O(p)
 *   — or the one the caller shares (HierarchicalOptions.structure: computed once for every
 *   rank of a simulation, which would otherwise compute it p times, O(p²) in all);
 * - one bridge per root node (structure.ts `bridgeFor`: O(log N) local work, no messages), the
 *   last BRIDGES_KEPT root nodes used (least recently used evicted).
 * Both levels' messages travel on the communicator itself (the node level between members of
 * a node, the bridge between leaders), so no call creates a communicator: no call sends
 * anything but its data messages (test/hierarchical.test.ts checks this on the simulator's
 * trace).
 *
 * And per node structure (a WeakMap on the structure object): the bridges themselves and the
 * node-level tree roles, which depend on a rank's node and local index only, not on the rank:
 * the ranks of a simulation, which share one structure, share them too (the ranks of one node
 * one bridge; the ranks of equally large nodes, other than the root's, their roles) instead of
 * each keeping its own copy of the same objects. A communicator's bridges are then references
 * to these. Both are immutable.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { TreeRole } from '../basic/tree.js';
import { baseOf } from '../call-scope.js';
import { hypercubeRole } from './hypercube-role.js';
import { bridgeFor, checkStructure, nodeStructure, type Bridge, type NodeStructure } from './structure.js';

export const BRIDGES_KEPT = 16;

interface Entry {
  structure: NodeStructure;
  /**
   * The bridges of the root nodes used last, least recently used first (at most BRIDGES_KEPT).
   * The first is stored as a one-element array (an empty array grown by push keeps room for
   * 16: most communicators, e.g. each rank's in a simulation, only ever use one root node).
   */
  bridges: Bridge[];
}

const CACHE = new WeakMap<Communicator, Entry>();

/**
 * The entry of the communicator a call was made on (`comm` may be a call's scope,
 * call-scope.ts); `shared`: the structure the caller passed (checked for this rank, O(1)).
 */
function entryOf(comm: Communicator, shared?: NodeStructure): Entry {
  const base = baseOf(comm);
  let e = CACHE.get(base);
  if (shared !== undefined && e?.structure !== shared) {
    const s = checkStructure(shared, base.size, base.rank, (r) => base.nodeOf(r));
    if (e === undefined) {
      e = { structure: s, bridges: [] };
      CACHE.set(base, e);
    } else {
      e.structure = s;
      e.bridges = [];
    }
  }
  if (e === undefined) {
    e = { structure: nodeStructure(base.size, (r) => base.nodeOf(r)), bridges: [] };
    CACHE.set(base, e);
  }
  return e;
}

/** The node structure of `comm` (local, cached; `shared`: the caller's, HierarchicalOptions.structure). */
export function structureOf(comm: Communicator, shared?: NodeStructure): NodeStructure {
  return entryOf(comm, shared).structure;
}

/** The bridge of `comm` for the root node `rootNode` as this rank sees it (local, cached). */
export function bridgeOf(comm: Communicator, rootNode: number): Bridge {
  const e = entryOf(comm);
  const list = e.bridges;
  let i = list.length - 1;
  while (i >= 0 && list[i].rootNode !== rootNode) i--;
  if (i === list.length - 1 && i >= 0) return list[i]; // the most recent already
  let b: Bridge;
  if (i >= 0) {
    b = list[i];
    list.splice(i, 1);
  } else {
    const s = e.structure;
    b = sharedBridge(s, rootNode, s.nodeIndex[comm.rank]);
    if (list.length === 0) {
      e.bridges = [b];
      return b;
    }
    if (list.length >= BRIDGES_KEPT) list.shift();
  }
  list.push(b);
  return b;
}

/** How many bridges `comm` has cached (tests). */
export function cachedBridges(comm: Communicator): number {
  return CACHE.get(comm)?.bridges.length ?? 0;
}

/** What a structure's ranks share: bridges by (root node, node), node-level roles by (node size, local index). */
interface Shared {
  readonly bridges: Map<number, Bridge>;
  readonly roles: Map<number, TreeRole[]>;
}

const SHARED = new WeakMap<NodeStructure, Shared>();

/** Bridges a structure keeps at most before it starts again (BRIDGES_KEPT root nodes' worth for every node). */
function bridgesKept(s: NodeStructure): number {
  return BRIDGES_KEPT * s.nodes;
}

function sharedOf(s: NodeStructure): Shared {
  let x = SHARED.get(s);
  if (x === undefined) {
    x = { bridges: new Map(), roles: new Map() };
    SHARED.set(s, x);
  }
  return x;
}

/** structure.ts `bridgeFor(s, rootNode, myNode)`, made once for every rank of node `myNode` holding `s`. */
function sharedBridge(s: NodeStructure, rootNode: number, myNode: number): Bridge {
  const bridges = sharedOf(s).bridges;
  const key = rootNode * s.nodes + myNode;
  let b = bridges.get(key);
  if (b === undefined) {
    b = bridgeFor(s, rootNode, myNode);
    if (bridges.size >= bridgesKept(s)) bridges.clear();
    bridges.set(key, b);
  }
  return b;
}

/**
 * The place of local rank `li` in the node-level tree of a node of `n` ranks rooted at local
 * rank `localRoot` (`hypercubeRole(n, localRoot, li)`): shared by the ranks holding `s`
 * when the tree is rooted at the node's last member (its leader: every node but the root's,
 * and the root's when the root is its last member), else (a root's node, one per call) made
 * afresh.
 */
export function nodeRole(s: NodeStructure, n: number, localRoot: number, li: number): TreeRole {
  if (localRoot !== n - 1) return hypercubeRole(n, localRoot, li);
  const roles = sharedOf(s).roles;
  let byIndex = roles.get(n);
  if (byIndex === undefined) {
    byIndex = new Array<TreeRole>(n);
    roles.set(n, byIndex);
  }
  return (byIndex[li] ??= hypercubeRole(n, localRoot, li));
}
