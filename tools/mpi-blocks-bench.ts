/**
 * One-shot building blocks over MPI, back to back: µs per call at rank 0 (best of 3 rounds) of
 * allreduce and reduce (one float64, 'sum'), gather and bcast (one byte per rank) and the
 * barrier — each a compiled schedule run by the MPI transport's executor (in C). With
 * VCOLL_MPI_SCHEDULES=0 the same calls run on the portable executor (one request per message);
 * to compare with an older version, run this file from a checkout of it.
 *
 *   npx tsx tools/mpi-blocks-bench.ts [p = 2] [calls = 20000]
 *
 * This file is also the rank program runMpi starts on every rank (its default export).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allreduce, barrier, bcast, gather, reduce } from '../src/collectives/index.js';
import type { Communicator } from '../src/comm/communicator.js';
import { runMpi } from '../src/transports/mpi/run.js';

export default async function mpiBlocksRank(comm: Communicator, args: { calls: number }): Promise<Record<string, number>> {
  const me = comm.rank;
  const x = new Float64Array(1);
  const y = new Float64Array(1);
  const blk = new Uint8Array(1);
  const all = new Uint8Array(comm.size);
  const ops: Record<string, () => Promise<unknown>> = {
    allreduce: () => allreduce(comm, { send: x, recv: y, op: 'sum' }),
    reduce: () => reduce(comm, { send: x, recv: me === 0 ? y : undefined, root: 0, op: 'sum' }),
    gather: () => gather(comm, { send: blk, recv: me === 0 ? all : undefined, root: 0 }),
    bcast: () => bcast(comm, blk, 0),
    barrier: () => barrier(comm),
  };
  const best: Record<string, number> = {};
  for (let round = 0; round < 3; round++) {
    for (const [name, call] of Object.entries(ops)) {
      await barrier(comm);
      const t = performance.now();
      for (let k = 0; k < args.calls; k++) await call();
      const us = ((performance.now() - t) / args.calls) * 1000;
      best[name] = Math.min(best[name] ?? Infinity, us);
    }
  }
  return best;
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const p = Number(process.argv[2] ?? 2);
  const calls = Number(process.argv[3] ?? 20000);
  const res = await runMpi<Record<string, number>>(p, import.meta.url, { calls });
  console.log(`p = ${p}, ${calls} one-shot calls back to back, µs per call at rank 0 (best of 3 rounds):`);
  console.log(Object.entries(res[0]).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', '));
}
