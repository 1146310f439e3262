/**
 * Which implementation a building-block collective (gather, scatter, allreduce, barrier) runs:
 * 'vcoll' (the default: vcoll's own algorithm over point-to-point, every transport) or
 * 'mpi-native' (the MPI library's MPI_Gather / MPI_Scatter / MPI_Allreduce / MPI_Barrier
 * through `comm.native`, the MPI transport only; elsewhere an UnavailableError('mpi-transport')
 * on every rank). Also maps allreduce's element types and built-in operators to the native ones.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { NativeElementType, NativeReduceOp } from '../../comm/native.js';
import { InvalidArgumentError } from '../../errors.js';
import { MPI_NATIVE, type NativeAlgorithm } from '../types.js';
import { numericKind, resolveOp, type BuiltinOp, type NumericArray } from './ops.js';

export type BasicAlgorithm = 'vcoll' | NativeAlgorithm;
export const BASIC_ALGORITHMS: readonly BasicAlgorithm[] = ['vcoll', MPI_NATIVE];

export interface BasicOptions {
  /** 'vcoll' (default): vcoll's algorithm; 'mpi-native': the MPI library's own (MPI transport only). */
  readonly algorithm?: BasicAlgorithm;
}

/** The requested algorithm (default 'vcoll'), or an InvalidArgumentError('options' / 'algorithm'). */
export function basicAlgorithm(comm: Pick<Communicator, 'rank'>, options: BasicOptions | undefined): BasicAlgorithm {
  if (options === undefined) return 'vcoll';
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'must be an object', { rank: comm.rank });
  const a: unknown = options.algorithm ?? 'vcoll';
  if (!(BASIC_ALGORITHMS as readonly unknown[]).includes(a)) {
    throw new InvalidArgumentError('algorithm', `must be one of ${BASIC_ALGORITHMS.join(', ')}, got ${String(a)}`, { rank: comm.rank });
  }
  return a as BasicAlgorithm;
}

const ELEMENT_TYPES: Readonly<Record<string, NativeElementType>> = {
  Float64Array: 'f64',
  Float32Array: 'f32',
  Int32Array: 'i32',
  Uint32Array: 'u32',
  Int16Array: 'i16',
  Uint16Array: 'u16',
  Int8Array: 'i8',
  Uint8Array: 'u8',
  BigInt64Array: 'i64',
  BigUint64Array: 'u64',
};

/** The native element type of `x`'s typed array, or InvalidArgumentError('algorithm') (e.g. Uint8ClampedArray: MPI has no saturating type). */
export function nativeElementType(x: NumericArray, rank: number): NativeElementType {
  const kind = numericKind(x) ?? typeof x;
  const t = ELEMENT_TYPES[kind];
  if (t === undefined) {
    throw new InvalidArgumentError('algorithm', `'mpi-native' has no element type for ${kind} (use algorithm 'vcoll')`, { rank });
  }
  return t;
}

/**
 * The native operator of a built-in `op` valid on arrays like `like` (resolveOp's checks:
 * unknown names, bitwise operators on floating-point arrays), or InvalidArgumentError('op')
 * for a user combine function, which runs only with algorithm 'vcoll'.
 */
export function nativeReduceOp(op: unknown, like: NumericArray, rank: number): NativeReduceOp {
  if (typeof op === 'function') {
    throw new InvalidArgumentError('op', "a combine function runs only with algorithm 'vcoll'; 'mpi-native' takes a built-in operator name", { rank });
  }
  resolveOp(op, like, rank);
  // every built-in name is a native operator (checked by the compiler: BuiltinOp ⊆ NativeReduceOp)
  return op as BuiltinOp;
}
