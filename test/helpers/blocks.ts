/**
 * Deterministic block data for collective tests: every rank's block, the displacements in use and
 * the reference receive buffer (sentinels outside the blocks). Shared by the allgather and the
 * hierarchical gather programs.
 */

export const SENTINEL = 0xee;

/** What a case must say for its reference buffer. */
export interface BlockCase {
  /** Elements per rank. */
  readonly counts: readonly number[];
  /** Element displacements (undefined: prefix sums). */
  readonly displs?: readonly number[];
  readonly unitBytes: number;
  /** Bytes of the receive buffer. */
  readonly recvBytes: number;
  readonly seed: number;
}

/** Rank r's block of n bytes (never the sentinel). */
export function blockOf(r: number, n: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, j) => (r * 131 + j * 7 + seed * 17 + 1) % 211);
}

/** Element displacements in use (default: prefix sums). */
export function displsOf(c: BlockCase): number[] {
  if (c.displs !== undefined) return [...c.displs];
  let at = 0;
  return c.counts.map((n) => {
    const d = at;
    at += n;
    return d;
  });
}

/** What the receive buffer must hold afterwards: every block at its displacement, sentinels elsewhere. */
export function expectedRecv(c: BlockCase): Uint8Array {
  const out = new Uint8Array(c.recvBytes).fill(SENTINEL);
  const d = displsOf(c);
  c.counts.forEach((n, r) => out.set(blockOf(r, n * c.unitBytes, c.seed), d[r] * c.unitBytes));
  return out;
}
