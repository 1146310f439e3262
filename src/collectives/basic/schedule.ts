/**
 * The data phases of the binomial bcast (bcast.ts) and of the dissemination barrier
 * (barrier.ts) as schedules (src/comm/schedule.ts), run once per call by the transport's
 * executor (bindSchedule with `once`): the same messages in the same order with the same
 * waits as the program code they replace, so the simulator's times are unchanged.
 *
 * - bcast, binomial (ordered binomial tree of tree.ts): a rank receives the whole buffer from
 *   its parent (one step), then sends it to its children one at a time, largest subtree
 *   first (one step of window 1). Buffer: 'buf'.
 * - barrier (Hensgen, Finkel and Manber 1988): round k = 0 … ⌈log₂p⌉−1 is one step of an empty
 *   receive from (r − 2^k) mod p and an empty send to (r + 2^k) mod p, both at once
 *   (sendrecv.ts). No buffer.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { RankSchedule, ScheduleOp, ScheduleStep } from '../../comm/schedule.js';
import { bindSchedule } from '../../schedule/run.js';
import { expectBytes } from './validate.js';
import { orderedBinomialRole } from './tree.js';

/** Rank `rank`'s schedule of a binomial bcast of `bytes` bytes from `root` (p ranks). */
export function bcastSchedule(p: number, root: number, rank: number, bytes: number, tag: number): RankSchedule {
  const role = orderedBinomialRole(p, root, rank);
  const whole = bytes > 0 ? [{ buffer: 0, offset: 0, length: bytes }] : [];
  const steps: ScheduleStep[] = [];
  if (role.parent >= 0) steps.push({ window: 1, ops: [{ kind: 'recv', peer: role.parent, tag, data: whole }] });
  const sends: ScheduleOp[] = role.children.map((c) => ({ kind: 'send', peer: c.peer, tag, data: whole }));
  if (sends.length > 0) steps.push({ window: 1, ops: sends });
  return { rank, buffers: [{ name: 'buf', bytes }], steps };
}

/** Rank `rank`'s schedule of the dissemination barrier over p ranks. */
export function barrierSchedule(p: number, rank: number, tag: number): RankSchedule {
  const steps: ScheduleStep[] = [];
  for (let d = 1; d < p; d *= 2) {
    steps.push({
      window: 2,
      ops: [
        { kind: 'recv', peer: (rank - d + p) % p, tag, data: [] },
        { kind: 'send', peer: (rank + d) % p, tag, data: [] },
      ],
    });
  }
  return { rank, buffers: [], steps };
}

/** Runs the binomial bcast of `buf` from `root` as a schedule (bcast.ts has checked the arguments). */
export async function runBcastSchedule(comm: Communicator, buf: Uint8Array, root: number, tag: number): Promise<void> {
  const rs = bcastSchedule(comm.size, root, comm.rank, buf.length, tag);
  // a shorter message than the buffer: the ranks' lengths differ (expectBytes's error)
  const recvError = (peer: number, _tag: number, expected: number, got: number | undefined, cause: unknown): Error => {
    if (got === undefined) return cause as Error;
    try {
      expectBytes(comm, 'buf', { source: peer, tag, bytes: got }, expected);
    } catch (e) {
      return e as Error;
    }
    return new Error(`bcast: receive of ${got} bytes where ${expected} were expected`);
  };
  await bindSchedule(comm, rs, [buf], { recvError, once: true }).run();
}

/** Runs the dissemination barrier as a schedule. */
export async function runBarrierSchedule(comm: Communicator, tag: number): Promise<void> {
  await bindSchedule(comm, barrierSchedule(comm.size, comm.rank, tag), [], { once: true }).run();
}
