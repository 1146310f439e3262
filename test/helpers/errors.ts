/** Run `f`, expect a typed argument error, and return the field it names. */
import { expect } from 'vitest';
import { InvalidArgumentError, TooLargeError } from '../../src/errors.js';

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
