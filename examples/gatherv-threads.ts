/**
 * A gatherv on 8 worker threads. This file is both the launcher and the rank program.
 *
 *   npm run build && npx tsx examples/gatherv-threads.ts
 *
 * Rank r sends r + 1 bytes of value r; rank 0 receives them in rank order: 0 1 1 2 2 2 3 3 3 3 …
 */
import { isMainThread } from 'node:worker_threads';
import { gatherv, runThreads, type Communicator } from 'vcoll';

/** The rank program (runThreads runs the default export on every rank). */
export default async function rank(comm: Communicator): Promise<number[] | undefined> {
  const counts = Array.from({ length: comm.size }, (_, r) => r + 1);
  const send = new Uint8Array(comm.rank + 1).fill(comm.rank);
  const recv = comm.rank === 0 ? new Uint8Array(counts.reduce((a, b) => a + b)) : undefined;
  await gatherv(comm, { root: 0, send, recv, counts: comm.rank === 0 ? counts : undefined }, { algorithm: 'adaptive' });
  return recv && Array.from(recv);
}

if (isMainThread) {
  const p = 8;
  const [gathered] = await runThreads<number[] | undefined>(p, new URL(import.meta.url));
  const expected = Array.from({ length: p }, (_, r) => new Array<number>(r + 1).fill(r)).flat();
  console.log(`rank 0 gathered ${gathered?.length} bytes: ${gathered?.join(' ')}`);
  if (gathered?.join() !== expected.join()) throw new Error('gatherv delivered wrong data');
  console.log('ok: every block in rank order');
}
