/**
 * The simulator's native executor of schedules (src/transports/sim/schedule.ts) against the
 * portable executor (src/schedule/run.ts, `{ portable: true }`) on the simulator: the same
 * per-rank virtual completion times (to the last unit), the same messages (trace: ends, starts,
 * order), the same bytes in every bound buffer and the same errors — for every compiled
 * gatherv/scatterv variant over random counts (zeros too), roots, unit sizes and port models;
 * mixed with plain point-to-point traffic; in a sub-communicator; with receives of the wrong
 * length, a receive that never comes (deadlock), repeated runs and copies through a port. Steps
 * with concurrent streams (ScheduleStep `streams`, `after`): the pipelined ring's schedules for
 * p = 1..12 under every port model and a per-pair one, hand-written stream steps between
 * ordinary ones, their errors, and probes that fail when a continuation takes one promise hop
 * more or fewer than the portable executor's.
 */
import { describe, expect, it, vi } from 'vitest';
import { COMPILED_V_ALGORITHMS, compileVSchedule, FIRST_DATA_TAG } from '../src/collectives/v-schedule.js';
import { failedRestriction, variantRow } from '../src/collectives/v-variants.js';
import type { Communicator } from '../src/comm/communicator.js';
import { compileAllgatherSchedule } from '../src/collectives/allgather/schedule.js';
import { pipelinedRingSchedule } from '../src/collectives/allgather/pipelined-ring.js';
import type { RankSchedule, ScheduleCombiner, ScheduleStep } from '../src/comm/schedule.js';
import { checkSchedule } from '../src/schedule/check.js';
import { CALL_TAG_STRIDE } from '../src/comm/tags.js';
import { CommunicationError, DeadlockError, InvalidArgumentError, TruncationError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { bindSchedule, type ScheduleOptions } from '../src/schedule/run.js';
import type { WorldSchedule } from '../src/schedule/types.js';
import { runSim, type SimResult } from '../src/transports/sim/index.js';
import { SimEndpoint } from '../src/transports/sim/endpoint.js';
import { compileBasicSchedule } from '../src/collectives/basic/world-schedule.js';
import { type ModelCase, PORT_MODELS } from './helpers/models.js';
import { int, rng, variantCounts } from './helpers/random.js';
import { rejection } from './helpers/errors.js';
import { BYTE_OP, dependencyWorld, HOP_PROBE_VARIANTS, hopProbeWorld, STREAM_MODELS, streamModels, streamWorld } from './helpers/stream-worlds.js';

type Op = 'gatherv' | 'scatterv';

const MODELS = PORT_MODELS;

const fill = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (seed * 37 + i * 11 + 1) & 0xff);

/** Buffers for `rs`: 'send' filled from the rank, the others with a marker. */
function buffersFor(rs: RankSchedule, rank: number, run = 0): Uint8Array[] {
  return rs.buffers.map((b) => (b.name === 'send' ? fill(b.bytes, rank + 101 * run) : new Uint8Array(b.bytes).fill(0xee)));
}

interface Outcome {
  readonly finish: number[];
  readonly messages: string[];
  readonly copies: string[];
  /** Every rank's buffers after the runs. */
  readonly buffers: Uint8Array[][];
  /** Per rank, per run: virtual time from start to completion. */
  readonly spans: number[][];
}

function outcome(res: SimResult<{ bufs: Uint8Array[]; spans: number[] }>): Outcome {
  return {
    finish: res.finish,
    messages: (res.trace?.messages ?? []).map((m) => `${m.from}>${m.to} c${m.ctx} t${m.tag} ${m.bytes}B ${m.start}-${m.end}`),
    copies: (res.trace?.copies ?? []).map((c) => `${c.rank} ${c.bytes}B ${c.start}-${c.end}`),
    buffers: res.results.map((r) => r.bufs),
    spans: res.results.map((r) => r.spans),
  };
}

/** Runs every rank's schedule of `world` `runs` times (clock synced between runs), natively or portably. */
async function runWorld(world: WorldSchedule, mc: ModelCase, unitBytes: number, portable: boolean, runs = 1, options: ScheduleOptions = {}): Promise<Outcome> {
  const p = world.ranks.length;
  const res = await runSim(
    p,
    async (comm) => {
      const rs = world.ranks[comm.rank];
      const bufs = buffersFor(rs, comm.rank);
      const bound = bindSchedule(comm, rs, bufs, { ...options, portable });
      const clock = comm.clock;
      if (clock === undefined) throw new Error('no clock');
      const spans: number[] = [];
      for (let k = 0; k < runs; k++) {
        if (k > 0) {
          // new data for the next run
          const fresh = buffersFor(rs, comm.rank, k);
          bufs.forEach((b, i) => b.set(fresh[i]));
        }
        const t = clock.now();
        // run k in call slot k: its collective tags moved (shiftedTag)
        await bound.run(k * CALL_TAG_STRIDE);
        spans.push(clock.now() - t);
        await clock.sync();
      }
      return { bufs, spans };
    },
    { model: mc.model, ports: mc.ports, unitBytes, trace: true },
  );
  return outcome(res);
}

interface VCaseRow {
  readonly op: Op;
  readonly algorithm: string;
  readonly counts: number[];
  readonly root: number;
  readonly unitBytes: number;
  readonly mc: ModelCase;
}

function vCases(): VCaseRow[] {
  const out: VCaseRow[] = [];
  const rnd = rng(20261127);
  for (const algorithm of COMPILED_V_ALGORITHMS) {
    const row = variantRow(algorithm);
    if (row === undefined) throw new Error(algorithm);
    for (const op of ['gatherv', 'scatterv'] as const) {
      for (const p of [1, 2, 3, 5, 8, 12, 17]) {
        for (const mc of MODELS) {
          const counts = variantCounts(rnd, algorithm, p);
          if (failedRestriction(row, { p, model: mc.model, counts }, ['model', 'counts']) !== undefined) continue;
          const root = [0, p - 1, int(rnd, 0, p - 1)][int(rnd, 0, 2)];
          out.push({ op, algorithm, counts, root, unitBytes: rnd() < 0.5 ? 1 : 4, mc });
        }
      }
    }
  }
  return out;
}

const V_CASES = vCases();
const vLabel = (c: VCaseRow): string => `${c.op} ${c.algorithm} ${c.mc.name} root=${c.root} u=${c.unitBytes} counts=${c.counts.join(',')}`;

/** Both executors, one simulation each: everything observable must be equal. */
async function expectSame(world: WorldSchedule, mc: ModelCase, unitBytes: number, label: string, runs = 1, options: ScheduleOptions = {}): Promise<Outcome> {
  const native = await runWorld(world, mc, unitBytes, false, runs, options);
  const portable = await runWorld(world, mc, unitBytes, true, runs, options);
  expect(native.finish, `${label}: finish times`).toEqual(portable.finish);
  expect(native.spans, `${label}: per-rank run times`).toEqual(portable.spans);
  expect(native.messages, `${label}: messages`).toEqual(portable.messages);
  expect(native.copies, `${label}: copies`).toEqual(portable.copies);
  expect(native.buffers, `${label}: buffers`).toEqual(portable.buffers);
  return native;
}

describe('native schedules on the simulator = the portable executor', () => {
  const groups = new Map<string, VCaseRow[]>();
  for (const c of V_CASES) {
    const key = `${c.op} ${c.algorithm}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }

  it('has cases for every compiled algorithm, both ops, every model', () => {
    expect(groups.size).toBe(COMPILED_V_ALGORITHMS.length * 2);
    expect(new Set(V_CASES.map((c) => c.mc.name)).size).toBe(MODELS.length);
    expect(V_CASES.length).toBeGreaterThan(800);
  });

  it.each([...groups.keys()])('%s: same times, messages, copies and bytes', async (key) => {
    for (const c of groups.get(key) ?? []) {
      const world = compileVSchedule(c.op, c.algorithm, c.counts, { root: c.root, model: c.mc.model, unitBytes: c.unitBytes });
      const out = await expectSame(world, c.mc, c.unitBytes, vLabel(c));
      // and the data arrived: gatherv's root / scatterv's ranks hold the blocks
      const u = c.unitBytes;
      if (c.op === 'gatherv') {
        const recv = out.buffers[c.root][world.ranks[c.root].buffers.findIndex((b) => b.name === 'recv')];
        let off = 0;
        for (let i = 0; i < c.counts.length; i++) {
          expect(recv.subarray(off, off + c.counts[i] * u), `${vLabel(c)} block ${i}`).toEqual(fill(c.counts[i] * u, i));
          off += c.counts[i] * u;
        }
      } else {
        const rootSend = fill(world.ranks[c.root].buffers.find((b) => b.name === 'send')?.bytes ?? 0, c.root);
        let off = 0;
        for (let i = 0; i < c.counts.length; i++) {
          const idx = world.ranks[i].buffers.findIndex((b) => b.name === 'recv');
          const block = rootSend.subarray(off, off + c.counts[i] * u);
          off += c.counts[i] * u;
          if (idx >= 0) expect(out.buffers[i][idx], `${vLabel(c)} rank ${i}`).toEqual(block);
        }
      }
    }
  });

  it('runs the same bound schedule several times in a row (new data each run)', async () => {
    const rnd = rng(7);
    for (const algorithm of ['linear', 'binomial', 'traff'] as const) {
      for (const mc of [MODELS[1], MODELS[4]]) {
        const counts = Array.from({ length: 9 }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 30)));
        const world = compileVSchedule('gatherv', algorithm, counts, { root: 4, model: mc.model });
        const out = await expectSame(world, mc, 1, `${algorithm} ${mc.name} ×3`, 3);
        // the last run's data at the root
        const recv = out.buffers[4][world.ranks[4].buffers.findIndex((b) => b.name === 'recv')];
        let off = 0;
        for (let i = 0; i < counts.length; i++) {
          expect(recv.subarray(off, off + counts[i])).toEqual(fill(counts[i], i + 101 * 2));
          off += counts[i];
        }
        // every run takes the same time
        for (const s of out.spans) expect(new Set(s).size).toBe(1);
        // run k travels in call slot k
        const tags = new Set(out.messages.map((m) => m.split(' ')[2]));
        expect(tags).toEqual(new Set([0, 1, 2].map((k) => `t${FIRST_DATA_TAG + k * CALL_TAG_STRIDE}`)));
      }
    }
  });

  it('combine operations (reduce, allreduce, exscan with a non-commutative operator): the same times, messages, copies and bytes; a throwing operator fails the run alike', async () => {
    // 2×2 integer matrix products mod 1009 on Int32 quadruples: associative, not commutative
    const matmul = (a: Int32Array, b: Int32Array): void => {
      for (let i = 0; i < a.length; i += 4) {
        const [a0, a1, a2, a3] = [a[i], a[i + 1], a[i + 2], a[i + 3]];
        a[i] = (a0 * b[i] + a1 * b[i + 2]) % 1009;
        a[i + 1] = (a0 * b[i + 1] + a1 * b[i + 3]) % 1009;
        a[i + 2] = (a2 * b[i] + a3 * b[i + 2]) % 1009;
        a[i + 3] = (a2 * b[i + 1] + a3 * b[i + 3]) % 1009;
      }
    };
    const combiner = (fail: boolean): ScheduleOptions['combine'] => ({
      elementBytes: 4,
      bind: (into, from) => {
        const a = new Int32Array(into.buffer, into.byteOffset, into.length / 4);
        const b = new Int32Array(from.buffer, from.byteOffset, from.length / 4);
        return () => {
          if (fail) throw new Error('operator failed');
          matmul(a, b);
        };
      },
    });
    const run = async (world: WorldSchedule, mc: ModelCase, portable: boolean, fail = false): Promise<Outcome> => {
      const res = await runSim(
        world.ranks.length,
        async (comm) => {
          const rs = world.ranks[comm.rank];
          const bufs = rs.buffers.map((b) => {
            const x = new Int32Array(b.bytes / 4).map((_, i) => ((comm.rank + 3) * (i + 7)) % 1009);
            return new Uint8Array(x.buffer);
          });
          const clock = comm.clock as NonNullable<typeof comm.clock>;
          const t = clock.now();
          await bindSchedule(comm, rs, bufs, { portable, combine: combiner(fail) }).run();
          return { bufs, spans: [clock.now() - t] };
        },
        { model: mc.model, ports: mc.ports, trace: true },
      );
      return outcome(res);
    };
    for (const op of ['reduce', 'allreduce', 'exscan'] as const) {
      for (const p of [2, 3, 5, 8, 13]) {
        for (const mc of [MODELS[1], MODELS[3], MODELS[4]]) {
          const world = compileBasicSchedule(op, p, 32, p - 1);
          const label = `${op} p=${p} ${mc.name}`;
          const native = await run(world, mc, false);
          const portable = await run(world, mc, true);
          expect(native, label).toEqual(portable);
        }
      }
      const world = compileBasicSchedule(op, 4, 16, 0);
      const e1 = await rejection(run(world, MODELS[0], false, true));
      const e2 = await rejection(run(world, MODELS[0], true, true));
      expect((e1 as Error).message).toBe((e2 as Error).message);
      expect((e1 as Error).message).toMatch(/operator failed/);
    }
  });

  it('goes through the native executor: no isend / irecv of the endpoint (the portable executor: one per operation)', async () => {
    const world = compileVSchedule('gatherv', 'binomial', [3, 0, 5, 2, 7, 1], { root: 2, model: MODELS[0].model });
    const isend = vi.spyOn(SimEndpoint.prototype, 'isend');
    const irecv = vi.spyOn(SimEndpoint.prototype, 'irecv');
    try {
      const calls = async (portable: boolean): Promise<number> => {
        isend.mockClear();
        irecv.mockClear();
        const res = await runSim(
          6,
          async (comm) => {
            expect(comm.bindValidatedSchedule).toBeDefined();
            const rs = world.ranks[comm.rank];
            await bindSchedule(comm, rs, buffersFor(rs, comm.rank), { portable }).run();
          },
          { model: MODELS[0].model },
        );
        expect(res.messages).toBe(5);
        return isend.mock.calls.length + irecv.mock.calls.length;
      };
      expect(await calls(false)).toBe(0);
      expect(await calls(true)).toBe(10);
    } finally {
      isend.mockRestore();
      irecv.mockRestore();
    }
  });

  it('with a per-operation timeout (the endpoint wrapped): the same', async () => {
    const world = compileVSchedule('scatterv', 'traff', [4, 0, 9, 2, 6, 1, 3], { root: 5, model: MODELS[4].model });
    const run = async (timeoutMs: number | undefined): Promise<number[]> =>
      (
        await runSim(
          7,
          async (comm) => {
            const rs = world.ranks[comm.rank];
            await bindSchedule(comm, rs, buffersFor(rs, comm.rank)).run();
          },
          { model: MODELS[4].model, timeoutMs },
        )
      ).finish;
    expect(await run(60_000)).toEqual(await run(undefined));
  });
});

/** A hand-written schedule's helpers. */
const R = (buffer: number, offset: number, length: number): { buffer: number; offset: number; length: number } => ({ buffer, offset, length });

interface MixedOut {
  finish: number[];
  messages: string[];
  data: Uint8Array[][];
}

/**
 * Rank 0 runs a schedule (vectored ranges, two windows, a copy) against ranks 1–3's plain
 * point-to-point calls; rank 0 also has a plain receive of its own outstanding meanwhile,
 * and rank 2 a message to itself.
 */
async function mixed(portable: boolean, mc: ModelCase): Promise<MixedOut> {
  const rs: RankSchedule = {
    rank: 0,
    buffers: [
      { name: 'send', bytes: 24 },
      { name: 'recv', bytes: 40 },
    ],
    steps: [
      {
        window: 2,
        ops: [
          { kind: 'recv', peer: 1, tag: 5, data: [R(1, 0, 6), R(1, 10, 4)] },
          { kind: 'send', peer: 2, tag: 6, data: [R(0, 0, 8)] },
          { kind: 'recv', peer: 3, tag: 5, data: [R(1, 20, 12)] },
          { kind: 'copy', from: [R(0, 8, 4), R(0, 16, 4)], to: [R(1, 32, 8)] },
        ],
      },
      { window: 1, ops: [] },
      {
        window: 4,
        ops: [
          { kind: 'send', peer: 1, tag: 7, data: [R(0, 0, 3), R(0, 12, 0), R(0, 20, 4)] },
          { kind: 'recv', peer: 2, tag: 8, data: [R(1, 14, 6)] },
          { kind: 'send', peer: 3, tag: 7, data: [] },
        ],
      },
    ],
  };
  const res = await runSim(
    4,
    async (comm: Communicator) => {
      const me = comm.rank;
      const clock = comm.clock;
      if (clock === undefined) throw new Error('no clock');
      if (me === 0) {
        const bufs = [fill(24, 50), new Uint8Array(40)];
        const side = new Uint8Array(5);
        const plain = comm.irecv(1, 9, side);
        await bindSchedule(comm, rs, bufs, { portable }).run();
        await plain;
        return [...bufs, side];
      }
      if (me === 1) {
        const into = new Uint8Array(7);
        const a = comm.isend(0, 5, fill(10, 1));
        await comm.recv(0, 7, into);
        await a;
        await comm.send(0, 9, fill(5, 9));
        return [into];
      }
      if (me === 2) {
        const into = new Uint8Array(8);
        const self = new Uint8Array(3);
        const r = comm.irecv(2, 1, self);
        await comm.send(2, 1, fill(3, 22));
        await r;
        await comm.recv(0, 6, into);
        await comm.send(0, 8, fill(6, 2));
        return [into, self];
      }
      const into = new Uint8Array(0);
      await comm.send(0, 5, fill(12, 3));
      await comm.recv(0, 7, into);
      return [into];
    },
    { model: mc.model, ports: mc.ports, trace: true },
  );
  return {
    finish: res.finish,
    messages: (res.trace?.messages ?? []).map((m) => `${m.from}>${m.to} t${m.tag} ${m.bytes}B ${m.start}-${m.end}`),
    data: res.results,
  };
}

describe('native schedules mixed with plain point-to-point traffic', () => {
  it.each(MODELS.map((m) => [m.name, m] as const))('%s: same times, messages and data as the portable executor', async (_name, mc) => {
    const native = await mixed(false, mc);
    const portable = await mixed(true, mc);
    expect(native).toEqual(portable);
    const [send, recv, side] = native.data[0];
    expect(recv.subarray(0, 6)).toEqual(fill(10, 1).subarray(0, 6));
    expect(recv.subarray(10, 14)).toEqual(fill(10, 1).subarray(6, 10));
    expect(recv.subarray(14, 20)).toEqual(fill(6, 2));
    expect(recv.subarray(20, 32)).toEqual(fill(12, 3));
    expect(recv.subarray(32, 40)).toEqual(Uint8Array.from([...send.subarray(8, 12), ...send.subarray(16, 20)]));
    expect(side).toEqual(fill(5, 9));
    expect(native.data[1][0]).toEqual(Uint8Array.from([...send.subarray(0, 3), ...send.subarray(20, 24)]));
    expect(native.data[2][0]).toEqual(send.subarray(0, 8));
    expect(native.data[2][1]).toEqual(fill(3, 22));
  });

  it('runs in a sub-communicator (world peers and its context) beside traffic of the world', async () => {
    const run = async (portable: boolean): Promise<{ finish: number[]; got: (number[] | null)[] }> => {
      const res = await runSim(
        6,
        async (world: Communicator) => {
          // odd world ranks, reversed: sub rank i = world rank 5 - 2i
          const sub = await world.split(world.rank % 2, -world.rank);
          if (sub === null) throw new Error('no sub-communicator');
          if (world.rank % 2 === 0) {
            // world traffic with the same tag beside the schedule
            if (world.rank === 0) await world.send(1, 3, fill(4, 0));
            return null;
          }
          const r = sub.rank;
          const rs: RankSchedule =
            r === 0
              ? {
                  rank: 0,
                  buffers: [{ name: 'recv', bytes: 9 }],
                  steps: [{ window: 1, ops: [{ kind: 'recv', peer: 2, tag: 3, data: [R(0, 0, 5)] }, { kind: 'recv', peer: 1, tag: 3, data: [R(0, 5, 4)] }] }],
                }
              : { rank: r, buffers: [{ name: 'send', bytes: 3 + r }], steps: [{ window: 1, ops: [{ kind: 'send', peer: 0, tag: 3, data: [R(0, 0, 3 + r)] }] }] };
          const bufs = r === 0 ? [new Uint8Array(9)] : [fill(3 + r, world.rank)];
          const plain = world.rank === 1 ? world.irecv(0, 3, new Uint8Array(4)) : undefined;
          await bindSchedule(sub, rs, bufs, { portable }).run();
          if (plain !== undefined) await plain;
          return r === 0 ? Array.from(bufs[0]) : [];
        },
        { model: linearModel({ alpha: 10, beta: 2 }) },
      );
      return { finish: res.finish, got: res.results };
    };
    const native = await run(false);
    expect(native).toEqual(await run(true));
    // sub rank 0 is world 5: from sub rank 2 (world 1) 5 bytes, then sub rank 1 (world 3) 4 bytes
    expect(native.got[5]).toEqual([...fill(5, 1), ...fill(4, 3)]);
  });
});

/** Rank 0 expects `expected` bytes from rank 1 (tag 5), which sends `sent`; the error rank 0's run fails with. */
async function wrongLength(portable: boolean, expected: number, sent: number, window: number, options: ScheduleOptions): Promise<unknown> {
  const steps: ScheduleStep[] = [
    {
      window,
      ops: [
        { kind: 'send', peer: 1, tag: 6, data: [R(0, 0, 2)] },
        { kind: 'recv', peer: 1, tag: 5, data: [R(1, 0, expected)] },
      ],
    },
  ];
  const rs: RankSchedule = {
    rank: 0,
    buffers: [
      { name: 'send', bytes: 2 },
      { name: 'recv', bytes: expected },
    ],
    steps,
  };
  return errorAgainstSender(rs, portable, expected, sent, options);
}

/**
 * Runs rank 0's schedule `rs` (buffers: 'send' of 2 bytes, 'recv' of `expected`; it sends 2
 * bytes to rank 1 with tag 6, and receives from it with tag 5) while rank 1 receives those 2
 * bytes, then sends `sent` bytes with tag 5; the error rank 0's run fails with (undefined: none).
 */
async function errorAgainstSender(rs: RankSchedule, portable: boolean, expected: number, sent: number, options: ScheduleOptions): Promise<unknown> {
  let caught: unknown;
  await runSim(
    2,
    async (comm) => {
      if (comm.rank === 1) {
        await comm.recv(0, 6, new Uint8Array(2));
        await comm.send(0, 5, fill(sent, 1)).then(undefined, () => undefined);
        return;
      }
      try {
        await bindSchedule(comm, rs, [fill(2, 0), new Uint8Array(expected)], { ...options, portable }).run();
      } catch (e) {
        caught = e;
      }
    },
    { model: linearModel({ alpha: 3, beta: 1 }) },
  );
  return caught;
}

/** The wrong-length cases: a receive in a windowed step, in a step all at once, in a stream (after a send of another stream); where its error names it. */
const WRONG_LENGTH_CASES: readonly {
  readonly mode: string;
  readonly run: (portable: boolean, expected: number, sent: number, options: ScheduleOptions) => Promise<unknown>;
  readonly where: string;
}[] = [
  { mode: 'windowed step', run: (portable, expected, sent, options) => wrongLength(portable, expected, sent, 1, options), where: 'step 0 op 1' },
  { mode: 'step all at once', run: (portable, expected, sent, options) => wrongLength(portable, expected, sent, 2, options), where: 'step 0 op 1' },
  { mode: 'a stream', run: streamWrongLength, where: 'step 1 op 2' },
];

describe('receives of the wrong length', () => {
  for (const { mode, run, where } of WRONG_LENGTH_CASES) {
    it(`shorter (${mode}): the default CommunicationError, or recvError(peer, tag, expected, got, undefined)`, async () => {
      for (const portable of [false, true]) {
        const e = await run(portable, 8, 5, {});
        expect(e).toBeInstanceOf(CommunicationError);
        expect((e as Error).message).toBe(`rank 0: schedule ${where}: receive from rank 1 tag 5 got 5 bytes, expected 8`);
        const calls: unknown[][] = [];
        const mine = new Error('counts disagree');
        const e2 = await run(portable, 8, 5, {
          recvError: (...args) => {
            calls.push(args);
            return mine;
          },
        });
        expect(e2).toBe(mine);
        expect(calls).toEqual([[1, 5, 8, 5, undefined]]);
      }
    });

    it(`longer (${mode}): the simulator's TruncationError, or recvError(peer, tag, expected, undefined, cause)`, async () => {
      const texts: string[] = [];
      for (const portable of [false, true]) {
        const e = await run(portable, 8, 12, {});
        expect(e).toBeInstanceOf(TruncationError);
        texts.push((e as Error).message);
        const calls: unknown[][] = [];
        const mine = new Error('counts disagree');
        const e2 = await run(portable, 8, 12, {
          recvError: (...args) => {
            calls.push(args);
            return mine;
          },
        });
        expect(e2).toBe(mine);
        expect(calls.length).toBe(1);
        expect(calls[0].slice(0, 4)).toEqual([1, 5, 8, undefined]);
        expect(calls[0][4]).toBeInstanceOf(TruncationError);
      }
      expect(texts[0]).toBe(texts[1]);
    });
  }

  it('a failed run fails the program and the simulation names the rank', async () => {
    const rs: RankSchedule = { rank: 0, buffers: [{ name: 'recv', bytes: 4 }], steps: [{ window: 1, ops: [{ kind: 'recv', peer: 1, tag: 2, data: [R(0, 0, 4)] }] }] };
    const e = await rejection(
      runSim(
        2,
        async (comm) => {
          if (comm.rank === 1) return comm.send(0, 2, new Uint8Array(3));
          return bindSchedule(comm, rs, [new Uint8Array(4)]).run();
        },
        { model: linearModel({ alpha: 1, beta: 1 }) },
      ),
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as Error).message).toMatch(/^rank 0 failed: rank 0: schedule step 0 op 0: receive from rank 1 tag 2 got 3 bytes, expected 4/);
  });
});

describe('deadlock', () => {
  const stuck = (portable: boolean, timeoutMs?: number): Promise<unknown> => {
    const rs: RankSchedule = {
      rank: 1,
      buffers: [{ name: 'recv', bytes: 8 }],
      steps: [
        { window: 2, ops: [{ kind: 'recv', peer: 0, tag: 4, data: [R(0, 0, 4)] }] },
        { window: 1, ops: [{ kind: 'recv', peer: 2, tag: 9, data: [R(0, 4, 4)] }] },
      ],
    };
    return rejection(
      runSim(
        3,
        async (comm) => {
          if (comm.rank === 0) return comm.send(1, 4, new Uint8Array(4));
          if (comm.rank === 2) return undefined;
          return bindSchedule(comm, rs, [new Uint8Array(8)], { portable }).run();
        },
        { model: linearModel({ alpha: 10, beta: 1 }), timeoutMs },
      ),
    );
  };

  it('a schedule waiting for a receive that never comes: the DeadlockError naming the rank and the receive', async () => {
    const e = await stuck(false);
    expect(e).toBeInstanceOf(DeadlockError);
    const d = e as DeadlockError;
    expect(d.message).toBe('deadlock at virtual time 14: rank 1: recv from 2 tag 9');
    expect(d.ranks).toEqual([{ rank: 1, finished: false, waitsFor: ['recv from 2 tag 9'] }]);
    const p = (await stuck(true)) as DeadlockError;
    expect(p.message).toBe(d.message);
    expect(p.ranks).toEqual(d.ranks);
  });

  it('with a per-operation timeout (the endpoint wrapped) too', async () => {
    const e = await stuck(false, 60_000);
    expect(e).toBeInstanceOf(DeadlockError);
    expect((e as Error).message).toBe('deadlock at virtual time 14: rank 1: recv from 2 tag 9');
  });
});

describe('tags', () => {
  it('an operation whose tag is no tag fails the run as the portable executor’s isend does', async () => {
    const rs: RankSchedule = {
      rank: 0,
      buffers: [{ name: 'send', bytes: 2 }],
      steps: [{ window: 1, ops: [{ kind: 'send', peer: 1, tag: -3, data: [R(0, 0, 2)] }] }],
    };
    const errs: unknown[] = [];
    for (const portable of [false, true]) {
      await runSim(
        2,
        async (comm) => {
          if (comm.rank !== 0) return;
          errs.push(await rejection(bindSchedule(comm, rs, [new Uint8Array(2)], { portable }).run()));
        },
        { model: linearModel({ alpha: 1, beta: 1 }) },
      );
    }
    expect(errs[0]).toBeInstanceOf(InvalidArgumentError);
    expect((errs[0] as Error).message).toBe((errs[1] as Error).message);
  });
});

describe('failures elsewhere', () => {
  it('a rank failing aborts a schedule waiting for a receive: its run rejects, the simulation names the failed rank', async () => {
    const rs: RankSchedule = { rank: 0, buffers: [{ name: 'recv', bytes: 4 }], steps: [{ window: 1, ops: [{ kind: 'recv', peer: 1, tag: 2, data: [R(0, 0, 4)] }] }] };
    let got: unknown;
    const e = await rejection(
      runSim(
        2,
        async (comm) => {
          if (comm.rank === 1) {
            await comm.clock?.sync().then(undefined, () => undefined);
            throw new Error('boom');
          }
          const run = bindSchedule(comm, rs, [new Uint8Array(4)]).run();
          await comm.clock?.sync();
          try {
            await run;
          } catch (x) {
            got = x;
          }
        },
        { model: linearModel({ alpha: 1, beta: 1 }) },
      ),
    );
    expect((e as Error).message).toBe('rank 1 failed: boom');
    expect(got).toBeInstanceOf(CommunicationError);
    expect((got as Error).message).toMatch(/^rank 0: recv from 1 tag 2 aborted: rank 1 failed: boom/);
  });
});

describe('copies', () => {
  /** Rank 0: a copy through a port (tagged), then a send, window 1: the send waits for the copy. */
  const portCopy = async (portable: boolean, window: number, mc: ModelCase): Promise<MixedOut & { copies: string[] }> => {
    const rs: RankSchedule = {
      rank: 0,
      buffers: [
        { name: 'send', bytes: 16 },
        { name: 'recv', bytes: 16 },
      ],
      steps: [
        {
          window,
          ops: [
            { kind: 'copy', from: [R(0, 0, 10)], to: [R(1, 0, 4), R(1, 8, 6)], tag: 77 },
            { kind: 'send', peer: 1, tag: 3, data: [R(0, 10, 6)] },
            { kind: 'copy', from: [R(0, 10, 1), R(0, 12, 1)], to: [R(1, 4, 2)] },
          ],
        },
      ],
    };
    const res = await runSim(
      2,
      async (comm) => {
        if (comm.rank === 1) {
          const into = new Uint8Array(6);
          await comm.recv(0, 3, into);
          return [into];
        }
        const bufs = [fill(16, 0), new Uint8Array(16)];
        await bindSchedule(comm, rs, bufs, { portable }).run();
        return bufs;
      },
      { model: mc.model, ports: mc.ports, trace: true },
    );
    return {
      finish: res.finish,
      messages: (res.trace?.messages ?? []).map((m) => `${m.from}>${m.to} t${m.tag} ${m.bytes}B ${m.start}-${m.end}`),
      copies: (res.trace?.copies ?? []).map((c) => `${c.rank} ${c.bytes}B ${c.start}-${c.end}`),
      data: res.results,
    };
  };

  it('a copy through a port (k > 1) holds a window slot until it has arrived, like the portable executor', async () => {
    const mc: ModelCase = { name: '2 ports', model: linearModel({ alpha: 10, beta: 1, gamma: 3, ports: 2 }) };
    const one = await portCopy(false, 1, mc);
    expect(one).toEqual(await portCopy(true, 1, mc));
    // the copy (10 bytes, γ = 3) takes the port 0–30; the send starts after it: 30–46
    expect(one.messages).toEqual(['0>0 t77 10B 0-30', '0>1 t3 6B 30-46']);
    const send = one.data[0][0];
    expect(one.data[0][1]).toEqual(Uint8Array.from([...send.subarray(0, 4), send[10], send[12], 0, 0, ...send.subarray(4, 10), 0, 0]));
    const two = await portCopy(false, 2, mc);
    expect(two).toEqual(await portCopy(true, 2, mc));
    // window 2: both at once
    expect(two.messages).toEqual(['0>1 t3 6B 0-16', '0>0 t77 10B 0-30']);
  });

  it('the processor copy is charged piece by piece at the rank clock (one-ported, full duplex)', async () => {
    for (const mc of [
      { name: '1 port', model: linearModel({ alpha: 10, beta: 1, gamma: 0.1 }) },
      { name: 'full duplex', model: linearModel({ alpha: 10, beta: 1, gamma: 0.3 }), ports: 'full-duplex' as const },
    ]) {
      const native = await portCopy(false, 1, mc);
      expect(native).toEqual(await portCopy(true, 1, mc));
      // two pieces, each charged (the copy through a port is a message)
      expect(native.copies.map((c) => c.split(' ')[1])).toEqual(['1B', '1B']);
    }
  });
});

describe('runs', () => {
  it('one run at a time: start() again before the run ended fails', async () => {
    const rs: RankSchedule = { rank: 0, buffers: [{ name: 'recv', bytes: 1 }], steps: [{ window: 1, ops: [{ kind: 'recv', peer: 1, tag: 1, data: [R(0, 0, 1)] }] }] };
    const res = await runSim(
      2,
      async (comm) => {
        if (comm.rank === 1) {
          await comm.send(0, 1, new Uint8Array(1));
          return '';
        }
        const b = bindSchedule(comm, rs, [new Uint8Array(1)]);
        const first = b.run();
        const second = await rejection(b.run());
        await first;
        return (second as Error).message;
      },
      { model: linearModel({ alpha: 1, beta: 1 }) },
    );
    expect(res.results[0]).toMatch(/one run at a time/);
  });

  it('steps without operations and schedules without steps complete at once', async () => {
    const res = await runSim(
      1,
      async (comm) => {
        const t = comm.clock?.now();
        await bindSchedule(comm, { rank: 0, buffers: [], steps: [] }, []).run();
        await bindSchedule(comm, { rank: 0, buffers: [], steps: [{ window: 1, ops: [] }, { window: 3, ops: [] }] }, []).run();
        return comm.clock?.now() === t;
      },
      { model: linearModel({ alpha: 1, beta: 1 }) },
    );
    expect(res.results).toEqual([true]);
  });
});

/*
 * Steps with concurrent streams (comm/schedule.ts ScheduleStep `streams`, `after`): the native
 * executor against the portable one (schedule/run.ts `streamed`) — the pipelined ring's
 * schedules (collectives/allgather/pipelined-ring.ts) and hand-written ones.
 */

describe('concurrent streams: the pipelined ring', () => {
  const names = [...STREAM_MODELS.map((m) => m.name), 'pairwise'];

  it.each(names)('%s, p = 1..12, random blocks (zeros too): same times, messages (in order), copies and bytes', async (name) => {
    const rnd = rng(4242 + names.indexOf(name));
    for (let p = 1; p <= 12; p++) {
      const mc = streamModels(p, rnd).find((m) => m.name === name) as ModelCase;
      for (const zeros of [0.25, 0.6]) {
        const bytes = Array.from({ length: p }, () => (rnd() < zeros ? 0 : int(rnd, 1, 60)));
        const world = compileAllgatherSchedule('pipelined-ring', bytes);
        if (p > 1 && bytes.some((b) => b > 0)) expect(world.ranks.every((rs) => rs.steps.some((st) => st.streams !== undefined))).toBe(true);
        const runs = p % 3 === 0 ? 3 : 1;
        const unitBytes = rnd() < 0.5 ? 1 : 4;
        const label = `pipelined ring ${name} p=${p} u=${unitBytes} bytes=${bytes.join(',')} ×${runs}`;
        const out = await expectSame(world, mc, unitBytes, label, runs);
        // every rank holds every block of the last run
        const blocks = Uint8Array.from(bytes.flatMap((b, i) => [...fill(b, i + 101 * (runs - 1))]));
        for (let r = 0; r < p; r++) expect(out.buffers[r][1], `${label}: rank ${r}`).toEqual(blocks);
      }
    }
  });

  it('per-rank schedules from pipelinedRingSchedule (offsets with gaps): the same', async () => {
    const rnd = rng(99);
    for (const p of [2, 5, 9]) {
      const bytes = Array.from({ length: p }, () => (rnd() < 0.3 ? 0 : int(rnd, 1, 50)));
      const offsets: number[] = [];
      let at = 0;
      for (const b of bytes) {
        at += int(rnd, 0, 3);
        offsets.push(at);
        at += b;
      }
      const world: WorldSchedule = { label: 'pipelined ring', ranks: Array.from({ length: p }, (_, rank) => pipelinedRingSchedule({ rank, p, bytes, offsets }, 77)) };
      for (const mc of streamModels(p, rnd)) await expectSame(world, mc, 1, `p=${p} ${mc.name} offsets=${offsets.join(',')}`);
    }
  });

  it('runs natively: no isend / irecv of the endpoint', async () => {
    const world = compileAllgatherSchedule('pipelined-ring', [5, 0, 9, 3]);
    const isend = vi.spyOn(SimEndpoint.prototype, 'isend');
    const irecv = vi.spyOn(SimEndpoint.prototype, 'irecv');
    try {
      const calls = async (portable: boolean): Promise<number> => {
        isend.mockClear();
        irecv.mockClear();
        await runWorld(world, PORT_MODELS[3], 1, portable);
        return isend.mock.calls.length + irecv.mock.calls.length;
      };
      expect(await calls(false)).toBe(0);
      expect(await calls(true)).toBeGreaterThan(0);
    } finally {
      isend.mockRestore();
      irecv.mockRestore();
    }
  });
});

describe('concurrent streams: hand-written schedules', () => {
  it('the hand-written worlds pass the static check', () => {
    const rnd = rng(5);
    for (const p of [3, 4, 5, 7]) for (const window of [1, 2, 3]) expect(checkSchedule(streamWorld(p, rnd, window))).toEqual([]);
  });

  it.each([1, 2, 3])('window %i: 3 streams and empty ones, dependencies across streams, copies, combines and a copy through a port inside them, between ordinary steps, 3 runs: the same', async (window) => {
    const rnd = rng(1000 + window);
    for (const p of [3, 4, 5, 7]) {
      for (let draw = 0; draw < 2; draw++) {
        const world = streamWorld(p, rnd, window);
        for (const mc of streamModels(p, rnd)) {
          await expectSame(world, mc, rnd() < 0.5 ? 1 : 2, `${world.label} draw ${draw} ${mc.name}`, 3, { combine: BYTE_OP });
        }
      }
    }
  });

  it('waits at an operation whose dependency has not completed, and lets its own stream go first', async () => {
    // rank 0: stream 0 receives a (tag 1) then b (tag 2); stream 1 sends x (after a), then y;
    // stream 2 a processor copy after b. Rank 1 sends b's data only once x has arrived.
    const world = dependencyWorld();
    for (const mc of STREAM_MODELS) {
      const out = await expectSame(world, mc, 1, mc.name, 2);
      // the copy took b's bytes, after b arrived
      expect(out.buffers[0][1].subarray(0, 2)).toEqual(out.buffers[0][0].subarray(4, 6));
    }
    // one port, α = 100, β = 1: a 0–104; x (after a) 104–207; at 207 rank 0 posts y first (its
    // own stream), before rank 1 posts b and then y's receive: b is matched first (207–311), y
    // waits for the ports (311–414)
    const one = await runWorld(world, PORT_MODELS[0], 1, false);
    expect(one.messages).toEqual(['1>0 c0 t1 4B 0-104', '0>1 c0 t3 3B 104-207', '1>0 c0 t2 4B 207-311', '0>1 c0 t4 3B 311-414']);
  });
});

/** Rank 0 runs streams [a send to 1, a receive from 1 (tag 5) of `expected` bytes after the send]; rank 1 sends `sent`; the error of rank 0's run. */
async function streamWrongLength(portable: boolean, expected: number, sent: number, options: ScheduleOptions): Promise<unknown> {
  const rs: RankSchedule = {
    rank: 0,
    buffers: [
      { name: 'send', bytes: 2 },
      { name: 'recv', bytes: expected },
    ],
    steps: [
      { window: 1, ops: [{ kind: 'copy', from: [R(0, 0, 1)], to: [R(0, 1, 1)] }] },
      {
        window: 2,
        ops: [
          { kind: 'send', peer: 1, tag: 6, data: [R(0, 0, 2)] },
          { kind: 'copy', from: [R(0, 0, 1)], to: [R(0, 1, 1)] },
          { kind: 'recv', peer: 1, tag: 5, data: [R(1, 0, expected)] },
        ],
        streams: [2, 0, 1],
        after: [-1, -1, 0],
      },
    ],
  };
  return errorAgainstSender(rs, portable, expected, sent, options);
}

describe('concurrent streams: errors', () => {
  it('a failing operation in a stream (a throwing combine, a tag that is no tag) fails the run and the simulation alike', async () => {
    const throwing: ScheduleCombiner = {
      elementBytes: 1,
      bind: () => () => {
        throw new Error('operator failed');
      },
    };
    const world = (bad: 'combine' | 'tag'): WorldSchedule => ({
      label: 'failing',
      ranks: [
        {
          rank: 0,
          buffers: [{ name: 'buf', bytes: 8 }],
          steps: [
            {
              window: 1,
              ops: [
                { kind: 'recv', peer: 1, tag: 1, data: [R(0, 0, 4)] },
                bad === 'combine' ? { kind: 'combine', into: [R(0, 4, 4)], from: [R(0, 0, 4)] } : { kind: 'send', peer: 1, tag: -2, data: [R(0, 0, 4)] },
              ],
              streams: [1, 1],
              after: [-1, 0],
            },
          ],
        },
        { rank: 1, buffers: [{ name: 'buf', bytes: 4 }], steps: [{ window: 1, ops: [{ kind: 'send', peer: 0, tag: 1, data: [R(0, 0, 4)] }] }] },
      ],
    });
    for (const bad of ['combine', 'tag'] as const) {
      const native = await rejection(runWorld(world(bad), PORT_MODELS[1], 1, false, 1, { combine: throwing }));
      const portable = await rejection(runWorld(world(bad), PORT_MODELS[1], 1, true, 1, { combine: throwing }));
      expect(native).toBeInstanceOf(CommunicationError);
      expect((native as Error).message).toBe((portable as Error).message);
      expect((native as Error).message).toMatch(bad === 'combine' ? /^rank 0 failed: operator failed/ : /^rank 0 failed: .*tag/);
    }
  });
});

describe('concurrent streams: promise hops', () => {
  // the probes of test/helpers/stream-worlds.ts (hopProbeWorld), every rank a schedule on one executor
  const probe = async (steps: ScheduleStep[], k: number, portable: boolean): Promise<string[]> =>
    (await runWorld(hopProbeWorld(steps, k), PORT_MODELS[0], 1, portable, 1, { combine: BYTE_OP })).messages;

  it.each(Object.keys(HOP_PROBE_VARIANTS))('%s: rank 0 posts after as many hops as the portable executor', async (name) => {
    const firsts = new Set<string>();
    for (let k = 0; k <= 8; k++) {
      const native = await probe(HOP_PROBE_VARIANTS[name], k, false);
      const portable = await probe(HOP_PROBE_VARIANTS[name], k, true);
      expect(native, `${name}, k = ${k}`).toEqual(portable);
      firsts.add(portable.filter((m) => m.includes('>2 '))[0].split(' ')[0]);
    }
    // the probe is sensitive: rank 1's send goes first for small k, rank 0's for large k
    expect([...firsts].sort(), name).toEqual(['0>2', '1>2']);
  });
});
