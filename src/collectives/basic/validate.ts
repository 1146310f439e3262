/**
 * Argument checks of the building-block collectives: every failure is an InvalidArgumentError
 * naming the field and the rank that saw it.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { numericKind, type NumericArray } from './ops.js';

export { checkBytes, expectBytes } from '../bytes.js';

export function checkRoot(comm: Communicator, root: unknown): number {
  if (typeof root !== 'number' || !Number.isInteger(root) || root < 0 || root >= comm.size) {
    throw new InvalidArgumentError('root', `${String(root)} outside [0, ${comm.size - 1}]`, { rank: comm.rank });
  }
  return root;
}


export function checkNumeric<T extends NumericArray>(comm: Communicator, field: string, x: unknown): T {
  if (numericKind(x) === undefined) {
    throw new InvalidArgumentError(field, 'must be a numeric typed array (Float64Array, Int32Array, BigInt64Array, …)', {
      rank: comm.rank,
    });
  }
  return x as T;
}

/** `x` must be an array of the same element type and length as `like`. */
export function checkSameShape<T extends NumericArray>(comm: Communicator, field: string, x: unknown, like: T, likeField: string): T {
  const kind = numericKind(x);
  const want = numericKind(like);
  if (kind !== want) {
    throw new InvalidArgumentError(field, `must be a ${want} like ${likeField}, got ${kind ?? typeof x}`, { rank: comm.rank });
  }
  if ((x as T).length !== like.length) {
    throw new InvalidArgumentError(field, `has ${(x as T).length} elements, ${likeField} has ${like.length}`, { rank: comm.rank });
  }
  return x as T;
}

