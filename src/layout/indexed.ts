/**
 * Indexed layouts (TraffRougier14 §5, §6; MPI indexed type and gatherv's counts/displacements):
 * - `indexed(blocklengths, displs)`: block j of blocklengths[j] elements at displs[j];
 * - `withDisplacements(counts, displs)`: the same map read as gatherv's receive side: rank i's
 *   counts[i] elements at displs[i]; "counts[i] elements starting at element Σ_{j<i} counts[j]"
 *   is exactly rank i's block (TraffRougier14 §6: the displacements live in the layout).
 * Extent: the end of the farthest non-empty block. Blocks may come in any order.
 * Cost: two arrays (prefix sums of the lengths and the displacements, 2n + 1 numbers); locating
 * element f is a binary search, O(log n); walking is O(blocks touched).
 */
import { InvalidArgumentError } from '../errors.js';
import { lengthPrefix, nonNegativeInt, numberArray, safe, visitBlocks, CheckedLayout, type Layout, type RunSink } from './layout.js';

class IndexedLayout extends CheckedLayout {
  readonly size: number;
  readonly extent: number;
  readonly storage: number;

  constructor(
    readonly kind: 'indexed' | 'withDisplacements',
    /** prefix[j] = elements before block j (length blocks + 1). */
    readonly prefix: Float64Array,
    readonly displs: Float64Array,
  ) {
    super();
    this.size = prefix[prefix.length - 1];
    let end = 0;
    for (let j = 0; j < displs.length; j++) {
      const len = prefix[j + 1] - prefix[j];
      if (len > 0) end = Math.max(end, safe(displs[j] + len, 'displs'));
    }
    this.extent = end;
    this.storage = prefix.length + displs.length;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    const d = this.displs;
    visitBlocks(this.prefix, (j) => d[j], first, count, emit);
  }
}

function build(kind: 'indexed' | 'withDisplacements', lengths: unknown, displs: unknown, lengthsField: string): Layout {
  const ls = numberArray(lengths, lengthsField);
  const ds = numberArray(displs, 'displs');
  if (ds.length !== ls.length) {
    throw new InvalidArgumentError('displs', `has ${ds.length} entries, ${lengthsField} has ${ls.length}`);
  }
  const prefix = lengthPrefix(ls, lengthsField);
  const copy = new Float64Array(ds.length);
  for (let j = 0; j < ds.length; j++) copy[j] = nonNegativeInt(ds[j], `displs[${j}]`);
  return new IndexedLayout(kind, prefix, copy);
}

/** Block j: blocklengths[j] elements at element displacement displs[j] (any order). */
export function indexed(blocklengths: ArrayLike<number>, displs: ArrayLike<number>): Layout {
  return build('indexed', blocklengths, displs, 'blocklengths');
}

/** Gatherv's receive layout: counts[i] elements of rank i at displs[i]. */
export function withDisplacements(counts: ArrayLike<number>, displs: ArrayLike<number>): Layout {
  return build('withDisplacements', counts, displs, 'counts');
}
