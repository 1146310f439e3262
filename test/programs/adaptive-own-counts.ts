/**
 * Threads program for test/adaptive-own-counts.test.ts: one adaptive gatherv or scatterv where
 * every rank passes its own count `own[rank]` while the root's counts are `inst.sizes`.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { ADAPTIVE_GATHERV } from '../../src/collectives/gatherv/adaptive.js';
import { ADAPTIVE_SCATTERV } from '../../src/collectives/scatterv/adaptive.js';
import { linearModel } from '../../src/model/cost-model.js';
import { checkGathered, gatherSetup, scatterSetup, type Instance } from './adaptive-common.js';

export interface OwnCountsArgs {
  readonly inst: Instance;
  readonly own: readonly number[];
  readonly op: 'gatherv' | 'scatterv';
  readonly overlap: boolean;
}

export default async function ownCounts(comm: Communicator, args: OwnCountsArgs): Promise<string[]> {
  const model = linearModel({ alpha: 10, beta: 1, gamma: 0 });
  const me = comm.rank;
  const own = args.own[me];
  if (args.op === 'gatherv') {
    const g = gatherSetup(comm, args.inst, model, { overlap: args.overlap }, 0);
    const input = own === args.inst.sizes[me] ? g.input : { ...g.input, count: own, send: new Uint8Array(own).fill(me) };
    const plan = await ADAPTIVE_GATHERV.init(input);
    await plan.start();
    return g.recv ? checkGathered(args.inst, g.recv, 0) : [];
  }
  const s = scatterSetup(comm, args.inst, model, {}, 0);
  s.refill(0);
  const recv = own === args.inst.sizes[me] ? s.recv : new Uint8Array(own);
  const plan = await ADAPTIVE_SCATTERV.init({ ...s.input, count: own, recv });
  await plan.start();
  return [];
}
