/**
 * Threads program for test/adaptive-threads.test.ts: one rank runs the adaptive gatherv and
 * scatterv (persistent, started `repeats` times with fresh data) and reports what it checked.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { ADAPTIVE_GATHERV } from '../../src/collectives/gatherv/adaptive.js';
import { ADAPTIVE_SCATTERV } from '../../src/collectives/scatterv/adaptive.js';
import { linearModel } from '../../src/model/cost-model.js';
import { checkGathered, checkScattered, gatherSetup, scatterSetup, type AdaptiveFlags, type Instance } from './adaptive-common.js';

export interface AdaptiveThreadsArgs {
  readonly inst: Instance;
  readonly flags: AdaptiveFlags;
  readonly repeats: number;
  readonly model: { alpha: number; beta: number; gamma: number };
}

export interface AdaptiveThreadsResult {
  readonly rank: number;
  readonly bad: string[];
  readonly constructionRounds: number;
}

export default async function adaptiveThreads(comm: Communicator, args: AdaptiveThreadsArgs): Promise<AdaptiveThreadsResult> {
  const model = linearModel(args.model);
  const bad: string[] = [];
  const g = gatherSetup(comm, args.inst, model, args.flags, 0);
  const gp = await ADAPTIVE_GATHERV.init(g.input);
  const s = scatterSetup(comm, args.inst, model, args.flags, 0);
  const sp = await ADAPTIVE_SCATTERV.init(s.input);
  for (let salt = 0; salt < args.repeats; salt++) {
    g.refill(salt);
    await gp.start();
    if (g.recv) bad.push(...checkGathered(args.inst, g.recv, salt).map((b) => `gather ${salt}: ${b}`));
    s.refill(salt + 100);
    await sp.start();
    bad.push(...checkScattered(comm.rank, s.recv, salt + 100).map((b) => `scatter ${salt}: ${b}`));
  }
  return { rank: comm.rank, bad, constructionRounds: gp.info.constructionRounds };
}
