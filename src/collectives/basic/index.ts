/** The building-block collectives (regular, MPI semantics) every transport runs unchanged. */
export { barrier } from './barrier.js';
export { BASIC_ALGORITHMS, type BasicAlgorithm, type BasicOptions } from './algorithm.js';
export { bcast, type BcastAlgorithm, type BcastOptions } from './bcast.js';
export { reduce, type ReduceArgs } from './reduce.js';
export { allreduce, type AllreduceArgs } from './allreduce.js';
export { exscan, type ExscanArgs } from './exscan.js';
export { gather, type GatherArgs } from './gather.js';
export { scatter, type ScatterArgs } from './scatter.js';
export { basicAllgather, type BasicAllgatherArgs } from './allgather.js';
export { BUILTIN_OPS, type BuiltinOp, type CombineFn, type NumericArray, type ReduceOp } from './ops.js';
export { orderedBinomialRole, type Subtree, type TreeRole } from './tree.js';
export { BASIC_TAG, BASIC_TAG_FIRST, BASIC_TAG_LAST } from '../../comm/tags.js';
