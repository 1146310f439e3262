/**
 * Deterministic test data of one gatherv/scatterv run: block i (rank i's block) holds
 * counts[i] elements of unitBytes bytes; byte k of block i is a fixed function of (i, k), so
 * every rank can build its own block and the reference of any other block without
 * communicating, and verification is exact, byte for byte.
 */
import { sharedBlockSizes, type DistributionName } from '../workloads/distributions.js';

/** What a case's block sizes depend on (a gatherv/scatterv case, a hierarchical rank case). */
export interface CaseSizes {
  readonly dist: DistributionName;
  readonly b: number;
  readonly rho?: number;
  readonly seed?: number;
}

const CASE_COUNTS = new WeakMap<CaseSizes, { readonly p: number; readonly counts: readonly number[] }>();

/**
 * sharedBlockSizes of case `c` for p ranks, without building its key per rank (every rank of a
 * simulation shares the case object); looked up again when `shared` holds other counts
 * (sharedBlockSizes may have made them anew since).
 */
export function caseCounts(c: CaseSizes, p: number, shared?: { readonly counts: readonly number[] }): readonly number[] {
  const x = CASE_COUNTS.get(c);
  if (x !== undefined && x.p === p && (shared === undefined || shared.counts === x.counts)) return x.counts;
  const counts = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  CASE_COUNTS.set(c, { p, counts });
  return counts;
}

/** Byte k of rank i's block. Never the same for two neighbouring ranks at one offset. */
export function patternByte(rank: number, k: number): number {
  return (rank * 151 + k * 7 + (k >>> 8) * 13 + 1) & 0xff;
}

let blocksMade = 0;

/** How many blocks blockOf has made in this process (tests count them: a simulation makes none per rank). */
export function blocksBuilt(): number {
  return blocksMade;
}

/** Rank `rank`'s block: count·unitBytes bytes of its pattern. */
export function blockOf(rank: number, count: number, unitBytes: number): Uint8Array {
  blocksMade++;
  const out = new Uint8Array(count * unitBytes);
  fillBlock(out, rank);
  return out;
}

/** Writes rank `rank`'s pattern into `out` (its whole length). */
function fillBlock(out: Uint8Array, rank: number): void {
  for (let k = 0; k < out.length; k++) out[k] = patternByte(rank, k);
}

/** Element displacements: prefix sums of the counts (blocks back to back in rank order). */
export function prefixDispls(counts: readonly number[]): number[] {
  const displs = new Array<number>(counts.length);
  let at = 0;
  for (let i = 0; i < counts.length; i++) {
    displs[i] = at;
    at += counts[i];
  }
  return displs;
}

/** The root's full buffer: every block at its displacement. */
export function fullBuffer(counts: readonly number[], unitBytes: number): Uint8Array {
  let total = 0;
  for (const c of counts) total += c;
  const out = new Uint8Array(total * unitBytes);
  let at = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] * unitBytes;
    fillBlock(out.subarray(at, at + n), i);
    at += n;
  }
  return out;
}

/**
 * One case's data shared by every rank of a process (the simulator runs them all in one): the
 * reference (every block at its displacement, fullBuffer) and an arena of the same layout
 * where each rank's own buffer lives (gatherv: its send buffer; scatterv: its receive buffer),
 * so a rank holds views, not copies: O(total bytes) for the whole run, not per rank.
 */
export interface SharedCaseData {
  readonly unitBytes: number;
  readonly counts: readonly number[];
  /** Byte offset of each rank's block (length p + 1: the last is the total). */
  readonly offsets: Float64Array;
  readonly reference: Uint8Array;
  readonly arena: Uint8Array;
}

export function sharedCaseData(counts: readonly number[], unitBytes: number): SharedCaseData {
  const offsets = new Float64Array(counts.length + 1);
  for (let i = 0; i < counts.length; i++) offsets[i + 1] = offsets[i] + counts[i] * unitBytes;
  const reference = fullBuffer(counts, unitBytes);
  return { unitBytes, counts, offsets, reference, arena: new Uint8Array(reference.length) };
}

/** Rank `rank`'s block in a shared buffer laid out as the reference. */
export function rankView(shared: SharedCaseData, buf: Uint8Array, rank: number): Uint8Array {
  return buf.subarray(shared.offsets[rank], shared.offsets[rank + 1]);
}

/**
 * Fills `buf` so that every byte differs from `expected` (its complement): a byte the
 * collective fails to write cannot match the reference by chance.
 */
export function poison(buf: Uint8Array, expected: Uint8Array): void {
  for (let k = 0; k < buf.length; k++) buf[k] = expected[k] ^ 0xff;
}

/** First byte where `got` differs from `expected`, as a message; undefined when equal. */
export function firstMismatch(got: Uint8Array, expected: Uint8Array, what: string): string | undefined {
  if (got.length !== expected.length) return `${what}: ${got.length} bytes, expected ${expected.length}`;
  for (let k = 0; k < got.length; k++) {
    if (got[k] !== expected[k]) return `${what}: byte ${k} is ${got[k]}, expected ${expected[k]}`;
  }
  return undefined;
}
