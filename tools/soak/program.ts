/**
 * The soak's rank program for worker threads and MPI (`runThreads` / `runMpi` module):
 * runs the cases of one job one after another on the world communicator and returns, per
 * case, the mismatches this rank found.
 */
import type { Communicator } from '../../src/index.js';
import type { Case } from './cases.js';
import { execCase } from './exec.js';

export interface SoakJobArgs {
  readonly cases: readonly Case[];
}

export default async function soakProgram(comm: Communicator, args: SoakJobArgs): Promise<string[][]> {
  const out: string[][] = [];
  for (const c of args.cases) out.push(await execCase(comm, c));
  return out;
}
