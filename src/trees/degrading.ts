/**
 * Degrading adaptive gather/scatter tree, built centrally: Traff18's adaptive binomial tree
 * (§2, Lemma 2, fixed root) in which late subtrees send their pieces straight to the root —
 * the "graceful degradation" Traff18 §3 names and leaves undone ("a gather subtree threshold
 * beyond which a subtree in the gather tree shall send its data directly to the root").
 * This is the model-level reference of the rule; a distributed construction must build the
 * same tree.
 *
 * Rule ("open late partners"): the construction's rounds as in adaptiveBinomialTree (the
 * receiver of a free join is the one whose join completes first, ties to the upper range),
 * except that an empty range joins the root directly (no message, no copy forced on a
 * receiver). At the round-k join of the root's range with a partner range P (gather root g,
 * completion C_g, data S, κ children), the root's deadline is D = max(C_r, B_r), where C_r is
 * the root's construction time and B_r = γ·m_r + Σ (α + β·S) over the pieces it already
 * takes. If C_g − D > α·κ — the root would wait for g longer than the κ extra start-ups
 * opening costs — g *opens*: it sends only its own block to the root and hands each child c
 * (in the order of their completion times C_c) a deadline t; the child opens by the same
 * test against t, recursively, else its whole subtree goes to the root as one piece. The
 * deadlines advance as t += α·(κ_c + [m_c > 0]) + β·S_c for a child predicted to open, else
 * t = max(t, C_c) + α + β·S_c. Each opening is decided from constant-size summaries
 * (S, C, κ, own block) that the construction's rounds already carry, plus the deadline.
 * The root copies its block first and receives its children in the order they are ready
 * (earliest first: what MPI_ANY_SOURCE gives in the model).
 *
 * Every rank keeps exactly one parent: its construction parent, or the root (opened parents
 * and empty ranges); every piece is a contiguous range of ranks. Cost in the model: the
 * construction's ⌈log₂ p⌉ rounds, one more word per exchange (κ, the deadline), and a
 * top-down pass of at most ⌈log₂ p⌉ constant-size steps inside opened partners only.
 * Measured with `evaluate` (test/degrading.test.ts, docs/algorithms.md): never slower than
 * min(adaptive, linear) on the cases tried — an observation, not a theorem.
 *
 * One-ported linear (homogeneous) models without copyAll; O(p log p) time.
 */
import { InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree } from './adaptive.js';
import { evaluate } from './evaluate.js';
import { prepareProblem } from './linear.js';
import { TreeBuilder, type Tree } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

/** What the construction did: the root's pieces, the ranks that opened, the redirections sent. */
export interface DegradingStats {
  /** Children of the root (whole subtrees and opened ranks' own blocks). */
  readonly rootChildren: number;
  /** Ranks that opened (sent only their own block to the root). */
  readonly opened: number;
  /** Children redirected to the root by an opening parent. */
  readonly redirects: number;
}

export interface DegradingTree extends BuiltTree {
  readonly stats: DegradingStats;
}

/**
 * The degrading adaptive tree (module comment). `opts.root` given: that root; omitted: the
 * root the free adaptive construction ends at (adaptiveBinomialTree's best root).
 */
export function degradingTree(sizes: ArrayLike<number>, model: CostModel, opts?: RootOption): DegradingTree {
  const { m, p, root: fixed } = prepareProblem(sizes, model, opts);
  const lin = model.linear;
  if (model.kind !== 'linear' || lin === undefined) throw new InvalidArgumentError('model', 'the degrading tree needs a linear (homogeneous) model');
  if (model.ports !== 1) throw new InvalidArgumentError('model', `the degrading tree is one-ported; got ${model.ports} ports`);
  if (model.copyAll) throw new InvalidArgumentError('model', 'the degrading tree does not support copyAll');
  const root = fixed ?? adaptiveBinomialTree(m, model).root;
  const { alpha, beta, gamma } = lin;
  const comm = (s: number): number => (s > 0 ? alpha + beta * s : 0);

  const C = new Float64Array(p); // completion time of v's range at v, while v is a range root
  const S = Float64Array.from(m); // data v sends up (its range's, or its own block once opened)
  const hasKids = new Uint8Array(p);
  const kids: number[][] = Array.from({ length: p }, () => []);
  const rootKids: number[] = [];
  let rootBusy = gamma * m[root]; // B_r
  let opened = 0;
  let redirects = 0;

  /** Completion time of `recv`'s range after receiving `send`'s (the ordered copy convention). */
  const joinTime = (recv: number, send: number): number => {
    if (hasKids[recv]) return Math.max(C[recv], C[send]) + comm(S[send]);
    return send > recv ? Math.max(gamma * m[recv], C[send]) + comm(S[send]) : C[send] + comm(S[send]) + gamma * m[recv];
  };
  const late = (v: number, deadline: number): boolean => kids[v].length > 0 && C[v] - deadline > alpha * kids[v].length;

  /** Opens v at `deadline` (late(v) holds): v's own block and its children's pieces go to the root. */
  const open = (v: number, deadline: number): void => {
    opened++;
    const children = kids[v].slice().sort((a, b) => C[a] - C[b] || a - b);
    redirects += children.length;
    kids[v] = [];
    S[v] = m[v];
    C[v] = 0;
    hasKids[v] = 0;
    rootKids.push(v);
    // each child's deadline and whether it opens, decided in one pass over the summaries
    let t = deadline + comm(m[v]);
    const opens: { readonly c: number; readonly at: number }[] = [];
    for (const c of children) {
      if (late(c, t)) {
        opens.push({ c, at: t });
        t += alpha * (kids[c].length + (m[c] > 0 ? 1 : 0)) + beta * S[c];
      } else {
        rootKids.push(c);
        t = Math.max(t, C[c]) + comm(S[c]);
      }
    }
    for (const o of opens) open(o.c, o.at);
  };

  let rootOf = Int32Array.from({ length: p }, (_, i) => i);
  for (let width = 1; width < p; width *= 2) {
    const n = rootOf.length;
    const next = new Int32Array(Math.ceil(n / 2));
    for (let g = 0; g < next.length; g++) {
      const a = 2 * g;
      if (a + 1 >= n) {
        next[g] = rootOf[a];
        continue;
      }
      const ra = rootOf[a];
      const rb = rootOf[a + 1];
      const lo = a * width;
      const hi = Math.min((a + 2) * width, p) - 1;
      if (root >= lo && root <= hi) {
        // the root's range takes its partner: whole (an empty one costs nothing), or opened
        const send = root < (a + 1) * width ? rb : ra;
        next[g] = root;
        const deadline = Math.max(C[root], rootBusy);
        if (S[send] > 0 && late(send, deadline)) {
          rootBusy += alpha * (kids[send].length + (m[send] > 0 ? 1 : 0)) + beta * S[send];
          open(send, deadline);
          continue;
        }
        C[root] = joinTime(root, send);
        hasKids[root] = 1;
        kids[root].push(send);
        rootBusy += comm(S[send]);
        S[root] += S[send];
        continue;
      }
      // a free join: the receiver whose join completes first, ties to the upper range
      const recv = joinTime(rb, ra) <= joinTime(ra, rb) ? rb : ra;
      const send = recv === ra ? rb : ra;
      if (S[send] === 0) {
        // nothing to send: hang it under the root (no message, no copy forced on `recv`)
        rootKids.push(send);
      } else {
        C[recv] = joinTime(recv, send);
        hasKids[recv] = 1;
        kids[recv].push(send);
        S[recv] += S[send];
      }
      next[g] = recv;
    }
    rootOf = next;
  }

  // The root: its construction children and pieces, in the order they are ready.
  const build = (order: readonly number[]): Tree => {
    const b = new TreeBuilder(p, root);
    for (let v = 0; v < p; v++) if (v !== root) for (const c of kids[v]) b.addChild(v, c);
    for (const c of order) b.addChild(root, c);
    b.setCopyAt(root, 0);
    return b.build();
  };
  const all = [...kids[root], ...rootKids];
  const ready = evaluate(build(all), m, model).completion;
  all.sort((x, y) => ready[x] - ready[y] || x - y);
  const tree = build(all);
  return { tree, time: evaluate(tree, m, model).time, root, stats: { rootChildren: all.length, opened, redirects } };
}
