/** Boundary validation helpers shared by models, distributions and tree builders. */
import { InvalidArgumentError } from '../errors.js';

export function requireNonNegativeFinite(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidArgumentError(field, `must be a finite number, got ${String(v)}`);
  if (v < 0) throw new InvalidArgumentError(field, `must be >= 0, got ${v}`);
  return v;
}

export function requireInteger(field: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new InvalidArgumentError(field, `must be an integer, got ${String(v)}`);
  if (v < min || v > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new InvalidArgumentError(field, `must be ${range}, got ${v}`);
  }
  return v;
}

/** Block sizes: a non-empty array of non-negative safe integers (elements). */
export function validateSizes(sizes: ArrayLike<number>, field = 'sizes'): Float64Array {
  if (sizes === null || typeof sizes !== 'object' || typeof sizes.length !== 'number') {
    throw new InvalidArgumentError(field, 'must be an array of block sizes');
  }
  if (sizes.length < 1) throw new InvalidArgumentError(field, 'must have at least one block (p >= 1)');
  const out = new Float64Array(sizes.length);
  for (let i = 0; i < sizes.length; i++) {
    const v = sizes[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidArgumentError(`${field}[${i}]`, `must be a finite number, got ${String(v)}`);
    if (!Number.isInteger(v)) throw new InvalidArgumentError(`${field}[${i}]`, `must be an integer element count, got ${v}`);
    if (v < 0) throw new InvalidArgumentError(`${field}[${i}]`, `must be >= 0, got ${v}`);
    out[i] = v;
  }
  return out;
}

export function validateRoot(root: unknown, p: number, field = 'root'): number {
  return requireInteger(field, root, 0, p - 1);
}
