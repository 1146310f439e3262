/**
 * The simulator's whole-schedule replay (src/transports/sim/replay.ts) against the simulator
 * running rank programs that bind the same schedules and run them back to back: the same
 * final clocks, messages and copies (the traces in the same order, to the last unit), bytes
 * and data — for every compiled gatherv/scatterv variant over random counts, roots, unit sizes
 * and port models, the building blocks (reductions with a non-commutative operator),
 * hand-written schedules with windows, vectored ranges, copies through a port and 0-byte
 * messages, and steps with concurrent streams (the pipelined ring, hand-written stream worlds,
 * the promise hops of stream continuations); then repeated replays, the options and the errors.
 */
import { describe, expect, it } from 'vitest';
import { compileAllgatherSchedule } from '../src/collectives/allgather/schedule.js';
import { compileBasicSchedule } from '../src/collectives/basic/world-schedule.js';
import { COMPILED_V_ALGORITHMS, compileVSchedule } from '../src/collectives/v-schedule.js';
import { failedRestriction, variantRow } from '../src/collectives/v-variants.js';
import type { RankSchedule, ScheduleCombiner, ScheduleOp, ScheduleStep, WorldSchedule } from '../src/comm/schedule.js';
import { InvalidArgumentError } from '../src/errors.js';
import { hierarchicalModel, linearModel, modelFormula, pairwiseModel } from '../src/model/cost-model.js';
import { checkSchedule } from '../src/schedule/check.js';
import { bindSchedule } from '../src/schedule/run.js';
import { runSim } from '../src/transports/sim/index.js';
import { simAddonMissing } from '../src/transports/sim/native-replay.js';
import { type ReplayResult, replaySchedule, ScheduleReplay } from '../src/transports/sim/replay.js';
import { type ModelCase, PORT_MODELS } from './helpers/models.js';
import { int, rng, variantCounts } from './helpers/random.js';
import { BYTE_OP, dependencyWorld, hasStreams, HOP_PROBE_VARIANTS, hopProbeWorld, STREAM_MODELS, streamModels, streamWorld } from './helpers/stream-worlds.js';

const MODELS = PORT_MODELS;

/** Deterministic contents for every buffer of `world`. */
function contents(world: WorldSchedule): Uint8Array[][] {
  return world.ranks.map((rs) => rs.buffers.map((b, i) => Uint8Array.from({ length: b.bytes }, (_, j) => (rs.rank * 31 + i * 7 + j * 3 + 1) & 0xff)));
}

interface Seen {
  finish: number[];
  messages: number;
  bytes: number;
  trace: string[];
  copies: string[];
  buffers: number[][][];
}

function seen(r: { finish: number[]; messages: number; bytes: number; trace?: ReplayResult['trace'] }, buffers: Uint8Array[][]): Seen {
  return {
    finish: r.finish,
    messages: r.messages,
    bytes: r.bytes,
    trace: (r.trace?.messages ?? []).map((m) => `${m.from}>${m.to} c${m.ctx} t${m.tag} ${m.bytes}B ${m.start}-${m.end}`),
    copies: (r.trace?.copies ?? []).map((c) => `${c.rank} ${c.bytes}B ${c.start}-${c.end}`),
    buffers: buffers.map((bs) => bs.map((b) => [...b])),
  };
}

/** Every rank program binds its schedule and runs it `runs` times, awaiting each run. */
async function programs(world: WorldSchedule, mc: ModelCase, runs: number, unitBytes = 1, combine?: ScheduleCombiner): Promise<Seen> {
  const bufs = contents(world);
  const res = await runSim(
    world.ranks.length,
    async (comm) => {
      const bound = bindSchedule(comm, world.ranks[comm.rank], bufs[comm.rank], combine === undefined ? {} : { combine });
      for (let k = 0; k < runs; k++) await bound.run();
    },
    { model: mc.model, ports: mc.ports, unitBytes, trace: true },
  );
  return seen(res, bufs);
}

/** Whether a message (or a copy through a port) of `world` has several ranges. */
function vectored(world: WorldSchedule): boolean {
  return world.ranks.some((rs) =>
    rs.steps.some((st) =>
      st.ops.some((op) => (op.kind === 'send' || op.kind === 'recv' ? op.data.length > 1 : op.kind === 'copy' && op.tag !== undefined && (op.to.length > 1 || op.from.length > 1))),
    ),
  );
}

/** Whether the C loop is built (npm run build:sim); CI requires it (VCOLL_SIM_NATIVE_REQUIRED=1). */
const NATIVE = simAddonMissing() === '';
/** Replays that ran in C. */
let nativeRuns = 0;

/**
 * The replay of `world` (this module's loop: a trace is asked for), and, when the C loop is
 * built, the same replay without a trace, which runs in C where it can (data moved unless
 * combines need the JavaScript operator: then times only): the same clocks, counters and bytes.
 */
function replayed(world: WorldSchedule, mc: ModelCase, runs: number, unitBytes = 1, combine?: ScheduleCombiner): Seen {
  const bufs = contents(world);
  const res = replaySchedule(world, { model: mc.model, ports: mc.ports, unitBytes, trace: true, runs, buffers: bufs, combine, engine: 'js' });
  expect(res.engine).toBe('js');
  expect(res.buffers).toEqual(bufs);
  const out = seen(res, bufs);
  if (NATIVE) {
    const data = combine === undefined;
    const nb = contents(world);
    const n = replaySchedule(world, { model: mc.model, ports: mc.ports, unitBytes, trace: true, runs, buffers: nb, data });
    if (n.engine === 'native') nativeRuns++;
    const c = seen(n, nb);
    if (data) expect(c).toEqual(out);
    else expect({ ...c, buffers: [] }).toEqual({ ...out, buffers: [] });
  }
  return out;
}

describe('replaySchedule equals the simulator running the bound schedules', () => {
  it('every compiled gatherv/scatterv variant: random counts, roots, unit sizes, port models, one and three runs', async () => {
    const rnd = rng(20261126);
    let cases = 0;
    let vectoredCases = 0;
    nativeRuns = 0;
    for (const algorithm of COMPILED_V_ALGORITHMS) {
      const row = variantRow(algorithm);
      if (row === undefined) throw new Error(algorithm);
      for (const op of ['gatherv', 'scatterv'] as const) {
        for (const p of [1, 2, 3, 5, 8, 12]) {
          for (const mc of MODELS) {
            const counts = variantCounts(rnd, algorithm, p);
            if (failedRestriction(row, { p, model: mc.model, counts }, ['model', 'counts']) !== undefined) continue;
            const root = int(rnd, 0, p - 1);
            const unitBytes = rnd() < 0.5 ? 1 : 4;
            const runs = rnd() < 0.5 ? 1 : 3;
            const world = compileVSchedule(op, algorithm, counts, { root, model: mc.model });
            if (vectored(world)) vectoredCases++;
            const label = `${op} ${algorithm} p=${p} root=${root} ${mc.name} unit=${unitBytes} runs=${runs}`;
            expect(replayed(world, mc, runs, unitBytes), label).toEqual(await programs(world, mc, runs, unitBytes));
            cases++;
          }
        }
      }
    }
    expect(cases).toBeGreaterThan(300);
    // in C too: every case but those with a message of several ranges (which moves data in JavaScript)
    if (NATIVE) {
      expect(nativeRuns).toBe(cases - vectoredCases);
      expect(nativeRuns).toBeGreaterThan(cases / 2);
    }
  });

  it('the building blocks, reductions with a non-commutative operator', async () => {
    // 2×2 integer matrix products mod 1009 on Int32 quadruples: associative, not commutative
    const combine: ScheduleCombiner = {
      elementBytes: 4,
      bind: (into, from) => {
        const a = new Int32Array(into.buffer, into.byteOffset, into.length / 4);
        const b = new Int32Array(from.buffer, from.byteOffset, from.length / 4);
        return () => {
          for (let i = 0; i < a.length; i += 4) {
            const [a0, a1, a2, a3] = [a[i], a[i + 1], a[i + 2], a[i + 3]];
            a[i] = (a0 * b[i] + a1 * b[i + 2]) % 1009;
            a[i + 1] = (a0 * b[i + 1] + a1 * b[i + 3]) % 1009;
            a[i + 2] = (a2 * b[i] + a3 * b[i + 2]) % 1009;
            a[i + 3] = (a2 * b[i + 1] + a3 * b[i + 3]) % 1009;
          }
        };
      },
    };
    for (const op of ['bcast', 'gather', 'scatter', 'reduce', 'allreduce', 'exscan', 'barrier'] as const) {
      for (const p of [2, 3, 5, 8, 13]) {
        for (const mc of [MODELS[1], MODELS[3], MODELS[4]]) {
          const world = compileBasicSchedule(op, p, 32, p - 1);
          expect(replayed(world, mc, 2, 1, combine), `${op} p=${p} ${mc.name}`).toEqual(await programs(world, mc, 2, 1, combine));
        }
      }
    }
  });

  it('hand-written schedules: windows, vectored ranges, copies through a port, processor copies, 0-byte messages', async () => {
    const R = (buffer: number, offset: number, length: number): { buffer: number; offset: number; length: number } => ({ buffer, offset, length });
    const world: WorldSchedule = {
      label: 'mixed',
      ranks: [
        {
          rank: 0,
          buffers: [
            { name: 'send', bytes: 64 },
            { name: 'recv', bytes: 64 },
          ],
          steps: [
            {
              window: 2,
              ops: [
                { kind: 'copy', from: [R(0, 0, 10)], to: [R(1, 0, 4), R(1, 8, 6)], tag: 77 },
                { kind: 'send', peer: 1, tag: 3, data: [R(0, 10, 6), R(0, 20, 30)] },
                { kind: 'copy', from: [R(0, 10, 1), R(0, 12, 1)], to: [R(1, 4, 2)] },
                { kind: 'send', peer: 2, tag: 3, data: [] },
                { kind: 'recv', peer: 2, tag: 4, data: [R(1, 20, 40)] },
              ],
            },
            { window: 1, ops: [] },
            { window: 1, ops: [{ kind: 'send', peer: 1, tag: 5, data: [R(1, 0, 17)] }] },
          ],
        },
        {
          rank: 1,
          buffers: [{ name: 'recv', bytes: 64 }],
          steps: [
            {
              window: 1,
              ops: [
                { kind: 'recv', peer: 0, tag: 3, data: [R(0, 0, 20), R(0, 30, 16)] },
                { kind: 'recv', peer: 0, tag: 5, data: [R(0, 46, 17)] },
              ],
            },
          ],
        },
        {
          rank: 2,
          buffers: [{ name: 'data', bytes: 40 }],
          steps: [
            {
              window: 8,
              ops: [
                { kind: 'recv', peer: 0, tag: 3, data: [] },
                { kind: 'send', peer: 0, tag: 4, data: [R(0, 0, 40)] },
              ],
            },
          ],
        },
      ],
    };
    for (const mc of MODELS) {
      for (const runs of [1, 2]) {
        const out = replayed(world, mc, runs);
        expect(out, `${mc.name} runs=${runs}`).toEqual(await programs(world, mc, runs));
        expect(out.messages).toBe(5 * runs);
      }
    }
  });
});

const R = (buffer: number, offset: number, length: number): { buffer: number; offset: number; length: number } => ({ buffer, offset, length });

describe('replaySchedule equals the simulator running the bound schedules: concurrent streams', () => {
  it('the pipelined ring (with and without firstStep), p = 1..12, random blocks (zeros too), every port model and a per-pair one, 1 and 3 runs', async () => {
    const rnd = rng(20261127);
    let cases = 0;
    nativeRuns = 0;
    for (let p = 1; p <= 12; p++) {
      for (const mc of streamModels(p, rnd)) {
        for (const runs of [1, 3]) {
          const bytes = Array.from({ length: p }, () => (rnd() < 0.3 ? 0 : int(rnd, 1, 60)));
          const firstStep = rnd() < 0.5;
          const world = compileAllgatherSchedule('pipelined-ring', bytes, undefined, { firstStep });
          if (p > 1 && bytes.some((b) => b > 0)) expect(world.ranks.every((rs) => rs.steps.some((st) => st.streams !== undefined))).toBe(true);
          expect(vectored(world)).toBe(false);
          const unitBytes = rnd() < 0.5 ? 1 : 4;
          const label = `pipelined ring p=${p} ${mc.name} u=${unitBytes} bytes=${bytes.join(',')} firstStep=${firstStep} ×${runs}`;
          const out = replayed(world, mc, runs, unitBytes);
          expect(out, label).toEqual(await programs(world, mc, runs, unitBytes));
          // every rank holds every block
          const blocks = contents(world).flatMap((bs) => [...bs[0]]);
          for (let r = 0; r < p; r++) expect(out.buffers[r][1], `${label}: rank ${r}`).toEqual(blocks);
          cases++;
        }
      }
    }
    expect(cases).toBe(12 * (STREAM_MODELS.length + 1) * 2);
    if (NATIVE) expect(nativeRuns).toBe(cases);
  });

  it.each([1, 2, 3])('hand-written stream worlds, window %i: 3 streams and empty ones, dependencies across streams, copies, combines and copies through a port inside them, between ordinary steps, 1 and 3 runs', async (window) => {
    const rnd = rng(3000 + window);
    let cases = 0;
    nativeRuns = 0;
    for (const p of [3, 4, 5, 7]) {
      for (const combines of [true, false]) {
        const world = streamWorld(p, rnd, window, combines);
        expect(checkSchedule(world)).toEqual([]);
        for (const mc of streamModels(p, rnd)) {
          const runs = rnd() < 0.5 ? 1 : 3;
          const unitBytes = rnd() < 0.5 ? 1 : 2;
          const combine = combines ? BYTE_OP : undefined;
          const label = `${world.label} ${mc.name} u=${unitBytes} ×${runs}`;
          expect(replayed(world, mc, runs, unitBytes, combine), label).toEqual(await programs(world, mc, runs, unitBytes, combine));
          cases++;
        }
      }
    }
    // in C every case (with combines: times only)
    if (NATIVE) expect(nativeRuns).toBe(cases);
  });

  it('an operation waits for its dependency, its own stream goes first: the trace of the simulator, in order', async () => {
    // rank 0: stream 0 receives a (tag 1) then b (tag 2); stream 1 sends x (after a), then y;
    // stream 2 a processor copy after b. Rank 1 sends b's data only once x has arrived.
    const world = dependencyWorld();
    for (const mc of STREAM_MODELS) {
      for (const runs of [1, 2]) {
        const out = replayed(world, mc, runs);
        expect(out, `${mc.name} ×${runs}`).toEqual(await programs(world, mc, runs));
        // the copy took b's bytes, after b arrived
        expect(out.buffers[0][1].slice(0, 2)).toEqual(out.buffers[0][0].slice(4, 6));
      }
    }
    // one port, α = 100, β = 1: a 0–104; x (after a) 104–207; at 207 rank 0 posts y first (its
    // own stream), before rank 1 posts b and then y's receive: b is matched first (207–311), y
    // waits for the ports (311–414)
    expect(replayed(world, MODELS[0], 1).trace).toEqual(['1>0 c0 t1 4B 0-104', '0>1 c0 t3 3B 104-207', '1>0 c0 t2 4B 207-311', '0>1 c0 t4 3B 311-414']);
  });

  describe('promise hops', () => {
    // the probes of test/helpers/stream-worlds.ts (hopProbeWorld)
    it.each(Object.keys(HOP_PROBE_VARIANTS))('%s: the replay posts after as many hops as the simulator', async (name) => {
      const firsts = new Set<string>();
      for (let k = 0; k <= 8; k++) {
        const world = hopProbeWorld(HOP_PROBE_VARIANTS[name], k);
        const out = replayed(world, MODELS[0], 1, 1, BYTE_OP);
        expect(out, `${name}, k = ${k}`).toEqual(await programs(world, MODELS[0], 1, 1, BYTE_OP));
        firsts.add(out.trace.filter((m) => m.includes('>2 '))[0].split(' ')[0]);
      }
      // the probe is sensitive: rank 1's send goes first for small k, rank 0's for large k
      expect([...firsts].sort(), name).toEqual(['0>2', '1>2']);
    });
  });

  it('runs in C: ScheduleReplay of the pipelined ring, again and again, the same as the JavaScript loop', () => {
    const world = compileAllgatherSchedule('pipelined-ring', [5, 0, 9, 3, 17, 1]);
    expect(hasStreams(world)).toBe(true);
    const mc = MODELS[4];
    const js = new ScheduleReplay(world, { model: mc.model, trace: true, engine: 'js' });
    const first = js.run(2);
    expect(js.run(2)).toEqual(first);
    if (!NATIVE) return;
    const c = new ScheduleReplay(world, { model: mc.model, trace: true, engine: 'native' });
    for (const runs of [2, 1, 2]) {
      const r = c.run(runs);
      expect(r.engine).toBe('native');
      if (runs === 2) expect({ ...r, engine: 'js' }).toEqual(first);
    }
  });
});

describe('ScheduleReplay', () => {
  const mc = MODELS[1];
  const world = compileVSchedule('gatherv', 'binomial', [3, 0, 5, 2, 7, 1, 4], { root: 2, model: mc.model });

  it('replays again and again with the same outcome; given buffers are copied in at each run and back at its end', () => {
    const bufs = contents(world);
    const rp = new ScheduleReplay(world, { model: mc.model, buffers: bufs, trace: true });
    const first = rp.run(2);
    const firstData = bufs.map((bs) => bs.map((b) => [...b]));
    // what the caller changes between runs is what the next run sees
    bufs[0][0].fill(9);
    const second = rp.run(2);
    expect(second.finish).toEqual(first.finish);
    expect(second.trace).toEqual(first.trace);
    expect(bufs[2][1].subarray(0, 3)).toEqual(Uint8Array.from([9, 9, 9]));
    expect(firstData[2][1].slice(0, 3)).not.toEqual([9, 9, 9]);
    expect(second.buffers[0][0]).toBe(bufs[0][0]);
  });

  it('data: false gives the same times, messages and trace and moves nothing', () => {
    const withData = replaySchedule(world, { model: mc.model, runs: 3, trace: true });
    const timesOnly = replaySchedule(world, { model: mc.model, runs: 3, trace: true, data: false });
    expect(timesOnly.finish).toEqual(withData.finish);
    expect(timesOnly.trace).toEqual(withData.trace);
    expect(timesOnly.messages).toBe(18);
    expect(timesOnly.buffers).toEqual(world.ranks.map(() => []));
  });

  it('schedules without operations: every rank done at once, in either loop', () => {
    const worlds: WorldSchedule[] = [
      compileBasicSchedule('barrier', 1, 0),
      { label: 'empty', ranks: [{ rank: 0, buffers: [], steps: [] }, { rank: 1, buffers: [], steps: [{ window: 1, ops: [] }] }] },
    ];
    for (const w of worlds) {
      for (const engine of NATIVE ? (['js', 'native'] as const) : (['js'] as const)) {
        const r = replaySchedule(w, { model: mc.model, runs: 3, engine });
        expect(r.engine).toBe(engine);
        expect([r.time, r.messages]).toEqual([0, 0]);
      }
    }
  });

  it('zero runs: nothing happens', () => {
    const r = replaySchedule(world, { model: mc.model, runs: 0 });
    expect(r.time).toBe(0);
    expect(r.messages).toBe(0);
  });
});

describe('replay errors', () => {
  const model = MODELS[0].model;
  const one = (steps: RankSchedule['steps']): RankSchedule => ({ rank: 0, buffers: [{ name: 'b', bytes: 8 }], steps });

  it('a schedule with problems, bad runs, ports or buffers: InvalidArgumentError before anything runs', () => {
    const unmatched: WorldSchedule = {
      label: 'broken',
      ranks: [one([{ window: 1, ops: [{ kind: 'send', peer: 1, tag: 1, data: [{ buffer: 0, offset: 0, length: 8 }] }] }]), { rank: 1, buffers: [], steps: [] }],
    };
    expect(() => replaySchedule(unmatched, { model })).toThrow(InvalidArgumentError);
    expect(() => replaySchedule(unmatched, { model })).toThrow(/'broken' has 2 problems: unmatched-send: rank 0 step 0 op 0/);
    const world = compileVSchedule('scatterv', 'linear', [1, 2, 3], { root: 0, model });
    expect(() => replaySchedule(world, { model, runs: -1 })).toThrow(/runs/);
    expect(() => new ScheduleReplay(world, { model }).run(1.5)).toThrow(InvalidArgumentError);
    expect(() => replaySchedule(world, { model, ports: 0 })).toThrow(/ports/);
    expect(() => replaySchedule(world, { model, buffers: [] })).toThrow(/one entry per rank/);
    const short = contents(world);
    short[0][0] = new Uint8Array(1);
    expect(() => replaySchedule(world, { model, buffers: short })).toThrow(/rank 0: buffer 0 .* at least 6 bytes/);
  });

  it('combine operations need the operator; one that throws fails the replay with its error', () => {
    const world = compileBasicSchedule('allreduce', 4, 16);
    expect(() => replaySchedule(world, { model })).toThrow(/give the operator/);
    expect(replaySchedule(world, { model, data: false }).messages).toBeGreaterThan(0);
    const failing: ScheduleCombiner = {
      elementBytes: 4,
      bind: () => () => {
        throw new Error('operator failed');
      },
    };
    expect(() => replaySchedule(world, { model, combine: failing })).toThrow('operator failed');
    // a replay that failed is whole again for the next run
    let calls = 0;
    const onceFailing: ScheduleCombiner = {
      elementBytes: 4,
      bind: () => () => {
        if (calls++ === 0) throw new Error('operator failed once');
      },
    };
    const rp = new ScheduleReplay(world, { model, combine: onceFailing });
    expect(() => rp.run(2)).toThrow('operator failed once');
    const again = rp.run(2);
    const fresh = replaySchedule(world, { model, runs: 2, data: false });
    expect(again.finish).toEqual(fresh.finish);
    expect(again.messages).toBe(fresh.messages);
  });

  it('a stream step with problems (streams not summing to its operations, a dependency on a later stream): InvalidArgumentError before anything runs', () => {
    const bad = (step: ScheduleStep): WorldSchedule => ({
      label: 'bad streams',
      ranks: [
        one([step]),
        { rank: 1, buffers: [{ name: 'b', bytes: 8 }], steps: [{ window: 1, ops: [{ kind: 'recv', peer: 0, tag: 1, data: [R(0, 0, 8)] }] }] },
      ],
    });
    const send: ScheduleOp = { kind: 'send', peer: 1, tag: 1, data: [R(0, 0, 8)] };
    const copy: ScheduleOp = { kind: 'copy', from: [R(0, 0, 1)], to: [R(0, 1, 1)] };
    for (const engine of ['js', 'native'] as const) {
      expect(() => replaySchedule(bad({ window: 1, ops: [send, copy], streams: [1] }), { model, engine })).toThrow(/'bad streams' has 1 problem: .*streams count 1 operations, the step has 2/);
      expect(() => replaySchedule(bad({ window: 1, ops: [send, copy], streams: [1, 1], after: [1, -1] }), { model, engine })).toThrow(/after\[0\] 1 is neither −1 nor an operation of an earlier stream/);
    }
  });

  it('a combine that throws inside a stream step fails the replay with its error; the next run is whole again', () => {
    const ring = compileAllgatherSchedule('pipelined-ring', [4, 4, 4]);
    // rank 0's stream step gets a third stream: a combine after its first receive
    const ranks = ring.ranks.map((rs): RankSchedule => {
      if (rs.rank !== 0) return rs;
      const s = rs.steps.findIndex((st) => st.streams !== undefined);
      const st = rs.steps[s];
      // (into the send buffer: what the step writes does not overlap)
      const combine: ScheduleOp = { kind: 'combine', into: [{ buffer: 0, offset: 0, length: 4 }], from: [{ buffer: 1, offset: 0, length: 4 }] };
      const streams = st.streams ?? [];
      const step: ScheduleStep = { ...st, ops: [...st.ops, combine], streams: [...streams, 1], after: [...(st.after ?? st.ops.map(() => -1)), 0] };
      return { ...rs, steps: rs.steps.map((x, i) => (i === s ? step : x)) };
    });
    const world: WorldSchedule = { label: 'ring with a combine', ranks };
    expect(checkSchedule(world)).toEqual([]);
    let calls = 0;
    const onceFailing: ScheduleCombiner = {
      elementBytes: 1,
      bind: () => () => {
        if (calls++ === 0) throw new Error('operator failed once');
      },
    };
    const rp = new ScheduleReplay(world, { model, combine: onceFailing, trace: true });
    expect(() => rp.run(2)).toThrow('operator failed once');
    const again = rp.run(2);
    const fresh = replaySchedule(world, { model, runs: 2, trace: true, combine: BYTE_OP });
    expect(again.finish).toEqual(fresh.finish);
    expect(again.trace).toEqual(fresh.trace);
    expect(calls).toBe(3);
  });

  it('a tag out of range is the endpoint’s InvalidArgumentError', () => {
    const bad: WorldSchedule = {
      label: 'tag',
      ranks: [
        one([{ window: 1, ops: [{ kind: 'send', peer: 1, tag: 2 ** 31, data: [] }] }]),
        { rank: 1, buffers: [], steps: [{ window: 1, ops: [{ kind: 'recv', peer: 0, tag: 2 ** 31, data: [] }] }] },
      ],
    };
    expect(() => replaySchedule(bad, { model })).toThrow(/tag/);
  });
});

describe('the replay loop in C (native/sim, npm run build:sim)', () => {
  it('is built where it is required (CI: VCOLL_SIM_NATIVE_REQUIRED=1)', () => {
    if (process.env.VCOLL_SIM_NATIVE_REQUIRED === '1') expect(simAddonMissing()).toBe('');
    else expect(typeof simAddonMissing()).toBe('string');
  });

  it.skipIf(!NATIVE)('engine: the per-pair and hierarchical models too; a model of one’s own or a vectored message with data run in JavaScript; native refused with the reason', () => {
    const p = 9;
    const pair = pairwiseModel({
      alpha: Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => 10 + ((i * 7 + j * 3) % 11))),
      beta: Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => 1 + ((i + 2 * j) % 3) / 4)),
      gamma: Array.from({ length: p }, (_, i) => (i % 3) / 2),
    });
    const hier = hierarchicalModel({ nodeOf: [0, 0, 0, 1, 1, 1, 2, 2, 2], intra: { alpha: 3, beta: 0.25 }, inter: { alpha: 50, beta: 1.5 }, gamma: 0.5 });
    for (const model of [pair, hier]) {
      for (const algorithm of ['binomial', 'adaptive', 'linear'] as const) {
        const world = compileVSchedule('gatherv', algorithm, [5, 0, 9, 3, 12, 1, 7, 2, 4], { root: 4, model });
        const js = replaySchedule(world, { model, runs: 2, engine: 'js' });
        const c = replaySchedule(world, { model, runs: 2, engine: 'native' });
        expect(c.engine).toBe('native');
        expect(c.finish).toEqual(js.finish);
        expect(c.buffers).toEqual(js.buffers);
      }
    }
    const model = MODELS[1].model;
    const world = compileVSchedule('scatterv', 'binomial', [3, 1, 4, 1, 5], { root: 0, model });
    const own = { ...model, comm: model.comm, copy: model.copy };
    expect(replaySchedule(world, { model: own }).engine).toBe('js');
    expect(() => replaySchedule(world, { model: own, engine: 'native' })).toThrow(/not one of linearModel/);
    expect(replaySchedule(world, { model, trace: true }).engine).toBe('native');
    const two = compileVSchedule('gatherv', 'linear', [3, 1, 4], { root: 0, model, displs: [10, 0, 5] });
    expect(vectored(two) ? 'js' : 'native').toBe(replaySchedule(two, { model }).engine);
    expect(replaySchedule(two, { model, data: false }).engine).toBe('native');
    expect(replaySchedule(world, { model }).engine).toBe('native');
    expect(() => replaySchedule(world, { model, engine: 'both' as 'js' })).toThrow(/engine/);
  });
});

describe('modelFormula: what the C loop evaluates is what the models compute', () => {
  it('linear, per-pair and hierarchical models: comm and copy equal their formula bit for bit; a model of one’s own has none', () => {
    const rnd = rng(7);
    const p = 6;
    const models = [
      linearModel({ alpha: 3.7, beta: 0.3, gamma: 0.11 }),
      pairwiseModel({
        alpha: Array.from({ length: p }, () => Array.from({ length: p }, () => rnd() * 100)),
        beta: Array.from({ length: p }, () => Array.from({ length: p }, () => rnd())),
        gamma: Array.from({ length: p }, () => rnd()),
      }),
      hierarchicalModel({ nodeOf: [0, 1, 0, 2, 1, 0], intra: { alpha: 1.5, beta: 0.07 }, inter: { alpha: 30.25, beta: 0.9 }, gamma: 0.013 }),
    ];
    for (const model of models) {
      const f = modelFormula(model);
      if (f === undefined) throw new Error(`${model.kind}: no formula`);
      const comm = (i: number, j: number, u: number): number => {
        if (!(u > 0)) return 0;
        if (f.kind === 'linear') return f.alpha + f.beta * u;
        if (f.kind === 'pairwise') return f.alpha[i * f.p + j] + f.beta[i * f.p + j] * u;
        return f.nodeOf[i] === f.nodeOf[j] ? f.intra.alpha + f.intra.beta * u : f.inter.alpha + f.inter.beta * u;
      };
      const copy = (i: number, u: number): number => (f.kind === 'pairwise' ? f.gamma[i] : f.gamma) * u;
      for (let t = 0; t < 200; t++) {
        const i = int(rnd, 0, p - 1);
        const j = int(rnd, 0, p - 1);
        const u = t % 10 === 0 ? 0 : rnd() * 1e6;
        expect(model.comm(i, j, u)).toBe(comm(i, j, u));
        expect(model.copy(i, u)).toBe(copy(i, u));
      }
    }
    const base = models[0];
    expect(modelFormula({ ...base })).toBeUndefined();
  });
});
