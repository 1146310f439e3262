/**
 * A persistent hierarchical gatherv or scatterv (the shape of MPI-4.0 §6.13's
 * MPI_Gatherv_init / MPI_Scatterv_init: arguments and buffers bound at init, the contents of
 * the buffers free to change between starts): what a caller pays once and what it pays per
 * start() (hierarchicalGathervInit / hierarchicalScattervInit in index.ts).
 *
 * The plan is the one every persistent collective here is (call-scope.ts plannedInCall,
 * node-schedule.ts persistentPlan): planned in one call slot of the communicator, every start()
 * in the next call number, so the data of two plans, or of a plan and a call, never match each
 * other's receives; a start() before the previous one has resolved is refused
 * (InvalidArgumentError 'start').
 */
import type { Communicator } from '../../comm/communicator.js';
import { plannedInCall } from '../call-scope.js';
import { persistentPlan } from '../node-schedule.js';
import type { PersistentCollective } from '../types.js';
import type { HierarchicalInfo } from './types.js';

/** A planned hierarchical gatherv or scatterv: start() runs its data phase; `info` what it reports (constructionRounds: the plan's). */
export type HierarchicalPlan = PersistentCollective<HierarchicalInfo>;

/**
 * Plans on `comm` in a call slot of its own: `init(scope)` validates and plans (its messages
 * travel in that slot) and returns the data phase, which every start() runs in the next slot.
 */
export function hierarchicalPlan(comm: Communicator, init: (scope: Communicator) => Promise<{ info: HierarchicalInfo; run: () => Promise<void> }>): Promise<HierarchicalPlan> {
  return plannedInCall(comm, (scope) => init(scope).then(({ info, run }) => persistentPlan(scope, info, run)));
}
