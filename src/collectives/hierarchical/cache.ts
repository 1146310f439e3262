/**
 * What the hierarchical gathers keep per communicator (a WeakMap on the communicator object,
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
 */
import type { Communicator } from '../../comm/communicator.js';
import { baseOf } from '../call-scope.js';
import { bridgeFor, checkStructure, nodeStructure, type Bridge, type NodeStructure } from './structure.js';

export const BRIDGES_KEPT = 16;

interface Entry {
  structure: NodeStructure;
  readonly bridges: Map<number, Bridge>;
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
      e = { structure: s, bridges: new Map() };
      CACHE.set(base, e);
    } else {
      e.structure = s;
      e.bridges.clear();
    }
  }
  if (e === undefined) {
    e = { structure: nodeStructure(base.size, (r) => base.nodeOf(r)), bridges: new Map() };
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
  let b = e.bridges.get(rootNode);
  if (b !== undefined) {
    e.bridges.delete(rootNode);
  } else {
    b = bridgeFor(e.structure, rootNode, e.structure.nodeIndex[comm.rank]);
    if (e.bridges.size >= BRIDGES_KEPT) e.bridges.delete(e.bridges.keys().next().value as number);
  }
  e.bridges.set(rootNode, b);
  return b;
}

/** How many bridges `comm` has cached (tests). */
export function cachedBridges(comm: Communicator): number {
  return CACHE.get(comm)?.bridges.size ?? 0;
}
