/**
 * Rank program for test/threads-memory.test.ts: ranks that may share a worker thread.
 * 'exchange': every rank sends every other a block and gathers them back with gatherv;
 * 'throws': rank `bad` throws (sharing its thread with other ranks); 'outside': rank `bad`
 * awaits a timer outside vcoll while the others call barrier.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { barrier, gatherv } from '../../src/index.js';

export interface PackedArgs {
  readonly scenario: 'exchange' | 'throws' | 'outside';
  readonly bad?: number;
  /** Mutated by every rank: each must get its own copy. */
  readonly mine?: number[];
}

export default async function packedProgram(comm: Communicator, args: PackedArgs): Promise<unknown> {
  const me = comm.rank;
  const p = comm.size;
  if (args.scenario === 'throws') {
    if (me === args.bad) throw new Error(`rank ${me} gives up`);
    await comm.recv(args.bad ?? 0, 0, new Uint8Array(1));
    return me;
  }
  if (args.scenario === 'outside') {
    if (me === args.bad) await new Promise((r) => setTimeout(r, 1e9));
    await barrier(comm);
    return me;
  }
  args.mine?.push(me);
  const sends = [];
  const recvs: Uint8Array[] = [];
  for (let d = 0; d < p; d++) if (d !== me) sends.push(comm.isend(d, 3, new Uint8Array(100 + me).fill(me)));
  for (let s = 0; s < p; s++) {
    if (s === me) continue;
    const into = new Uint8Array(100 + s);
    recvs.push(into);
    await comm.recv(s, 3, into);
  }
  await comm.waitAll(sends);
  const ok = recvs.every((b, i) => b.every((x) => x === (i < me ? i : i + 1)));
  const counts = Array.from({ length: p }, (_, r) => 10 + r);
  const recv = me === 0 ? new Uint8Array(counts.reduce((a, b) => a + b, 0)) : undefined;
  await gatherv(comm, { root: 0, send: new Uint8Array(counts[me]).fill(me), recv, counts: me === 0 ? counts : undefined });
  const gathered = recv === undefined ? true : counts.every((c, r) => recv.subarray(counts.slice(0, r).reduce((a, b) => a + b, 0), counts.slice(0, r + 1).reduce((a, b) => a + b, 0)).every((x) => x === r));
  return { ok, gathered, mine: args.mine };
}
