/**
 * Threads program for test/basic-collectives.test.ts: every building-block collective once on
 * deterministic data, results returned to the test, which checks them against sequential
 * references built from the same generators (exported here).
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { allreduce, basicAllgather, barrier, bcast, exscan, gather, reduce, scatter } from '../../src/collectives/basic/index.js';

export interface BasicArgs {
  readonly seed: number;
  /** Block bytes of bcast/gather/scatter/allgather. */
  readonly m: number;
  /** 2×2 matrices per rank in the reductions. */
  readonly k: number;
  /** The rank that enters the barrier late, by sleepMs. */
  readonly slowRank: number;
  readonly sleepMs: number;
}

export interface BasicResult {
  readonly enter: number;
  readonly exit: number;
  readonly bcast: number[];
  readonly gather: number[] | null;
  readonly scatter: number[];
  readonly allgather: number[];
  readonly reduceSum: number[] | null;
  readonly reduceMat: number[] | null;
  readonly allreduceMat: number[];
  readonly allreduceBig: bigint[];
  readonly exscanMat: number[] | null;
}

export const MOD = 32749;

function gen(seed: number): () => number {
  let s = (seed * 2654435761) >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** Rank r's block of m bytes. */
export function block(r: number, m: number, seed: number): Uint8Array {
  const g = gen(seed * 1000 + r + 1);
  return Uint8Array.from({ length: m }, () => g() & 255);
}

/** Rank r's k 2×2 matrices mod MOD (row-major, 4 entries each). */
export function mats(r: number, k: number, seed: number): Int32Array {
  const g = gen(seed * 7919 + r + 17);
  return Int32Array.from({ length: 4 * k }, () => g() % MOD);
}

export function bigs(r: number, n: number, seed: number): BigInt64Array {
  const g = gen(seed * 31 + r + 5);
  return BigInt64Array.from({ length: n }, () => (BigInt(g()) << 32n) | BigInt(g()));
}

/** a := a · b, matrix by matrix, mod MOD: associative and not commutative. */
export function matmulMod(a: Int32Array, b: Int32Array): void {
  for (let i = 0; i < a.length; i += 4) {
    const [a0, a1, a2, a3] = [a[i], a[i + 1], a[i + 2], a[i + 3]];
    const [b0, b1, b2, b3] = [b[i], b[i + 1], b[i + 2], b[i + 3]];
    a[i] = (a0 * b0 + a1 * b2) % MOD;
    a[i + 1] = (a0 * b1 + a1 * b3) % MOD;
    a[i + 2] = (a2 * b0 + a3 * b2) % MOD;
    a[i + 3] = (a2 * b1 + a3 * b3) % MOD;
  }
}

export const roots = (p: number, seed: number): number[] => [seed % p, (seed * 7 + 3) % p, (seed * 13 + 1) % p];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export default async function program(comm: Communicator, args: BasicArgs): Promise<BasicResult> {
  const { rank: r, size: p } = comm;
  const { seed, m, k } = args;
  const [r0, r1, r2] = roots(p, seed);

  await barrier(comm); // workers start at different times: line them up first
  if (r === args.slowRank % p) await sleep(args.sleepMs);
  const enter = Date.now();
  await barrier(comm);
  const exit = Date.now();

  const b = r === r0 ? block(r0, m, seed) : new Uint8Array(m).fill(0xee);
  await bcast(comm, b, r0);

  const g = r === r1 ? new Uint8Array(p * m) : undefined;
  await gather(comm, { send: block(r, m, seed + 1), recv: g, root: r1 });

  const s = new Uint8Array(m);
  const full = r === r2 ? Uint8Array.from(Array.from({ length: p }, (_, i) => [...block(i, m, seed + 2)]).flat()) : undefined;
  await scatter(comm, { send: full, recv: s, root: r2 });

  const ag = new Uint8Array(p * m);
  await basicAllgather(comm, { send: block(r, m, seed + 3), recv: ag });

  const sum = r === r0 ? new Int32Array(4 * k) : undefined;
  await reduce(comm, { send: mats(r, k, seed), recv: sum, root: r0, op: 'sum' });
  const prod = r === r1 ? new Int32Array(4 * k) : undefined;
  await reduce(comm, { send: mats(r, k, seed), recv: prod, root: r1, op: matmulMod });

  const all = new Int32Array(4 * k);
  await allreduce(comm, { send: mats(r, k, seed), recv: all, op: matmulMod });
  const big = new BigInt64Array(k);
  await allreduce(comm, { send: bigs(r, k, seed), recv: big, op: 'sum' });

  const ex = new Int32Array(4 * k);
  await exscan(comm, { send: mats(r, k, seed), recv: ex, op: matmulMod });

  return {
    enter,
    exit,
    bcast: [...b],
    gather: g ? [...g] : null,
    scatter: [...s],
    allgather: [...ag],
    reduceSum: sum ? [...sum] : null,
    reduceMat: prod ? [...prod] : null,
    allreduceMat: [...all],
    allreduceBig: [...big],
    exscanMat: r === 0 ? null : [...ex],
  };
}
