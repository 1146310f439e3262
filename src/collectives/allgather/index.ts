/**
 * allgather / allgatherv: the public entries (MPI_Allgather / MPI_Allgatherv semantics,
 * types.ts). Validate the arguments once (args.ts), then run the requested algorithm's
 * variant, or the one `auto` picks. Every rank must pass the same algorithm.
 *
 * `auto` (Thakur, Rabenseifner and Gropp 2005 §4.1, MPICH's allgather rule; the total is the
 * same on every rank): total bytes < AUTO_SHORT_BYTES → bruck (⌈log₂p⌉ rounds; for p = 2^k
 * allgather takes recursive doubling, the same rounds without the rotation copy); for
 * allgather with p = 2^k and total < AUTO_MEDIUM_BYTES → recursive doubling; else ring
 * (bandwidth-optimal, nearest-neighbour). For allgatherv the rule looks at the total only.
 */
import type { Communicator } from '../../comm/communicator.js';
import { VcollError } from '../../errors.js';
import { normalizeAllgather, normalizeAllgatherv } from './args.js';
import { BRUCK_ALLGATHER } from './bruck.js';
import { RECURSIVE_DOUBLING_ALLGATHER } from './recursive-doubling.js';
import { RING_ALLGATHER } from './ring.js';
import type {
  AllgatherAlgorithm,
  AllgatherArgs,
  AllgatherOptions,
  AllgathervAlgorithm,
  AllgathervArgs,
  AllgathervInput,
  AllgathervOptions,
  AllgathervVariant,
} from './types.js';

export * from './types.js';
export { allgatherInput, normalizeAllgather, normalizeAllgatherv } from './args.js';
export { ringAllgatherv } from './ring.js';
export { recursiveDoublingAllgatherv } from './recursive-doubling.js';
export { bruckAllgatherv } from './bruck.js';

/** The allgather algorithms (equal blocks). */
export const ALLGATHER_VARIANTS: readonly AllgathervVariant[] = [RING_ALLGATHER, RECURSIVE_DOUBLING_ALLGATHER, BRUCK_ALLGATHER];
/** The allgatherv algorithms (any blocks). */
export const ALLGATHERV_VARIANTS: readonly AllgathervVariant[] = [RING_ALLGATHER, BRUCK_ALLGATHER];

/** Below this total (bytes, all blocks), `auto` takes a logarithmic algorithm (MPICH: 80 KiB). */
export const AUTO_SHORT_BYTES = 80 * 1024;
/** allgather, p = 2^k: below this total `auto` takes recursive doubling (MPICH: 512 KiB). */
export const AUTO_MEDIUM_BYTES = 512 * 1024;

function total(input: AllgathervInput): number {
  let n = 0;
  for (const b of input.bytes) n += b;
  return n;
}

/** What `auto` runs for allgather. */
export function chooseAllgather(input: AllgathervInput): Exclude<AllgatherAlgorithm, 'auto'> {
  const p = input.comm.size;
  const t = total(input);
  const pof2 = (p & (p - 1)) === 0;
  if (pof2 && t < AUTO_MEDIUM_BYTES) return 'recursive-doubling';
  return t < AUTO_SHORT_BYTES ? 'bruck' : 'ring';
}

/** What `auto` runs for allgatherv. */
export function chooseAllgatherv(input: AllgathervInput): Exclude<AllgathervAlgorithm, 'auto'> {
  return total(input) < AUTO_SHORT_BYTES ? 'bruck' : 'ring';
}

function variant(table: readonly AllgathervVariant[], name: string): AllgathervVariant {
  const v = table.find((x) => x.name === name);
  if (v === undefined) throw new VcollError('INTERNAL', `no allgather variant ${name}`);
  return v;
}

/** Every rank's block of m bytes (the same m everywhere) into every rank's recv at rank·m. */
export async function allgather(comm: Communicator, args: AllgatherArgs, options?: AllgatherOptions): Promise<void> {
  const { input, algorithm } = normalizeAllgather(comm, args, options);
  const name = algorithm === 'auto' ? chooseAllgather(input) : algorithm;
  await variant(ALLGATHER_VARIANTS, name).run(input);
}

/** Every rank's block of counts[rank]·unitBytes bytes into every rank's recv at displs[rank]·unitBytes. */
export async function allgatherv(comm: Communicator, args: AllgathervArgs, options?: AllgathervOptions): Promise<void> {
  const { input, algorithm } = normalizeAllgatherv(comm, args, options);
  const name = algorithm === 'auto' ? chooseAllgatherv(input) : algorithm;
  await variant(ALLGATHERV_VARIANTS, name).run(input);
}
