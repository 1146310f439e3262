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
import { blockOf, SENTINEL } from '../helpers/blocks.js';
import { int, rng } from '../helpers/random.js';

export { blockOf, displsOf, expectedRecv, SENTINEL } from '../helpers/blocks.js';

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


export type Layout = 'default' | 'gapped' | 'permuted';

/** A case with the given counts laid out per `layout` (gaps and a slack tail from `seed`). */
export function makeCase(api: AgCase['api'], algorithm: string, counts: number[], unitBytes: number, layout: Layout, seed: number): AgCase {
  const rnd = rng(seed);
  const p = counts.length;
  let displs: number[] | undefined;
  let end = counts.reduce((s, n) => s + n, 0);
  if (layout !== 'default') {
    const order = Array.from({ length: p }, (_, i) => i);
    if (layout === 'permuted') {
      for (let i = p - 1; i > 0; i--) {
        const j = int(rnd, 0, i);
        [order[i], order[j]] = [order[j], order[i]];
      }
    }
    displs = new Array<number>(p);
    let at = int(rnd, 0, 3);
    for (const r of order) {
      displs[r] = at;
      at += counts[r] + int(rnd, 0, 3);
    }
    end = at;
  }
  return { api, algorithm, counts, displs, unitBytes, recvBytes: end * unitBytes + (api === 'allgather' ? 0 : int(rnd, 0, 2)), seed };
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
