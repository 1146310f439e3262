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
 * O(ranks) at the root per message. The sums are plain numbers (in [0, P), small integers to
 * V8): a rank keeps two, and sums them as its children's trailers arrive (the order does not
 * matter), with no object per block or message.
 */

/** Bytes of the trailer. */
export const CHECK_BYTES = 8;

const P = 2147483647;
const K = 1103515245 % P;

/** (x·y) mod P for 0 ≤ x, y < P, exactly in doubles (products split below 2⁵³). */
function mulMod(x: number, y: number): number {
  const hi = Math.floor(y / 65536);
  const lo = y - hi * 65536;
  return ((((x * hi) % P) * 65536) % P + ((x * lo) % P)) % P;
}

/** A of a block of `bytes` bytes alone: b mod P. */
export function blockSumA(bytes: number): number {
  return bytes % P;
}

/** B of rank `rank`'s block of `bytes` bytes alone: h(rank)·b mod P. */
export function blockSumB(rank: number, bytes: number): number {
  return mulMod(mulMod((rank + 1) % P, K), bytes % P);
}

/** (x + y) mod P of two sums (each in [0, P)). */
export function addSums(x: number, y: number): number {
  return (x + y) % P;
}

/** Trailers are cut from slabs of this many bytes (see trailerOf). */
const SLAB_BYTES = 4096;
let slab = new Uint8Array(0);
let used = 0;

/**
 * The trailer of the sums A = `a`, B = `b` (each little-endian in 4 bytes): 8 bytes of a slab
 * shared with other trailers. Every rank but the root sends one: a view of a slab is one
 * object, where an 8-byte array of its own is three (the view, its ArrayBuffer and the bytes),
 * and a simulation keeps every rank's until its message has gone. A slab's trailers are
 * never written again, so a view stays valid as long as it is referenced.
 */
export function trailerOf(a: number, b: number): Uint8Array {
  if (used + CHECK_BYTES > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    used = 0;
  }
  const out = slab.subarray(used, used + CHECK_BYTES);
  used += CHECK_BYTES;
  writeSums(out, 0, a, b);
  return out;
}

/** Writes the sums A = `a`, B = `b` as a trailer at `buf[at …]` (each little-endian in 4 bytes). */
export function writeSums(buf: Uint8Array, at: number, a: number, b: number): void {
  writeU32(buf, at, a);
  writeU32(buf, at + 4, b);
}

/** `v` (an unsigned 32-bit integer) little-endian at `out[at …]`: the trailers' and the scatters' count words. */
export function writeU32(out: Uint8Array, at: number, v: number): void {
  out[at] = v & 0xff;
  out[at + 1] = (v >>> 8) & 0xff;
  out[at + 2] = (v >>> 16) & 0xff;
  out[at + 3] = v >>> 24;
}

/** The unsigned 32-bit integer stored little-endian at `buf[at …]`. */
export function readU32(buf: Uint8Array, at: number): number {
  return (buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] << 24)) >>> 0;
}

/** The sum stored little-endian at `buf[at …]` (A at a trailer's byte 0, B at byte 4); −1 when it cannot be one (≥ P). */
export function readSum(buf: Uint8Array, at: number): number {
  const v = readU32(buf, at);
  return v < P ? v : -1;
}
