/**
 * Argument validation of allgather / allgatherv, done once at the public boundary: turns the
 * caller's arguments into the AllgathervInput of types.ts (byte lengths and byte offsets of
 * every rank's block), or throws an InvalidArgumentError naming the field and this rank.
 *
 * Every rank checks what it can see: its buffers, unitBytes, counts and displs (the same
 * arrays on every rank, as in MPI_Allgatherv, so a bad entry fails on every rank that holds
 * it), the options, and its own block against counts[rank]. What no rank can see locally (a
 * rank whose counts or, for allgather, whose m differs from the others') is caught by the
 * algorithms' handshake (handshake.ts): a rank whose right neighbour's fingerprint of the sizes
 * differs throws, so the run fails instead of hanging or misplacing data.
 *
 * The layouts are shared read-only between calls that pass the same frozen counts (and
 * regular layouts between calls of the same p and m): shared-layout.ts.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { checkBytes } from '../bytes.js';
import { regularLayout, sharedBlockLayout } from './shared-layout.js';
import type { AllgatherArgs, AllgatherOptions, AllgathervArgs, AllgathervInput, AllgathervOptions } from './types.js';
import { ALLGATHER_ALGORITHMS, ALLGATHERV_ALGORITHMS, type AllgatherAlgorithm, type AllgathervAlgorithm } from './variants.js';

function fail(rank: number | undefined, field: string, message: string): never {
  throw new InvalidArgumentError(field, message, rank === undefined ? undefined : { rank });
}

function checkComm(comm: Communicator): void {
  if (comm === null || typeof comm !== 'object') fail(undefined, 'comm', 'must be a Communicator');
  const { rank, size } = comm;
  if (!Number.isInteger(size) || size < 1 || !Number.isInteger(rank) || rank < 0 || rank >= size) {
    fail(undefined, 'comm', `must have an integer size >= 1 and a rank in [0, size), got rank ${String(rank)} of ${String(size)}`);
  }
}

function checkArgsObject(me: number, args: unknown): void {
  if (args === null || typeof args !== 'object') fail(me, 'args', 'must be an object');
}

/** The communicator, the args object and its two buffers checked (every allgather(v) call). */
function buffersOf(comm: Communicator, args: AllgatherArgs | AllgathervArgs): { me: number; p: number; send: Uint8Array; recv: Uint8Array } {
  checkComm(comm);
  const me = comm.rank;
  checkArgsObject(me, args);
  return { me, p: comm.size, send: checkBytes(comm, 'send', args.send), recv: checkBytes(comm, 'recv', args.recv) };
}

function algorithmOf<A extends string>(me: number, options: unknown, allowed: readonly A[]): A {
  if (options === undefined) return 'auto' as A;
  if (options === null || typeof options !== 'object') fail(me, 'options', 'must be an object');
  const a: unknown = (options as { algorithm?: unknown }).algorithm ?? 'auto';
  if (typeof a !== 'string' || !(allowed as readonly string[]).includes(a)) {
    fail(me, 'algorithm', `must be one of ${allowed.join(', ')}, got ${String(a)}`);
  }
  return a as A;
}

/**
 * The block layout of a regular allgather (block i of m bytes at i·m), with this rank's
 * buffers checked: send and recv Uint8Arrays, recv exactly p·m bytes (field 'recv').
 * Shared by allgather and the building block basic/allgather.ts.
 */
export function allgatherInput(comm: Communicator, args: AllgatherArgs): AllgathervInput {
  const { me, p, send, recv } = buffersOf(comm, args);
  const m = send.length;
  if (recv.length !== p * m) fail(me, 'recv', `holds ${recv.length} bytes, p·m = ${p}·${m} = ${p * m} needed`);
  const { bytes, offsets } = regularLayout(p, m);
  return { comm, send, recv, bytes, offsets, sizesField: 'send' };
}

/** Validates allgather arguments on one rank. */
export function normalizeAllgather(
  comm: Communicator,
  args: AllgatherArgs,
  options?: AllgatherOptions,
): { readonly input: AllgathervInput; readonly algorithm: AllgatherAlgorithm } {
  const input = allgatherInput(comm, args);
  return { input, algorithm: algorithmOf(comm.rank, options, ALLGATHER_ALGORITHMS) };
}

/**
 * Validates allgatherv arguments on one rank: counts[i] and displs[i] integers in
 * [0, MAX_ELEMENTS], every non-empty block inside recv, no two non-empty blocks overlapping,
 * send exactly counts[rank]·unitBytes bytes.
 */
export function normalizeAllgatherv(
  comm: Communicator,
  args: AllgathervArgs,
  options?: AllgathervOptions,
): { readonly input: AllgathervInput; readonly algorithm: AllgathervAlgorithm } {
  const { me, p, send, recv } = buffersOf(comm, args);
  const unitArg: unknown = args.unitBytes ?? 1;
  if (typeof unitArg !== 'number' || !Number.isInteger(unitArg) || unitArg < 1) {
    fail(me, 'unitBytes', `must be an integer >= 1, got ${String(unitArg)}`);
  }
  const unit = unitArg;
  const algorithm = algorithmOf(me, options, ALLGATHERV_ALGORITHMS);
  const { counts, bytes, offsets } = sharedBlockLayout(me, p, args.counts, args.displs, unit, recv.length, 'recv', 'must be an array with one entry per rank');
  if (send.length !== counts[me] * unit) {
    fail(me, 'send', `holds ${send.length} bytes, counts[${me}]·unitBytes = ${counts[me]}·${unit} = ${counts[me] * unit} expected`);
  }
  return { input: { comm, send, recv, bytes, offsets }, algorithm };
}
