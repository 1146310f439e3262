/**
 * Non-ordered gather/scatter trees (Traff17 §4, §5.1).
 *
 * (a) `decreasingRerankTree`: the heuristic of Traff17's reference [19] discussed in §5.1:
 *     virtually re-rank the processors so that the blocks are in decreasing order of size
 *     (a fixed root first, then the others by decreasing size, ties by rank), build a tree over
 *     the virtual ranks (adaptive binomial by default, or any builder passed in, e.g. the
 *     optimal ordered DP), and map it back to the real ranks. The result is a non-ordered
 *     tree: blocks arrive at the root in virtual order and must be permuted. Cost: O(p log p)
 *     plus the builder's cost.
 * (b) `exactNonOrderedOptimal`: the exact optimal non-ordered tree, one-ported, by dynamic
 *     programming over subsets and roots (Traff17 Proposition 2): for a set V and root r ∈ V
 *     the last subtree B (root r' ∈ B) is received after the rest A = V∖B (root r):
 *       C(V, r) = min_{B ⊆ V∖{r}, B ≠ ∅, r' ∈ B} max(C(A, r), C(B, r')) + comm(r' → r, S(B)),
 *     where C(A, r) for A = {r} is the root's copy γ·m_r, overlapped with B's completion
 *     (Proposition 2: the copy is best done first). C({v}, v) = 0 (γ·m_v under copyAll).
 *     Time O(p²·3^p) (Σ over r, B, A and r'), space O(p·2^p): limited to p ≤ 10
 *     (TooLargeError above). Works for any one-ported cost model (per-pair costs included).
 */
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree } from './adaptive.js';
import { prepareProblem } from './linear.js';
import { TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

/** A tree builder over (virtual) ranks, e.g. adaptiveBinomialTree or optimalTree. */
export type TreeBuildFn = (sizes: ArrayLike<number>, model: CostModel, opts: RootOption) => BuiltTree;

/** Largest p the exact non-ordered DP accepts. */
export const EXACT_NON_ORDERED_MAX_P = 10;

/**
 * The model seen through a renumbering: virtual rank v is real rank ranks[v]. Every cost
 * is the real model's cost between the real ranks, so a virtual tree mapped back with
 * `mapTree` has the same completion time under the real model.
 */
export function permutedModel(model: CostModel, ranks: ArrayLike<number>): CostModel {
  const map = Int32Array.from(ranks as ArrayLike<number>);
  const n = map.length;
  return Object.freeze({
    kind: model.kind,
    ports: model.ports,
    copyAll: model.copyAll,
    size: model.size === undefined ? undefined : n,
    linear: model.linear,
    bounds: model.bounds,
    comm: (from: number, to: number, units: number) => (units > 0 ? model.comm(map[from], map[to], units) : 0),
    copy: (rank: number, units: number) => model.copy(map[rank], units),
  });
}

/**
 * Maps a tree over virtual ranks back to real ranks (virtual v = real ranks[v]) inside a
 * builder over p real ranks; children order and copy positions are kept. With a builder
 * given, the virtual tree's nodes are added to it (a sub-tree of a larger tree).
 */
export function mapTree(virtual: Tree, ranks: ArrayLike<number>, p: number, into?: TreeBuilder): TreeBuilder {
  const b = into ?? new TreeBuilder(p, ranks[virtual.root]);
  for (let v = 0; v < virtual.p; v++) {
    for (const c of virtual.children[v]) b.addChild(ranks[v], ranks[c]);
    b.setCopyAt(ranks[v], virtual.copyAt[v]);
  }
  return b;
}

/**
 * Traff17 §5.1 / [19]: build over ranks re-numbered by decreasing block size, map back.
 * `opts.root` given: it becomes virtual rank 0 and the builder is asked for a tree rooted
 * there; omitted: all ranks by decreasing size, the builder chooses the root.
 */
export function decreasingRerankTree(
  sizes: ArrayLike<number>,
  model: CostModel,
  opts?: RootOption & { readonly builder?: TreeBuildFn },
): BuiltTree {
  const { m, p, root } = prepareProblem(sizes, model, opts);
  const build = opts?.builder ?? adaptiveBinomialTree;
  if (typeof build !== 'function') throw new InvalidArgumentError('builder', 'must be a tree builder function');
  const rest = Array.from({ length: p }, (_, i) => i).filter((i) => i !== root);
  rest.sort((x, y) => m[y] - m[x] || x - y);
  const order = root === undefined ? rest : [root, ...rest];
  const vsizes = order.map((i) => m[i]);
  const built = build(vsizes, permutedModel(model, order), root === undefined ? {} : { root: 0 });
  if (root !== undefined && built.tree.root !== 0) {
    throw new InvalidArgumentError('builder', `returned a tree rooted at virtual rank ${built.tree.root}, asked for 0`);
  }
  const tree = mapTree(built.tree, order, p).build();
  return { tree, time: built.time, root: tree.root };
}

/**
 * Exact optimal non-ordered gather/scatter tree for p ≤ 10 (Traff17 Proposition 2),
 * one-ported. `opts.root` given: the best tree with that root; omitted: the best root,
 * ties to the lowest rank. Every non-leaf copies its block first (copyAt 0).
 */
export function exactNonOrderedOptimal(sizes: ArrayLike<number>, model: CostModel, opts?: RootOption): BuiltTree {
  const { m, p, root } = prepareProblem(sizes, model, opts);
  if (p > EXACT_NON_ORDERED_MAX_P) {
    throw new TooLargeError('p', `the exact non-ordered search is limited to p <= ${EXACT_NON_ORDERED_MAX_P}, got ${p}`);
  }
  if (model.ports !== 1) throw new InvalidArgumentError('model.ports', `the exact non-ordered search is one-ported (Proposition 2), got ${model.ports}`);
  const N = 1 << p;
  const S = new Float64Array(N);
  for (let V = 1; V < N; V++) {
    const low = 31 - Math.clz32(V & -V);
    S[V] = S[V & (V - 1)] + m[low];
  }
  const copy = Float64Array.from({ length: p }, (_, v) => model.copy(v, m[v]));
  const C = new Float64Array(N * p).fill(Infinity);
  const chosenB = new Int32Array(N * p);
  const chosenR = new Int8Array(N * p);
  for (let v = 0; v < p; v++) C[(1 << v) * p + v] = model.copyAll ? copy[v] : 0;
  for (let V = 1; V < N; V++) {
    if ((V & (V - 1)) === 0) continue;
    for (let r = 0; r < p; r++) {
      const rb = 1 << r;
      if ((V & rb) === 0) continue;
      const rest = V ^ rb;
      let best = Infinity;
      let bestB = 0;
      let bestR = 0;
      for (let B = rest; B > 0; B = (B - 1) & rest) {
        const A = V ^ B;
        const ca = A === rb ? copy[r] : C[A * p + r];
        if (ca >= best) continue;
        const sb = S[B];
        for (let x = B; x > 0; x &= x - 1) {
          const r2 = 31 - Math.clz32(x & -x);
          const t = Math.max(ca, C[B * p + r2]) + model.comm(r2, r, sb);
          if (t < best) {
            best = t;
            bestB = B;
            bestR = r2;
          }
        }
      }
      C[V * p + r] = best;
      chosenB[V * p + r] = bestB;
      chosenR[V * p + r] = bestR;
    }
  }
  const full = N - 1;
  let r0 = root ?? 0;
  if (root === undefined) for (let r = 1; r < p; r++) if (C[full * p + r] < C[full * p + r0]) r0 = r;
  const b = new TreeBuilder(p, r0);
  // Children of r over V: those of (V∖B, r) first, then r' (received last).
  const expand = (V: number, r: number): void => {
    if (V === 1 << r) return;
    const B = chosenB[V * p + r];
    const r2 = chosenR[V * p + r];
    expand(V ^ B, r);
    b.addChild(r, r2);
    expand(B, r2);
  };
  expand(full, r0);
  for (let v = 0; v < p; v++) b.setCopyAt(v, 0);
  return { tree: b.build(), time: p === 1 ? copy[0] : C[full * p + r0], root: r0 }; // p = 1: the root's copy
}
