/**
 * Stretched vector (TraffRougier14 §5, Fig. 5; the hierarchical all-to-all of TraffRougier14 ref. [12]):
 * p indexed types described by ONE array b of n block sizes. Type i (0 ≤ i < p) has n blocks,
 * block j of b[j] elements at offset i·b[j] + p·Σ_{k<j} b[k]: the buffer is n super-blocks,
 * super-block j holding the p types' j-th blocks side by side. Extent of every type: p·Σ b
 * (the whole buffer), so repetitions tile whole buffers.
 *
 * `typeOf(i)` materialises nothing: it returns a view over the family's single array of prefix
 * sums (n + 1 numbers) — p explicit indexed types would need p·2n numbers.
 * Cost: O(n) storage for all p types; O(1) per `typeOf`; O(log n) to locate an element;
 * walking is O(blocks touched).
 */
import { InvalidArgumentError } from '../errors.js';
import { lengthPrefix, nonNegativeInt, numberArray, safe, visitBlocks, CheckedLayout, type Layout, type RunSink } from './layout.js';

/** The family of p stretched types sharing one array. */
export interface StretchedVector {
  readonly kind: 'stretchedVector';
  /** Number of types (p). */
  readonly types: number;
  /** Blocks per type (n = b.length). */
  readonly blocks: number;
  /** Extent of every type: p·Σ b. */
  readonly extent: number;
  /** Numbers stored for the whole family (n + 1). */
  readonly storage: number;
  /** Type i, 0 ≤ i < p: shares the family's array. */
  typeOf(i: number): Layout;
}

class StretchedType extends CheckedLayout {
  readonly kind = 'stretchedVector' as const;
  readonly size: number;
  readonly extent: number;
  readonly storage: number;

  constructor(
    readonly prefix: Float64Array,
    readonly p: number,
    readonly index: number,
  ) {
    super();
    this.size = prefix[prefix.length - 1];
    this.extent = p * this.size;
    this.storage = prefix.length;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    const { prefix, p, index } = this;
    visitBlocks(prefix, (j) => index * (prefix[j + 1] - prefix[j]) + p * prefix[j], first, count, emit);
  }
}

class StretchedFamily implements StretchedVector {
  readonly kind = 'stretchedVector' as const;
  readonly blocks: number;
  readonly extent: number;
  readonly storage: number;

  constructor(
    readonly prefix: Float64Array,
    readonly types: number,
  ) {
    this.blocks = prefix.length - 1;
    this.extent = safe(types * prefix[prefix.length - 1], 'p');
    this.storage = prefix.length;
  }

  typeOf(i: number): Layout {
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= this.types) {
      throw new InvalidArgumentError('i', `must be an integer in [0, ${this.types}), got ${String(i)}`);
    }
    return new StretchedType(this.prefix, this.types, i);
  }
}

/** The p stretched types of block sizes b (TraffRougier14 Fig. 5). */
export function stretchedVector(b: ArrayLike<number>, p: number): StretchedVector {
  const prefix = lengthPrefix(numberArray(b, 'b'), 'b');
  return new StretchedFamily(prefix, nonNegativeInt(p, 'p'));
}
