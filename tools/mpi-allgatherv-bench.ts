/**
 * One-shot intragroup allgatherv over MPI, back to back: µs per call at rank 0 (best of 3
 * rounds, after one of warm-up) of each algorithm — ring, Bruck and the pipelined ring, every one
 * a handshake then a compiled schedule run by the MPI transport's executor in C (the pipelined
 * ring's two streams per rank included). Blocks uneven: rank i's block ∝ 1 + (i mod 3) (one in
 * three empty with --zeros), `total` bytes in all. With VCOLL_MPI_SCHEDULES=0 the same calls run
 * on the portable executor (one request and one JS turn per message); to compare with an older
 * version, run this file from a checkout of it.
 *
 *   npx tsx tools/mpi-allgatherv-bench.ts [p = 2] [total bytes = 1048576] [calls = 200] [--zeros]
 *
 * This file is also the rank program runMpi starts on every rank (its default export).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allgatherv, barrier } from '../src/collectives/index.js';
import type { Communicator } from '../src/comm/communicator.js';
import { runMpi } from '../src/transports/mpi/run.js';

const ALGORITHMS = ['ring', 'bruck', 'pipelined-ring'] as const;

interface Args {
  readonly total: number;
  readonly calls: number;
  readonly zeros: boolean;
}

/** Rank i's block: ∝ 1 + (i mod 3), one in three empty with `zeros`, summing to about `total`. */
export function blockSizes(p: number, total: number, zeros: boolean): number[] {
  const weight = (i: number): number => (zeros && i % 3 === 2 ? 0 : 1 + (i % 3));
  let sum = 0;
  for (let i = 0; i < p; i++) sum += weight(i);
  return Array.from({ length: p }, (_, i) => Math.floor((total * weight(i)) / Math.max(1, sum)));
}

export default async function mpiAllgathervRank(comm: Communicator, args: Args): Promise<Record<string, number>> {
  const counts = blockSizes(comm.size, args.total, args.zeros);
  const send = new Uint8Array(counts[comm.rank]).fill(comm.rank + 1);
  const recv = new Uint8Array(counts.reduce((a, b) => a + b, 0));
  const best: Record<string, number> = {};
  // round 0 warms up (JIT, MPI's shared-memory paths) and is not counted
  for (let round = 0; round <= 3; round++) {
    for (const algorithm of ALGORITHMS) {
      await barrier(comm);
      const t = performance.now();
      for (let k = 0; k < args.calls; k++) await allgatherv(comm, { send, recv, counts }, { algorithm });
      const us = ((performance.now() - t) / args.calls) * 1000;
      if (round > 0) best[algorithm] = Math.min(best[algorithm] ?? Infinity, us);
    }
  }
  // the data arrived (every block holds its rank's value + 1)
  let at = 0;
  counts.forEach((c, i) => {
    for (let j = 0; j < c; j++) if (recv[at + j] !== i + 1) throw new Error(`rank ${comm.rank}: block ${i} byte ${j} is ${recv[at + j]}, expected ${i + 1}`);
    at += c;
  });
  return best;
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const p = Number(positional[0] ?? 2);
  const total = Number(positional[1] ?? 1 << 20);
  const calls = Number(positional[2] ?? 200);
  const zeros = process.argv.includes('--zeros');
  const res = await runMpi<Record<string, number>>(p, import.meta.url, { total, calls, zeros });
  const executor = process.env.VCOLL_MPI_SCHEDULES === '0' ? 'portable executor' : 'executor in C';
  console.log(`p = ${p}, ${total} bytes in all (blocks ${blockSizes(p, total, zeros).join(', ')}), ${calls} one-shot calls back to back, ${executor}; µs per call at rank 0 (best of 3 rounds after a warm-up):`);
  console.log(Object.entries(res[0]).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', '));
}
