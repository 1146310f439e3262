/**
 * Rank program: vcoll's blocking point-to-point over MPI (mpiBlocking) on the world and on a
 * split communicator ranked in reverse: a ring (even ranks send first, odd ones receive first,
 * so blocking sends cannot wait on each other), ANY_SOURCE with its status in communicator
 * ranks, a send to oneself, sizes past the eager limit, and bad arguments as typed errors.
 * Then what the fast path's cache of the last array must not get wrong: alternating arrays, a
 * receive into an array whose buffer was detached after use (transfer) and into a length-
 * tracking array over a resizable buffer that shrank, both truncations (never a write into
 * memory the array no longer has), and a send from a detached array (0 bytes arrive).
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { ANY_SOURCE } from '../../src/comm/communicator.js';
import { loadMpiBinding } from '../../src/transports/mpi/binding.js';
import { mpiBlocking } from '../../src/transports/mpi/blocking.js';

export interface BlockingObservation {
  readonly ring: boolean[];
  readonly anySource: { source: number; tag: number; bytes: number } | null;
  readonly self: boolean;
  readonly errors: string[];
  /** Each array-cache case: true when it behaved. */
  readonly cache: Record<string, boolean>;
  /** Whether the binding's fast path served (VCOLL_MPI_FAST=0 turns it off). */
  readonly fast: boolean;
}

/** The error name of f(), or 'none'. */
function errorOf(f: () => unknown): string {
  try {
    f();
    return 'none';
  } catch (e) {
    return (e as Error).name;
  }
}

/** A ring step: even ranks send first (see onComm). */
function ringStep(comm: Communicator, send: () => void, recv: () => void): void {
  if (comm.rank % 2 === 0) {
    send();
    recv();
  } else {
    recv();
    send();
  }
}

function cacheCases(comm: Communicator): Record<string, boolean> {
  const b = mpiBlocking(comm);
  const p = comm.size;
  const right = (comm.rank + 1) % p;
  const left = (comm.rank - 1 + p) % p;
  const a = new Uint8Array(8).fill(comm.rank + 1);
  const c = new Uint8Array(8).fill(comm.rank + 101);
  const got1 = new Uint8Array(8);
  const got2 = new Uint8Array(8);
  // Alternating arrays on both sides: each message lands in its own array.
  ringStep(comm, () => b.send(right, 11, a), () => b.recv(left, 11, got1));
  ringStep(comm, () => b.send(right, 11, c), () => b.recv(left, 11, got2));
  ringStep(comm, () => b.send(right, 11, a), () => b.recv(left, 11, got2));
  const alternating = got1.every((x) => x === left + 1) && got2.every((x) => x === left + 1);
  // got1 was the last receive array but one; make it the last, then take its buffer away.
  ringStep(comm, () => b.send(right, 12, c), () => b.recv(left, 12, got1));
  structuredClone(got1.buffer, { transfer: [got1.buffer] });
  let detachedRecv = '';
  ringStep(comm, () => b.send(right, 13, a), () => (detachedRecv = errorOf(() => b.recv(left, 13, got1))));
  // A send from a detached array sends nothing.
  const gone = new Uint8Array(8).fill(7);
  const zero = new Uint8Array(8);
  ringStep(comm, () => b.send(right, 14, gone), () => b.recv(left, 14, zero));
  structuredClone(gone.buffer, { transfer: [gone.buffer] });
  let bytes = -1;
  ringStep(comm, () => b.send(right, 15, gone), () => (bytes = b.recv(left, 15, zero).bytes));
  // A length-tracking array over a resizable buffer that shrinks after use.
  const rab = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer & { resize(n: number): void })(8, { maxByteLength: 16 });
  const tracking = new Uint8Array(rab);
  ringStep(comm, () => b.send(right, 16, a), () => b.recv(left, 16, tracking));
  const before = tracking.every((x) => x === left + 1);
  rab.resize(4);
  let shrunk = '';
  ringStep(comm, () => b.send(right, 17, a), () => (shrunk = errorOf(() => b.recv(left, 17, tracking))));
  return {
    alternating,
    detachedRecvTruncates: detachedRecv === 'TruncationError',
    detachedSendIsEmpty: bytes === 0,
    resizableBefore: before,
    resizableShrunkTruncates: shrunk === 'TruncationError',
  };
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
  const cache = cacheCases(comm);
  await comm.split(0, 0); // a collective: every rank is past its blocking traffic
  return { ring, anySource, self: selfIn.join(',') === '1,2,3', errors, cache, fast: loadMpiBinding().fast !== undefined };
}

export default async function blockingProgram(world: Communicator, args: { sizes: number[] }): Promise<BlockingObservation[]> {
  const split = (await world.split(world.rank % 2, -world.rank)) as Communicator;
  return [await onComm(world, args.sizes), await onComm(split, args.sizes)];
}
