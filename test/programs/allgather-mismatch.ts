/**
 * Worker-threads rank program for test/allgather.test.ts: ranks that disagree about the sizes
 * ('auto-threshold': rank 0's m puts auto on Bruck, the others' on the ring; 'moved-counts':
 * rank 1's counts have two blocks swapped, same total, Bruck). The run must reject.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { allgather, allgatherv } from '../../src/collectives/allgather/index.js';

export default async function mismatch(comm: Communicator, scenario: 'auto-threshold' | 'moved-counts'): Promise<void> {
  const p = comm.size;
  if (scenario === 'auto-threshold') {
    const m = comm.rank === 0 ? 10_000 : 30_000;
    await allgather(comm, { send: new Uint8Array(m), recv: new Uint8Array(p * m) });
    return;
  }
  const counts = Array.from({ length: p }, (_, r) => r + 1);
  if (comm.rank === 1) [counts[2], counts[3]] = [counts[3], counts[2]];
  const total = counts.reduce((a, b) => a + b, 0);
  await allgatherv(comm, { send: new Uint8Array(counts[comm.rank]), recv: new Uint8Array(total), counts }, { algorithm: 'bruck' });
}
