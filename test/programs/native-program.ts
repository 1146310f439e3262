/**
 * Rank program of test/mpi/native.mpi.ts: the `mpi-native` variants (the MPI library's own
 * collectives through `comm.native`) side by side with vcoll's algorithms, many cases in one
 * job. Every rank checks its own buffers and returns what it saw:
 * - gatherv / scatterv (v-cases.ts): mpi-native once and persistent against the expected
 *   buffers (runCaseRank: blocks at their displacements, sentinels untouched), and the final
 *   buffers of one mpi-native call byte for byte against those of vcoll's `linear`;
 * - gather, scatter, allreduce (sum / max over f64, i32 and i64, in place or not), with the
 *   results of algorithm 'vcoll' and the expected values; argument errors of mpi-native;
 * - barrier: entry and exit times (the test checks that nobody left before the last entered);
 * - intergroup allgather / allgatherv (inter-program.ts) with algorithm 'mpi-native'.
 * On a transport without `native` (the default-suite test runs the `unavailable` step on the
 * simulator and threads) every call must reject with UnavailableError('mpi-transport').
 */
import { allreduce, barrier, gather, gatherv, scatter, scatterv, type BasicAlgorithm } from '../../src/collectives/index.js';
import type { VAlgorithm } from '../../src/collectives/types.js';
import type { Communicator } from '../../src/comm/communicator.js';
import { splitIntercomm } from '../../src/comm/intercomm.js';
import { interAllgather } from '../../src/collectives/inter/index.js';
import { InvalidArgumentError, UnavailableError } from '../../src/errors.js';
import interProgram, { type InterCase } from './inter-program.js';
import { blockByte, caseOptions, rootBuffer, runCaseRank, SENTINEL, type RankOutcome, type VCase } from './v-cases.js';

export interface BasicCase {
  readonly root: number;
  /** Block bytes of gather / scatter. */
  readonly m: number;
  /** Elements of the allreduce vectors. */
  readonly n: number;
  readonly seed: number;
}

export interface NativeArgs {
  /** gatherv / scatterv cases (their `algorithm` is ignored: each runs mpi-native and linear). */
  readonly v?: readonly VCase[];
  readonly basic?: readonly BasicCase[];
  /** Intergroup cases over this communicator (p + q = size). */
  readonly inter?: readonly InterCase[];
  /** Rank size − 1 enters the barrier this late (ms); undefined: no barrier step. */
  readonly barrierSleepMs?: number;
  /** Check argument errors of the mpi-native building blocks (local, before any communication). */
  readonly errors?: boolean;
  /** Every mpi-native entry must reject with UnavailableError (a transport without `native`). */
  readonly unavailable?: boolean;
}

export interface VOutcome {
  readonly native: RankOutcome;
  /** First difference between mpi-native's and linear's final buffers on this rank. */
  readonly vsLinear: string | undefined;
}

export interface NativeResult {
  readonly library: string | undefined;
  readonly v: VOutcome[];
  /** Mismatches of the building blocks (empty: all right). */
  readonly basic: string[];
  readonly inter: (string | null)[];
  readonly barrier: { readonly enter: number; readonly exit: number } | undefined;
  /** The field of each expected argument error (see `errorChecks`). */
  readonly errors: string[];
  /** Per mpi-native entry: 'unavailable' when it rejected with UnavailableError('mpi-transport') naming the MPI transport. */
  readonly unavailable: Record<string, string>;
}

function firstDiff(got: Uint8Array, want: Uint8Array, what: string): string | undefined {
  if (got.length !== want.length) return `${what}: length ${got.length}, expected ${want.length}`;
  for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) return `${what}: byte ${i} is ${got[i]}, expected ${want[i]}`;
  return undefined;
}

function blockOf(r: number, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, j) => blockByte(r, j, 0));
}

/** This rank's buffers after one call of `algorithm` on the case (round-0 data, as runCaseRank prepares it). */
async function finalBuffers(comm: Communicator, c: VCase, algorithm: VAlgorithm): Promise<Uint8Array[]> {
  const me = comm.rank;
  const u = c.unitBytes;
  const isRoot = me === c.root;
  const options = { ...caseOptions(c), algorithm };
  const mine = c.counts[me] * u;
  if (c.op === 'gatherv') {
    const send = isRoot && c.inPlace ? new Uint8Array(0) : blockOf(me, mine);
    if (!isRoot) {
      await gatherv(comm, { root: c.root, send, unitBytes: u }, options);
      return [send];
    }
    // sentinels everywhere but the root's own block when in place (already at its displacement)
    const fresh = new Uint8Array(c.capacity * u).fill(SENTINEL);
    if (c.inPlace) fresh.set(blockOf(me, mine), (c.displs?.[me] ?? c.counts.slice(0, me).reduce((a, b) => a + b, 0)) * u);
    await gatherv(comm, { root: c.root, send, recv: fresh, counts: c.counts, displs: c.displs, unitBytes: u, inPlace: c.inPlace }, options);
    return [send, fresh];
  }
  const recv = new Uint8Array(isRoot && c.inPlace ? 0 : mine + 3).fill(SENTINEL);
  if (!isRoot) {
    await scatterv(comm, { root: c.root, recv, count: c.counts[me], unitBytes: u }, options);
    return [recv];
  }
  const send = rootBuffer(c, 0);
  await scatterv(
    comm,
    { root: c.root, recv, count: c.inPlace ? undefined : c.counts[me], send, counts: c.counts, displs: c.displs, unitBytes: u, inPlace: c.inPlace },
    options,
  );
  return [recv, send];
}

async function vCase(comm: Communicator, c: VCase): Promise<VOutcome> {
  const native = await runCaseRank(comm, { ...c, algorithm: 'mpi-native' });
  const a = await finalBuffers(comm, c, 'mpi-native');
  const b = await finalBuffers(comm, c, 'linear');
  let vsLinear: string | undefined;
  for (let i = 0; i < a.length && vsLinear === undefined; i++) vsLinear = firstDiff(a[i], b[i], `rank ${comm.rank} buffer ${i}, mpi-native vs linear`);
  return { native, vsLinear };
}

/** Exact (integer-valued) test vectors: rank r's f64 / i32 / i64 values. */
const f64Of = (r: number, n: number, seed: number): Float64Array => Float64Array.from({ length: n }, (_, i) => ((r * 31 + i * 17 + seed) % 97) - 48);
const i32Of = (r: number, n: number, seed: number): Int32Array => Int32Array.from({ length: n }, (_, i) => ((r * 7919 + i * 104729 + seed * 13) % 200003) - 100000);
const i64Of = (r: number, n: number, seed: number): BigInt64Array =>
  BigInt64Array.from({ length: n }, (_, i) => BigInt((r * 7 + i * 3 + seed) % 1000) * 1_000_000_007n - 500n);

type Vector = Float64Array | Int32Array | BigInt64Array;

function expectedReduce(p: number, of: (r: number) => Vector, op: 'sum' | 'max'): Vector {
  const acc = of(0);
  for (let r = 1; r < p; r++) {
    const x = of(r);
    if (acc instanceof BigInt64Array) {
      const y = x as BigInt64Array;
      for (let i = 0; i < acc.length; i++) acc[i] = op === 'sum' ? acc[i] + y[i] : y[i] > acc[i] ? y[i] : acc[i];
    } else {
      const y = x as Float64Array | Int32Array;
      for (let i = 0; i < acc.length; i++) acc[i] = op === 'sum' ? acc[i] + y[i] : Math.max(acc[i], y[i]);
    }
  }
  return acc;
}

function sameValues(got: Vector, want: Vector, what: string): string | undefined {
  if (got.length !== want.length) return `${what}: length ${got.length}, expected ${want.length}`;
  for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) return `${what}: element ${i} is ${String(got[i])}, expected ${String(want[i])}`;
  return undefined;
}

async function basicCase(comm: Communicator, c: BasicCase): Promise<string[]> {
  const { rank: me, size: p } = comm;
  const bad: string[] = [];
  const note = (x: string | undefined): void => {
    if (x !== undefined) bad.push(x);
  };
  const tag = `root ${c.root}, m ${c.m}, n ${c.n}`;
  // gather: both algorithms against every rank's block in rank order
  const gathered: Record<BasicAlgorithm, Uint8Array | undefined> = { vcoll: undefined, 'mpi-native': undefined };
  for (const algorithm of ['mpi-native', 'vcoll'] as const) {
    const recv = me === c.root ? new Uint8Array(p * c.m).fill(SENTINEL) : undefined;
    await gather(comm, { send: blockOf(me, c.m), recv, root: c.root }, { algorithm });
    gathered[algorithm] = recv;
  }
  if (me === c.root) {
    const want = new Uint8Array(p * c.m);
    for (let r = 0; r < p; r++) want.set(blockOf(r, c.m), r * c.m);
    note(firstDiff(gathered['mpi-native'] as Uint8Array, want, `gather mpi-native (${tag})`));
    note(firstDiff(gathered['mpi-native'] as Uint8Array, gathered.vcoll as Uint8Array, `gather mpi-native vs vcoll (${tag})`));
  }
  // scatter
  const scattered: Uint8Array[] = [];
  for (const algorithm of ['mpi-native', 'vcoll'] as const) {
    let send: Uint8Array | undefined;
    if (me === c.root) {
      send = new Uint8Array(p * c.m);
      for (let r = 0; r < p; r++) send.set(blockOf(r + 1000, c.m), r * c.m);
    }
    const recv = new Uint8Array(c.m).fill(SENTINEL);
    await scatter(comm, { send, recv, root: c.root }, { algorithm });
    scattered.push(recv);
  }
  note(firstDiff(scattered[0], blockOf(me + 1000, c.m), `scatter mpi-native (${tag})`));
  note(firstDiff(scattered[0], scattered[1], `scatter mpi-native vs vcoll (${tag})`));
  // allreduce: sum and max over f64, i32 and i64, separate buffers and in place
  const kinds = [
    { name: 'f64', of: (r: number) => f64Of(r, c.n, c.seed) },
    { name: 'i32', of: (r: number) => i32Of(r, c.n, c.seed) },
    { name: 'i64', of: (r: number) => i64Of(r, c.n, c.seed) },
  ] as const;
  for (const k of kinds) {
    for (const op of ['sum', 'max'] as const) {
      const want = expectedReduce(p, k.of, op);
      const results: Vector[] = [];
      for (const algorithm of ['mpi-native', 'vcoll'] as const) {
        for (const inPlace of [false, true]) {
          const send = k.of(me);
          const recv = inPlace ? send : k.of(me + 500);
          await allreduce<Vector>(comm, { send, recv, op }, { algorithm });
          results.push(recv);
          note(sameValues(recv, want, `allreduce ${algorithm} ${k.name} ${op}${inPlace ? ' in place' : ''} (${tag})`));
          if (!inPlace) note(sameValues(send, k.of(me), `allreduce ${algorithm} ${k.name} ${op}: send changed (${tag})`));
        }
      }
      for (const r of results.slice(1)) note(sameValues(results[0], r, `allreduce ${k.name} ${op}: mpi-native vs the others (${tag})`));
    }
  }
  return bad;
}

/** Local argument errors of the mpi-native building blocks: the field each names, in order. */
async function errorChecks(comm: Communicator): Promise<string[]> {
  const fields: string[] = [];
  const attempt = async (f: () => Promise<void>): Promise<void> => {
    try {
      await f();
      fields.push('resolved');
    } catch (e) {
      fields.push(e instanceof InvalidArgumentError ? e.field : `${(e as Error).name}: ${(e as Error).message}`);
    }
  };
  const x = Float64Array.of(1, 2);
  // a user combine function
  await attempt(() => allreduce(comm, { send: x, recv: new Float64Array(2), op: (a, b) => a.set(b) }, { algorithm: 'mpi-native' }));
  // an element type MPI has no name for
  await attempt(() => allreduce(comm, { send: Uint8ClampedArray.of(1), recv: new Uint8ClampedArray(1), op: 'sum' }, { algorithm: 'mpi-native' }));
  // a bitwise operator on doubles
  await attempt(() => allreduce(comm, { send: x, recv: new Float64Array(2), op: 'bxor' }, { algorithm: 'mpi-native' }));
  // an unknown algorithm
  await attempt(() => barrier(comm, { algorithm: 'nope' as BasicAlgorithm }));
  return fields;
}

/** Every mpi-native entry on this communicator: 'unavailable' per entry that rejected as it must, else what happened. */
async function unavailableChecks(comm: Communicator): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const me = comm.rank;
  const p = comm.size;
  const root = p - 1;
  const isRoot = me === root;
  /** `rank`: this rank as the communicator of the call numbers it (the local group's for an intercommunicator). */
  const check = async (name: string, f: () => Promise<unknown>, rank = me): Promise<void> => {
    try {
      await f();
      out[name] = 'resolved';
    } catch (e) {
      const ok = e instanceof UnavailableError && e.what === 'mpi-transport' && e.rank === rank && /MPI transport/.test(e.message) && /mpirun/.test(e.message);
      out[name] = ok ? 'unavailable' : `${(e as Error).name}: ${(e as Error).message}`;
    }
  };
  const counts = Array.from({ length: p }, (_, i) => i % 3);
  const mine = counts[me];
  const total = counts.reduce((a, b) => a + b, 0);
  const o = { algorithm: 'mpi-native' } as const;
  await check('gatherv', () =>
    gatherv(comm, isRoot ? { root, send: new Uint8Array(mine), recv: new Uint8Array(total), counts } : { root, send: new Uint8Array(mine) }, o),
  );
  await check('scatterv', () =>
    scatterv(comm, isRoot ? { root, recv: new Uint8Array(mine), send: new Uint8Array(total), counts } : { root, recv: new Uint8Array(mine) }, o),
  );
  await check('gather', () => gather(comm, { send: new Uint8Array(2), recv: isRoot ? new Uint8Array(2 * p) : undefined, root }, o));
  await check('scatter', () => scatter(comm, { send: isRoot ? new Uint8Array(2 * p) : undefined, recv: new Uint8Array(2), root }, o));
  await check('allreduce', () => allreduce(comm, { send: Float64Array.of(me), recv: new Float64Array(1), op: 'sum' }, o));
  await check('barrier', () => barrier(comm, o));
  if (p >= 2) {
    const inter = await splitIntercomm(comm, me < p / 2 ? 0 : 1);
    await check('interAllgather', () => interAllgather(inter, { send: new Uint8Array(3), recv: new Uint8Array(3 * inter.remoteSize) }, o), inter.rank);
  }
  return out;
}

const now = (): number => performance.timeOrigin + performance.now();

export default async function program(comm: Communicator, args: NativeArgs): Promise<NativeResult> {
  const v: VOutcome[] = [];
  for (const c of args.v ?? []) v.push(await vCase(comm, c));
  const basic: string[] = [];
  for (const c of args.basic ?? []) basic.push(...(await basicCase(comm, c)));
  const inter: (string | null)[] = [];
  for (const c of args.inter ?? []) inter.push((await interProgram(comm, c)).mismatch);
  let barrierTimes: NativeResult['barrier'];
  if (args.barrierSleepMs !== undefined) {
    await barrier(comm); // everybody here (vcoll's barrier), then the last rank comes late
    if (comm.rank === comm.size - 1) await new Promise((r) => setTimeout(r, args.barrierSleepMs));
    const enter = now();
    await barrier(comm, { algorithm: 'mpi-native' });
    barrierTimes = { enter, exit: now() };
  }
  const errors = args.errors === true ? await errorChecks(comm) : [];
  const unavailable = args.unavailable === true ? await unavailableChecks(comm) : {};
  return { library: comm.native?.library, v, basic, inter, barrier: barrierTimes, errors, unavailable };
}
