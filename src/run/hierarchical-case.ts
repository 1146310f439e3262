/**
 * One run of the hierarchical gather, gatherv, scatter or scatterv (TraffRougier14 and its
 * mirror, src/collectives/hierarchical/) as `vcoll run --algorithm hierarchical` describes it,
 * validated once here with typed errors: where the ranks live (p / perNode nodes, ranks placed
 * in order or shuffled; or the nodeOf of a hierarchical model file), the variant, the tree of
 * both levels (binomial, or Traff18's adaptive trees), the blocks, and the two-level cost model
 * the simulator charges, the adaptive trees are built for and the prediction uses.
 *
 * - The collective: `--op gatherv` gathers, `--op scatterv` scatters; the regular one
 *   (hierarchicalGather / hierarchicalScatter, every block b elements) for `--dist same`, the
 *   irregular one (hierarchicalGatherv / hierarchicalScatterv) for every other distribution.
 *   `--persistent` always runs the irregular one, planned once (hierarchicalGathervInit /
 *   hierarchicalScattervInit: the adaptive trees' constructions) and timed at start() only: the
 *   regular calls have no persistent form.
 * - The default model is TraffRougier14 §4's machine (tools/hier-bench.ts, one-ported, µs):
 *   intra-node α = 0.5, β = 1/4000 per byte; inter-node α = 2, β = 1/3200 per byte; γ = 1/5000
 *   per byte — per element: β and γ times unitBytes. A hierarchical `--model-file` replaces it
 *   (and its nodeOf replaces --per-node/--placement).
 */
import prand from 'pure-rand';
import {
  HIERARCHICAL_TREE_NAMES,
  HIERARCHICAL_VARIANT_NAMES,
  type HierarchicalTreeName,
  type HierarchicalVariantName,
} from '../collectives/hierarchical/index.js';
import { InvalidArgumentError } from '../errors.js';
import { hierarchicalModel, type CostModel } from '../model/cost-model.js';
import { modelFromSpec, type CostModelSpec } from '../model/model-json.js';
import type { HierarchicalRankCase } from './hierarchical-rank.js';
import { caseBlocksOf, integerIn, NODE_PLACEMENTS, type CaseBlocks, type NodePlacement, type VOperation } from './spec.js';

/** What the report says: a placement, or the nodeOf of a hierarchical --model-file. */
export type NodePlacementName = NodePlacement | 'model-file';

/** The library's default variant (HierarchicalOptions.variant). */
export const DEFAULT_HIERARCHICAL_VARIANT: HierarchicalVariantName = 'zero-copy';

/** The library's default tree (HierarchicalOptions.tree). */
export const DEFAULT_HIERARCHICAL_TREE: HierarchicalTreeName = 'binomial';

/** The library call a run makes. */
export type HierarchicalCollective = 'gather' | 'gatherv' | 'scatter' | 'scatterv';

/**
 * The call of `op` for distribution `dist`: the regular one for 'same', else the irregular one;
 * persistent, always the irregular one (only gatherv and scatterv have a persistent form).
 */
export function hierarchicalCollectiveOf(op: VOperation, dist: string, persistent = false): HierarchicalCollective {
  const regular = dist === 'same' && !persistent;
  if (op === 'gatherv') return regular ? 'gather' : 'gatherv';
  return regular ? 'scatter' : 'scatterv';
}

/** α per message, β per element, γ per element of a two-level machine. */
export interface TwoLevelParams {
  readonly intra: { readonly alpha: number; readonly beta: number };
  readonly inter: { readonly alpha: number; readonly beta: number };
  readonly gamma: number;
}

/** TraffRougier14 §4's machine per byte, µs (tools/hier-bench.ts: QDR InfiniBand, shared memory, memcpy). */
export const TRAFF_ROUGIER14_MACHINE: TwoLevelParams = {
  intra: { alpha: 0.5, beta: 1 / 4000 },
  inter: { alpha: 2, beta: 1 / 3200 },
  gamma: 1 / 5000,
};

/** What `vcoll run --algorithm hierarchical` was given (fields named by `prefix` in errors). */
export interface HierarchicalRunInput extends CaseBlocks {
  readonly p: number;
  readonly op: VOperation;
  /** Ranks per node; required unless `modelSpec` places the ranks. */
  readonly perNode?: number;
  /** Default 'ordered'. */
  readonly placement?: NodePlacement;
  /** Default DEFAULT_HIERARCHICAL_VARIANT. */
  readonly variant?: HierarchicalVariantName;
  /** Default DEFAULT_HIERARCHICAL_TREE. */
  readonly tree?: HierarchicalTreeName;
  /** A model given as data (--model-file): must be hierarchical, one-ported, for p ranks. */
  readonly modelSpec?: CostModelSpec;
  /** That spec's model when the caller has built it already (loadModelJson). */
  readonly model?: CostModel;
  /**
   * Plan once (hierarchicalGathervInit / hierarchicalScattervInit, timed on its own) and time
   * only start(); always the irregular call, `--dist same` included. Default false.
   */
  readonly persistent?: boolean;
}

/** One hierarchical run, ready to go. */
export interface HierarchicalRunCase {
  /** What every rank needs (plain data: it travels to worker threads and MPI processes). */
  readonly rankCase: HierarchicalRankCase;
  /** The node of every rank (comm.nodeOf of the run). */
  readonly nodeOf: Int32Array;
  readonly perNode: number | undefined;
  readonly placement: NodePlacementName;
  /** The hierarchical model the simulator charges and the prediction evaluates (one-ported). */
  readonly model: CostModel;
  /** Its parameters, per element. */
  readonly twoLevel: TwoLevelParams;
}

/** TraffRougier14 §4's machine per element of `unitBytes` bytes. */
export function defaultTwoLevel(unitBytes: number): TwoLevelParams {
  const m = TRAFF_ROUGIER14_MACHINE;
  return {
    intra: { alpha: m.intra.alpha, beta: m.intra.beta * unitBytes },
    inter: { alpha: m.inter.alpha, beta: m.inter.beta * unitBytes },
    gamma: m.gamma * unitBytes,
  };
}

/**
 * The model a run's adaptive trees are built for (HierarchicalOptions.model): the run's
 * two-level machine over `nodeOf`, per element for gatherv and scatterv (counts are elements),
 * per byte for the regular gather and scatter (the library sizes their blocks in bytes). The
 * rank programs and the prediction build it the same way, so they decide the same trees.
 */
export function treeModelOf(c: { readonly collective: HierarchicalCollective; readonly unitBytes: number; readonly twoLevel: TwoLevelParams }, nodeOf: ArrayLike<number>): CostModel {
  const per = c.collective === 'gather' || c.collective === 'scatter' ? c.unitBytes : 1;
  const t = c.twoLevel;
  return hierarchicalModel({
    nodeOf,
    intra: { alpha: t.intra.alpha, beta: t.intra.beta / per },
    inter: { alpha: t.inter.alpha, beta: t.inter.beta / per },
    gamma: t.gamma / per,
  });
}

/**
 * Whether a run's calls take its tree model (HierarchicalOptions.model): tree 'adaptive' builds
 * its trees in it and a persistent scatterv orders its sends by it; the one-shot binomial calls
 * use none. The simulator's options, the threads' and MPI's rank options and the prediction
 * ask the same.
 */
export function usesTreeModel(c: { readonly tree: HierarchicalTreeName; readonly persistent: boolean }): boolean {
  return c.tree === 'adaptive' || c.persistent;
}

/** The node of every rank: p / perNode nodes of perNode ranks, in rank order or shuffled (seeded xoroshiro128+). */
export function nodeMap(p: number, perNode: number, placement: NodePlacement, seed: number): Int32Array {
  const nodeOf = new Int32Array(p);
  for (let r = 0; r < p; r++) nodeOf[r] = Math.floor(r / perNode);
  if (placement === 'random') {
    const rng = prand.xoroshiro128plus(seed);
    for (let i = p - 1; i > 0; i--) {
      const j = prand.unsafeUniformIntDistribution(0, i, rng);
      const t = nodeOf[i];
      nodeOf[i] = nodeOf[j];
      nodeOf[j] = t;
    }
  }
  return nodeOf;
}

/** The ranks' node map and model from --per-node/--placement (the default machine) or from the model file. */
function placementAndModel(input: HierarchicalRunInput, prefix: string): Pick<HierarchicalRunCase, 'nodeOf' | 'perNode' | 'placement' | 'model' | 'twoLevel'> {
  const { p } = input;
  const spec = input.modelSpec;
  if (spec !== undefined) {
    if (spec.kind !== 'hierarchical') {
      throw new InvalidArgumentError(`${prefix}model-file`, `is a ${spec.kind} model: --algorithm hierarchical needs a hierarchical one (its nodeOf places the ranks on nodes)`);
    }
    if (input.perNode !== undefined) throw new InvalidArgumentError(`${prefix}per-node`, "the --model-file's nodeOf places the ranks: give --per-node or a hierarchical --model-file, not both");
    if (input.placement !== undefined) throw new InvalidArgumentError(`${prefix}placement`, "the --model-file's nodeOf places the ranks: give --placement or a hierarchical --model-file, not both");
    if (spec.nodeOf.length !== p) throw new InvalidArgumentError(`${prefix}model-file`, `defines ${spec.nodeOf.length} ranks, the run has ${p}`);
    if (spec.ports !== undefined && spec.ports !== 1) {
      throw new InvalidArgumentError(`${prefix}model-file`, `has ${spec.ports} ports: the hierarchical gathers run one-ported (TraffRougier14 §2)`);
    }
    const model = input.model ?? modelFromSpec(spec);
    return {
      nodeOf: Int32Array.from(spec.nodeOf),
      perNode: undefined,
      placement: 'model-file',
      model,
      twoLevel: { intra: { ...spec.intra }, inter: { ...spec.inter }, gamma: spec.gamma },
    };
  }
  if (input.perNode === undefined) {
    throw new InvalidArgumentError(`${prefix}per-node`, 'is required with --algorithm hierarchical (ranks per node), unless a hierarchical --model-file places the ranks');
  }
  const perNode = integerIn(`${prefix}per-node`, input.perNode, 1);
  if (p % perNode !== 0) {
    throw new InvalidArgumentError(
      `${prefix}per-node`,
      `${prefix}p ${p} is not a multiple of ${perNode} (${p} = ${Math.floor(p / perNode)} × ${perNode} + ${p % perNode}): every node holds ${perNode} ranks`,
    );
  }
  const placement = input.placement ?? 'ordered';
  if (!NODE_PLACEMENTS.includes(placement)) {
    throw new InvalidArgumentError(`${prefix}placement`, `must be one of ${NODE_PLACEMENTS.join(', ')}, got "${String(placement)}"`);
  }
  const nodeOf = nodeMap(p, perNode, placement, input.seed);
  const twoLevel = defaultTwoLevel(input.unitBytes);
  return { nodeOf, perNode, placement, model: hierarchicalModel({ nodeOf, ...twoLevel }), twoLevel };
}

/** Validates `input` and builds the run (O(p): the node map and the model). */
export function hierarchicalCase(input: HierarchicalRunInput, prefix = ''): HierarchicalRunCase {
  const p = integerIn(`${prefix}p`, input.p, 1);
  if (input.op !== 'gatherv' && input.op !== 'scatterv') {
    throw new InvalidArgumentError(`${prefix}op`, `must be gatherv or scatterv with --algorithm hierarchical, got "${String(input.op)}"`);
  }
  const variant = input.variant ?? DEFAULT_HIERARCHICAL_VARIANT;
  if (!HIERARCHICAL_VARIANT_NAMES.includes(variant)) {
    throw new InvalidArgumentError(`${prefix}hier-variant`, `must be one of ${HIERARCHICAL_VARIANT_NAMES.join(', ')}, got "${String(variant)}"`);
  }
  const tree = input.tree ?? DEFAULT_HIERARCHICAL_TREE;
  if (!HIERARCHICAL_TREE_NAMES.includes(tree)) {
    throw new InvalidArgumentError(`${prefix}hier-tree`, `must be one of ${HIERARCHICAL_TREE_NAMES.join(', ')}, got "${String(tree)}"`);
  }
  integerIn(`${prefix}b`, input.b, 1);
  integerIn(`${prefix}rho`, input.rho, 1);
  integerIn(`${prefix}seed`, input.seed, -(2 ** 31), 2 ** 31 - 1);
  integerIn(`${prefix}root`, input.root, 0, p - 1);
  integerIn(`${prefix}unit-bytes`, input.unitBytes, 1, 1 << 20);
  integerIn(`${prefix}reps`, input.reps, 1);
  integerIn(`${prefix}warmup`, input.warmup, 0);
  const persistent = input.persistent ?? false;
  if (typeof persistent !== 'boolean') throw new InvalidArgumentError(`${prefix}persistent`, `must be true or false, got ${String(persistent)}`);
  const placed = placementAndModel({ ...input, p }, prefix);
  const rankCase: HierarchicalRankCase = {
    collective: hierarchicalCollectiveOf(input.op, input.dist, persistent),
    variant,
    tree,
    twoLevel: placed.twoLevel,
    persistent,
    ...caseBlocksOf(input),
  };
  return { rankCase, ...placed };
}
