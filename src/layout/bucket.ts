/**
 * Bucket layout (TraffRougier14 §5, Fig. 4; Träff, Rougier, Hunold 2014 [13]): p buckets of
 * `bucketSize` elements, bucket i at i·bucketSize holding its first counts[i] ≤ bucketSize
 * elements. The complement of indexed-block: fixed displacements, variable lengths. One array
 * only (prefix sums of the counts, p + 1 numbers): the displacements are implicit.
 * Extent p·bucketSize. Cost: O(p) storage, O(log p) to locate an element, O(runs) to walk.
 */
import { InvalidArgumentError } from '../errors.js';
import { lengthPrefix, nonNegativeInt, numberArray, safe, visitBlocks, CheckedLayout, type Layout, type RunSink } from './layout.js';

class BucketLayout extends CheckedLayout {
  readonly kind = 'bucket' as const;
  readonly size: number;
  readonly extent: number;
  readonly storage: number;

  constructor(
    readonly bucketSize: number,
    readonly prefix: Float64Array,
  ) {
    super();
    this.size = prefix[prefix.length - 1];
    this.extent = safe((prefix.length - 1) * bucketSize, 'bucketSize');
    this.storage = prefix.length;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    const b = this.bucketSize;
    visitBlocks(this.prefix, (i) => i * b, first, count, emit);
  }
}

/** Buckets of `bucketSize` elements, bucket i (at i·bucketSize) holding counts[i] ≤ bucketSize elements. */
export function bucket(bucketSize: number, counts: ArrayLike<number>): Layout {
  const b = nonNegativeInt(bucketSize, 'bucketSize');
  const cs = numberArray(counts, 'counts');
  const prefix = lengthPrefix(cs, 'counts');
  for (let i = 0; i < cs.length; i++) {
    if (cs[i] > b) throw new InvalidArgumentError(`counts[${i}]`, `${cs[i]} exceeds the bucket size ${b}`);
  }
  return new BucketLayout(b, prefix);
}
