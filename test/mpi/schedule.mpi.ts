/**
 * The MPI transport's native schedule executor (native/vcoll_mpi_schedule.c, reached through
 * schedule/run.ts bindSchedule → the communicator → MpiEndpoint.bindSchedule): the rank program
 * of test/threads-schedule.test.ts (test/programs/schedule-program.ts) under mpirun — every
 * compiled gatherv/scatterv algorithm, both ops, random counts with zeros, several roots,
 * models with 1 and 2 ports and copyAll off and on, on the world and on a split whose ranks
 * are not world ranks, each schedule run repeatedly and checked byte for byte against the
 * known result and the portable executor (native ranks against portable ranks, in a shifted
 * tag slot); schedule operations matched by plain ones in posting order; receive length
 * errors as the portable executor's. Plus the persistent plans' `startBlocking` (the whole
 * run in C) and the bench tool's rank program as a smoke test of `start()` back to back.
 *
 * Steps of concurrent streams (ScheduleStep.streams, `after`; test/programs/stream-schedule-program.ts):
 * the pipelined-ring allgatherv at p = 2 and 4 over uneven counts with zeros and large blocks
 * (many chunks), byte for byte, bound natively (a spy on the endpoint's executor) and run in C
 * (no message of its data phase through the endpoint, where the portable executor posts one
 * per chunk); a hand-written schedule of streams (four of them, one empty, window 2,
 * dependencies across streams and on a copy) native = portable = the known result, persistent,
 * one-shot, runBlocking, native ranks against portable ones; a short or long receive in a
 * stream failing as with the portable executor; a stuck stream named by the watchdog.
 */
import { describe, expect, it } from 'vitest';
import { runMpi } from '../../src/transports/mpi/run.js';
import { makeCases, type ScheduleArgs } from '../programs/schedule-program.js';
import type { StreamArgs, StreamResult } from '../programs/stream-schedule-program.js';
import { CommunicationError } from '../../src/errors.js';

const PROGRAM = new URL('../programs/schedule-program.ts', import.meta.url);
const BLOCKING = new URL('../programs/blocking-start-program.ts', import.meta.url);
const STREAMS = new URL('../programs/stream-schedule-program.ts', import.meta.url);

describe('native schedules over MPI', () => {
  it.each([2, 3, 4])('every compiled algorithm, gatherv and scatterv, 4 models, 2 roots: p = %i', async (p) => {
    const cases = makeCases(p, 500 + p, 2);
    expect(cases.length).toBeGreaterThan(80);
    const out = await runMpi<string[]>(p, PROGRAM, { scenario: 'cases', cases, repeats: 3 } satisfies ScheduleArgs);
    expect(out.flat()).toEqual([]);
  });

  it('schedule operations and plain ones match in posting order, without overtaking', async () => {
    const out = await runMpi<string[]>(3, PROGRAM, { scenario: 'mixed' } satisfies ScheduleArgs);
    expect(out.flat()).toEqual([]);
  });

  it('short and long messages fail as with the portable executor, through recvError when given', async () => {
    const [out] = await runMpi<string[]>(2, PROGRAM, { scenario: 'recv-error' } satisfies ScheduleArgs);
    // native (without, with recvError) then portable (the same): identical outcomes
    expect(out).toHaveLength(12);
    expect(out.slice(0, 6)).toEqual(out.slice(6));
    expect(out[0]).toBe('CommunicationError: rank 0: schedule step 0 op 0: receive from rank 1 tag 5 got 3 bytes, expected 5');
    // MPI says only that the message was longer (bytes -1)
    expect(out[1]).toBe('TruncationError: message truncated: longer than the receive buffer of 5 bytes [-1 > 5]');
    expect(out[2]).toBe('then 3,3,3,3,3');
    expect(out[3]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got 3 cause undefined');
    expect(out[4]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got undefined cause TruncationError');
    expect(out[5]).toBe('then 3,3,3,3,3');
  });

  it('startBlocking runs a persistent plan in C; start() and startBlocking() interleave; bad use is refused', async () => {
    const out = await runMpi<string[]>(3, BLOCKING, {});
    expect(out.flat()).toEqual([]);
  });

  describe('steps of concurrent streams, run in C', () => {
    it.each([2, 4])('the pipelined-ring allgatherv: uneven counts with zeros, large blocks, gaps; right, bound natively, no message through the endpoint but the handshake: p = %i', async (p) => {
      const out = await runMpi<StreamResult>(p, STREAMS, { scenario: 'ring' } satisfies StreamArgs);
      for (const r of out) {
        expect(r.problems).toEqual([]);
        expect(r.declinedStreams).toBe(0);
        // every native call with data to move has a step of streams (the case of all zeros has none)
        expect(r.nativeStreams).toBe(r.calls - 2);
        // the handshake's send and receive per call; the portable executor adds one per chunk
        expect(r.nativeMessages).toBeLessThanOrEqual(2 * r.calls);
        expect(r.portableMessages).toBeGreaterThan(r.nativeMessages + 20 * p);
      }
    });

    it('a hand-written schedule of streams (one empty, window 2, dependencies across streams and on a copy): native = portable = known, persistent, once, runBlocking, mixed: p = 3', async () => {
      const out = await runMpi<StreamResult>(3, STREAMS, { scenario: 'streams', repeats: 4 } satisfies StreamArgs);
      for (const r of out) {
        expect(r.problems).toEqual([]);
        expect(r.nativeStreams).toBe(2);
        expect(r.declinedStreams).toBe(0);
      }
    });

    it('short and long receives in a stream fail as with the portable executor, through recvError when given', async () => {
      const [r] = await runMpi<StreamResult>(2, STREAMS, { scenario: 'recv-error' } satisfies StreamArgs);
      const out = r.outcomes;
      expect(out).toHaveLength(12);
      expect(out.slice(0, 6)).toEqual(out.slice(6));
      expect(out[0]).toBe('CommunicationError: rank 0: schedule step 0 op 1: receive from rank 1 tag 5 got 3 bytes, expected 5');
      expect(out[1]).toBe('TruncationError: message truncated: longer than the receive buffer of 5 bytes [-1 > 5]');
      expect(out[2]).toBe('then 3,3,3,3,3');
      expect(out[3]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got 3 cause undefined');
      expect(out[4]).toBe('CommunicationError: custom: peer 1 tag 5 expected 5 got undefined cause TruncationError');
      expect(out[5]).toBe('then 3,3,3,3,3');
    });

    it.each([
      ['start()', 'stuck', /^MPI job failed: rank 0 failed: TimeoutError: timeout after 2000 ms: rank 0 waits for recv from 1 tag 32 /],
      ['runBlocking()', 'stuck-blocking', /^MPI job failed: rank 0 failed: TimeoutError: timeout after 2000 ms: rank 0 waits inside MPI_Waitsome \(schedule receive\) \(peer 1, /],
    ] as const)('a stuck stream (%s): the watchdog names the receive the run waits for, not the step\'s first operation', async (_, scenario, message) => {
      const e = await runMpi(2, STREAMS, { scenario } satisfies StreamArgs, { opTimeoutMs: 2000 }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(CommunicationError);
      expect((e as Error).message).toMatch(message);
    }, 90_000);
  });
});
