/**
 * The timeline of a gather or scatter tree under a cost model: when every receive/send and
 * every local copy of every rank starts and ends, and each subtree's completion time. This
 * is the one place the completion-time recurrence is written; `evaluate` runs it without
 * recording (it only needs C and S), `treeSchedule` / the drawings record it.
 *
 * Model: Traff17 §2 (Definition 2, "seed 004" in older notes), restated in docs/MODEL.md.
 * Gather, node v with operations o_1..o_n (its receives in child order, the local copy
 * inserted after `copyAt[v]` receives): one-ported, t ← max(t, ready(o)) + dur(o), where a
 * receive from child c is ready at C(c) and lasts comm(c → v, S(c)), and the copy is ready
 * at 0 and lasts copy(v, m_v). C(v) is the final t; a leaf has C = 0 (or its copy under
 * `copyAll`, Traff18 Lemma 4). A node that receives copies its block, and so does the root
 * always (even alone, p = 1). With k ports each operation goes, in sequence order, to the
 * port that frees first (`PortClock`).
 *
 * Scatter runs the same operations in reverse order: v sends segment S(c) to c, then c
 * scatters on; C(v) = max over operations of (its end + C(c)). With one port the two are
 * equal (time reversal of the same schedule, Traff17 §5).
 *
 * Times: gather times are absolute from 0 (every rank starts at 0). A scatter's recurrence
 * runs in times local to each node (v's operations from v's start); `timeline` then makes
 * them absolute top-down (a node starts when its segment has arrived, the root at 0).
 *
 * Cost: O(p·k) time (k ports), O(p) space, iterative (post-order), no recursion.
 */
import type { CostModel } from '../model/cost-model.js';
import { postOrder, type Tree } from './tree.js';

export type Operation = 'gather' | 'scatter';

/** The parts of a cost model the recurrence uses (a unit-round pseudo-model fits too). */
export type TimedCosts = Pick<CostModel, 'ports' | 'copyAll' | 'comm' | 'copy'>;

/**
 * Greedy k-port assignment: each operation, in sequence order, goes to the port that frees
 * first and starts when both that port and its data are ready.
 */
export class PortClock {
  private readonly free: Float64Array;

  constructor(ports: number) {
    this.free = new Float64Array(ports);
  }

  reset(): void {
    this.free.fill(0);
  }

  /** Runs an operation that can start at `ready` and lasts `duration`; returns its end. */
  run(ready: number, duration: number): number {
    const f = this.free;
    let best = 0;
    for (let q = 1; q < f.length; q++) if (f[q] < f[best]) best = q;
    const end = Math.max(f[best], ready) + duration;
    f[best] = end;
    return end;
  }

  /**
   * When an operation ready at `ready` would start if `run` placed it now. Only recording
   * runs ask: `run` itself stores nothing more, it is on evaluate's hot path.
   */
  startOf(ready: number): number {
    const f = this.free;
    let best = 0;
    for (let q = 1; q < f.length; q++) if (f[q] < f[best]) best = q;
    return Math.max(f[best], ready);
  }
}

/**
 * Receives the timed operations as the recurrence places them, in times local to the node
 * that performs them (gather: absolute; scatter: from that node's start).
 */
export interface TimelineRecorder {
  /** The transfer between `child` and its parent (gather: receive, scatter: send). */
  transfer(child: number, start: number, end: number): void;
  /** The local copy of `rank`; copies that cost nothing are not reported. */
  copy(rank: number, start: number, end: number): void;
}

/**
 * The recurrence itself: fills S(v) and C(v) for every rank, visiting `order` (a post-order
 * of `tree`), and reports each operation to `rec` when one is given. Inputs are trusted
 * (callers validate). Without a recorder this is `evaluate`'s hot loop: keep it lean.
 */
export function runTimeline(
  tree: Tree,
  sizes: ArrayLike<number>,
  costs: TimedCosts,
  operation: Operation,
  order: Int32Array,
  S: Float64Array,
  C: Float64Array,
  rec?: TimelineRecorder,
): void {
  const k = costs.ports;
  const ports = new PortClock(k);
  for (const v of order) {
    const kids = tree.children[v];
    let s = sizes[v];
    for (const c of kids) s += S[c];
    S[v] = s;
    // A node that receives something copies its own block; so does the root always (it assembles
    // the result, even alone: p = 1), and every node under copyAll.
    const copyCost = kids.length > 0 || costs.copyAll || v === tree.root ? costs.copy(v, sizes[v]) : 0;
    if (kids.length === 0) {
      C[v] = copyCost;
      if (rec !== undefined && copyCost > 0) rec.copy(v, 0, copyCost);
      continue;
    }
    const at = tree.copyAt[v];
    if (operation === 'gather') {
      if (k === 1) {
        let t = 0;
        for (let j = 0; j < kids.length; j++) {
          if (j === at) {
            if (rec !== undefined && copyCost > 0) rec.copy(v, t, t + copyCost);
            t += copyCost;
          }
          const c = kids[j];
          const start = Math.max(t, C[c]);
          t = start + costs.comm(c, v, S[c]);
          if (rec !== undefined) rec.transfer(c, start, t);
        }
        if (at === kids.length) {
          if (rec !== undefined && copyCost > 0) rec.copy(v, t, t + copyCost);
          t += copyCost;
        }
        C[v] = t;
      } else {
        ports.reset();
        let end = 0;
        for (let j = 0; j < kids.length; j++) {
          if (j === at) {
            const startC = rec !== undefined ? ports.startOf(0) : 0;
            const ec = ports.run(0, copyCost);
            if (rec !== undefined && copyCost > 0) rec.copy(v, startC, ec);
            end = Math.max(end, ec);
          }
          const c = kids[j];
          const start = rec !== undefined ? ports.startOf(C[c]) : 0;
          const e = ports.run(C[c], costs.comm(c, v, S[c]));
          if (rec !== undefined) rec.transfer(c, start, e);
          end = Math.max(end, e);
        }
        if (at === kids.length) {
          const startC = rec !== undefined ? ports.startOf(0) : 0;
          const ec = ports.run(0, copyCost);
          if (rec !== undefined && copyCost > 0) rec.copy(v, startC, ec);
          end = Math.max(end, ec);
        }
        C[v] = end;
      }
    } else {
      ports.reset();
      let end = 0;
      if (at === kids.length) {
        const startC = rec !== undefined ? ports.startOf(0) : 0;
        const ec = ports.run(0, copyCost);
        if (rec !== undefined && copyCost > 0) rec.copy(v, startC, ec);
        end = Math.max(end, ec);
      }
      for (let j = kids.length - 1; j >= 0; j--) {
        const c = kids[j];
        const start = rec !== undefined ? ports.startOf(0) : 0;
        const e = ports.run(0, costs.comm(v, c, S[c]));
        if (rec !== undefined) rec.transfer(c, start, e);
        end = Math.max(end, e + C[c]);
        if (j === at) {
          const startC = rec !== undefined ? ports.startOf(0) : 0;
          const ec = ports.run(0, copyCost);
          if (rec !== undefined && copyCost > 0) rec.copy(v, startC, ec);
          end = Math.max(end, ec);
        }
      }
      C[v] = end;
    }
  }
}

/** When every operation of a gather/scatter tree happens, in absolute times. */
export interface Timeline {
  readonly operation: Operation;
  /** Completion time of the whole tree (= evaluate(...).time). */
  readonly time: number;
  /** C(v) per rank, exactly as `evaluate` defines it (for scatter: relative to v's start). */
  readonly completion: Float64Array;
  /** S(v): sum of the blocks in the subtree of v. */
  readonly subtreeSize: Float64Array;
  /** Start / end of the transfer between v and its parent (NaN for the root). */
  readonly edgeStart: Float64Array;
  readonly edgeEnd: Float64Array;
  /** Start / end of v's local copy (NaN when v copies nothing or the copy costs nothing). */
  readonly copyStart: Float64Array;
  readonly copyEnd: Float64Array;
  /** Absolute time at which v starts (scatter: its segment has arrived; gather: 0). */
  readonly begin: Float64Array;
  /** Absolute time at which v's last own operation ends. */
  readonly end: Float64Array;
  /** Index of v among its parent's children (gather receive order), -1 for the root. */
  readonly childIndex: Int32Array;
}

/** The timeline of `tree` (inputs trusted: callers validate tree, sizes and model). */
export function timeline(tree: Tree, sizes: ArrayLike<number>, costs: TimedCosts, operation: Operation): Timeline {
  const p = tree.p;
  const order = postOrder(tree);
  const S = new Float64Array(p);
  const C = new Float64Array(p);
  const edgeStart = new Float64Array(p).fill(NaN);
  const edgeEnd = new Float64Array(p).fill(NaN);
  const copyStart = new Float64Array(p).fill(NaN);
  const copyEnd = new Float64Array(p).fill(NaN);
  const begin = new Float64Array(p);
  const end = new Float64Array(p);
  const childIndex = new Int32Array(p).fill(-1);
  runTimeline(tree, sizes, costs, operation, order, S, C, {
    transfer(child, start, e) {
      edgeStart[child] = start;
      edgeEnd[child] = e;
    },
    copy(rank, start, e) {
      copyStart[rank] = start;
      copyEnd[rank] = e;
    },
  });
  for (let v = 0; v < p; v++) {
    const kids = tree.children[v];
    for (let j = 0; j < kids.length; j++) childIndex[kids[j]] = j;
  }
  if (operation === 'gather') {
    for (let v = 0; v < p; v++) end[v] = v === tree.root ? C[v] : edgeEnd[v];
  } else {
    // Top-down: a child starts when its segment arrived; shift local times to absolute.
    for (let i = p - 1; i >= 0; i--) {
      const v = order[i];
      const b = v === tree.root ? 0 : edgeEnd[v];
      begin[v] = b;
      let last = b;
      if (!Number.isNaN(copyStart[v])) {
        copyStart[v] += b;
        copyEnd[v] += b;
        last = Math.max(last, copyEnd[v]);
      }
      for (const c of tree.children[v]) {
        edgeStart[c] += b;
        edgeEnd[c] += b;
        last = Math.max(last, edgeEnd[c]);
      }
      end[v] = last;
    }
  }
  return { operation, time: C[tree.root], completion: C, subtreeSize: S, edgeStart, edgeEnd, copyStart, copyEnd, begin, end, childIndex };
}

/** One timed operation of a rank (times NaN for a copy that costs nothing). */
export interface TimedOperation {
  readonly kind: 'recv' | 'send' | 'copy';
  /** The child received from / sent to; the rank itself for its copy. */
  readonly peer: number;
  readonly start: number;
  readonly end: number;
}

/**
 * The operations of rank v in the order it performs them: gather, its receives in child
 * order with the copy after `copyAt[v]` of them; scatter, the reverse (sends, copy). A leaf
 * lists its copy only when the copy costs something.
 */
export function rankOperations(tree: Tree, tl: Timeline, v: number): TimedOperation[] {
  const kids = tree.children[v];
  const copy: TimedOperation = { kind: 'copy', peer: v, start: tl.copyStart[v], end: tl.copyEnd[v] };
  if (kids.length === 0) return Number.isNaN(copy.start) ? [] : [copy];
  const kind = tl.operation === 'gather' ? 'recv' : 'send';
  const ops: TimedOperation[] = [];
  const at = tree.copyAt[v];
  for (let j = 0; j <= kids.length; j++) {
    if (j === at) ops.push(copy);
    if (j < kids.length) ops.push({ kind, peer: kids[j], start: tl.edgeStart[kids[j]], end: tl.edgeEnd[kids[j]] });
  }
  if (tl.operation === 'scatter') ops.reverse();
  return ops;
}
