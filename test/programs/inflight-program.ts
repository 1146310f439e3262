/** Worker-threads / MPI program: mixes of collectives in flight together (inflight.ts), one after the other. */
import type { Communicator } from '../../src/comm/communicator.js';
import { runMixRank, type Mix } from './inflight.js';

export default async function program(comm: Communicator, mixes: Mix[]): Promise<string[][]> {
  const out: string[][] = [];
  for (const mix of mixes) out.push(await runMixRank(comm, mix));
  return out;
}
