/**
 * Hierarchical gather and gatherv (TraffRougier14 §2–§4, §6): the public entries. They validate the
 * arguments (gather like basic/gather.ts, gatherv exactly like gatherv: collectives/args.ts),
 * pick the variant (variants.ts) and run the two-level gather (two-level.ts) over the cached
 * node communicator and bridge (cache.ts), or the flat algorithm.
 *
 * MPI semantics: gather — every rank's block is m bytes (the same m everywhere), rank i's lands
 * at recv[i·m …]; gatherv — counts, displs and recv are significant at the root only, a rank's
 * count is its send length / unitBytes. Any root, any placement of ranks on nodes (ordered or
 * permuted, equal or unequal numbers of ranks per node). Every rank must pass the same variant.
 *
 * Cost: two-level.ts (≤ ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds); nothing but the data messages (both
 * levels travel on `comm` itself, cache.ts). Local work: the node structure once per
 * communicator, O(p) (or none: HierarchicalOptions.structure, shared by the caller), then
 * O(log N + log n) per rank and O(p) at the root per call.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { ceilLog2 } from '../../util/ceil-log.js';
import { normalizeGatherv } from '../args.js';
import { beginCall } from '../call-scope.js';
import { checkGatherArgs, gather } from '../basic/gather.js';
import { BINOMIAL_GATHERV } from '../gatherv/binomial.js';
import { rootLayout } from '../placement.js';
import type { PersistentCollective } from '../types.js';
import { bridgeOf, structureOf } from './cache.js';
import { type NodeStructure } from './structure.js';
import { twoLevelGather } from './two-level.js';
import { runHierarchicalGather } from './schedule.js';
import type { HierarchicalGatherArgs, HierarchicalGathervArgs, HierarchicalInfo, HierarchicalOptions } from './types.js';
import { HIERARCHICAL_VARIANT_NAMES, HIERARCHICAL_VARIANTS, type HierarchicalVariant } from './variants.js';

function variantOf(comm: Communicator, options: HierarchicalOptions | undefined): HierarchicalVariant {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new InvalidArgumentError('options', 'must be an object', { rank: comm.rank });
  }
  const name = options?.variant ?? 'zero-copy';
  let v: HierarchicalVariant | undefined;
  for (let i = 0; i < HIERARCHICAL_VARIANTS.length && v === undefined; i++) if (HIERARCHICAL_VARIANTS[i].name === name) v = HIERARCHICAL_VARIANTS[i];
  if (v === undefined) {
    throw new InvalidArgumentError('variant', `must be one of ${HIERARCHICAL_VARIANT_NAMES.join(', ')}, got ${String(name)}`, {
      rank: comm.rank,
    });
  }
  return v;
}

function info(v: HierarchicalVariant, s: NodeStructure, flatRounds: number): HierarchicalInfo {
  const rounds = v.rootTarget === undefined ? flatRounds : ceilLog2(s.nodes) + ceilLog2(s.largestNode);
  return { variant: v.name, nodes: s.nodes, largestNode: s.largestNode, rounds };
}

/**
 * What a gatherv call returns, made by a function kept per (structure, variant) — the rounds
 * depend on nothing else: the structure's size is the communicator's — that the two-level
 * gather calls once the rank's part is done, so that no call makes a closure or a `then` of its
 * own (a simulation runs one call per rank, all pending at once). Each call still gets an
 * object of its own.
 */
const INFO_OF = new WeakMap<NodeStructure, Map<HierarchicalVariant, () => HierarchicalInfo>>();

function infoOf(v: HierarchicalVariant, s: NodeStructure, flatRounds: number): () => HierarchicalInfo {
  let byVariant = INFO_OF.get(s);
  if (byVariant === undefined) {
    byVariant = new Map();
    INFO_OF.set(s, byVariant);
  }
  let make = byVariant.get(v);
  if (make === undefined) {
    make = () => info(v, s, flatRounds);
    byVariant.set(v, make);
  }
  return make;
}

const startPlan = (plan: PersistentCollective): Promise<void> => plan.start();

/** Regular gather, hierarchically: every rank's m-byte block to `recv[rank·m …]` at the root. */
export async function hierarchicalGather(
  comm: Communicator,
  args: HierarchicalGatherArgs,
  options?: HierarchicalOptions,
): Promise<HierarchicalInfo> {
  comm = beginCall(comm);
  if (args === null || typeof args !== 'object') throw new InvalidArgumentError('args', 'must be an object', { rank: comm.rank });
  const { root, send, recv } = checkGatherArgs(comm, args);
  const v = variantOf(comm, options);
  const p = comm.size;
  const s = structureOf(comm, options?.structure);
  if (v.rootTarget === undefined) {
    await gather(comm, { send, recv, root });
  } else {
    // every size is known: the data phase is a schedule (schedule.ts), over comm itself
    await runHierarchicalGather(comm, s, bridgeOf(comm, s.nodeIndex[root]), root, send, recv, v.name === 'reorder');
  }
  return info(v, s, ceilLog2(p));
}

/**
 * Irregular gather (MPI_Gatherv semantics), hierarchically. Not an async function (its frame
 * would stay suspended for the whole call on every rank): the call is the two-level gather's
 * own promise (two-level.ts keeps a rank's state small while it waits); every error, thrown or
 * not, comes as a rejection.
 */
export function hierarchicalGatherv(
  comm: Communicator,
  args: HierarchicalGathervArgs,
  options?: HierarchicalOptions,
): Promise<HierarchicalInfo> {
  try {
    comm = beginCall(comm);
    if (args === null || typeof args !== 'object') throw new InvalidArgumentError('args', 'must be an object', { rank: comm.rank });
    const plain = { root: args.root, send: args.send, recv: args.recv, counts: args.counts, displs: args.displs, unitBytes: args.unitBytes };
    const { input } = normalizeGatherv(comm, plain);
    const v = variantOf(comm, options);
    const s = structureOf(comm, options?.structure);
    const done = infoOf(v, s, 2 * ceilLog2(comm.size));
    if (v.rootTarget === undefined) return BINOMIAL_GATHERV.init(input).then(startPlan).then(done); // the arguments are validated already
    const root = input.root;
    const bridge = bridgeOf(comm, s.nodeIndex[root]);
    const target = comm.rank === root ? v.rootTarget({ comm, root, send: input.send, recv: input.recv as Uint8Array, layout: rootLayout(input), structure: s }) : undefined;
    return twoLevelGather({ comm, structure: s, bridge, root, send: input.send, uniformBytes: undefined, target, field: 'counts' }, done);
  } catch (e) {
    return Promise.reject(e);
  }
}

export { HIERARCHICAL_VARIANT_NAMES, HIERARCHICAL_VARIANTS, type HierarchicalVariant } from './variants.js';
export {
  HIER_TAG,
  type HierarchicalGatherArgs,
  type HierarchicalGathervArgs,
  type HierarchicalInfo,
  type HierarchicalOptions,
  type HierarchicalVariantName,
} from './types.js';
export { BRIDGES_KEPT, cachedBridges } from './cache.js';
export { nodeStructure, type NodeStructure } from './structure.js';
