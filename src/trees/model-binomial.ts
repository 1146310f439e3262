/**
 * Model-based binomial gather/scatter trees (Dichev10 §2, "Model-based binomial tree
 * scatterv/gatherv"): the shape of the binomial tree, with the processes mapped to its
 * nodes by the point-to-point prediction t(i, j, m) of a (heterogeneous) cost model.
 *
 * Shape: the rank-ordered binomial tree with root r (binomial.ts, `obliviousTreeFor(p, r)`),
 * taken as a tree of positions: the root's subtrees hold 1, 2, 4, … positions (the last
 * ones truncated when p is not a power of two), every node's children in receive order,
 * smallest subtree first. The root position holds r.
 *
 * Mapping: the positions are filled depth-first, starting with the lowest-order subtrees
 * (pre-order, children smallest subtree first). Each new position, whose parent position
 * already holds process j, takes from the free processes the process i with the minimal
 * (`mapping: 'min-first'`) or maximal (`'max-first'`) predicted t(j, i, m_i), m_i being
 * i's own block: model.comm(i, j, m_i) for a gather, model.comm(j, i, m_i) for a scatter.
 * Ties go to the lowest rank. Every node copies its own block first (copyAt 0: the copy
 * overlaps the wait for the first child; a scatter copies after its last send).
 * With identical links and blocks every prediction ties and the pre-order takes the free
 * ranks in increasing order: a relabelling of the rank-ordered binomial tree (the
 * model-oblivious original), with the same completion time when γ = 0; with γ > 0 the
 * copy-first convention can only help (the original copies at its rank-order position;
 * faster in 300 of 1188 tested cases, never slower).
 *
 * The seed's reading: max-first balances a parent's subtrees in their cost to it (good on
 * a single switch), min-first keeps processes close to each other in the same subtree
 * (good on a hierarchy of clusters).
 *
 * Neither mapping is always faster than the rank-ordered binomial tree (measured on the
 * seed's two platforms, docs/heterogeneous-trees.md): min-first loses on a single switch,
 * max-first on a cluster of clusters, and each loses for some roots even on its own platform
 * (max-first up to 5 % on the single switch, min-first up to 25 % on the cluster of clusters
 * with ranks in shuffled order). The explicit guard (`mapping: 'best'`: both mappings, and
 * `guard: true`: the rank-ordered binomial tree too) keeps the candidate evaluate predicts
 * fastest (ties to the model-based one, min-first before max-first), so it is never slower
 * than the original — at the price of 2–3 builds and evaluations.
 *
 * Cost: O(p²) model predictions for a fixed root; the returned time is
 * evaluate(tree, sizes, model, op) (O(p)). Root omitted: every root is tried, the fastest
 * wins, ties to the lowest rank; the preference orders do not depend on the root, so they
 * are sorted once (O(p² log p) time, p² Int32 memory under a per-pair model) and each root
 * fills its tree by advancing per-parent cursors: O(p²) model predictions in all instead of
 * the O(p³) of a scan per root (the cursors' steps are still O(p³) at worst under a per-pair
 * model; p is limited, MODEL_BINOMIAL_ROOT_SEARCH_MAX_P).
 */
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { obliviousTreeFor } from './binomial.js';
import { evaluate, type Operation } from './evaluate.js';
import { prepareProblem } from './linear.js';
import { TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

export type BinomialMapping = 'min-first' | 'max-first';

export interface ModelBinomialOptions extends RootOption {
  /**
   * Which free process a new tree node takes: the fastest ('min-first', default) or the
   * slowest ('max-first'); 'best': build both, keep the faster.
   */
  readonly mapping?: BinomialMapping | 'best';
  /** Also build the rank-ordered binomial tree and keep it when it is faster (default false). */
  readonly guard?: boolean;
  /** The operation the tree is built (and timed) for (default 'gather'). */
  readonly op?: Operation;
}

/** Predicted time of moving `units` between a child i and its parent j in operation `op`. */
export function linkTime(model: CostModel, op: Operation, parent: number, i: number, units: number): number {
  return op === 'gather' ? model.comm(i, parent, units) : model.comm(parent, i, units);
}

/** Validates an `op` option (default 'gather'). */
export function readOperation(op: unknown): Operation {
  if (op === undefined) return 'gather';
  if (op !== 'gather' && op !== 'scatter') throw new InvalidArgumentError('op', `must be 'gather' or 'scatter', got ${String(op)}`);
  return op;
}

function readMapping(mapping: unknown): BinomialMapping | 'best' {
  if (mapping === undefined) return 'min-first';
  if (mapping !== 'min-first' && mapping !== 'max-first' && mapping !== 'best') {
    throw new InvalidArgumentError('mapping', `must be 'min-first', 'max-first' or 'best', got ${String(mapping)}`);
  }
  return mapping;
}

/** Whether a flag option is a boolean (default false). */
export function readFlag(field: string, v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new InvalidArgumentError(field, `must be a boolean, got ${String(v)}`);
  return v;
}

/**
 * Largest p for which the root is chosen by trying every root (root omitted), with a fixed
 * root any p. Homogeneous model: one shared preference order, O(p²) in all (about 4 s CPU at
 * p = 2048 with 'best' and the guard). Per-pair model: each root's fill advances one cursor per
 * parent past the processes already taken, O(p²) per root at worst when the orders agree
 * (costs dominated by the blocks), so O(p³) in all: about 1.8 s CPU at p = 1000, 12 s at 2000.
 */
export const MODEL_BINOMIAL_ROOT_SEARCH_MAX_P = 2048;
/** The same for a non-homogeneous (per-pair, hierarchical) model. */
export const MODEL_BINOMIAL_PAIRWISE_ROOT_SEARCH_MAX_P = 1024;

/** The root-search limit of `model` (see MODEL_BINOMIAL_ROOT_SEARCH_MAX_P). */
export function modelBinomialRootSearchLimit(model: CostModel): number {
  return model.linear !== undefined ? MODEL_BINOMIAL_ROOT_SEARCH_MAX_P : MODEL_BINOMIAL_PAIRWISE_ROOT_SEARCH_MAX_P;
}

/** The model-based binomial tree with root r (see the module comment); `m` already validated. */
export function modelBinomialTreeFor(m: ArrayLike<number>, model: CostModel, r: number, mapping: BinomialMapping, op: Operation): Tree {
  return fill(obliviousTreeFor(m.length, r), new Preferences(m, model, mapping, op, false), r);
}

/** Above this p the per-parent orders (p² Int32: 64 MB at 4096) are not stored; the fill scans. */
const MAX_ORDERED_P = 4096;

/**
 * The mapping's preference of every parent j: the processes i by increasing key
 * sign·t(j, i, m_i), ties to the lowest rank, so that "the first free process in j's order"
 * is exactly the process the scan of the module comment picks. The keys do not depend on the
 * root, so one Preferences serves every root. Homogeneous models share one order (the key
 * does not depend on j); per-pair models store one order per parent (O(p² log p) once) when
 * many roots are tried, and scan the free processes (O(p) per position) for a single root
 * or above MAX_ORDERED_P.
 */
class Preferences {
  readonly p: number;
  /** Row j (or the single shared row) of the orders; undefined: scan. */
  readonly order: Int32Array | undefined;
  readonly shared: boolean;

  readonly sign: number;

  constructor(
    readonly m: ArrayLike<number>,
    readonly model: CostModel,
    mapping: BinomialMapping,
    readonly op: Operation,
    manyRoots: boolean,
  ) {
    const p = m.length;
    this.p = p;
    this.sign = mapping === 'min-first' ? 1 : -1;
    this.shared = model.linear !== undefined;
    const rows = this.shared ? 1 : p;
    if (!this.shared && (!manyRoots || p > MAX_ORDERED_P)) {
      this.order = undefined;
      return;
    }
    const order = new Int32Array(rows * p);
    const keys = new Float64Array(p);
    const idx = Array.from({ length: p }, (_, i) => i);
    const byKey = (a: number, b: number): number => keys[a] - keys[b] || a - b;
    for (let j = 0; j < rows; j++) {
      if (this.shared) {
        // every pair costs the same: the key of i towards any other rank
        for (let i = 0; i < p; i++) keys[i] = this.key(i === 0 ? p - 1 : 0, i);
      } else {
        // a parent is never free itself: its own entry goes last
        for (let i = 0; i < p; i++) keys[i] = i === j ? Infinity : this.key(j, i);
      }
      for (let i = 0; i < p; i++) idx[i] = i;
      idx.sort(byKey);
      order.set(idx, j * p);
    }
    this.order = order;
  }

  key(j: number, i: number): number {
    return this.sign * linkTime(this.model, this.op, j, i, this.m[i]);
  }
}

/** Pre-order fill of the positions of `shape` (see the module comment). */
function fill(shape: Tree, prefs: Preferences, r: number): Tree {
  const p = shape.p;
  const processAt = new Int32Array(p).fill(-1);
  processAt[r] = r;
  const free = new Uint8Array(p).fill(1);
  free[r] = 0;
  const order: number[] = []; // positions in pre-order
  const stack = [r];
  while (stack.length > 0) {
    const pos = stack.pop() as number;
    order.push(pos);
    const kids = shape.children[pos];
    for (let c = kids.length - 1; c >= 0; c--) stack.push(kids[c]);
  }
  const pref = prefs.order;
  // next[j]: how far parent j's order is known to hold no free process (free only shrinks)
  const next = new Int32Array(prefs.shared ? 1 : p);
  for (const pos of order) {
    if (pos === r) continue;
    const j = processAt[shape.parent[pos]];
    let best = -1;
    if (pref !== undefined) {
      const row = prefs.shared ? 0 : j;
      let q = next[row];
      while (!free[pref[row * p + q]]) q++;
      next[row] = q;
      best = pref[row * p + q];
    } else {
      let bestKey = Infinity;
      for (let i = 0; i < p; i++) {
        if (!free[i]) continue;
        const key = prefs.key(j, i);
        if (best < 0 || key < bestKey) {
          bestKey = key;
          best = i;
        }
      }
    }
    processAt[pos] = best;
    free[best] = 0;
  }
  const b = new TreeBuilder(p, r);
  for (const pos of order) {
    const j = processAt[pos];
    for (const c of shape.children[pos]) b.addChild(j, processAt[c]);
    b.setCopyAt(j, 0);
  }
  return b.build();
}

/**
 * Model-based binomial tree (Dichev10 §2) for blocks `sizes` under `model`: min-first or
 * max-first mapping (or the faster of both, and of the rank-ordered tree with `guard`), for
 * a gather or a scatter. `opts.root` given: that root; omitted: the fastest root (ties to
 * the lowest rank).
 */
export function modelBinomialTree(sizes: ArrayLike<number>, model: CostModel, opts?: ModelBinomialOptions): BuiltTree {
  const { m, p, root } = prepareProblem(sizes, model, opts);
  const mapping = readMapping(opts?.mapping);
  const guard = readFlag('guard', opts?.guard);
  const op = readOperation(opts?.op);
  const mappings: BinomialMapping[] = mapping === 'best' ? ['min-first', 'max-first'] : [mapping];
  const searchLimit = modelBinomialRootSearchLimit(model);
  if (root === undefined && p > searchLimit) {
    throw new TooLargeError('p', `${p} > ${searchLimit} to choose the best root by trying every root; pass a root`);
  }
  const roots = root !== undefined ? [root] : Array.from({ length: p }, (_, i) => i);
  const prefs = mappings.map((x) => new Preferences(m, model, x, op, roots.length > 1));
  let best: BuiltTree | undefined;
  for (const r of roots) {
    const trees = prefs.map((x) => fill(obliviousTreeFor(p, r), x, r));
    if (guard) trees.push(obliviousTreeFor(p, r, model.copyAll));
    for (const tree of trees) {
      const time = evaluate(tree, m, model, op).time;
      if (best === undefined || time < best.time) best = { tree, time, root: r };
    }
  }
  return best as BuiltTree;
}
