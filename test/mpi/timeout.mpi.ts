/**
 * No hang under MPI: the watchdog (mpiWorld's per-operation timeout, runMpi's `opTimeoutMs`)
 * ends a deadlocked job at -np 3 within a bounded time with a message naming the ranks and
 * what they wait for — a receive nobody sends, ranks disagreeing on the root of a gatherv, a
 * rank stuck in a JS loop, a rank waiting inside MPI (MPI_Recv of mpiBlocking, the library's
 * barrier: the binding's watchdog thread), a rank stuck while the others have finished (the
 * finalize handshake) — and a rank that calls process.exit is named. The job-level kill
 * (`timeoutMs`, 5 minutes by default) is set far above what the tests allow (vitest timeouts):
 * only the watchdog can end these jobs in time.
 */
import { describe, expect, it } from 'vitest';
import { CommunicationError } from '../../src/errors.js';
import { runMpi } from '../../src/transports/mpi/run.js';
import type { TimeoutArgs } from '../programs/timeout-program.js';

const PROGRAM = new URL('../programs/timeout-program.ts', import.meta.url);
const WATCHDOG_MS = 2000;

async function failure(args: TimeoutArgs, opTimeoutMs?: number): Promise<{ error: CommunicationError; ms: number }> {
  const t0 = performance.now();
  const e = await runMpi(3, PROGRAM, args, { opTimeoutMs, timeoutMs: 600_000 }).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(CommunicationError);
  return { error: e as CommunicationError, ms: performance.now() - t0 };
}

describe('MPI: deadlocks and stuck ranks end the job, naming the ranks', () => {
  it('a receive nobody sends', async () => {
    const { error } = await failure({ scenario: 'recv-nobody' }, WATCHDOG_MS);
    expect(error.rank).toBe(0);
    expect(error.message).toMatch(/^MPI job failed: rank 0 failed: TimeoutError: timeout after 2000 ms: rank 0 waits for recv from 1 tag 7 \(context 0\)/);
  }, 90_000);

  it('ranks disagreeing on the root', async () => {
    const { error } = await failure({ scenario: 'root-disagree' }, WATCHDOG_MS);
    expect([0, 1]).toContain(error.rank);
    expect(error.message).toMatch(/^MPI job failed: rank [01] failed: .*timeout after 2000 ms: rank [01] waits for recv from [012] tag \d+ \(context 1\)/);
  }, 90_000);

  it('a rank in a JS loop: its peers time out', async () => {
    const { error } = await failure({ scenario: 'busy-loop', busyMs: 600_000 }, WATCHDOG_MS);
    expect([0, 1]).toContain(error.rank);
    expect(error.message).toMatch(/^MPI job failed: rank [01] failed: TimeoutError: timeout after 2000 ms: rank [01] waits for recv from 2 tag 9 \(context 0\)/);
  }, 90_000);

  it('a rank waiting inside MPI_Recv (mpiBlocking): the watchdog thread of the binding ends it', async () => {
    const { error } = await failure({ scenario: 'blocking-recv' }, WATCHDOG_MS);
    expect(error.rank).toBe(0);
    expect(error.message).toMatch(/^MPI job failed: rank 0 failed: TimeoutError: timeout after 2000 ms: rank 0 waits inside MPI_Recv \(peer 1, MPI tag 7;/);
  }, 90_000);

  it('a rank alone in the barrier of the MPI library: the watchdog thread ends it', async () => {
    const { error } = await failure({ scenario: 'native-barrier' }, WATCHDOG_MS);
    expect(error.rank).toBe(0);
    expect(error.message).toMatch(/^MPI job failed: rank 0 failed: TimeoutError: timeout after 2000 ms: rank 0 waits inside MPI_Barrier/);
  }, 90_000);

  it('a rank that caught the TimeoutError of a send whose receive never comes does not hold MPI_Finalize', async () => {
    const { error } = await failure({ scenario: 'send-nobody', catch: true }, WATCHDOG_MS);
    expect(error.rank).toBe(0);
    expect(error.message).toMatch(/^MPI job failed: rank 0 failed: TimeoutError: timeout after 2000 ms: rank 0 waits for 1 send\(s\) still pending before MPI_Finalize/);
  }, 90_000);

  it('a rank stuck after the others returned (the root of a reduce whose data arrived): rank 0 names it at finalize', async () => {
    const { error, ms } = await failure({ scenario: 'stuck-after-reduce' }, WATCHDOG_MS);
    expect(error.rank).toBe(2);
    expect(error.message).toMatch(/^MPI job failed: rank 2 failed: did not reach MPI_Finalize within 6000 ms \(missing: rank 2; seen by rank 0\) — stuck or still running/);
    // A hang guard, not a speed test: the job-level kill is 10 minutes away.
    expect(ms).toBeLessThan(60_000);
  }, 90_000);

  it('rank 0 (the handshake\'s collector) stuck while the others returned: they name it', async () => {
    const { error, ms } = await failure({ scenario: 'stuck-zero' }, WATCHDOG_MS);
    expect(error.rank).toBe(0);
    expect(error.message).toMatch(/^MPI job failed: rank 0 failed: did not reach MPI_Finalize within 6000 ms \(missing: rank 0; seen by rank [12]\) — stuck or still running/);
    expect(ms).toBeLessThan(60_000);
  }, 90_000);

  it('the watchdog is on by default (VCOLL_MPI_TIMEOUT_MS sets it)', async () => {
    const old = process.env.VCOLL_MPI_TIMEOUT_MS;
    process.env.VCOLL_MPI_TIMEOUT_MS = '1500';
    try {
      const { error } = await failure({ scenario: 'recv-nobody' });
      expect(error.message).toMatch(/timeout after 1500 ms: rank 0 waits for recv from 1 tag 7/);
    } finally {
      if (old === undefined) delete process.env.VCOLL_MPI_TIMEOUT_MS;
      else process.env.VCOLL_MPI_TIMEOUT_MS = old;
    }
  }, 90_000);

  it('a correct exchange under a watchdog completes with the right data', async () => {
    // 10 s, not 2 s: the ranks may start seconds apart on a loaded machine (tsx compiles each).
    const results = await runMpi<number>(3, PROGRAM, { scenario: 'pingpong', count: 3000 } satisfies TimeoutArgs, { opTimeoutMs: 10_000 });
    let sum = 0;
    for (let i = 0; i < 3000; i++) sum += i & 255;
    expect(results).toEqual([sum, 0, 0]);
  }, 120_000);

  it('a rank that calls process.exit is named', async () => {
    const { error } = await failure({ scenario: 'exit' }, 60_000);
    expect(error.rank).toBe(1);
    expect(error.message).toMatch(/^MPI job failed: rank 1 failed: exited with code 3 before MPI_Finalize/);
  }, 90_000);
});
