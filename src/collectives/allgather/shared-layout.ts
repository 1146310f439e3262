/**
 * Block layouts shared by the ranks of one process. MPI_Allgatherv's counts — and those of
 * the final intragroup allgatherv of Kang19's Algorithms 1 and 2 (§4, §4.1), and of the
 * intergroup allgatherv's remote group — are the same array on every rank. A simulation runs
 * its P ranks in one process: validating and copying them per rank (blockLayout, then the
 * byte arrays) holds P numbers per rank, P² in all, which alone rules out p + q = 2^16.
 *
 * So arrays that cannot change — frozen ones — are validated once, and the layout (counts,
 * displacements, and their byte lengths and byte offsets) is shared, frozen, by every call
 * that passes the same arrays with the same p and unitBytes: O(P) once instead of O(P) per
 * rank. The buffer is checked on every call (a smaller one fails exactly as blockLayout
 * fails). Arrays that are not frozen are validated and copied on every call, as before: their
 * owner may change them between calls. The layouts of regular blocks (allgather: block i of m
 * bytes at i·m) depend on (p, m) alone and are shared the same way.
 */
import { blockLayout, LAYOUT_ENTRIES_BUILT } from '../args.js';

/** A validated block layout, read-only: shared by every call that passed the same frozen arrays. */
export interface BlockLayout {
  /** Elements of every rank's block, and its displacement in elements. */
  readonly counts: readonly number[];
  readonly displs: readonly number[];
  /** The same in bytes (the same arrays when unitBytes is 1). */
  readonly bytes: readonly number[];
  readonly offsets: readonly number[];
}

interface Shared {
  readonly displsArg: unknown;
  readonly p: number;
  readonly unitBytes: number;
  /** The smallest buffer (bytes) the layout fits in: a call with a smaller one is validated afresh (and fails). */
  readonly needBytes: number;
  readonly layout: BlockLayout;
}

/** Layouts kept per counts array (different displs, p or unitBytes). */
const KEPT_PER_COUNTS = 4;
const SHARED = new WeakMap<object, Shared[]>();

function isFrozenArray(v: unknown): v is readonly unknown[] {
  return Array.isArray(v) && Object.isFrozen(v);
}

function inBytes(xs: readonly number[], unitBytes: number): readonly number[] {
  return unitBytes === 1 ? xs : xs.map((x) => x * unitBytes);
}

/** The end (bytes) of the last non-empty block. */
function endBytes(counts: readonly number[], displs: readonly number[], unitBytes: number): number {
  let end = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] > 0) end = Math.max(end, (displs[i] + counts[i]) * unitBytes);
  return end;
}

/**
 * blockLayout (collectives/args.ts: the same checks, the same errors naming `bufField` and
 * rank `me`) with the byte arrays, shared when `countsArg` (and `displsArg`, if given) are
 * frozen arrays; see the module comment.
 */
export function sharedBlockLayout(
  me: number,
  p: number,
  countsArg: unknown,
  displsArg: unknown,
  unitBytes: number,
  bufBytes: number,
  bufField: string,
  missingCounts: string,
): BlockLayout {
  const shareable = isFrozenArray(countsArg) && (displsArg === undefined || isFrozenArray(displsArg));
  const kept = shareable ? SHARED.get(countsArg) : undefined;
  const hit = kept?.find((s) => s.displsArg === displsArg && s.p === p && s.unitBytes === unitBytes && s.needBytes <= bufBytes);
  if (hit !== undefined) return hit.layout;
  const { counts, displs } = blockLayout(me, p, countsArg, displsArg, unitBytes, bufBytes, bufField, missingCounts);
  const layout: BlockLayout = { counts, displs, bytes: inBytes(counts, unitBytes), offsets: inBytes(displs, unitBytes) };
  if (!shareable) return layout;
  for (const a of [counts, displs, layout.bytes, layout.offsets]) Object.freeze(a);
  const list = kept ?? [];
  if (list.length >= KEPT_PER_COUNTS) list.shift();
  list.push({ displsArg, p, unitBytes, needBytes: endBytes(counts, displs, unitBytes), layout });
  if (kept === undefined) SHARED.set(countsArg, list);
  return layout;
}

/** Regular layouts kept (the most recent (p, m) pairs). */
const REGULAR_KEPT = 16;
const REGULAR = new Map<string, { readonly bytes: readonly number[]; readonly offsets: readonly number[] }>();

/** The layout of p blocks of m bytes, block i at i·m: frozen, shared by every call with the same (p, m). */
export function regularLayout(p: number, m: number): { readonly bytes: readonly number[]; readonly offsets: readonly number[] } {
  const key = `${p}:${m}`;
  let got = REGULAR.get(key);
  if (got === undefined) {
    got = { bytes: Object.freeze(new Array<number>(p).fill(m)), offsets: Object.freeze(Array.from({ length: p }, (_, i) => i * m)) };
    LAYOUT_ENTRIES_BUILT.count += p;
    if (REGULAR.size >= REGULAR_KEPT) REGULAR.delete(REGULAR.keys().next().value as string);
    REGULAR.set(key, got);
  }
  return got;
}

/** What the algorithms read off a list of block sizes: O(p) to compute, so computed once per frozen list. */
export interface SizeFacts {
  readonly total: number;
  readonly max: number;
  /** Infinity for an empty list. */
  readonly min: number;
}

const SIZE_FACTS = new WeakMap<readonly number[], SizeFacts>();

/** Total, largest and smallest of `bytes`: shared per frozen array, computed per call otherwise. */
export function sizeFacts(bytes: readonly number[]): SizeFacts {
  const got = SIZE_FACTS.get(bytes);
  if (got !== undefined) return got;
  let total = 0;
  let max = 0;
  let min = Infinity;
  for (const b of bytes) {
    total += b;
    if (b > max) max = b;
    if (b < min) min = b;
  }
  const facts = { total, max, min };
  if (Object.isFrozen(bytes)) SIZE_FACTS.set(bytes, facts);
  return facts;
}

const PREFIX_SUMS = new WeakMap<readonly number[], readonly number[]>();

/** Exclusive prefix sums of `xs` (length n + 1): shared (frozen) per frozen array, a new array per call otherwise. */
export function sharedPrefixSums(xs: readonly number[]): readonly number[] {
  const got = PREFIX_SUMS.get(xs);
  if (got !== undefined) return got;
  const out = new Array<number>(xs.length + 1);
  out[0] = 0;
  for (let i = 0; i < xs.length; i++) out[i + 1] = out[i] + xs[i];
  if (!Object.isFrozen(xs)) return out;
  Object.freeze(out);
  PREFIX_SUMS.set(xs, out);
  return out;
}

/** What a layout's offsets say, with its sizes. */
interface PlacementFacts {
  /** The end of the last non-empty block (bytes; 0 when all are empty). */
  readonly end: number;
  /** Every non-empty block i lies at the prefix sum of the blocks before it (the default displs). */
  readonly packed: boolean;
}

const PLACEMENT_FACTS = new WeakMap<readonly number[], WeakMap<readonly number[], PlacementFacts>>();

function placementFacts(bytes: readonly number[], offsets: readonly number[]): PlacementFacts {
  const byOffsets = PLACEMENT_FACTS.get(bytes);
  const got = byOffsets?.get(offsets);
  if (got !== undefined) return got;
  let end = 0;
  let packed = true;
  for (let i = 0, at = 0; i < bytes.length; at += bytes[i], i++) {
    if (bytes[i] === 0) continue;
    if (offsets[i] !== at) packed = false;
    if (offsets[i] + bytes[i] > end) end = offsets[i] + bytes[i];
  }
  const facts = { end, packed };
  if (Object.isFrozen(bytes) && Object.isFrozen(offsets)) {
    if (byOffsets === undefined) PLACEMENT_FACTS.set(bytes, new WeakMap([[offsets, facts]]));
    else byOffsets.set(offsets, facts);
  }
  return facts;
}

/** Is every non-empty block i at the sum of the sizes before it (the default displs)? Shared per frozen pair of arrays. */
export function isPackedLayout(bytes: readonly number[], offsets: readonly number[]): boolean {
  return placementFacts(bytes, offsets).packed;
}

/** The end (bytes) of the last non-empty block: shared per frozen pair of arrays. */
export function layoutEnd(bytes: readonly number[], offsets: readonly number[]): number {
  return placementFacts(bytes, offsets).end;
}

/**
 * The prefix sums of `bytes` when the layout is packed (every non-empty block at the sum of
 * the sizes before it, as with default displs) and both arrays are frozen — so that an
 * algorithm can find the bytes of any run of consecutive blocks in O(1) instead of walking
 * them (O(p) per rank) — else undefined (the caller walks the blocks).
 */
export function packedPrefix(bytes: readonly number[], offsets: readonly number[]): readonly number[] | undefined {
  if (!Object.isFrozen(bytes) || !Object.isFrozen(offsets) || !placementFacts(bytes, offsets).packed) return undefined;
  return sharedPrefixSums(bytes);
}
