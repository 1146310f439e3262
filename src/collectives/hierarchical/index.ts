/**
 * Hierarchical gather, gatherv, scatter and scatterv (TraffRougier14 §2–§4, §6; the scatters are
 * the gathers' mirror; adaptive levels: Traff18 §2–§3, §6's "use the new algorithms in a
 * hierarchical fashion"): the public entries. They validate the arguments (gather and scatter
 * like basic/gather.ts and basic/scatter.ts, gatherv and scatterv exactly like gatherv and
 * scatterv: collectives/args.ts), pick the variant (variants.ts: what the root does) and the tree
 * of both levels (HierarchicalOptions.tree: binomial or adaptive, level-trees.ts), and run the
 * two-level algorithm over the cached node structure and bridge (cache.ts), or the flat one.
 *
 * MPI semantics: gather — every rank's block is m bytes (the same m everywhere), rank i's
 * lands at recv[i·m …]; gatherv — counts, displs and recv are significant at the root only, a
 * rank's count is its send length / unitBytes; scatter — the root's send holds p blocks of m
 * bytes, rank i's recv gets send[i·m …]; scatterv — send, counts and displs significant at the
 * root only, a rank's count is its recv length / unitBytes (or `count`). Any root, any
 * placement of ranks on nodes (ordered or permuted, equal or unequal numbers of ranks per
 * node). Every rank must pass the same variant and tree.
 *
 * Cost: ≤ ⌈log₂N⌉ + ⌈log₂n_max⌉ data rounds (two-level.ts, scatter-schedule.ts,
 * two-level-scatter.ts, adaptive-gather.ts, adaptive-scatter.ts); the adaptive gatherv and
 * scatterv first build their trees, (⌈log₂n_max⌉ + 1) + (⌈log₂N⌉ + 1) rounds of constant-size
 * messages (level-construction.ts; the gather overlaps them with its data). Nothing else is
 * sent (both levels travel on `comm` itself, cache.ts). Local work: the node structure once per
 * communicator, O(p) (or none: HierarchicalOptions.structure, shared by the caller), then
 * O(log N + log n) per rank and O(p) at the root per call (adaptive trees of the regular
 * collectives: O(n + N) once per node, root and block size).
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import type { CostModel } from '../../model/cost-model.js';
import { ceilLog2 } from '../../util/ceil-log.js';
import { normalizeGatherv, normalizeScatterv } from '../args.js';
import { beginCall } from '../call-scope.js';
import { checkGatherArgs, gather } from '../basic/gather.js';
import { scatter } from '../basic/scatter.js';
import { checkBytes, checkRoot } from '../basic/validate.js';
import { DEFAULT_MODEL } from '../defaults.js';
import { ADAPTIVE_GATHERV } from '../gatherv/adaptive.js';
import { BINOMIAL_GATHERV } from '../gatherv/binomial.js';
import { ADAPTIVE_SCATTERV } from '../scatterv/adaptive.js';
import { BINOMIAL_SCATTERV } from '../scatterv/binomial.js';
import { constructionRounds } from '../adaptive/construct.js';
import { rootLayout } from '../placement.js';
import type { CollectiveOptions, PersistentCollective } from '../types.js';
import { gathervInit, scattervInit } from '../v-collectives.js';
import { adaptiveGather } from './adaptive-gather.js';
import { adaptiveScatter, adaptiveScatterRoles } from './adaptive-scatter.js';
import type { ScatterRank } from './root-source.js';
import { bridgeOf, structureOf } from './cache.js';
import { constructLevels, levelConstructionRounds, levelTags } from './level-construction.js';
import { hierarchicalPlan, type HierarchicalPlan } from './plan.js';
import { adaptiveRegularRoles, binomialRoles, constructedRoles, type LevelRoles } from './level-trees.js';
import { planGather } from './planned-gather.js';
import { planScatter } from './planned-scatter.js';
import { runHierarchicalScatter } from './scatter-schedule.js';
import { type NodeStructure } from './structure.js';
import { twoLevelGather } from './two-level.js';
import { twoLevelScatter } from './two-level-scatter.js';
import { runHierarchicalGather } from './schedule.js';
import {
  HIERARCHICAL_TREE_NAMES,
  type HierarchicalGatherArgs,
  type HierarchicalGathervArgs,
  type HierarchicalInfo,
  type HierarchicalOptions,
  type HierarchicalScatterArgs,
  type HierarchicalScattervArgs,
  type HierarchicalTreeName,
} from './types.js';
import { HIERARCHICAL_VARIANT_NAMES, HIERARCHICAL_VARIANTS, type HierarchicalVariant } from './variants.js';

/** The variant and tree of a call, and the model its adaptive trees are built for (validated on every rank). */
interface Choice {
  readonly variant: HierarchicalVariant;
  readonly tree: HierarchicalTreeName;
  /** The caller's model (tree 'adaptive': DEFAULT_MODEL if none; tree 'binomial': undefined if none). */
  readonly model: CostModel | undefined;
}

function choiceOf(comm: Communicator, options: HierarchicalOptions | undefined): Choice {
  const rank = comm.rank;
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new InvalidArgumentError('options', 'must be an object', { rank });
  }
  const name = options?.variant ?? 'zero-copy';
  let v: HierarchicalVariant | undefined;
  for (let i = 0; i < HIERARCHICAL_VARIANTS.length && v === undefined; i++) if (HIERARCHICAL_VARIANTS[i].name === name) v = HIERARCHICAL_VARIANTS[i];
  if (v === undefined) {
    throw new InvalidArgumentError('variant', `must be one of ${HIERARCHICAL_VARIANT_NAMES.join(', ')}, got ${String(name)}`, { rank });
  }
  const tree = options?.tree ?? 'binomial';
  if (!HIERARCHICAL_TREE_NAMES.includes(tree)) {
    throw new InvalidArgumentError('tree', `must be one of ${HIERARCHICAL_TREE_NAMES.join(', ')}, got ${String(tree)}`, { rank });
  }
  if (tree === 'binomial' && options?.model === undefined) return { variant: v, tree, model: undefined };
  const model = options?.model ?? DEFAULT_MODEL;
  if (model === null || typeof model !== 'object' || typeof model.comm !== 'function' || typeof model.copy !== 'function') {
    throw new InvalidArgumentError('model', 'must be a CostModel (see linearModel, pairwiseModel, hierarchicalModel)', { rank });
  }
  if (model.size !== undefined && model.size !== comm.size) {
    throw new InvalidArgumentError('model', `is defined for ${model.size} ranks, the communicator has ${comm.size}`, { rank });
  }
  if (model.ports !== 1) {
    throw new InvalidArgumentError('model', `has ${model.ports} ports: the hierarchical collectives are one-ported (TraffRougier14 §2), as the adaptive trees are (Traff18 §2)`, { rank });
  }
  return { variant: v, tree, model };
}

/**
 * What a call reports: the data rounds of the two-level trees (≤ ⌈log₂N⌉ + ⌈log₂n_max⌉) plus
 * the construction's; 'flat': the flat algorithm's (its data rounds and counts scatter or
 * construction).
 */
function info(v: HierarchicalVariant, tree: HierarchicalTreeName, s: NodeStructure, construction: number, flatRounds: number): HierarchicalInfo {
  const rounds = v.rootTarget === undefined ? flatRounds : ceilLog2(s.nodes) + ceilLog2(s.largestNode) + construction;
  return { variant: v.name, tree, nodes: s.nodes, largestNode: s.largestNode, rounds, constructionRounds: construction };
}

/**
 * The info of an irregular call (gatherv, scatterv), made by a function kept per (structure,
 * variant, tree) — the rounds depend on nothing else: the structure's size is the
 * communicator's — that the call's data phase calls once the rank's part is done, so that no
 * call makes a closure or a `then` of its own (a simulation runs one call per rank, all
 * pending at once). Each call still gets an object of its own.
 */
const INFO_OF = new WeakMap<NodeStructure, Map<string, () => HierarchicalInfo>>();

function irregularInfo(v: HierarchicalVariant, tree: HierarchicalTreeName, s: NodeStructure): () => HierarchicalInfo {
  let kept = INFO_OF.get(s);
  if (kept === undefined) {
    kept = new Map();
    INFO_OF.set(s, kept);
  }
  const key = `${v.name} ${tree}`;
  let make = kept.get(key);
  if (make === undefined) {
    const p = s.size;
    const flat = v.rootTarget === undefined;
    // flat: binomial counts scatter ⌈log₂p⌉ + data ⌈log₂p⌉; adaptive construction + data ⌈log₂p⌉
    const construction = tree === 'binomial' ? (flat ? ceilLog2(p) : 0) : flat ? constructionRounds(p) : levelConstructionRounds(s);
    const flatRounds = construction + ceilLog2(p);
    make = () => info(v, tree, s, construction, flatRounds);
    kept.set(key, make);
  }
  return make;
}

const startPlan = (plan: PersistentCollective): Promise<void> => plan.start();

/** The two-level roles of a regular call on this rank: binomial, or the adaptive trees computed locally for blocks of `m`. */
function regularRoles(comm: Communicator, c: Choice, s: NodeStructure, root: number, m: number): LevelRoles {
  if (c.tree === 'binomial') return binomialRoles(s, bridgeOf(comm, s.nodeIndex[root]), root, comm.rank);
  return adaptiveRegularRoles(s, root, comm.rank, m, c.model as CostModel);
}

/** Regular gather, hierarchically: every rank's m-byte block to `recv[rank·m …]` at the root. */
export async function hierarchicalGather(
  comm: Communicator,
  args: HierarchicalGatherArgs,
  options?: HierarchicalOptions,
): Promise<HierarchicalInfo> {
  comm = beginCall(comm);
  if (args === null || typeof args !== 'object') throw new InvalidArgumentError('args', 'must be an object', { rank: comm.rank });
  const { root, send, recv } = checkGatherArgs(comm, args);
  const c = choiceOf(comm, options);
  const p = comm.size;
  const s = structureOf(comm, options?.structure);
  if (c.variant.rootTarget !== undefined) {
    // every size is known: the data phase is a schedule (schedule.ts), over comm itself
    const roles = regularRoles(comm, c, s, root, send.length);
    await runHierarchicalGather(comm, s, bridgeOf(comm, s.nodeIndex[root]), root, send, recv, c.variant.name === 'reorder', roles);
    return info(c.variant, c.tree, s, 0, 0);
  }
  if (c.tree === 'binomial') {
    await gather(comm, { send, recv, root });
    return info(c.variant, c.tree, s, 0, ceilLog2(p));
  }
  // flat adaptive: Traff18's gatherv with every count m
  const counts = comm.rank === root ? new Array<number>(p).fill(send.length) : undefined;
  const { input } = normalizeGatherv(comm, { root, send, recv, counts }, { model: c.model });
  await ADAPTIVE_GATHERV.init(input).then(startPlan);
  return info(c.variant, c.tree, s, constructionRounds(p), constructionRounds(p) + ceilLog2(p));
}

/** A gatherv's arguments checked on this rank (the call's and the plan's): the plain arguments, the variant and tree, the normalized input, the structure, the root's target. */
function gathervArgs(comm: Communicator, args: HierarchicalGathervArgs, options: HierarchicalOptions | undefined) {
  if (args === null || typeof args !== 'object') throw new InvalidArgumentError('args', 'must be an object', { rank: comm.rank });
  const plain = { root: args.root, send: args.send, recv: args.recv, counts: args.counts, displs: args.displs, unitBytes: args.unitBytes };
  const c = choiceOf(comm, options);
  const { input } = normalizeGatherv(comm, plain, c.model !== undefined ? { model: c.model } : undefined);
  const s = structureOf(comm, options?.structure);
  const v = c.variant;
  const root = input.root;
  const target =
    comm.rank === root && v.rootTarget !== undefined ? v.rootTarget({ comm, root, send: input.send, recv: input.recv as Uint8Array, layout: rootLayout(input), structure: s }) : undefined;
  return { plain, c, input, s, target };
}

/** A scatterv's arguments checked on this rank (the call's and the plan's), as gathervArgs; the root's source and counts. */
function scattervArgs(comm: Communicator, args: HierarchicalScattervArgs, options: HierarchicalOptions | undefined) {
  if (args === null || typeof args !== 'object') throw new InvalidArgumentError('args', 'must be an object', { rank: comm.rank });
  const plain = { root: args.root, send: args.send, recv: args.recv, count: args.count, counts: args.counts, displs: args.displs, unitBytes: args.unitBytes };
  const c = choiceOf(comm, options);
  const { input } = normalizeScatterv(comm, plain, c.model !== undefined ? { model: c.model } : undefined);
  const s = structureOf(comm, options?.structure);
  const v = c.variant;
  const root = input.root;
  const isRoot = comm.rank === root;
  const source = isRoot && v.rootSource !== undefined ? v.rootSource({ comm, root, send: input.send as Uint8Array, recv: input.recv, layout: rootLayout(input), structure: s }) : undefined;
  const rank: ScatterRank = { comm, structure: s, root, recv: input.recv, count: input.count, unitBytes: input.unitBytes, source, counts: isRoot ? input.counts : undefined };
  return { plain, c, input, s, rank };
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
    const { c, input, s, target } = gathervArgs(comm, args, options);
    const v = c.variant;
    const done = irregularInfo(v, c.tree, s);
    if (v.rootTarget === undefined) return (c.tree === 'binomial' ? BINOMIAL_GATHERV : ADAPTIVE_GATHERV).init(input).then(startPlan).then(done); // the arguments are validated already
    const root = input.root;
    if (c.tree === 'adaptive') {
      return adaptiveGather({ comm, structure: s, root, send: input.send, unitBytes: input.unitBytes, model: input.model, tags: levelTags(comm), target }, done);
    }
    const bridge = bridgeOf(comm, s.nodeIndex[root]);
    return twoLevelGather({ comm, structure: s, bridge, root, send: input.send, uniformBytes: undefined, target, field: 'counts' }, done);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Regular scatter, hierarchically: the root's `send[i·m …]` to rank i's m-byte `recv`. */
export async function hierarchicalScatter(
  comm: Communicator,
  args: HierarchicalScatterArgs,
  options?: HierarchicalOptions,
): Promise<HierarchicalInfo> {
  comm = beginCall(comm);
  const rank = comm.rank;
  if (args === null || typeof args !== 'object') throw new InvalidArgumentError('args', 'must be an object', { rank });
  const root = checkRoot(comm, args.root);
  const recv = checkBytes(comm, 'recv', args.recv);
  const p = comm.size;
  const m = recv.length;
  let send: Uint8Array | undefined;
  if (rank === root) {
    send = checkBytes(comm, 'send', args.send);
    if (send.length !== p * m) throw new InvalidArgumentError('send', `holds ${send.length} bytes, p·m = ${p}·${m} = ${p * m} expected`, { rank });
  }
  const c = choiceOf(comm, options);
  const s = structureOf(comm, options?.structure);
  if (c.variant.rootSource !== undefined) {
    const roles = regularRoles(comm, c, s, root, m);
    await runHierarchicalScatter(comm, s, bridgeOf(comm, s.nodeIndex[root]), root, send, recv, c.variant.name === 'reorder', roles);
    return info(c.variant, c.tree, s, 0, 0);
  }
  if (c.tree === 'binomial') {
    await scatter(comm, { send, recv, root });
    return info(c.variant, c.tree, s, 0, ceilLog2(p));
  }
  // flat adaptive: Traff18's scatterv with every count m
  const counts = rank === root ? new Array<number>(p).fill(m) : undefined;
  const { input } = normalizeScatterv(comm, { root, send, recv, counts }, { model: c.model });
  await ADAPTIVE_SCATTERV.init(input).then(startPlan);
  return info(c.variant, c.tree, s, constructionRounds(p), constructionRounds(p) + ceilLog2(p));
}

/**
 * Irregular scatter (MPI_Scatterv semantics), hierarchically: the root's blocks, at `displs`
 * in `send`, to every rank's `recv`. Like hierarchicalGatherv, not an async function; every
 * error comes as a rejection.
 */
export function hierarchicalScatterv(
  comm: Communicator,
  args: HierarchicalScattervArgs,
  options?: HierarchicalOptions,
): Promise<HierarchicalInfo> {
  try {
    comm = beginCall(comm);
    const { c, input, s, rank } = scattervArgs(comm, args, options);
    const v = c.variant;
    const done = irregularInfo(v, c.tree, s);
    if (v.rootSource === undefined) return (c.tree === 'binomial' ? BINOMIAL_SCATTERV : ADAPTIVE_SCATTERV).init(input).then(startPlan).then(done);
    const root = input.root;
    if (c.tree === 'adaptive') return adaptiveScatter({ ...rank, model: input.model, tags: levelTags(comm) }, done);
    const roles = binomialRoles(s, bridgeOf(comm, s.nodeIndex[root]), root, comm.rank);
    return twoLevelScatter({ ...rank, roles }, done);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The flat variant's options: the binomial or adaptive gatherv/scatterv, in the caller's model. */
const flatOptions = (c: Choice): CollectiveOptions => (c.tree === 'binomial' ? { algorithm: 'binomial' } : { algorithm: 'adaptive', model: c.model });

/**
 * Persistent hierarchical gatherv (plan.ts; MPI_Gatherv_init's shape): the arguments of
 * hierarchicalGatherv, validated and bound once. The init builds the two-level tree (tree
 * 'adaptive': both of Traff18's constructions, node level then bridge; 'binomial': the
 * hypercube trees, no message) and plans its sizes (planned-gather.ts: one pass up the tree,
 * checked against the root's counts), so every start() moves exactly the tree's data: one
 * message per edge whose range holds data, no size check — on the simulator exactly the trees'
 * evaluation (src/run/hierarchical-predict.ts predictTwoLevel, empty ranges skipped). 'flat' is
 * the flat binomial/adaptive gatherv's own plan. The buffers' contents may change between
 * starts, their lengths not (they are bound).
 */
export function hierarchicalGathervInit(comm: Communicator, args: HierarchicalGathervArgs, options?: HierarchicalOptions): Promise<HierarchicalPlan> {
  return hierarchicalPlan(comm, async (scope) => {
    const { plain, c, input, s, target } = gathervArgs(scope, args, options);
    const v = c.variant;
    const info = irregularInfo(v, c.tree, s)();
    if (v.rootTarget === undefined) {
      // the flat gatherv's own persistent plan (its construction completed at init)
      const plan = await gathervInit(scope, plain, flatOptions(c));
      return { info, run: () => plan.start() };
    }
    const root = input.root;
    const me = scope.rank;
    let roles: LevelRoles;
    if (c.tree === 'adaptive') {
      const built = await constructLevels(scope, s, root, input.send.length / input.unitBytes, input.model, levelTags(scope));
      roles = constructedRoles(s, root, me, built.node, built.bridge);
    } else {
      roles = binomialRoles(s, bridgeOf(scope, s.nodeIndex[root]), root, me);
    }
    const run = await planGather({ comm: scope, structure: s, root, send: input.send, roles, target });
    return { info, run };
  });
}

/**
 * Persistent hierarchical scatterv (plan.ts; MPI_Scatterv_init's shape): the arguments of
 * hierarchicalScatterv, validated and bound once. The init builds the two-level tree (tree
 * 'adaptive': both constructions, the root checking every join against its counts;
 * 'binomial': no message) and plans its sizes (planned-scatter.ts: the counts once down the
 * tree, every rank checking its own) and its send order (every rank's children by decreasing
 * tail in the model, options.model or DEFAULT_MODEL, whatever the tree: send-order.ts), so
 * every start() moves exactly the tree's data (on the simulator exactly
 * predictTwoLevelScatter's time over `tailOrderedTree`). 'flat' is the flat scatterv's own plan.
 */
export function hierarchicalScattervInit(comm: Communicator, args: HierarchicalScattervArgs, options?: HierarchicalOptions): Promise<HierarchicalPlan> {
  return hierarchicalPlan(comm, async (scope) => {
    const { plain, c, input, s, rank } = scattervArgs(scope, args, options);
    const v = c.variant;
    const info = irregularInfo(v, c.tree, s)();
    if (v.rootSource === undefined) {
      const plan = await scattervInit(scope, plain, flatOptions(c));
      return { info, run: () => plan.start() };
    }
    const root = input.root;
    const me = scope.rank;
    let roles: LevelRoles;
    if (c.tree === 'adaptive') {
      const built = await adaptiveScatterRoles({ ...rank, model: input.model, tags: levelTags(scope) });
      roles = constructedRoles(s, root, me, built.node, built.bridge);
    } else {
      roles = binomialRoles(s, bridgeOf(scope, s.nodeIndex[root]), root, me);
    }
    const run = await planScatter({ ...rank, roles, model: c.model ?? DEFAULT_MODEL });
    return { info, run };
  });
}

export { HIERARCHICAL_VARIANT_NAMES, HIERARCHICAL_VARIANTS, type HierarchicalVariant } from './variants.js';
export {
  HIER_TAG,
  HIERARCHICAL_TREE_NAMES,
  type HierarchicalGatherArgs,
  type HierarchicalGathervArgs,
  type HierarchicalInfo,
  type HierarchicalOptions,
  type HierarchicalScatterArgs,
  type HierarchicalScattervArgs,
  type HierarchicalTreeName,
  type HierarchicalVariantName,
} from './types.js';
export { BRIDGES_KEPT, cachedBridges } from './cache.js';
export { nodeStructure, type NodeStructure } from './structure.js';
export type { HierarchicalPlan } from './plan.js';
