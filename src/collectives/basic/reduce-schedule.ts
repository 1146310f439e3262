/**
 * The data phases of reduce (reduce.ts, ordered binomial tree), allreduce (allreduce.ts,
 * recursive doubling with the non-power-of-two fold) and exscan (exscan.ts, recursive
 * doubling) as schedules (src/comm/schedule.ts) with
 * combine operations, run once per call by the transport's executor (bindSchedule with
 * `once` and the call's operator): the same messages, copies and waits in the same order as
 * the program code they replace, so the simulator's times are unchanged (combining is local
 * computation, not charged). Chan et al. 2007 and Thakur, Rabenseifner and Gropp 2005, as
 * cited by Traff18 §1.
 *
 * Which buffer holds a rank's partial result changes as the code swaps its work arrays; here
 * the compiler follows it, so the schedule's buffers stay fixed and a combine is always
 * `into := into ⊕ from` with `into` the lower-ranked range (the left operand: non-commutative
 * operators stay correct).
 *
 * - reduce: buffers 'send', 'recv' (the root's; none elsewhere), 'acc' (non-root ranks with
 *   children), 'part0' … (one per child). Step 0: every child's receive, then the copy of
 *   'send' into the partial result (none at the root in place); step 1: the combines in
 *   reduction order (each child's range adjacent to what is combined so far), then the send
 *   to the parent, or at the root the copy of the result into 'recv' where it is elsewhere.
 *   A leaf sends 'send' itself.
 * - allreduce: buffers 'send', 'recv', 'acc', 'tmp' (the partial result moves between the
 *   last two). The fold's even rank sends, its odd rank receives and combines; each round of
 *   recursive doubling is one step (receive, then send, as sendrecv.ts) whose combine opens
 *   the next step; the fold's odd rank sends the result back; the result is copied into 'recv'.
 * - exscan: likewise, round by round, with the prefix (the reduction over the ranks below)
 *   kept beside the partial result: 'partial', 'tmp', 'scratch', 'prefix'.
 */
import { bytesOf, type Communicator } from '../../comm/communicator.js';
import type { CombineOp, RankSchedule, ScheduleCombiner, ScheduleOp, ScheduleStep, Span } from '../../comm/schedule.js';
import { bindSchedule } from '../../schedule/run.js';
import { numericKind, type CombineFn, type NumericArray, type ReduceOp } from './ops.js';
import { orderedBinomialRole } from './tree.js';
import { lengthError } from './schedule.js';

const whole = (buffer: number, bytes: number): Span => (bytes > 0 ? [{ buffer, offset: 0, length: bytes }] : []);
const combineOp = (into: number, from: number, bytes: number): CombineOp => ({ kind: 'combine', into: whole(into, bytes), from: whole(from, bytes) });

/**
 * Rank `rank`'s schedule of the reduce of `bytes` bytes to `root` over p ranks; `inPlace`:
 * the root's `recv` is its `send` (no copy of it).
 */
export function reduceSchedule(p: number, root: number, rank: number, bytes: number, tag: number, inPlace = false): RankSchedule {
  const role = orderedBinomialRole(p, root, rank);
  if (role.children.length === 0 && role.parent >= 0) {
    return { rank, buffers: [{ name: 'send', bytes }], steps: [{ window: 1, ops: [{ kind: 'send', peer: role.parent, tag, data: whole(0, bytes) }] }] };
  }
  const isRoot = role.parent < 0;
  const buffers = [
    { name: 'send', bytes },
    { name: 'recv', bytes: isRoot ? bytes : 0 },
  ];
  const SEND = 0;
  const RECV = 1;
  let acc = isRoot ? RECV : buffers.push({ name: 'acc', bytes }) - 1;
  const kids = [...role.children].reverse();
  const parts = kids.map((_, i) => buffers.push({ name: `part${i}`, bytes }) - 1);
  const first: ScheduleOp[] = kids.map((c, i) => ({ kind: 'recv', peer: c.peer, tag, data: whole(parts[i], bytes) }));
  if (!(isRoot && inPlace)) first.push({ kind: 'copy', from: whole(SEND, bytes), to: whole(acc, bytes) });
  const second: ScheduleOp[] = [];
  let lo = rank;
  kids.forEach((c, i) => {
    if (c.hi < lo) {
      // the child's range is lower: its part := part ⊕ acc becomes the partial result
      second.push(combineOp(parts[i], acc, bytes));
      acc = parts[i];
      lo = c.lo;
    } else {
      second.push(combineOp(acc, parts[i], bytes));
    }
  });
  if (!isRoot) second.push({ kind: 'send', peer: role.parent, tag, data: whole(acc, bytes) });
  else if (acc !== RECV) second.push({ kind: 'copy', from: whole(acc, bytes), to: whole(RECV, bytes) });
  const steps: ScheduleStep[] = [];
  if (first.length > 0) steps.push({ window: first.length, ops: first });
  if (second.length > 0) steps.push({ window: second.length, ops: second });
  return { rank, buffers, steps };
}

/** Rank `rank`'s schedule of the allreduce of `bytes` bytes over p ranks. */
export function allreduceSchedule(p: number, rank: number, bytes: number, tag: number): RankSchedule {
  const SEND = 0;
  const RECV = 1;
  let acc = 2;
  let tmp = 3;
  const buffers = [
    { name: 'send', bytes },
    { name: 'recv', bytes },
    { name: 'acc', bytes },
    { name: 'tmp', bytes },
  ];
  const steps: ScheduleStep[] = [];
  // operations waiting for the next step (a copy or combine opens it)
  let pending: ScheduleOp[] = [{ kind: 'copy', from: whole(SEND, bytes), to: whole(acc, bytes) }];
  const step = (ops: ScheduleOp[]): void => {
    const all = [...pending, ...ops];
    pending = [];
    steps.push({ window: all.length, ops: all });
  };
  const swap = (): void => {
    [acc, tmp] = [tmp, acc];
  };
  let pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const rem = p - pof2;
  let newrank: number;
  if (rank < 2 * rem) {
    if (rank % 2 === 0) {
      step([{ kind: 'send', peer: rank + 1, tag, data: whole(acc, bytes) }]);
      newrank = -1;
    } else {
      step([{ kind: 'recv', peer: rank - 1, tag, data: whole(tmp, bytes) }]);
      pending.push(combineOp(tmp, acc, bytes));
      swap();
      newrank = rank >> 1;
    }
  } else {
    newrank = rank - rem;
  }
  if (newrank >= 0) {
    for (let mask = 1; mask < pof2; mask *= 2) {
      const newdst = newrank ^ mask;
      const dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
      step([
        { kind: 'recv', peer: dst, tag, data: whole(tmp, bytes) },
        { kind: 'send', peer: dst, tag, data: whole(acc, bytes) },
      ]);
      if (newdst < newrank) {
        pending.push(combineOp(tmp, acc, bytes));
        swap();
      } else {
        pending.push(combineOp(acc, tmp, bytes));
      }
    }
  }
  if (rank < 2 * rem) {
    if (rank % 2 === 1) step([{ kind: 'send', peer: rank - 1, tag, data: whole(acc, bytes) }]);
    else step([{ kind: 'recv', peer: rank + 1, tag, data: whole(acc, bytes) }]);
  }
  step([{ kind: 'copy', from: whole(acc, bytes), to: whole(RECV, bytes) }]);
  return { rank, buffers, steps };
}

/**
 * Rank `rank`'s schedule of the exscan of `bytes` bytes over p ≥ 2 ranks (exscan.ts);
 * `hasRecv`: the rank passed `recv` (rank 0 may not). Buffers 'send', 'recv', 'partial',
 * 'tmp', 'scratch', 'prefix'.
 */
export function exscanSchedule(p: number, rank: number, bytes: number, tag: number, hasRecv: boolean): RankSchedule {
  const SEND = 0;
  const RECV = 1;
  let partial = 2;
  let tmp = 3;
  let scratch = 4;
  let prefix = -1;
  const PREFIX = 5;
  const buffers = [
    { name: 'send', bytes },
    { name: 'recv', bytes: hasRecv ? bytes : 0 },
    { name: 'partial', bytes },
    { name: 'tmp', bytes },
    { name: 'scratch', bytes },
    { name: 'prefix', bytes },
  ];
  const steps: ScheduleStep[] = [];
  let pending: ScheduleOp[] = [{ kind: 'copy', from: whole(SEND, bytes), to: whole(partial, bytes) }];
  const copyOp = (to: number, from: number): ScheduleOp => ({ kind: 'copy', from: whole(from, bytes), to: whole(to, bytes) });
  for (let mask = 1; mask < p; mask *= 2) {
    const dst = rank ^ mask;
    if (dst >= p) continue;
    const ops = [...pending, { kind: 'recv', peer: dst, tag, data: whole(tmp, bytes) } as const, { kind: 'send', peer: dst, tag, data: whole(partial, bytes) } as const];
    steps.push({ window: ops.length, ops });
    pending = [];
    if (dst < rank) {
      // tmp is the reduction over the group just below this rank's group
      if (prefix < 0) {
        prefix = PREFIX;
        pending.push(copyOp(prefix, tmp));
      } else {
        pending.push(copyOp(scratch, tmp), combineOp(scratch, prefix, bytes));
        [prefix, scratch] = [scratch, prefix];
      }
      pending.push(combineOp(tmp, partial, bytes));
      [partial, tmp] = [tmp, partial];
    } else {
      pending.push(combineOp(partial, tmp, bytes));
    }
  }
  if (hasRecv && prefix >= 0) pending.push(copyOp(RECV, prefix));
  if (pending.length > 0) steps.push({ window: pending.length, ops: pending });
  return { rank, buffers, steps };
}

/** `combine` as a schedule's operator on arrays like `like` (`op`: the built-in it is, if any). */
export function scheduleCombiner<T extends NumericArray>(combine: CombineFn<T>, like: T, op: ReduceOp<T>): ScheduleCombiner {
  // one per operator function and element type (a built-in's function is shared): a call
  // reuses it instead of making it again
  let byType = combiners.get(combine);
  if (byType === undefined) {
    byType = new Map();
    combiners.set(combine, byType);
  }
  const key = `${numericKind(like) ?? ''}|${typeof op === 'string' ? op : ''}`;
  let c = byType.get(key);
  if (c === undefined) {
    c = makeCombiner(combine, like, op);
    byType.set(key, c);
  }
  return c;
}

const combiners = new WeakMap<object, Map<string, ScheduleCombiner>>();

function makeCombiner<T extends NumericArray>(combine: CombineFn<T>, like: T, op: ReduceOp<T>): ScheduleCombiner {
  const Ctor = like.constructor as new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T;
  const eb = like.BYTES_PER_ELEMENT;
  const kind = numericKind(like);
  return {
    elementBytes: eb,
    bind(into: Uint8Array, from: Uint8Array): () => void {
      const a = new Ctor(into.buffer, into.byteOffset, into.length / eb);
      const b = new Ctor(from.buffer, from.byteOffset, from.length / eb);
      return () => combine(a, b);
    },
    ...(typeof op === 'string' && kind !== undefined ? { builtin: { op, type: kind } } : {}),
  };
}

/** Runs `schedule` (reduceSchedule / allreduceSchedule) once with its buffers: the call's arrays, work arrays allocated here. */
export async function runReduceSchedule<T extends NumericArray>(
  comm: Communicator,
  schedule: RankSchedule,
  send: T,
  recv: T | undefined,
  combine: CombineFn<T>,
  op: ReduceOp<T>,
): Promise<void> {
  const buffers = schedule.buffers.map((b) => {
    if (b.name === 'send') return bytesOf(send);
    if (b.name === 'recv') return b.bytes === 0 || recv === undefined ? new Uint8Array(0) : bytesOf(recv);
    // work arrays of the element type (aligned for the combine's typed views)
    return bytesOf(new (send.constructor as new (length: number) => T)(send.length));
  });
  await bindSchedule(comm, schedule, buffers, { recvError: lengthError(comm, 'send'), once: true, combine: scheduleCombiner(combine, send, op) }).run();
}
