/**
 * Errors of a worker-threads run keep their type across the thread boundary: a rank's typed
 * error becomes the `cause` of the run's CommunicationError (class, code, field, rank, message
 * and class-specific fields kept), with the top-level shape `runSim` gives for the same program;
 * arguments that cannot be sent to the workers are an InvalidArgumentError before any worker starts.
 */
import { describe, expect, it } from 'vitest';
import { CommunicationError, InvalidArgumentError, TooLargeError, TruncationError, VcollError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/run.js';
import { runThreads } from '../src/transports/threads/run.js';
import errorsProgram, { type ErrorArgs } from './programs/threads-errors-program.js';

const PROGRAM = new URL('./programs/threads-errors-program.ts', import.meta.url);
const MODEL = linearModel({ alpha: 1, beta: 0.01 });

const caught = (pr: Promise<unknown>): Promise<unknown> =>
  pr.then(
    () => undefined,
    (e: unknown) => e,
  );

async function both(p: number, args: ErrorArgs): Promise<{ threads: CommunicationError; sim: CommunicationError }> {
  const [threads, sim] = await Promise.all([
    caught(runThreads(p, PROGRAM, args, { failureGraceMs: 5000 })),
    caught(runSim(p, (comm) => errorsProgram(comm, args), { model: MODEL })),
  ]);
  expect(threads).toBeInstanceOf(CommunicationError);
  expect(sim).toBeInstanceOf(CommunicationError);
  return { threads: threads as CommunicationError, sim: sim as CommunicationError };
}

describe('runThreads keeps the failing rank’s error as `cause`, as runSim does', () => {
  it('an InvalidArgumentError of rank 1 (a send to a rank that does not exist)', async () => {
    const { threads, sim } = await both(3, { scenario: 'bad-dest' });
    const cause = threads.cause;
    expect(cause).toBeInstanceOf(InvalidArgumentError);
    expect(cause).toBeInstanceOf(VcollError);
    const c = cause as InvalidArgumentError;
    const s = sim.cause as InvalidArgumentError;
    expect(c.name).toBe('InvalidArgumentError');
    expect(c.code).toBe('INVALID_ARGUMENT');
    expect(c.field).toBe('dest');
    expect(c.rank).toBe(1);
    expect({ name: c.name, code: c.code, field: c.field, detail: c.detail, rank: c.rank, message: c.message }).toEqual({
      name: s.name,
      code: s.code,
      field: s.field,
      detail: s.detail,
      rank: s.rank,
      message: s.message,
    });
    expect(typeof c.stack).toBe('string');
    // The same top-level shape.
    expect(threads.constructor).toBe(sim.constructor);
    expect(threads.code).toBe(sim.code);
    expect(threads.rank).toBe(1);
    expect(threads.message).toBe(sim.message);
  }, 30_000);

  it('a TruncationError keeps its bytes and capacity; a TooLargeError its field; a plain Error its class name', async () => {
    const trunc = await both(3, { scenario: 'truncated' });
    expect(trunc.threads.rank).toBe(1);
    expect(trunc.threads.cause).toBeInstanceOf(TruncationError);
    expect(trunc.threads.cause).toMatchObject({ bytes: 10, capacity: 4, code: 'COMMUNICATION', name: 'TruncationError' });
    expect((trunc.threads.cause as Error).message).toMatch(/message of 10 bytes from rank 0 .*receive buffer of 4 bytes/);
    expect((trunc.threads.cause as TruncationError).rank).toBe((trunc.sim.cause as TruncationError).rank);

    const large = await both(3, { scenario: 'too-large' });
    expect(large.threads.rank).toBe(2);
    expect(large.threads.cause).toBeInstanceOf(TooLargeError);
    expect(large.threads.cause).toMatchObject({ field: 'p', code: 'TOO_LARGE', message: 'p too large: at most 4, got 5' });
    expect(large.threads.message).toBe(large.sim.message);

    const plain = await both(2, { scenario: 'plain' });
    expect(plain.threads.cause).toBeInstanceOf(Error);
    expect(plain.threads.cause).toBeInstanceOf(RangeError);
    expect((plain.threads.cause as Error).message).toBe('plain failure');
    expect(plain.threads.message).toBe(plain.sim.message);
  }, 60_000);
});

describe('runThreads: arguments that cannot be sent to the workers', () => {
  it('a function inside args is an InvalidArgumentError naming where it is, before any worker starts', async () => {
    const args = { scenario: 'plain', nested: [1, { cb: () => 1 }] };
    const e = await caught(runThreads(2, PROGRAM, args));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).field).toBe('args');
    expect((e as Error).message).toMatch(/args\.nested\[1\]\.cb/);
    expect((e as Error).message).toMatch(/function/);
    // A symbol, at the top level.
    const s = await caught(runThreads(2, PROGRAM, Symbol('x')));
    expect(s).toBeInstanceOf(InvalidArgumentError);
    expect((s as InvalidArgumentError).field).toBe('args');
  });
});
