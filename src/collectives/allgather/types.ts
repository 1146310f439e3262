/**
 * The public shapes of the intragroup allgather / allgatherv collectives (MPI semantics) and
 * the contract their algorithm files implement (Kang19 §3 cites the algorithms). The algorithm
 * names, the lists and the variant arrays are derived from the table in variants.ts.
 *
 * allgather: every rank contributes `send` (m bytes, the same m on every rank); every rank
 * receives all blocks into `recv` (p·m bytes), block i at offset i·m.
 *
 * allgatherv: every rank contributes `send` (counts[rank]·unitBytes bytes) and knows every
 * rank's count (`counts`, elements, the same array on every rank, as in MPI_Allgatherv);
 * block i lands in `recv` at displs[i]·unitBytes (default displs: prefix sums of counts).
 *
 * Tags: COLLECTIVE_TAG + 0x400 … + 0x41f (ALLGATHER_TAGS, the 'allgather' row of comm/tags.ts);
 * one tag per algorithm, and the handshake tag every algorithm's first message uses (handshake.ts).
 */
import type { Communicator } from '../../comm/communicator.js';
import { namedTags } from '../../comm/tags.js';
import type { PaddedBlocks } from './padded.js';
import type { AllgatherAlgorithm, AllgathervAlgorithm, AllgatherVariantName } from './variants.js';

// The unions are derived from the table (variants.ts, where ALLGATHER_ALGORITHMS and
// ALLGATHERV_ALGORITHMS are: the algorithm files import ALLGATHER_TAGS from here, so this file
// imports nothing but types from the table).
export type { AllgatherAlgorithm, AllgathervAlgorithm } from './variants.js';

export interface AllgatherArgs {
  /** This rank's block: m bytes, the same m on every rank. */
  readonly send: Uint8Array;
  /** p·m bytes; block i at i·m. */
  readonly recv: Uint8Array;
}

export interface AllgatherOptions {
  /** Default 'auto'. */
  readonly algorithm?: AllgatherAlgorithm;
}

export interface AllgathervArgs {
  /** This rank's block: counts[rank]·unitBytes bytes. */
  readonly send: Uint8Array;
  readonly recv: Uint8Array;
  /** Elements of every rank (the same array on every rank). */
  readonly counts: readonly number[];
  /** Element offsets in `recv` (default: prefix sums of counts). */
  readonly displs?: readonly number[];
  /** Bytes per element (default 1). */
  readonly unitBytes?: number;
}

export interface AllgathervOptions {
  /** Default 'auto'. */
  readonly algorithm?: AllgathervAlgorithm;
}

/** Validated, normalised allgatherv input as one rank sees it (byte offsets and lengths). */
export interface AllgathervInput {
  readonly comm: Communicator;
  readonly send: Uint8Array;
  readonly recv: Uint8Array;
  /** Bytes of every rank's block. */
  readonly bytes: readonly number[];
  /** Byte offset of every rank's block in recv. */
  readonly offsets: readonly number[];
  /** The argument a rank whose sizes differ from its neighbour's is told about: 'send' (allgather's m) or 'counts' (the default). */
  readonly sizesField?: 'send' | 'counts';
  /**
   * false: skip the handshake (handshake.ts) — for internal callers whose algorithm does not
   * depend on the sizes and whose every message's length is checked (basic/allgather.ts:
   * regular blocks, the algorithm fixed by p). Default true.
   */
  readonly handshake?: boolean;
  /**
   * Regular blocks that are padded pieces (padded.ts: the scatter-allgather broadcast's): the
   * algorithm's schedule runs placed onto their data and a sink, `recv` is not used. Bruck and
   * recursive doubling only.
   */
  readonly padded?: PaddedBlocks;
}

/** One algorithm: a row of the variant table. */
export interface AllgathervVariant {
  readonly name: AllgatherVariantName;
  readonly description: string;
  /** Runs the collective (every rank calls it with the same bytes/offsets). */
  run(input: AllgathervInput): Promise<void>;
}

export const ALLGATHER_TAGS = namedTags('allgather');
