/**
 * Traff18's distributed construction of the adaptive tree (collectives/adaptive/construct.ts:
 * Lemma 3, with Lemma 2's fixed root), run on each level of the two-level tree: first among a
 * node's members over their own blocks, rooted at the node's leader — which then knows its
 * node's total, its own count plus the totals of the ranges it receives — and then among the
 * leaders over the node totals, rooted at the root's node. The construction itself is not
 * repeated here: it runs unchanged on a level view (level-view.ts), with the level's cost model
 * (level-trees.ts `levelModel`) and two plans of the 'adaptive' tag range taken from the call's
 * communicator, one per level, on every rank in the same order (adaptive/tags.ts).
 *
 * Cost: node level ⌈log₂n⌉ rounds of constant-size messages (a fixed root sends and receives
 * one 48-byte record per round and sends at most one 32-byte notification), then, at the
 * leaders, the bridge's ⌈log₂N⌉ rounds; each level's longest chain of dependent messages is
 * adaptive/construct.ts `constructionRounds` (⌈log₂n⌉ + 1, ⌈log₂N⌉ + 1).
 */
import type { Communicator } from '../../comm/communicator.js';
import type { CostModel } from '../../model/cost-model.js';
import { constructionRounds, startConstruction, type AdaptiveRole, type ConstructionSink, type RoleEvent } from '../adaptive/construct.js';
import { adaptiveContext } from '../adaptive/plan.js';
import { nextPlanTags, type AdaptiveTags } from '../adaptive/tags.js';
import { bridgeModel, nodeModel, leaderIndex } from './level-trees.js';
import { BridgeLevel, NodeLevel } from './level-view.js';
import type { NodeStructure } from './structure.js';

export type { AdaptiveRole, ConstructionSink, RoleEvent } from '../adaptive/construct.js';

/** The tags of a call's two constructions: take them on every rank at the call's start, node level first. */
export interface LevelTags {
  readonly node: AdaptiveTags;
  readonly bridge: AdaptiveTags;
}

export function levelTags(comm: Communicator): LevelTags {
  const node = nextPlanTags(comm);
  const bridge = nextPlanTags(comm);
  return { node, bridge };
}

/** Level models kept per caller's model and structure: every node's, and the bridge's of the last roots. */
const MODELS = new WeakMap<CostModel, WeakMap<NodeStructure, { nodes: (CostModel | undefined)[]; bridges: Map<number, CostModel> }>>();
const BRIDGE_MODELS_KEPT = 16;

function modelsOf(base: CostModel, s: NodeStructure): { nodes: (CostModel | undefined)[]; bridges: Map<number, CostModel> } {
  let byStructure = MODELS.get(base);
  if (byStructure === undefined) {
    byStructure = new WeakMap();
    MODELS.set(base, byStructure);
  }
  let x = byStructure.get(s);
  if (x === undefined) {
    x = { nodes: [], bridges: new Map() };
    byStructure.set(s, x);
  }
  return x;
}

/** The node-level model of node `node` (kept). */
export function keptNodeModel(base: CostModel, s: NodeStructure, node: number): CostModel {
  const kept = modelsOf(base, s).nodes;
  return (kept[node] ??= nodeModel(base, s, node));
}

/** The bridge model of a call rooted at `root` (kept for the last few roots). */
export function keptBridgeModel(base: CostModel, s: NodeStructure, root: number): CostModel {
  const bridges = modelsOf(base, s).bridges;
  let m = bridges.get(root);
  if (m === undefined) {
    m = bridgeModel(base, s, root);
    if (bridges.size >= BRIDGE_MODELS_KEPT) bridges.clear();
    bridges.set(root, m);
  }
  return m;
}

/**
 * Starts this rank's node-level construction (its node's members, rooted at the leader) with
 * its own block of `count` elements; its joins and role go to `sink`.
 */
export function startNodeConstruction(comm: Communicator, s: NodeStructure, root: number, count: number, model: CostModel, tags: LevelTags, sink: ConstructionSink): void {
  const view = new NodeLevel(comm, s);
  const node = s.nodeIndex[comm.rank];
  const levelRoot = leaderIndex(s, s.nodeIndex[root], root, node);
  const ctx = adaptiveContext(view, levelRoot, keptNodeModel(model, s, node), { rule: 'exact' });
  startConstruction({ comm: view, root: levelRoot, count, ctx, tags: tags.node, names: view }, sink);
}

/**
 * Starts a leader's bridge construction (the leaders in bridge order, rooted at the root's
 * node) with its node's total of `total` elements; its joins and role go to `sink`.
 */
export function startBridgeConstruction(comm: Communicator, s: NodeStructure, root: number, total: number, model: CostModel, tags: LevelTags, sink: ConstructionSink): void {
  const view = new BridgeLevel(comm, s, root);
  const rootNode = s.nodeIndex[root];
  const ctx = adaptiveContext(view, rootNode, keptBridgeModel(model, s, root), { rule: 'exact' });
  startConstruction({ comm: view, root: rootNode, count: total, ctx, tags: tags.bridge, names: view }, sink);
}

/** The total of a level root's range once its construction is over: its own count and every range it receives. */
export function rangeTotal(role: AdaptiveRole): number {
  let total = role.count;
  for (const c of role.children) total += c.size;
  return total;
}

/** Construction rounds of a call: node level on the largest node, then the bridge. */
export function levelConstructionRounds(s: NodeStructure): number {
  return constructionRounds(s.largestNode) + constructionRounds(s.nodes);
}

/** This rank's places in both adaptive level trees (the bridge's at a leader only), as its constructions decided them. */
export interface LevelConstructions {
  readonly node: AdaptiveRole;
  readonly bridge: AdaptiveRole | undefined;
}

/**
 * Both constructions of this rank with its own block of `count` elements, in order: the node
 * level, then (a leader) the bridge over its node's total.
 */
export async function constructLevels(comm: Communicator, s: NodeStructure, root: number, count: number, model: CostModel, tags: LevelTags): Promise<LevelConstructions> {
  const me = comm.rank;
  const leader = s.localIndex[me] === leaderIndex(s, s.nodeIndex[root], root, s.nodeIndex[me]);
  const node = await constructionPromise((sink) => startNodeConstruction(comm, s, root, count, model, tags, sink));
  const bridge = leader ? await constructionPromise((sink) => startBridgeConstruction(comm, s, root, rangeTotal(node), model, tags, sink)) : undefined;
  return { node, bridge };
}

/** A construction's outcome as a promise (the root, one per call, awaits its levels). */
export function constructionPromise(start: (sink: ConstructionSink) => void, joined?: (e: RoleEvent) => void): Promise<AdaptiveRole> {
  return new Promise<AdaptiveRole>((resolve, reject) => {
    start({ built: resolve, buildFailed: reject, ...(joined !== undefined ? { joined } : {}) });
  });
}
