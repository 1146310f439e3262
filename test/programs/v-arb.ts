/** fast-check arbitraries of gatherv/scatterv cases (see v-cases.ts). */
import fc from 'fast-check';
import { DISTRIBUTIONS } from '../../src/workloads/distributions.js';
import type { VAlgorithm } from '../../src/collectives/types.js';
import type { CaseChoice } from './v-cases.js';

export function caseChoice(op: 'gatherv' | 'scatterv', algorithm: VAlgorithm, maxP = 64): fc.Arbitrary<CaseChoice> {
  return fc.record({
    op: fc.constant(op),
    algorithm: fc.constant(algorithm),
    p: fc.integer({ min: 1, max: maxP }),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    dist: fc.constantFrom(...DISTRIBUTIONS),
    unitBytes: fc.constantFrom(1, 2, 8),
    layout: fc.constantFrom('default' as const, 'gaps' as const, 'permuted' as const),
    zeros: fc.boolean(),
    inPlace: fc.boolean(),
    starts: fc.constantFrom(0, 0, 2),
  });
}
