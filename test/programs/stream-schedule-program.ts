/**
 * Rank program of test/mpi/schedule.mpi.ts for steps of concurrent streams (comm/schedule.ts
 * ScheduleStep `streams`, `after`) run by the MPI transport's C executor
 * (native/vcoll_mpi_schedule.c). Which executor ran a schedule is observed, not assumed: a
 * spy around the world endpoint's `bindSchedule` counts the schedules with streams it bound
 * natively and those it declined, on communicators split off while the spy is installed
 * (`portable`: split with no native executor at all); the endpoint's isend / irecv are
 * counted during each call (the messages the portable executor would post one by one).
 *
 * Scenarios:
 * - 'ring': the pipelined-ring allgatherv (collectives/allgather/pipelined-ring.ts) over
 *   uneven counts with zeros and large blocks (many chunks), unit sizes 1 and 4, displacements
 *   with gaps, each call twice with fresh data, recv checked byte for byte (gaps untouched),
 *   natively and on the portable communicator;
 * - 'streams': a hand-written schedule (handSchedule) bound natively and `{ portable: true }`:
 *   persistent runs, a one-shot (`once`), `runBlocking`, native ranks against portable ones,
 *   every buffer checked against the known result and the portable executor's byte for byte;
 * - 'recv-error': rank 0 receives 5 bytes in stream 1 of a step (after a copy in stream 0)
 *   from messages of 3, then 9, then 5 bytes: native and portable, without and with
 *   recvError; returns what each run gave (rank 0);
 * - 'stuck' / 'stuck-blocking': rank 0 runs a step of streams whose first operation (a send)
 *   completes and whose second (a receive in stream 1) never does: the watchdog must name that
 *   receive (start() then the JS timeout; runBlocking then the binding's watchdog thread).
 */
import { allgatherv } from '../../src/index.js';
import type { Communicator } from '../../src/comm/communicator.js';
import type { RankSchedule, ScheduleOp, Span } from '../../src/comm/schedule.js';
import { TruncationError } from '../../src/errors.js';
import { bindSchedule } from '../../src/schedule/run.js';
import { endpointOf, type ExecutorSpy, spyOnExecutor } from './executor-spy.js';
import { wrongLengthRuns } from './recv-error-runs.js';

export const SENTINEL = 0xa5;

export interface StreamArgs {
  readonly scenario: 'ring' | 'streams' | 'recv-error' | 'stuck' | 'stuck-blocking';
  /** 'streams': runs of each persistent binding. */
  readonly repeats?: number;
}

export interface StreamResult {
  readonly problems: string[];
  /** Schedules with streams the endpoint bound natively / declined (the spy). */
  readonly nativeStreams: number;
  readonly declinedStreams: number;
  /** 'ring': the allgatherv calls made, and the endpoint's isend / irecv posted during them, natively and on the portable communicator. */
  readonly calls: number;
  readonly nativeMessages: number;
  readonly portableMessages: number;
  /** 'recv-error' (rank 0): what each run gave. */
  readonly outcomes: string[];
}

type Counted = 'isend' | 'irecv' | 'isendAwaited' | 'irecvAwaited';

interface Spy extends ExecutorSpy {
  /** Messages the communicators posted through the endpoint. */
  messages: number;
}

/** Installs the spy on `world`'s endpoint (see the file's doc): schedules with streams, and messages. */
function spyOn(world: Communicator): Spy {
  const ep = endpointOf(world);
  const spy: Spy = Object.assign(spyOnExecutor(world, (schedule) => schedule.steps.some((s) => s.streams !== undefined)), { messages: 0 });
  // every message the communicators post through the endpoint (the portable executor's, the handshakes')
  const target = ep as unknown as Record<Counted, ((...a: unknown[]) => unknown) | undefined>;
  for (const name of ['isend', 'irecv', 'isendAwaited', 'irecvAwaited'] as const) {
    const f = target[name];
    if (f === undefined) continue;
    Object.defineProperty(ep, name, {
      value: (...a: unknown[]): unknown => {
        spy.messages++;
        return f.apply(ep, a);
      },
      configurable: true,
      writable: true,
    });
  }
  return spy;
}

/** Deterministic content of rank r's block in call `it`. */
function fill(buf: Uint8Array, r: number, it: number): Uint8Array {
  for (let i = 0; i < buf.length; i++) buf[i] = (r * 37 + it * 101 + i * 11 + 1) & 0xff;
  return buf;
}

/** The count sets of the ring at p ranks: zeros, one large block, uneven large blocks, equal ones. */
function ringCases(p: number): { counts: number[]; unitBytes: number; displs?: number[] }[] {
  const uneven = Array.from({ length: p }, (_, i) => (i % 3 === 1 ? 0 : [100_003, 7, 250_001, 1][i % 4]));
  const one = Array.from({ length: p }, (_, i) => (i === p - 1 ? 300_000 : 0));
  const small = Array.from({ length: p }, (_, i) => (i === 0 ? 0 : i * 3 + 1));
  const equal = Array.from({ length: p }, () => 40_000);
  const gaps: number[] = [];
  for (let i = 0, at = 5; i < p; i++) {
    gaps[p - 1 - i] = at; // permuted: the last rank's block first
    at += uneven[p - 1 - i] + 3;
  }
  return [
    { counts: uneven, unitBytes: 1 },
    { counts: one, unitBytes: 1 },
    { counts: small, unitBytes: 4 },
    { counts: equal, unitBytes: 1 },
    { counts: uneven, unitBytes: 1, displs: gaps },
    { counts: Array.from({ length: p }, () => 0), unitBytes: 1 },
  ];
}

async function ring(world: Communicator, spy: Spy, problems: string[]): Promise<{ calls: number; nativeMessages: number; portableMessages: number }> {
  const native = await spy.split(false);
  const portable = await spy.split(true);
  const p = world.size;
  const me = world.rank;
  let calls = 0;
  let nativeMessages = 0;
  let portableMessages = 0;
  const cases = ringCases(p);
  for (let c = 0; c < cases.length; c++) {
    const { counts, unitBytes: u } = cases[c];
    const displs = cases[c].displs ?? counts.map((_, i) => counts.slice(0, i).reduce((a, b) => a + b, 0));
    const size = Math.max(0, ...counts.map((n, i) => (displs[i] + n) * u)) + 7;
    for (const [label, comm] of [
      ['native', native],
      ['portable', portable],
    ] as const) {
      for (let it = 0; it < 2; it++) {
        const send = fill(new Uint8Array(counts[me] * u), me, it + c);
        const recv = new Uint8Array(size).fill(SENTINEL);
        const before = spy.messages;
        await allgatherv(comm, { send, recv, counts, ...(cases[c].displs !== undefined ? { displs } : {}), unitBytes: u }, { algorithm: 'pipelined-ring' });
        if (label === 'native') {
          nativeMessages += spy.messages - before;
          calls++;
        } else portableMessages += spy.messages - before;
        const want = new Uint8Array(size).fill(SENTINEL);
        for (let i = 0; i < p; i++) want.set(fill(new Uint8Array(counts[i] * u), i, it + c), displs[i] * u);
        let bad = 0;
        for (let k = 0; k < size; k++) {
          if (recv[k] !== want[k] && bad++ < 3) problems.push(`ring ${label} case ${c} (${counts.join(',')} u=${u}) call ${it}: byte ${k} is ${recv[k]}, expected ${want[k]}`);
        }
      }
    }
  }
  return { calls, nativeMessages, portableMessages };
}

const A = 11;
const B = 12;
const C = 13;
const D = 14;

/** Chunk i's length (one of them empty). */
const chunkLen = (i: number): number => (i === 2 ? 0 : 1 + ((i * 7) % 13) * 5);

/**
 * The hand-written schedule of rank `me` of p: buffers src (own data), in (the left's src),
 * back (src again, echoed by the right), mid (a copy of in), twice (src again: the right's mid),
 * own (a copy of src), tick (the left's mark), mark (1 byte); K chunks of chunkLen bytes.
 *   step 0: the copy own := src (no streams, window 1);
 *   step 1, window 2, streams [3K, 0, 3K, K]:
 *     0: receive in[i] from the left (tag A), back[i] from the right (B), twice[i] from the right (C);
 *     1: empty;
 *     2: send src[i] to the right (A); send in[i] to the left (B) after its receive; copy mid[i] := in[i] after it too;
 *     3: send mid[i] to the left (C) after its copy (a dependency on a stream that is not the first);
 *   step 2, window 1, streams [1, 0, 2]: receive tick from the left (D); empty; send mark to the
 *     right (D), then copy own[0..1) := tick after the receive;
 *   step 3: streams [0, 0] (no operations).
 */
function handSchedule(me: number, p: number, k: number): RankSchedule {
  const left = (me - 1 + p) % p;
  const right = (me + 1) % p;
  const at: number[] = [];
  let total = 0;
  for (let i = 0; i < k; i++) {
    at.push(total);
    total += chunkLen(i);
  }
  const SRC = 0;
  const IN = 1;
  const BACK = 2;
  const MID = 3;
  const TWICE = 4;
  const OWN = 5;
  const TICK = 6;
  const MARK = 7;
  const sp = (buffer: number, i: number): Span => (chunkLen(i) === 0 ? [] : [{ buffer, offset: at[i], length: chunkLen(i) }]);
  const s0: ScheduleOp[] = [];
  const s2: ScheduleOp[] = [];
  const s3: ScheduleOp[] = [];
  const after: number[] = [];
  for (let i = 0; i < k; i++) {
    s0.push({ kind: 'recv', peer: left, tag: A, data: sp(IN, i) }, { kind: 'recv', peer: right, tag: B, data: sp(BACK, i) }, { kind: 'recv', peer: right, tag: C, data: sp(TWICE, i) });
    after.push(-1, -1, -1);
  }
  const base2 = 3 * k;
  for (let i = 0; i < k; i++) {
    s2.push({ kind: 'send', peer: right, tag: A, data: sp(SRC, i) }, { kind: 'send', peer: left, tag: B, data: sp(IN, i) }, { kind: 'copy', to: sp(MID, i), from: sp(IN, i) });
    after.push(-1, 3 * i, 3 * i);
  }
  for (let i = 0; i < k; i++) {
    s3.push({ kind: 'send', peer: left, tag: C, data: sp(MID, i) });
    after.push(base2 + 3 * i + 2);
  }
  const tick: Span = [{ buffer: TICK, offset: 0, length: 1 }];
  return {
    rank: me,
    buffers: [
      { name: 'src', bytes: total },
      { name: 'in', bytes: total },
      { name: 'back', bytes: total },
      { name: 'mid', bytes: total },
      { name: 'twice', bytes: total },
      { name: 'own', bytes: total },
      { name: 'tick', bytes: 1 },
      { name: 'mark', bytes: 1 },
    ],
    steps: [
      { window: 1, ops: [{ kind: 'copy', to: [{ buffer: OWN, offset: 0, length: total }], from: [{ buffer: SRC, offset: 0, length: total }] }] },
      { window: 2, ops: [...s0, ...s2, ...s3], streams: [s0.length, 0, s2.length, s3.length], after },
      {
        window: 1,
        ops: [
          { kind: 'recv', peer: left, tag: D, data: tick },
          { kind: 'send', peer: right, tag: D, data: [{ buffer: MARK, offset: 0, length: 1 }] },
          { kind: 'copy', to: [{ buffer: OWN, offset: 0, length: 1 }], from: tick },
        ],
        streams: [1, 0, 2],
        after: [-1, -1, 0],
      },
      { window: 3, ops: [], streams: [0, 0] },
    ],
  };
}

const K = 9;

/** Rank r's mark in run `it`. */
const mark = (r: number, it: number): number => (r * 5 + it + 1) & 0xff;

/** Fresh buffers for run `it` of rank `me`: src and mark filled, the rest SENTINEL. */
function prepareHand(bufs: Uint8Array[], me: number, it: number): void {
  bufs.forEach((b) => b.fill(SENTINEL));
  fill(bufs[0], me, it);
  bufs[7][0] = mark(me, it);
}

/** What rank `me`'s buffers hold after run `it` (see handSchedule). */
function expectedHand(bytes: readonly number[], me: number, p: number, it: number): Uint8Array[] {
  const left = (me - 1 + p) % p;
  const src = fill(new Uint8Array(bytes[0]), me, it);
  const inn = fill(new Uint8Array(bytes[0]), left, it);
  const tick = mark(left, it);
  const own = src.slice();
  if (own.length > 0) own[0] = tick;
  return [src, inn, src.slice(), inn.slice(), src.slice(), own, Uint8Array.of(tick), Uint8Array.of(mark(me, it))];
}

function compare(label: string, got: readonly Uint8Array[], want: readonly Uint8Array[], problems: string[]): void {
  for (let b = 0; b < want.length; b++) {
    let bad = 0;
    for (let k = 0; k < want[b].length; k++) {
      if (got[b][k] !== want[b][k] && bad++ < 2) problems.push(`${label}: buffer ${b} byte ${k} is ${got[b][k]}, expected ${want[b][k]}`);
    }
  }
}

async function streams(spy: Spy, repeats: number, problems: string[]): Promise<void> {
  const comm = await spy.split(false);
  const me = comm.rank;
  const p = comm.size;
  const schedule = handSchedule(me, p, K);
  const make = (): Uint8Array[] => schedule.buffers.map((b) => new Uint8Array(b.bytes));
  const bytes = schedule.buffers.map((b) => b.bytes);
  const nat = make();
  const por = make();
  const before = spy.native;
  const bound = bindSchedule(comm, schedule, nat);
  if (spy.native !== before + 1 || spy.declined !== 0) problems.push('streams: not bound natively');
  const portable = bindSchedule(comm, schedule, por, { portable: true });
  let it = 0;
  // persistent: runs of the native binding, each followed by the portable one on the same data
  for (let r = 0; r < repeats; r++, it++) {
    prepareHand(nat, me, it);
    await bound.run();
    prepareHand(por, me, it);
    await portable.run();
    compare(`streams native run ${r}`, nat, expectedHand(bytes, me, p, it), problems);
    compare(`streams native run ${r} against portable`, nat, por, problems);
  }
  // runBlocking: every rank in C at once
  if (bound.runBlocking === undefined) problems.push('streams: the native binding has no runBlocking');
  else {
    for (let r = 0; r < 2; r++, it++) {
      prepareHand(nat, me, it);
      bound.runBlocking();
      compare(`streams runBlocking ${r}`, nat, expectedHand(bytes, me, p, it), problems);
    }
  }
  // a one-shot (schedRunOnce)
  {
    const once = make();
    prepareHand(once, me, it);
    const b4 = spy.native;
    await bindSchedule(comm, schedule, once, { once: true }).run();
    if (spy.native !== b4 + 1) problems.push('streams once: not bound natively');
    compare('streams once', once, expectedHand(bytes, me, p, it), problems);
    it++;
  }
  // native ranks (odd) against portable ones (even), twice
  for (let r = 0; r < 2; r++, it++) {
    const b = me % 2 === 1 ? bound : portable;
    const bufs = me % 2 === 1 ? nat : por;
    prepareHand(bufs, me, it);
    await b.run();
    compare(`streams mixed run ${r}`, bufs, expectedHand(bytes, me, p, it), problems);
  }
  // and the persistent native binding once more after all that
  prepareHand(nat, me, it);
  await bound.run();
  compare('streams native last run', nat, expectedHand(bytes, me, p, it), problems);
  if (spy.declined !== 0) problems.push(`streams: ${spy.declined} declined`);
}

const T = 5;

function describeError(e: unknown): string {
  if (!(e instanceof Error)) return `not an Error: ${String(e)}`;
  const t = e instanceof TruncationError ? ` [${e.bytes} > ${e.capacity}]` : '';
  return `${e.name}: ${e.message}${t}`;
}

/** A copy in stream 0, then the receive of 5 bytes from rank 1 in stream 1 after it (op 1 of step 0). */
function recvAfterCopy(): RankSchedule {
  return {
    rank: 0,
    buffers: [
      { name: 'b', bytes: 5 },
      { name: 'c', bytes: 5 },
    ],
    steps: [
      {
        window: 1,
        ops: [
          { kind: 'copy', to: [{ buffer: 1, offset: 0, length: 5 }], from: [{ buffer: 0, offset: 0, length: 5 }] },
          { kind: 'recv', peer: 1, tag: T, data: [{ buffer: 0, offset: 0, length: 5 }] },
        ],
        streams: [1, 1],
        after: [-1, 0],
      },
    ],
  };
}

async function recvErrors(spy: Spy): Promise<string[]> {
  const comm = await spy.split(false);
  return wrongLengthRuns(
    comm,
    T,
    (options) => {
      const bufs = [new Uint8Array(5), new Uint8Array(5)];
      const b4 = spy.native;
      const bound = bindSchedule(comm, recvAfterCopy(), bufs, options);
      return { bound, into: bufs[0], ...(!options.portable && spy.native !== b4 + 1 ? { problem: 'not bound natively' } : {}) };
    },
    describeError,
  );
}

/** Rank 0: a send to 1 (stream 0, completes), then a receive from 1 that never comes (stream 1, tag 32). */
async function stuck(spy: Spy, blocking: boolean): Promise<void> {
  const comm = await spy.split(false);
  if (comm.rank === 1) {
    await comm.recv(0, 31, new Uint8Array(1));
    return;
  }
  if (comm.rank !== 0) return;
  const schedule: RankSchedule = {
    rank: 0,
    buffers: [{ name: 'b', bytes: 2 }],
    steps: [
      {
        window: 1,
        ops: [
          { kind: 'send', peer: 1, tag: 31, data: [{ buffer: 0, offset: 0, length: 1 }] },
          { kind: 'recv', peer: 1, tag: 32, data: [{ buffer: 0, offset: 1, length: 1 }] },
        ],
        streams: [1, 1],
      },
    ],
  };
  const bound = bindSchedule(comm, schedule, [new Uint8Array(2)]);
  if (spy.native !== 1) throw new Error('stuck: not bound natively');
  if (blocking) {
    if (bound.runBlocking === undefined) throw new Error('stuck: no runBlocking');
    bound.runBlocking();
  } else await bound.run();
}

export default async function streamScheduleProgram(world: Communicator, args: StreamArgs): Promise<StreamResult> {
  const spy = spyOn(world);
  const problems: string[] = [];
  let ringOut = { calls: 0, nativeMessages: 0, portableMessages: 0 };
  let outcomes: string[] = [];
  switch (args.scenario) {
    case 'ring':
      ringOut = await ring(world, spy, problems);
      break;
    case 'streams':
      await streams(spy, args.repeats ?? 3, problems);
      break;
    case 'recv-error':
      outcomes = await recvErrors(spy);
      break;
    case 'stuck':
    case 'stuck-blocking':
      await stuck(spy, args.scenario === 'stuck-blocking');
      break;
  }
  return { problems, nativeStreams: spy.native, declinedStreams: spy.declined, ...ringOut, outcomes };
}
