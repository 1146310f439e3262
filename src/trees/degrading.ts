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
 * The decisions themselves are degrading-rule.ts's (shared with the distributed construction,
 * collectives/adaptive/construct.ts, which therefore builds this very tree).
 *
 * Every rank keeps exactly one parent: its construction parent, or the root (opened parents
 * and empty ranges); every piece is a contiguous range of ranks. Cost in the model: the
 * construction's ⌈log₂ p⌉ rounds, one more word per exchange (κ, the deadline), and a
 * top-down pass of at most ⌈log₂ p⌉ constant-size steps inside opened partners only.
 * Measured with `evaluate` (test/degrading.test.ts, docs/algorithms.md): never slower than
 * min(adaptive, linear) on the cases tried — an observation, not a theorem.
 *
 * One-ported models without copyAll (linear; per-pair and hierarchical with the start-up and
 * per-unit costs toward the root read off the model: degrading-rule.ts); O(p log p) time.
 */
import { InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree } from './adaptive.js';
import { degradingCosts, degradingJoin, degradingLeaf, openingPass, VERDICT, type DegradingRecord } from './degrading-rule.js';
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

/** The models the degrading tree is built for: one-ported, without copyAll (InvalidArgumentError otherwise). */
export function checkDegradingModel(model: CostModel): void {
  if (model.ports !== 1) throw new InvalidArgumentError('model', `the degrading tree is one-ported; got ${model.ports} ports`);
  if (model.copyAll) throw new InvalidArgumentError('model', 'the degrading tree does not support copyAll (Traff18 Lemma 4)');
}

/**
 * The degrading adaptive tree (module comment). `opts.root` given: that root; omitted: the
 * root the free adaptive construction ends at (adaptiveBinomialTree's best root).
 */
export function degradingTree(sizes: ArrayLike<number>, model: CostModel, opts?: RootOption): DegradingTree {
  const { m, p, root: fixed } = prepareProblem(sizes, model, opts);
  checkDegradingModel(model);
  const root = fixed ?? adaptiveBinomialTree(m, model).root;
  const costs = degradingCosts(model, root);

  /** Each range's summary at its gather root; a sender's stays as it was when it joined. */
  const rec: DegradingRecord[] = Array.from({ length: p }, (_, v) => degradingLeaf(v, m[v], costs));
  const kids: number[][] = Array.from({ length: p }, () => []);
  const rootKids: number[] = [];
  let opened = 0;
  let redirects = 0;

  /** Opens v at `deadline`: its own block and its children's pieces go to the root. */
  const open = (v: number, deadline: number): void => {
    opened++;
    redirects += kids[v].length;
    rootKids.push(v);
    const pass = openingPass(v, m[v], deadline, kids[v].map((c) => rec[c]), costs);
    kids[v] = [];
    for (const c of pass) if (!c.opens) rootKids.push(c.record.gatherRoot);
    for (const c of pass) if (c.opens) open(c.record.gatherRoot, c.deadline);
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
      const mid = (a + 1) * width - 1;
      const hi = Math.min((a + 2) * width, p) - 1;
      const d = degradingJoin(rec[ra], rec[rb], lo, mid, hi, costs);
      const recv = d.rightReceives ? rb : ra;
      const send = d.rightReceives ? ra : rb;
      rec[recv] = d.joined;
      next[g] = recv;
      if (d.verdict === VERDICT.OPEN) open(send, d.deadline);
      else if (d.verdict === VERDICT.EMPTY) rootKids.push(send); // nothing to send: no message, no copy forced on `recv`
      else kids[recv].push(send);
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
