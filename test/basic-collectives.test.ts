import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator, Status } from '../src/comm/communicator.js';
import {
  basicAllgather,
  allreduce,
  barrier,
  bcast,
  BASIC_TAG_FIRST,
  BASIC_TAG_LAST,
  BUILTIN_OPS,
  exscan,
  gather,
  orderedBinomialRole,
  reduce,
  scatter,
  type BuiltinOp,
  type NumericArray,
} from '../src/collectives/basic/index.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim, type SimOptions, type SimResult } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { int, rng } from './helpers/random.js';
import { bigs, block, matmulMod, mats, roots, type BasicArgs, type BasicResult } from './programs/basic-collectives.js';
import { BIG } from './helpers/big.js';

/** Largest p of the loops over every p on the simulator, of the pure tree check, and on threads. */
const P_SIM = BIG ? 100 : 33;
const P_TREE = BIG ? 130 : 70;
const P_THREADS = BIG ? 8 : 5;
/** Largest k of the loops over p = 2^k. */
const K_MAX = BIG ? 8 : 6;

const model = linearModel({ alpha: 10, beta: 1 });
const log2ceil = (p: number): number => Math.ceil(Math.log2(p));

function sim<T>(p: number, program: (comm: Communicator) => Promise<T>, options: Partial<SimOptions> = {}): Promise<SimResult<T>> {
  return runSim(p, program, { model, ...options });
}

/** Every rank's bytes for a seeded run. */
const blocks = (p: number, m: number, seed: number): Uint8Array[] => Array.from({ length: p }, (_, r) => block(r, m, seed));
const concat = (parts: Uint8Array[]): number[] => parts.flatMap((b) => [...b]);

/** What a sim run rejected with: the CommunicationError and the failing rank's own error. */
async function failure(run: Promise<unknown>): Promise<{ error: CommunicationError; cause: unknown }> {
  try {
    await run;
  } catch (e) {
    expect(e).toBeInstanceOf(CommunicationError);
    return { error: e as CommunicationError, cause: (e as CommunicationError).cause };
  }
  throw new Error('the run did not fail');
}

describe('ordered binomial tree', () => {
  it(`is a tree of contiguous ranges with depth ⌈log₂p⌉ for every p ≤ ${P_TREE} and root`, () => {
    const bad: string[] = [];
    const check = (ok: boolean, what: string): void => {
      if (!ok && bad.length < 10) bad.push(what);
    };
    for (let p = 1; p <= P_TREE; p++) {
      for (let root = 0; root < p; root++) {
        const roles = Array.from({ length: p }, (_, r) => orderedBinomialRole(p, root, r));
        const at = `p=${p} root=${root}`;
        // round in which a broadcast reaches each rank
        const round = new Array<number>(p).fill(-1);
        round[root] = 0;
        check(roles[root].parent === -1 && roles[root].lo === 0 && roles[root].hi === p - 1, `${at}: root role`);
        // Walk top-down: every child's range splits off its parent's, adjacent and disjoint.
        const stack = [root];
        let seen = 0;
        while (stack.length > 0) {
          const v = stack.pop()!;
          seen++;
          let lo = roles[v].lo;
          let hi = roles[v].hi;
          roles[v].children.forEach((c, i) => {
            const role = roles[c.peer];
            check(role.parent === v && role.lo === c.lo && role.hi === c.hi, `${at}: child ${c.peer} of ${v}`);
            check(c.peer >= c.lo && c.peer <= c.hi, `${at}: ${c.peer} outside its range`);
            if (c.lo === lo) lo = c.hi + 1;
            else {
              check(c.hi === hi, `${at}: child ${c.peer} of ${v} not at an end of the range`);
              hi = c.lo - 1;
            }
            round[c.peer] = round[v] + 1 + i;
            stack.push(c.peer);
          });
          check(lo === v && hi === v, `${at}: ${v}'s children do not cover its range`);
        }
        check(seen === p, `${at}: ${seen} ranks reached`);
        check(Math.max(...round) === log2ceil(p), `${at}: ${Math.max(...round)} rounds`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('is the classic binomial tree for root 0 and p = 2^k', () => {
    for (const p of [1, 2, 4, 8, 16, 64]) {
      for (let r = 0; r < p; r++) {
        const role = orderedBinomialRole(p, 0, r);
        const low = r & -r;
        expect(role.parent).toBe(r === 0 ? -1 : r - low);
        const kids: number[] = [];
        for (let mask = r === 0 ? p >> 1 : low >> 1; mask >= 1; mask >>= 1) kids.push(r + mask);
        expect(role.children.map((c) => c.peer)).toEqual(kids);
      }
    }
  });

  it('uses tags in the building blocks’ reserved range', () => {
    expect(BASIC_TAG_LAST - BASIC_TAG_FIRST).toBe(0xff);
  });
});

describe(`bcast, gather, scatter, allgather on the simulator, p = 1..${P_SIM}`, () => {
  it('deliver the reference bytes for random roots and block sizes (0 included)', async () => {
    const rnd = rng(11);
    for (let p = 1; p <= P_SIM; p++) {
      for (const m of [0, 1, int(rnd, 2, 9)]) {
        const root = int(rnd, 0, p - 1);
        const seed = int(rnd, 1, 1e6);
        const res = await sim(p, async (comm) => {
          const r = comm.rank;
          const b = r === root ? block(root, m, seed) : new Uint8Array(m).fill(0xee);
          await bcast(comm, b, root);
          const sentinel = new Uint8Array(p * m + 3).fill(0xab);
          const g = r === root ? new Uint8Array(p * m).fill(0xcd) : sentinel;
          const mine = block(r, m, seed + 1);
          await gather(comm, { send: mine, recv: g, root });
          const s = new Uint8Array(m).fill(0xcd);
          const full = Uint8Array.from(concat(blocks(p, m, seed + 2)));
          await scatter(comm, { send: r === root ? full : undefined, recv: s, root });
          const ag = new Uint8Array(p * m).fill(0xcd);
          await basicAllgather(comm, { send: block(r, m, seed + 3), recv: ag });
          return {
            b: [...b],
            g: r === root ? [...g] : null,
            sentinelKept: sentinel.every((x) => x === 0xab),
            sendKept: [...mine].join() === [...block(r, m, seed + 1)].join() && [...full].join() === concat(blocks(p, m, seed + 2)).join(),
            s: [...s],
            ag: [...ag],
          };
        });
        for (let r = 0; r < p; r++) {
          const out = res.results[r];
          expect(out.b).toEqual([...block(root, m, seed)]);
          if (r === root) expect(out.g).toEqual(concat(blocks(p, m, seed + 1)));
          expect(out.sentinelKept).toBe(true);
          expect(out.sendKept).toBe(true);
          expect(out.s).toEqual([...block(r, m, seed + 2)]);
          expect(out.ag).toEqual(concat(blocks(p, m, seed + 3)));
        }
      }
    }
  });

  it('gather and scatter move each block once per tree level: p−1 messages, no block twice at the root', async () => {
    const rnd = rng(12);
    for (const p of [5, 12, 33]) {
      const root = int(rnd, 0, p - 1);
      const m = 3;
      for (const which of ['gather', 'scatter'] as const) {
        const res = await sim(
          p,
          async (comm) => {
            if (which === 'gather') {
              await gather(comm, { send: new Uint8Array(m), recv: comm.rank === root ? new Uint8Array(p * m) : undefined, root });
            } else {
              await scatter(comm, { send: comm.rank === root ? new Uint8Array(p * m) : undefined, recv: new Uint8Array(m), root });
            }
          },
          { trace: true },
        );
        expect(res.messages).toBe(p - 1);
        const atRoot = res.trace!.messages.filter((x) => (which === 'gather' ? x.to : x.from) === root);
        expect(atRoot.reduce((s, x) => s + x.bytes, 0)).toBe((p - 1) * m);
        expect(atRoot.length).toBe(orderedBinomialRole(p, root, root).children.length);
      }
    }
  });
});

// ---------------------------------------------------------------- reductions

type Kind =
  | 'Int8Array'
  | 'Uint8Array'
  | 'Uint8ClampedArray'
  | 'Int16Array'
  | 'Uint16Array'
  | 'Int32Array'
  | 'Uint32Array'
  | 'Float32Array'
  | 'Float64Array'
  | 'BigInt64Array'
  | 'BigUint64Array';

const CTOR: Record<Kind, new (n: number) => NumericArray> = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};
const KINDS = Object.keys(CTOR) as Kind[];
const BITS: Partial<Record<Kind, [number, boolean]>> = {
  Int8Array: [8, true],
  Uint8Array: [8, false],
  Int16Array: [16, true],
  Uint16Array: [16, false],
  Int32Array: [32, true],
  Uint32Array: [32, false],
  BigInt64Array: [64, true],
  BigUint64Array: [64, false],
};
const isFloat = (k: Kind): boolean => k === 'Float32Array' || k === 'Float64Array';
const isBig = (k: Kind): boolean => k === 'BigInt64Array' || k === 'BigUint64Array';
const opsOf = (k: Kind): BuiltinOp[] => BUILTIN_OPS.filter((op) => !(isFloat(k) && (op === 'band' || op === 'bor' || op === 'bxor')));

/** Values that keep float results exact and make integer results wrap. */
function randomArray(kind: Kind, op: BuiltinOp, n: number, rnd: () => number): NumericArray {
  const a = new CTOR[kind](n);
  for (let i = 0; i < n; i++) {
    if (isFloat(kind)) (a as Float64Array)[i] = op === 'prod' ? [-2, -1, 1, 2][int(rnd, 0, 3)] : int(rnd, -8, 8);
    else if (isBig(kind)) (a as BigInt64Array)[i] = (BigInt(int(rnd, 0, 2 ** 32 - 1)) << 32n) | BigInt(int(rnd, 0, 2 ** 32 - 1));
    else {
      const [bits, signed] = kind === 'Uint8ClampedArray' ? [8, false] : BITS[kind]!;
      const v = int(rnd, 0, 2 ** bits - 1);
      (a as Int32Array)[i] = signed && v >= 2 ** (bits - 1) ? v - 2 ** bits : v;
    }
  }
  return a;
}

/** x₀ ⊕ … ⊕ x_{q−1}, element by element, in exact arithmetic, then as the element type stores it. */
function reference(kind: Kind, op: BuiltinOp, xs: readonly NumericArray[]): unknown[] {
  const n = xs[0].length;
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    if (isFloat(kind)) {
      const vals = xs.map((x) => Number(x[i]));
      const f = { sum: (a: number, b: number) => a + b, prod: (a: number, b: number) => a * b, min: Math.min, max: Math.max }[
        op as 'sum' | 'prod' | 'min' | 'max'
      ];
      const v = vals.reduce((a, b) => f(a, b));
      out.push(kind === 'Float32Array' && Math.fround(v) !== v ? NaN : v); // NaN: the data would not keep it exact
      continue;
    }
    const vals = xs.map((x) => BigInt(x[i]));
    const f = {
      sum: (a: bigint, b: bigint) => a + b,
      prod: (a: bigint, b: bigint) => a * b,
      min: (a: bigint, b: bigint) => (b < a ? b : a),
      max: (a: bigint, b: bigint) => (b > a ? b : a),
      band: (a: bigint, b: bigint) => a & b,
      bor: (a: bigint, b: bigint) => a | b,
      bxor: (a: bigint, b: bigint) => a ^ b,
    }[op];
    const exact = vals.reduce((a, b) => f(a, b));
    let v: bigint;
    if (kind === 'Uint8ClampedArray') v = exact > 255n ? 255n : exact;
    else {
      const [bits, signed] = BITS[kind]!;
      v = signed ? BigInt.asIntN(bits, exact) : BigInt.asUintN(bits, exact);
    }
    out.push(isBig(kind) ? v : Number(v));
  }
  return out;
}

/** The k 2×2 matrix products x_a · … · x_{b−1} mod MOD (identity for an empty range). */
function matProduct(xs: readonly Int32Array[], a: number, b: number, k: number): number[] {
  const acc = Int32Array.from({ length: 4 * k }, (_, i) => (i % 4 === 0 || i % 4 === 3 ? 1 : 0));
  for (let r = a; r < b; r++) matmulMod(acc, xs[r]);
  return [...acc];
}

describe(`reduce, allreduce, exscan on the simulator, p = 1..${P_SIM}`, () => {
  it('every built-in op on every element type equals the sequential reference', async () => {
    const rnd = rng(21);
    const allCombos = KINDS.flatMap((kind) => opsOf(kind).map((op) => ({ kind, op })));
    expect(allCombos.length).toBe(11 * 7 - 2 * 3);
    for (let p = 1; p <= P_SIM; p++) {
      // Every third combination per p (the simulator's time goes into the many virtual time
      // steps): each (type, op) still runs on 11 values of p, powers of two and others.
      const combos = allCombos.filter((_, c) => c % 3 === p % 3);
      const root = int(rnd, 0, p - 1);
      const n = int(rnd, 1, 4);
      // data[c][r]: rank r's vector of combination c
      const data = combos.map(({ kind, op }) => Array.from({ length: p }, () => randomArray(kind, op, n, rnd)));
      const copies = data.map((d) => d.map((x) => x.slice()));
      const res = await sim(p, async (comm) => {
        const r = comm.rank;
        const out: { red: unknown[] | null; all: unknown[]; ex: unknown[] | null; untouched: boolean }[] = [];
        for (let c = 0; c < combos.length; c++) {
          const { kind, op } = combos[c];
          const send = data[c][r];
          const recv = new CTOR[kind](n);
          const seven = isBig(kind) ? 7n : 7;
          const marker = new CTOR[kind](n).fill(seven as never);
          await reduce(comm, { send, recv: r === root ? recv : marker, root, op });
          const all = new CTOR[kind](n);
          await allreduce(comm, { send, recv: all, op });
          const ex = new CTOR[kind](n).fill(seven as never);
          await exscan(comm, { send, recv: ex, op });
          out.push({
            red: r === root ? [...recv] : null,
            all: [...all],
            ex: r === 0 ? null : [...ex],
            untouched: (r === root || marker.every((x) => x === seven)) && (r !== 0 || ex.every((x) => x === seven)),
          });
        }
        return out;
      });
      const bad: string[] = [];
      const same = (got: unknown, want: unknown, what: string): void => {
        if (String(got) !== String(want) && bad.length < 10) bad.push(`${what}: got ${String(got)}, want ${String(want)}`);
      };
      for (let c = 0; c < combos.length; c++) {
        const { kind, op } = combos[c];
        const want = reference(kind, op, data[c]);
        expect(want.some((x) => Number.isNaN(x))).toBe(false); // the float data keep results exact
        for (let r = 0; r < p; r++) {
          const got = res.results[r][c];
          const what = `${kind} ${op} p=${p} root=${root} rank ${r}`;
          if (r === root) same(got.red, want, `${what} reduce`);
          same(got.all, want, `${what} allreduce`);
          if (r > 0) same(got.ex, reference(kind, op, data[c].slice(0, r)), `${what} exscan`);
          same(got.untouched, true, `${what}: wrote a buffer it must not`);
          same(data[c][r], copies[c][r], `${what}: send modified`);
        }
      }
      expect(bad).toEqual([]);
    }
  });

  it('a non-commutative user op (2×2 matrix product) is combined in rank order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: BIG ? 128 : 33 }),
        fc.nat(),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 1e6 }),
        async (p, rootSeed, k, seed) => {
          const root = rootSeed % p;
          const xs = Array.from({ length: p }, (_, r) => mats(r, k, seed));
          const res = await sim(p, async (comm) => {
            const r = comm.rank;
            const red = new Int32Array(4 * k);
            await reduce(comm, { send: mats(r, k, seed), recv: r === root ? red : undefined, root, op: matmulMod });
            const all = new Int32Array(4 * k);
            await allreduce(comm, { send: mats(r, k, seed), recv: all, op: matmulMod });
            const ex = new Int32Array(4 * k);
            await exscan(comm, { send: mats(r, k, seed), recv: ex, op: matmulMod });
            return { red: [...red], all: [...all], ex: [...ex] };
          });
          const total = matProduct(xs, 0, p, k);
          for (let r = 0; r < p; r++) {
            if (r === root) expect(res.results[r].red).toEqual(total);
            expect(res.results[r].all).toEqual(total);
            if (r > 0) expect(res.results[r].ex).toEqual(matProduct(xs, 0, r, k));
          }
        },
      ),
      { numRuns: BIG ? 250 : 60, seed: 5 },
    );
  });

  it('allreduce gives bit-identical floating-point results on every rank', async () => {
    const rnd = rng(23);
    for (const p of [3, 7, 12, 33]) {
      const xs = Array.from({ length: p }, () => Float64Array.from({ length: 5 }, () => rnd() * 1e6 - 5e5 + rnd() / 3));
      const res = await sim(p, async (comm) => {
        const out = new Float64Array(5);
        await allreduce(comm, { send: xs[comm.rank], recv: out, op: 'sum' });
        return [...out];
      });
      for (let r = 1; r < p; r++) expect(res.results[r]).toEqual(res.results[0]);
      const seq = xs.reduce((acc, x) => acc.map((v, i) => v + x[i]), new Array<number>(5).fill(0));
      res.results[0].forEach((v, i) => expect(v).toBeCloseTo(seq[i], 3));
    }
  });

  it('recv may be send itself (in place) in reduce and allreduce', async () => {
    const p = 6;
    const res = await sim(p, async (comm) => {
      const a = Int32Array.of(comm.rank, 1);
      await allreduce(comm, { send: a, recv: a, op: 'sum' });
      const b = Int32Array.of(comm.rank + 1);
      await reduce(comm, { send: b, recv: b, root: 4, op: 'prod' });
      return [[...a], [...b]];
    });
    for (let r = 0; r < p; r++) expect(res.results[r][0]).toEqual([15, 6]);
    expect(res.results[4][1]).toEqual([720]);
  });
});

// ---------------------------------------------------------------- times in the α+βm model

describe('simulated times', () => {
  const alpha = 7;
  const beta = 2;
  const lin = linearModel({ alpha, beta });

  it('bcast on p = 2^k takes k(α+βm), one-ported, any root', async () => {
    const rnd = rng(31);
    for (let k = 0; k <= K_MAX; k++) {
      const p = 2 ** k;
      const m = int(rnd, 1, 50);
      const root = int(rnd, 0, p - 1);
      const res = await runSim(p, (comm) => bcast(comm, new Uint8Array(m), root), { model: lin });
      expect(res.time).toBe(k * (alpha + beta * m));
      expect(res.messages).toBe(p - 1);
    }
  });

  it('bcast on any p takes ⌈log₂p⌉(α+βm)', async () => {
    for (let p = 1; p <= P_SIM; p++) {
      const res = await runSim(p, (comm) => bcast(comm, new Uint8Array(4), p >> 1), { model: lin });
      expect(res.time).toBe(log2ceil(p) * (alpha + 4 * beta)); // the last rank reached is ⌈log₂p⌉ sends away
    }
  });

  it('bcast scatter-allgather delivers the root\'s bytes for every p, root and length (p dividing it or not)', async () => {
    const rnd = rng(35);
    for (let p = 1; p <= P_SIM; p++) {
      for (const m of [0, 1, p * 3, int(rnd, 2, 5 * p + 7)]) {
        const root = int(rnd, 0, p - 1);
        const ref = block(root, m, p + m);
        const res = await sim(p, async (comm) => {
          const b = comm.rank === root ? ref.slice() : new Uint8Array(m).fill(0xee);
          await bcast(comm, b, root, { algorithm: 'scatter-allgather' });
          return b;
        });
        for (const b of res.results) expect(b).toEqual(ref);
      }
    }
  });

  it('bcast scatter-allgather rejects a rank whose length differs from the root\'s, also when it rounds to the same piece size', async () => {
    // p = 17: lengths 2 and 3 both make pieces of one byte; 34 and 33 pieces of two (34 = 2p: the root's is exact).
    for (const [p, rootLen, liar, liarLen] of [
      [17, 3, 11, 2],
      [17, 2, 5, 3],
      [17, 34, 16, 33],
      [17, 33, 0, 34],
      [4, 10, 2, 12],
    ] as const) {
      const root = (liar + 1) % p;
      const run = runSim(p, async (comm) => {
        const b = new Uint8Array(comm.rank === liar ? liarLen : rootLen);
        await bcast(comm, b, root, { algorithm: 'scatter-allgather' });
      }, { model: lin });
      await expect(run, `p ${p}: ${rootLen} vs ${liarLen}`).rejects.toBeInstanceOf(CommunicationError);
      // the liar's own error: its length named (same piece size), or its piece truncated (another size)
      const cause = await run.catch((e: unknown) => (e as { cause?: unknown }).cause);
      expect(cause instanceof InvalidArgumentError || cause instanceof TruncationError, `p ${p}: ${rootLen} vs ${liarLen}: ${String(cause)}`).toBe(true);
    }
  });

  it('bcast scatter-allgather on p = 2^k, full duplex, p | m: 2kα + 2β(p−1)m/p', async () => {
    for (let k = 0; k <= K_MAX; k++) {
      const p = 2 ** k;
      const m = 5 * p;
      const res = await runSim(p, (comm) => bcast(comm, new Uint8Array(m), p - 1, { algorithm: 'scatter-allgather' }), {
        model: lin,
        ports: 'full-duplex',
      });
      expect(res.time).toBe(2 * k * alpha + 2 * beta * (p - 1) * 5);
    }
  });

  it('reduce on p = 2^k takes k(α+βn), one-ported, any root', async () => {
    const rnd = rng(32);
    for (let k = 0; k <= K_MAX; k++) {
      const p = 2 ** k;
      const root = int(rnd, 0, p - 1);
      const res = await runSim(p, (comm) => reduce(comm, { send: new Float64Array(3), recv: new Float64Array(3), root, op: 'max' }), {
        model: lin,
      });
      expect(res.time).toBe(k * (alpha + beta * 24));
    }
  });

  it('gather and scatter on p = 2^k take kα + β(p−1)m, one-ported, γ = 0, any root', async () => {
    const rnd = rng(33);
    for (let k = 0; k <= K_MAX; k++) {
      const p = 2 ** k;
      const m = int(rnd, 1, 20);
      const root = int(rnd, 0, p - 1);
      const g = await runSim(
        p,
        (comm) => gather(comm, { send: new Uint8Array(m), recv: comm.rank === root ? new Uint8Array(p * m) : undefined, root }),
        { model: lin },
      );
      const s = await runSim(
        p,
        (comm) => scatter(comm, { send: comm.rank === root ? new Uint8Array(p * m) : undefined, recv: new Uint8Array(m), root }),
        { model: lin },
      );
      expect(g.time).toBe(k * alpha + beta * (p - 1) * m);
      expect(s.time).toBe(k * alpha + beta * (p - 1) * m);
    }
  });

  it('allgather takes ⌈log₂p⌉α + β(p−1)m with full-duplex ports, any p', async () => {
    for (let p = 1; p <= P_SIM; p++) {
      const m = 3;
      const res = await runSim(p, (comm) => basicAllgather(comm, { send: new Uint8Array(m), recv: new Uint8Array(p * m) }), {
        model: lin,
        ports: 'full-duplex',
      });
      expect(res.time).toBe(log2ceil(p) * alpha + beta * (p - 1) * m);
    }
  });

  it('allreduce and exscan on p = 2^k take k(α+βn) with full-duplex ports; allreduce adds 2(α+βn) otherwise', async () => {
    for (let p = 1; p <= P_SIM; p++) {
      const n = 2; // Int32: 8 bytes
      const c = alpha + beta * 4 * n;
      const a = await runSim(p, (comm) => allreduce(comm, { send: new Int32Array(n), recv: new Int32Array(n), op: 'sum' }), {
        model: lin,
        ports: 'full-duplex',
      });
      const pof2 = 2 ** Math.floor(Math.log2(p));
      expect(a.time).toBe((Math.log2(pof2) + (p === pof2 ? 0 : 2)) * c);
      const e = await runSim(p, (comm) => exscan(comm, { send: new Int32Array(n), recv: new Int32Array(n), op: 'sum' }), {
        model: lin,
        ports: 'full-duplex',
      });
      expect(e.time).toBe(log2ceil(p) * c);
    }
  });

  it('barrier: ⌈log₂p⌉ rounds of 0-byte messages to r + 2^j (checked in the trace)', async () => {
    for (let p = 1; p <= P_SIM; p++) {
      const res = await sim(p, (comm) => barrier(comm), { trace: true });
      const msgs = res.trace!.messages;
      expect(msgs.length).toBe(p * log2ceil(p));
      expect(msgs.every((x) => x.bytes === 0)).toBe(true);
      for (let r = 0; r < p; r++) {
        const dests = msgs.filter((x) => x.from === r).map((x) => x.to);
        expect(dests).toEqual(Array.from({ length: log2ceil(p) }, (_, j) => (r + 2 ** j) % p));
      }
    }
  });

  it('barrier: no rank leaves before the last one entered (staggered entries by local copies)', async () => {
    const copyModel = linearModel({ alpha: 5, beta: 1, gamma: 1 });
    const rnd = rng(34);
    for (let p = 1; p <= P_SIM; p++) {
      const delays = Array.from({ length: p }, () => int(rnd, 0, 100));
      const res = await runSim(
        p,
        async (comm) => {
          const d = delays[comm.rank];
          comm.copy(new Uint8Array(d), new Uint8Array(d)); // enters at virtual time d
          await barrier(comm);
        },
        { model: copyModel },
      );
      // 0-byte messages take no time: everyone leaves exactly when the last one entered.
      expect(res.finish).toEqual(new Array<number>(p).fill(Math.max(...delays)));
    }
  });

  it('barrier: ⌈log₂p⌉α when every message costs α (empty messages padded to 1 byte, β = 0, full duplex)', async () => {
    const a = 9;
    for (let p = 1; p <= P_SIM; p++) {
      const res = await runSim(p, (comm) => barrier(padEmpty(comm)), { model: linearModel({ alpha: a, beta: 0 }), ports: 'full-duplex' });
      expect(res.time).toBe(log2ceil(p) * a);
    }
  });
});

/** A view of `comm` whose empty messages carry one byte, so that the simulator charges them α. */
function padEmpty(comm: Communicator): Communicator {
  const one = new Uint8Array(1);
  const padded = Object.create(comm) as Communicator;
  return Object.assign(padded, {
    // every message goes through isend/irecv below: no native schedules
    bindValidatedSchedule: undefined,
    isend: (dest: number, tag: number, data: Uint8Array): PromiseLike<void> => comm.isend(dest, tag, data.length === 0 ? one : data),
    irecv: async (source: number, tag: number, into: Uint8Array): Promise<Status> => {
      if (into.length > 0) return comm.irecv(source, tag, into);
      const st = await comm.irecv(source, tag, new Uint8Array(1));
      return { ...st, bytes: st.bytes - 1 };
    },
  });
}

// ---------------------------------------------------------------- bad input

describe('bad input', () => {
  /** Runs `f` on rank `rank` of a p-rank simulation (every other rank does nothing) and returns its error. */
  async function errorOn(p: number, rank: number, f: (comm: Communicator) => Promise<unknown>): Promise<InvalidArgumentError> {
    const res = await sim(p, async (comm) => {
      if (comm.rank !== rank) return null;
      try {
        await f(comm);
      } catch (e) {
        return e;
      }
      return null;
    });
    const e = res.results[rank];
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).rank).toBe(rank);
    return e as InvalidArgumentError;
  }

  it('root out of range or not an integer', async () => {
    for (const root of [-1, 4, 1.5, Number.NaN]) {
      const calls: ((c: Communicator) => Promise<unknown>)[] = [
        (c) => bcast(c, new Uint8Array(2), root),
        (c) => reduce(c, { send: new Int32Array(1), recv: new Int32Array(1), root, op: 'sum' }),
        (c) => gather(c, { send: new Uint8Array(1), recv: new Uint8Array(4), root }),
        (c) => scatter(c, { send: new Uint8Array(4), recv: new Uint8Array(1), root }),
      ];
      for (const call of calls) expect((await errorOn(4, 2, call)).field).toBe('root');
    }
  });

  it('buffers of the wrong type or length', async () => {
    const cases: [string, (c: Communicator) => Promise<unknown>][] = [
      ['buf', (c) => bcast(c, [1, 2] as unknown as Uint8Array, 0)],
      ['algorithm', (c) => bcast(c, new Uint8Array(2), 0, { algorithm: 'ring' as unknown as 'binomial' })],
      ['recv', (c) => gather(c, { send: new Uint8Array(2), recv: new Uint8Array(7), root: 1 })],
      ['recv', (c) => gather(c, { send: new Uint8Array(2), root: 1 })],
      ['send', (c) => scatter(c, { send: new Uint8Array(9), recv: new Uint8Array(2), root: 1 })],
      ['recv', (c) => basicAllgather(c, { send: new Uint8Array(2), recv: new Uint8Array(6) })],
      ['send', (c) => reduce(c, { send: [1] as unknown as Int32Array, recv: new Int32Array(1), root: 1, op: 'sum' })],
      ['send', (c) => reduce(c, { send: new DataView(new ArrayBuffer(4)) as unknown as Int32Array, root: 0, op: 'sum' })],
      ['recv', (c) => reduce(c, { send: new Int32Array(2), recv: new Int32Array(3), root: 1, op: 'sum' })],
      ['recv', (c) => reduce(c, { send: new Int32Array(2), recv: new Uint32Array(2) as unknown as Int32Array, root: 1, op: 'sum' })],
      ['recv', (c) => reduce(c, { send: new Int32Array(2), root: 1, op: 'sum' })],
      ['recv', (c) => allreduce(c, { send: new Float64Array(2), recv: new Float32Array(2) as unknown as Float64Array, op: 'sum' })],
      ['recv', (c) => exscan(c, { send: new Float64Array(2), recv: new Float64Array(1), op: 'sum' })],
      ['recv', (c) => exscan(c, { send: new Float64Array(2), op: 'sum' })],
    ];
    for (const [field, call] of cases) expect((await errorOn(4, 1, call)).field).toBe(field);
    // exscan's recv may be omitted at rank 0 only; reduce's everywhere but the root
    const res = await sim(2, async (comm) => {
      await exscan(comm, { send: Int32Array.of(comm.rank + 5), recv: comm.rank === 0 ? undefined : new Int32Array(1), op: 'sum' });
      await reduce(comm, { send: Int32Array.of(1), recv: comm.rank === 0 ? new Int32Array(1) : undefined, root: 0, op: 'sum' });
    });
    expect(res.messages).toBe(3);
  });

  it('an unknown op, or a bitwise op on floating-point arrays', async () => {
    const cases: ((c: Communicator) => Promise<unknown>)[] = [
      (c) => reduce(c, { send: new Float64Array(1), recv: new Float64Array(1), root: 1, op: 'band' }),
      (c) => allreduce(c, { send: new Float32Array(1), recv: new Float32Array(1), op: 'bxor' }),
      (c) => exscan(c, { send: new Int32Array(1), recv: new Int32Array(1), op: 'avg' as BuiltinOp }),
      (c) => allreduce(c, { send: new Int32Array(1), recv: new Int32Array(1), op: 42 as unknown as BuiltinOp }),
    ];
    for (const call of cases) expect((await errorOn(3, 1, call)).field).toBe('op');
  });

  it('a rank whose buffer is shorter or longer than the others’ makes the run fail with a typed error, never wrong data', async () => {
    const p = 7;
    const collectives: [string, (comm: Communicator, m: number) => Promise<unknown>][] = [
      ['bcast', (c, m) => bcast(c, new Uint8Array(m), 2)],
      ['gather', (c, m) => gather(c, { send: new Uint8Array(m), recv: c.rank === 2 ? new Uint8Array(p * m) : undefined, root: 2 })],
      ['scatter', (c, m) => scatter(c, { send: c.rank === 2 ? new Uint8Array(p * m) : undefined, recv: new Uint8Array(m), root: 2 })],
      ['allgather', (c, m) => basicAllgather(c, { send: new Uint8Array(m), recv: new Uint8Array(p * m) })],
      ['reduce', (c, m) => reduce(c, { send: new Int16Array(m), recv: c.rank === 2 ? new Int16Array(m) : undefined, root: 2, op: 'sum' })],
      ['allreduce', (c, m) => allreduce(c, { send: new Int16Array(m), recv: new Int16Array(m), op: 'sum' })],
      ['exscan', (c, m) => exscan(c, { send: new Int16Array(m), recv: new Int16Array(m), op: 'sum' })],
    ];
    const seen = new Set<string>();
    for (const [name, f] of collectives) {
      for (const odd of [0, 2, 5, 6]) {
        for (const delta of [-1, 1]) {
          const { cause } = await failure(sim(p, (comm) => f(comm, comm.rank === odd ? 4 + delta : 4)));
          const what = `${name}, rank ${odd} ${delta < 0 ? 'shorter' : 'longer'}`;
          if (cause instanceof InvalidArgumentError) {
            expect(['buf', 'send', 'recv'], what).toContain(cause.field);
            expect(cause.message, what).toMatch(/differ in length/);
            seen.add('invalid');
          } else {
            expect(cause, what).toBeInstanceOf(CommunicationError);
            expect((cause as Error).message, what).toMatch(/truncated/);
            seen.add('truncated');
          }
        }
      }
    }
    expect([...seen].sort()).toEqual(['invalid', 'truncated']);
  });
});

// ---------------------------------------------------------------- worker threads

describe(`on worker threads, p = 1..${P_THREADS}`, () => {
  const program = new URL('./programs/basic-collectives.ts', import.meta.url);
  for (let p = 1; p <= P_THREADS; p++) {
    it(`p = ${p}: every collective against the reference; the barrier waits for a late rank`, async () => {
      const args: BasicArgs = { seed: 40 + p, m: 5, k: 2, slowRank: p - 1, sleepMs: 80 };
      const out = await runThreads<BasicResult>(p, program, args);
      const { seed, m, k } = args;
      const [r0, r1] = roots(p, seed);
      const xs = Array.from({ length: p }, (_, r) => mats(r, k, seed));
      const lateEnter = out[p - 1].enter;
      for (let r = 0; r < p; r++) {
        const o = out[r];
        expect(o.exit).toBeGreaterThanOrEqual(lateEnter);
        if (r !== p - 1) expect(lateEnter - o.enter).toBeGreaterThanOrEqual(40); // the test can see a broken barrier
        expect(o.bcast).toEqual([...block(r0, m, seed)]);
        expect(o.gather).toEqual(r === r1 ? concat(blocks(p, m, seed + 1)) : null);
        expect(o.scatter).toEqual([...block(r, m, seed + 2)]);
        expect(o.allgather).toEqual(concat(blocks(p, m, seed + 3)));
        expect(o.reduceSum).toEqual(r === r0 ? reference('Int32Array', 'sum', xs) : null);
        expect(o.reduceMat).toEqual(r === r1 ? matProduct(xs, 0, p, k) : null);
        expect(o.allreduceMat).toEqual(matProduct(xs, 0, p, k));
        expect(o.allreduceBig).toEqual(
          reference(
            'BigInt64Array',
            'sum',
            Array.from({ length: p }, (_, i) => bigs(i, k, seed)),
          ),
        );
        expect(o.exscanMat).toEqual(r === 0 ? null : matProduct(xs, 0, r, k));
      }
    }, 30_000);
  }
});
