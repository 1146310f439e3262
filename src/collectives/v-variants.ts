/**
 * THE table of the gatherv/scatterv variants: one row per algorithm, everything vcoll knows
 * about it in one place (in the manner of SimGrid's one-line-per-variant collective lists and
 * UCC's per-component algorithm tables). What is derived from it:
 * - the names: `VVariantName`, `V_ALGORITHMS`, `PORTABLE_V_ALGORITHMS`, `MODEL_TREE_ALGORITHMS`,
 *   `TreeVariantName` (here), `VAlgorithm` (collectives/types.ts), `AUTO_ORDER` (collectives/auto.ts);
 * - `GATHERV_VARIANTS` / `SCATTERV_VARIANTS` (collectives/v-collectives.ts), and the
 *   descriptions of the root-built tree variants;
 * - `auto`'s candidates and their set-up estimates (collectives/auto.ts);
 * - the data-phase tree a prediction evaluates (src/run/predict.ts) and the tree construction
 *   the root runs (its p limit: src/run/case-limits.ts);
 * - the restrictions: checked on every rank before planning (`checkVariantRestrictions`), by
 *   the benchmark and the main job before a case (`notApplicable`, src/run/applicable.ts), by
 *   the CLI (`requiresNative`), and by `auto` for its candidates.
 *
 * Adding a tree-based variant: its tree construction (a file in src/trees/ and its row in
 * trees/registry.ts), then one `rootTree(…)` row here. Everything else follows.
 *
 * Rows, in the order of the CLI's lists:
 * | name                  | paper (docs/papers.md)        | data phase                         | set-up (planning)                 |
 * | --------------------- | ----------------------------- | ---------------------------------- | --------------------------------- |
 * | linear                | Traff17 §5.1 (what MPI ships) | star, root receives/sends directly | none                              |
 * | binomial              | Traff18 §2, Lemma 2           | rank-ordered binomial, fixed root  | counts scattered, ⌈log₂p⌉ rounds  |
 * | adaptive              | Traff18 Lemmas 1–4, Thm 1     | adaptive binomial ((k+1)-ary with k ports), fixed root | distributed construction |
 * | degrading             | Traff18 §3 (left undone there) | adaptive, late subtrees opened (one-ported) | construction + verdicts |
 * | optimal               | Traff17 Theorem 2 (1)         | optimal ordered tree (DP)          | root builds, schedules 2⌈log₂p⌉   |
 * | binary                | Traff17 Theorem 3             | optimal ordered binary tree (DP)   | root builds, schedules 2⌈log₂p⌉   |
 * | two-block             | Traff17 §5.2, Lemma 2         | TWO_Gatherv / TWO_Scatterv         | root builds, schedules 2⌈log₂p⌉   |
 * | model-binomial-*      | Dichev10 §2                   | model-mapped binomial              | root builds, schedules 2⌈log₂p⌉   |
 * | traff, model-traff(-guarded) | Dichev10 §2, Fig. 1    | Träff's tree, original / model     | root builds, schedules 2⌈log₂p⌉   |
 * | mpi-native            | —                             | the MPI library's own collective   | none (MPI transport only)         |
 * Note on names: the `binomial` variant runs the tree the tree layer calls `oblivious`
 * (trees/binomial.ts, obliviousBinomialTree: block-size oblivious, rank ordered) — the same
 * tree under the name MPI users know.
 */
import type { CostModel } from '../model/cost-model.js';
import { InvalidArgumentError, UnavailableError } from '../errors.js';
import { adaptiveBinomialTree } from '../trees/adaptive.js';
import { degradingTree } from '../trees/degrading.js';
import { obliviousBinomialTree } from '../trees/binomial.js';
import { linearTree } from '../trees/linear.js';
import { findTreeAlgorithm } from '../trees/registry.js';
import type { Tree } from '../trees/tree.js';
import { ceilLog2 } from '../util/ceil-log.js';
import { constructionRounds } from './adaptive/construct.js';
import { ADAPTIVE_GATHERV } from './gatherv/adaptive.js';
import { DEGRADING_GATHERV } from './gatherv/degrading.js';
import { BINOMIAL_GATHERV } from './gatherv/binomial.js';
import { LINEAR_GATHERV } from './gatherv/linear.js';
import { MPI_NATIVE_GATHERV } from './gatherv/mpi-native.js';
import { treeGather } from './gatherv/tree.js';
import { binomialHeight, binomialNode, buildRootTree, SCHEDULE_WIDTH } from './node-schedule.js';
import { ADAPTIVE_SCATTERV } from './scatterv/adaptive.js';
import { DEGRADING_SCATTERV } from './scatterv/degrading.js';
import { BINOMIAL_SCATTERV } from './scatterv/binomial.js';
import { LINEAR_SCATTERV } from './scatterv/linear.js';
import { MPI_NATIVE_SCATTERV } from './scatterv/mpi-native.js';
import { treeScatter } from './scatterv/tree.js';
import { BINOMIAL_DESCRIPTION, treeVariant } from './tree-exec.js';
import { portableAlgorithms, type NativeAlgorithm, type VAlgorithm } from './types.js';
import { DEGRADING_ONE_PORTED, degradingRounds } from './adaptive/degrading.js';
import { hypercubeRounds } from './adaptive/hypercube.js';
import { DEGRADING_RECORD_BYTES } from './adaptive/decide.js';
import {
  onePorted,
  type GathervVariant,
  type RestrictionContext,
  type ScattervVariant,
  type VariantRequirement,
  type VariantRestriction,
} from './variant.js';

export type VOp = 'gatherv' | 'scatterv';

/** The set-up (planning) phase of a candidate of `auto`, estimated before the counts are known. */
export interface PlanningEstimate {
  /** The root's planning sends (model units). */
  readonly setup: number;
  /** Dependent rounds: planning + data phase (without the tree's height where `plusTreeHeight`). */
  readonly rounds: number;
}

export interface AutoCandidate {
  /** The byte the root broadcasts for this choice (its index in AUTO_ORDER; fixed forever: it is on the wire). */
  readonly byte: number;
  /**
   * The planning estimate (independent of the counts); absent: never chosen by auto (the O(p³)
   * dynamic programs). Called only for p > 1 unless the row plans nothing.
   */
  readonly planning?: (model: CostModel, p: number, root: number, unitBytes: number) => PlanningEstimate;
  /** Whether the data tree's height adds to `rounds` (its height is at least 1 for p > 1). */
  readonly plusTreeHeight?: boolean;
}

/** One gatherv/scatterv algorithm. */
export interface VVariantRow<N extends string = string> {
  readonly name: N;
  /** Paper key and section (docs/papers.md). */
  readonly paper: string;
  /** One line: what the algorithm does. */
  readonly summary: string;
  /** What it needs of the transport beyond point-to-point (absent: runs everywhere). */
  readonly requires?: VariantRequirement;
  readonly restrictions: readonly VariantRestriction[];
  /** The tree construction of trees/registry.ts the root runs at planning, if any. */
  readonly tree?: string;
  /**
   * The tree the data phase follows for these sizes and root (with the time its builder computed),
   * for predictions and `auto`. The same tree the run uses, by construction.
   */
  readonly dataTree: (sizes: readonly number[], model: CostModel, root: number, op: VOp) => { readonly tree: Tree; readonly time: number };
  /** As a candidate of `auto` (absent: auto never names it). */
  readonly auto?: AutoCandidate;
  readonly gatherv: GathervVariant;
  readonly scatterv: ScattervVariant;
}

// ---------------------------------------------------------------------------------------
// Restrictions

/** At most two distinct block sizes (Traff17 §5.2). */
const TWO_SIZES: VariantRestriction = {
  on: 'counts',
  why: ({ counts }) => (counts !== undefined && new Set(counts).size > 2 ? 'more than two block sizes' : undefined),
  error: (why, rank) => new InvalidArgumentError('counts', `two-block needs at most two distinct counts: ${why}`, { rank }),
};

/** The degrading tree is built under the ordered copy convention (not Traff18 Lemma 4's copyAll). */
const NO_COPY_ALL: VariantRestriction = {
  on: 'model',
  why: ({ model }) => (model !== undefined && model.copyAll ? 'the degrading tree is built under the ordered copy convention, not copyAll (Traff18 Lemma 4)' : undefined),
  error: (why, rank) => new InvalidArgumentError('model', why, { rank }),
};

/** The MPI library's own collectives (the MPI transport). */
const NATIVE: VariantRestriction = {
  on: 'transport',
  why: ({ native }) => (native === false ? "calls the MPI library's own collectives: the MPI transport only" : undefined),
  error: (why, rank) => new UnavailableError('mpi-transport', `mpi-native ${why}`, { rank }),
};

// ---------------------------------------------------------------------------------------
// Set-up estimates of auto's candidates

/** The root's sends when it scatters `width` Int32 per rank down the binomial tree. */
function binomialScatterCost(model: CostModel, p: number, root: number, width: number, unitBytes: number): number {
  let t = 0;
  for (const c of binomialNode(p, root, root).children) t += model.comm(root, c.rank, (4 * width * (c.hi - c.lo + 1)) / unitBytes);
  return t;
}

/** Schedules scattered by the root (two scatters: fixed parts, children's parts). */
function scheduleScatter(model: CostModel, p: number, root: number, unitBytes: number): PlanningEstimate {
  return {
    setup: binomialScatterCost(model, p, root, SCHEDULE_WIDTH, unitBytes) + binomialScatterCost(model, p, root, 3, unitBytes),
    rounds: 2 * ceilLog2(p),
  };
}

// ---------------------------------------------------------------------------------------
// Row makers

/** A variant whose root builds the registry's tree `name` and scatters the schedules (collectives/tree-exec.ts). */
function rootTree<const N extends string, const H extends boolean = false>(
  name: N,
  spec: {
    readonly paper: string;
    readonly summary?: string;
    readonly restrictions?: readonly VariantRestriction[];
    readonly auto?: AutoCandidate;
    /** A tree for heterogeneous networks (Dichev10 §2): MODEL_TREE_ALGORITHMS. */
    readonly heterogeneous?: H;
  },
): VVariantRow<N> & { readonly tree: N; readonly heterogeneous: H } {
  const tree = findTreeAlgorithm(name);
  if (tree === undefined) throw new Error(`v-variants: no tree construction named '${name}' in trees/registry.ts`);
  const summary = spec.summary ?? tree.description;
  const schedules = 'built by the root, schedules scattered in 2⌈log₂p⌉ rounds';
  const describe = (op: VOp): string => `${summary} (${spec.paper}), ${schedules}, for the ${op === 'gatherv' ? 'gather' : 'scatter'}`;
  return {
    name,
    paper: spec.paper,
    summary,
    restrictions: spec.restrictions ?? [],
    tree: name,
    heterogeneous: (spec.heterogeneous ?? false) as H,
    dataTree: (sizes, model, root, op) => buildRootTree(name, sizes, model, root, root, op),
    auto: spec.auto,
    gatherv: treeVariant(name, 'gatherv', describe('gatherv'), treeGather),
    scatterv: treeVariant(name, 'scatterv', describe('scatterv'), treeScatter),
  };
}

// ---------------------------------------------------------------------------------------
// The table

const ROWS = [
  {
    name: 'linear',
    paper: 'Traff17 §5.1',
    summary: 'the root receives (sends) every block directly, all operations posted at once in rank order: what Open MPI and MPICH ship',
    restrictions: [],
    dataTree: (sizes: readonly number[], model: CostModel, root: number) => linearTree(sizes, model, { root }),
    auto: { byte: 0, planning: (_m: CostModel, p: number) => ({ setup: 0, rounds: p > 1 ? 1 : 0 }) },
    gatherv: LINEAR_GATHERV,
    scatterv: LINEAR_SCATTERV,
  } satisfies VVariantRow<'linear'>,
  {
    name: 'binomial',
    paper: 'Traff18 §2, Lemma 2',
    summary: BINOMIAL_DESCRIPTION,
    restrictions: [],
    dataTree: (sizes: readonly number[], model: CostModel, root: number) => obliviousBinomialTree(sizes, model, { root }),
    auto: {
      byte: 1,
      planning: (model: CostModel, p: number, root: number, unitBytes: number) => ({
        setup: binomialScatterCost(model, p, root, 1, unitBytes),
        rounds: ceilLog2(p) + binomialHeight(p, root),
      }),
    },
    gatherv: BINOMIAL_GATHERV,
    scatterv: BINOMIAL_SCATTERV,
  } satisfies VVariantRow<'binomial'>,
  {
    name: 'adaptive',
    paper: 'Traff18 Lemmas 1–4, Theorem 1 (k ports)',
    summary: 'distributed adaptive binomial tree (constant-size construction messages, Lemma 3), fixed root (Lemma 2); k-ported: k + 1 ranges joined per round',
    // any ports: k-ported models build the (k+1)-ary tree of trees/adaptive.ts (adaptive/kported-construct.ts)
    restrictions: [],
    dataTree: (sizes: readonly number[], model: CostModel, root: number) => adaptiveBinomialTree(sizes, model, { root }),
    auto: {
      byte: 2,
      // ⌈log_{k+1}p⌉ construction rounds of about two constant-size message times each (the
      // exchange: one-ported a send and a receive, k-ported k of each on k ports), then the
      // data tree of height at most ⌈log_{k+1}p⌉ (k = 1: ⌈log₂p⌉, the estimate unchanged)
      planning: (model: CostModel, p: number, root: number, unitBytes: number) => ({
        setup: 2 * hypercubeRounds(p, model.ports) * model.comm(root, (root + 1) % p, 16 / unitBytes),
        rounds: constructionRounds(p, model.ports) + hypercubeRounds(p, model.ports),
      }),
    },
    gatherv: ADAPTIVE_GATHERV,
    scatterv: ADAPTIVE_SCATTERV,
  } satisfies VVariantRow<'adaptive'>,
  {
    name: 'degrading',
    paper: 'Traff18 §3 (graceful degradation, left undone there)',
    summary: 'the distributed adaptive tree in which late subtrees send straight to the root (opened at a model deadline), fixed root',
    restrictions: [DEGRADING_ONE_PORTED, NO_COPY_ALL],
    dataTree: (sizes: readonly number[], model: CostModel, root: number) => degradingTree(sizes, model, { root }),
    auto: {
      byte: 6,
      planning: (model: CostModel, p: number, root: number, unitBytes: number) => ({
        // records and notifications (56 bytes) in each construction round, then a verdict (16)
        setup: ceilLog2(p) * (2 * model.comm(root, (root + 1) % p, DEGRADING_RECORD_BYTES / unitBytes) + model.comm(root, (root + 1) % p, 16 / unitBytes)),
        rounds: degradingRounds(p) + ceilLog2(p),
      }),
    },
    gatherv: DEGRADING_GATHERV,
    scatterv: DEGRADING_SCATTERV,
  } satisfies VVariantRow<'degrading'>,
  rootTree('optimal', {
    paper: 'Traff17 Theorem 2; per-pair models: Theorem 1',
    summary: 'optimal ordered variable-degree tree for the counts',
    restrictions: [onePorted('the optimal tree DP is exact for one-ported models only (Traff17 §3, Proposition 3)')],
    auto: { byte: 4 },
  }),
  rootTree('binary', {
    paper: 'Traff17 Theorem 3',
    summary: 'optimal ordered binary tree for the counts',
    restrictions: [onePorted('the optimal binary tree DP is for one-ported models')],
    auto: { byte: 5 },
  }),
  rootTree('two-block', {
    paper: 'Traff17 §5.2, Lemma 2',
    summary: 'TWO_Gatherv / TWO_Scatterv: binomial trees over the small- and the large-block ranks joined by one transfer',
    restrictions: [TWO_SIZES],
    auto: { byte: 3, planning: (model, p, root, unitBytes) => scheduleScatter(model, p, root, unitBytes), plusTreeHeight: true },
  }),
  rootTree('model-binomial-min', { paper: 'Dichev10 §2', heterogeneous: true }),
  rootTree('model-binomial-max', { paper: 'Dichev10 §2', heterogeneous: true }),
  rootTree('model-binomial-guarded', { paper: 'Dichev10 §2, with an explicit guard', heterogeneous: true }),
  rootTree('traff', { paper: 'Dichev10 §2 (Träff 2004, its ref. [2]), model-oblivious', heterogeneous: true }),
  rootTree('model-traff', { paper: 'Dichev10 §2, Fig. 1', heterogeneous: true }),
  rootTree('model-traff-guarded', { paper: 'Dichev10 §2, with an explicit guard', heterogeneous: true }),
  {
    name: 'mpi-native',
    paper: '— (the MPI library: Open MPI 4.1.4 coll/basic and MPICH are linear)',
    summary: "the MPI library's own MPI_Gatherv / MPI_Scatterv (MPI transport only)",
    requires: 'native',
    restrictions: [NATIVE],
    // Open MPI 4.1.4 (coll/basic) and MPICH run MPI_Gatherv / MPI_Scatterv linearly
    dataTree: (sizes: readonly number[], model: CostModel, root: number) => linearTree(sizes, model, { root }),
    gatherv: MPI_NATIVE_GATHERV,
    scatterv: MPI_NATIVE_SCATTERV,
  } satisfies VVariantRow<'mpi-native'>,
] as const;

/** Every gatherv/scatterv variant, one row each (see the module comment). */
export const V_VARIANTS: readonly VVariantRow<VVariantName>[] = ROWS;

/** The name of a gatherv/scatterv variant (VAlgorithm without 'auto'). */
export type VVariantName = (typeof ROWS)[number]['name'];

/** The variants whose root builds a tree of trees/registry.ts and scatters the schedules. */
export type TreeVariantName = Extract<(typeof ROWS)[number], { readonly tree: string }>['name'];

/** The row of `name`, or undefined. */
export function variantRow(name: string): VVariantRow<VVariantName> | undefined {
  return V_VARIANTS.find((r) => r.name === name);
}

/** The first restriction of `row` of the kinds `on` that fails in `c`, as [restriction, why]. */
export function failedRestriction(
  row: VVariantRow,
  c: RestrictionContext,
  on: readonly VariantRestriction['on'][] = ['model', 'counts', 'transport'],
): [VariantRestriction, string] | undefined {
  for (const r of row.restrictions) {
    if (!on.includes(r.on)) continue;
    const why = r.why(c);
    if (why !== undefined) return [r, why];
  }
  return undefined;
}

/** Throws the error of the first 'model' restriction of `name` that fails (every rank, before planning). */
export function checkVariantRestrictions(name: string, model: CostModel, p: number, rank: number): void {
  const row = variantRow(name);
  if (row === undefined) return;
  const failed = failedRestriction(row, { p, model }, ['model']);
  if (failed !== undefined) throw failed[0].error(failed[1], rank);
}

/** The rows `auto` can choose, in AUTO_ORDER (the decision byte). */
export function autoRows(): VVariantRow<VVariantName>[] {
  return V_VARIANTS.filter((r) => r.auto !== undefined).sort((a, b) => (a.auto as AutoCandidate).byte - (b.auto as AutoCandidate).byte);
}

/** Every gatherv / scatterv algorithm, `mpi-native` included (MPI transport only: see PORTABLE_V_ALGORITHMS). */
export const V_ALGORITHMS: readonly VAlgorithm[] = [...V_VARIANTS.map((r) => r.name), 'auto'];

/** The gatherv / scatterv algorithms every transport runs (V_ALGORITHMS without `mpi-native`). */
export const PORTABLE_V_ALGORITHMS: readonly Exclude<VAlgorithm, NativeAlgorithm>[] = portableAlgorithms(V_ALGORITHMS);

/** The trees of Dichev10 §2 for heterogeneous networks that gatherv / scatterv run (the root builds them from options.model). */
export type ModelTreeAlgorithm = Extract<(typeof ROWS)[number], { readonly heterogeneous: true }>['name'];
export const MODEL_TREE_ALGORITHMS: readonly ModelTreeAlgorithm[] = ROWS.filter(
  (r): r is Extract<(typeof ROWS)[number], { readonly heterogeneous: true }> => 'heterogeneous' in r && r.heterogeneous === true,
).map((r) => r.name);
