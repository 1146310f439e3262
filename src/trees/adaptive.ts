/**
 * Adaptive ("data distribution aware") binomial gather/scatter trees over the ordered
 * hypercube (Traff18 §2: Lemma 1 free root, Lemma 2 fixed root, Lemma 4 every processor
 * copies; Theorem 1's k-ported remark; Traff17 Proposition 1; docs/MODEL.md).
 *
 * Round t = 0, 1, … joins groups of up to k+1 adjacent ranges of (k+1)^t ranks
 * ([a·(k+1)^{t+1} .. (a+1)·(k+1)^{t+1} − 1], cut at p): one range root receives the whole
 * data of the other ranges from their roots, with k ports concurrently. One-ported (k = 1)
 * this is the binomial tree of Traff18 with ⌈log₂ p⌉ rounds; k-ported ⌈log_{k+1} p⌉.
 *
 * Which range root receives:
 * - fixed root r (Lemma 2): the range that contains r, always;
 * - rule 'exact' (default; Traff17 Prop. 1, MODEL.md): the candidate whose join completes
 *   first, computed exactly in the model (copy convention, ports, per-pair costs), ties to
 *   the uppermost range. One-ported and homogeneous this is "the range with less data
 *   sends" for every join whose receiver already received, and at h = 1 the comparison
 *   t_L + comm(m_L) + γ·m_U against max(γ·m_L, t_U) + comm(m_U). For a non-homogeneous
 *   model the exact completion times of the candidate joins decide.
 * - rule 'lemma1' (Traff18 Lemma 1 as written): the range root with the larger completion
 *   time receives (the faster one sends, so nobody waits), ties to the range with more data,
 *   then to the uppermost range. With γ = 0, sizes > 0 and p a power of two this gives
 *   exactly ⌈log₂p⌉α + β·Σ_{i≠r} m_i; one-ported, the default 'exact' rule is never slower
 *   (each join is at least as fast and completion times only enter later joins through max),
 *   but its time is not always that formula evaluated at its own root (e.g. [10, 1, 3, 3]).
 * With `model.copyAll` (Lemma 4) every rank copies its block first (copyAt 0, leaves too);
 * otherwise the ordered copy convention applies (copy overlapping when the first child is
 * to the right, after the first receive when it is to the left).
 *
 * Best root (root omitted) = the root the free-root construction ends at (Traff17's tables).
 * Cost: O(p·(k+1)·k) time, O(p·k) space. The per-round joins are returned by
 * `adaptiveRounds` for a distributed implementation (each join needs only constant-size
 * information per range: root, completion time, data size, root block size).
 */
import { InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { ceilLog } from '../util/ceil-log.js';
import { prepareProblem } from './linear.js';
import { TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

export type AdaptiveRule = 'exact' | 'lemma1';

export interface AdaptiveOptions extends RootOption {
  /** How a free join picks its receiver (default 'exact'); see the module comment. */
  readonly rule?: AdaptiveRule;
}

/** One join of a round: the receiving range root gets the data of the other ranges' roots. */
export interface AdaptiveJoin {
  /** Ranks [lo..hi] of the joined range. */
  readonly lo: number;
  readonly hi: number;
  /** The receiving range root; root of the joined range. */
  readonly receiver: number;
  /** Roots of the sending ranges, in the order the receiver takes them (gather). */
  readonly senders: readonly number[];
  /** Data (elements) each sender transfers: the total of its range. */
  readonly senderSizes: readonly number[];
  /** Completion time of the joined range at `receiver`. */
  readonly time: number;
  /** Total data of the joined range. */
  readonly size: number;
}

export interface AdaptiveSchedule {
  readonly p: number;
  readonly ports: number;
  readonly root: number;
  readonly time: number;
  /** rounds[t] = the joins of round t; ⌈log_{k+1} p⌉ rounds. */
  readonly rounds: readonly (readonly AdaptiveJoin[])[];
  readonly tree: Tree;
}

function parseRule(opts: AdaptiveOptions | undefined): AdaptiveRule {
  const rule = opts?.rule ?? 'exact';
  if (rule !== 'exact' && rule !== 'lemma1') throw new InvalidArgumentError('rule', `must be 'exact' or 'lemma1', got ${String(rule)}`);
  return rule;
}

/** Rounds of the k-ported construction: ⌈log_{k+1} p⌉ by integer arithmetic (0 for p = 1). */
export function roundsFor(p: number, ports: number): number {
  return ceilLog(p, ports + 1);
}

/** The adaptive construction, round by round. */
export function adaptiveRounds(sizes: ArrayLike<number>, model: CostModel, opts?: AdaptiveOptions): AdaptiveSchedule {
  return construct(sizes, model, opts, true) as AdaptiveSchedule;
}

/**
 * The construction; `keepRounds` false skips the per-round joins (adaptiveBinomialTree needs
 * only the tree). Nothing is allocated per join besides the kept rounds: candidate joins are
 * evaluated in preallocated buffers (the two-block tree and the simulator's evaluator run
 * this at p = 2^20, where per-join arrays and closures cost gigabytes of garbage).
 */
function construct(sizes: ArrayLike<number>, model: CostModel, opts: AdaptiveOptions | undefined, keepRounds: boolean): AdaptiveSchedule | BuiltTree {
  const { m, p, root: fixedRoot } = prepareProblem(sizes, model, opts);
  const rule = parseRule(opts);
  const k = model.ports;
  const K = k + 1;
  const copyAll = model.copyAll;

  // Per rank, while it is a range root: port free times, completion time, whether it has children.
  const portFree = new Float64Array(p * k);
  const C = new Float64Array(p);
  const hasKids = new Uint8Array(p);
  const copyCost = new Float64Array(p);
  for (let v = 0; v < p; v++) {
    copyCost[v] = model.copy(v, m[v]);
    if (copyAll) {
      // Lemma 4: the copy is every rank's first operation (copyAt 0), leaves included.
      portFree[v * k] = copyCost[v];
      C[v] = copyCost[v];
    }
  }

  // Current ranges: root and data size, indexed by range number at this round.
  let rootOf = Int32Array.from({ length: p }, (_, i) => i);
  let sizeOf = Float64Array.from(m);
  let width = 1;

  // A candidate join: the receiver's port times, its senders (roots) and their data, in order.
  const tmp = new Float64Array(k);
  const senderBuf = new Int32Array(K);
  const sizeBuf = new Float64Array(K);
  let end = 0;
  /** One operation on the receiver's earliest free port: from `ready` for `dur`. */
  const run = (ready: number, dur: number): void => {
    let best = 0;
    for (let q = 1; q < k; q++) if (tmp[q] < tmp[best]) best = q;
    const e = Math.max(tmp[best], ready) + dur;
    tmp[best] = e;
    if (e > end) end = e;
  };
  /**
   * Simulates `recv` receiving from the first `n` senders of senderBuf in order (as evaluate
   * does) and returns the completion time; with commit, writes the new port state back.
   */
  const join = (recv: number, n: number, commit: boolean): number => {
    for (let q = 0; q < k; q++) tmp[q] = portFree[recv * k + q];
    end = C[recv];
    let first = hasKids[recv] === 0 && !copyAll;
    for (let i = 0; i < n; i++) {
      const s = senderBuf[i];
      const dur = model.comm(s, recv, sizeBuf[i]);
      if (first) {
        // Ordered copy convention (TreeBuilder default): overlap when the child is to the right.
        if (s > recv) {
          run(0, copyCost[recv]);
          run(C[s], dur);
        } else {
          run(C[s], dur);
          run(0, copyCost[recv]);
        }
        first = false;
      } else {
        run(C[s], dur);
      }
    }
    if (commit) {
      for (let q = 0; q < k; q++) portFree[recv * k + q] = tmp[q];
      C[recv] = end;
      hasKids[recv] = 1;
    }
    return end;
  };
  /** The senders of candidate j of ranges a..b−1 into senderBuf/sizeBuf, outward from j: j−1, j+1, j−2, j+2, … (keeps the tree ordered); their count. */
  const order = (j: number, a: number, b: number): number => {
    let n = 0;
    for (let d = 1; d < b - a; d++) {
      if (j - d >= a) {
        senderBuf[n] = rootOf[j - d];
        sizeBuf[n++] = sizeOf[j - d];
      }
      if (j + d < b) {
        senderBuf[n] = rootOf[j + d];
        sizeBuf[n++] = sizeOf[j + d];
      }
    }
    return n;
  };

  const rounds: AdaptiveJoin[][] = [];
  // (parent, child) pairs in the order the joins make them: the children's receive order
  const edges = new Int32Array(2 * Math.max(0, p - 1));
  let nEdges = 0;
  while (width < p) {
    const nRanges = rootOf.length;
    const nGroups = Math.ceil(nRanges / K);
    const nextRoot = new Int32Array(nGroups);
    const nextSize = new Float64Array(nGroups);
    const joins: AdaptiveJoin[] = [];
    for (let g = 0; g < nGroups; g++) {
      const a = g * K;
      const b = Math.min(a + K, nRanges); // ranges a..b-1
      let total = 0;
      for (let i = a; i < b; i++) total += sizeOf[i];
      nextSize[g] = total;
      if (b - a === 1) {
        nextRoot[g] = rootOf[a];
        continue;
      }
      const lo = a * width;
      const hi = Math.min(b * width, p) - 1;
      let recvIdx: number;
      if (fixedRoot !== undefined && fixedRoot >= lo && fixedRoot <= hi) {
        recvIdx = a + Math.floor((fixedRoot - lo) / width);
      } else if (rule === 'exact') {
        recvIdx = -1;
        let bestT = Infinity;
        for (let j = a; j < b; j++) {
          const t = join(rootOf[j], order(j, a, b), false);
          if (t <= bestT) {
            bestT = t;
            recvIdx = j;
          }
        }
      } else {
        recvIdx = a;
        for (let j = a + 1; j < b; j++) {
          const cj = C[rootOf[j]];
          const cb = C[rootOf[recvIdx]];
          if (cj > cb || (cj === cb && sizeOf[j] >= sizeOf[recvIdx])) recvIdx = j;
        }
      }
      const n = order(recvIdx, a, b);
      const recv = rootOf[recvIdx];
      const time = join(recv, n, true);
      for (let i = 0; i < n; i++) {
        edges[nEdges++] = recv;
        edges[nEdges++] = senderBuf[i];
      }
      nextRoot[g] = recv;
      if (keepRounds) {
        joins.push({ lo, hi, receiver: recv, senders: Array.from(senderBuf.subarray(0, n)), senderSizes: Array.from(sizeBuf.subarray(0, n)), time, size: total });
      }
    }
    if (keepRounds) rounds.push(joins);
    rootOf = nextRoot;
    sizeOf = nextSize;
    width *= K;
  }
  const root = rootOf[0];
  const tb = new TreeBuilder(p, root);
  for (let e = 0; e < nEdges; e += 2) tb.addChild(edges[e], edges[e + 1]);
  if (copyAll) for (let v = 0; v < p; v++) tb.setCopyAt(v, 0);
  // p = 1: the lone root still copies its block into the result (as evaluate charges).
  const time = p === 1 ? copyCost[0] : C[root];
  const tree = tb.build();
  return keepRounds ? { p, ports: k, root, time, rounds, tree } : { tree, time, root };
}

/**
 * Adaptive binomial tree (Traff18 Lemmas 1, 2, 4; k-ported with `model.ports` = k).
 * `opts.root` given: Lemma 2's fixed-root construction; omitted: the root the free
 * construction ends at. `opts.rule`: 'exact' (default) or 'lemma1'.
 */
export function adaptiveBinomialTree(sizes: ArrayLike<number>, model: CostModel, opts?: AdaptiveOptions): BuiltTree {
  return construct(sizes, model, opts, false) as BuiltTree;
}
