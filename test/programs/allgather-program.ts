/**
 * Allgather / allgatherv cases shared by test/allgather.test.ts (simulator) and its worker
 * threads runs (this module's default export is the threads rank program): deterministic block
 * data, the reference receive buffer (sentinels outside the blocks), one rank's run of a case.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import {
  ALLGATHER_VARIANTS,
  allgather,
  allgatherv,
  normalizeAllgatherv,
  type AllgatherAlgorithm,
  type AllgathervAlgorithm,
} from '../../src/collectives/allgather/index.js';

export const SENTINEL = 0xee;

export interface AgCase {
  /** 'allgather': the regular API (counts all equal, default displs); 'allgatherv': the v API; 'variant': ALLGATHER_VARIANTS row run on the v input. */
  readonly api: 'allgather' | 'allgatherv' | 'variant';
  readonly algorithm: string;
  readonly counts: readonly number[];
  readonly displs?: readonly number[];
  readonly unitBytes: number;
  /** Bytes of every rank's recv. */
  readonly recvBytes: number;
  readonly seed: number;
}

/** Rank r's block of n bytes (never the sentinel). */
export function blockOf(r: number, n: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, j) => (r * 131 + j * 7 + seed * 17 + 1) % 211);
}

/** Element displacements in use (default: prefix sums). */
export function displsOf(c: AgCase): number[] {
  if (c.displs !== undefined) return [...c.displs];
  let at = 0;
  return c.counts.map((n) => {
    const d = at;
    at += n;
    return d;
  });
}

/** What every rank's recv must hold afterwards. */
export function expectedRecv(c: AgCase): Uint8Array {
  const out = new Uint8Array(c.recvBytes).fill(SENTINEL);
  const d = displsOf(c);
  c.counts.forEach((n, r) => out.set(blockOf(r, n * c.unitBytes, c.seed), d[r] * c.unitBytes));
  return out;
}

/** One rank's part of a case; resolves with its recv. */
export async function runCaseRank(comm: Communicator, c: AgCase): Promise<Uint8Array> {
  const r = comm.rank;
  const send = blockOf(r, c.counts[r] * c.unitBytes, c.seed);
  const recv = new Uint8Array(c.recvBytes).fill(SENTINEL);
  if (c.api === 'allgather') {
    await allgather(comm, { send, recv }, { algorithm: c.algorithm as AllgatherAlgorithm });
  } else if (c.api === 'allgatherv') {
    const args = { send, recv, counts: c.counts, displs: c.displs, unitBytes: c.unitBytes };
    await allgatherv(comm, args, { algorithm: c.algorithm as AllgathervAlgorithm });
  } else {
    const { input } = normalizeAllgatherv(comm, { send, recv, counts: c.counts, displs: c.displs, unitBytes: c.unitBytes });
    const v = ALLGATHER_VARIANTS.find((x) => x.name === c.algorithm);
    if (v === undefined) throw new Error(`no variant ${c.algorithm}`);
    await v.run(input);
  }
  return recv;
}

/** Threads program: the cases one after the other; every rank returns its recv of each. */
export default async function program(comm: Communicator, cases: AgCase[]): Promise<number[][]> {
  const out: number[][] = [];
  for (const c of cases) out.push([...(await runCaseRank(comm, c))]);
  return out;
}
