/**
 * gatherv and scatterv conformance on the simulator: every algorithm, p 1..64, random roots,
 * every distribution with and without empty blocks, unitBytes 1/2/8, default, gapped and
 * permuted displacements, in place or not, once or persistent.
 * - gatherv: the root's buffer equals the reference byte for byte (sentinel bytes outside the
 *   blocks untouched), send buffers unchanged;
 * - scatterv: every rank receives exactly its block (the bytes after it untouched), the root's
 *   send buffer is unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GATHERV_VARIANTS, portableVariants, SCATTERV_VARIANTS, type GathervVariant, type ScattervVariant } from '../src/collectives/index.js';
import type { VAlgorithm } from '../src/collectives/types.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { caseChoice } from './programs/v-arb.js';
import { makeCase, runCaseRank } from './programs/v-cases.js';
import { BIG } from './helpers/big.js';

const OPS = [
  { op: 'gatherv', variants: GATHERV_VARIANTS, what: 'blocks land at their displacements, nothing else is written' },
  { op: 'scatterv', variants: SCATTERV_VARIANTS, what: 'every rank receives exactly its block' },
] as const;

for (const { op, variants, what } of OPS) {
  // mpi-native runs only over MPI (test/mpi/native.mpi.ts)
  const algorithms: VAlgorithm[] = [...portableVariants<GathervVariant | ScattervVariant>(variants).map((v) => v.name), 'auto'];
  describe(`${op} on the simulator`, () => {
    it.each(algorithms)(`%s: ${what}`, async (algorithm) => {
      await fc.assert(
        fc.asyncProperty(caseChoice(op, algorithm, BIG ? 256 : 64), async (ch) => {
          const c = makeCase(ch);
          const res = await runSim(c.p, (comm) => runCaseRank(comm, c), { model: linearModel(c.model), unitBytes: c.unitBytes });
          for (const r of res.results) expect(r.mismatch).toBeUndefined();
          const info = res.results[c.root].info;
          if (algorithm !== 'auto') expect(info.algorithm).toBe(algorithm);
          for (const r of res.results) expect(r.info).toEqual(info);
          if (c.p === 1) expect(info.height).toBe(0);
          else expect(info.height).toBeGreaterThanOrEqual(1);
        }),
        { numRuns: BIG ? 200 : 40 },
      );
    });
  });
}
