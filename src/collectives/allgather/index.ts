/**
 * allgather / allgatherv: the public entries (MPI_Allgather / MPI_Allgatherv semantics,
 * types.ts). Validate the arguments once (args.ts), then run the requested algorithm's
 * variant (the table: variants.ts), or the one `auto` picks. Every rank must pass the same
 * algorithm and sizes; every algorithm starts with a handshake that fails the run (typed error,
 * no hang) otherwise.
 *
 * `auto` (after Thakur, Rabenseifner and Gropp 2005 §4.1, MPICH's allgather rule; a function
 * of p and the sizes, which the handshake — handshake.ts — checks are the same on every rank):
 * total bytes < AUTO_SHORT_BYTES → bruck (⌈log₂p⌉ rounds; MPICH takes recursive doubling for
 * p = 2^k here, the same rounds without the rotation copy, but ours pays the handshake's extra
 * α while Bruck's handshake rides on its first message); for allgather with p = 2^k and total
 * < AUTO_MEDIUM_BYTES → recursive doubling; else ring (bandwidth-optimal, nearest-neighbour). For allgatherv: bruck below AUTO_SHORT_BYTES; above, the
 * pipelined ring (Träff et al. 2010) when the blocks are so uneven that the ring's waste
 * exceeds total/AUTO_PIPELINE_WASTE (chooseAllgatherv), else ring.
 */
import type { Communicator } from '../../comm/communicator.js';
import { VcollError } from '../../errors.js';
import { beginCall } from '../call-scope.js';
import { normalizeAllgather, normalizeAllgatherv } from './args.js';
import { sizeFacts } from './shared-layout.js';
import type { AllgatherArgs, AllgatherOptions, AllgathervArgs, AllgathervInput, AllgathervOptions, AllgathervVariant } from './types.js';
import {
  ALLGATHER_VARIANTS,
  ALLGATHERV_VARIANTS,
  allgatherRow,
  checkAllgatherRestrictions,
  type AllgatherAlgorithm,
  type AllgathervAlgorithm,
} from './variants.js';

export * from './types.js';
export {
  ALLGATHER_ALGORITHMS,
  ALLGATHER_VARIANT_ROWS,
  ALLGATHER_VARIANTS,
  ALLGATHERV_ALGORITHMS,
  ALLGATHERV_VARIANTS,
  allgatherRow,
  type AllgatherOp,
  type AllgatherRestriction,
  type AllgatherVariantName,
  type AllgatherVariantRow,
} from './variants.js';
export { allgatherInput, normalizeAllgather, normalizeAllgatherv } from './args.js';
export { ringAllgatherv, ringSchedule } from './ring.js';
export { recursiveDoublingAllgatherv, recursiveDoublingSchedule } from './recursive-doubling.js';
export { bruckAllgatherv, bruckSchedule } from './bruck.js';
export { chunkBytes, PIPELINE_CHUNKS_PER_RANK, pipelinedRingAllgatherv } from './pipelined-ring.js';
export {
  COMPILED_ALLGATHER_ALGORITHMS,
  compileAllgatherRankSchedule,
  compileAllgatherSchedule,
  recvCapacity,
  type AllgatherRankDescription,
  type CompileAllgatherOptions,
  type CompiledAllgatherAlgorithm,
} from './schedule.js';

/** Below this total (bytes, all blocks), `auto` takes a logarithmic algorithm (MPICH: 80 KiB). */
export const AUTO_SHORT_BYTES = 80 * 1024;
/** allgather, p = 2^k: below this total `auto` takes recursive doubling (MPICH: 512 KiB). */
export const AUTO_MEDIUM_BYTES = 512 * 1024;

/** allgatherv: the pipelined ring when the ring would waste more than total/this bytes' time. */
export const AUTO_PIPELINE_WASTE = 16;

/** All blocks' bytes (O(1) per rank for the shared, frozen layouts: shared-layout.ts). */
function total(input: AllgathervInput): number {
  return sizeFacts(input.bytes).total;
}

/** What `auto` runs for allgather. */
export function chooseAllgather(input: AllgathervInput): Exclude<AllgatherAlgorithm, 'auto'> {
  const p = input.comm.size;
  const t = total(input);
  if (t < AUTO_SHORT_BYTES) return 'bruck';
  const pof2 = (p & (p - 1)) === 0;
  return pof2 && t < AUTO_MEDIUM_BYTES ? 'recursive-doubling' : 'ring';
}

/**
 * What `auto` runs for allgatherv (a function of the counts only, so every rank agrees):
 * total < AUTO_SHORT_BYTES → bruck; else the pipelined ring when the plain ring's bandwidth
 * waste, (p−1)·max m − (total − min m) (it pays the largest block every step), exceeds
 * total/AUTO_PIPELINE_WASTE — more than the pipeline's own overhead (≈ 5p start-ups instead of
 * p − 1, chunk rounding); else ring.
 */
export function chooseAllgatherv(input: AllgathervInput): Exclude<AllgathervAlgorithm, 'auto'> {
  const t = total(input);
  if (t < AUTO_SHORT_BYTES) return 'bruck';
  const p = input.bytes.length;
  const { max, min } = sizeFacts(input.bytes);
  return (p - 1) * max - (t - min) > t / AUTO_PIPELINE_WASTE ? 'pipelined-ring' : 'ring';
}

/** The variant `name` of `table`, its restrictions checked (every rank, before it runs). */
function variant(table: readonly AllgathervVariant[], name: string, input: AllgathervInput): AllgathervVariant {
  const v = table.find((x) => x.name === name);
  const row = allgatherRow(name);
  if (v === undefined || row === undefined) throw new VcollError('INTERNAL', `no allgather variant ${name}`);
  checkAllgatherRestrictions(row, input);
  return v;
}

/** Every rank's block of m bytes (the same m everywhere) into every rank's recv at rank·m. */
export async function allgather(comm: Communicator, args: AllgatherArgs, options?: AllgatherOptions): Promise<void> {
  comm = beginCall(comm);
  const { input, algorithm } = normalizeAllgather(comm, args, options);
  const name = algorithm === 'auto' ? chooseAllgather(input) : algorithm;
  await variant(ALLGATHER_VARIANTS, name, input).run(input);
}

/** Every rank's block of counts[rank]·unitBytes bytes into every rank's recv at displs[rank]·unitBytes. */
export async function allgatherv(comm: Communicator, args: AllgathervArgs, options?: AllgathervOptions): Promise<void> {
  comm = beginCall(comm);
  const { input, algorithm } = normalizeAllgatherv(comm, args, options);
  const name = algorithm === 'auto' ? chooseAllgatherv(input) : algorithm;
  await variant(ALLGATHERV_VARIANTS, name, input).run(input);
}
