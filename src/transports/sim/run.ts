/** `runSim`: the simulator's entry point (semantics in sim.ts, docs/MODEL.md "The simulator"). */
import { createWorldCommunicator } from '../../comm/group.js';
import { badTimeout } from '../../comm/timeout.js';
import { InvalidArgumentError } from '../../errors.js';
import { checkSimRanks } from '../../util/limits.js';
import { SimEndpoint } from './endpoint.js';
import { Simulation } from './sim.js';
import type { RankProgram, SimOptions, SimResult } from './types.js';

/** Options of runSim beyond the simulation's own. */
export interface SimRunOptions {
  /**
   * Per-operation timeout in ms of wall-clock time (> 0; default none). Deadlocks need none
   * here (the simulator finds them exactly, at once); it bounds how long, in real time, an
   * operation may wait while the simulation of the other ranks goes on (a guard on huge runs):
   * then it fails with a TimeoutError and the run with it. Virtual times are unchanged.
   */
  readonly timeoutMs?: number;
}

/**
 * Runs `program` once per rank (p ranks) under the virtual clock of `options.model` and
 * resolves with the virtual completion times, the programs' results and optionally a trace.
 * Each program gets its rank's world communicator (createWorldCommunicator over the rank's
 * SimEndpoint, so `split` works and `comm.clock` is the virtual clock). Rejects with a
 * CommunicationError on deadlock (listing the blocked ranks and what each waits for) or when
 * a rank's program throws (naming that rank).
 */
export function runSim<T>(p: number, program: RankProgram<T>, options: SimOptions & SimRunOptions): Promise<SimResult<T>> {
  let sim: Simulation;
  const timeoutMs = options.timeoutMs;
  try {
    const bad = badTimeout(timeoutMs ?? Infinity);
    if (bad !== undefined) throw new InvalidArgumentError('timeoutMs', bad);
    // the ranks' own state must fit before any is allocated (TooLargeError naming p)
    if (typeof p === 'number' && Number.isInteger(p) && p > 0) checkSimRanks(p);
    sim = new Simulation(p, options);
  } catch (e) {
    return Promise.reject(e);
  }
  return sim.run((rank) => program(createWorldCommunicator(new SimEndpoint(sim, rank), { endpointChecks: true, timeoutMs })));
}
