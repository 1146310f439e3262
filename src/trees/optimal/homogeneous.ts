/**
 * Optimal ordered, variable-degree gather/scatter trees under the homogeneous linear cost
 * model (Traff17 §3.2, Theorem 2, Figure 6; recurrences restated in docs/MODEL.md):
 * dynamic programming over consecutive rank ranges in O(p³) time and O(p²) space.
 *
 * - best root (`root` omitted): Cs over all ranges, the root of Cs[0][p−1];
 * - fixed root r: Cs over the ranges left and right of r plus a table F over the ranges that
 *   contain r, whose last extension step always communicates with r (Traff17 §3.2).
 * - mode 'exact' (default): the true optimum over ordered trees (the last rank of a range may
 *   grow leftwards through several children, mirror image of the first rank);
 *   mode 'paper': the best-root numbers of Traff17's tables, where a root that is the last
 *   rank of its range takes exactly one message. With a fixed root both modes coincide
 *   (the paper's fixed-root numbers follow the symmetric rule).
 * - `model.copyAll` (Traff18 Lemma 4, leaves copy too) is supported: a single-rank tree then
 *   costs γ·m_i instead of 0, everything else is unchanged.
 * - `pruning: 'monotone'` is an opt-in O(p²) HEURISTIC (Knuth-style split windows, which
 *   Traff17 leaves open and which do not hold in general): optimal/monotone.ts.
 *
 * Kernels and memory layout: optimal/kernel.ts (full scan), optimal/crossing-kernel.ts (exact
 * speed-up for integer costs), optimal/parallel-kernel.ts (the latter on two cores, best root);
 * derivation, tie order and measurements: docs/optimal-dp.md.
 */
import { InvalidArgumentError, TooLargeError } from '../../errors.js';
import { requireFiniteCosts, requireModelFits, type CostModel } from '../../model/cost-model.js';
import { validateRoot, validateSizes } from '../../model/validate.js';
import {
  anyRootTables,
  fIndex,
  fixedRootTables,
  triIndex,
  type ChoiceTable,
  type DpInput,
  type ProgressSink,
} from './kernel.js';
import { crossingAnyRootTables, crossingEligible, crossingFixedRootTables } from './crossing-kernel.js';
import { parallelAnyRootTables, twoCoresPay } from './parallel-kernel.js';
import { monotoneAnyRootTables, monotoneFixedRootTables } from './monotone.js';
import { TreeBuilder } from '../tree.js';
import type { BuiltTree, RootOption } from '../types.js';

export type OptimalMode = 'exact' | 'paper';

export interface OptimalOptions extends RootOption {
  /** 'exact' (default): true optimum over ordered trees; 'paper': Traff17's best-root convention. */
  readonly mode?: OptimalMode;
  /** Called every so often with (work done, total work), in inner-loop steps. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * 'none' (default): the exact O(p³) DP. 'monotone': OPT-IN HEURISTIC, Knuth-style split
   * windows, O(p²) amortized; NOT always optimal (docs/optimal-dp.md: counterexamples and
   * measured error). Exact rule only (mode 'exact').
   */
  readonly pruning?: 'none' | 'monotone';
  /**
   * Table kernel of the exact DP (same result either way): 'auto' (default) uses the crossing
   * kernel (optimal/crossing-kernel.ts) where it is exact — integer α, β, γ; best root in mode 'exact',
   * or a fixed root — and the full scan otherwise; 'scan' always uses the full scan (for tests and benchmarks).
   */
  readonly kernel?: 'auto' | 'scan';
  /**
   * Threads of the crossing kernel with the best root (mode 'exact', integer α, β, γ; the
   * other kernels use one): 2 fills the tables with the calling thread and one worker thread
   * (optimal/parallel-kernel.ts; same result bit for bit, the call stays synchronous), 1 with
   * the calling thread only. Default: 2 when p ≥ PARALLEL_MIN_P (2000; 3000 when run from the
   * TypeScript sources) and the machine has at least two cores, else 1. A worker thread that
   * fails raises a DpWorkerError (code 'INTERNAL').
   */
  readonly workers?: 1 | 2;
}

/** Largest p accepted: the Float64 triangle alone is 8·p²/2 bytes (1.6 GB at 20000). */
export const OPTIMAL_MAX_P = 20000;

/**
 * The optimal ordered tree for `sizes` under a homogeneous one-ported linear model.
 * `time` equals `evaluate(tree, sizes, model).time` exactly.
 */
export function optimalTree(sizes: ArrayLike<number>, model: CostModel, opts?: OptimalOptions): BuiltTree {
  const m = validateSizes(sizes);
  const p = m.length;
  const input = prepare(m, model);
  const mode = opts?.mode ?? 'exact';
  if (mode !== 'exact' && mode !== 'paper') {
    throw new InvalidArgumentError('mode', `must be 'exact' or 'paper', got ${String(mode)}`);
  }
  const onProgress = opts?.onProgress;
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new InvalidArgumentError('onProgress', 'must be a function');
  }
  const root = opts?.root === undefined ? undefined : validateRoot(opts.root, p);
  const pruning = opts?.pruning ?? 'none';
  if (pruning !== 'none' && pruning !== 'monotone') {
    throw new InvalidArgumentError('pruning', `must be 'none' or 'monotone', got ${String(pruning)}`);
  }
  if (pruning === 'monotone' && mode !== 'exact') {
    throw new InvalidArgumentError('pruning', "'monotone' is implemented for mode 'exact' only");
  }
  const kernel = opts?.kernel ?? 'auto';
  if (kernel !== 'auto' && kernel !== 'scan') {
    throw new InvalidArgumentError('kernel', `must be 'auto' or 'scan', got ${String(kernel)}`);
  }
  const workers = opts?.workers;
  if (workers !== undefined && workers !== 1 && workers !== 2) {
    throw new InvalidArgumentError('workers', `must be 1 or 2, got ${String(workers)}`);
  }
  // the fixed-root tables are the same in both modes (symmetric rule), so only the best-root
  // paper rule (its N table) stays on the full scan
  const crossing = kernel === 'auto' && pruning === 'none' && (mode === 'exact' || root !== undefined) && crossingEligible(input);
  if (p > OPTIMAL_MAX_P) throw new TooLargeError('p', `the O(p²) tables need p ≤ ${OPTIMAL_MAX_P}, got ${p}`);

  if (p === 1) {
    const tree = new TreeBuilder(1, 0).build();
    return { tree, time: input.gamma * input.m[0], root: 0 }; // the lone root copies its block
  }
  if (root === undefined) {
    const t =
      pruning === 'monotone'
        ? monotoneAnyRootTables(input)
        : crossing && (workers ?? (twoCoresPay(p) ? 2 : 1)) === 2
          ? parallelAnyRootTables(input, onProgress as ProgressSink | undefined)
          : crossing
            ? crossingAnyRootTables(input, onProgress as ProgressSink | undefined)
            : anyRootTables(input, mode, onProgress as ProgressSink | undefined);
    if (pruning === 'monotone') onProgress?.(1, 1);
    const lookup: Lookup = {
      cs: t.choice,
      n: t.nChoice,
      f: undefined,
      p,
      r: -1,
    };
    const built = rebuild(lookup, p, mode === 'paper');
    return { tree: built.tree, time: t.cs[triIndex(p, 0, p - 1)], root: built.root };
  }
  const t =
    pruning === 'monotone'
      ? monotoneFixedRootTables(input, root)
      : crossing
        ? crossingFixedRootTables(input, root, onProgress as ProgressSink | undefined)
        : fixedRootTables(input, root, onProgress as ProgressSink | undefined);
  if (pruning === 'monotone') onProgress?.(1, 1);
  const lookup: Lookup = { cs: t.choice, n: undefined, f: t.fChoice, p, r: root };
  const built = rebuild(lookup, p, false);
  return { tree: built.tree, time: t.f[fIndex(p, root, 0, p - 1)], root };
}

/** The kernels' input for `sizes` under `model`, checked as optimalTree checks it (for tests and tools). */
export function dpInputOf(sizes: ArrayLike<number>, model: CostModel): DpInput {
  return prepare(validateSizes(sizes), model);
}

/** Checks the model and sizes, and precomputes prefix sums and single-rank times. */
function prepare(m: Float64Array, model: CostModel): DpInput {
  if (model === null || typeof model !== 'object') throw new InvalidArgumentError('model', 'must be a cost model');
  const p = m.length;
  const lin = model.linear;
  if (lin === undefined) {
    throw new InvalidArgumentError(
      'model',
      `the homogeneous DP needs a linear model (same α, β for every pair); for a ${model.kind} model use optimalPairwiseTree`,
    );
  }
  if (model.ports !== 1) {
    throw new InvalidArgumentError(
      'model',
      `the DP is exact for one-ported models only (Traff17 §3, Proposition 3), got ports = ${model.ports}`,
    );
  }
  requireModelFits(model, p);
  requireFiniteCosts(model, m);
  const P = new Float64Array(p + 1);
  for (let i = 0; i < p; i++) P[i + 1] = P[i] + m[i];
  if (P[p] > Number.MAX_SAFE_INTEGER) {
    throw new InvalidArgumentError('sizes', `total ${P[p]} exceeds 2^53 − 1 elements; range sums would be inexact`);
  }
  const leaf = new Float64Array(p);
  if (model.copyAll) for (let i = 0; i < p; i++) leaf[i] = lin.gamma * m[i];
  const nz = new Int32Array(p + 1);
  nz[p] = p;
  for (let i = p - 1; i >= 0; i--) nz[i] = m[i] > 0 ? i : nz[i + 1];
  return { p, m, P, alpha: lin.alpha, beta: lin.beta, gamma: lin.gamma, leaf, nz };
}

const CS = 0;
const N = 1;
const F = 2;
type TableId = typeof CS | typeof N | typeof F;

interface Lookup {
  readonly cs: ChoiceTable;
  readonly n: ChoiceTable | undefined;
  readonly f: ChoiceTable | undefined;
  readonly p: number;
  /** Fixed root, or −1. */
  readonly r: number;
}

function choiceOf(l: Lookup, t: TableId, i: number, j: number): number {
  if (t === F) return (l.f as ChoiceTable)[fIndex(l.p, l.r, i, j)];
  if (t === N) return (l.n as ChoiceTable)[triIndex(l.p, i, j)];
  return l.cs[triIndex(l.p, i, j)];
}

/**
 * Rebuilds the tree from the choice tables. A range's choices form a chain of "last
 * receives" ending at its root; the chain gives that root's children in reverse receive
 * order. Iterative, so deep trees are fine; O(p) steps.
 */
function rebuild(l: Lookup, p: number, paper: boolean): { tree: ReturnType<TreeBuilder['build']>; root: number } {
  const kids: number[][] = Array.from({ length: p }, () => []);
  // task stack: range, table, parent rank and slot in the parent's children list
  const si: number[] = [0];
  const sj: number[] = [p - 1];
  const st: TableId[] = [l.r >= 0 ? F : CS];
  const sp: number[] = [-1];
  const ss: number[] = [0];
  let top = -1;
  const ci: number[] = [];
  const cj: number[] = [];
  while (si.length > 0) {
    let i = si.pop() as number;
    let j = sj.pop() as number;
    let t = st.pop() as TableId;
    const parent = sp.pop() as number;
    const slot = ss.pop() as number;
    ci.length = 0;
    cj.length = 0;
    while (i < j) {
      const code = choiceOf(l, t, i, j);
      if (code > 0) {
        const k = i + code - 1; // R(k): rest [i..k], last child [k+1..j]
        ci.push(k + 1);
        cj.push(j);
        j = k;
        if (t === N) t = CS;
      } else {
        const k = i - code - 1; // L(k): last child [i..k], rest [k+1..j]
        ci.push(i);
        cj.push(k);
        i = k + 1;
        if (paper && t === CS) t = N;
      }
    }
    const v = i;
    if (parent < 0) top = v;
    else kids[parent][slot] = v;
    const n = ci.length;
    kids[v] = new Array<number>(n);
    // children in receive order are the peeled ranges reversed
    for (let q = 0; q < n; q++) {
      si.push(ci[n - 1 - q]);
      sj.push(cj[n - 1 - q]);
      st.push(CS);
      sp.push(v);
      ss.push(q);
    }
  }
  const b = new TreeBuilder(p, top);
  for (let v = 0; v < p; v++) for (const c of kids[v]) b.addChild(v, c);
  return { tree: b.build(), root: top };
}
