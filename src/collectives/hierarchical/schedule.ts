/**
 * The data phase of the regular hierarchical gather (two-level.ts, TraffRougier14 Fig. 1 and
 * Fig. 6) as a schedule (src/comm/schedule.ts) over the caller's communicator, once the node
 * structure and the bridge are known: the same messages, posted in the same order, with the
 * same waits, so the simulator's times are those of two-level.ts. Every block is m bytes, so
 * every message's size is known on both sides; gatherv, whose sizes only the root knows
 * (two-level.ts receives them with recvAlloc), stays program code. The tree is the one a
 * rank's LevelRoles describe (level-trees.ts): binomial on both levels (TraffRougier14), or
 * Traff18's adaptive trees, which the regular gather computes locally.
 *
 * - Every rank: step 0 posts the receives of its node children (local tree, children in
 *   reverse order) and, at a node's leader, of its bridge children, all at once; the root
 *   adds the copy of its own block. A rank other than the root then sends, in step 1, its
 *   own block and what it received as one vectored message (sequence order: local index, then
 *   node order), straight from 'send' and 'packed' — nothing is copied. The node level
 *   travels with HIER_TAG.local, the bridge with HIER_TAG.bridge, both on the caller's
 *   communicator (its ranks: members[…], leaders[…]).
 * - The root, 'zero-copy': every message lands in 'recv' at its ranks' places (one range per
 *   run of adjacent blocks, TraffRougier14 §6); 'reorder': back to back in 'inter' in node
 *   order, then (step 1) one copy per other rank's block into 'recv' (TraffRougier14 §4).
 *
 * Cost: as two-level.ts; compiling is O(p) at the root (placements), O(children) elsewhere.
 */
import { scratchBuffer } from '../../comm/scratch.js';
import type { Communicator } from '../../comm/communicator.js';
import type { ByteRange, RankSchedule, ScheduleOp, ScheduleStep, Span } from '../../comm/schedule.js';
import { InvalidArgumentError, TruncationError } from '../../errors.js';
import { bindSchedule } from '../../schedule/run.js';
import { expectBytes } from '../bytes.js';
import { binomialRoles, leaderOf, type LevelRoles } from './level-trees.js';
import { ranksInNodes, ranksOfNodes, type Bridge, type NodeStructure } from './structure.js';
import { HIER_TAG } from './types.js';
import { describe } from './two-level.js';

/** One receive of a rank's step 0 and the ranks whose blocks its message holds (for error texts). */
export interface HierarchicalReceive {
  /** The sender (rank of the communicator). */
  readonly peer: number;
  readonly tag: number;
  /** Bytes expected. */
  readonly bytes: number;
  readonly ranks: ArrayLike<number>;
}

export interface HierarchicalSchedule {
  readonly schedule: RankSchedule;
  /** The receives of step 0, in order. */
  readonly receives: readonly HierarchicalReceive[];
}

const NO_RANKS = new Int32Array(0);

/** Ranges of `buffer` for the blocks of `ranks` (m bytes each at rank·m), adjacent ones merged. */
export function blockRanges(buffer: number, ranks: ArrayLike<number>, m: number): ByteRange[] {
  const out: ByteRange[] = [];
  if (m === 0) return out;
  for (let j = 0; j < ranks.length; j++) {
    const at = ranks[j] * m;
    const last = out[out.length - 1];
    if (last !== undefined && last.offset + last.length === at) out[out.length - 1] = { buffer, offset: last.offset, length: last.length + m };
    else out.push({ buffer, offset: at, length: m });
  }
  return out;
}

/**
 * Rank `rank`'s schedule of the regular hierarchical gather of m-byte blocks to `root`
 * (`reorder`: TraffRougier14's intermediate buffer at the root instead of zero-copy), over the
 * two-level tree `roles` describes (default: the binomial one; level-trees.ts).
 */
export function hierarchicalGatherSchedule(
  s: NodeStructure,
  bridge: Bridge,
  root: number,
  rank: number,
  m: number,
  reorder: boolean,
  roles: LevelRoles = binomialRoles(s, bridge, root, rank),
): HierarchicalSchedule {
  const myNode = s.nodeIndex[rank];
  const members = s.members[myNode];
  const li = s.localIndex[rank];
  const isLeader = roles.leader;
  const isRoot = rank === root;
  const receives: HierarchicalReceive[] = [];
  // node children in reverse order (smallest range first), then bridge children likewise
  const nodeKids = [...roles.local].reverse();
  for (const c of nodeKids) {
    receives.push({ peer: members[c.peer], tag: HIER_TAG.local, bytes: (c.hi - c.lo + 1) * m, ranks: members.subarray(c.lo, c.hi + 1) });
  }
  const bridgeKids = isLeader ? [...roles.remote].reverse() : [];
  for (const c of bridgeKids) {
    const ranks = isRoot ? ranksOfNodes(s, c.lo, c.hi) : NO_RANKS;
    receives.push({ peer: leaderOf(s, bridge.rootNode, root, c.peer), tag: HIER_TAG.bridge, bytes: ranksInNodes(s, c.lo, c.hi) * m, ranks });
  }
  const steps: ScheduleStep[] = [];
  if (isRoot) {
    const p = s.size;
    const SEND = 0;
    const RECV = 1;
    const buffers = [
      { name: 'send', bytes: m },
      { name: 'recv', bytes: p * m },
    ];
    const first: ScheduleOp[] = [];
    const copies: ScheduleOp[] = [];
    if (!reorder) {
      for (const r of receives) first.push({ kind: 'recv', peer: r.peer, tag: r.tag, data: blockRanges(RECV, r.ranks, m) });
    } else {
      // the other ranks' blocks back to back in node order, the root's left out
      const INTER = buffers.push({ name: 'inter', bytes: (p - 1) * m }) - 1;
      const offset = new Float64Array(p);
      let total = 0;
      for (const r of s.order) {
        if (r === root) continue;
        offset[r] = total;
        total += m;
        if (m > 0) copies.push({ kind: 'copy', from: [{ buffer: INTER, offset: offset[r], length: m }], to: [{ buffer: RECV, offset: r * m, length: m }] });
      }
      for (const r of receives) {
        const data: Span = r.bytes > 0 ? [{ buffer: INTER, offset: offset[r.ranks[0]], length: r.bytes }] : [];
        first.push({ kind: 'recv', peer: r.peer, tag: r.tag, data });
      }
    }
    if (m > 0) first.push({ kind: 'copy', from: [{ buffer: SEND, offset: 0, length: m }], to: [{ buffer: RECV, offset: root * m, length: m }] });
    steps.push({ window: Math.max(1, first.length), ops: first });
    if (copies.length > 0) steps.push({ window: copies.length, ops: copies });
    return { schedule: { rank, buffers, steps }, receives };
  }
  // a rank below the root: the children's messages in 'packed', one range each
  const SEND = 0;
  const PACKED = 1;
  let packed = 0;
  const at: ByteRange[] = receives.map((r) => {
    const range = { buffer: PACKED, offset: packed, length: r.bytes };
    packed += r.bytes;
    return range;
  });
  const buffers = [
    { name: 'send', bytes: m },
    { name: 'packed', bytes: packed },
  ];
  const nNode = nodeKids.length;
  if (receives.length > 0) {
    steps.push({ window: receives.length, ops: receives.map((r, i) => ({ kind: 'recv', peer: r.peer, tag: r.tag, data: at[i].length > 0 ? [at[i]] : [] })) });
  }
  // sequence order: the node's pieces by local index (own at li), then by node index (own node at myNode)
  const nodePieces: { at: number; span: Span }[] = [{ at: li, span: m > 0 ? [{ buffer: SEND, offset: 0, length: m }] : [] }];
  nodeKids.forEach((c, i) => nodePieces.push({ at: c.lo, span: at[i].length > 0 ? [at[i]] : [] }));
  nodePieces.sort((a, b) => a.at - b.at);
  const nodeSpan = nodePieces.flatMap((x) => x.span);
  let out: Span;
  let tag: number;
  if (!isLeader) {
    out = nodeSpan;
    tag = HIER_TAG.local;
  } else {
    const all: { at: number; span: Span }[] = [{ at: myNode, span: nodeSpan }];
    bridgeKids.forEach((c, j) => all.push({ at: c.lo, span: at[nNode + j].length > 0 ? [at[nNode + j]] : [] }));
    all.sort((a, b) => a.at - b.at);
    out = all.flatMap((x) => x.span);
    tag = HIER_TAG.bridge;
  }
  steps.push({ window: 1, ops: [{ kind: 'send', peer: roles.parent, tag, data: out }] });
  return { schedule: { rank, buffers, steps }, receives };
}

/**
 * Runs the regular hierarchical gather's schedule once on `comm` (index.ts has checked the
 * arguments): a wrong length is the error two-level.ts gives — at the root, naming the ranks
 * of the message (field 'send'); elsewhere expectBytes's, or the transport's truncation.
 */
export async function runHierarchicalGather(
  comm: Communicator,
  s: NodeStructure,
  bridge: Bridge,
  root: number,
  send: Uint8Array,
  recv: Uint8Array | undefined,
  reorder: boolean,
  roles?: LevelRoles,
): Promise<void> {
  const me = comm.rank;
  const { schedule, receives } = hierarchicalGatherSchedule(s, bridge, root, me, send.length, reorder, roles);
  const byPeer = new Map<string, HierarchicalReceive>();
  for (const r of receives) byPeer.set(`${r.tag}:${r.peer}`, r);
  const recvError = (peer: number, tag: number, expected: number, got: number | undefined, cause: unknown): Error => {
    const r = byPeer.get(`${tag}:${peer}`);
    if (me === root && r !== undefined) {
      return got === undefined
        ? new InvalidArgumentError('send', `ranks ${describe(r.ranks)} delivered more than the ${expected} bytes the root expects from them (their blocks do not match the root's counts)`, { rank: me, cause })
        : new InvalidArgumentError('send', `ranks ${describe(r.ranks)} delivered ${got} bytes, the root expects ${expected}`, { rank: me });
    }
    if (got === undefined) {
      if (!(cause instanceof TruncationError)) return cause as Error;
      return new InvalidArgumentError('send', `received more than the ${expected} bytes expected from rank ${peer}: the ranks' buffers differ in length`, { rank: me, cause });
    }
    try {
      expectBytes(comm, 'send', { source: peer, tag, bytes: got }, expected);
    } catch (e) {
      return e as Error;
    }
    return new Error(`hierarchical gather: receive of ${got} bytes where ${expected} were expected`);
  };
  const buffers = schedule.buffers.map((b) => (b.name === 'send' ? send : b.name === 'recv' && recv !== undefined ? recv : scratchBuffer(comm, b.bytes)));
  await bindSchedule(comm, schedule, buffers, { recvError, once: true }).run();
}
