/**
 * Two-block-size gather/scatter trees (Traff17 §5.2, Lemma 2, TWO_Gatherv/TWO_Scatterv).
 *
 * For problems with at most two distinct block sizes s < l, the ranks split into the domain
 * of small blocks and the domain of large blocks. Each domain runs a regular gather: a
 * binomial tree over the domain's ranks in rank order (the adaptive construction over the
 * domain's virtual ranks, which for equal blocks is a plain binomial tree and still adapts
 * to per-pair costs), and the two domain roots are joined by one point-to-point transfer of
 * the whole other domain's data. As a Tree: both domain trees mapped to real ranks, plus the
 * edge (final root ← other domain's root). The tree is non-ordered in general (a domain's
 * ranks are not consecutive): the root receives the other domain's blocks as one segment
 * and places them by displacement.
 *
 * What the root does: it gathers its own domain's binomial tree, copies its own block as
 * that tree prescribes (first, overlapping the wait, when its domain is only itself), and
 * receives the other domain's data in one message, at the position in its receive sequence
 * that completes earliest (exact evaluation, ties to the latest position; for Lemma 2's
 * regime that is its only receive). Free root: both choices of the receiving domain are
 * evaluated, ties to the large-block domain. Fixed root r: (a) r's domain gathers to r and
 * the other domain to its own best root, which then sends to r; or (b) r joins the other
 * domain's gather as its root (that gather is then over the other domain plus r) and the
 * rest of r's own domain gathers to its best root and sends to r. (b) matters when r holds a
 * small block: (a) would ship the whole large-block data once more at the end. The faster
 * of (a) and (b) is kept, ties to (a).
 *
 * Lemma 2 (formulas lost in extraction; restated and derived): one block of size l at rank j,
 * all p − 1 others s < l, homogeneous α, β, γ with γ ≤ β. Let T_s be the completion time of
 * the binomial gather over the p − 1 small blocks (by Proposition 1 at most
 * ⌈log₂(p−1)⌉α + β(p−2)s + γs). If γ·l ≥ T_s, this tree costs exactly
 *     γ·l + α + β(p−1)s,
 * which is optimal over all (non-ordered) trees: rooted at j, the root must copy γ·l and
 * receive (p−1)s elements in at least one message; rooted elsewhere, it must receive l,
 * costing at least α + β(l + (p−2)s) + γs ≥ γl + α + β(p−1)s because (β−γ)(l−s) ≥ 0. The
 * adaptive binomial tree pays ⌈log₂p⌉ messages at the root instead of one
 * (γl + ⌈log₂p⌉α + β(p−1)s in that regime), and an ordered tree can use a single message
 * only when j = 0 or j = p − 1.
 *
 * Cost: the two domain constructions (adaptive, O(p·k²)) plus, per candidate (two), one tree
 * build and one exact evaluation O(p·k), the root's step alone for each other insertion
 * position of the transfer (≤ ⌈log₂p⌉ + 1 of them, O(k·log p) each) and a second build when
 * one of them wins: O(p) time and space (per-position builds and evaluations made it
 * O(p log p) before, and most of a 2^16-rank simulated run's planning).
 */
import { InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree } from './adaptive.js';
import { evaluate, PortClock } from './evaluate.js';
import { prepareProblem } from './linear.js';
import { mapTree, permutedModel } from './non-ordered.js';
import { TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

export interface TwoBlockDomains {
  /** The small block size s (equal to `large` when all blocks are equal). */
  readonly small: number;
  readonly large: number;
  /** Ranks with block s, increasing. */
  readonly smallRanks: readonly number[];
  /** Ranks with block l, increasing (empty when all blocks are equal). */
  readonly largeRanks: readonly number[];
}

/** Splits the ranks by block size; throws InvalidArgumentError('sizes') beyond two sizes. */
export function twoBlockDomains(sizes: ArrayLike<number>): TwoBlockDomains {
  const values = [...new Set(Array.from(sizes))].sort((x, y) => x - y);
  if (values.length > 2) {
    throw new InvalidArgumentError('sizes', `must have at most two distinct block sizes for a two-block tree, got ${values.length} (${values.slice(0, 4).join(', ')}${values.length > 4 ? ', …' : ''})`);
  }
  const small = values[0];
  const large = values[values.length - 1];
  const smallRanks: number[] = [];
  const largeRanks: number[] = [];
  for (let i = 0; i < sizes.length; i++) (sizes[i] === small ? smallRanks : largeRanks).push(i);
  return { small, large, smallRanks, largeRanks };
}

interface DomainTree {
  readonly ranks: readonly number[];
  readonly tree: Tree; // over virtual ranks 0..n−1
}

function domainTree(m: Float64Array, model: CostModel, ranks: readonly number[], root: number | undefined): DomainTree {
  const vsizes = ranks.map((i) => m[i]);
  const vroot = root === undefined ? undefined : ranks.indexOf(root);
  const built = adaptiveBinomialTree(vsizes, permutedModel(model, ranks), vroot === undefined ? {} : { root: vroot });
  return { ranks, tree: built.tree };
}

/**
 * Joins `main` (holding the final root) and `other`: the root of `other` sends its whole
 * domain to the root of `main`, inserted at each possible position of the root's receive
 * sequence; the fastest is kept (ties to the latest position).
 *
 * Only the root's step depends on the position: every subtree below it (the other domain's
 * included) completes at the same time whatever the root's order. So the joined tree is built
 * and evaluated once (transfer last); each other position costs the root's step of the
 * recurrence alone (`rootGatherTime`: runTimeline's arithmetic, so the times are exactly
 * evaluate's), O(k) for k root children; the tree is built a second time only when another
 * position wins. O(p) in all (instead of a build and an evaluation per position).
 */
function join(p: number, m: Float64Array, model: CostModel, main: DomainTree, other: DomainTree): BuiltTree {
  const R = main.ranks[main.tree.root];
  const o = other.ranks[other.tree.root];
  const vroot = main.tree.root;
  const kids = main.tree.children[vroot];
  const copyAt = main.tree.copyAt[vroot];
  const build = (q: number): Tree => {
    JOIN_WORK.builds++;
    const b = new TreeBuilder(p, R);
    for (let v = 0; v < main.tree.p; v++) {
      if (v === vroot) continue;
      for (const c of main.tree.children[v]) b.addChild(main.ranks[v], main.ranks[c]);
      b.setCopyAt(main.ranks[v], main.tree.copyAt[v]);
    }
    for (let i = 0; i <= kids.length; i++) {
      if (i === q) b.addChild(R, o);
      if (i < kids.length) b.addChild(R, main.ranks[kids[i]]);
    }
    b.setCopyAt(R, copyAt + (q < copyAt ? 1 : 0));
    mapTree(other.tree, other.ranks, p, b);
    return b.build();
  };
  const last = build(kids.length);
  JOIN_WORK.evaluations++;
  const ev = evaluate(last, m, model, 'gather');
  let bestQ = kids.length;
  let bestTime = ev.time;
  const order = new Array<number>(kids.length + 1);
  for (let q = kids.length - 1; q >= 0; q--) {
    for (let i = 0, j = 0; i <= kids.length; i++) order[i] = i === q ? o : main.ranks[kids[j++]];
    const time = rootGatherTime(model, R, m[R], order, copyAt + (q < copyAt ? 1 : 0), ev.completion, ev.subtreeSize);
    if (time < bestTime) {
      bestTime = time;
      bestQ = q;
    }
  }
  const tree = bestQ === kids.length ? last : build(bestQ);
  return { tree, time: bestTime, root: R };
}

/**
 * The gather completion time of root `v` (block `mv`) receiving from `kids` in that order, its
 * copy after `at` of them, the children's subtrees completing at C[c] with S[c] elements: the
 * root's step of runTimeline (timeline.ts), operation for operation, so the result is exactly
 * what evaluate gives for a tree with that root step.
 */
function rootGatherTime(model: CostModel, v: number, mv: number, kids: readonly number[], at: number, C: Float64Array, S: Float64Array): number {
  const copyCost = model.copy(v, mv); // the root always copies its block
  if (model.ports === 1) {
    let t = 0;
    for (let j = 0; j < kids.length; j++) {
      if (j === at) t += copyCost;
      const c = kids[j];
      const start = Math.max(t, C[c]);
      t = start + model.comm(c, v, S[c]);
    }
    if (at === kids.length) t += copyCost;
    return t;
  }
  const ports = new PortClock(model.ports);
  let end = 0;
  for (let j = 0; j < kids.length; j++) {
    if (j === at) end = Math.max(end, ports.run(0, copyCost));
    const c = kids[j];
    end = Math.max(end, ports.run(C[c], model.comm(c, v, S[c])));
  }
  if (at === kids.length) end = Math.max(end, ports.run(0, copyCost));
  return end;
}

/** Work counters of `join` (tests: one or two tree builds and one evaluation per join, whatever p). */
export const JOIN_WORK = { builds: 0, evaluations: 0 };

/**
 * Two concurrent regular (binomial) gathers over the small-block and large-block domains
 * and one transfer between their roots (Traff17 Lemma 2, TWO_Gatherv). Throws
 * InvalidArgumentError('sizes') when the blocks have more than two distinct sizes.
 */
export function twoBlockTree(sizes: ArrayLike<number>, model: CostModel, opts?: RootOption): BuiltTree {
  const { m, p, root } = prepareProblem(sizes, model, opts);
  const d = twoBlockDomains(m);
  if (d.largeRanks.length === 0) return adaptiveBinomialTree(m, model, root === undefined ? {} : { root });
  if (root !== undefined) {
    const mine = m[root] === d.small ? d.smallRanks : d.largeRanks;
    const others = m[root] === d.small ? d.largeRanks : d.smallRanks;
    // (a) r gathers its own domain and receives the other domain's data.
    const a = join(p, m, model, domainTree(m, model, mine, root), domainTree(m, model, others, undefined));
    if (mine.length === 1) return a;
    // (b) r roots the other domain's gather (r added to it) and receives the rest of its own domain.
    const withRoot = [...others, root].sort((x, y) => x - y);
    const rest = mine.filter((i) => i !== root);
    const b = join(p, m, model, domainTree(m, model, withRoot, root), domainTree(m, model, rest, undefined));
    return b.time < a.time ? b : a;
  }
  const large = domainTree(m, model, d.largeRanks, undefined);
  const small = domainTree(m, model, d.smallRanks, undefined);
  const a = join(p, m, model, large, small);
  const b = join(p, m, model, small, large);
  return b.time < a.time ? b : a;
}
