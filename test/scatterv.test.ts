/**
 * scatterv conformance on the simulator: every algorithm, p 1..64, random roots, every
 * distribution with and without empty blocks, unitBytes 1/2/8, default, gapped and permuted
 * displacements, in place or not, once or persistent: every rank receives exactly its block
 * (the bytes after it untouched), the root's send buffer is unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCATTERV_VARIANTS } from '../src/collectives/index.js';
import type { VAlgorithm } from '../src/collectives/types.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { caseChoice } from './programs/v-arb.js';
import { makeCase, runCaseRank } from './programs/v-cases.js';
import { BIG } from './helpers/big.js';


const ALGORITHMS: VAlgorithm[] = [...SCATTERV_VARIANTS.map((v) => v.name), 'auto'];

describe('scatterv on the simulator', () => {
  it.each(ALGORITHMS)('%s: every rank receives exactly its block', async (algorithm) => {
    await fc.assert(
      fc.asyncProperty(caseChoice('scatterv', algorithm, BIG ? 256 : 64), async (ch) => {
        const c = makeCase(ch);
        const res = await runSim(c.p, (comm) => runCaseRank(comm, c), { model: linearModel(c.model), unitBytes: c.unitBytes });
        for (const r of res.results) expect(r.mismatch).toBeUndefined();
        const info = res.results[c.root].info;
        if (algorithm !== 'auto') expect(info.algorithm).toBe(algorithm);
        for (const r of res.results) expect(r.info).toEqual(info);
      }),
      { numRuns: BIG ? 200 : 40 },
    );
  });
});
