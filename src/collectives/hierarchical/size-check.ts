/**
 * The size check of the hierarchical gatherv: how the root finds out that the ranks' blocks do
 * not match its counts even when a message's total does (two ranks of one subtree wrong by
 * amounts that cancel), without the leaders knowing any count.
 *
 * Every message below and into the root carries an 8-byte trailer: two sums modulo the prime
 * P = 2³¹ − 1 over the ranks i of the message, A = Σ b_i and B = Σ h(i)·b_i, b_i being rank
 * i's block in bytes and h(i) = (i + 1)·K mod P (K fixed: h is injective for i < P). A rank adds
 * its own term to its children's trailers; the root computes the same sums from its counts. So
 * a single wrong block (b_i + δ, δ ≢ 0) changes A, and two wrong blocks that cancel in A
 * (b_i + δ, b_j − δ) change B by δ·(h(i) − h(j)) ≢ 0 mod P: both are always caught; any
 * other pattern of errors escapes only if it happens to cancel in both sums (one chance in
 * about 2⁶² for unrelated errors). Cost: 8 bytes per message (8β), O(1) work per rank,
 * O(ranks) at the root per message.
 */

/** Bytes of the trailer. */
export const CHECK_BYTES = 8;

const P = 2147483647;
const K = 1103515245 % P;

/** The two sums of a set of blocks. */
export interface SizeCheck {
  readonly a: number;
  readonly b: number;
}

export const NO_BLOCKS: SizeCheck = { a: 0, b: 0 };

/** (x·y) mod P for 0 ≤ x, y < P, exactly in doubles (products split below 2⁵³). */
function mulMod(x: number, y: number): number {
  const hi = Math.floor(y / 65536);
  const lo = y - hi * 65536;
  return ((((x * hi) % P) * 65536) % P + ((x * lo) % P)) % P;
}

/** The sums of rank `rank`'s block of `bytes` bytes alone. */
export function blockCheck(rank: number, bytes: number): SizeCheck {
  const m = bytes % P;
  return { a: m, b: mulMod(mulMod((rank + 1) % P, K), m) };
}

export function addChecks(x: SizeCheck, y: SizeCheck): SizeCheck {
  return { a: (x.a + y.a) % P, b: (x.b + y.b) % P };
}

export function sameCheck(x: SizeCheck, y: SizeCheck): boolean {
  return x.a === y.a && x.b === y.b;
}

export function encodeCheck(c: SizeCheck): Uint8Array {
  const out = new Uint8Array(CHECK_BYTES);
  const v = new DataView(out.buffer);
  v.setUint32(0, c.a, true);
  v.setUint32(4, c.b, true);
  return out;
}

/** The sums in a trailer; undefined when it cannot be one (values ≥ P). */
export function decodeCheck(trailer: Uint8Array): SizeCheck | undefined {
  const v = new DataView(trailer.buffer, trailer.byteOffset, CHECK_BYTES);
  const a = v.getUint32(0, true);
  const b = v.getUint32(4, true);
  return a < P && b < P ? { a, b } : undefined;
}
