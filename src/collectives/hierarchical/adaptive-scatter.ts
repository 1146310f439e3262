/**
 * Hierarchical scatterv over adaptive trees: the mirror of adaptive-gather.ts (TraffRougier14
 * Fig. 1's two levels, each Traff18's adaptive binomial tree: over the members' blocks on a
 * node, over the node totals on the bridge). Both trees are built first by Traff18's
 * distributed construction (level-construction.ts, node level, then the bridge over the totals
 * it gives the leaders); as Traff18 §3 notes for the scatter, the root cannot send before
 * its trees exist, so the constructions are not hidden.
 *
 * Then the data top down, every rank sending to its children in the reverse of the order it
 * joined them (bridge children first, then node children, each outermost range first), one
 * message at a time (a child posts its receive once its own construction is over: sent in
 * order, the messages are matched in order). Every
 * size is known from the construction (a join carries its range's total), so a rank receives
 * its range as one vectored message in rank order (node order across the bridge) with its own
 * block straight into `recv` and the rest into one scratch buffer, and sends each child its
 * part of it: nothing is copied below the root, no sizes travel with the data, an empty range
 * moves no message (Traff18 §3). The root sends straight out of `send` (root-source.ts:
 * zero-copy, or reorder's packed buffer).
 *
 * Checks: the root compares every join's total and count checksum (collectives/adaptive/
 * decide.ts, by the ranks' own counts) with its counts: InvalidArgumentError('counts'). A
 * bridge message carries, behind its data, each of its nodes' count checksum by the root's
 * counts (4 bytes per node); the node's leader compares it with its node's checksum by its
 * members' own counts (what its node construction gave it): two ranks of one node whose
 * counts differ from the root's in ways that cancel are reported there
 * (InvalidArgumentError('count')), not delivered misplaced.
 *
 * Cost: constructions ⌈log₂n⌉ + ⌈log₂N⌉ rounds of constant-size messages, then the data phase
 * of the two trees: every message α + β·(its range's bytes, + 4 per node on the bridge); the
 * root sends Σ_{i≠root} m_i. Copies: the root's own block (zero-copy) or every block
 * (reorder). Local work O(children) per rank, O(p) at the root.
 */
import type { MessageData } from '../../comm/communicator.js';
import { scratchBuffer } from '../../comm/scratch.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';
import type { CostModel } from '../../model/cost-model.js';
import { addChecks, countCheck } from '../adaptive/decide.js';
import { leaderIndex, leaderOf } from './level-trees.js';
import { constructLevels, rangeTotal, type AdaptiveRole, type LevelConstructions, type LevelTags, type RoleEvent } from './level-construction.js';
import { sendCopyingOwn, type RootSend, type RootSource, type ScatterRank } from './root-source.js';
import { ranksOfNodes, type NodeStructure } from './structure.js';
import { describe } from './two-level.js';
import { readU32, writeU32 } from './size-check.js';
import { segmentsOf } from './two-level-scatter.js';
import { HIER_TAG } from './types.js';

export interface AdaptiveScatterInput extends ScatterRank {
  /** The model the trees are built for (per element). */
  readonly model: CostModel;
  readonly tags: LevelTags;
}

/** Bytes of one node's count checksum behind a bridge message. */
const NODE_CHECK_BYTES = 4;

/** Runs this rank's part; resolves with `result()` once its data is in place and its sends are done. */
export function adaptiveScatter<T>(input: AdaptiveScatterInput, result: () => T): Promise<T> {
  return adaptiveScatterRoles(input)
    .then((r) => adaptiveScatterData(input, r))
    .then(result);
}

/**
 * Both constructions of this rank and, at the root, every join checked against its counts
 * (InvalidArgumentError('counts') before anything is sent): a persistent plan's init
 * (hierarchicalScattervInit).
 */
export async function adaptiveScatterRoles(input: AdaptiveScatterInput): Promise<LevelConstructions> {
  const r = await constructLevels(input.comm, input.structure, input.root, input.count, input.model, input.tags);
  if (input.source !== undefined) checkJoins(input, r);
  return r;
}

/** The data phase over the trees `roles` gives this rank. */
function adaptiveScatterData(input: AdaptiveScatterInput, roles: LevelConstructions): Promise<void> {
  return input.source !== undefined ? rootScatter(input, input.source, roles) : rankScatter(input, roles);
}

/** The count checksum of node `b`'s members by `counts` (their weights: local indices, as the node construction's). */
function nodeCheckOf(s: NodeStructure, counts: readonly number[], b: number): number {
  const members = s.members[b];
  let c = 0;
  for (let i = 0; i < members.length; i++) c = addChecks(c, countCheck(i, counts[members[i]]));
  return c;
}

/** A rank other than the root: its range from its parent in its roles, each child its part. */
async function rankScatter(input: AdaptiveScatterInput, roles: LevelConstructions): Promise<void> {
  const { comm, structure: s, root } = input;
  const me = comm.rank;
  const u = input.unitBytes;
  const rootNode = s.nodeIndex[root];
  const node = s.nodeIndex[me];
  const members = s.members[node];
  const li = s.localIndex[me];
  const leader = li === leaderIndex(s, rootNode, root, node);
  const { node: nodeRole, bridge: bridgeRole } = roles;
  const up = leader ? bridgeRole?.parent : nodeRole.parent;
  if (up === undefined) throw new CommunicationError(`rank ${me}: the adaptive construction gave it no parent`, { rank: me });
  // the range from the parent in rank order: bridge children left of this node, the node's
  // children left of this rank, its own block, the node's right of it, the bridge's right of it
  interface Part {
    readonly e: RoleEvent | undefined;
    readonly bridge: boolean;
    readonly key: number;
  }
  const parts: Part[] = [{ e: undefined, bridge: false, key: li }];
  for (const e of nodeRole.children) parts.push({ e, bridge: false, key: e.lo });
  for (const e of bridgeRole?.children ?? []) parts.push({ e, bridge: true, key: e.lo });
  const nodeKey = (x: Part): number => (x.bridge ? x.key : node);
  parts.sort((a, b) => nodeKey(a) - nodeKey(b) || (a.bridge ? 0 : a.key) - (b.bridge ? 0 : b.key));
  const ownBytes = input.count * u;
  const restBytes = up.size * u - ownBytes;
  const rest = scratchBuffer(comm, restBytes);
  const views = new Map<RoleEvent, Uint8Array>();
  const into: Uint8Array[] = [];
  let at = 0;
  for (const x of parts) {
    if (x.e === undefined) {
      if (ownBytes > 0) into.push(input.recv);
      continue;
    }
    const n = x.e.size * u;
    const v = rest.subarray(at, at + n);
    at += n;
    views.set(x.e, v);
    if (n > 0) into.push(v);
  }
  const checks = leader ? new Uint8Array(NODE_CHECK_BYTES * (up.hi - up.lo + 1)) : undefined;
  if (checks !== undefined) into.push(checks);
  const want = up.size * u + (checks?.length ?? 0);
  const parent = leader ? leaderOf(s, rootNode, root, up.peer) : members[up.peer];
  const tag = leader ? HIER_TAG.bridge : HIER_TAG.local;
  if (want > 0) {
    const st = await comm.recv(parent, tag, into.length === 1 ? into[0] : into).catch((e: unknown) => {
      if (e instanceof TruncationError) {
        throw new InvalidArgumentError('count', `rank ${me} was sent more than the ${want} bytes its range's own counts make: the root's counts differ from them`, { rank: me, cause: e });
      }
      throw e;
    });
    if (st.bytes !== want) {
      throw new InvalidArgumentError('count', `rank ${me} was sent ${st.bytes} bytes, its range's own counts make ${want}: the root's counts differ from them`, { rank: me });
    }
  }
  if (checks !== undefined) {
    // this node's checksum by its members' own counts (the node construction's) against the root's
    let mine = countCheck(li, input.count);
    for (const e of nodeRole.children) mine = addChecks(mine, e.check);
    const theirs = readU32(checks, NODE_CHECK_BYTES * (node - up.lo));
    if (theirs !== mine) {
      throw new InvalidArgumentError(
        'count',
        `the ranks of node ${node} (${describe(members)}) split its ${rangeTotal(nodeRole)} elements differently from the root's counts (the count checksums differ: some rank's count is not its entry in the root's counts)`,
        { rank: me },
      );
    }
  }
  // one send at a time, in order (a child posts its receive once its own construction is over)
  const bridgeKids = bridgeRole?.children ?? [];
  for (let j = bridgeKids.length - 1; j >= 0; j--) {
    const e = bridgeKids[j];
    const data = views.get(e) as Uint8Array;
    const tail = (checks as Uint8Array).subarray(NODE_CHECK_BYTES * (e.lo - up.lo), NODE_CHECK_BYTES * (e.hi - up.lo + 1));
    await comm.send(leaderOf(s, rootNode, root, e.peer), HIER_TAG.bridge, data.length > 0 ? [data, tail] : tail);
  }
  for (let j = nodeRole.children.length - 1; j >= 0; j--) {
    const e = nodeRole.children[j];
    const data = views.get(e) as Uint8Array;
    if (data.length > 0) await comm.send(members[e.peer], HIER_TAG.local, data);
  }
}

/** The root's counts against every join its constructions gave it (totals and count checksums, by the ranks' own counts). */
function checkJoins(input: AdaptiveScatterInput, roles: LevelConstructions): void {
  const { comm, structure: s, root } = input;
  const me = comm.rank;
  const counts = input.counts as readonly number[];
  const members = s.members[s.nodeIndex[root]];
  const mismatch = (seq: ArrayLike<number>, what: string): InvalidArgumentError =>
    new InvalidArgumentError('counts', `ranks ${describe(seq)}: ${what} (some rank's own count is not its entry in counts)`, { rank: me });
  for (const e of roles.node.children) {
    const seq = members.subarray(e.lo, e.hi + 1);
    let total = 0;
    let check = 0;
    for (let i = e.lo; i <= e.hi; i++) {
      total += counts[members[i]];
      check = addChecks(check, countCheck(i, counts[members[i]]));
    }
    if (total !== e.size) throw mismatch(seq, `${e.size} elements in total by their own counts, the root's counts give ${total}`);
    if (check !== e.check) throw mismatch(seq, 'they split their elements differently from the root\'s counts (the count checksums differ)');
  }
  for (const e of (roles.bridge as AdaptiveRole).children) {
    const seq = ranksOfNodes(s, e.lo, e.hi);
    let total = 0;
    let check = 0;
    for (let b = e.lo; b <= e.hi; b++) {
      let nodeTotal = 0;
      for (const r of s.members[b]) nodeTotal += counts[r];
      total += nodeTotal;
      check = addChecks(check, countCheck(b, nodeTotal));
    }
    if (total !== e.size) throw mismatch(seq, `${e.size} elements in total by their own counts, the root's counts give ${total}`);
    if (check !== e.check) throw mismatch(seq, 'their nodes split their elements differently from the root\'s counts (the count checksums differ)');
  }
}

/** The root (its joins checked already: adaptiveScatterRoles): every child's message out of `send`, then its own block. */
async function rootScatter(input: AdaptiveScatterInput, source: RootSource, roles: LevelConstructions): Promise<void> {
  const { comm, structure: s, root } = input;
  const counts = input.counts as readonly number[];
  const rootNode = s.nodeIndex[root];
  const members = s.members[rootNode];
  const { node: nodeRole, bridge: bridgeRole } = roles;
  const bridgeKids = (bridgeRole as AdaptiveRole).children;
  const nodeChecks = new Map<number, number>();
  const checkOf = (b: number): number => {
    let c = nodeChecks.get(b);
    if (c === undefined) {
      c = nodeCheckOf(s, counts, b);
      nodeChecks.set(b, c);
    }
    return c;
  };
  source.prepare();
  const messages: RootSend[] = [];
  for (let j = bridgeKids.length - 1; j >= 0; j--) {
    const e = bridgeKids[j];
    const place = source.place(ranksOfNodes(s, e.lo, e.hi));
    const tail = new Uint8Array(NODE_CHECK_BYTES * (e.hi - e.lo + 1));
    for (let b = e.lo; b <= e.hi; b++) writeU32(tail, NODE_CHECK_BYTES * (b - e.lo), checkOf(b));
    const data: MessageData = place.bytes === 0 ? tail : [...segmentsOf(place.buffer), tail];
    messages.push({ peer: leaderOf(s, rootNode, root, e.peer), tag: HIER_TAG.bridge, data });
  }
  for (let j = nodeRole.children.length - 1; j >= 0; j--) {
    const e = nodeRole.children[j];
    const place = source.place(members.subarray(e.lo, e.hi + 1));
    if (place.bytes > 0) messages.push({ peer: members[e.peer], tag: HIER_TAG.local, data: place.buffer });
  }
  // one at a time, its own block copied beside the last that moves bytes (it delays no send)
  await sendCopyingOwn(comm, source, messages, 'last');
}
