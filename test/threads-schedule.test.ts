/**
 * The threads transport's native schedule executor (transports/threads/schedule.ts, reached
 * through schedule/run.ts bindSchedule → Communicator.bindValidatedSchedule → Endpoint.bindSchedule):
 * the same bytes as the known gatherv/scatterv results and as the portable executor, for every
 * compiled algorithm, both ops, random counts with zeros, several roots, models with 1 and 2
 * ports and copyAll off and on, p in {2, 3, 5, 8}, on the world and on a split whose ranks are
 * not world ranks, each schedule run repeatedly; schedule operations matched by plain ones in
 * posting order (receives) and without overtaking (sends); receive length errors as the
 * portable executor's; a failed, a deadlocked and a silent peer.
 *
 * Steps with concurrent streams (comm/schedule.ts ScheduleStep `streams`, `after`): the
 * pipelined ring allgatherv's schedules (collectives/allgather/pipelined-ring.ts) for p = 2..6
 * with random block sizes and zeros, and hand-written ones (3 streams and an empty one, window
 * 2, dependencies across streams, copies, a copy through a port and combines in a stream, the
 * stream step between plain steps), run 3 times on one binding, byte for byte against the
 * known result and the portable executor (schedule/run.ts `streamed`); the per-stream window
 * and the dependencies seen in the bytes copied; short and long receives in a stream; what a
 * pending run names. Their rank program is written to a temporary directory (as
 * test/threads.test.ts does) and runs both here, imported, and in runThreads' workers.
 *
 * Both in one thread (test/helpers/threads-world.ts endpoints: many cases, fast) and through
 * runThreads (worker threads: the real progress loops).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { pipelinedRingSchedule } from '../src/collectives/allgather/pipelined-ring.js';
import { ALLGATHER_TAGS } from '../src/collectives/allgather/types.js';
import { FIRST_DATA_TAG } from '../src/collectives/v-schedule.js';
import type { Communicator } from '../src/comm/communicator.js';
import { createWorldCommunicator } from '../src/comm/group.js';
import type { ByteRange, ScheduleOp, ScheduleStep } from '../src/comm/schedule.js';
import { CommunicationError, DeadlockError, TimeoutError } from '../src/errors.js';
import { bindSchedule } from '../src/schedule/run.js';
import { allreduce, reduce } from '../src/collectives/basic/index.js';
import { matmulMod, mats } from './programs/basic-collectives.js';
import type { RankSchedule } from '../src/schedule/types.js';
import { ThreadsEndpoint } from '../src/transports/threads/endpoint.js';
import { runThreads } from '../src/transports/threads/index.js';
import { ThreadsSchedule } from '../src/transports/threads/schedule.js';
import { int, rng } from './helpers/random.js';
import { threadsWorld } from './helpers/threads-world.js';
import scheduleProgram, { makeCases, type ScheduleArgs } from './programs/schedule-program.js';

const PROGRAM = new URL('./programs/schedule-program.ts', import.meta.url);
const PS = [2, 3, 5, 8];

/** Runs the program on p endpoints in this thread (rings of `ring` bytes). */
function inThread(p: number, args: ScheduleArgs, ring = 4096): Promise<string[][]> {
  const { eps } = threadsWorld(p, ring, { lazy: true });
  return Promise.all(eps.map((ep) => scheduleProgram(createWorldCommunicator(ep, { endpointChecks: true }), args)));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('native schedules on threads endpoints in one thread', () => {
  it('the communicator hands schedules to the endpoint’s native executor', async () => {
    const spy = vi.spyOn(ThreadsEndpoint.prototype, 'bindSchedule');
    const cases = makeCases(3, 7, 1).slice(0, 4);
    const out = await inThread(3, { scenario: 'cases', cases, repeats: 2 });
    expect(out.flat()).toEqual([]);
    // every rank binds every case natively once, and ranks 0 and 2 once more (native against
    // portable on rank 1); the portable runs do not reach the endpoint
    expect(spy).toHaveBeenCalledTimes((3 + 2) * cases.length);
  });

  it.each(PS)('every compiled algorithm, gatherv and scatterv, 4 models, 3 roots: p = %i', async (p) => {
    const cases = makeCases(p, 1000 + p, 3);
    expect(cases.length).toBeGreaterThan(150);
    const out = await inThread(p, { scenario: 'cases', cases, repeats: 3 });
    expect(out.flat()).toEqual([]);
  });

  it.each(PS)('reduce and allreduce run natively with combine operations, a non-commutative op in rank order: p = %i', async (p) => {
    const spy = vi.spyOn(ThreadsEndpoint.prototype, 'bindSchedule');
    const k = 3;
    const seed = 40 + p;
    const xs = Array.from({ length: p }, (_, r) => mats(r, k, seed));
    const total = Int32Array.from({ length: 4 * k }, (_, i) => (i % 4 === 0 || i % 4 === 3 ? 1 : 0));
    for (const x of xs) matmulMod(total, x);
    const { eps } = threadsWorld(p, 4096, { lazy: true });
    for (const root of [0, p - 1, p >> 1]) {
      const out = await Promise.all(
        eps.map(async (ep) => {
          const comm = createWorldCommunicator(ep, { endpointChecks: true });
          const r = comm.rank;
          const red = new Int32Array(4 * k);
          await reduce(comm, { send: mats(r, k, seed), recv: r === root ? red : undefined, root, op: matmulMod });
          const all = new Int32Array(4 * k);
          await allreduce(comm, { send: mats(r, k, seed), recv: all, op: matmulMod });
          const inPlace = mats(r, k, seed);
          await allreduce(comm, { send: inPlace, recv: inPlace, op: matmulMod });
          return { red: [...red], all: [...all], inPlace: [...inPlace] };
        }),
      );
      out.forEach((o, r) => {
        if (r === root) expect(o.red).toEqual([...total]);
        expect(o.all).toEqual([...total]);
        expect(o.inPlace).toEqual([...total]);
      });
    }
    // every call of every rank went to the native executor
    expect(spy).toHaveBeenCalledTimes(3 * 3 * p);
  });

  it('more than 32 ranks: doorbell bits shared by several peers, no focus peer (p = 40)', async () => {
    const cases = makeCases(40, 40, 1).filter((c, i) => i % 6 === 0);
    expect(cases.length).toBeGreaterThan(8);
    const out = await inThread(40, { scenario: 'cases', cases, repeats: 2 });
    expect(out.flat()).toEqual([]);
  });

  it('tiny rings: messages stream through and sends queue (p = 5)', async () => {
    const cases = makeCases(5, 77, 1).map((c) => ({ ...c, counts: c.counts.map((n) => n * 7), displs: c.displs?.map((d) => d * 7) }));
    const out = await inThread(5, { scenario: 'cases', cases, repeats: 2 }, 64);
    expect(out.flat()).toEqual([]);
  });

  it('schedule operations and plain ones match in posting order, without overtaking', async () => {
    const out = await inThread(3, { scenario: 'mixed' }, 1024);
    expect(out.flat()).toEqual([]);
  });

  it('messages already in the ring behind a pending plain receive go to it first', async () => {
    const { eps } = threadsWorld(2, 1024, { lazy: true });
    const [c0, c1] = eps.map((ep) => createWorldCommunicator(ep, { endpointChecks: true }));
    const x = new Uint8Array(4);
    const a = new Uint8Array(4);
    const rs: RankSchedule = { rank: 0, buffers: [{ name: 'b', bytes: 4 }], steps: [{ window: 1, ops: [{ kind: 'recv', peer: 1, tag: 5, data: [{ buffer: 0, offset: 0, length: 4 }] }] }] };
    const bound = bindSchedule(c0, rs, [a]);
    const r = c0.irecv(1, 5, x);
    // straight into the ring, in this turn: nobody pumps them before the schedule posts
    void c1.isend(0, 5, new Uint8Array(4).fill(1));
    void c1.isend(0, 5, new Uint8Array(4).fill(2));
    const s = bound.run();
    await Promise.all([r, s]);
    expect(Array.from(x)).toEqual([1, 1, 1, 1]);
    expect(Array.from(a)).toEqual([2, 2, 2, 2]);
    // and the other way round: the schedule's receive pending, a plain one posted after the messages came
    const s2 = bound.run();
    void c1.isend(0, 5, new Uint8Array(4).fill(3));
    void c1.isend(0, 5, new Uint8Array(4).fill(4));
    const r2 = c0.irecv(1, 5, x);
    await Promise.all([r2, s2]);
    expect(Array.from(a)).toEqual([3, 3, 3, 3]);
    expect(Array.from(x)).toEqual([4, 4, 4, 4]);
  });

  it.each([false, true])('windows: an operation starts once fewer than `window` earlier ones are unfinished (portable: %s)', async (portable) => {
    const { eps } = threadsWorld(2, 1024, { lazy: true });
    const [c0, c1] = eps.map((ep) => createWorldCommunicator(ep, { endpointChecks: true }));
    const r = (offset: number, length: number): { buffer: number; offset: number; length: number } => ({ buffer: 0, offset, length });
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 16 }],
      steps: [
        // window 1: the copy waits for the receive, and copies what it got
        { window: 1, ops: [{ kind: 'recv', peer: 1, tag: 5, data: [r(0, 2)] }, { kind: 'copy', from: [r(0, 2)], to: [r(2, 2)] }] },
        // window 2: the copy through a port waits until one of the two receives completed (the
        // first, tag 5); the plain copy after it starts then too (one receive unfinished < 2),
        // before the second receive has landed
        {
          window: 2,
          ops: [
            { kind: 'recv', peer: 1, tag: 5, data: [r(4, 2)] },
            { kind: 'recv', peer: 1, tag: 6, data: [r(6, 2)] },
            { kind: 'copy', tag: 7, from: [r(4, 2)], to: [r(8, 2)] },
            { kind: 'copy', from: [r(6, 2)], to: [r(10, 2)] },
          ],
        },
      ],
    };
    const buf = new Uint8Array(16);
    const run = bindSchedule(c0, rs, [buf], { portable }).run();
    await new Promise((res) => setTimeout(res, 5));
    await c1.send(0, 5, Uint8Array.of(1, 2));
    await new Promise((res) => setTimeout(res, 5));
    await c1.send(0, 5, Uint8Array.of(3, 4));
    await new Promise((res) => setTimeout(res, 5));
    await c1.send(0, 6, Uint8Array.of(5, 6));
    await run;
    expect(Array.from(buf)).toEqual([1, 2, 1, 2, 3, 4, 5, 6, 3, 4, 0, 0, 0, 0, 0, 0]);
  });

  it('short and long messages fail as with the portable executor, through recvError when given', async () => {
    const [out] = await inThread(2, { scenario: 'recv-error' });
    checkRecvErrors(out);
  });

  it('a peer that fails while this rank waits in a schedule: the run rejects naming it', async () => {
    const world = threadsWorld(3, 1024, { lazy: true });
    const comm = createWorldCommunicator(world.eps[0], { endpointChecks: true });
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 8 }],
      steps: [{ window: 2, ops: [{ kind: 'recv', peer: 1, tag: 1, data: [{ buffer: 0, offset: 0, length: 4 }] }, { kind: 'recv', peer: 2, tag: 1, data: [{ buffer: 0, offset: 4, length: 4 }] }] }],
    };
    const run = bindSchedule(comm, rs, [new Uint8Array(8)]).run();
    const c1 = createWorldCommunicator(world.eps[1], { endpointChecks: true });
    await c1.send(0, 1, new Uint8Array(4));
    setTimeout(() => world.fail(2), 20);
    const t0 = Date.now();
    const e = await Promise.resolve(run).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).message).toBe('rank 2 failed');
    expect((e as CommunicationError).rank).toBe(2);
    expect(Date.now() - t0).toBeLessThan(2000);
    // and a run started after the failure fails at once
    await expect(Promise.resolve(bindSchedule(comm, rs, [new Uint8Array(8)]).run())).rejects.toThrow('rank 2 failed');
  });

  it('a bound schedule runs one run at a time; names the operation it waits for', async () => {
    const world = threadsWorld(2, 1024, { lazy: true });
    const ep = world.eps[0];
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 4 }],
      steps: [
        { window: 1, ops: [{ kind: 'send', peer: 1, tag: 3, data: [{ buffer: 0, offset: 0, length: 4 }] }] },
        { window: 1, ops: [{ kind: 'recv', peer: 1, tag: 4, data: [{ buffer: 0, offset: 0, length: 4 }] }] },
      ],
    };
    const es = ep.bindSchedule(0, null, rs, [new Uint8Array(4)], {});
    const first = es.start(0);
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 4 });
    await expect(Promise.resolve(es.start(0))).rejects.toThrow(/already running/);
    const c1 = createWorldCommunicator(world.eps[1], { endpointChecks: true });
    await c1.recv(0, 3, new Uint8Array(4));
    await c1.send(0, 4, Uint8Array.of(1, 2, 3, 4));
    await first;
    expect(es.waiting()).toBeUndefined();
  });
});

/** Native and portable fail alike (the first 6 entries against the last 6). */
function checkRecvErrors(out: string[]): void {
  expect(out).toHaveLength(12);
  expect(out.slice(0, 6)).toEqual(out.slice(6));
  expect(out[0]).toBe('CommunicationError: rank 0: schedule step 0 op 0: receive from rank 1 tag 5 got 3 bytes, expected 5');
  expect(out[1]).toMatch(/^TruncationError: message of 9 bytes from rank 1 \(tag 5\) exceeds the receive buffer of 5 bytes \[9 > 5\]$/);
  expect(out[2]).toBe('then 3,3,3,3,3');
  expect(out[3]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got 3 cause undefined');
  expect(out[4]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got undefined cause TruncationError');
  expect(out[5]).toBe('then 3,3,3,3,3');
}

describe('native schedules through runThreads', () => {
  it.each(PS)('compiled gatherv/scatterv schedules, 4 models: p = %i', async (p) => {
    const cases = makeCases(p, 2000 + p, 1);
    const out = await runThreads<string[]>(p, PROGRAM, { scenario: 'cases', cases, repeats: 3 } satisfies ScheduleArgs);
    expect(out.flat()).toEqual([]);
  }, 30_000);

  it('mixed with plain operations (posting order, non-overtaking)', async () => {
    const out = await runThreads<string[]>(2, PROGRAM, { scenario: 'mixed' } satisfies ScheduleArgs);
    expect(out.flat()).toEqual([]);
  }, 30_000);

  it('receive length errors as the portable executor’s', async () => {
    const [out] = await runThreads<string[]>(2, PROGRAM, { scenario: 'recv-error' } satisfies ScheduleArgs);
    checkRecvErrors(out);
  }, 30_000);

  it('a rank that throws fails a rank waiting in a schedule fast, naming it', async () => {
    const report = new SharedArrayBuffer(512);
    const t0 = Date.now();
    const e = await runThreads(3, PROGRAM, { scenario: 'fail', report } satisfies ScheduleArgs, { failureGraceMs: 10_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(2);
    expect((e as CommunicationError).message).toMatch(/rank 2 failed: boom/);
    expect(Date.now() - t0).toBeLessThan(8000); // rank 0 failed fast, not after the grace period
    const bytes = new Uint8Array(report);
    const seen = new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
    expect(seen).toBe('CommunicationError: rank 2 failed');
  }, 30_000);

  it('a deadlock while a rank waits in a schedule lists the schedule’s receive', async () => {
    const e = await runThreads(2, PROGRAM, { scenario: 'deadlock' } satisfies ScheduleArgs, { deadlockMs: 400 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DeadlockError);
    const ranks = (e as DeadlockError).ranks;
    expect(ranks.find((r) => r.rank === 0)?.waitsFor).toEqual(['recv from 1 tag 5']);
  }, 30_000);

  it('a silent peer: the schedule times out naming it', async () => {
    const e = await runThreads(2, PROGRAM, { scenario: 'timeout' } satisfies ScheduleArgs, { timeoutMs: 200, deadlockMs: Infinity }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    const cause = (e as CommunicationError).cause;
    expect(cause).toBeInstanceOf(TimeoutError);
    expect((cause as TimeoutError).peer).toBe(1);
    expect((cause as TimeoutError).message).toMatch(/rank 0 waits for recv from 1 tag 5/);
  }, 30_000);
});

// ---- steps with concurrent streams ----------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'vcoll-threads-streams-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const src = (path: string): string => JSON.stringify(new URL(`../src/${path}`, import.meta.url).href);

/**
 * The rank program of the stream tests (a module in `dir`, run by runThreads and imported here
 * for the endpoints of one thread): binds its rank's schedule natively and then with
 * `portable: true`, runs each binding `repeats` times (run it with its collective tags in call
 * slot it), every buffer prepared by `initial` before each run; returns every buffer after
 * every run, the first failure of a binding (which ends that binding's runs), and whether the
 * communicator's native executor took the schedule.
 */
const STREAMS_PROGRAM = `
import type { Communicator } from ${src('comm/communicator.ts')};
import type { RankSchedule, ScheduleCombiner, ScheduleOptions } from ${src('comm/schedule.ts')};
import { CALL_TAG_STRIDE } from ${src('comm/tags.ts')};
import { CommunicationError, TruncationError } from ${src('errors.ts')};
import { bindSchedule } from ${src('schedule/run.ts')};

export const SENTINEL = 0xa5;

/** Buffer i of rank r before run it: 'recv' all SENTINEL, any other a pattern of (r, i, it). */
export function initial(name: string, bytes: number, r: number, i: number, it: number): Uint8Array {
  const b = new Uint8Array(bytes);
  if (name === 'recv') return b.fill(SENTINEL);
  for (let j = 0; j < bytes; j++) b[j] = (r * 37 + i * 53 + it * 101 + j * 11 + 1) & 0xff;
  return b;
}

/** into := 3·into + from (mod 256), byte by byte: not commutative. */
export const combiner: ScheduleCombiner = {
  elementBytes: 1,
  bind: (into, from) => () => {
    for (let j = 0; j < into.length; j++) into[j] = (into[j] * 3 + from[j]) & 0xff;
  },
};

const recvError: NonNullable<ScheduleOptions['recvError']> = (peer, tag, expected, got, cause) =>
  new CommunicationError(\`custom: peer \${peer} tag \${tag} expected \${expected} got \${String(got)} cause \${cause instanceof TruncationError ? 'TruncationError' : String(cause)}\`, { rank: 0 });

export interface StreamsArgs {
  readonly schedules: readonly RankSchedule[];
  readonly repeats: number;
  readonly recvError?: boolean;
}

export interface Runs {
  /** Every buffer after every run. */
  readonly buffers: number[][][];
  /** '<class>: <message>' of the failed run, or null. */
  readonly error: string | null;
}

export interface StreamsResult {
  readonly native: boolean;
  readonly nativeRuns: Runs;
  readonly portableRuns: Runs;
}

export default async function streamsProgram(comm: Communicator, args: StreamsArgs): Promise<StreamsResult> {
  const rs = args.schedules[comm.rank];
  const options: ScheduleOptions = { combine: combiner, ...(args.recvError === true ? { recvError } : {}) };
  const native = comm.bindValidatedSchedule?.(rs, rs.buffers.map((b) => new Uint8Array(b.bytes)), options) !== undefined;
  const runs = async (portable: boolean): Promise<Runs> => {
    const bufs = rs.buffers.map((b) => new Uint8Array(b.bytes));
    const bound = bindSchedule(comm, rs, bufs, { ...options, portable });
    const buffers: number[][][] = [];
    for (let it = 0; it < args.repeats; it++) {
      rs.buffers.forEach((b, i) => bufs[i].set(initial(b.name, b.bytes, comm.rank, i, it)));
      try {
        await bound.run(it * CALL_TAG_STRIDE);
      } catch (e) {
        return { buffers, error: e instanceof Error ? \`\${e.name}: \${e.message}\` : String(e) };
      }
      buffers.push(bufs.map((b) => Array.from(b)));
    }
    return { buffers, error: null };
  };
  return { native, nativeRuns: await runs(false), portableRuns: await runs(true) };
}
`;

interface StreamsArgs {
  readonly schedules: readonly RankSchedule[];
  readonly repeats: number;
  readonly recvError?: boolean;
}
interface Runs {
  readonly buffers: number[][][];
  readonly error: string | null;
}
interface StreamsResult {
  readonly native: boolean;
  readonly nativeRuns: Runs;
  readonly portableRuns: Runs;
}
interface StreamsModule {
  readonly default: (comm: Communicator, args: StreamsArgs) => Promise<StreamsResult>;
  readonly initial: (name: string, bytes: number, r: number, i: number, it: number) => Uint8Array;
  readonly SENTINEL: number;
}

const STREAMS_URL = ((): string => {
  const file = join(dir, 'streams-program.ts');
  writeFileSync(file, STREAMS_PROGRAM);
  return pathToFileURL(file).href;
})();

let streamsModule: StreamsModule | undefined;
async function streamsProgram(): Promise<StreamsModule> {
  streamsModule ??= (await import(STREAMS_URL)) as StreamsModule;
  return streamsModule;
}

/** The stream program on p endpoints in this thread (rings of `ring` bytes). */
async function streamsInThread(args: StreamsArgs, ring = 4096): Promise<StreamsResult[]> {
  const prog = await streamsProgram();
  const { eps } = threadsWorld(args.schedules.length, ring, { lazy: true });
  return Promise.all(eps.map((ep) => prog.default(createWorldCommunicator(ep, { endpointChecks: true }), args)));
}

/** The stream program through runThreads (worker threads). */
function streamsThreads(args: StreamsArgs, channelBytes = 4096): Promise<StreamsResult[]> {
  return runThreads<StreamsResult>(args.schedules.length, STREAMS_URL, args, { channelBytes });
}

const rg = (buffer: number, offset: number, length: number): ByteRange => ({ buffer, offset, length });
const sendOp = (peer: number, tag: number, ...data: ByteRange[]): ScheduleOp => ({ kind: 'send', peer, tag, data });
const recvOp = (peer: number, tag: number, ...data: ByteRange[]): ScheduleOp => ({ kind: 'recv', peer, tag, data });
const copyOp = (to: ByteRange[], from: ByteRange[], tag?: number): ScheduleOp => (tag === undefined ? { kind: 'copy', to, from } : { kind: 'copy', to, from, tag });
const combineOp = (into: ByteRange, from: ByteRange): ScheduleOp => ({ kind: 'combine', into: [into], from: [from] });

/** Per rank the pipelined ring allgatherv's schedule for blocks of `bytes` (offsets: prefix sums). */
function ringSchedules(bytes: readonly number[]): RankSchedule[] {
  const p = bytes.length;
  const offsets: number[] = [];
  let at = 0;
  for (const b of bytes) {
    offsets.push(at);
    at += b;
  }
  return Array.from({ length: p }, (_, rank) => pipelinedRingSchedule({ rank, p, bytes, offsets }, ALLGATHER_TAGS.pipelinedRing));
}

/** Blocks of p ranks: 0 to 300 bytes, about a third empty. */
function ringBytes(p: number, seed: number): number[] {
  const rnd = rng(seed);
  return Array.from({ length: p }, () => (rnd() < 0.3 ? 0 : int(rnd, 1, 300)));
}

/** Checks every rank's recv after every run of both executors against the blocks (initial 'send' of each rank). */
async function checkRing(bytes: readonly number[], out: readonly StreamsResult[], repeats: number): Promise<void> {
  const { initial } = await streamsProgram();
  const total = bytes.reduce((a, b) => a + b, 0);
  const p = bytes.length;
  expect(out).toHaveLength(p);
  for (let it = 0; it < repeats; it++) {
    const want: number[] = [];
    for (let i = 0; i < p; i++) want.push(...initial('send', bytes[i], i, 0, it));
    out.forEach((o, r) => {
      expect(o.native, `rank ${r} bound natively`).toBe(true);
      for (const [which, runs] of [['native', o.nativeRuns], ['portable', o.portableRuns]] as const) {
        expect(runs.error, `${which} rank ${r}`).toBeNull();
        expect(runs.buffers, `${which} rank ${r}`).toHaveLength(repeats);
        const recv = runs.buffers[it][1];
        expect(recv.length).toBe(total);
        expect(recv, `${which} rank ${r} run ${it} bytes ${bytes.join(',')}`).toEqual(want);
      }
    });
  }
}

const T0 = FIRST_DATA_TAG;
const T1 = FIRST_DATA_TAG + 1;
const T2 = FIRST_DATA_TAG + 2;
const T3 = FIRST_DATA_TAG + 3;
const PORT = FIRST_DATA_TAG + 4;

/**
 * Hand-written schedules of p ≥ 2 ranks in a ring (buffers 0 'send' 12 B, 1 'recv' 40 B, 2
 * 'tmp' 8 B): a plain step (a copy, a send right, a receive from the left; window 1), then a
 * step of streams [4, 0, 3, 5] with window 2 — stream 0 receives three chunks from the left
 * (the third vectored) and one from the right; stream 1 is empty; stream 2 sends the own
 * chunk right, then forwards the first two received chunks, each after its receive; stream 3
 * copies the first chunk into tmp after its receive, combines the second into it after its
 * receive, copies tmp through a port after the last forward (a dependency on a send), sends a
 * vectored message left after the third chunk, and combines the one from the right into recv
 * after its receive — then a plain step (tmp right, from the left; window 2).
 */
function handSchedules(p: number): RankSchedule[] {
  return Array.from({ length: p }, (_, rank): RankSchedule => {
    const left = (rank - 1 + p) % p;
    const right = (rank + 1) % p;
    const S = 0;
    const R = 1;
    const TMP = 2;
    const streamOps: ScheduleOp[] = [
      // stream 0: ops 0..3
      recvOp(left, T1, rg(R, 8, 4)),
      recvOp(left, T1, rg(R, 12, 4)),
      recvOp(left, T1, rg(R, 16, 2), rg(R, 30, 2)),
      recvOp(right, T2, rg(R, 20, 4)),
      // stream 1: none; stream 2: ops 4..6
      sendOp(right, T1, rg(S, 8, 4)),
      sendOp(right, T1, rg(R, 8, 4)),
      sendOp(right, T1, rg(R, 12, 4)),
      // stream 3: ops 7..11
      copyOp([rg(TMP, 0, 4)], [rg(R, 8, 4)]),
      combineOp(rg(TMP, 0, 4), rg(R, 12, 4)),
      copyOp([rg(R, 24, 4)], [rg(TMP, 0, 4)], PORT),
      sendOp(left, T2, rg(TMP, 0, 2), rg(R, 16, 2)),
      combineOp(rg(R, 20, 4), rg(TMP, 4, 4)),
    ];
    const streams: ScheduleStep = { window: 2, ops: streamOps, streams: [4, 0, 3, 5], after: [-1, -1, -1, -1, -1, 0, 1, 0, 1, 6, 2, 3] };
    return {
      rank,
      buffers: [
        { name: 'send', bytes: 12 },
        { name: 'recv', bytes: 40 },
        { name: 'tmp', bytes: 8 },
      ],
      steps: [
        { window: 1, ops: [copyOp([rg(R, 0, 4)], [rg(S, 0, 4)]), sendOp(right, T0, rg(S, 4, 4)), recvOp(left, T0, rg(R, 4, 4))] },
        streams,
        { window: 2, ops: [sendOp(right, T3, rg(TMP, 0, 8)), recvOp(left, T3, rg(R, 32, 8))] },
      ],
    };
  });
}

/**
 * What rank r's buffers hold after run `it` of the hand-written schedules (handSchedules),
 * computed from the initial contents of every rank.
 */
async function handExpected(p: number, r: number, it: number): Promise<number[][]> {
  const { initial } = await streamsProgram();
  const send = (q: number): Uint8Array => initial('send', 12, q, 0, it);
  const tmpOf = (q: number): Uint8Array => {
    // chunk 0 from the left is the left's own chunk (send[8, 12)), chunk 1 the left's first received chunk
    const l = (q - 1 + p) % p;
    const ll = (q - 2 + p) % p;
    const t = initial('tmp', 8, q, 2, it);
    t.set(send(l).subarray(8, 12), 0);
    for (let j = 0; j < 4; j++) t[j] = (t[j] * 3 + send(ll)[8 + j]) & 0xff;
    return t;
  };
  const left = (r - 1 + p) % p;
  const right = (r + 1) % p;
  const l2 = (r - 2 + p) % p;
  const l3 = (r - 3 + 3 * p) % p;
  const recv = new Uint8Array(40).fill(0xa5);
  recv.set(send(r).subarray(0, 4), 0);
  recv.set(send(left).subarray(4, 8), 4);
  recv.set(send(left).subarray(8, 12), 8);
  recv.set(send(l2).subarray(8, 12), 12);
  const third = send(l3).subarray(8, 12);
  recv.set(third.subarray(0, 2), 16);
  recv.set(third.subarray(2, 4), 30);
  // from the right: its tmp[0, 2) and its recv[16, 18) (the first half of its third chunk)
  const tr = tmpOf(right);
  const fromRight = [tr[0], tr[1], ...send((right - 3 + 3 * p) % p).subarray(8, 10)];
  const tmp = tmpOf(r);
  for (let j = 0; j < 4; j++) recv[20 + j] = (fromRight[j] * 3 + tmp[4 + j]) & 0xff;
  recv.set(tmp.subarray(0, 4), 24);
  recv.set(tmpOf(left), 32);
  return [Array.from(send(r)), Array.from(recv), Array.from(tmp)];
}

async function checkHand(p: number, out: readonly StreamsResult[], repeats: number): Promise<void> {
  expect(out).toHaveLength(p);
  for (let r = 0; r < p; r++) {
    const o = out[r];
    expect(o.native, `rank ${r} bound natively`).toBe(true);
    expect(o.nativeRuns.error).toBeNull();
    expect(o.portableRuns.error).toBeNull();
    expect(o.nativeRuns.buffers).toHaveLength(repeats);
    expect(o.nativeRuns.buffers, `rank ${r}: native and portable`).toEqual(o.portableRuns.buffers);
    for (let it = 0; it < repeats; it++) expect(o.nativeRuns.buffers[it], `rank ${r} run ${it}`).toEqual(await handExpected(p, r, it));
  }
}

/**
 * Rank 0 receives 5 bytes in stream 1 of step 1 (op 2 of the step; stream 0 sends to rank 1,
 * stream 2 copies what arrived, after it) from rank 1's messages of `got` bytes, one per run.
 */
function recvErrorSchedules(got: number): RankSchedule[] {
  return [
    {
      rank: 0,
      buffers: [{ name: 'b', bytes: 12 }],
      steps: [
        { window: 1, ops: [copyOp([rg(0, 10, 1)], [rg(0, 11, 1)])] },
        {
          window: 2,
          ops: [sendOp(1, T1, rg(0, 0, 2)), copyOp([rg(0, 11, 1)], [rg(0, 0, 1)]), recvOp(1, T0, rg(0, 2, 5)), copyOp([rg(0, 7, 3)], [rg(0, 2, 3)])],
          streams: [2, 1, 1],
          after: [-1, -1, -1, 2],
        },
      ],
    },
    {
      rank: 1,
      buffers: [{ name: 'b', bytes: 9 }],
      steps: [{ window: 2, ops: [sendOp(0, T0, rg(0, 0, got)), recvOp(0, T1, rg(0, 0, 2))] }],
    },
  ];
}

function checkRecvErrorsInStreams(out: readonly StreamsResult[]): void {
  expect(out[0].native).toBe(true);
  expect(out[0].nativeRuns.buffers).toEqual([]);
  expect(out[0].nativeRuns.error).not.toBeNull();
  expect(out[0].nativeRuns.error).toBe(out[0].portableRuns.error);
  expect(out[1].nativeRuns.error).toBeNull();
  expect(out[1].portableRuns.error).toBeNull();
}

const SHORT = 'CommunicationError: rank 0: schedule step 1 op 2: receive from rank 1 tag ' + String(T0) + ' got 3 bytes, expected 5';
const LONG = /^TruncationError: message of 9 bytes from rank 1 \(tag \d+\) exceeds the receive buffer of 5 bytes$/;

describe('steps with concurrent streams, natively on threads endpoints in one thread', () => {
  it('the endpoint binds them (no longer declined) and ThreadsSchedule runs them', async () => {
    const bind = vi.spyOn(ThreadsEndpoint.prototype, 'bindSchedule');
    const start = vi.spyOn(ThreadsSchedule.prototype, 'start');
    const p = 3;
    const out = await streamsInThread({ schedules: handSchedules(p), repeats: 3 });
    await checkHand(p, out, 3);
    // per rank: the program's own look (bindValidatedSchedule) and the native binding
    expect(bind).toHaveBeenCalledTimes(2 * p);
    for (const r of bind.mock.results) {
      expect(r.type).toBe('return');
      expect(r.value).toBeInstanceOf(ThreadsSchedule);
    }
    // every native run went through ThreadsSchedule.start; the portable ones did not
    expect(start).toHaveBeenCalledTimes(3 * p);
  });

  it.each([2, 3, 4, 5])('hand-written schedules (3 streams and an empty one, window 2, dependencies, copies and combines in a stream) between plain steps, 3 runs: p = %i', async (p) => {
    const out = await streamsInThread({ schedules: handSchedules(p), repeats: 3 });
    await checkHand(p, out, 3);
  });

  it('hand-written schedules with rings of 64 bytes (sends queue)', async () => {
    const out = await streamsInThread({ schedules: handSchedules(4), repeats: 3 }, 64);
    await checkHand(4, out, 3);
  });

  it.each([2, 3, 4, 5, 6])('the pipelined ring allgatherv’s schedules, random blocks with zeros, 3 runs each: p = %i', async (p) => {
    const sizes = [ringBytes(p, 300 + p), ringBytes(p, 400 + p), new Array<number>(p).fill(0).map((_, i) => (i === p - 1 ? 97 : 0)), new Array<number>(p).fill(0)];
    for (const bytes of sizes) {
      const out = await streamsInThread({ schedules: ringSchedules(bytes), repeats: 3 }, 256);
      await checkRing(bytes, out, 3);
    }
  });

  it('a short and a long receive in a stream fail as with the portable executor, through recvError when given', async () => {
    const short = await streamsInThread({ schedules: recvErrorSchedules(3), repeats: 1 });
    checkRecvErrorsInStreams(short);
    expect(short[0].nativeRuns.error).toBe(SHORT);
    const long = await streamsInThread({ schedules: recvErrorSchedules(9), repeats: 1 });
    checkRecvErrorsInStreams(long);
    expect(long[0].nativeRuns.error).toMatch(LONG);
    const custom = await streamsInThread({ schedules: recvErrorSchedules(3), repeats: 1, recvError: true });
    checkRecvErrorsInStreams(custom);
    expect(custom[0].nativeRuns.error).toBe(`CommunicationError: custom: peer 1 tag ${T0} expected 5 got 3 cause undefined`);
    const customLong = await streamsInThread({ schedules: recvErrorSchedules(9), repeats: 1, recvError: true });
    checkRecvErrorsInStreams(customLong);
    expect(customLong[0].nativeRuns.error).toBe(`CommunicationError: custom: peer 1 tag ${T0} expected 5 got undefined cause TruncationError`);
  });

  it.each([false, true])('each stream has its own window, issues in order, and waits at a dependency (portable: %s)', async (portable) => {
    const { eps } = threadsWorld(2, 1024, { lazy: true });
    const [c0, c1] = eps.map((ep) => createWorldCommunicator(ep, { endpointChecks: true }));
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 24 }],
      steps: [
        {
          window: 2,
          streams: [3, 3],
          after: [-1, -1, -1, -1, 1, -1],
          ops: [
            // stream 0: two receives, then a copy of the first one's bytes, issued once one of them has completed
            recvOp(1, 5, rg(0, 0, 2)),
            recvOp(1, 6, rg(0, 2, 2)),
            copyOp([rg(0, 8, 2)], [rg(0, 0, 2)]),
            // stream 1 (its own window: not held up by stream 0's two receives): a receive, a
            // copy of the tag-6 bytes after that receive (a dependency), then a copy of the
            // tag-5 bytes, which in order waits behind the dependency
            recvOp(1, 7, rg(0, 4, 2)),
            copyOp([rg(0, 10, 2)], [rg(0, 2, 2)]),
            copyOp([rg(0, 12, 2)], [rg(0, 0, 2)]),
          ],
        },
        // a plain step after the streams: only once all of them have completed
        { window: 1, ops: [copyOp([rg(0, 14, 6)], [rg(0, 8, 6)])] },
      ],
    };
    const buf = new Uint8Array(24);
    const run = bindSchedule(c0, rs, [buf], { portable });
    const done = run.run();
    const turns = (): Promise<void> => new Promise((res) => setTimeout(res, 5));
    await turns();
    // stream 1's receive is posted although stream 0 has two outstanding
    await c1.send(0, 7, Uint8Array.of(5, 6));
    await turns();
    expect(Array.from(buf.subarray(0, 14))).toEqual([0, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0]);
    await c1.send(0, 5, Uint8Array.of(1, 2));
    await turns();
    // stream 0's copy went; stream 1 still waits for the tag-6 receive, its last copy behind it
    expect(Array.from(buf.subarray(0, 14))).toEqual([1, 2, 0, 0, 5, 6, 0, 0, 1, 2, 0, 0, 0, 0]);
    await c1.send(0, 6, Uint8Array.of(3, 4));
    await done;
    expect(Array.from(buf)).toEqual([1, 2, 3, 4, 5, 6, 0, 0, 1, 2, 3, 4, 1, 2, 1, 2, 3, 4, 1, 2, 0, 0, 0, 0]);
  });

  it('names an issued operation it waits for, not one its stream has not reached; a dependency is met by this run only', async () => {
    const world = threadsWorld(2, 1024, { lazy: true });
    const ep = world.eps[0];
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'b', bytes: 8 }],
      steps: [
        { window: 1, ops: [copyOp([rg(0, 4, 4)], [rg(0, 0, 4)])] },
        {
          window: 1,
          streams: [2, 0, 2],
          after: [-1, -1, 1, -1],
          // stream 0's second receive waits for its window; stream 2 waits at its first
          // operation (its dependency, that second receive): its second is not issued
          ops: [recvOp(1, 4, rg(0, 0, 2)), recvOp(1, 5, rg(0, 6, 2)), recvOp(1, 6, rg(0, 2, 2)), recvOp(1, 3, rg(0, 4, 2))],
        },
      ],
    };
    const buf = new Uint8Array(8);
    const es = ep.bindSchedule(0, null, rs, [buf], {});
    expect(es).toBeInstanceOf(ThreadsSchedule);
    const c1 = createWorldCommunicator(world.eps[1], { endpointChecks: true });
    const turns = (): Promise<void> => new Promise((res) => setTimeout(res, 5));
    const first = es.start(0);
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 4 });
    await c1.send(0, 4, Uint8Array.of(1, 2));
    await turns();
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 5 });
    await c1.send(0, 5, Uint8Array.of(13, 14));
    await turns();
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 6 });
    await c1.send(0, 6, Uint8Array.of(3, 4));
    await turns();
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 3 });
    await c1.send(0, 3, Uint8Array.of(5, 6));
    await first;
    expect(es.waiting()).toBeUndefined();
    expect(Array.from(buf)).toEqual([1, 2, 3, 4, 5, 6, 13, 14]);
    // a second run on the binding: the first run's completion of the tag-5 receive does not
    // count as this one's (the tag-6 receive waits for this run's, so the tag-6 message stays unexpected)
    const second = es.start(0);
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 4 });
    await c1.send(0, 6, Uint8Array.of(7, 8));
    await turns();
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 4 });
    expect(Array.from(buf)).toEqual([1, 2, 3, 4, 1, 2, 3, 4]);
    await c1.send(0, 4, Uint8Array.of(9, 10));
    await turns();
    expect(es.waiting()).toEqual({ kind: 'recv', peer: 1, tag: 5 });
    expect(Array.from(buf)).toEqual([9, 10, 3, 4, 1, 2, 3, 4]);
    await c1.send(0, 5, Uint8Array.of(15, 16));
    await c1.send(0, 3, Uint8Array.of(11, 12));
    await second;
    expect(Array.from(buf)).toEqual([9, 10, 7, 8, 11, 12, 15, 16]);
  });
});

describe('steps with concurrent streams through runThreads', () => {
  it.each([2, 3, 4, 5, 6])('the pipelined ring allgatherv’s schedules, random blocks with zeros, 3 runs, native and portable: p = %i', async (p) => {
    const bytes = ringBytes(p, 500 + p);
    const out = await streamsThreads({ schedules: ringSchedules(bytes), repeats: 3 }, 1024);
    await checkRing(bytes, out, 3);
  }, 30_000);

  it('hand-written schedules (3 streams and an empty one, window 2, dependencies, copies and combines), 3 runs: p = 4', async () => {
    const out = await streamsThreads({ schedules: handSchedules(4), repeats: 3 }, 64);
    await checkHand(4, out, 3);
  }, 30_000);

  it('a short receive in a stream fails as with the portable executor', async () => {
    const out = await streamsThreads({ schedules: recvErrorSchedules(3), repeats: 1 });
    checkRecvErrorsInStreams(out);
    expect(out[0].nativeRuns.error).toBe(SHORT);
  }, 30_000);
});
