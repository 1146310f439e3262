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
  SIM_RUN_BINOMIAL_RANK_BYTES,
  SIM_RUN_LINEAR_RANK_BYTES,
  SIM_RUN_TREE_RANK_BYTES,
  SIM_RUN_TWO_BLOCK_RANK_BYTES,
  treeSeconds,
} from '../util/limits.js';
import { caseModel, type RunCase, type TransportName } from './spec.js';

/** The tree construction (src/trees/registry.ts) a V algorithm builds at the root, if any. */
export function treeOfAlgorithm(algorithm: VAlgorithm): string | undefined {
  return variantRow(algorithm)?.tree;
}

/** Bytes of JavaScript objects per simulated rank of case `c` (src/util/limits.ts, measured). */
export function simCaseRankBytes(c: RunCase): number {
  switch (c.algorithm) {
    case 'linear':
      return SIM_RUN_LINEAR_RANK_BYTES;
    case 'binomial':
      return SIM_RUN_BINOMIAL_RANK_BYTES;
    case 'two-block':
      return SIM_RUN_TWO_BLOCK_RANK_BYTES;
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
