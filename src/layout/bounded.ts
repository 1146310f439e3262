/**
 * Bounded and circular vectors (TraffRougier14 §5, Fig. 4; the logarithmic-round all-to-all of Bruck
 * et al. as made zero-copy by Träff, Rougier and Hunold 2014, TraffRougier14 ref. [13]). Fig. 4 is lost
 * from the text; our reading, from the text and the Bruck use:
 *
 * - `boundedVector(count, blocklength, stride, bound, start = 0)`: the vector whose block t
 *   starts at start + t·stride, clipped to the bound: elements at offsets ≥ bound are dropped,
 *   so the last kept block may be short and blocks starting at or past the bound vanish.
 *   Extent = bound. Bruck's step k (2^k < p blocks) sends the blocks whose index has bit k set:
 *   boundedVector(p, 2^k, 2^(k+1), p, 2^k) over a base element of one block.
 * - `circularVector(count, blocklength, stride, bound, rotate, start = 0)`: the same logical
 *   elements (positions x in [0, bound)) placed at (x + rotate) mod bound: the vector wraps
 *   around the bound, a block crossing it splits into a run at the end and one at the start.
 *   Bruck's step k on rank r without the initial local rotation: rotate = r.
 *   Positions are a rotation of distinct logical positions: a circular vector never overlaps.
 *
 * Both require stride ≥ blocklength (when count > 1): blocks do not overlap, and only the last
 * kept block can be clipped. Cost: O(1) storage and O(1) to locate an element; walking k
 * elements is O(runs touched) (at most one extra run for the wrap).
 */
import { InvalidArgumentError } from '../errors.js';
import { nonNegativeInt, safe, visitEqualBlocks, CheckedLayout, type Layout, type RunSink } from './layout.js';

interface Clipped {
  readonly count: number;
  readonly blocklength: number;
  readonly stride: number;
  readonly bound: number;
  readonly start: number;
  /** Elements kept. */
  readonly size: number;
}

function clip(count: number, blocklength: number, stride: number, bound: number, start: number): Clipped {
  const c = nonNegativeInt(count, 'count');
  const bl = nonNegativeInt(blocklength, 'blocklength');
  const s = nonNegativeInt(stride, 'stride');
  const b = nonNegativeInt(bound, 'bound');
  const st = nonNegativeInt(start, 'start');
  if (c > 1 && s < bl) throw new InvalidArgumentError('stride', `${s} is less than blocklength ${bl}: blocks would overlap`);
  let kept = 0;
  if (bl > 0 && c > 0 && st < b) kept = s === 0 ? 1 : Math.min(c, Math.floor((b - st - 1) / s) + 1);
  let size = 0;
  if (kept > 0) {
    const lastAt = safe(st + (kept - 1) * s, 'stride');
    size = safe((kept - 1) * bl + Math.min(bl, b - lastAt), 'count');
  }
  return { count: kept, blocklength: bl, stride: s, bound: b, start: st, size };
}

class BoundedVectorLayout extends CheckedLayout {
  readonly kind = 'boundedVector' as const;
  readonly storage = 0;
  readonly size: number;
  readonly extent: number;

  constructor(readonly shape: Clipped) {
    super();
    this.size = shape.size;
    this.extent = shape.bound;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    const { start, stride, blocklength } = this.shape;
    visitEqualBlocks(blocklength, (t) => start + t * stride, first, count, emit);
  }
}

/** The vector(count, blocklength, stride) shifted by `start`, without its elements at offsets ≥ bound. */
export function boundedVector(count: number, blocklength: number, stride: number, bound: number, start = 0): Layout {
  return new BoundedVectorLayout(clip(count, blocklength, stride, bound, start));
}

class CircularVectorLayout extends CheckedLayout {
  readonly kind = 'circularVector' as const;
  readonly storage = 0;
  readonly size: number;
  readonly extent: number;

  constructor(
    readonly shape: Clipped,
    readonly rotate: number,
  ) {
    super();
    this.size = shape.size;
    this.extent = shape.bound;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    const { start, stride, blocklength, bound } = this.shape;
    const rot = this.rotate;
    visitEqualBlocks(
      blocklength,
      (t) => start + t * stride,
      first,
      count,
      (x, len) => {
        // (x + rot) mod bound without forming x + rot, which may pass 2^53 (x, rot < bound)
        const at = x >= bound - rot ? x - (bound - rot) : x + rot;
        const head = bound - at;
        if (len <= head) {
          emit(at, len);
        } else {
          emit(at, head);
          emit(0, len - head);
        }
      },
    );
  }
}

/** The bounded vector's elements rotated by `rotate` modulo `bound` (wrapping around). */
export function circularVector(
  count: number,
  blocklength: number,
  stride: number,
  bound: number,
  rotate: number,
  start = 0,
): Layout {
  const shape = clip(count, blocklength, stride, bound, start);
  const rot = nonNegativeInt(rotate, 'rotate');
  return new CircularVectorLayout(shape, shape.bound === 0 ? 0 : rot % shape.bound);
}
