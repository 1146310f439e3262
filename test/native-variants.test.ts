/**
 * The `mpi-native` variants where there is no MPI (the MPI runs are test/mpi/native.mpi.ts):
 * - on the simulator and on worker threads every mpi-native entry (gatherv, scatterv, gather,
 *   scatter, allreduce, barrier, intergroup allgather) rejects on every rank with
 *   UnavailableError('mpi-transport') naming the MPI transport — no hang; argument errors of
 *   mpi-native allreduce come first, on every rank;
 * - with a recording stand-in for `comm.native`: what the variants hand the library (byte
 *   counts and displacements, MPI_IN_PLACE as null, element types and operators);
 * - byte counts beyond a C int are InvalidArgumentErrors naming the field;
 * - `auto` never picks mpi-native; the portable lists leave it out;
 * - the CLI: `--algorithm mpi-native` on sim / threads exits 2 with a clear message, and the
 *   help lists it.
 */
import { describe, expect, it } from 'vitest';
import {
  allreduce,
  AUTO_ORDER,
  barrier,
  gather,
  GATHERV_VARIANTS,
  gatherv,
  INTER_ALLGATHER_ALGORITHMS,
  nativeByteLayout,
  PORTABLE_V_ALGORITHMS,
  portableAlgorithms,
  portableVariants,
  scatter,
  SCATTERV_VARIANTS,
  scatterv,
  V_ALGORITHMS,
  type GathervVariant,
  type ScattervVariant,
} from '../src/collectives/index.js';
import type { Communicator } from '../src/comm/communicator.js';
import type { NativeCollectives } from '../src/comm/native.js';
import { InvalidArgumentError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { vcoll } from './helpers/cli.js';
import { int, rng } from './helpers/random.js';
import nativeProgram, { type NativeResult } from './programs/native-program.js';
import { makeCase, runCaseRank } from './programs/v-cases.js';
import { DISTRIBUTIONS } from '../src/workloads/distributions.js';

const PROGRAM = new URL('./programs/native-program.ts', import.meta.url);
const MODEL = linearModel({ alpha: 100, beta: 1, gamma: 0 });
const ENTRIES = ['gatherv', 'scatterv', 'gather', 'scatter', 'allreduce', 'barrier'];

function expectUnavailable(results: readonly NativeResult[]): void {
  const p = results.length;
  for (const r of results) {
    expect(r.library).toBeUndefined();
    const want = Object.fromEntries([...ENTRIES, ...(p >= 2 ? ['interAllgather'] : [])].map((e) => [e, 'unavailable']));
    expect(r.unavailable).toEqual(want);
    expect(r.errors).toEqual(['op', 'algorithm', 'op', 'algorithm']);
  }
}

describe('mpi-native without MPI: UnavailableError on every rank', () => {
  it.each([1, 3, 4])('simulator, p = %i', async (p) => {
    const res = await runSim(p, (comm) => nativeProgram(comm, { unavailable: true, errors: true }), { model: MODEL });
    expectUnavailable(res.results);
  });

  it.each([1, 3])('worker threads, p = %i', async (p) => {
    expectUnavailable(await runThreads<NativeResult>(p, PROGRAM, { unavailable: true, errors: true }));
  });
});

interface Call {
  readonly name: keyof NativeCollectives;
  readonly args: unknown[];
}

/** A stand-in for the library: records every call, moves no data. */
function recorder(calls: Call[]): NativeCollectives {
  const rec =
    (name: keyof NativeCollectives) =>
    (...args: unknown[]): void => {
      calls.push({ name, args });
    };
  return {
    library: 'recorder',
    gatherv: rec('gatherv'),
    scatterv: rec('scatterv'),
    gather: rec('gather'),
    scatter: rec('scatter'),
    allreduce: rec('allreduce'),
    barrier: rec('barrier'),
  };
}

/** `comm` with `native` set (everything else delegated to comm). */
function withNative(comm: Communicator, native: NativeCollectives): Communicator {
  return Object.create(comm, { native: { value: native } }) as Communicator;
}

describe('what mpi-native hands the library (a recording stand-in for comm.native)', () => {
  it('gatherv / scatterv: byte counts and displacements, an empty block at 0, the root in place as null', async () => {
    const p = 4;
    const root = 2;
    const u = 8;
    const counts = [3, 0, 5, 2];
    const displs = [10, 999, 0, 5];
    const capacity = 13;
    const res = await runSim(
      p,
      async (world) => {
        const calls: Call[] = [];
        const comm = withNative(world, recorder(calls));
        const me = comm.rank;
        const isRoot = me === root;
        const buf = new Uint8Array(capacity * u);
        const block = new Uint8Array(counts[me] * u);
        const g = await gatherv(
          comm,
          isRoot ? { root, send: new Uint8Array(0), recv: buf, counts, displs, unitBytes: u, inPlace: true } : { root, send: block, unitBytes: u },
          { algorithm: 'mpi-native' },
        );
        const s = await scatterv(
          comm,
          isRoot ? { root, recv: new Uint8Array(0), send: buf, counts, displs, unitBytes: u, inPlace: true } : { root, recv: block, unitBytes: u },
          { algorithm: 'mpi-native' },
        );
        return { calls, g, s, buf, block };
      },
      { model: MODEL },
    );
    for (const [me, r] of res.results.entries()) {
      expect(r.g).toEqual({ algorithm: 'mpi-native', constructionRounds: 0, height: 1 });
      expect(r.s).toEqual(r.g);
      expect(r.calls.map((c) => c.name)).toEqual(['gatherv', 'scatterv']);
      const [gv, sv] = r.calls.map((c) => c.args);
      if (me === root) {
        expect(gv).toEqual([null, r.buf, Int32Array.of(24, 0, 40, 16), Int32Array.of(80, 0, 0, 40), root]);
        expect(gv[1]).toBe(r.buf);
        expect(sv).toEqual([r.buf, Int32Array.of(24, 0, 40, 16), Int32Array.of(80, 0, 0, 40), null, root]);
        expect(sv[0]).toBe(r.buf);
      } else {
        expect(gv).toEqual([r.block, null, null, null, root]);
        expect(gv[0]).toBe(r.block);
        expect(sv).toEqual([null, null, null, r.block, root]);
      }
    }
    // the sim's clock did not move: nothing went through the simulator
    expect(res.finish.every((t) => t === 0)).toBe(true);
    expect(res.messages).toBe(0);
  });

  it('a persistent mpi-native plan calls the library once per start', async () => {
    const res = await runSim(
      3,
      async (world) => {
        const calls: Call[] = [];
        const comm = withNative(world, recorder(calls));
        const { gathervInit } = await import('../src/collectives/index.js');
        const plan = await gathervInit(
          comm,
          comm.rank === 0 ? { root: 0, send: new Uint8Array(2), recv: new Uint8Array(6), counts: [2, 2, 2] } : { root: 0, send: new Uint8Array(2) },
          { algorithm: 'mpi-native' },
        );
        const before = calls.length;
        await plan.start();
        await plan.start();
        return [before, calls.length];
      },
      { model: MODEL },
    );
    for (const r of res.results) expect(r).toEqual([0, 2]);
  });

  it('gather, scatter, barrier, allreduce: the buffers, the element type and operator, in place as null, an overlapping send copied', async () => {
    const res = await runSim(
      2,
      async (world) => {
        const calls: Call[] = [];
        const comm = withNative(world, recorder(calls));
        const send = new Uint8Array(3);
        const recv = comm.rank === 1 ? new Uint8Array(6) : undefined;
        await gather(comm, { send, recv, root: 1 }, { algorithm: 'mpi-native' });
        await scatter(comm, { send: recv, recv: send, root: 1 }, { algorithm: 'mpi-native' });
        await barrier(comm, { algorithm: 'mpi-native' });
        const x = Float64Array.of(1, 2, 3);
        await allreduce(comm, { send: x, recv: x, op: 'max' }, { algorithm: 'mpi-native' });
        const y = new BigUint64Array(2);
        const z = new BigUint64Array(2);
        await allreduce(comm, { send: y, recv: z, op: 'bxor' }, { algorithm: 'mpi-native' });
        const w = new Int16Array(6);
        await allreduce(comm, { send: w.subarray(0, 4), recv: w.subarray(2, 6), op: 'sum' }, { algorithm: 'mpi-native' });
        return { calls, send, recv, x, y, z, w };
      },
      { model: MODEL },
    );
    for (const [me, r] of res.results.entries()) {
      expect(r.calls.map((c) => c.name)).toEqual(['gather', 'scatter', 'barrier', 'allreduce', 'allreduce', 'allreduce']);
      const a = r.calls.map((c) => c.args);
      expect(a[0]).toEqual([r.send, me === 1 ? r.recv : null, 1]);
      expect(a[1]).toEqual([me === 1 ? r.recv : null, r.send, 1]);
      expect(a[2]).toEqual([]);
      expect(a[3]).toEqual([null, r.x, 3, 'f64', 'max']);
      expect(a[4]).toEqual([r.y, r.z, 2, 'u64', 'bxor']);
      expect(a[4][0]).toBe(r.y);
      // the send overlaps recv: MPI forbids aliasing, so a copy goes
      const [from, into, n, type, op] = a[5] as [Int16Array, Int16Array, number, string, string];
      expect([n, type, op]).toEqual([4, 'i16', 'sum']);
      expect(from.buffer).not.toBe(r.w.buffer);
      expect(into.byteOffset).toBe(4);
    }
  });
});

describe('byte counts beyond a C int', () => {
  it('name counts[i] or displs[i]; an empty block may have any displacement', () => {
    const field = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        return (e as InvalidArgumentError).field;
      }
      return 'none';
    };
    expect(field(() => nativeByteLayout([1, 2 ** 28], [0, 1], 8, 0))).toBe('counts[1]');
    expect(field(() => nativeByteLayout([1, 2 ** 28 - 1], [0, 1], 8, 0))).toBe('none');
    expect(field(() => nativeByteLayout([1, 1], [2 ** 28, 0], 8, 0))).toBe('displs[0]');
    expect(nativeByteLayout([0, 1], [2 ** 30, 3], 8, 0)).toEqual({ counts: Int32Array.of(0, 8), displs: Int32Array.of(0, 24) });
  });
});

describe('auto and the portable lists leave mpi-native out', () => {
  it('the tables list mpi-native as needing native collectives; the portable lists do not', () => {
    for (const list of [GATHERV_VARIANTS, SCATTERV_VARIANTS]) {
      const native = list.filter((v) => v.name === 'mpi-native');
      expect(native).toHaveLength(1);
      expect(native[0].requires).toBe('native');
      expect(list.filter((v) => v.requires !== undefined)).toEqual(native);
      expect(portableVariants<GathervVariant | ScattervVariant>(list).map((v) => v.name)).toEqual(list.map((v) => v.name).filter((n) => n !== 'mpi-native'));
    }
    expect(V_ALGORITHMS).toContain('mpi-native');
    expect(PORTABLE_V_ALGORITHMS).toEqual(V_ALGORITHMS.filter((a) => a !== 'mpi-native'));
    expect(INTER_ALLGATHER_ALGORITHMS).toContain('mpi-native');
    expect(portableAlgorithms(INTER_ALLGATHER_ALGORITHMS)).toEqual(['root-gathering', 'segmented']);
    expect(AUTO_ORDER).not.toContain('mpi-native');
  });

  it('auto never plans mpi-native, even on a communicator that has native collectives', async () => {
    const rnd = rng(77);
    for (let k = 0; k < 24; k++) {
      const p = int(rnd, 1, 9);
      const c = {
        ...makeCase({
          op: k % 2 === 0 ? 'gatherv' : 'scatterv',
          algorithm: 'auto',
          p,
          seed: int(rnd, 0, 2 ** 30),
          dist: DISTRIBUTIONS[k % DISTRIBUTIONS.length],
          unitBytes: 1 + (k % 3),
          layout: 'default',
          zeros: k % 4 === 0,
          inPlace: k % 5 === 0,
          starts: 0,
        }),
        // from start-up dominated to bandwidth dominated: auto's choice varies
        model: { alpha: [0, 10, 1000, 100000][k % 4], beta: 1, gamma: 0, copyAll: false },
      };
      const calls: Call[] = [];
      const res = await runSim(p, (comm) => runCaseRank(withNative(comm, recorder(calls)), c), { model: linearModel(c.model), unitBytes: c.unitBytes });
      expect(calls).toEqual([]);
      for (const r of res.results) {
        expect(r.mismatch).toBeUndefined();
        expect(r.info.algorithm).not.toBe('mpi-native');
        expect(AUTO_ORDER).toContain(r.info.algorithm);
      }
    }
  });
});

describe('the CLI', () => {
  it.each(['sim', 'threads'])('vcoll run --transport %s --algorithm mpi-native: status 2, a message naming the MPI transport', (transport) => {
    const r = vcoll(['run', '--transport', transport, '--p', '3', '--algorithm', 'mpi-native']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^vcoll: --algorithm mpi-native calls the MPI library's own collectives: it runs only with --transport mpi/m);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
  });

  it('vcoll run --help lists mpi-native', () => {
    const r = vcoll(['run', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/mpi-native/);
  });
});
