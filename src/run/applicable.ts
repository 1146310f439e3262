/** Whether an algorithm can run a case's block sizes (two-block needs at most two distinct sizes, seed 004 §5.2). */
import type { VAlgorithm } from '../collectives/types.js';
import { twoBlockDomains } from '../trees/two-block.js';

/** Why `algorithm` cannot run these sizes, or undefined when it can. */
export function notApplicable(algorithm: VAlgorithm, sizes: readonly number[]): string | undefined {
  if (algorithm !== 'two-block') return undefined;
  try {
    twoBlockDomains(sizes);
    return undefined;
  } catch {
    return 'more than two block sizes';
  }
}
