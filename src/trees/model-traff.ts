/**
 * Träff's irregular gather/scatter tree and its model-based modification (Dichev10 §2,
 * "Model-based Träff algorithm for scatterv/gatherv", Fig. 1; the original is Träff,
 * "Hierarchical gather/scatter algorithms with graceful degradation", IPDPS 2004, the
 * seed's ref. [2]).
 *
 * Construction, for the set S of processes under a parent j (at first: all but the root r,
 * under r), with a predictor t(i, j, m) (model.comm(i, j, m) for a gather, model.comm(j, i, m)
 * for a scatter):
 * 1. sort S decreasingly by t(i, j, m_i), m_i being i's own block (ties: lower rank first);
 * 2. cut the sorted list into k = ⌈log₂(n + 1)⌉ contiguous, non-empty subsets (n = |S|)
 *    whose predicted costs to j follow a binomial tree's shares (subset j ≈ 2^(j−1)/(2^k − 1)
 *    of the total, `balancedPartition`), so the first subsets hold fewer, slower processes and
 *    the last ones more, faster processes (the seed's "left subtrees have less processes with
 *    slower transfer times while the right subtrees have more processes with faster ones");
 * 3. each subset's representative is the process i with the least t(i, j, Σ_subset m), the
 *    time to move the whole subset's data to / from j (ties: the larger own block, then the
 *    lower rank); it becomes a child of j;
 * 4. repeat from 1 for every subset without its representative, under the representative
 *    (so the predictions are recomputed for the new parent).
 * Finally every node receives from its children in the order their subtrees are predicted to
 * be ready (earliest first; evaluated bottom-up with the predictor), which is the optimal
 * one-ported order for given subtrees (earliest release date first; for a scatter, the
 * reverse: the child with the longest remaining subtree is served first). Every node copies
 * its own block first (copyAt 0).
 *
 * Our reading of the seed (which does not spell these out, and ref. [2] is not at hand):
 * - k = ⌈log₂(n + 1)⌉ is the degree of a binomial tree's node over n + 1 processes: Träff's
 *   construction is binomial-tree based and degenerates to a binomial tree for equal blocks
 *   and identical links;
 * - "balanced in their total communication cost" = balanced for a one-ported parent, which
 *   takes its subsets one after the other: a later subset may cost twice the one before, as in
 *   a binomial tree. With equal blocks and links the cut is exactly 1, 2, 4, … and the tree is
 *   as fast as the binomial tree, in ⌈log₂p⌉ rounds (tested). (Subsets of equal cost are not:
 *   p = 16 gives subtrees 3, 4, 4, 4, 40 % slower than binomial — a weak original.)
 * - the original Träff tree (`predictor: 'oblivious'`) is the same construction with a
 *   homogeneous predictor: "Träff considers the message size assigned to each process and
 *   assumes identical links between all nodes". Its links are the model's mean α and β over
 *   all ordered pairs (the model itself if it is already homogeneous, `model.linear`), so it
 *   sorts by block size and each representative is its subset's largest block. The model-
 *   based tree (`predictor: 'model'`) uses the model's per-pair predictions; its mapping and
 *   its structure can both differ from the original.
 * The tree's time is always evaluate(tree, sizes, model, op) under the real model.
 *
 * The model-based tree is not always faster than the original (measured on the seed's two
 * platforms, docs/heterogeneous-trees.md: e.g. up to 19.5 % slower for some roots on the
 * Grid5000-like platform with small messages, where the cut by cost puts the remote
 * site's processes into several subsets that each cross the wide-area link). The explicit
 * guard (`guard: true`) builds both and keeps the one evaluate predicts faster.
 *
 * Cost for a fixed root: per subset of n processes, O(n log n) to sort, O(k·n log n) for the
 * balanced cut (dynamic program with monotone split points, divide and conquer), O(n) for
 * the representatives; O(p log² p) in all for balanced recursions (O(p²·log p) worst case),
 * plus O(p·h) for the child order (one evaluation per level, h the height). Root omitted:
 * every root is tried, the fastest wins (ties to the lowest rank).
 */
import { InvalidArgumentError, TooLargeError, VcollError } from '../errors.js';
import { linearModel, type CostModel } from '../model/cost-model.js';
import { ceilLog2 } from '../util/ceil-log.js';
import { evaluate, type Operation } from './evaluate.js';
import { prepareProblem } from './linear.js';
import { linkTime, readFlag, readOperation } from './model-binomial.js';
import { TreeBuilder, depths, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

/** 'model': the model's per-pair predictions (Dichev10); 'oblivious': Träff's original, identical links. */
export type TraffPredictor = 'model' | 'oblivious';

export interface TraffOptions extends RootOption {
  /** The operation the tree is built (and timed) for (default 'gather'). */
  readonly op?: Operation;
  /** Default 'model'. */
  readonly predictor?: TraffPredictor;
  /**
   * With the model predictor: also build the original (oblivious) Träff tree and keep it
   * when evaluate predicts it faster (default false). Ties keep the model-based tree.
   */
  readonly guard?: boolean;
}

/** Message size used to read β off a model's comm (comm(i, j, L) − comm(i, j, 1) = β(L − 1)). */
const PROBE_UNITS = 2 ** 20;

/**
 * The homogeneous model with the mean α, β and γ of `model` (over all ordered pairs i ≠ j and
 * all ranks; the model itself when it is homogeneous). Reads α and β off comm(i, j, 1) and
 * comm(i, j, 2²⁰), so it assumes comm is affine in the size (Hockney), as every model here is.
 * O(p²).
 */
export function homogeneousPredictor(model: CostModel, p: number): CostModel {
  const opts = { ports: model.ports, copyAll: model.copyAll };
  if (model.linear !== undefined) return linearModel({ ...model.linear, ...opts });
  let alpha = 0;
  let beta = 0;
  let gamma = 0;
  for (let i = 0; i < p; i++) {
    gamma += model.copy(i, 1);
    for (let j = 0; j < p; j++) {
      if (i === j) continue;
      const one = model.comm(i, j, 1);
      const b = (model.comm(i, j, PROBE_UNITS) - one) / (PROBE_UNITS - 1);
      beta += b;
      alpha += one - b;
    }
  }
  const pairs = p * (p - 1);
  return linearModel({
    alpha: pairs > 0 ? Math.max(0, alpha / pairs) : 0,
    beta: pairs > 0 ? Math.max(0, beta / pairs) : 0,
    gamma: Math.max(0, gamma / p),
    ...opts,
  });
}

/**
 * Cuts `costs` (in list order) into k contiguous non-empty parts whose sums are closest to the
 * binomial shares of their total C: part j (1-based) aims at 2^(j−1)/(2^k − 1)·C, so the parts'
 * targets double as in a binomial tree (equal costs and k = log₂(n + 1): exactly 1, 2, 4, …
 * costs). "Closest" is the least Σ_j (part sum_j − target_j)²; returns the exclusive end index
 * of each part (the last is costs.length). Costs must be finite and non-negative; they are
 * scaled by their maximum first (no overflow). The part cost is a convex function of the part
 * sum, so the split points are monotone (quadrangle inequality) and each of the k − 1 layers
 * of the dynamic program takes O(n log n) by divide and conquer; ties go to the earlier split.
 */
export function balancedPartition(costs: ArrayLike<number>, k: number): Int32Array {
  const n = costs.length;
  if (!Number.isInteger(k) || k < 1 || k > n) throw new VcollError('INTERNAL', `cannot cut ${n} costs into ${k} non-empty parts`);
  let max = 0;
  for (let i = 0; i < n; i++) if (costs[i] > max) max = costs[i];
  const scale = max > 0 ? max : 1;
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i] + costs[i] / scale;
  const unit = prefix[n] / (2 ** k - 1);
  const target = (j: number): number => 2 ** (j - 1) * unit;
  let prev = new Float64Array(n + 1).fill(Infinity); // best for the first i costs in j parts
  for (let i = 1; i <= n; i++) prev[i] = (prefix[i] - target(1)) ** 2;
  const splits: Int32Array[] = [];
  for (let j = 2; j <= k; j++) {
    const cur = new Float64Array(n + 1).fill(Infinity);
    const arg = new Int32Array(n + 1).fill(-1);
    const last = prev;
    const t = target(j);
    const solve = (lo: number, hi: number, sLo: number, sHi: number): void => {
      const mid = (lo + hi) >> 1;
      let bestS = -1;
      let bestV = Infinity;
      for (let s = Math.max(sLo, j - 1); s <= Math.min(sHi, mid - 1); s++) {
        const d = prefix[mid] - prefix[s] - t;
        const v = last[s] + d * d;
        if (v < bestV) {
          bestV = v;
          bestS = s;
        }
      }
      cur[mid] = bestV;
      arg[mid] = bestS;
      if (lo < mid) solve(lo, mid - 1, sLo, bestS);
      if (mid < hi) solve(mid + 1, hi, bestS, sHi);
    };
    solve(j, n, j - 1, n - 1);
    splits.push(arg);
    prev = cur;
  }
  const ends = new Int32Array(k);
  ends[k - 1] = n;
  let i = n;
  for (let j = k; j >= 2; j--) {
    i = splits[j - 2][i];
    ends[j - 2] = i;
  }
  return ends;
}

function readPredictor(predictor: unknown): TraffPredictor {
  if (predictor === undefined) return 'model';
  if (predictor !== 'model' && predictor !== 'oblivious') {
    throw new InvalidArgumentError('predictor', `must be 'model' or 'oblivious', got ${String(predictor)}`);
  }
  return predictor;
}

/**
 * The (model-based) Träff tree with root r built with `predictor` (the model itself or its
 * homogeneous mean, see homogeneousPredictor); `m` already validated.
 */
export function traffTreeFor(m: ArrayLike<number>, predictor: CostModel, r: number, op: Operation): Tree {
  const p = m.length;
  const kids: number[][] = Array.from({ length: p }, () => []);
  const parent = new Int32Array(p).fill(-1);
  const work: { parent: number; members: number[] }[] = [{ parent: r, members: Array.from({ length: p - 1 }, (_, i) => (i < r ? i : i + 1)) }];
  while (work.length > 0) {
    const { parent: j, members } = work.pop() as { parent: number; members: number[] };
    const n = members.length;
    if (n === 0) continue;
    const key = new Map<number, number>();
    for (const i of members) key.set(i, linkTime(predictor, op, j, i, m[i]));
    const sorted = [...members].sort((a, b) => (key.get(b) as number) - (key.get(a) as number) || a - b);
    const ends = balancedPartition(
      sorted.map((i) => key.get(i) as number),
      ceilLog2(n + 1),
    );
    let start = 0;
    for (const end of ends) {
      const subset = sorted.slice(start, end);
      start = end;
      let total = 0;
      for (const i of subset) total += m[i];
      let rep = subset[0];
      let repTime = linkTime(predictor, op, j, rep, total);
      for (const i of subset) {
        const t = linkTime(predictor, op, j, i, total);
        if (t < repTime || (t === repTime && (m[i] > m[rep] || (m[i] === m[rep] && i < rep)))) {
          rep = i;
          repTime = t;
        }
      }
      kids[j].push(rep);
      parent[rep] = j;
      work.push({ parent: rep, members: subset.filter((i) => i !== rep) });
    }
  }
  orderByReadyTime(kids, parent, r, m, predictor, op);
  const b = new TreeBuilder(p, r);
  for (let v = 0; v < p; v++) {
    for (const c of kids[v]) b.addChild(v, c);
    b.setCopyAt(v, 0);
  }
  return b.build();
}

/**
 * Sorts every node's children by the predicted completion time of their subtrees, earliest
 * first (stable), level by level from the deepest so each level sees its children's final
 * times. O(p·h).
 */
function orderByReadyTime(kids: number[][], parent: Int32Array, r: number, m: ArrayLike<number>, predictor: CostModel, op: Operation): void {
  const p = kids.length;
  const tree: Tree = { p, root: r, parent, children: kids, copyAt: new Int32Array(p) };
  const depth = depths(tree);
  let height = 0;
  for (const d of depth) if (d > height) height = d;
  for (let level = height - 1; level >= 0; level--) {
    const done = evaluate(tree, m, predictor, op).completion;
    for (let v = 0; v < p; v++) {
      if (depth[v] === level && kids[v].length > 1) kids[v].sort((a, b) => done[a] - done[b]);
    }
  }
}

/**
 * Largest p for which the root is chosen by trying every root (root omitted): one tree and
 * its level-by-level ordering per root, about 1.5 s CPU at p = 400 under a per-pair model and
 * 8.7 s at p = 1024 under a homogeneous one, growing as p²; with a fixed root any p.
 */
export const TRAFF_ROOT_SEARCH_MAX_P = 512;

/**
 * Träff's irregular gather/scatter tree: model-based (Dichev10 §2, default) or the original
 * with identical links (`predictor: 'oblivious'`), for a gather or a scatter (`op`).
 * `opts.root` given: that root; omitted: the fastest root (ties to the lowest rank).
 */
export function traffTree(sizes: ArrayLike<number>, model: CostModel, opts?: TraffOptions): BuiltTree {
  const { m, p, root } = prepareProblem(sizes, model, opts);
  const op = readOperation(opts?.op);
  const kind = readPredictor(opts?.predictor);
  const guard = readFlag('guard', opts?.guard);
  const predictors: CostModel[] = [];
  if (kind === 'model') predictors.push(model);
  if (kind === 'oblivious' || guard) predictors.push(homogeneousPredictor(model, p));
  if (root === undefined && p > TRAFF_ROOT_SEARCH_MAX_P) {
    throw new TooLargeError('p', `${p} > ${TRAFF_ROOT_SEARCH_MAX_P} to choose the best root by trying every root (O(p² log p)); pass a root`);
  }
  const roots = root !== undefined ? [root] : Array.from({ length: p }, (_, i) => i);
  let best: BuiltTree | undefined;
  for (const r of roots) {
    for (const predictor of predictors) {
      const tree = traffTreeFor(m, predictor, r, op);
      const time = evaluate(tree, m, model, op).time;
      if (best === undefined || time < best.time) best = { tree, time, root: r };
    }
  }
  return best as BuiltTree;
}
