/**
 * Data layouts (TraffRougier14 §5, §6): where the elements of a message live in a buffer.
 *
 * A `Layout` is the type map of ONE repetition over a base element (of `unitBytes` bytes, chosen
 * by the operation, not by the layout): its `size` elements in order, as runs
 * (offset, length) of consecutive elements, offsets counted in elements from the buffer start
 * (the lower bound is always 0, so offsets are never negative). Runs may be out of order
 * (permutations) and, for reading, may overlap.
 *
 * Element-count semantics (TraffRougier14 §6, "re-interpreting the collective interfaces"): "k
 * elements from layout L starting at element f" are elements f … f + k − 1 of the contiguous
 * repetition of L, repetition r starting at r·extent. Element e is element e mod size of
 * repetition ⌊e / size⌋, at offset ⌊e / size⌋·extent + offset of that element in L. A single
 * layout therefore describes any number of elements; what one rank contributes to a gather is
 * a range [f, f + k) of it.
 *
 * Layouts are implicit: no constructor materialises one entry per element, and the
 * space-efficient forms (bucket, stretched vector) keep one array only (`storage`). Walking k
 * elements costs O(runs touched + log blocks) (a binary search locates the first element).
 */
import { InvalidArgumentError } from '../errors.js';
import { requireInteger } from '../model/validate.js';

/** Receives one run: `length` (> 0) consecutive elements at element offset `offset`. */
export type RunSink = (offset: number, length: number) => void;

export type LayoutKind =
  | 'contiguous'
  | 'withDisplacements'
  | 'vector'
  | 'indexed'
  | 'indexedBlock'
  | 'bucket'
  | 'boundedVector'
  | 'circularVector'
  | 'stretchedVector'
  | 'resized';

/** One repetition's type map, in elements of an unspecified base unit. */
export interface Layout {
  readonly kind: LayoutKind;
  /** Elements in one repetition. */
  readonly size: number;
  /** Elements between the starts of consecutive repetitions. */
  readonly extent: number;
  /** Numbers this layout keeps in arrays (shared arrays included): O(input), never O(size·types). */
  readonly storage: number;
  /**
   * Emits the runs holding elements first … first + count − 1 of ONE repetition, in element
   * order, each of positive length (adjacent runs are not merged). Requires
   * 0 ≤ first ≤ first + count ≤ size, else InvalidArgumentError (`first`, `count`): a range
   * past one repetition throws; `forEachRun` spans repetitions.
   */
  visit(first: number, count: number, emit: RunSink): void;
}

/**
 * `value` as a Layout (an object with a `visit` function and non-negative safe integer `size`
 * and `extent`), else InvalidArgumentError naming `field`. Every public entry point taking a
 * layout calls it first.
 */
export function requireLayout(value: unknown, field = 'layout'): Layout {
  if (value === null || typeof value !== 'object') {
    throw new InvalidArgumentError(field, `must be a Layout, got ${value === null ? 'null' : typeof value}`);
  }
  const l = value as Partial<Layout>;
  if (typeof l.visit !== 'function') throw new InvalidArgumentError(field, 'must be a Layout (it has no visit function)');
  for (const key of ['size', 'extent'] as const) {
    const v = l[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw new InvalidArgumentError(field, `must be a Layout: its ${key} must be a non-negative safe integer, got ${String(v)}`);
    }
  }
  return value as Layout;
}

/**
 * Checks a range of ONE repetition, 0 ≤ first ≤ first + count ≤ size (names: `first`,
 * `count`): what every `Layout.visit` requires.
 */
export function checkVisitRange(size: number, first: number, count: number): void {
  nonNegativeInt(first, 'first');
  nonNegativeInt(count, 'count');
  if (first > size) throw new InvalidArgumentError('first', `${first} is past the end of one repetition of ${size} elements`);
  if (count > size - first) {
    throw new InvalidArgumentError('count', `${count} elements from element ${first} run past one repetition of ${size} elements`);
  }
}

/**
 * The base of every layout kind: `visit` checks its range once (`checkVisitRange`), then the
 * kind's `visitRange` walks it, trusting 0 ≤ first ≤ first + count ≤ size.
 */
export abstract class CheckedLayout implements Layout {
  abstract readonly kind: LayoutKind;
  abstract readonly size: number;
  abstract readonly extent: number;
  abstract readonly storage: number;

  visit(first: number, count: number, emit: RunSink): void {
    checkVisitRange(this.size, first, count);
    this.visitRange(first, count, emit);
  }

  /** Emits the runs of elements first … first + count − 1, already checked to lie in one repetition. */
  protected abstract visitRange(first: number, count: number, emit: RunSink): void;
}

/** `value` as a non-negative safe integer, else InvalidArgumentError naming `field`. */
export function nonNegativeInt(value: unknown, field: string): number {
  return requireInteger(field, value, 0);
}

/** `value` as a positive safe integer, else InvalidArgumentError naming `field`. */
export function positiveInt(value: unknown, field: string): number {
  return requireInteger(field, value, 1);
}

/** A product or sum that must stay a safe integer (sizes, extents, offsets). */
export function safe(value: number, field: string): number {
  if (!Number.isSafeInteger(value)) throw new InvalidArgumentError(field, `too large: ${value} exceeds 2^53`);
  return value;
}

/** `a` as an array-like of numbers, else InvalidArgumentError naming `field`. */
export function numberArray(a: unknown, field: string): ArrayLike<number> {
  if (a === null || typeof a !== 'object' || typeof (a as ArrayLike<unknown>).length !== 'number') {
    throw new InvalidArgumentError(field, 'must be an array of numbers');
  }
  return a as ArrayLike<number>;
}

/** Prefix sums of non-negative integer lengths, validated (`field[i]`): length n + 1, prefix[0] = 0. */
export function lengthPrefix(lengths: ArrayLike<number>, field: string): Float64Array {
  const prefix = new Float64Array(lengths.length + 1);
  for (let i = 0; i < lengths.length; i++) {
    prefix[i + 1] = safe(prefix[i] + nonNegativeInt(lengths[i], `${field}[${i}]`), field);
  }
  return prefix;
}

/** The block j holding element i of a prefix-summed block list: smallest j with prefix[j + 1] > i. */
export function blockOf(prefix: Float64Array, i: number): number {
  let lo = 0;
  let hi = prefix.length - 2;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (prefix[mid + 1] > i) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Visits elements first … first + count − 1 of a list of blocks given by prefix sums of their
 * lengths and an offset function (shared by indexed, bucket and stretched layouts).
 */
export function visitBlocks(
  prefix: Float64Array,
  offsetOf: (j: number) => number,
  first: number,
  count: number,
  emit: RunSink,
): void {
  if (count === 0) return;
  let j = blockOf(prefix, first);
  let within = first - prefix[j];
  let left = count;
  // j stays below the block count: a range past the last block (excluded by checkVisitRange)
  // must not spin on NaN lengths.
  while (left > 0 && j + 1 < prefix.length) {
    const len = prefix[j + 1] - prefix[j] - within;
    if (len > 0) {
      const k = Math.min(len, left);
      emit(offsetOf(j) + within, k);
      left -= k;
    }
    within = 0;
    j++;
  }
}

/**
 * Visits elements of blocks of equal length `blocklength` (the last one may be cut short by
 * the layout's size), block t at `offsetOf(t)`: vectors, indexed-block, bounded vectors.
 */
export function visitEqualBlocks(
  blocklength: number,
  offsetOf: (t: number) => number,
  first: number,
  count: number,
  emit: RunSink,
): void {
  if (count === 0) return;
  let t = Math.floor(first / blocklength);
  let within = first - t * blocklength;
  let left = count;
  while (left > 0) {
    const k = Math.min(blocklength - within, left);
    emit(offsetOf(t) + within, k);
    left -= k;
    within = 0;
    t++;
  }
}

/**
 * Checks `first` and `count` (names: `first`, `count`) against a layout (already checked by
 * `requireLayout`): ranges over repetitions.
 */
export function checkRange(layout: Layout, first: number, count: number): void {
  nonNegativeInt(first, 'first');
  nonNegativeInt(count, 'count');
  if (count > 0 && layout.size === 0) {
    throw new InvalidArgumentError('count', `${count} elements requested from a layout with no elements`);
  }
  safe(first + count, 'count');
}

/**
 * Emits the runs of elements first … first + count − 1 of the contiguous repetition of
 * `layout` (repetition r shifted by r·extent), in element order, unmerged.
 */
export function forEachRun(layout: Layout, first: number, count: number, emit: RunSink): void {
  requireLayout(layout);
  checkRange(layout, first, count);
  if (count === 0) return;
  const { size, extent } = layout;
  let r = Math.floor(first / size);
  let i = first - r * size;
  let left = count;
  while (left > 0) {
    const k = Math.min(size - i, left);
    const base = safe(r * extent, 'count');
    if (base === 0) {
      layout.visit(i, k, emit);
    } else {
      layout.visit(i, k, (o, l) => {
        // every offset base + o … base + o + l − 1 must be exact. A sum past 2^53 − 1 rounds to
        // ≥ 2^53, never back into the safe range, so checking (base + o) + (l − 1) covers the run
        // (not base + o + l − 1: base + o + l may round down to 2^53 and the − 1 make it safe).
        const at = base + o;
        if (!Number.isSafeInteger(at + (l - 1))) {
          throw new InvalidArgumentError('count', `element offsets of repetition ${r} (at ${base}) pass 2^53 − 1`);
        }
        emit(at, l);
      });
    }
    left -= k;
    i = 0;
    r++;
  }
}

/** The element offset of element `e` of the repetition of `layout`. */
export function elementOffset(layout: Layout, e: number): number {
  requireLayout(layout);
  let at = -1;
  forEachRun(layout, e, 1, (o) => {
    at = o;
  });
  return at;
}

/**
 * Elements a buffer must hold for elements first … first + count − 1 of `layout`: the end of
 * the farthest one (0 when count = 0). O(runs).
 */
export function requiredLength(layout: Layout, first: number, count: number): number {
  requireLayout(layout);
  let end = 0;
  forEachRun(layout, first, count, (o, l) => {
    if (o + l > end) end = o + l;
  });
  return end;
}
