/**
 * Worker-threads program: gatherv/scatterv cases (v-cases.ts) run one after the other on
 * every rank (one worker start-up for many cases); returns each case's outcome.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { runCaseRank, type RankOutcome, type VCase } from './v-cases.js';

export default async function program(comm: Communicator, cases: VCase | VCase[]): Promise<RankOutcome[]> {
  const out: RankOutcome[] = [];
  for (const c of Array.isArray(cases) ? cases : [cases]) out.push(await runCaseRank(comm, c));
  return out;
}
