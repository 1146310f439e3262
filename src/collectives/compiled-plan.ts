/**
 * A persistent gatherv/scatterv plan whose data phase is a compiled schedule
 * (src/comm/schedule.ts): the rank's user buffers and a packed buffer bound once at init,
 * `start()` one run of the schedule by the transport's executor (schedule/run.ts
 * bindSchedule: the simulator's engine, the threads' channels, MPI in C, or the portable
 * executor), so nothing is allocated or looked up per start.
 */
import type { Communicator } from '../comm/communicator.js';
import type { BoundSchedule, ScheduleOptions } from '../comm/schedule.js';
import { bindSchedule } from '../schedule/run.js';
import { scratchBuffer } from '../comm/scratch.js';
import type { VRankDescription } from './schedule-builder.js';
import type { RankSchedule } from '../comm/schedule.js';
import { boundPlan } from './node-schedule.js';
import type { CollectiveInfo, PersistentCollective } from './types.js';
import type { GathervPlanInput, ScattervPlanInput, VPlanInput } from './variant.js';

const EMPTY = new Uint8Array(0);

/** What a rank of a plan input knows, as the schedule compilers take it. */
export function describeRank(input: VPlanInput): VRankDescription {
  const { comm } = input;
  return {
    rank: comm.rank,
    p: comm.size,
    root: input.root,
    unitBytes: input.unitBytes,
    count: input.count,
    // fixed shape (no conditional spread: V8 makes a hidden class per object for a spread followed by properties)
    counts: input.counts !== undefined && input.displs !== undefined ? input.counts : undefined,
    displs: input.counts !== undefined && input.displs !== undefined ? input.displs : undefined,
    inPlace: input.inPlace,
    ports: input.model.ports,
    copyAll: input.model.copyAll,
  };
}

/**
 * `schedule` (compiled for `input`'s rank) bound for its transport's executor: its buffers
 * 'send' and 'recv' are the user's (their first bytes, as many as the schedule binds),
 * 'packed' one allocated here.
 */
export function bindPlanSchedule(input: GathervPlanInput | ScattervPlanInput, schedule: RankSchedule, options: ScheduleOptions = {}): BoundSchedule {
  const buffers = schedule.buffers.map((b) => {
    if (b.name === 'packed') return scratchBuffer(input.comm, b.bytes);
    const user = b.name === 'send' ? input.send : b.name === 'recv' ? input.recv : undefined;
    if (user === undefined) {
      if (b.bytes === 0) return EMPTY;
      throw new Error(`compiledPlan: no user buffer '${b.name}' for the schedule's ${b.bytes} bytes`);
    }
    return user.subarray(0, b.bytes);
  });
  // every field written (a spread followed by a new property gets a hidden class of its own in V8)
  const bound = input.once === true ? { recvError: options.recvError, combine: options.combine, once: true } : options;
  return bindSchedule(input.comm, schedule, buffers, bound);
}

/** The persistent plan whose start() runs `bound` (and whose startBlocking() does, where the executor can). */
export function schedulePlan(comm: Communicator, info: CollectiveInfo, bound: BoundSchedule): PersistentCollective {
  return boundPlan(comm, info, bound);
}

/** The persistent plan whose start() runs `schedule` (bindPlanSchedule). */
export function compiledPlan(
  input: GathervPlanInput | ScattervPlanInput,
  schedule: RankSchedule,
  info: CollectiveInfo,
  options: ScheduleOptions = {},
): PersistentCollective {
  return schedulePlan(input.comm, info, bindPlanSchedule(input, schedule, options));
}
