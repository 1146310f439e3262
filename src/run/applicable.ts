/**
 * Whether an algorithm can run a case's block sizes: the 'counts' restrictions of its row in
 * the variant table (collectives/v-variants.ts; e.g. two-block needs at most two distinct
 * sizes, Traff17 §5.2).
 */
import type { VAlgorithm } from '../collectives/types.js';
import { failedRestriction, variantRow } from '../collectives/v-variants.js';
import type { CostModel } from '../model/cost-model.js';

/** Why `algorithm` cannot run these sizes (under `model`, when given), or undefined when it can. */
export function notApplicable(algorithm: VAlgorithm, sizes: readonly number[], model?: CostModel): string | undefined {
  const row = variantRow(algorithm);
  if (row === undefined) return undefined;
  return failedRestriction(row, { p: sizes.length, model, counts: sizes }, ['counts', 'model'])?.[1];
}
