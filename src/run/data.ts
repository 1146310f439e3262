/**
 * Deterministic test data of one gatherv/scatterv run: block i (rank i's block) holds
 * counts[i] elements of unitBytes bytes; byte k of block i is a fixed function of (i, k), so
 * every rank can build its own block and the reference of any other block without
 * communicating, and verification is exact, byte for byte.
 */

/** Byte k of rank i's block. Never the same for two neighbouring ranks at one offset. */
export function patternByte(rank: number, k: number): number {
  return (rank * 151 + k * 7 + (k >>> 8) * 13 + 1) & 0xff;
}

/** Rank `rank`'s block: count·unitBytes bytes of its pattern. */
export function blockOf(rank: number, count: number, unitBytes: number): Uint8Array {
  const n = count * unitBytes;
  const out = new Uint8Array(n);
  for (let k = 0; k < n; k++) out[k] = patternByte(rank, k);
  return out;
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
  const total = counts.reduce((a, c) => a + c, 0);
  const out = new Uint8Array(total * unitBytes);
  const displs = prefixDispls(counts);
  for (let i = 0; i < counts.length; i++) out.set(blockOf(i, counts[i], unitBytes), displs[i] * unitBytes);
  return out;
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
