/**
 * The trees of the two levels (TraffRougier14 Fig. 1: the node level among a node's members,
 * the bridge among the nodes' leaders) as one rank's roles, whichever tree builds them:
 *
 * - 'binomial': the ordered-hypercube binomial tree of hypercube-role.ts on each level (the
 *   node's members in local order, rooted at the leader; the nodes in bridge order, rooted at
 *   the root's node): no information about the blocks needed.
 * - 'adaptive': Traff18's adaptive binomial tree (the ordered hypercube joins of §2, Lemma 1
 *   with Lemma 2's fixed root, the join rule of collectives/adaptive/decide.ts) over the
 *   members' blocks on a node and over the node totals on the bridge. `adaptiveLevelTree`
 *   computes it from the sizes, making exactly the decisions the distributed construction
 *   (collectives/adaptive/construct.ts, Lemma 3) makes round by round — the same decideJoin on
 *   the same records — so a rank that knows every size (the regular gather and scatter, where
 *   the block is the same everywhere: Traff18 Theorem 1's remark "if all processors know the
 *   common root r, tree construction can be done without any actual, extra communication")
 *   and the prediction (src/run/hierarchical-predict.ts) get the tree the construction builds.
 *
 * Either way every subtree is a range of consecutive local ranks, or of consecutive nodes, so
 * a message holds the blocks of ranks consecutive in the node-sorted order π of
 * TraffRougier14 Fig. 2, and the root places it with one placement (root-target.ts).
 *
 * The adaptive decisions use the caller's cost model seen from one level (`levelModel`): the
 * costs between the level's ranks, and no copy (below the root the hierarchical data phases
 * copy nothing: a rank sends its own block and its children's as one vectored message, or
 * receives its block straight into place).
 *
 * Cost: binomial O(log n + log N) per rank; adaptive O(n) for a node's tree and O(N) for the
 * bridge (each kept per node structure, model, root and block size, shared by the ranks that
 * hold the structure).
 */
import { CommunicationError } from '../../errors.js';
import type { CostModel } from '../../model/cost-model.js';
import { decideJoin, leafRecord, type JoinContext, type RangeRecord } from '../adaptive/decide.js';
import { hypercubeRounds } from '../adaptive/hypercube.js';
import type { Subtree } from '../basic/tree.js';
import { nodeRole } from './cache.js';
import type { Bridge, NodeStructure } from './structure.js';

/** One rank's place in the two-level tree of one call. */
export interface LevelRoles {
  /** Node-level children: local indices, each with its range of local indices, outermost range first. */
  readonly local: readonly Subtree[];
  /** Bridge-level children (a leader's; none elsewhere): node indices and their ranges of nodes, outermost range first. */
  readonly remote: readonly Subtree[];
  /** This rank is its node's leader: its parent, if any, is on the bridge. */
  readonly leader: boolean;
  /** The parent, a rank of the communicator (−1 at the root). */
  readonly parent: number;
}

const NONE: readonly Subtree[] = [];

/** The leader of node `b` in a call rooted at `root` on node `rootNode`: the root itself on its node, else the node's highest rank. */
export function leaderOf(s: NodeStructure, rootNode: number, root: number, b: number): number {
  return b === rootNode ? root : s.leaders[b];
}

/** Local index of the leader of node `node` (the root's own on its node, else the last member's). */
export function leaderIndex(s: NodeStructure, rootNode: number, root: number, node: number): number {
  return node === rootNode ? s.localIndex[root] : s.nodeStart[node + 1] - s.nodeStart[node] - 1;
}

/** `rank`'s roles in the binomial two-level tree (TraffRougier14 Fig. 1); `bridge` is the bridge as `rank` sees it. */
export function binomialRoles(s: NodeStructure, bridge: Bridge, root: number, rank: number): LevelRoles {
  const node = s.nodeIndex[rank];
  const members = s.members[node];
  const li = s.localIndex[rank];
  const leaderLi = leaderIndex(s, bridge.rootNode, root, node);
  const lrole = nodeRole(s, members.length, leaderLi, li);
  const leader = li === leaderLi;
  const brole = bridge.role;
  const parent = rank === root ? -1 : !leader ? members[lrole.parent] : leaderOf(s, bridge.rootNode, root, brole.parent);
  return { local: lrole.children, remote: leader ? brole.children : NONE, leader, parent };
}

/**
 * The caller's model `base` seen from one level of `size` ranks, level rank i being the
 * communicator's rank `rankOf(i)`: base.comm between them, no copy (see the module comment).
 * Frozen, so the construction's context fingerprint is kept per model (adaptive/decide.ts).
 */
export function levelModel(base: CostModel, size: number, rankOf: (i: number) => number): CostModel {
  return Object.freeze({
    kind: base.kind,
    ports: base.ports,
    copyAll: false,
    size,
    linear: undefined,
    ...(base.bounds !== undefined ? { bounds: base.bounds } : {}),
    comm: (from: number, to: number, units: number) => base.comm(rankOf(from), rankOf(to), units),
    copy: () => 0,
  });
}

/** The node-level model of node `node` (its members in local order). */
export function nodeModel(base: CostModel, s: NodeStructure, node: number): CostModel {
  const members = s.members[node];
  return levelModel(base, members.length, (i) => members[i]);
}

/** The bridge model of a call rooted at `root` (node i's leader: the root on its node, else its last member). */
export function bridgeModel(base: CostModel, s: NodeStructure, root: number): CostModel {
  const rootNode = s.nodeIndex[root];
  return levelModel(base, s.nodes, (b) => leaderOf(s, rootNode, root, b));
}

/** One join of an adaptive level tree as its receiver sees it. */
export interface LevelJoin extends Subtree {
  /** Elements that move: the total of the range lo … hi. */
  readonly size: number;
}

/** A level's adaptive tree: every level rank's parent (−1 at the root) and its children in join order (innermost first). */
export interface LevelTree {
  readonly parent: Int32Array;
  readonly joins: readonly (readonly LevelJoin[])[];
}

/**
 * Traff18's adaptive binomial tree over `sizes` (elements per level rank) rooted at `root`
 * (Lemma 2: the ranges holding the root receive), joins decided by `rule` in `model`: the
 * decisions of the distributed construction (collectives/adaptive/construct.ts), made here
 * for every range. O(n).
 */
export function adaptiveLevelTree(sizes: ArrayLike<number>, model: CostModel, root: number, rule: 'exact' | 'lemma1' = 'exact'): LevelTree {
  const n = sizes.length;
  const ctx: JoinContext = { model, rule, copyAll: false, root };
  const parent = new Int32Array(n).fill(-1);
  const joins: LevelJoin[][] = Array.from({ length: n }, () => []);
  let records: RangeRecord[] = [];
  for (let v = 0; v < n; v++) records.push(leafRecord(v, sizes[v], ctx));
  const rounds = hypercubeRounds(n);
  for (let d = 0; d < rounds; d++) {
    const w = 2 ** d;
    const next: RangeRecord[] = [];
    for (let a = 0; a * w < n; a += 2) {
      const left = records[a];
      const rightLo = (a + 1) * w;
      if (rightLo >= n) {
        next.push(left); // the incomplete last range passes through this round
        continue;
      }
      const right = records[a + 1];
      const leftLo = a * w;
      const leftHi = rightLo - 1;
      const rightHi = Math.min(rightLo + w - 1, n - 1);
      const dec = decideJoin(left, right, leftLo, leftHi, rightHi, ctx);
      const [recv, send, lo, hi] = dec.rightReceives ? [right, left, leftLo, leftHi] : [left, right, rightLo, rightHi];
      parent[send.gatherRoot] = recv.gatherRoot;
      joins[recv.gatherRoot].push({ peer: send.gatherRoot, lo, hi, size: send.total });
      next.push(dec.joined);
    }
    records = next;
  }
  return { parent, joins };
}

/** A level rank's children outermost range first (the order binomial roles list them), from its joins. */
export function outermostFirst<T extends Subtree>(joins: readonly T[]): T[] {
  const out = new Array<T>(joins.length);
  for (let i = 0; i < joins.length; i++) out[i] = joins[joins.length - 1 - i];
  return out;
}

/** Trees kept per structure and model (the regular collectives' adaptive trees): at most this many per structure before it starts again. */
const TREES_KEPT = 256;
const TREES = new WeakMap<NodeStructure, WeakMap<CostModel, Map<string, LevelTree>>>();

function keptTree(s: NodeStructure, model: CostModel, key: string, make: () => LevelTree): LevelTree {
  let byModel = TREES.get(s);
  if (byModel === undefined) {
    byModel = new WeakMap();
    TREES.set(s, byModel);
  }
  let trees = byModel.get(model);
  if (trees === undefined) {
    trees = new Map();
    byModel.set(model, trees);
  }
  let t = trees.get(key);
  if (t === undefined) {
    t = make();
    if (trees.size >= TREES_KEPT) trees.clear();
    trees.set(key, t);
  }
  return t;
}

/**
 * `rank`'s roles in the adaptive two-level tree of a regular gather or scatter rooted at
 * `root`, every block `m` units: node k's tree over n_k blocks of m, the bridge over the node
 * totals n_k·m, both computed locally (no message) and kept per structure (see the module
 * comment). O(n + N) once per node and root, O(log) afterwards.
 */
export function adaptiveRegularRoles(s: NodeStructure, root: number, rank: number, m: number, model: CostModel): LevelRoles {
  const rootNode = s.nodeIndex[root];
  const node = s.nodeIndex[rank];
  const members = s.members[node];
  const li = s.localIndex[rank];
  const leaderLi = leaderIndex(s, rootNode, root, node);
  const nodeTree = keptTree(s, model, `node ${node} ${leaderLi} ${m}`, () =>
    adaptiveLevelTree(new Float64Array(members.length).fill(m), nodeModel(model, s, node), leaderLi),
  );
  const leader = li === leaderLi;
  const local = outermostFirst(nodeTree.joins[li]);
  if (!leader) return { local, remote: NONE, leader, parent: members[nodeTree.parent[li]] };
  const bridgeTree = keptTree(s, model, `bridge ${root} ${m}`, () => {
    const totals = new Float64Array(s.nodes);
    for (let b = 0; b < s.nodes; b++) totals[b] = s.members[b].length * m;
    return adaptiveLevelTree(totals, bridgeModel(model, s, root), rootNode);
  });
  const up = bridgeTree.parent[node];
  return { local, remote: outermostFirst(bridgeTree.joins[node]), leader, parent: up < 0 ? -1 : leaderOf(s, rootNode, root, up) };
}

/**
 * `rank`'s roles in the adaptive two-level tree its own constructions built (level-construction.ts:
 * the node level's role, and the bridge's at a leader): as LevelRoles, outermost range first.
 */
export function constructedRoles(
  s: NodeStructure,
  root: number,
  rank: number,
  node: { readonly children: readonly Subtree[]; readonly parent: Subtree | undefined },
  bridge: { readonly children: readonly Subtree[]; readonly parent: Subtree | undefined } | undefined,
): LevelRoles {
  const rootNode = s.nodeIndex[root];
  const members = s.members[s.nodeIndex[rank]];
  const leader = s.localIndex[rank] === leaderIndex(s, rootNode, root, s.nodeIndex[rank]);
  const up = leader ? bridge?.parent : node.parent;
  if (rank !== root && up === undefined) throw new CommunicationError(`rank ${rank}: the adaptive construction gave it no parent`, { rank });
  const parent = up === undefined ? -1 : leader ? leaderOf(s, rootNode, root, up.peer) : members[up.peer];
  return { local: outermostFirst(node.children), remote: leader ? outermostFirst(bridge?.children ?? []) : NONE, leader, parent };
}
