/**
 * The gatherv/scatterv compiler (collectives/v-schedule.ts): for every compiled variant, op,
 * p, root, unit size, displacement layout and model the variant accepts, the compiled world
 * schedule passes the static checker, and run on the simulator it delivers exactly what the
 * variant's persistent plan delivers (and the expected blocks), in EXACTLY the plan's virtual
 * time (start() and the schedule timed on the same simulation, clocks synced before each):
 * the proof that the compiler mirrors the executors operation for operation.
 *
 * With k > 1 ports a local copy is a copy through a port (src/schedule/types.ts), one window
 * slot, as the executors' `inOrder` runs `selfCopy`.
 */
import { describe, expect, it } from 'vitest';
import { gathervInit, scattervInit } from '../src/collectives/index.js';
import { COMPILED_V_ALGORITHMS, compileVSchedule, FIRST_DATA_TAG, type CompiledVAlgorithm } from '../src/collectives/v-schedule.js';
import { failedRestriction, PORTABLE_V_ALGORITHMS, V_VARIANTS, variantRow } from '../src/collectives/v-variants.js';
import type { VAlgorithm } from '../src/collectives/types.js';
import type { Communicator } from '../src/comm/communicator.js';
import { UnavailableError } from '../src/errors.js';
import { linearModel, type CostModel } from '../src/model/cost-model.js';
import { checkSchedule } from '../src/schedule/check.js';
import { runSchedule } from '../src/schedule/run.js';
import type { RankSchedule, WorldSchedule } from '../src/schedule/types.js';
import { runSim } from '../src/transports/sim/index.js';
import { int, rng } from './helpers/random.js';
import { makeDispls, type DisplLayout } from './programs/v-cases.js';

type Op = 'gatherv' | 'scatterv';
const OPS: Op[] = ['gatherv', 'scatterv'];

const PS = [1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17];
const LAYOUTS: DisplLayout[] = ['default', 'gaps', 'permuted'];

const MODELS: CostModel[] = [
  linearModel({ alpha: 100, beta: 1, gamma: 0 }),
  linearModel({ alpha: 20, beta: 1, gamma: 1 }),
  linearModel({ alpha: 30, beta: 2, gamma: 1, copyAll: true }),
  linearModel({ alpha: 10, beta: 1, gamma: 1, ports: 2 }),
  linearModel({ alpha: 40, beta: 1, gamma: 2, ports: 2, copyAll: true }),
  linearModel({ alpha: 5, beta: 1, gamma: 1, ports: 3 }),
];

interface Case {
  readonly op: Op;
  readonly algorithm: CompiledVAlgorithm;
  readonly counts: number[];
  readonly root: number;
  readonly unitBytes: number;
  readonly model: CostModel;
  readonly modelIndex: number;
  readonly displs: number[] | undefined;
}

function countsFor(algorithm: string, p: number, rnd: () => number): number[] {
  if (algorithm === 'two-block') {
    const small = int(rnd, 0, 4);
    const large = small + int(rnd, 1, 30);
    return Array.from({ length: p }, () => (rnd() < 0.4 ? large : small));
  }
  // random sizes with zeros
  return Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : int(rnd, 1, 40)));
}

/** Every case: algorithms × ops × p × models (where the variant accepts them), a random root, unit size and layout each. */
function cases(): Case[] {
  const out: Case[] = [];
  const rnd = rng(20261126);
  for (const algorithm of COMPILED_V_ALGORITHMS) {
    const row = variantRow(algorithm);
    if (row === undefined) throw new Error(algorithm);
    for (const op of OPS) {
      for (const p of PS) {
        MODELS.forEach((model, modelIndex) => {
          const counts = countsFor(algorithm, p, rnd);
          if (failedRestriction(row, { p, model, counts }, ['model', 'counts']) !== undefined) return;
          const root = [0, p - 1, int(rnd, 0, p - 1)][int(rnd, 0, 2)];
          const unitBytes = rnd() < 0.5 ? 1 : 4;
          const { displs } = makeDispls(counts, LAYOUTS[int(rnd, 0, 2)], rnd);
          out.push({ op, algorithm, counts, root, unitBytes, model, modelIndex, displs });
        });
      }
    }
  }
  return out;
}

const CASES = cases();

const label = (c: Case): string =>
  `${c.op} ${c.algorithm} p=${c.counts.length} root=${c.root} u=${c.unitBytes} model#${c.modelIndex} counts=${c.counts.join(',')}${c.displs ? ` displs=${c.displs.join(',')}` : ''}`;

function compile(c: Case): WorldSchedule {
  return compileVSchedule(c.op, c.algorithm, c.counts, { root: c.root, model: c.model, unitBytes: c.unitBytes, displs: c.displs });
}

/** Rank r's block (r's send block for gatherv; the root's send buffer content for scatterv). */
const fill = (buf: Uint8Array, seed: number): Uint8Array => {
  for (let i = 0; i < buf.length; i++) buf[i] = (seed * 37 + i * 11 + 1) & 0xff;
  return buf;
};

/** The buffers runSchedule binds for `rs`: 'send' filled like the plan's, 'recv' and 'packed' zeroed. */
function bindBuffers(rs: RankSchedule, sendSeed: number): Uint8Array[] {
  return rs.buffers.map((b) => (b.name === 'send' ? fill(new Uint8Array(b.bytes), sendSeed) : new Uint8Array(b.bytes)));
}

interface RankOut {
  readonly planTime: number;
  readonly schedTime: number;
  /** What the rank ended with: the root's recv (gatherv), every rank's recv (scatterv). */
  readonly planResult: Uint8Array | undefined;
  readonly schedResult: Uint8Array | undefined;
}

/** Runs the variant's persistent plan and then the compiled schedule on one simulation. */
async function runBoth(c: Case, world: WorldSchedule): Promise<RankOut[]> {
  const p = c.counts.length;
  const u = c.unitBytes;
  const res = await runSim(
    p,
    async (comm: Communicator): Promise<RankOut> => {
      const me = comm.rank;
      const rs = world.ranks[me];
      const bytesOf = (name: string): number => rs.buffers.find((b) => b.name === name)?.bytes ?? 0;
      const isRoot = me === c.root;
      const algorithm = c.algorithm as VAlgorithm;
      const common = { root: c.root, unitBytes: u };
      let plan;
      let result: Uint8Array | undefined;
      if (c.op === 'gatherv') {
        const send = fill(new Uint8Array(c.counts[me] * u), me);
        const recv = isRoot ? new Uint8Array(bytesOf('recv')) : undefined;
        result = recv;
        plan = await gathervInit(comm, isRoot ? { ...common, send, recv, counts: c.counts, displs: c.displs } : { ...common, send }, { algorithm, model: c.model });
      } else {
        const recv = new Uint8Array(c.counts[me] * u);
        result = recv;
        const send = isRoot ? fill(new Uint8Array(bytesOf('send')), me) : undefined;
        plan = await scattervInit(comm, isRoot ? { ...common, recv, send, counts: c.counts, displs: c.displs } : { ...common, recv }, { algorithm, model: c.model });
      }
      const clock = comm.clock;
      if (clock === undefined) throw new Error('no clock');
      // adaptive: the first start builds the tree (overlapped with the data); the later ones run the data phase alone
      if (c.algorithm === 'adaptive') await plan.start();
      await clock.sync();
      let t0 = clock.now();
      await plan.start();
      const planTime = clock.now() - t0;
      // the schedule's buffers: 'send' filled as the plan's send buffer
      const buffers = bindBuffers(rs, me);
      await clock.sync();
      t0 = clock.now();
      await runSchedule(comm, rs, buffers);
      const schedTime = clock.now() - t0;
      const idx = rs.buffers.findIndex((b) => b.name === 'recv');
      const schedResult = idx >= 0 && (c.op === 'scatterv' || isRoot) ? buffers[idx] : undefined;
      return { planTime, schedTime, planResult: c.op === 'scatterv' || isRoot ? result : undefined, schedResult };
    },
    { model: c.model, unitBytes: u },
  );
  return res.results;
}

/** The expected result bytes: gatherv at the root (blocks at their displacements), scatterv every rank's block. */
function expected(c: Case, world: WorldSchedule, rank: number): Uint8Array | undefined {
  const u = c.unitBytes;
  const p = c.counts.length;
  const displs = c.displs ?? c.counts.map((_, i) => c.counts.slice(0, i).reduce((a, b) => a + b, 0));
  const rs = world.ranks[rank];
  if (c.op === 'gatherv') {
    if (rank !== c.root) return undefined;
    const out = new Uint8Array(rs.buffers.find((b) => b.name === 'recv')?.bytes ?? 0);
    for (let i = 0; i < p; i++) if (c.counts[i] > 0) out.set(fill(new Uint8Array(c.counts[i] * u), i), displs[i] * u);
    return out;
  }
  const rootSend = fill(new Uint8Array(world.ranks[c.root].buffers.find((b) => b.name === 'send')?.bytes ?? 0), c.root);
  return rootSend.slice(displs[rank] * u, (displs[rank] + c.counts[rank]) * u);
}

describe('compileVSchedule', () => {
  it('covers every portable variant; mpi-native is not compiled', () => {
    const portable = PORTABLE_V_ALGORITHMS.filter((a) => a !== 'auto');
    expect([...COMPILED_V_ALGORITHMS].sort()).toEqual([...portable].sort());
    expect(V_VARIANTS.map((r) => r.name).filter((n) => !(COMPILED_V_ALGORITHMS as readonly string[]).includes(n))).toEqual(['mpi-native']);
    for (const a of ['mpi-native', 'auto', 'nonsense']) {
      for (const op of OPS) expect(() => compileVSchedule(op, a, [1, 2, 3], { root: 0 })).toThrow(UnavailableError);
    }
  });

  it('refuses what the variant refuses (two-block: more than two sizes; optimal: k > 1 ports)', () => {
    expect(() => compileVSchedule('gatherv', 'two-block', [1, 2, 3], { root: 0 })).toThrow(/two distinct counts/);
    expect(() => compileVSchedule('scatterv', 'optimal', [1, 2, 3], { root: 0, model: linearModel({ alpha: 1, beta: 1, ports: 2 }) })).toThrow(/ports/);
  });

  it('uses the data tag given, the first plan tag by default', () => {
    const tags = (w: WorldSchedule): Set<number> => new Set(w.ranks.flatMap((r) => r.steps.flatMap((s) => s.ops.flatMap((o) => (o.kind === 'copy' || o.kind === 'combine' ? [] : [o.tag])))));
    expect(tags(compileVSchedule('gatherv', 'binomial', [3, 1, 4, 1, 5], { root: 2 }))).toEqual(new Set([FIRST_DATA_TAG]));
    expect(tags(compileVSchedule('scatterv', 'linear', [3, 1, 4], { root: 0, tag: 77 }))).toEqual(new Set([77]));
  });

  it(`every case passes checkSchedule (${CASES.length} cases)`, () => {
    expect(CASES.length).toBeGreaterThan(300);
    for (const c of CASES) {
      const problems = checkSchedule(compile(c));
      expect(problems, label(c)).toEqual([]);
    }
  });

  it('checkSchedule reports a dropped receive', () => {
    const world = compileVSchedule('gatherv', 'binomial', [5, 3, 0, 7, 2, 9, 4, 1], { root: 3 });
    const root = world.ranks[3];
    const s = root.steps.findIndex((st) => st.ops.some((o) => o.kind === 'recv'));
    const j = root.steps[s].ops.findIndex((o) => o.kind === 'recv');
    const dropped = root.steps[s].ops[j];
    const steps = root.steps.map((st, i) => (i === s ? { ...st, ops: st.ops.filter((_, k) => k !== j) } : st));
    const broken: WorldSchedule = { ...world, ranks: world.ranks.map((r) => (r.rank === 3 ? { ...root, steps } : r)) };
    const problems = checkSchedule(broken);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.some((p) => p.kind === 'unmatched-send' && dropped.kind === 'recv' && p.rank === dropped.peer)).toBe(true);
  });
});

describe('compiled schedules on the simulator: the plan’s results in exactly the plan’s time', () => {
  const groups = new Map<string, Case[]>();
  for (const c of CASES) {
    const key = `${c.op} ${c.algorithm} ${c.model.ports > 1 ? 'k > 1' : 'one-ported'}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  it.each([...groups.keys()])('%s', async (key) => {
    for (const c of groups.get(key) ?? []) {
      const world = compile(c);
      const outs = await runBoth(c, world);
      const p = c.counts.length;
      for (let r = 0; r < p; r++) {
        expect(outs[r].schedResult, `${label(c)} rank ${r}`).toEqual(outs[r].planResult);
        expect(outs[r].schedResult, `${label(c)} rank ${r} (expected blocks)`).toEqual(expected(c, world, r));
      }
      const planTime = Math.max(...outs.map((o) => o.planTime));
      const schedTime = Math.max(...outs.map((o) => o.schedTime));
      expect(schedTime, label(c)).toBe(planTime);
    }
  });
});
