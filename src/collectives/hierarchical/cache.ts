/**
 * What the hierarchical gathers keep per communicator (a WeakMap on the communicator object,
 * so it goes when the communicator goes):
 * - the node structure (structure.ts), computed locally from `comm.nodeOf` on first use: O(p);
 * - the node communicator from `comm.splitByNode()`, created once: the only communicator
 *   management traffic of the hierarchical gathers, one Bruck allgather of a 32-byte record
 *   per rank over the whole communicator (comm/group.ts: ⌈log₂p⌉α + 32(p−1)β), on the first
 *   hierarchical call only;
 * - one bridge per root node (structure.ts `bridgeFor`: O(p) local work, no messages), the
 *   last BRIDGES_KEPT root nodes used (least recently used evicted), so memory stays
 *   O(BRIDGES_KEPT · p) whatever the roots.
 * A second call therefore sends nothing but its data messages (test/hierarchical.test.ts
 * checks this on the simulator's trace).
 */
import type { Communicator } from '../../comm/communicator.js';
import { VcollError } from '../../errors.js';
import { baseOf } from '../call-scope.js';
import { bridgeFor, nodeStructure, type Bridge, type NodeStructure } from './structure.js';

export const BRIDGES_KEPT = 16;

interface Entry {
  readonly structure: NodeStructure;
  local: Promise<Communicator> | undefined;
  readonly bridges: Map<number, Bridge>;
}

const CACHE = new WeakMap<Communicator, Entry>();

/** The entry of the communicator a call was made on (`comm` may be a call's scope, call-scope.ts). */
function entryOf(comm: Communicator): Entry {
  const base = baseOf(comm);
  let e = CACHE.get(base);
  if (e === undefined) {
    e = { structure: nodeStructure(base.size, (r) => base.nodeOf(r)), local: undefined, bridges: new Map() };
    CACHE.set(base, e);
  }
  return e;
}

/** The node structure of `comm` (local, cached). */
export function structureOf(comm: Communicator): NodeStructure {
  return entryOf(comm).structure;
}

/** The node communicator of `comm` (collective on the first call, cached after). */
export function localOf(comm: Communicator): Promise<Communicator> {
  const e = entryOf(comm);
  if (e.local === undefined) {
    const s = e.structure;
    const me = comm.rank;
    e.local = baseOf(comm).splitByNode().then((local) => {
      const members = s.members[s.nodeIndex[me]];
      if (local.size !== members.length || local.rank !== s.localIndex[me]) {
        throw new VcollError('INTERNAL', `splitByNode gave rank ${local.rank} of ${local.size}, nodeOf implies ${s.localIndex[me]} of ${members.length}`, {
          rank: me,
        });
      }
      return local;
    });
    e.local.catch(() => {
      e.local = undefined;
    });
  }
  return e.local;
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
