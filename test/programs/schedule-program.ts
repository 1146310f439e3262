/**
 * Rank program of test/threads-schedule.test.ts (run by runThreads, and in one thread over
 * test/helpers/threads-world.ts endpoints): schedules bound with bindSchedule, which the threads
 * transport runs natively (transports/threads/schedule.ts), checked byte for byte against the
 * known gatherv/scatterv results and against the portable executor (`portable: true`).
 *
 * Scenarios: 'cases' (compiled gatherv/scatterv schedules, each run several times with fresh
 * data, on the world or a reversed split), 'mixed' (schedule operations matched by plain
 * sends and receives, interleaved with the rank's own pending operations of the same source
 * and tag: posting order, non-overtaking), 'recv-error' (short and long messages, with and
 * without recvError, native against portable), 'fail' (a peer throws while this rank waits
 * in a schedule), 'deadlock' and 'timeout' (a peer that never answers).
 */
import { COMPILED_V_ALGORITHMS, compileVSchedule, FIRST_DATA_TAG } from '../../src/collectives/v-schedule.js';
import { failedRestriction, variantRow } from '../../src/collectives/v-variants.js';
import type { Communicator } from '../../src/comm/communicator.js';
import { CALL_TAG_STRIDE } from '../../src/comm/tags.js';
import { TruncationError } from '../../src/errors.js';
import { linearModel, type CostModel } from '../../src/model/cost-model.js';
import { bindSchedule } from '../../src/schedule/run.js';
import type { RankSchedule } from '../../src/schedule/types.js';
import { int, rng } from '../helpers/random.js';
import { wrongLengthRuns } from './recv-error-runs.js';

export const SENTINEL = 0xa5;

/** The models of the cases: ports 1 and 2, copyAll false and true. */
export const MODELS: readonly { readonly ports: number; readonly copyAll: boolean }[] = [
  { ports: 1, copyAll: false },
  { ports: 1, copyAll: true },
  { ports: 2, copyAll: false },
  { ports: 2, copyAll: true },
];

export function modelOf(i: number): CostModel {
  return linearModel({ alpha: 10, beta: 1, gamma: 1, ...MODELS[i] });
}

export interface SCase {
  readonly op: 'gatherv' | 'scatterv';
  readonly algorithm: string;
  readonly counts: readonly number[];
  readonly root: number;
  readonly modelIndex: number;
  readonly unitBytes: number;
  readonly displs: readonly number[] | undefined;
  readonly tag: number;
  /** Run on a split of the world with the ranks reversed (a communicator's ranks are not world ranks). */
  readonly reversed: boolean;
}

/**
 * Every algorithm × op × model (where the variant accepts it) × `roots` roots, random counts
 * with zeros, for p ranks.
 */
export function makeCases(p: number, seed: number, roots: number): SCase[] {
  const rnd = rng(seed);
  const out: SCase[] = [];
  let n = 0;
  for (const algorithm of COMPILED_V_ALGORITHMS) {
    const row = variantRow(algorithm);
    if (row === undefined) throw new Error(algorithm);
    for (const op of ['gatherv', 'scatterv'] as const) {
      for (let m = 0; m < MODELS.length; m++) {
        for (let k = 0; k < roots; k++) {
          let counts: number[];
          if (algorithm === 'two-block') {
            const small = int(rnd, 0, 4);
            const large = small + int(rnd, 1, 30);
            counts = Array.from({ length: p }, () => (rnd() < 0.4 ? large : small));
          } else counts = Array.from({ length: p }, () => (rnd() < 0.3 ? 0 : int(rnd, 1, 40)));
          if (failedRestriction(row, { p, model: modelOf(m), counts }, ['model', 'counts']) !== undefined) continue;
          const root = k === 0 ? 0 : k === 1 ? p - 1 : int(rnd, 0, p - 1);
          let displs: number[] | undefined;
          if (rnd() < 0.5) {
            // gaps, permuted
            const order = Array.from({ length: p }, (_, i) => i).sort(() => rnd() - 0.5);
            displs = new Array<number>(p).fill(0);
            let at = int(rnd, 0, 3);
            for (const i of order) {
              displs[i] = at;
              at += counts[i] + int(rnd, 0, 3);
            }
          }
          out.push({ op, algorithm, counts, root, modelIndex: m, unitBytes: rnd() < 0.5 ? 1 : 4, displs, tag: FIRST_DATA_TAG + (n++ % 8), reversed: rnd() < 0.5 });
        }
      }
    }
  }
  return out;
}

export const caseLabel = (c: SCase): string =>
  `${c.op} ${c.algorithm} p=${c.counts.length} root=${c.root} u=${c.unitBytes} model#${c.modelIndex} counts=${c.counts.join(',')}${c.displs ? ` displs=${c.displs.join(',')}` : ''}${c.reversed ? ' reversed' : ''}`;

/** Deterministic content of rank r's block in run `it`. */
export function fill(buf: Uint8Array, r: number, it: number): Uint8Array {
  for (let i = 0; i < buf.length; i++) buf[i] = (r * 37 + it * 101 + i * 11 + 1) & 0xff;
  return buf;
}

function displsOf(c: SCase): readonly number[] {
  if (c.displs !== undefined) return c.displs;
  let at = 0;
  return c.counts.map((n) => {
    const d = at;
    at += n;
    return d;
  });
}

/** What rank `me`'s 'recv' buffer (of `bytes`) holds after run `it` (undefined: it has none to check). */
export function expectedRecv(c: SCase, me: number, bytes: number, it: number, rootSendBytes: number): Uint8Array | undefined {
  const u = c.unitBytes;
  const displs = displsOf(c);
  if (c.op === 'gatherv') {
    if (me !== c.root) return undefined;
    const out = new Uint8Array(bytes).fill(SENTINEL);
    for (let i = 0; i < c.counts.length; i++) if (c.counts[i] > 0) out.set(fill(new Uint8Array(c.counts[i] * u), i, it), displs[i] * u);
    return out;
  }
  const rootSend = fill(new Uint8Array(rootSendBytes), c.root, it);
  return rootSend.slice(displs[me] * u, (displs[me] + c.counts[me]) * u);
}

/** Fresh buffers for run `it`: 'send' filled, 'recv' all SENTINEL, 'packed' garbage. */
function prepare(rs: RankSchedule, bufs: Uint8Array[], me: number, it: number): void {
  rs.buffers.forEach((b, i) => {
    if (b.name === 'send') fill(bufs[i], me, it);
    else bufs[i].fill(b.name === 'recv' ? SENTINEL : 0x3c);
  });
}

const same = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Runs every case on this rank: the native executor `repeats` times back to back with fresh
 * data (run i with its tags shifted to call slot i), then the portable one once, then both at
 * once (native on even ranks, portable on odd ones); returns the problems found (empty: all well).
 */
export async function runCases(world: Communicator, cases: readonly SCase[], repeats: number): Promise<string[]> {
  const problems: string[] = [];
  const reversed = await world.split(0, world.size - 1 - world.rank);
  if (reversed === null) throw new Error('split');
  for (const c of cases) {
    const comm = c.reversed ? reversed : world;
    const me = comm.rank;
    const ws = compileVSchedule(c.op, c.algorithm, c.counts, { root: c.root, model: modelOf(c.modelIndex), unitBytes: c.unitBytes, displs: c.displs, tag: c.tag });
    const rs = ws.ranks[me];
    const recvAt = rs.buffers.findIndex((b) => b.name === 'recv');
    const rootSendBytes = ws.ranks[c.root].buffers.find((b) => b.name === 'send')?.bytes ?? 0;
    const run = async (portable: boolean, times: number, shift: (it: number) => number): Promise<void> => {
      const bufs = rs.buffers.map((b) => new Uint8Array(b.bytes));
      const bound = bindSchedule(comm, rs, bufs, { portable });
      for (let it = 0; it < times; it++) {
        prepare(rs, bufs, me, it);
        await bound.run(shift(it));
        if (recvAt < 0) continue;
        const want = expectedRecv(c, me, bufs[recvAt].length, it, rootSendBytes);
        if (want !== undefined && !same(bufs[recvAt], want)) {
          const got = bufs[recvAt];
          let at = 0;
          while (at < got.length && got[at] === want[at]) at++;
          problems.push(`${caseLabel(c)}: rank ${me} ${portable ? 'portable' : 'native'} run ${it}: ${got.length} bytes, ${want.length} expected; first difference at byte ${at}: ${got[at]} instead of ${want[at]}`);
        }
      }
    };
    // native, each run in the next call slot (its collective tags shifted); portable; then
    // native on even ranks against portable on odd ones, in a later slot
    await run(false, repeats, (it) => it * CALL_TAG_STRIDE);
    await run(true, 1, () => 0);
    await run(me % 2 === 1, 1, () => 5 * CALL_TAG_STRIDE);
  }
  return problems;
}

// ---- hand-written schedules ------------------------------------------------------------

const T = 5;
const GO = 6;

/** One step of one operation. */
function one(rank: number, kind: 'send' | 'recv', peer: number, bytes: number, tag = T): RankSchedule {
  return { rank, buffers: [{ name: 'b', bytes }], steps: [{ window: 1, ops: [{ kind, peer, tag, data: [{ buffer: 0, offset: 0, length: bytes }] }] }] };
}

const msg = (k: number, n: number): Uint8Array => new Uint8Array(n).fill(k);

/**
 * Rank 0's schedule operations against plain operations: returns the problems seen by this rank.
 * Ranks other than 0 and 1 do nothing.
 */
async function mixed(comm: Communicator): Promise<string[]> {
  const problems: string[] = [];
  const check = (what: string, got: Uint8Array, k: number): void => {
    if (!got.every((x) => x === k)) problems.push(`${what}: got [${Array.from(got).join(',')}], expected message ${k}`);
  };
  const me = comm.rank;
  if (me > 1) return problems;
  const go = new Uint8Array(1);
  if (me === 0) {
    const a = new Uint8Array(4);
    const s1 = bindSchedule(comm, one(0, 'recv', 1, 4), [a]);
    const x = new Uint8Array(4);
    // A: a plain receive posted before the schedule's (same source and tag): it takes the first message.
    let r = comm.irecv(1, T, x);
    let s = s1.run();
    await comm.send(1, GO, go);
    await s;
    await r;
    check('A plain irecv posted first', x, 1);
    check('A schedule recv posted second', a, 2);
    // B: the schedule's receive first.
    s = s1.run();
    r = comm.irecv(1, T, x);
    await comm.send(1, GO, go);
    await Promise.all([s, r]);
    check('B schedule recv posted first', a, 3);
    check('B plain irecv posted second', x, 4);
    // B2: both messages land in the ring (nobody pumps: this thread computes) behind a pending
    // plain receive; the schedule's receive must not take the first one straight from the ring.
    r = comm.irecv(1, T, x);
    await comm.send(1, GO, go);
    const until = Date.now() + 30;
    while (Date.now() < until);
    s = s1.run();
    await Promise.all([s, r]);
    check('B2 plain irecv pending while the messages arrived', x, 11);
    check('B2 schedule recv posted after they arrived', a, 12);
    // C: the messages arrived before either was posted (the unexpected queue).
    await comm.recv(1, GO, go);
    r = comm.irecv(1, T, x);
    s = s1.run();
    await Promise.all([s, r]);
    check('C plain irecv of an arrived message', x, 5);
    check('C schedule recv of an arrived message', a, 6);
    await comm.recv(1, GO, go);
    s = s1.run();
    r = comm.irecv(1, T, x);
    await Promise.all([s, r]);
    check('D schedule recv of an arrived message', a, 7);
    check('D plain irecv of an arrived message', x, 8);
    // E: a schedule's send behind a plain send still queued to the same peer (non-overtaking).
    const big = msg(9, 200_000);
    const small = msg(10, 8);
    const s2 = bindSchedule(comm, one(0, 'send', 1, 8), [small]);
    const bigReq = comm.isend(1, T, big);
    s = s2.run();
    await Promise.all([bigReq, s]);
    // F: window 2, a vectored receive, a send from two ranges, a copy through a port and a
    // plain copy, then a second step.
    const buf = new Uint8Array(40).fill(0);
    buf.set([21, 22, 23, 24, 25, 26], 20);
    buf.set([31, 32, 33], 30);
    const f: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 40 }],
      steps: [
        {
          window: 2,
          ops: [
            { kind: 'recv', peer: 1, tag: T, data: [{ buffer: 0, offset: 0, length: 3 }, { buffer: 0, offset: 10, length: 5 }] },
            { kind: 'send', peer: 1, tag: T, data: [{ buffer: 0, offset: 20, length: 4 }, { buffer: 0, offset: 30, length: 2 }] },
            { kind: 'copy', tag: 9, from: [{ buffer: 0, offset: 20, length: 6 }], to: [{ buffer: 0, offset: 3, length: 2 }, { buffer: 0, offset: 16, length: 4 }] },
            { kind: 'copy', from: [{ buffer: 0, offset: 30, length: 3 }], to: [{ buffer: 0, offset: 36, length: 3 }] },
          ],
        },
        { window: 1, ops: [{ kind: 'recv', peer: 1, tag: T, data: [{ buffer: 0, offset: 26, length: 2 }] }] },
      ],
    };
    await bindSchedule(comm, f, [buf]).run();
    const want = [41, 42, 43, 21, 22, 0, 0, 0, 0, 0, 44, 45, 46, 47, 48, 0, 23, 24, 25, 26, 21, 22, 23, 24, 25, 26, 51, 52, 0, 0, 31, 32, 33, 0, 0, 0, 31, 32, 33, 0];
    if (Array.from(buf).join(',') !== want.join(',')) problems.push(`F: got [${Array.from(buf).join(',')}], expected [${want.join(',')}]`);
  } else {
    await comm.recv(0, GO, go);
    await comm.send(0, T, msg(1, 4));
    await comm.send(0, T, msg(2, 4));
    await comm.recv(0, GO, go);
    await comm.send(0, T, msg(3, 4));
    await comm.send(0, T, msg(4, 4));
    await comm.recv(0, GO, go);
    // after rank 0's progress loop has stopped spinning (and while rank 0 computes)
    const until = Date.now() + 5;
    while (Date.now() < until);
    await comm.send(0, T, msg(11, 4));
    await comm.send(0, T, msg(12, 4));
    await comm.send(0, T, msg(5, 4));
    await comm.send(0, T, msg(6, 4));
    await comm.send(0, GO, go);
    await comm.send(0, T, msg(7, 4));
    await comm.send(0, T, msg(8, 4));
    await comm.send(0, GO, go);
    // E: the big message first, then the schedule's.
    const first = new Uint8Array(200_000);
    const second = new Uint8Array(200_000);
    const [st1, st2] = await Promise.all([comm.irecv(0, T, first), comm.irecv(0, T, second)]);
    if (st1.bytes !== 200_000 || !first.every((b) => b === 9)) problems.push(`E: first receive got ${st1.bytes} bytes (the schedule's send overtook the queued plain send)`);
    if (st2.bytes !== 8 || !second.subarray(0, 8).every((b) => b === 10)) problems.push(`E: second receive got ${st2.bytes} bytes`);
    // F
    const got = new Uint8Array(6);
    const rf = comm.irecv(0, T, got);
    await comm.send(0, T, Uint8Array.of(41, 42, 43, 44, 45, 46, 47, 48));
    await comm.send(0, T, Uint8Array.of(51, 52));
    const st = await rf;
    if (st.bytes !== 6 || got.join(',') !== '21,22,23,24,31,32') problems.push(`F: rank 1 got [${Array.from(got).join(',')}]`);
  }
  return problems;
}

/** What a failed run of a schedule shows: class, message, and for a truncation its sizes. */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return `not an Error: ${String(e)}`;
  const t = e instanceof TruncationError ? ` [${e.bytes} > ${e.capacity}]` : '';
  const cause = e.cause instanceof Error ? ` (cause ${e.cause.name}: ${e.cause.message})` : '';
  return `${e.name}: ${e.message}${t}${cause}`;
}

/**
 * Rank 0 receives 5 bytes with four bound schedules (native and portable, each without and
 * with recvError) from messages of 3 and then 9 bytes; returns what each run failed with
 * (rank 0), in order: native, native+recvError, portable, portable+recvError.
 */
async function recvErrors(comm: Communicator): Promise<string[]> {
  return wrongLengthRuns(
    comm,
    T,
    (options) => {
      const into = new Uint8Array(5);
      return { bound: bindSchedule(comm, one(0, 'recv', 1, 5), [into], options), into };
    },
    describe,
  );
}

export interface ScheduleArgs {
  readonly scenario: 'cases' | 'mixed' | 'recv-error' | 'fail' | 'deadlock' | 'timeout';
  readonly cases?: readonly SCase[];
  readonly repeats?: number;
  /** 'fail': where rank 0 writes what its schedule failed with (UTF-8, NUL-terminated). */
  readonly report?: SharedArrayBuffer;
}

export default async function scheduleProgram(comm: Communicator, args: ScheduleArgs): Promise<string[]> {
  const me = comm.rank;
  switch (args.scenario) {
    case 'cases':
      return runCases(comm, args.cases ?? [], args.repeats ?? 3);
    case 'mixed':
      return mixed(comm);
    case 'recv-error':
      return recvErrors(comm);
    case 'fail': {
      // rank 2 throws while rank 0 waits in a linear gatherv for its block
      const ws = compileVSchedule('gatherv', 'linear', [2, 2, 2], { root: 0 });
      const rs = ws.ranks[me];
      const bufs = rs.buffers.map((b) => new Uint8Array(b.bytes));
      if (me === 2) {
        await new Promise((r) => setTimeout(r, 50));
        throw new Error('boom');
      }
      try {
        await bindSchedule(comm, rs, bufs).run();
      } catch (e) {
        if (me === 0 && args.report !== undefined) {
          const text = new TextEncoder().encode(describe(e));
          new Uint8Array(args.report).set(text.subarray(0, args.report.byteLength - 1));
        }
        throw e;
      }
      if (me === 1) await comm.recv(2, T, new Uint8Array(1));
      return [];
    }
    case 'deadlock':
    case 'timeout':
      // rank 0 waits in a schedule for a message rank 1 never sends
      if (me === 0) await bindSchedule(comm, one(0, 'recv', 1, 4), [new Uint8Array(4)]).run();
      else if (args.scenario === 'deadlock') await comm.recv(0, GO, new Uint8Array(1));
      else await new Promise((r) => setTimeout(r, 1000));
      return [];
  }
}
