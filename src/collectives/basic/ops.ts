/**
 * Reduction operators of reduce, allreduce and exscan, on numeric typed arrays.
 *
 * Every operator works in place, `combine(a, b)`: a[i] := a[i] ⊕ b[i], where a holds the
 * partial result of the LOWER-ranked processes. The collectives only ever combine adjacent
 * rank ranges, lower range on the left, so an associative but non-commutative user operator
 * gives the rank-order result x₀ ⊕ x₁ ⊕ … ⊕ x_{p−1} (MPI's guarantee for non-commutative ops).
 *
 * Built-ins: 'sum' | 'prod' | 'min' | 'max' on every element type; 'band' | 'bor' | 'bxor' on
 * integer arrays only. Integer arithmetic wraps like the element type (prod of 32-bit
 * integers with Math.imul, exact); Uint8ClampedArray saturates; min/max follow Math.min/max
 * (NaN wins). The combining work is local computation: the simulator does not charge it.
 */
import { InvalidArgumentError } from '../../errors.js';

export type NumericArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

export type BuiltinOp = 'sum' | 'prod' | 'min' | 'max' | 'band' | 'bor' | 'bxor';
export const BUILTIN_OPS: readonly BuiltinOp[] = ['sum', 'prod', 'min', 'max', 'band', 'bor', 'bxor'];

/** A user operator: a := a ⊕ b in place, a being the lower-ranked partial result. Must be associative. */
export type CombineFn<T extends NumericArray> = (a: T, b: T) => void;
export type ReduceOp<T extends NumericArray> = BuiltinOp | CombineFn<T>;

const NUMERIC_TAGS = new Set([
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
]);

/** The element type's name ('Float64Array', …), or undefined if `x` is no numeric typed array (works across realms). */
export function numericKind(x: unknown): string | undefined {
  if (!ArrayBuffer.isView(x) || x instanceof DataView) return undefined;
  const tag = (x as unknown as { [Symbol.toStringTag]: unknown })[Symbol.toStringTag];
  return typeof tag === 'string' && NUMERIC_TAGS.has(tag) ? tag : undefined;
}

/** A zeroed array of `like`'s type with n elements. */
export function allocLike<T extends NumericArray>(like: T, n: number): T {
  return new (like.constructor as new (length: number) => T)(n);
}

type NumberArray = Exclude<NumericArray, BigInt64Array | BigUint64Array>;
type BigArray = BigInt64Array | BigUint64Array;

const numberOps: Record<BuiltinOp, (a: NumberArray, b: NumberArray) => void> = {
  sum: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] += b[i];
  },
  prod: (a, b) => {
    if (a instanceof Int32Array || a instanceof Uint32Array) {
      for (let i = 0; i < a.length; i++) a[i] = Math.imul(a[i], b[i]);
    } else {
      for (let i = 0; i < a.length; i++) a[i] *= b[i];
    }
  },
  min: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] = Math.min(a[i], b[i]);
  },
  max: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] = Math.max(a[i], b[i]);
  },
  band: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] &= b[i];
  },
  bor: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] |= b[i];
  },
  bxor: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] ^= b[i];
  },
};

const bigOps: Record<BuiltinOp, (a: BigArray, b: BigArray) => void> = {
  sum: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] += b[i];
  },
  prod: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] *= b[i];
  },
  min: (a, b) => {
    for (let i = 0; i < a.length; i++) if (b[i] < a[i]) a[i] = b[i];
  },
  max: (a, b) => {
    for (let i = 0; i < a.length; i++) if (b[i] > a[i]) a[i] = b[i];
  },
  band: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] &= b[i];
  },
  bor: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] |= b[i];
  },
  bxor: (a, b) => {
    for (let i = 0; i < a.length; i++) a[i] ^= b[i];
  },
};

/**
 * The combining function of `op` for arrays like `like`; InvalidArgumentError('op') for an
 * unknown operator or a bitwise one on a floating-point array.
 */
export function resolveOp<T extends NumericArray>(op: unknown, like: T, rank: number): CombineFn<T> {
  if (typeof op === 'function') return op as CombineFn<T>;
  if (typeof op !== 'string' || !(BUILTIN_OPS as readonly string[]).includes(op)) {
    throw new InvalidArgumentError('op', `must be one of ${BUILTIN_OPS.join(', ')} or a function (a, b) => void, got ${String(op)}`, {
      rank,
    });
  }
  const name = op as BuiltinOp;
  const kind = numericKind(like);
  if ((kind === 'Float32Array' || kind === 'Float64Array') && (name === 'band' || name === 'bor' || name === 'bxor')) {
    throw new InvalidArgumentError('op', `'${name}' is a bitwise operator, not defined on ${kind}`, { rank });
  }
  if (kind === 'BigInt64Array' || kind === 'BigUint64Array') return bigOps[name] as unknown as CombineFn<T>;
  return numberOps[name] as unknown as CombineFn<T>;
}
