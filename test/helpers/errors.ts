/** Expect typed errors: thrown argument errors (returning the field they name) and rejections. */
import { expect } from 'vitest';
import { CommunicationError, InvalidArgumentError, TooLargeError } from '../../src/errors.js';

/** `f` must throw an InvalidArgumentError; returns its `field`. */
export function invalidField(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return (e as InvalidArgumentError).field;
  }
  throw new Error('no error thrown');
}

/** `f` must throw an InvalidArgumentError or a TooLargeError; returns its `field`. */
export function errorField(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof InvalidArgumentError || e instanceof TooLargeError) return e.field;
    throw e;
  }
  throw new Error('no error thrown');
}

/** `p` must reject; resolves with what it rejected with. */
export async function rejection(p: PromiseLike<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** `e` must be a deadlock report (CommunicationError) with every line of `blocked` and none of `absent`. */
export function expectDeadlock(e: unknown, blocked: readonly string[], absent: readonly string[]): void {
  expect(e).toBeInstanceOf(CommunicationError);
  const msg = (e as Error).message;
  expect(msg).toMatch(/deadlock/);
  for (const line of blocked) expect(msg).toContain(line);
  for (const text of absent) expect(msg).not.toContain(text);
}
