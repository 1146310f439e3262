/**
 * The finalize handshake of the MPI watchdog (src/transports/mpi/handshake.ts) over an
 * in-process stand-in for the binding's point-to-point (eager sends, MPI's matching by source
 * and tag): who gets named when a rank never arrives, rank 0 included, and that a rank that
 * arrived early does not blame rank 0 for a third rank's delay. The real thing runs under
 * mpirun in test/mpi/timeout.mpi.ts.
 */
import { describe, expect, it } from 'vitest';
import type { MpiBinding } from '../src/transports/mpi/binding.js';
import { COLLECTOR_TAG, FINALIZING_TAG, finalizeHandshake, missingLine } from '../src/transports/mpi/handshake.js';

interface Posted {
  readonly source: number;
  readonly tag: number;
  done: boolean;
}

/** p ranks' bindings over one in-process network: handle 0 only, sends complete at once. */
function network(p: number): MpiBinding[] {
  const unexpected: { from: number; to: number; tag: number }[] = [];
  const posted: Posted[][] = Array.from({ length: p }, () => []);
  return Array.from({ length: p }, (_, me) => {
    const binding: Partial<MpiBinding> = {
      isend(comm, dest, tag) {
        expect(comm).toBe(0);
        const r = posted[dest].find((x) => !x.done && x.source === me && x.tag === tag);
        if (r !== undefined) r.done = true;
        else unexpected.push({ from: me, to: dest, tag });
        return -1;
      },
      irecv(comm, source, tag) {
        expect(comm).toBe(0);
        const i = unexpected.findIndex((m) => m.to === me && m.from === source && m.tag === tag);
        const r: Posted = { source, tag, done: i >= 0 };
        if (i >= 0) unexpected.splice(i, 1);
        posted[me].push(r);
        return posted[me].length - 1;
      },
      test(slot) {
        return posted[me][slot].done ? 1 : 0;
      },
      yieldCpu() {},
    };
    return binding as MpiBinding;
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('the finalize handshake', () => {
  it('uses tags at the top of the range MPI guarantees (MPI_TAG_UB >= 32767)', () => {
    expect(FINALIZING_TAG).toBeLessThanOrEqual(32767);
    expect(COLLECTOR_TAG).toBeLessThanOrEqual(32767);
    expect(FINALIZING_TAG).not.toBe(COLLECTOR_TAG);
  });

  it('every rank arrives: nobody is missing', async () => {
    const b = network(4);
    const got = await Promise.all(b.map((x, r) => finalizeHandshake(x, r, 4, 2000)));
    expect(got).toEqual([[], [], [], []]);
  });

  it('a rank that never arrives is named by rank 0; the others, having heard from rank 0, go ahead', async () => {
    const b = network(4);
    const got = await Promise.all([0, 1, 3].map((r) => finalizeHandshake(b[r], r, 4, 300)));
    expect(got).toEqual([[2], [], []]);
  });

  it('rank 0 never arrives: every other rank names it', async () => {
    const b = network(3);
    const got = await Promise.all([1, 2].map((r) => finalizeHandshake(b[r], r, 3, 300)));
    expect(got).toEqual([[0], [0]]);
  });

  it('a rank that arrived long before rank 0 does not blame rank 0 for a third rank', async () => {
    // rank 1 at 0 ms, rank 0 at 200 ms (within rank 1's 300 ms), rank 2 never: only rank 2 is named.
    const b = network(3);
    const one = finalizeHandshake(b[1], 1, 3, 300);
    await sleep(200);
    const zero = finalizeHandshake(b[0], 0, 3, 300);
    expect(await Promise.all([zero, one])).toEqual([[2], []]);
  });

  it('watchdog off or a single rank: no handshake', async () => {
    const b = network(2);
    expect(await finalizeHandshake(b[1], 1, 2, Infinity)).toEqual([]);
    expect(await finalizeHandshake(network(1)[0], 0, 1, 100)).toEqual([]);
  });

  it('the line names the first missing rank, then all of them (at most 16)', () => {
    expect(missingLine([2], 2000, 0)).toBe('rank 2 did not reach MPI_Finalize within 2000 ms (missing: rank 2; seen by rank 0) — stuck or still running');
    expect(missingLine([1, 3], 500, 0)).toBe('rank 1 did not reach MPI_Finalize within 500 ms (missing: ranks 1, 3; seen by rank 0) — stuck or still running');
    const many = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(missingLine(many, 500, 0)).toMatch(/^rank 1 did not reach MPI_Finalize within 500 ms \(missing: ranks 1, 2, .*, 16, … \(20 in all\); seen by rank 0\)/);
  });
});
