/**
 * Regular layouts (TraffRougier14 §5; MPI contiguous, vector, indexed-block and resized types):
 * - `contiguous(n)`: elements 0 … n − 1; extent n. The signature of any layout (§5, "signature
 *   type") is `contiguous(size)`: `signature(L)`.
 * - `vector(count, blocklength, stride)`: block t holds elements t·stride … t·stride +
 *   blocklength − 1; extent (count − 1)·stride + blocklength.
 * - `indexedBlock(blocklength, displs)`: block t at displs[t], all of blocklength elements
 *   (MPI_Type_create_indexed_block: the root type of the zero-copy hierarchical gather, §6
 *   Fig. 6); extent max(displs) + blocklength.
 * - `resized(L, extent)`: L with another extent (interleaved tilings).
 * Cost: O(1) storage except indexedBlock (its displs, one number per block); walking k
 * elements is O(runs touched).
 */
import {
  CheckedLayout,
  nonNegativeInt,
  numberArray,
  requireLayout,
  safe,
  visitEqualBlocks,
  type Layout,
  type RunSink,
} from './layout.js';

class ContiguousLayout extends CheckedLayout {
  readonly kind = 'contiguous' as const;
  readonly storage = 0;
  readonly extent: number;

  constructor(readonly size: number) {
    super();
    this.extent = size;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    if (count > 0) emit(first, count);
  }
}

/** n consecutive elements (extent n). */
export function contiguous(n: number): Layout {
  return new ContiguousLayout(nonNegativeInt(n, 'n'));
}

/**
 * The signature layout of `layout` (TraffRougier14 §5): its elements packed contiguously, size =
 * extent = layout.size. Packing k elements of L gives exactly k elements of signature(L).
 */
export function signature(layout: Layout): Layout {
  return contiguous(requireLayout(layout).size);
}

class VectorLayout extends CheckedLayout {
  readonly kind = 'vector' as const;
  readonly storage = 0;
  readonly size: number;
  readonly extent: number;

  constructor(
    readonly count: number,
    readonly blocklength: number,
    readonly stride: number,
  ) {
    super();
    this.size = safe(count * blocklength, 'count');
    this.extent = this.size === 0 ? 0 : safe((count - 1) * stride + blocklength, 'stride');
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    const s = this.stride;
    visitEqualBlocks(this.blocklength, (t) => t * s, first, count, emit);
  }
}

/** `count` blocks of `blocklength` elements, block t starting at t·stride (stride ≥ 0). */
export function vector(count: number, blocklength: number, stride: number): Layout {
  return new VectorLayout(
    nonNegativeInt(count, 'count'),
    nonNegativeInt(blocklength, 'blocklength'),
    nonNegativeInt(stride, 'stride'),
  );
}

class IndexedBlockLayout extends CheckedLayout {
  readonly kind = 'indexedBlock' as const;
  readonly size: number;
  readonly extent: number;
  readonly storage: number;

  constructor(
    readonly blocklength: number,
    readonly displs: Float64Array,
  ) {
    super();
    this.size = safe(displs.length * blocklength, 'blocklength');
    let end = 0;
    if (blocklength > 0) for (const d of displs) end = Math.max(end, safe(d + blocklength, 'displs'));
    this.extent = end;
    this.storage = displs.length;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    const d = this.displs;
    visitEqualBlocks(this.blocklength, (t) => d[t], first, count, emit);
  }
}

/** Blocks of `blocklength` elements at element displacements `displs` (any order). */
export function indexedBlock(blocklength: number, displs: ArrayLike<number>): Layout {
  const bl = nonNegativeInt(blocklength, 'blocklength');
  const arr = numberArray(displs, 'displs');
  const copy = new Float64Array(arr.length);
  for (let t = 0; t < arr.length; t++) copy[t] = nonNegativeInt(arr[t], `displs[${t}]`);
  return new IndexedBlockLayout(bl, copy);
}

class ResizedLayout extends CheckedLayout {
  readonly kind = 'resized' as const;
  readonly size: number;
  readonly storage: number;

  constructor(
    readonly base: Layout,
    readonly extent: number,
  ) {
    super();
    this.size = base.size;
    this.storage = base.storage;
  }

  protected visitRange(first: number, count: number, emit: RunSink): void {
    this.base.visit(first, count, emit);
  }
}

/** `layout` with repetitions `extent` elements apart (the type map is unchanged). */
export function resized(layout: Layout, extent: number): Layout {
  return new ResizedLayout(requireLayout(layout), nonNegativeInt(extent, 'extent'));
}
