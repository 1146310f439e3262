/**
 * The data phases of the binomial bcast (bcast.ts), the regular binomial gather and scatter
 * (gather.ts, scatter.ts) and the dissemination barrier (barrier.ts) as schedules
 * (src/comm/schedule.ts), run once per call by the transport's executor (bindSchedule with
 * `once`): the same messages in the same order with the same waits as the program code they
 * replace, so the simulator's times are unchanged.
 *
 * - bcast, binomial (ordered binomial tree of tree.ts): a rank receives the whole buffer from
 *   its parent (one step), then sends it to its children one at a time, largest subtree
 *   first (one step of window 1). Buffer: 'buf'.
 * - gather (ordered binomial tree): a leaf sends 'send'; another rank receives every child's
 *   range into its buffer ('recv' at the root, 'buf' elsewhere: its subtree's blocks in rank
 *   order) and copies its own block in, all at once, then sends the buffer to its parent.
 * - scatter: a leaf receives into 'recv'; another rank receives its subtree's range into
 *   'buf' (the root has it in 'send'), sends each child its range, largest subtree first, one
 *   at a time, then copies its own block out into 'recv'.
 * - barrier (Hensgen, Finkel and Manber 1988): round k = 0 … ⌈log₂p⌉−1 is one step of an empty
 *   receive from (r − 2^k) mod p and an empty send to (r + 2^k) mod p, both at once
 *   (sendrecv.ts). No buffer.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { RankSchedule, ScheduleOp, ScheduleStep, Span } from '../../comm/schedule.js';
import { bindSchedule } from '../../schedule/run.js';
import { scheduleOfShape } from '../../schedule/shapes.js';

export { scheduleOfShape } from '../../schedule/shapes.js';
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

/** `bytes` bytes of buffer `buffer` from `from`: one range, or none when empty. */
const range = (buffer: number, from: number, bytes: number): Span => (bytes > 0 ? [{ buffer, offset: from, length: bytes }] : []);

/** Rank `rank`'s schedule of the binomial gather of m-byte blocks to `root` (p ranks). */
export function gatherSchedule(p: number, root: number, rank: number, m: number, tag: number): RankSchedule {
  const role = orderedBinomialRole(p, root, rank);
  if (role.children.length === 0 && role.parent >= 0) {
    return { rank, buffers: [{ name: 'send', bytes: m }], steps: [{ window: 1, ops: [{ kind: 'send', peer: role.parent, tag, data: range(0, 0, m) }] }] };
  }
  const { lo, hi } = role;
  const isRoot = role.parent < 0;
  const size = (hi - lo + 1) * m;
  const buffers = [
    { name: 'send', bytes: m },
    { name: isRoot ? 'recv' : 'buf', bytes: isRoot ? p * m : size },
  ];
  const ops: ScheduleOp[] = [...role.children]
    .reverse()
    .map((c) => ({ kind: 'recv', peer: c.peer, tag, data: range(1, (c.lo - lo) * m, (c.hi - c.lo + 1) * m) }));
  // the own block's copy overlaps the wait for the first child
  ops.push({ kind: 'copy', from: range(0, 0, m), to: range(1, (rank - lo) * m, m) });
  const steps: ScheduleStep[] = [{ window: ops.length, ops }];
  if (!isRoot) steps.push({ window: 1, ops: [{ kind: 'send', peer: role.parent, tag, data: range(1, 0, size) }] });
  return { rank, buffers, steps };
}

/** Rank `rank`'s schedule of the binomial scatter of m-byte blocks from `root` (p ranks). */
export function scatterSchedule(p: number, root: number, rank: number, m: number, tag: number): RankSchedule {
  const role = orderedBinomialRole(p, root, rank);
  if (role.parent >= 0 && role.children.length === 0) {
    return { rank, buffers: [{ name: 'recv', bytes: m }], steps: [{ window: 1, ops: [{ kind: 'recv', peer: role.parent, tag, data: range(0, 0, m) }] }] };
  }
  const { lo, hi } = role;
  const isRoot = role.parent < 0;
  const size = (hi - lo + 1) * m;
  const buffers = [
    { name: 'recv', bytes: m },
    { name: isRoot ? 'send' : 'buf', bytes: isRoot ? p * m : size },
  ];
  const steps: ScheduleStep[] = [];
  if (!isRoot) steps.push({ window: 1, ops: [{ kind: 'recv', peer: role.parent, tag, data: range(1, 0, size) }] });
  const ops: ScheduleOp[] = role.children.map((c) => ({ kind: 'send', peer: c.peer, tag, data: range(1, (c.lo - lo) * m, (c.hi - c.lo + 1) * m) }));
  ops.push({ kind: 'copy', from: range(1, (rank - lo) * m, m), to: range(0, 0, m) });
  steps.push({ window: 1, ops });
  return { rank, buffers, steps };
}

/**
 * The error of a receive that got another length than expected: expectBytes's (InvalidArgumentError
 * naming `field`) when shorter, the transport's truncation error when longer.
 */
export function lengthError(comm: Communicator, field: string): (peer: number, tag: number, expected: number, got: number | undefined, cause: unknown) => Error {
  return (peer, tag, expected, got, cause) => {
    if (got === undefined) return cause as Error;
    try {
      expectBytes(comm, field, { source: peer, tag, bytes: got }, expected);
    } catch (e) {
      return e as Error;
    }
    return new Error(`receive of ${got} bytes where ${expected} were expected`);
  };
}

/** Runs `schedule` once with `buffers` (one per schedule buffer; those named 'buf' are allocated here), receive lengths checked as expectBytes on `field`. */
export async function runBasicSchedule(comm: Communicator, schedule: RankSchedule, named: Readonly<Record<string, Uint8Array | undefined>>, field: string): Promise<void> {
  const buffers = schedule.buffers.map((b) => named[b.name] ?? new Uint8Array(b.bytes));
  await bindSchedule(comm, schedule, buffers, { recvError: lengthError(comm, field), once: true }).run();
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
  // a shorter message than the buffer: the ranks' lengths differ (expectBytes's error)
  const { size: p, rank } = comm;
  const rs = scheduleOfShape(`bcast ${p} ${root} ${rank} ${buf.length} ${tag}`, () => bcastSchedule(p, root, rank, buf.length, tag));
  await runBasicSchedule(comm, rs, { buf }, 'buf');
}

/** Runs the dissemination barrier as a schedule. */
export async function runBarrierSchedule(comm: Communicator, tag: number): Promise<void> {
  const { size: p, rank } = comm;
  await bindSchedule(comm, scheduleOfShape(`barrier ${p} ${rank} ${tag}`, () => barrierSchedule(p, rank, tag)), [], { once: true }).run();
}
