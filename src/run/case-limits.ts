/**
 * The resources of one gatherv/scatterv case (`vcoll run`, runCase, the benchmark), checked
 * before any rank starts: the simulated ranks' memory, the tree construction's p limit
 * (its dynamic program's tables), the model's costs (no overflowing times) and the data
 * (Σ counts × unit bytes × copies). Errors name the field as the caller spells it (`prefix`).
 */
import { sharedBlockSizes } from '../workloads/distributions.js';
import { type VAlgorithm } from '../collectives/types.js';
import { variantRow } from '../collectives/v-variants.js';
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import { requireFiniteCosts } from '../model/cost-model.js';
import { treeLimit } from '../trees/registry.js';
import { twoBlockDomains } from '../trees/two-block.js';
import {
  checkRunData,
  checkSeconds,
  checkSimRanks,
  runDataCopies,
  SIM_RUN_ADAPTIVE_RANK_BYTES,
  SIM_RUN_BINOMIAL_RANK_BYTES,
  SIM_RUN_LINEAR_RANK_BYTES,
  SIM_RUN_TREE_RANK_BYTES,
  SIM_RUN_TWO_BLOCK_RANK_BYTES,
  treeSeconds,
} from '../util/limits.js';
import type { HierarchicalRunCase } from './hierarchical-case.js';
import { caseModel, type RunAlgorithm, type RunCase, type TransportName } from './spec.js';

/** The tree construction (src/trees/registry.ts) a V algorithm builds at the root, if any. */
export function treeOfAlgorithm(algorithm: VAlgorithm): string | undefined {
  return variantRow(algorithm)?.tree;
}

/**
 * Simulator, per rank, a hierarchical gather or gatherv run of `vcoll run --algorithm
 * hierarchical` (TraffRougier14; one node structure shared by all ranks). Peak RSS per rank of
 * `vcoll run --transport sim --algorithm hierarchical --per-node 256` (gatherv, random, b = 100,
 * one repetition), Node's own ~60 MiB included: 15.7 KiB at p = 2^14, 13.8 KiB at 2^15, 12.6 KiB
 * at 2^16 (12.6–13.1 KiB there over placements, variants and 1 … 65536 ranks per node; the
 * regular gather, --dist same b = 8: 9.5 KiB), 8.95 KiB at 2^20 (4096 nodes × 256). Most of it is
 * garbage a smaller heap collects: the run at 2^16 also completes under a 300 MiB heap.
 */
export const SIM_RUN_HIERARCHICAL_RANK_BYTES = 11 * 1024;

/**
 * The same with adaptive trees at both levels (`--hier-tree adaptive`): the two constructions'
 * state on top. Peak RSS per rank, Node's own included, of `vcoll run --transport sim --p 65536
 * --algorithm hierarchical --per-node 256 --hier-tree adaptive --dist random --b 100`: 15.0 KiB
 * (gatherv), 14.3 KiB (scatterv).
 */
export const SIM_RUN_HIERARCHICAL_ADAPTIVE_RANK_BYTES = 16 * 1024;

/**
 * Adaptive trees, persistent (`--persistent`): every rank's plan — its roles from the
 * constructions, its planned receive buffers and message (planned-gather.ts, planned-scatter.ts)
 * — lives for the whole run. Peak RSS per rank, Node's own included, `--dist random --b 100`:
 * p = 2^15, 128 per node, gatherv 23.0 KiB (one-shot 18.2); p = 2^16, 256 per node, gatherv
 * 16.9 KiB, scatterv 17.6 KiB.
 */
export const SIM_RUN_HIERARCHICAL_ADAPTIVE_PERSISTENT_RANK_BYTES = 24 * 1024;

/** Bytes of JavaScript objects per simulated rank of a hierarchical run with `tree` at both levels (persistent: plans kept). */
export function simHierarchicalRankBytes(tree: string | undefined, persistent = false): number {
  if (tree !== 'adaptive') return SIM_RUN_HIERARCHICAL_RANK_BYTES;
  return persistent ? SIM_RUN_HIERARCHICAL_ADAPTIVE_PERSISTENT_RANK_BYTES : SIM_RUN_HIERARCHICAL_ADAPTIVE_RANK_BYTES;
}

/** Bytes of JavaScript objects per simulated rank of a case with `algorithm` (src/util/limits.ts, measured). */
export function simCaseRankBytes(c: { readonly algorithm: RunAlgorithm }): number {
  switch (c.algorithm) {
    case 'hierarchical':
      return SIM_RUN_HIERARCHICAL_RANK_BYTES;
    case 'linear':
      return SIM_RUN_LINEAR_RANK_BYTES;
    case 'binomial':
      return SIM_RUN_BINOMIAL_RANK_BYTES;
    case 'two-block':
      return SIM_RUN_TWO_BLOCK_RANK_BYTES;
    case 'adaptive':
      return SIM_RUN_ADAPTIVE_RANK_BYTES;
    default:
      return SIM_RUN_TREE_RANK_BYTES;
  }
}

/** TooLargeError when the case's tree construction cannot reach p (its dynamic program's tables) or would take too long. */
export function checkCaseTree(p: number, c: RunCase, prefix = ''): void {
  const tree = treeOfAlgorithm(c.algorithm);
  if (tree === undefined) return;
  const model = caseModel(c);
  const limit = treeLimit(tree, model);
  if (limit !== undefined && p > limit) {
    const kind = model.linear !== undefined ? 'homogeneous' : `non-homogeneous (${model.kind})`;
    throw new TooLargeError(`${prefix}p`, `${p} > ${limit}, the largest p of the '${tree}' tree under a ${kind} model`);
  }
  checkSeconds(`${prefix}p`, treeSeconds(tree, p), `building the '${tree}' tree for ${p} ranks`);
}

/**
 * Throws TooLargeError (or InvalidArgumentError for costs that overflow) before any work when
 * the case on p ranks of `transport` cannot be run within the limits of src/util/limits.ts.
 * Call after validateCase. O(p).
 */
export function checkCaseResources(transport: TransportName, p: number, c: RunCase, prefix = ''): void {
  const field = (f: string): string => `${prefix}${f}`;
  // the tree's own limits first: they say more than the memory the ranks would need
  checkCaseTree(p, c, prefix);
  if (transport === 'sim') checkSimRanks(p, field('p'), simCaseRankBytes(c), `simulating ${c.op} (${c.algorithm})`);
  const model = caseModel(c);
  const tree = treeOfAlgorithm(c.algorithm);
  const sizes = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  if (tree === 'two-block') {
    // the root would refuse these counts once every rank has started (minutes at millions of ranks): refuse them now
    try {
      twoBlockDomains(sizes);
    } catch (e) {
      if (e instanceof InvalidArgumentError) throw new InvalidArgumentError(field('dist'), `${c.dist}: ${e.detail}`);
      throw e;
    }
  }
  let total = 0;
  for (const x of sizes) total += x;
  checkRunData(field('b'), total, c.unitBytes, runDataCopies(p, c.algorithm));
  try {
    requireFiniteCosts(model, sizes);
  } catch (e) {
    if (e instanceof InvalidArgumentError) {
      throw new InvalidArgumentError(c.modelSpec !== undefined ? field('model-file') : field(e.field), e.detail);
    }
    throw e;
  }
}

/**
 * The resources of a hierarchical run (`vcoll run --algorithm hierarchical`), checked before
 * any rank starts: on the simulator the ranks' memory (SIM_RUN_HIERARCHICAL_RANK_BYTES each),
 * the data (copies as a tree's: blocks, the root's buffer and reference, data in flight), and
 * the model's costs. O(p).
 */
export function checkHierarchicalResources(transport: TransportName, p: number, hc: HierarchicalRunCase, prefix = ''): void {
  const c = hc.rankCase;
  if (transport === 'sim') {
    checkSimRanks(p, `${prefix}p`, simHierarchicalRankBytes(c.tree, c.persistent), `simulating ${c.collective} (hierarchical${c.tree === 'adaptive' ? ', adaptive trees' : ''}${c.persistent ? ', persistent' : ''})`);
  }
  const sizes = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  let total = 0;
  for (let i = 0; i < sizes.length; i++) total += sizes[i];
  checkRunData(`${prefix}b`, total, c.unitBytes, runDataCopies(p, 'hierarchical'));
  try {
    requireFiniteCosts(hc.model, sizes);
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw new InvalidArgumentError(hc.placement === 'model-file' ? `${prefix}model-file` : `${prefix}b`, e.detail);
    throw e;
  }
}
