/**
 * Schedules with concurrent streams (comm/schedule.ts ScheduleStep `streams`, `after`) shared
 * by the tests of the simulator's executor (test/sim-schedule.test.ts) and of the replay
 * (test/sim-replay.test.ts): the model cases, a non-commutative combine, a random hand-written
 * world, a world whose trace shows the dependency rule, and the promise-hop probes.
 */
import type { ByteRange, RankSchedule, ScheduleCombiner, ScheduleOp, ScheduleStep, WorldSchedule } from '../../src/comm/schedule.js';
import { linearModel } from '../../src/model/cost-model.js';
import { type ModelCase, PORT_MODELS, randomPairwise } from './models.js';
import { int } from './random.js';

const R = (buffer: number, offset: number, length: number): ByteRange => ({ buffer, offset, length });

/** Byte-wise, not commutative: into := 3·into + from (mod 256). */
export const BYTE_OP: ScheduleCombiner = {
  elementBytes: 1,
  bind: (into, from) => () => {
    for (let i = 0; i < into.length; i++) into[i] = (into[i] * 3 + from[i]) & 0xff;
  },
};

/** PORT_MODELS, and models where many things happen at one virtual time (the hop order decides). */
export const STREAM_MODELS: readonly ModelCase[] = [
  ...PORT_MODELS,
  { name: 'α only', model: linearModel({ alpha: 10, beta: 0, gamma: 0 }) },
  { name: 'α only, full duplex', model: linearModel({ alpha: 10, beta: 0, gamma: 0 }), ports: 'full-duplex' },
  { name: 'free, 2 ports', model: linearModel({ alpha: 0, beta: 0, gamma: 0, ports: 2 }) },
];

/** The model cases of p ranks: STREAM_MODELS and a random per-pair model. */
export const streamModels = (p: number, rnd: () => number): ModelCase[] => [...STREAM_MODELS, { name: 'pairwise', model: randomPairwise(p, rnd, { copyAll: rnd() < 0.5 }) }];

/** Whether some step of `world` has streams. */
export const hasStreams = (world: WorldSchedule): boolean => world.ranks.some((rs) => rs.steps.some((st) => st.streams !== undefined));

/**
 * A hand-written world of p ≥ 3 ranks with a step of streams between ordinary steps (with
 * `combines` false, each combine is a processor copy of the same ranges: what the replay's C
 * loop runs with data). Rank r (left L, right R,
 * B = r − 2, F = r + 2; rank o has chunks `sizes[o]`, zeros too):
 * - step 0, window 2 (windowed): a processor copy, a receive from L, a send to R (tag 9);
 * - step 1, streams in random order (`in` first) with empty streams among them, `window`:
 *   `in`: the chunks of L, then those of B (L forwards them), from L (tag 10), then B's
 *   accumulator (tag 11); `out`: the own chunks to R (tag 10), then each chunk of L after its
 *   receive; `local`: each chunk of L copied after its receive, each chunk of B combined into
 *   the accumulator after its receive, a copy through a port (tag 13) somewhere, and the
 *   accumulator sent to F (tag 11);
 * - step 2, all at once: the chunks of L back to L, those of r from R (tag 12);
 * - step 3 without operations, with streams [];
 * - step 4, two streams without `after`: two receives from L and two sends to R (tag 14).
 */
export function streamWorld(p: number, rnd: () => number, window: number, combines = true): WorldSchedule {
  const sizes = Array.from({ length: p }, () => Array.from({ length: int(rnd, 0, 4) }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 12))));
  const sum = (a: readonly number[]): number => a.reduce((x, y) => x + y, 0);
  const mod = (x: number): number => ((x % p) + p) % p;
  const tail = Array.from({ length: p }, () => [int(rnd, 0, 5), int(rnd, 0, 5)]);
  const emptyStreams = int(rnd, 0, 3);
  const order = rnd() < 0.5 ? ['in', 'out', 'local'] : ['in', 'local', 'out'];
  const ranks = Array.from({ length: p }, (_, r): RankSchedule => {
    const [L, Rt, B, F] = [mod(r - 1), mod(r + 1), mod(r - 2), mod(r + 2)];
    const [sR, sL, sB] = [sum(sizes[r]), sum(sizes[L]), sum(sizes[B])];
    const offs = (a: readonly number[]): number[] => a.map((_, t) => sum(a.slice(0, t)));
    const [oR, oL, oB] = [offs(sizes[r]), offs(sizes[L]), offs(sizes[B])];
    const dep = new Map<ScheduleOp, ScheduleOp>();
    const inOps: ScheduleOp[] = [];
    const fromL = sizes[L].map((m, t): ScheduleOp => ({ kind: 'recv', peer: L, tag: 10, data: [R(1, oL[t], m)] }));
    const fromB = sizes[B].map((m, t): ScheduleOp => ({ kind: 'recv', peer: L, tag: 10, data: [R(1, sL + oB[t], m)] }));
    inOps.push(...fromL, ...fromB, { kind: 'recv', peer: B, tag: 11, data: [R(4, 0, sum(sizes[mod(r - 4)]))] });
    const outOps: ScheduleOp[] = sizes[r].map((m, t): ScheduleOp => ({ kind: 'send', peer: Rt, tag: 10, data: [R(0, oR[t], m)] }));
    sizes[L].forEach((m, t) => {
      const op: ScheduleOp = { kind: 'send', peer: Rt, tag: 10, data: [R(1, oL[t], m)] };
      dep.set(op, fromL[t]);
      outOps.push(op);
    });
    const local: ScheduleOp[] = [];
    const copies = sizes[L].map((m, t): ScheduleOp => {
      const op: ScheduleOp = { kind: 'copy', from: [R(1, oL[t], m)], to: [R(2, oL[t], m)] };
      dep.set(op, fromL[t]);
      return op;
    });
    const reductions = sizes[B].map((m, t): ScheduleOp => {
      const op: ScheduleOp = combines ? { kind: 'combine', into: [R(3, oB[t], m)], from: [R(1, sL + oB[t], m)] } : { kind: 'copy', to: [R(3, oB[t], m)], from: [R(1, sL + oB[t], m)] };
      dep.set(op, fromB[t]);
      return op;
    });
    // copies and combines interleaved at random, the copy through a port somewhere among them
    while (copies.length + reductions.length > 0) local.push((rnd() < 0.5 && copies.length > 0) || reductions.length === 0 ? (copies.shift() as ScheduleOp) : (reductions.shift() as ScheduleOp));
    local.splice(int(rnd, 0, local.length), 0, { kind: 'copy', from: [R(0, 0, sR)], to: [R(2, sL, sR)], tag: 13 });
    local.push({ kind: 'send', peer: F, tag: 11, data: [R(3, 0, sB)] });
    const byName: Record<string, ScheduleOp[]> = { in: inOps, out: outOps, local };
    const groups: ScheduleOp[][] = order.map((k) => byName[k]);
    for (let e = 0; e < emptyStreams; e++) groups.splice(int(rnd, 0, groups.length), 0, []);
    const ops = groups.flat();
    const after = ops.map((op) => {
      const d = dep.get(op);
      return d === undefined ? -1 : ops.indexOf(d);
    });
    const [t0, t1] = tail[r];
    const [u0, u1] = tail[L];
    const steps: ScheduleStep[] = [
      {
        window: 2,
        ops: [
          { kind: 'copy', from: [R(5, 0, 1)], to: [R(5, 2, 1)] },
          { kind: 'recv', peer: L, tag: 9, data: [R(5, 3, 3)] },
          { kind: 'send', peer: Rt, tag: 9, data: [R(5, 0, 3)] },
        ],
      },
      { window, ops, streams: groups.map((g) => g.length), after },
      {
        window: 4,
        ops: [
          { kind: 'send', peer: L, tag: 12, data: [R(1, 0, sL)] },
          { kind: 'recv', peer: Rt, tag: 12, data: [R(6, 0, sR)] },
        ],
      },
      { window: 1, ops: [], streams: [] },
      {
        window,
        ops: [
          // rank L's two sends: min(u0, its send bytes), then u1
          { kind: 'recv', peer: L, tag: 14, data: [R(7, 0, Math.min(u0, sL))] },
          { kind: 'recv', peer: L, tag: 14, data: [R(7, Math.min(u0, sL), u1)] },
          { kind: 'send', peer: Rt, tag: 14, data: [R(0, 0, Math.min(t0, sR))] },
          { kind: 'send', peer: Rt, tag: 14, data: [R(5, 0, t1)] },
        ],
        streams: [2, 2],
      },
    ];
    return {
      rank: r,
      buffers: [
        { name: 'send', bytes: sR },
        { name: 'recv', bytes: sL + sB },
        { name: 'copy', bytes: sL + sR },
        { name: 'acc', bytes: sB },
        { name: 'far', bytes: sum(sizes[mod(r - 4)]) },
        { name: 'small', bytes: 6 },
        { name: 'back', bytes: sR },
        { name: 'tail', bytes: 10 },
      ],
      steps,
    };
  });
  return { label: `streams p=${p} window=${window}${combines ? '' : ' (copies for combines)'}`, ranks };
}

/**
 * Two ranks: rank 0's one step has three streams — receives a (tag 1) then b (tag 2); sends x
 * (after a, tag 3) then y (tag 4); a processor copy of b's first bytes after b. Rank 1 sends a,
 * then b only once x has arrived. One port, α = 100, β = 1: a 0–104; x 104–207; at 207 rank 0
 * posts y first (its own stream), before rank 1 posts b and then y's receive: b is matched first
 * (207–311), y waits for the ports (311–414).
 */
export function dependencyWorld(): WorldSchedule {
  const rs0: RankSchedule = {
    rank: 0,
    buffers: [
      { name: 'recv', bytes: 8 },
      { name: 'send', bytes: 6 },
    ],
    steps: [
      {
        window: 1,
        ops: [
          { kind: 'recv', peer: 1, tag: 1, data: [R(0, 0, 4)] },
          { kind: 'recv', peer: 1, tag: 2, data: [R(0, 4, 4)] },
          { kind: 'send', peer: 1, tag: 3, data: [R(1, 0, 3)] },
          { kind: 'send', peer: 1, tag: 4, data: [R(1, 3, 3)] },
          { kind: 'copy', from: [R(0, 4, 2)], to: [R(1, 0, 2)] },
        ],
        streams: [2, 2, 1],
        after: [-1, -1, 0, -1, 1],
      },
    ],
  };
  const rs1: RankSchedule = {
    rank: 1,
    buffers: [
      { name: 'send', bytes: 8 },
      { name: 'recv', bytes: 6 },
    ],
    steps: [
      { window: 1, ops: [{ kind: 'send', peer: 0, tag: 1, data: [R(0, 0, 4)] }] },
      {
        window: 2,
        ops: [
          { kind: 'recv', peer: 0, tag: 3, data: [R(1, 0, 3)] },
          { kind: 'send', peer: 0, tag: 2, data: [R(0, 4, 4)] },
          { kind: 'recv', peer: 0, tag: 4, data: [R(1, 3, 3)] },
        ],
        streams: [1, 2],
        after: [-1, 0, -1],
      },
    ],
  };
  return { label: 'dependencies', ranks: [rs0, rs1] };
}

/*
 * The promise-hop probes. Rank 0 receives a (4 bytes, tag 1) from rank 4, then sends 4 bytes
 * to rank 2 (tag 2) through the steps of a variant; rank 1, a windowed step, receives from rank
 * 3 at the same virtual time (both transfers 0–104), then runs `k` processor copies of no cost
 * (one promise hop each), then sends to rank 2 (tag 6); rank 2 receives both at once, one
 * port: the send posted first is matched first. Over k = 0..8 the order flips where rank 0's
 * post happens, so an executor must count a continuation's hops as the portable executor does.
 */
const a: ScheduleOp = { kind: 'recv', peer: 4, tag: 1, data: [R(0, 0, 4)] };
const toTwo: ScheduleOp = { kind: 'send', peer: 2, tag: 2, data: [R(0, 0, 4)] };
// (what a step writes does not overlap: the static check)
const copy: ScheduleOp = { kind: 'copy', from: [R(0, 0, 2)], to: [R(0, 4, 2)] };
const combine: ScheduleOp = { kind: 'combine', into: [R(0, 4, 2)], from: [R(0, 0, 2)] };
const port: ScheduleOp = { kind: 'copy', from: [R(0, 0, 2)], to: [R(0, 4, 2)], tag: 8 };
const then: ScheduleStep = { window: 1, ops: [toTwo] };
export const HOP_PROBE_VARIANTS: Record<string, ScheduleStep[]> = {
  'one stream, then a step': [{ window: 1, ops: [a], streams: [1] }, then],
  'a copy after the receive, then a step': [{ window: 1, ops: [a, copy], streams: [1, 1], after: [-1, 0] }, then],
  'a combine after the receive (an empty stream between), then a step': [{ window: 1, ops: [a, combine], streams: [1, 0, 1], after: [-1, 0] }, then],
  'a copy through a port after the receive, then a step': [{ window: 1, ops: [a, port], streams: [1, 1], after: [-1, 0] }, then],
  'the send next in the receive’s stream': [{ window: 1, ops: [a, toTwo], streams: [2] }],
  'the send after the receive in another stream': [{ window: 1, ops: [a, toTwo], streams: [1, 1], after: [-1, 0] }],
  'the send after a copy after the receive': [{ window: 2, ops: [a, copy, toTwo], streams: [1, 1, 1], after: [-1, 0, 1] }],
  'the send after a window slot frees': [{ window: 1, ops: [a, copy, toTwo], streams: [1, 2], after: [-1, 0, -1] }],
  'a windowed step (no streams)': [{ window: 1, ops: [a, copy, toTwo] }],
};
/** The probe's world: rank 0 runs `steps`, rank 1 its `k` copies between receive and send. */
export function hopProbeWorld(steps: ScheduleStep[], k: number): WorldSchedule {
  const buf = [{ name: 'buf', bytes: 6 }];
  const msg = (kind: 'send' | 'recv', peer: number, tag: number): ScheduleOp => ({ kind, peer, tag, data: [R(0, 0, 4)] });
  return {
    label: `hops k=${k}`,
    ranks: [
      { rank: 0, buffers: buf, steps },
      {
        rank: 1,
        buffers: [{ name: 'buf', bytes: 4 + k }],
        steps: [{ window: 1, ops: [msg('recv', 3, 5), ...Array.from({ length: k }, (_, j): ScheduleOp => ({ kind: 'copy', from: [R(0, 0, 1)], to: [R(0, 4 + j, 1)] })), msg('send', 2, 6)] }],
      },
      { rank: 2, buffers: [{ name: 'buf', bytes: 8 }], steps: [{ window: 2, ops: [{ kind: 'recv', peer: 0, tag: 2, data: [R(0, 0, 4)] }, { kind: 'recv', peer: 1, tag: 6, data: [R(0, 4, 4)] }] }] },
      { rank: 3, buffers: buf, steps: [{ window: 1, ops: [msg('send', 1, 5)] }] },
      { rank: 4, buffers: buf, steps: [{ window: 1, ops: [msg('send', 0, 1)] }] },
    ],
  };
}
