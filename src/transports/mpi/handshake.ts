/**
 * The finalize handshake of the MPI watchdog: a rank that never reaches MPI_Finalize while the
 * others have (stuck outside vcoll: awaiting a promise nobody resolves, or still computing)
 * would hold the job for good, since MPI_Finalize waits for every process (MPI-4.0 §11.2.2:
 * MPI_Finalize is collective over the processes connected to the caller; Open MPI ends it with
 * a fence of the runtime). Before MPI_Finalize, when the watchdog is on:
 *
 * - every rank r ≠ 0 posts a receive from rank 0, sends rank 0 one byte ("finalizing"), and
 *   waits up to `waitMs` (from its own arrival) for rank 0's byte; if none comes, rank 0 has
 *   not reached MPI_Finalize within `waitMs` of r: r names rank 0;
 * - rank 0, on arrival, sends every rank its byte ("rank 0 is finalizing") and waits up to
 *   `waitMs` for every rank's; the ranks whose byte did not come are named.
 *
 * `waitMs` is FINALIZE_WAIT_FACTOR watchdog timeouts (see there).
 *
 * Rank 0's byte says only that rank 0 arrived, not that everyone did: a rank that got it enters
 * MPI_Finalize, and if rank 0 then finds a rank missing, its MPI_Abort ends the job, those in
 * MPI_Finalize included. So no rank waits for a verdict that depends on rank 0's arrival time,
 * and no rank blames rank 0 for another rank's delay. A rank whose JS is stuck runs none of
 * this: the ranks waiting for it name it. Cost: one 1-byte message from each rank to rank 0 and
 * one back (2 (p − 1) in all, rank 0 posts p − 1 of each), then MPI_Finalize's own fence finds
 * everybody there.
 *
 * The messages travel on MPI_COMM_WORLD itself (the binding's handle 0), which vcoll uses for no
 * other point-to-point traffic (its contexts are duplicates of it or groups made from it;
 * communicator construction uses tags below 2^14 there), with tags just below 32767, the least
 * MPI_TAG_UB MPI guarantees (MPI-4.0 §9.1.2, tag values).
 */

import type { MpiBinding } from './binding.js';

/**
 * How long the handshake waits, in watchdog timeouts. A rank inside a vcoll operation reports
 * its own TimeoutError within 1.25 timeouts of posting it (src/comm/timeout.ts; the binding's
 * thread likewise for a call inside MPI), and a rank that caught such an error and returned
 * reports the send still pending in its drain within one timeout more (2.25): waiting 3
 * timeouts, the handshake names only ranks that are in no operation — stuck outside vcoll or
 * still running — and leaves the more precise message to the others.
 */
export const FINALIZE_WAIT_FACTOR = 3;

/** Tag of rank r's "finalizing" byte to rank 0 (on MPI_COMM_WORLD). */
export const FINALIZING_TAG = 32766;
/** Tag of rank 0's "rank 0 is finalizing" byte to every rank (on MPI_COMM_WORLD). */
export const COLLECTOR_TAG = 32767;

/** How long the handshake polls on the event loop's check phase before it sleeps 1 ms per poll (ms). */
const BUSY_POLL_MS = 10;
/** Empty polls before each sched_yield (oversubscribed runs leave the core to the ranks that work). */
const POLLS_BEFORE_YIELD = 64;

/** A request of the handshake in the binding, and the buffer MPI uses until it completes. */
interface Posted {
  readonly slot: number;
  readonly buf: Uint8Array;
}

/**
 * Runs the handshake on this rank: resolves with the world ranks that did not arrive within
 * `waitMs` (Infinity: no handshake; empty: MPI_Finalize may go ahead; rank 0 lists ranks r ≠ 0, the others [0]).
 * Call it after the endpoint's close (its progress loop would test these requests too). When it
 * names ranks, its requests are left pending: the caller must end the job (MPI_Abort). Throws
 * what the binding throws (an MPI failure).
 */
export async function finalizeHandshake(mpi: MpiBinding, rank: number, size: number, waitMs: number): Promise<number[]> {
  if (size < 2 || !(waitMs < Infinity)) return [];
  const start = performance.now();
  const deadline = start + waitMs;
  const out = new Int32Array(5);
  // Requests still pending, by peer, each with its buffer: MPI reads or writes that memory until
  // the request completes, so the request's entry keeps it from the garbage collector (a local
  // not used after an await is not kept alive).
  const recvs = new Map<number, Posted>();
  const sends = new Map<number, Posted>();
  if (rank === 0) {
    for (let r = 1; r < size; r++) {
      const buf = new Uint8Array(1);
      recvs.set(r, { slot: mpi.irecv(0, r, FINALIZING_TAG, buf), buf });
    }
    for (let r = 1; r < size; r++) {
      const buf = Uint8Array.of(1);
      const slot = mpi.isend(0, r, COLLECTOR_TAG, buf);
      if (slot >= 0) sends.set(r, { slot, buf });
    }
  } else {
    // The receive first: once rank 0 has this rank's byte, its own byte finds a receive posted.
    const into = new Uint8Array(1);
    recvs.set(0, { slot: mpi.irecv(0, 0, COLLECTOR_TAG, into), buf: into });
    const buf = Uint8Array.of(1);
    const slot = mpi.isend(0, 0, FINALIZING_TAG, buf);
    if (slot >= 0) sends.set(0, { slot, buf });
  }
  let polls = 0;
  for (;;) {
    for (const [peer, p] of recvs) if (mpi.test(p.slot, 0, out) === 1) recvs.delete(peer);
    for (const [peer, p] of sends) if (mpi.test(p.slot, 0, out) === 1) sends.delete(peer);
    if (recvs.size === 0 && sends.size === 0) return [];
    // A 1-byte send still pending once every byte came: its receiver posted the receive (before
    // its own send) and then stopped taking part; it gets as long again, then is named too.
    const now = performance.now();
    if (now >= deadline + (recvs.size === 0 ? waitMs : 0)) break;
    if (now - start < BUSY_POLL_MS) {
      await new Promise<void>((r) => setImmediate(r));
      if (++polls % POLLS_BEFORE_YIELD === 0) mpi.yieldCpu();
    } else {
      await new Promise<void>((r) => setTimeout(r, 1));
    }
  }
  return [...(recvs.size > 0 ? recvs : sends).keys()].sort((a, b) => a - b);
}

/**
 * The line a rank prints when the handshake found ranks missing (after `vcoll: `), which
 * `runMpi` turns into an error whose `rank` is the first of them:
 * `rank 2 did not reach MPI_Finalize within 6000 ms (missing: rank 2; seen by rank 0) — stuck or still running`.
 */
export function missingLine(missing: readonly number[], waitMs: number, seenBy: number): string {
  const shown = missing.length <= 16 ? missing.join(', ') : `${missing.slice(0, 16).join(', ')}, … (${missing.length} in all)`;
  return `rank ${missing[0]} did not reach MPI_Finalize within ${waitMs} ms (missing: rank${missing.length > 1 ? 's' : ''} ${shown}; seen by rank ${seenBy}) — stuck or still running`;
}
