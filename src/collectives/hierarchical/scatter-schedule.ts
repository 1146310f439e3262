/**
 * The regular hierarchical scatter (every block m bytes; MPI_Scatter semantics) as a schedule
 * over the caller's communicator: the mirror of the two-level gather of TraffRougier14 Fig. 1
 * (schedule.ts) — the root sends each bridge child its nodes' blocks and each node child its
 * range of the root's node, a leader forwards the nodes of its bridge range to its bridge
 * children and its own node's blocks down the node-level tree.
 *
 * - Every rank but the root: step 0 receives its subtree's blocks from its parent as one
 *   vectored message (sequence order: node order, each node in local order, TraffRougier14
 *   Fig. 2), its own block straight into `recv` and the rest into 'packed'; step 1 sends each
 *   child its range, bridge children first, then node children, each outermost (largest)
 *   range first — the reverse of the order the gather receives them — straight out of
 *   'packed': nothing is copied. A leaf only receives.
 * - The root, 'zero-copy': step 0 sends every message straight out of `send` at its ranks'
 *   places (one range per run of adjacent blocks, TraffRougier14 §6 mirrored), one after the
 *   other (its sends start at time 0, when a child may not have posted its receive yet: sent
 *   in order, they are matched in order), then copies its own block into `recv`; 'reorder':
 *   step 0 copies every other rank's block into 'inter' in node order (MPI_Pack), step 1 sends
 *   contiguous slices of it (TraffRougier14 §4 mirrored).
 *
 * Cost, one-ported (N nodes, n_max the largest node): the binomial tree takes ≤ ⌈log₂N⌉ +
 * ⌈log₂n_max⌉ rounds (a leader sends to its bridge children before its node children); the
 * root sends Σ_{i≠root} m bytes (its node's at β_intra, the rest at β_inter); copies: γ·m at the
 * root (zero-copy), γ·(p−1)·m more before the first send (reorder). The tree comes from
 * `LevelRoles` (binomial or adaptive, level-trees.ts). Compiling: O(p) at the root, O(children)
 * elsewhere.
 */
import type { Communicator } from '../../comm/communicator.js';
import { scratchBuffer } from '../../comm/scratch.js';
import type { ByteRange, RankSchedule, ScheduleOp, ScheduleStep, Span } from '../../comm/schedule.js';
import { InvalidArgumentError, TruncationError } from '../../errors.js';
import { bindSchedule } from '../../schedule/run.js';
import { expectBytes } from '../bytes.js';
import type { Subtree } from '../basic/tree.js';
import { binomialRoles, leaderOf, type LevelRoles } from './level-trees.js';
import { ranksOfNodes, type Bridge, type NodeStructure } from './structure.js';
import { blockRanges } from './schedule.js';
import { HIER_TAG } from './types.js';

/** One message a rank sends: to whom, with which tag, the ranks whose blocks it holds and where they start in the sender's sequence. */
export interface ScatterSend {
  readonly peer: number;
  readonly tag: number;
  readonly ranks: ArrayLike<number>;
  /** Index of the message's first rank in the sender's own sequence (non-root senders). */
  readonly at: number;
}

/**
 * What a rank of the two-level scatter holds and sends (any tree): the sequence of ranks whose
 * blocks it receives in one message (node order, each node in local order; the root: none),
 * its own place in it, its parent and tag, and its sends in order (bridge children, then node
 * children, each outermost range first). O(children).
 */
export interface ScatterPlan {
  /** The ranks of the message from the parent, in order (empty at the root). */
  readonly sequence: Int32Array;
  /** This rank's index in `sequence`. */
  readonly own: number;
  readonly parent: number;
  /** The tag of the message from the parent. */
  readonly tag: number;
  readonly sends: readonly ScatterSend[];
}

const NO_RANKS = new Int32Array(0);

/** The smallest range holding `self` and every child's range: the subtree's range. */
function spanOf(self: number, children: readonly Subtree[]): { lo: number; hi: number } {
  let lo = self;
  let hi = self;
  for (const c of children) {
    if (c.lo < lo) lo = c.lo;
    if (c.hi > hi) hi = c.hi;
  }
  return { lo, hi };
}

/** `rank`'s part of the two-level scatter rooted at `root` over the tree `roles` describes. */
export function scatterPlan(s: NodeStructure, rootNode: number, root: number, rank: number, roles: LevelRoles): ScatterPlan {
  const node = s.nodeIndex[rank];
  const members = s.members[node];
  const li = s.localIndex[rank];
  const sends: ScatterSend[] = [];
  let sequence: Int32Array;
  let own: number;
  /** Where the node's members start in the sequence. */
  let nodeAt: number;
  if (rank === root) {
    sequence = NO_RANKS;
    own = 0;
    nodeAt = 0;
  } else if (roles.leader) {
    const b = spanOf(node, roles.remote);
    sequence = ranksOfNodes(s, b.lo, b.hi);
    nodeAt = s.nodeStart[node] - s.nodeStart[b.lo];
    own = nodeAt + li;
  } else {
    const r = spanOf(li, roles.local);
    sequence = members.subarray(r.lo, r.hi + 1);
    nodeAt = -r.lo;
    own = li - r.lo;
  }
  const blo = roles.leader && rank !== root ? spanOf(node, roles.remote).lo : 0;
  for (const c of roles.remote) {
    sends.push({ peer: leaderOf(s, rootNode, root, c.peer), tag: HIER_TAG.bridge, ranks: ranksOfNodes(s, c.lo, c.hi), at: s.nodeStart[c.lo] - s.nodeStart[blo] });
  }
  for (const c of roles.local) sends.push({ peer: members[c.peer], tag: HIER_TAG.local, ranks: members.subarray(c.lo, c.hi + 1), at: nodeAt + c.lo });
  return { sequence, own, parent: roles.parent, tag: roles.leader ? HIER_TAG.bridge : HIER_TAG.local, sends };
}

const range = (buffer: number, offset: number, length: number): Span => (length > 0 ? [{ buffer, offset, length }] : []);

/**
 * Rank `rank`'s schedule of the regular hierarchical scatter of m-byte blocks from `root`
 * (`reorder`: the root packs into a node-ordered buffer first) over the two-level tree
 * `roles` describes (default: the binomial one).
 */
export function hierarchicalScatterSchedule(
  s: NodeStructure,
  bridge: Bridge,
  root: number,
  rank: number,
  m: number,
  reorder: boolean,
  roles: LevelRoles = binomialRoles(s, bridge, root, rank),
): { schedule: RankSchedule; plan: ScatterPlan } {
  const plan = scatterPlan(s, bridge.rootNode, root, rank, roles);
  const steps: ScheduleStep[] = [];
  if (rank === root) {
    const p = s.size;
    const SEND = 0;
    const RECV = 1;
    const buffers = [
      { name: 'send', bytes: p * m },
      { name: 'recv', bytes: m },
    ];
    const own: ScheduleOp = { kind: 'copy', from: range(SEND, root * m, m), to: range(RECV, 0, m) };
    const sends: ScheduleOp[] = [];
    if (!reorder) {
      for (const x of plan.sends) sends.push({ kind: 'send', peer: x.peer, tag: x.tag, data: blockRanges(SEND, x.ranks, m) });
    } else {
      // every other rank's block back to back in node order, the root's left out
      const INTER = buffers.push({ name: 'inter', bytes: (p - 1) * m }) - 1;
      const offset = new Float64Array(p);
      const copies: ScheduleOp[] = [];
      let total = 0;
      for (const r of s.order) {
        if (r === root) continue;
        offset[r] = total;
        total += m;
        if (m > 0) copies.push({ kind: 'copy', from: range(SEND, r * m, m), to: range(INTER, offset[r], m) });
      }
      if (copies.length > 0) steps.push({ window: copies.length, ops: copies });
      for (const x of plan.sends) sends.push({ kind: 'send', peer: x.peer, tag: x.tag, data: range(INTER, x.ranks.length > 0 ? offset[x.ranks[0]] : 0, x.ranks.length * m) });
    }
    // one send at a time, in order: the root's sends are posted at time 0, maybe before some child
    // has posted its receive, and transfers start in the order they are matched (one-ported:
    // sending them one after the other costs nothing); its own block last, off the sends' path
    const ops = m > 0 ? [...sends, own] : sends;
    steps.push({ window: 1, ops });
    return { schedule: { rank, buffers, steps }, plan };
  }
  // below the root: the message from the parent, own block into 'recv', the rest into 'packed'
  const RECV = 0;
  const PACKED = 1;
  const total = plan.sequence.length * m;
  const ownAt = plan.own * m;
  const buffers = [
    { name: 'recv', bytes: m },
    { name: 'packed', bytes: total - m },
  ];
  const into: ByteRange[] = [...range(PACKED, 0, ownAt), ...range(RECV, 0, m), ...range(PACKED, ownAt, total - ownAt - m)];
  steps.push({ window: 1, ops: [{ kind: 'recv', peer: plan.parent, tag: plan.tag, data: into }] });
  if (plan.sends.length > 0) {
    const sends: ScheduleOp[] = plan.sends.map((x) => {
      const at = x.at * m;
      return { kind: 'send', peer: x.peer, tag: x.tag, data: range(PACKED, at < ownAt ? at : at - m, x.ranks.length * m) };
    });
    steps.push({ window: sends.length, ops: sends });
  }
  return { schedule: { rank, buffers, steps }, plan };
}

/**
 * Runs the regular hierarchical scatter's schedule once on `comm` (index.ts has checked the
 * arguments): a rank whose block length differs from its parent's is told so on that rank
 * (InvalidArgumentError 'recv', whether fewer or more bytes arrived).
 */
export async function runHierarchicalScatter(
  comm: Communicator,
  s: NodeStructure,
  bridge: Bridge,
  root: number,
  send: Uint8Array | undefined,
  recv: Uint8Array,
  reorder: boolean,
  roles?: LevelRoles,
): Promise<void> {
  const { schedule } = hierarchicalScatterSchedule(s, bridge, root, comm.rank, recv.length, reorder, roles);
  const recvError = (peer: number, tag: number, expected: number, got: number | undefined, cause: unknown): Error => {
    if (got === undefined) {
      if (!(cause instanceof TruncationError)) return cause as Error;
      return new InvalidArgumentError('recv', `received more than the ${expected} bytes expected from rank ${peer}: the ranks' buffers differ in length`, { rank: comm.rank, cause });
    }
    try {
      expectBytes(comm, 'recv', { source: peer, tag, bytes: got }, expected);
    } catch (e) {
      return e as Error;
    }
    return new Error(`hierarchical scatter: receive of ${got} bytes where ${expected} were expected`);
  };
  const buffers = schedule.buffers.map((b) => (b.name === 'send' && send !== undefined ? send : b.name === 'recv' ? recv : scratchBuffer(comm, b.bytes)));
  await bindSchedule(comm, schedule, buffers, { recvError, once: true }).run();
}
