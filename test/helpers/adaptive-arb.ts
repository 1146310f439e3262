/** fast-check arbitraries shared by the adaptive gatherv and scatterv tests. */
import fc from 'fast-check';
import { scrambledDispls, type Instance } from '../programs/adaptive-common.js';
import { BIG } from './big.js';
import { rng } from './random.js';

/** fc.array's size: larger arrays under VCOLL_BIG. */
export const ARRAY_SIZE = { size: BIG ? ('large' as const) : ('medium' as const) };

/** Instances of up to maxP ranks: zero, small and large blocks, any root, unit 1 or 4 bytes, scrambled displacements or not. */
export const instanceArb = (maxP: number): fc.Arbitrary<Instance> =>
  fc
    .record({
      sizes: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 200 })), { minLength: 1, maxLength: maxP, ...ARRAY_SIZE }),
      rootSeed: fc.nat(),
      unitBytes: fc.constantFrom(1, 1, 4),
      scramble: fc.boolean(),
      seed: fc.nat(),
    })
    .map(({ sizes, rootSeed, unitBytes, scramble, seed }): Instance => ({
      sizes,
      root: rootSeed % sizes.length,
      unitBytes,
      displs: scramble ? scrambledDispls(sizes, rng(seed)) : undefined,
    }));
