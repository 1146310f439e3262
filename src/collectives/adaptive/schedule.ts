/**
 * The data phase of adaptive gatherv / scatterv (Traff18 §3) compiled into a schedule
 * (src/comm/schedule.ts) once the construction (construct.ts, Lemma 3) has given this rank its
 * role: the same operations in the same order as the program executors of gatherv/adaptive.ts
 * and scatterv/adaptive.ts, which run the first, overlapped start (gather) while the joins
 * are still arriving (one-ported only).
 *
 * Ports (docs/MODEL.md "Ports"): the receives (gather) or sends (scatter) and the copy run as
 * one step with window model.ports, and with k > 1 ports the copy is a message to itself
 * (schedule-builder.ts localCopy), which holds a port; one-ported every step has window 1 and
 * the copy is the processor's. So a k-ported tree's data phase on the simulator ends at
 * exactly evaluate's k-ported time, as the root-built trees' do (gatherv/tree.ts).
 *
 * Gather: a rank with children (or every rank under Lemma 4, copyAll) receives its children's
 * ranges in join order into its packed buffer (bufferLayout: rank order, its own block at its
 * offset), copies its own block in before the first receive or after it (copyPosition), then
 * sends the whole range to its parent; a leaf sends straight from its block. The root
 * receives each range straight into its buffer at the displacements (one range per block run,
 * collectives/placement.ts) and copies its own block (not in place). Empty ranges move no
 * message. Scatter: the reverse — receive the range from the parent, then send to the
 * children last-joined first, the copy out mirrored.
 *
 * Buffers: 'send', 'recv' (the user's, as in schedule-builder.ts) and 'packed'.
 */
import type { ScheduleOp, Span } from '../../comm/schedule.js';
import { Buffers, localCopy, recv, send, sequenceSpan, span, Steps, type RankSchedule, type VRankDescription } from '../schedule-builder.js';
import { rootArrays, capacityBytes } from '../schedule-builder.js';
import type { Tree } from '../../trees/tree.js';
import type { AdaptiveRole, RoleEvent } from './construct.js';
import { bufferLayout, copyPosition } from './plan.js';

/** The ranks lo..hi. */
function rangeRanks(lo: number, hi: number): number[] {
  return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
}

/**
 * This rank's schedule of adaptive gatherv for its constructed `role`; `rootCopyAt`: the root's
 * copy position when it is not copyPosition's (the degrading tree's root copies first).
 */
export function adaptiveGatherSchedule(d: VRankDescription, role: AdaptiveRole, tag: number, rootCopyAt?: number): RankSchedule {
  const u = d.unitBytes;
  const b = new Buffers();
  const steps = new Steps();
  const kids = role.children;
  const at = d.rank === d.root && rootCopyAt !== undefined ? rootCopyAt : copyPosition(role, d.copyAll);
  if (d.rank === d.root) {
    const { counts, displs } = rootArrays(d);
    const inPlace = d.inPlace ?? false;
    const mine = inPlace ? 0 : counts[d.rank] * u;
    const sendBuf = b.add('send', mine);
    const recvBuf = b.add('recv', capacityBytes(counts, displs, u));
    const ops: ScheduleOp[] = [];
    const own = (): void => {
      if (!inPlace) localCopy(ops, tag, d.ports, span(recvBuf, displs[d.rank] * u, mine), span(sendBuf, 0, mine));
    };
    kids.forEach((c, k) => {
      if (k === at) own();
      if (c.size > 0) ops.push(recv(c.peer, tag, sequenceSpan(recvBuf, counts, displs, u, rangeRanks(c.lo, c.hi))));
    });
    if (at >= kids.length) own();
    steps.add(ops, d.ports);
    return { rank: d.rank, buffers: b.list, steps: steps.list };
  }
  const parent = role.parent as NonNullable<AdaptiveRole['parent']>;
  const block = d.count * u;
  const sendBuf = b.add('send', block);
  if (kids.length === 0 && !d.copyAll) {
    if (block > 0) steps.add([send(parent.peer, tag, span(sendBuf, 0, block))], 1);
    return { rank: d.rank, buffers: b.list, steps: steps.list };
  }
  const l = bufferLayout(role, u);
  const packed = b.add('packed', l.total);
  const ops: ScheduleOp[] = [];
  const own = (): void => {
    localCopy(ops, tag, d.ports, span(packed, l.own, block), span(sendBuf, 0, block));
  };
  kids.forEach((c, k) => {
    if (k === at) own();
    if (c.size > 0) ops.push(recv(c.peer, tag, span(packed, l.children[k], c.size * u)));
  });
  if (at >= kids.length) own();
  steps.add(ops, d.ports);
  if (l.total > 0) steps.add([send(parent.peer, tag, span(packed, 0, l.total))], 1);
  return { rank: d.rank, buffers: b.list, steps: steps.list };
}

/** This rank's schedule of adaptive scatterv for its constructed `role` (`rootCopyAt` as for the gather). */
export function adaptiveScatterSchedule(d: VRankDescription, role: AdaptiveRole, tag: number, rootCopyAt?: number): RankSchedule {
  const u = d.unitBytes;
  const b = new Buffers();
  const steps = new Steps();
  const kids = role.children;
  const at = d.rank === d.root && rootCopyAt !== undefined ? rootCopyAt : copyPosition(role, d.copyAll);
  const out: { peer: number; bytes: number; data: ReturnType<typeof span> }[] = [];
  // the own block's copy out (none in place): to, from
  let ownTo: Span | undefined;
  let ownFrom: Span = [];
  if (d.rank === d.root) {
    const { counts, displs } = rootArrays(d);
    const inPlace = d.inPlace ?? false;
    const mine = inPlace ? 0 : counts[d.rank] * u;
    const sendBuf = b.add('send', capacityBytes(counts, displs, u));
    const recvBuf = b.add('recv', mine);
    for (const c of kids) out.push({ peer: c.peer, bytes: c.size * u, data: sequenceSpan(sendBuf, counts, displs, u, rangeRanks(c.lo, c.hi)) });
    if (!inPlace) {
      ownTo = span(recvBuf, 0, mine);
      ownFrom = span(sendBuf, displs[d.rank] * u, mine);
    }
  } else {
    const parent = role.parent as NonNullable<AdaptiveRole['parent']>;
    const block = d.count * u;
    const recvBuf = b.add('recv', block);
    if (kids.length === 0 && !d.copyAll) {
      if (block > 0) steps.add([recv(parent.peer, tag, span(recvBuf, 0, block))], 1);
      return { rank: d.rank, buffers: b.list, steps: steps.list };
    }
    const l = bufferLayout(role, u);
    const packed = b.add('packed', l.total);
    if (l.total > 0) steps.add([recv(parent.peer, tag, span(packed, 0, l.total))], 1);
    kids.forEach((c, k) => out.push({ peer: c.peer, bytes: c.size * u, data: span(packed, l.children[k], c.size * u) }));
    ownTo = span(recvBuf, 0, block);
    ownFrom = span(packed, l.own, block);
  }
  // the gather order reversed: the last-joined child first, the copy mirrored
  const ops: ScheduleOp[] = [];
  if (at === out.length && ownTo !== undefined) localCopy(ops, tag, d.ports, ownTo, ownFrom);
  for (let j = out.length - 1; j >= 0; j--) {
    if (out[j].bytes > 0) ops.push(send(out[j].peer, tag, out[j].data));
    if (j === at && ownTo !== undefined) localCopy(ops, tag, d.ports, ownTo, ownFrom);
  }
  steps.add(ops, d.ports);
  return { rank: d.rank, buffers: b.list, steps: steps.list };
}

/** Each rank's subtree as a rank range [lo..hi] of the ordered tree, and the counts' prefix sums. O(p). */
interface TreeRanges {
  readonly lo: Int32Array;
  readonly hi: Int32Array;
  readonly prefix: readonly number[];
}

function treeRanges(tree: Tree, counts: readonly number[]): TreeRanges {
  const p = tree.p;
  const lo = Int32Array.from({ length: p }, (_, v) => v);
  const hi = Int32Array.from({ length: p }, (_, v) => v);
  // children before parents: deepest first
  const order: number[] = [tree.root];
  for (let i = 0; i < order.length; i++) order.push(...tree.children[order[i]]);
  for (let i = order.length - 1; i >= 0; i--) {
    const v = order[i];
    for (const c of tree.children[v]) {
      lo[v] = Math.min(lo[v], lo[c]);
      hi[v] = Math.max(hi[v], hi[c]);
    }
  }
  const prefix = [0];
  for (const c of counts) prefix.push(prefix[prefix.length - 1] + c);
  return { lo, hi, prefix };
}

/** Rank v's role in `tree` from its subtrees' ranges (rolesOfTree). */
function roleAt(tree: Tree, counts: readonly number[], r: TreeRanges, v: number): AdaptiveRole {
  const event = (kind: 'recv' | 'send', peer: number, x: number, round: number): RoleEvent => ({
    kind,
    round,
    peer,
    size: r.prefix[r.hi[x] + 1] - r.prefix[r.lo[x]],
    lo: r.lo[x],
    hi: r.hi[x],
    check: 0,
  });
  const parent = tree.parent[v];
  return {
    rank: v,
    p: tree.p,
    root: tree.root,
    count: counts[v],
    children: tree.children[v].map((c, k) => event('recv', c, c, k)),
    parent: parent < 0 ? undefined : event('send', parent, v, 0),
    final: undefined,
  };
}

/**
 * Every rank's role in the ordered `tree` (the adaptive tree of `counts`, which the
 * construction equals: construct.ts), as the construction would deliver it: each rank's
 * children in receive order with their subtrees' ranges, and the range it sends to its parent.
 * Without communication (for printing and checking schedules, v-schedule.ts); `round` is the
 * join's depth below the receiver's range root (not used by the data phase).
 */
export function rolesOfTree(tree: Tree, counts: readonly number[]): AdaptiveRole[] {
  const r = treeRanges(tree, counts);
  return Array.from({ length: tree.p }, (_, v) => roleAt(tree, counts, r, v));
}

/** Rank v's role alone, as rolesOfTree gives it (one role made, not p). */
export function roleOfTree(tree: Tree, counts: readonly number[], v: number): AdaptiveRole {
  return roleAt(tree, counts, treeRanges(tree, counts), v);
}
