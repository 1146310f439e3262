/**
 * Rank program of test/mpi/combine.mpi.ts: combine operations with a built-in operator run by
 * the MPI transport's C executor (native/vcoll_mpi_combine.c), checked bit for bit (byte
 * views) against JavaScript's own operators (src/collectives/basic/ops.ts resolveOp).
 *
 * Which executor ran a schedule is observed, not assumed: the world's endpoint gets a spy
 * around its `bindSchedule` (counting, among the schedules with combine operations, those
 * bound natively and those declined), and the communicators the checks run on are split off
 * after it is installed (a communicator takes its endpoint's executor when it is made). A
 * "portable" communicator is split off with no executor at all (the portable executor, JS
 * combines: the reference the native runs are compared with).
 *
 * Scenarios:
 * - 'kernels': each rank alone, a schedule of two combine operations (whole arrays, then
 *   ranges at other offsets) for every built-in operator × every element type it is defined
 *   on, values chosen to wrap, clamp, overflow to ±∞ and give NaN, ±0; run once (schedRunOnce)
 *   and bound once, run twice (schedCreate, schedRun); against resolveOp on copies.
 * - 'collectives': reduce (roots 0 and p − 1, in place at p − 1), allreduce (and in place) and
 *   exscan, every operator × type, on a native and a portable communicator in rank order and
 *   in reversed order: native results equal portable ones bit for bit, and the rank-order
 *   fold with resolveOp wherever the association cannot change a bit (all but floating-point
 *   sum and prod over p > 2 ranks); exscan's rank 0 `recv` untouched. Then a reduce, an
 *   allreduce and an exscan with a user function (declined: the portable executor).
 */
import { allreduce, exscan, reduce } from '../../src/collectives/index.js';
import { resolveOp, type BuiltinOp, type NumericArray, type ReduceOp } from '../../src/collectives/basic/ops.js';
import { scheduleCombiner } from '../../src/collectives/basic/reduce-schedule.js';
import type { Communicator } from '../../src/comm/communicator.js';
import type { RankSchedule } from '../../src/comm/schedule.js';
import { bindSchedule } from '../../src/schedule/run.js';
import { int, rng } from '../helpers/random.js';
import { type ExecutorSpy, spyOnExecutor } from './executor-spy.js';

export interface CombineArgs {
  readonly scenario: 'kernels' | 'collectives';
  readonly seed: number;
  /** Elements per array. */
  readonly n: number;
}

export interface CombineResult {
  /** What went wrong (empty: all well). */
  readonly problems: string[];
  /** Schedules with combine operations the endpoint bound natively / declined (the spy). */
  readonly nativeCombine: number;
  readonly declinedCombine: number;
  /** Of those, during the user-function calls ('collectives'). */
  readonly userNative: number;
  readonly userDeclined: number;
  /** Checks made (arrays compared) and NaN elements among the compared results. */
  readonly checks: number;
  readonly nans: number;
  /**
   * NaN elements whose bits differed between C and JavaScript: only float sum / prod of two
   * NaN operands, where V8's own choice depends on its tier (see `differs`).
   */
  readonly payloads: number;
}

type Ctor = new (n: number) => NumericArray;

/** Every numeric typed array type, with the operators defined on it. */
export const TYPES: readonly { readonly name: string; readonly ctor: Ctor; readonly float: boolean }[] = [
  { name: 'Int8Array', ctor: Int8Array, float: false },
  { name: 'Uint8Array', ctor: Uint8Array, float: false },
  { name: 'Uint8ClampedArray', ctor: Uint8ClampedArray, float: false },
  { name: 'Int16Array', ctor: Int16Array, float: false },
  { name: 'Uint16Array', ctor: Uint16Array, float: false },
  { name: 'Int32Array', ctor: Int32Array, float: false },
  { name: 'Uint32Array', ctor: Uint32Array, float: false },
  { name: 'Float32Array', ctor: Float32Array, float: true },
  { name: 'Float64Array', ctor: Float64Array, float: true },
  { name: 'BigInt64Array', ctor: BigInt64Array, float: false },
  { name: 'BigUint64Array', ctor: BigUint64Array, float: false },
];

const OPS: readonly BuiltinOp[] = ['sum', 'prod', 'min', 'max', 'band', 'bor', 'bxor'];

/** Every (type, op) pair that is defined (no bitwise operator on floats): 71. */
export const COMBOS: readonly { readonly type: (typeof TYPES)[number]; readonly op: BuiltinOp }[] = TYPES.flatMap((type) =>
  OPS.filter((op) => !type.float || !op.startsWith('b')).map((op) => ({ type, op })),
);

const bytes = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

const FLOAT_EDGES = [NaN, 0, -0, Infinity, -Infinity, 1, -1, 2, 0.5, 5e-324, -5e-324, 1e-45, 1.5e308, -1.5e308, 3.3e38, -3.3e38, 1e20];

/** `n` values for `type`: edges (extremes that wrap or clamp, ±0, NaN, ±∞) and random ones. */
export function makeData(type: (typeof TYPES)[number], n: number, rnd: () => number): NumericArray {
  const a = new type.ctor(n);
  const bits32 = (): number => Math.floor(rnd() * 2 ** 32);
  for (let i = 0; i < n; i++) {
    const edge = rnd() < 0.3;
    if (a instanceof BigInt64Array || a instanceof BigUint64Array) {
      const edges = [0n, 1n, -1n, 2n ** 63n, 2n ** 63n - 1n, 3n];
      const v = edge ? edges[int(rnd, 0, edges.length - 1)] : (BigInt(bits32()) << 32n) | BigInt(bits32());
      a[i] = a instanceof BigInt64Array ? BigInt.asIntN(64, v) : BigInt.asUintN(64, v);
    } else if (type.float) {
      const r = rnd();
      (a as Float64Array)[i] = edge
        ? FLOAT_EDGES[int(rnd, 0, FLOAT_EDGES.length - 1)]
        : r < 0.2
          ? int(rnd, -3, 3) // small integers: ties in min / max, ±0 from sums
          : (rnd() - 0.5) * 10 ** int(rnd, -8, 8);
    } else if (a instanceof Uint8ClampedArray) {
      a[i] = edge ? [0, 1, 254, 255, 128, 16][int(rnd, 0, 5)] : int(rnd, 0, 255);
    } else {
      // numbers wrap on store: every bit pattern, with extremes often
      const edges = [0, 1, -1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff];
      (a as Int32Array)[i] = edge ? edges[int(rnd, 0, edges.length - 1)] : bits32();
    }
  }
  return a;
}

/**
 * Where a and b differ bit for bit, as text (undefined: identical). `payloads`: elements that
 * are NaN in both may differ in their bits (a floating-point sum or product of two NaN
 * operands, whose bits V8 itself picks differently in its interpreter and in optimized code:
 * native/vcoll_mpi_combine.c); each such element is counted in `tally.payloads`.
 */
function differs(a: NumericArray, b: NumericArray, payloads = false, tally?: { payloads: number }): string | undefined {
  const x = bytes(a);
  const y = bytes(b);
  if (x.length !== y.length) return `${x.length} bytes, ${y.length} expected`;
  const eb = a.BYTES_PER_ELEMENT;
  for (let e = 0; e < a.length; e++) {
    let same = true;
    for (let i = e * eb; i < (e + 1) * eb; i++) if (x[i] !== y[i]) same = false;
    if (same) continue;
    if (payloads && Number.isNaN(a[e]) && Number.isNaN(b[e])) {
      if (tally !== undefined) tally.payloads++;
      continue;
    }
    const show = (v: Uint8Array): string => Array.from(v.subarray(e * eb, (e + 1) * eb)).join(',');
    return `element ${e}: ${String(a[e])} (bytes ${show(x)}) instead of ${String(b[e])} (bytes ${show(y)})`;
  }
  return undefined;
}

/** Float sum and prod: two NaN operands leave V8's payload choice open (see `differs`). */
const payloadsOpen = (type: (typeof TYPES)[number], op: BuiltinOp): boolean => type.float && (op === 'sum' || op === 'prod');

const nanCount = (a: NumericArray): number => {
  let k = 0;
  if (a instanceof Float32Array || a instanceof Float64Array) for (const v of a) if (Number.isNaN(v)) k++;
  return k;
};

type Spy = ExecutorSpy;

/** The spy on `world`'s executor, counting schedules with combine operations. */
function spyOn(world: Communicator): Spy {
  return spyOnExecutor(world, (schedule) => schedule.steps.some((s) => s.ops.some((o) => o.kind === 'combine')));
}

/** 'kernels': see the file's doc. */
async function kernels(world: Communicator, args: CombineArgs, spy: Spy, problems: string[]): Promise<{ checks: number; nans: number; payloads: number }> {
  const comm = await spy.split(false, world.rank);
  const rnd = rng(args.seed + 7919 * world.rank);
  const n = args.n;
  let checks = 0;
  let nans = 0;
  const tally = { payloads: 0 };
  for (const { type, op } of COMBOS) {
    const a = makeData(type, n, rnd);
    const b = makeData(type, n, rnd);
    const fn = resolveOp(op, a, comm.rank);
    const eb = a.BYTES_PER_ELEMENT;
    // whole arrays, then into elements [3, n − 1) ⊕ from elements [1, n − 3)
    const schedule: RankSchedule = {
      rank: comm.rank,
      buffers: [
        { name: 'into', bytes: n * eb },
        { name: 'from', bytes: n * eb },
      ],
      steps: [
        {
          window: 1,
          ops: [
            { kind: 'combine', into: [{ buffer: 0, offset: 0, length: n * eb }], from: [{ buffer: 1, offset: 0, length: n * eb }] },
            { kind: 'combine', into: [{ buffer: 0, offset: 3 * eb, length: (n - 4) * eb }], from: [{ buffer: 1, offset: eb, length: (n - 4) * eb }] },
          ],
        },
      ],
    };
    const reference = (into: NumericArray, times: number): NumericArray => {
      const r = into.slice();
      for (let t = 0; t < times; t++) {
        fn(r, b);
        fn(r.subarray(3, n - 1), b.subarray(1, n - 3));
      }
      return r;
    };
    const label = `${op} ${type.name}`;
    for (const once of [true, false]) {
      const into = a.slice();
      const combine = scheduleCombiner(fn, into, op);
      const before = spy.native;
      const bound = bindSchedule(comm, schedule, [bytes(into), bytes(b)], { combine, once });
      if (spy.native !== before + 1) problems.push(`kernels ${label}${once ? ' once' : ''}: not bound natively`);
      const runs = once ? 1 : 2;
      for (let t = 0; t < runs; t++) await bound.run();
      const want = reference(a, runs);
      const d = differs(into, want, payloadsOpen(type, op), tally);
      if (d !== undefined) problems.push(`kernels ${label}${once ? ' once' : ` run twice`}: ${d}`);
      checks++;
      nans += nanCount(want);
    }
  }
  if (process.arch === 'x64') await nanPayloads(comm, spy, problems);
  return { checks, nans, payloads: tally.payloads };
}

/**
 * NaN bits, checked against the rule of native/vcoll_mpi_combine.c (V8's on x86-64): sum and
 * prod give into's NaN if it is one, else from's, quieted; min and max give the default NaN
 * (negative, quiet) whenever an operand is NaN. Every pair of NaN and non-NaN, signaling and
 * quiet, positive and negative, ±0.
 */
async function nanPayloads(comm: Communicator, spy: Spy, problems: string[]): Promise<void> {
  const f64 = [0x7ff8000000000002n, 0xfff8000000000003n, 0x7ff0000000000004n, 0xfff0000000000005n, 0x3ff0000000000000n, 0n, 0x8000000000000000n, 0x7ff0000000000000n];
  const f32 = [0x7fc00002, 0xffc00003, 0x7f800004, 0xff800005, 0x3f800000, 0, 0x80000000, 0x7f800000];
  for (const wide of [true, false]) {
    const k = f64.length;
    const into = wide ? new Float64Array(k * k) : new Float32Array(k * k);
    const from = wide ? new Float64Array(k * k) : new Float32Array(k * k);
    const bits = (x: Float64Array | Float32Array): BigUint64Array | Uint32Array => (x instanceof Float64Array ? new BigUint64Array(x.buffer) : new Uint32Array(x.buffer));
    const ib = bits(into);
    const fb = bits(from);
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) {
        if (ib instanceof BigUint64Array && fb instanceof BigUint64Array) {
          ib[i * k + j] = f64[i];
          fb[i * k + j] = f64[j];
        } else if (ib instanceof Uint32Array && fb instanceof Uint32Array) {
          ib[i * k + j] = f32[i];
          fb[i * k + j] = f32[j];
        }
      }
    }
    for (const op of ['sum', 'prod', 'min', 'max'] as const) {
      const x = into.slice();
      const want = into.slice();
      const wb = bits(want);
      const fn = resolveOp(op, x, comm.rank);
      for (let e = 0; e < k * k; e++) {
        const [l, r] = [into[e], from[e]];
        if (!Number.isNaN(l) && !Number.isNaN(r)) {
          fn(want.subarray(e, e + 1), from.subarray(e, e + 1));
          continue;
        }
        const minmax = op === 'min' || op === 'max';
        const src = Number.isNaN(l) ? ib : fb;
        if (wb instanceof BigUint64Array && src instanceof BigUint64Array) wb[e] = minmax ? 0xfff8000000000000n : src[e] | 0x0008000000000000n;
        else if (wb instanceof Uint32Array && src instanceof Uint32Array) wb[e] = minmax ? 0xffc00000 : (src[e] | 0x00400000) >>> 0;
      }
      const schedule: RankSchedule = {
        rank: comm.rank,
        buffers: [
          { name: 'into', bytes: x.byteLength },
          { name: 'from', bytes: from.byteLength },
        ],
        steps: [{ window: 1, ops: [{ kind: 'combine', into: [{ buffer: 0, offset: 0, length: x.byteLength }], from: [{ buffer: 1, offset: 0, length: from.byteLength }] }] }],
      };
      const before = spy.native;
      // run in C only: the rule is C's (V8's optimized code agrees; its interpreter may not for two NaN)
      await bindSchedule(comm, schedule, [bytes(x), bytes(from)], { combine: scheduleCombiner(fn, x, op), once: true }).run();
      if (spy.native !== before + 1) problems.push(`NaN bits ${op} ${wide ? 'f64' : 'f32'}: not bound natively`);
      const d = differs(x, want);
      if (d !== undefined) problems.push(`NaN bits ${op} ${wide ? 'Float64Array' : 'Float32Array'}: ${d}`);
    }
  }
}

type Kind = 'reduce0' | 'reduceLast' | 'reduceInPlace' | 'allreduce' | 'allreduceInPlace' | 'exscan';
const KINDS: readonly Kind[] = ['reduce0', 'reduceLast', 'reduceInPlace', 'allreduce', 'allreduceInPlace', 'exscan'];
const SENTINEL = 0x5b;

/** Runs collective `kind` on `comm` with this rank's input `x`; returns what this rank's result array holds (undefined: none). */
async function runKind(comm: Communicator, kind: Kind, x: NumericArray, op: ReduceOp<NumericArray>): Promise<NumericArray | undefined> {
  const p = comm.size;
  const send = x.slice();
  const fresh = (): NumericArray => {
    const r = x.slice();
    bytes(r).fill(SENTINEL);
    return r;
  };
  switch (kind) {
    case 'reduce0':
    case 'reduceLast': {
      const root = kind === 'reduce0' ? 0 : p - 1;
      const recv = comm.rank === root ? fresh() : undefined;
      await reduce(comm, { send, recv, root, op });
      return recv;
    }
    case 'reduceInPlace': {
      const root = p - 1;
      await reduce(comm, { send, recv: comm.rank === root ? send : undefined, root, op });
      return comm.rank === root ? send : undefined;
    }
    case 'allreduce': {
      const recv = fresh();
      await allreduce(comm, { send, recv, op });
      return recv;
    }
    case 'allreduceInPlace':
      await allreduce(comm, { send, recv: send, op });
      return send;
    case 'exscan': {
      const recv = fresh();
      await exscan(comm, { send, recv, op });
      return recv;
    }
  }
}

/** The rank-order fold of `inputs[0..k)` with `fn` (resolveOp), what rank `rank` of a `kind` must hold (undefined: nothing). */
function expected(kind: Kind, rank: number, p: number, inputs: readonly NumericArray[], fn: (a: NumericArray, b: NumericArray) => void): NumericArray | undefined {
  const root = kind === 'reduce0' ? 0 : p - 1;
  if (kind.startsWith('reduce') && rank !== root) return undefined;
  const k = kind === 'exscan' ? rank : p;
  if (k === 0) {
    const r = inputs[0].slice();
    bytes(r).fill(SENTINEL); // exscan at rank 0: recv untouched
    return r;
  }
  const r = inputs[0].slice();
  for (let i = 1; i < k; i++) fn(r, inputs[i]);
  return r;
}

/** 'collectives': see the file's doc. */
async function collectives(
  world: Communicator,
  args: CombineArgs,
  spy: Spy,
  problems: string[],
): Promise<{ checks: number; nans: number; payloads: number; userNative: number; userDeclined: number }> {
  const p = world.size;
  const comms = {
    native: await spy.split(false, world.rank),
    portable: await spy.split(true, world.rank),
    nativeReversed: await spy.split(false, p - 1 - world.rank),
    portableReversed: await spy.split(true, p - 1 - world.rank),
  };
  let checks = 0;
  let nans = 0;
  const tally = { payloads: 0 };
  const rnd = rng(args.seed); // the same on every rank: each rank knows every input
  for (const { type, op } of COMBOS) {
    const inputs = Array.from({ length: p }, () => makeData(type, args.n, rnd));
    const fn = resolveOp(op, inputs[0], 0);
    // float sum and prod are not associative: over p > 2 ranks only the same schedule gives the same bits
    const foldExact = !(type.float && (op === 'sum' || op === 'prod')) || p === 2;
    for (const kind of KINDS) {
      for (const order of ['', 'Reversed'] as const) {
        const native = comms[`native${order}`];
        const portable = comms[`portable${order}`];
        const me = native.rank;
        const label = `${kind} ${op} ${type.name} p=${p}${order === '' ? '' : ' reversed'} rank ${me}`;
        const got = await runKind(native, kind, inputs[me], op);
        const ref = await runKind(portable, kind, inputs[me], op);
        if ((got === undefined) !== (ref === undefined)) {
          problems.push(`${label}: a result on one executor only`);
          continue;
        }
        if (got === undefined || ref === undefined) continue;
        const open = payloadsOpen(type, op);
        const d = differs(got, ref, open, tally);
        if (d !== undefined) problems.push(`${label}: native differs from portable: ${d}`);
        if (foldExact) {
          const want = expected(kind, me, p, inputs, fn);
          const dw = want === undefined ? 'no expected value' : differs(got, want, open);
          if (dw !== undefined) problems.push(`${label}: differs from the rank-order fold: ${dw}`);
        }
        checks++;
        nans += nanCount(got);
      }
    }
  }
  // a user function: declined by the C executor, run by the portable one. Associative, not
  // commutative: the first nonzero value in rank order.
  const before = { n: spy.native, d: spy.declined };
  const firstNonzero = (a: Int32Array, b: Int32Array): void => {
    for (let i = 0; i < a.length; i++) if (a[i] === 0) a[i] = b[i];
  };
  const userRnd = rng(args.seed + 1);
  const inputs = Array.from({ length: p }, () => Int32Array.from({ length: args.n }, () => (userRnd() < 0.6 ? 0 : int(userRnd, -9, 9))));
  const fold = (k: number): Int32Array => {
    const r = inputs[0].slice();
    for (let i = 1; i < k; i++) firstNonzero(r, inputs[i]);
    return r;
  };
  const c = comms.native;
  const me = c.rank;
  const recv = new Int32Array(args.n);
  await reduce(c, { send: inputs[me].slice(), recv: me === 0 ? recv : undefined, root: 0, op: firstNonzero });
  if (me === 0 && differs(recv, fold(p)) !== undefined) problems.push(`user reduce: ${differs(recv, fold(p))}`);
  const all = new Int32Array(args.n);
  await allreduce(c, { send: inputs[me].slice(), recv: all, op: firstNonzero });
  if (differs(all, fold(p)) !== undefined) problems.push(`user allreduce rank ${me}: ${differs(all, fold(p))}`);
  const ex = new Int32Array(args.n);
  await exscan(c, { send: inputs[me].slice(), recv: ex, op: firstNonzero });
  if (me > 0 && differs(ex, fold(me)) !== undefined) problems.push(`user exscan rank ${me}: ${differs(ex, fold(me))}`);
  return { checks, nans, payloads: tally.payloads, userNative: spy.native - before.n, userDeclined: spy.declined - before.d };
}

export default async function combineProgram(world: Communicator, args: CombineArgs): Promise<CombineResult> {
  const spy = spyOn(world);
  const problems: string[] = [];
  if (args.scenario === 'kernels') {
    const { checks, nans, payloads } = await kernels(world, args, spy, problems);
    return { problems, nativeCombine: spy.native, declinedCombine: spy.declined, userNative: 0, userDeclined: 0, checks, nans, payloads };
  }
  const r = await collectives(world, args, spy, problems);
  return {
    problems,
    nativeCombine: spy.native - r.userNative,
    declinedCombine: spy.declined - r.userDeclined,
    userNative: r.userNative,
    userDeclined: r.userDeclined,
    checks: r.checks,
    nans: r.nans,
    payloads: r.payloads,
  };
}
