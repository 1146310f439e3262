/** Rank program: several intergroup allgather cases (inter-program.ts) in one run (one MPI job), each on the whole world. */
import type { Communicator } from '../../src/comm/communicator.js';
import interProgram, { type InterCase, type InterResult } from './inter-program.js';

export default async function interBatch(comm: Communicator, cases: readonly InterCase[]): Promise<InterResult[]> {
  const out: InterResult[] = [];
  for (const c of cases) out.push(await interProgram(comm, c));
  return out;
}
