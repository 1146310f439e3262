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
import { checkRunData, checkSeconds, checkSimRanks, runDataCopies, SIM_RUN_LINEAR_RANK_BYTES, SIM_RUN_TREE_RANK_BYTES, treeSeconds } from '../util/limits.js';
import { caseModel, type RunCase, type TransportName } from './spec.js';

/** The tree construction (src/trees/registry.ts) a V algorithm builds at the root, if any. */
export function treeOfAlgorithm(algorithm: VAlgorithm): string | undefined {
  return variantRow(algorithm)?.tree;
}

/**
 * Throws TooLargeError (or InvalidArgumentError for costs that overflow) before any work when
 * the case on p ranks of `transport` cannot be run within the limits of src/util/limits.ts.
 * Call after validateCase. O(p).
 */
export function checkCaseResources(transport: TransportName, p: number, c: RunCase, prefix = ''): void {
  const field = (f: string): string => `${prefix}${f}`;
  if (transport === 'sim') {
    const perRank = c.algorithm === 'linear' ? SIM_RUN_LINEAR_RANK_BYTES : SIM_RUN_TREE_RANK_BYTES;
    checkSimRanks(p, field('p'), perRank, `simulating ${c.op} (${c.algorithm})`);
  }
  const model = caseModel(c);
  const tree = treeOfAlgorithm(c.algorithm);
  if (tree !== undefined) {
    const limit = treeLimit(tree, model);
    if (limit !== undefined && p > limit) {
      const kind = model.linear !== undefined ? 'homogeneous' : `non-homogeneous (${model.kind})`;
      throw new TooLargeError(field('p'), `${p} > ${limit}, the largest p of the '${tree}' tree under a ${kind} model`);
    }
    checkSeconds(field('p'), treeSeconds(tree, p), `building the '${tree}' tree for ${p} ranks`);
  }
  const sizes = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
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
