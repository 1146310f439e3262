/**
 * Optimal ordered broadcast and reduction trees (Traff17 §3.3, Theorem 4).
 *
 * Every edge carries the same full message of m units (not a subtree size) and there is no
 * local copy. Ordered: every subtree spans a consecutive range of ranks and each node's
 * segment grows by adjacent ranges (tree.ts `isOrdered`), as in the gather DPs. A node's
 * children are stored in gather (reduction) order; a broadcast sends to them in the reverse
 * order, as a scatter does, and a reduction is the time reverse of that broadcast.
 *
 * Completion time (`broadcastTime`): a leaf is done at 0; a node v with children c_1..c_n
 * (gather order) is done at t_n, t_0 = 0, t_l = max(t_{l−1}, C(c_l)) + comm. Unrolled,
 * C(v) = max_l (C(c_l) + Σ_{l' ≥ l} comm_l'), which is exactly the broadcast schedule: v sends
 * to c_n first, c_{n−1} next, …, and c_l finishes C(c_l) after its message arrived. comm is
 * comm(v → c, m) for a broadcast and comm(c → v, m) for a reduction (equal when symmetric).
 *
 * Homogeneous costs (model.linear, so every message costs c = α + β·m): the DP collapses to a
 * closed form. An ordered tree over n ranks with any root, fixed or not, reaches the classic
 * one-ported bound ⌈log₂ n⌉·c by a halving construction (see homogeneousBroadcast), and no
 * tree does better: O(p) time and space (better than the O(p³) range DP, which the tests
 * check it against). Non-homogeneous costs: the per-pair range DP of optimal/pairwise.ts with
 * comm(r → w, m) on every edge (comm(w → r, m) for a reduction): O(p³) space, O(p⁵)
 * worst-case time (far less in practice, see there), p ≤ MAX_PAIRWISE_P.
 * One-ported models only.
 */
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import { requireFiniteCosts, type CostModel } from '../model/cost-model.js';
import { requireInteger, validateRoot } from '../model/validate.js';
import { checkOneported } from './optimal/binary.js';
import { MAX_PAIRWISE_P, solveOrderedRanges } from './optimal/pairwise.js';
import { postOrder, TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

export type BroadcastOperation = 'broadcast' | 'reduction';

export interface BroadcastOptions extends RootOption {
  /** 'broadcast' (default): messages go parent → child; 'reduction': child → parent. */
  readonly operation?: BroadcastOperation;
}

/** Largest p of the homogeneous construction (O(p) time and memory; the Tree object dominates). */
export const MAX_BROADCAST_P = 1 << 20;

function checkOperation(op: unknown): BroadcastOperation {
  if (op === undefined) return 'broadcast';
  if (op !== 'broadcast' && op !== 'reduction') {
    throw new InvalidArgumentError('operation', `must be 'broadcast' or 'reduction', got ${String(op)}`);
  }
  return op;
}

/**
 * Exact completion time of a broadcast (or reduction) of m units over `tree` under a
 * one-ported `model`: see the header; the children of each node are in gather order.
 */
export function broadcastTime(tree: Tree, m: number, model: CostModel, operation: BroadcastOperation = 'broadcast'): number {
  if (tree === null || typeof tree !== 'object' || !Number.isInteger(tree.p) || !Array.isArray(tree.children)) {
    throw new InvalidArgumentError('tree', 'must be a Tree');
  }
  const units = requireInteger('m', m, 0);
  const op = checkOperation(operation);
  checkOneported(model, tree.p);
  const order = postOrder(tree);
  const C = new Float64Array(tree.p);
  for (const v of order) {
    let t = 0;
    for (const c of tree.children[v]) {
      const a = C[c];
      t = (t > a ? t : a) + (op === 'broadcast' ? model.comm(v, c, units) : model.comm(c, v, units));
    }
    C[v] = t;
  }
  return C[tree.root];
}

/** p − 1 transfers of m units: the sizes whose gather bound (requireFiniteCosts) covers a broadcast. */
function broadcastSizes(p: number, units: number): Float64Array {
  const s = new Float64Array(p);
  s[0] = units;
  return s;
}

/**
 * Optimal ordered broadcast (or reduction) tree of m units over p ranks (Theorem 4).
 * `opts.root` fixes the root; without it the best root (the smallest on ties) is chosen.
 */
export function optimalBroadcastTree(p: number, m: number, model: CostModel, opts: BroadcastOptions = {}): BuiltTree {
  requireInteger('p', p, 1);
  const units = requireInteger('m', m, 0);
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts', 'must be an object');
  checkOneported(model, p);
  requireFiniteCosts(model, broadcastSizes(p, units));
  const op = checkOperation(opts.operation);
  const fixed = opts.root === undefined ? -1 : validateRoot(opts.root, p);
  if (model.linear !== undefined) {
    if (p > MAX_BROADCAST_P) throw new TooLargeError('p', `${p} > ${MAX_BROADCAST_P}`);
    const { alpha, beta } = model.linear;
    const c = units > 0 ? alpha + beta * units : 0;
    return homogeneousBroadcast(p, c, fixed);
  }
  if (p > MAX_PAIRWISE_P) {
    throw new TooLargeError('p', `${p} > ${MAX_PAIRWISE_P} for a non-homogeneous model (O(p³) memory, O(p⁵) worst-case time)`);
  }
  const K = new Float64Array(p * p); // K[r·p + w] = cost of the edge between parent r and child w
  for (let r = 0; r < p; r++) {
    for (let w = 0; w < p; w++) {
      if (w !== r) K[r * p + w] = op === 'broadcast' ? model.comm(r, w, units) : model.comm(w, r, units);
    }
  }
  const zeros = new Float64Array(p);
  const solution = solveOrderedRanges({ p, leaf: zeros, copy: zeros, cost: (w, r) => K[r * p + w] });
  return fixed < 0 ? solution.best() : solution.rooted(fixed);
}

// ---------------------------------------------------------------------------------------
// Homogeneous: every message costs c.

/**
 * Halving construction: a range of n ranks with h = 2^(⌈log₂ n⌉ − 1) lets its root receive
 * last a child range of at most h ranks whose removal leaves at most h ranks around the root
 * (on the root's right when R ≥ n − h, else on its left, where then L ≥ h). By induction
 * every range of n ranks completes at S(⌈log₂ n⌉), S(k) = k additions of c, for any root.
 * Nothing faster exists: within every interval of length c an informed rank informs at most
 * one more, so n ranks need ⌈log₂ n⌉ sequential messages, and every ordered tree's value is
 * some S(k) with k at least that. So every root is optimal; ties go to the smallest, rank 0.
 * O(p) time and space.
 */
function homogeneousBroadcast(p: number, c: number, fixed: number): BuiltTree {
  const root = fixed < 0 ? 0 : fixed;
  const builder = new TreeBuilder(p, root);
  const tasks: [number, number, number][] = [[0, p - 1, root]];
  while (tasks.length > 0) {
    const [lo0, hi0, r] = tasks.pop()!;
    let lo = lo0;
    let hi = hi0;
    const kids: number[] = [];
    while (lo < hi) {
      const n = hi - lo + 1;
      let h = 1;
      while (2 * h < n) h *= 2;
      if (hi - r >= n - h) {
        const a = Math.min(hi - r, h);
        const w = hi - a + 1; // the child range's end next to r
        kids.push(w);
        tasks.push([w, hi, w]);
        hi -= a;
      } else {
        const a = Math.min(r - lo, h);
        const w = lo + a - 1;
        kids.push(w);
        tasks.push([lo, w, w]);
        lo += a;
      }
    }
    kids.reverse(); // the last receive was found first
    for (const k of kids) builder.addChild(r, k);
  }
  const tree = builder.build();
  // exact value with the same operations as broadcastTime
  const C = new Float64Array(p);
  for (const v of postOrder(tree)) {
    let t = 0;
    for (const k of tree.children[v]) t = (t > C[k] ? t : C[k]) + c;
    C[v] = t;
  }
  return { tree, time: C[root], root };
}
