/** `runSim`: the simulator's entry point (semantics in sim.ts, docs/MODEL.md "The simulator"). */
import { createWorldCommunicator } from '../../comm/group.js';
import { SimEndpoint } from './endpoint.js';
import { Simulation } from './sim.js';
import type { RankProgram, SimOptions, SimResult } from './types.js';

/**
 * Runs `program` once per rank (p ranks) under the virtual clock of `options.model` and
 * resolves with the virtual completion times, the programs' results and optionally a trace.
 * Each program gets its rank's world communicator (createWorldCommunicator over the rank's
 * SimEndpoint, so `split` works and `comm.clock` is the virtual clock). Rejects with a
 * CommunicationError on deadlock (listing the blocked ranks and what each waits for) or when
 * a rank's program throws (naming that rank).
 */
export function runSim<T>(p: number, program: RankProgram<T>, options: SimOptions): Promise<SimResult<T>> {
  let sim: Simulation;
  try {
    sim = new Simulation(p, options);
  } catch (e) {
    return Promise.reject(e);
  }
  return sim.run((rank) => program(createWorldCommunicator(new SimEndpoint(sim, rank), { endpointChecks: true })));
}
