/**
 * Rank program: vcoll's blocking point-to-point over MPI (mpiBlocking) on the world and on a
 * split communicator ranked in reverse: a ring (even ranks send first, odd ones receive first,
 * so blocking sends cannot wait on each other), ANY_SOURCE with its status in communicator
 * ranks, a send to oneself, sizes past the eager limit, and bad arguments as typed errors.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { ANY_SOURCE } from '../../src/comm/communicator.js';
import { mpiBlocking } from '../../src/transports/mpi/blocking.js';

export interface BlockingObservation {
  readonly ring: boolean[];
  readonly anySource: { source: number; tag: number; bytes: number } | null;
  readonly self: boolean;
  readonly errors: string[];
}

const byte = (from: number, i: number): number => (from * 37 + i) & 255;

async function onComm(comm: Communicator, sizes: readonly number[]): Promise<BlockingObservation> {
  const b = mpiBlocking(comm);
  const p = comm.size;
  const right = (comm.rank + 1) % p;
  const left = (comm.rank - 1 + p) % p;
  const ring: boolean[] = [];
  for (const n of sizes) {
    const out = Uint8Array.from({ length: n }, (_, i) => byte(comm.rank, i));
    const into = new Uint8Array(n);
    // Even ranks send first: with p odd the last even rank sends to rank 0, which receives once its own send is through.
    if (comm.rank % 2 === 0) {
      b.send(right, 5, out);
      b.recv(left, 5, into);
    } else {
      b.recv(left, 5, into);
      b.send(right, 5, out);
    }
    ring.push(into.every((x, i) => x === byte(left, i)));
  }
  let anySource: BlockingObservation['anySource'] = null;
  if (comm.rank === 0 && p > 1) {
    const st = b.recv(ANY_SOURCE, 9, new Uint8Array(16));
    anySource = { source: st.source, tag: st.tag, bytes: st.bytes };
  } else if (comm.rank === p - 1 && p > 1) {
    b.send(0, 9, new Uint8Array(11));
  }
  const selfIn = new Uint8Array(3);
  b.send(comm.rank, 7, Uint8Array.of(1, 2, 3));
  b.recv(comm.rank, 7, selfIn);
  const errors: string[] = [];
  for (const f of [() => b.send(p, 1, new Uint8Array(1)), () => b.recv(0, -5, new Uint8Array(1)), () => b.send(0, 1, 'x' as unknown as Uint8Array)]) {
    try {
      f();
      errors.push('none');
    } catch (e) {
      errors.push(`${(e as Error).name}:${(e as { field?: string }).field ?? ''}`);
    }
  }
  await comm.split(0, 0); // a collective: every rank is past its blocking traffic
  return { ring, anySource, self: selfIn.join(',') === '1,2,3', errors };
}

export default async function blockingProgram(world: Communicator, args: { sizes: number[] }): Promise<BlockingObservation[]> {
  const split = (await world.split(world.rank % 2, -world.rank)) as Communicator;
  return [await onComm(world, args.sizes), await onComm(split, args.sizes)];
}
