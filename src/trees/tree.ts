/**
 * The gather/scatter tree: each node's children in the order it receives from them
 * (gather; a scatter sends in the reverse order) and the position of its local copy
 * among those operations (Traff17 Definition 2, where the copy is the singleton subtree).
 *
 * `copyAt[v] = k` means v copies its own block after its first k receives: 0 lets the copy
 * overlap the wait for the first child; in an ordered tree a node whose first child lies to
 * its left copies after that first receive (docs/MODEL.md, ordered copy convention).
 */
import { InvalidArgumentError, VcollError } from '../errors.js';

export interface Tree {
  readonly p: number;
  readonly root: number;
  /** parent[v], or -1 for the root. */
  readonly parent: Int32Array;
  /** children[v] in gather receive order. */
  readonly children: ReadonlyArray<readonly number[]>;
  /** copyAt[v] in [0, children[v].length]: how many receives precede v's local copy. */
  readonly copyAt: Int32Array;
}

/** Incrementally assembles a tree; `build()` checks it spans all p ranks. */
export class TreeBuilder {
  readonly p: number;
  readonly root: number;
  private readonly parent: Int32Array;
  private readonly kids: number[][];
  private readonly copyAt: Int32Array;
  private readonly copySet: Uint8Array;

  constructor(p: number, root: number) {
    if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be an integer >= 1, got ${p}`);
    if (!Number.isInteger(root) || root < 0 || root >= p) throw new InvalidArgumentError('root', `must be in [0, ${p - 1}], got ${root}`);
    this.p = p;
    this.root = root;
    this.parent = new Int32Array(p).fill(-2);
    this.parent[root] = -1;
    this.kids = Array.from({ length: p }, () => []);
    this.copyAt = new Int32Array(p);
    this.copySet = new Uint8Array(p);
  }

  /** Appends `child` as the next subtree `parent` receives from. */
  addChild(parent: number, child: number): this {
    if (child === this.root) throw new VcollError('INTERNAL', `root ${child} cannot be a child`);
    if (this.parent[child] !== -2) throw new VcollError('INTERNAL', `rank ${child} already has a parent`);
    this.parent[child] = parent;
    this.kids[parent].push(child);
    return this;
  }

  /** Places v's local copy after its first k receives. */
  setCopyAt(v: number, k: number): this {
    this.copyAt[v] = k;
    this.copySet[v] = 1;
    return this;
  }

  /**
   * Finishes the tree. Nodes whose copy position was not set get the ordered convention:
   * 0 when their first child lies to their right, 1 when it lies to their left.
   */
  build(): Tree {
    const { p, parent, kids, copyAt } = this;
    for (let v = 0; v < p; v++) {
      if (parent[v] === -2) throw new VcollError('INTERNAL', `rank ${v} is not in the tree`);
      if (!this.copySet[v]) copyAt[v] = kids[v].length > 0 && kids[v][0] < v ? 1 : 0;
      if (copyAt[v] < 0 || copyAt[v] > kids[v].length) {
        throw new VcollError('INTERNAL', `copy position ${copyAt[v]} of rank ${v} outside [0, ${kids[v].length}]`);
      }
    }
    const tree: Tree = { p, root: this.root, parent, children: kids, copyAt };
    postOrder(tree); // throws on cycles
    return tree;
  }
}

/** Nodes in an order where every child precedes its parent (iterative, so deep trees are fine). */
export function postOrder(tree: Tree): Int32Array {
  const { p, root, children } = tree;
  const order = new Int32Array(p);
  const stack = new Int32Array(p);
  let top = 0;
  let n = 0;
  stack[top++] = root;
  while (top > 0) {
    const v = stack[--top];
    if (n >= p) throw new VcollError('INTERNAL', 'tree has a cycle');
    order[n++] = v;
    for (const c of children[v]) {
      if (top >= p) throw new VcollError('INTERNAL', 'tree has a cycle');
      stack[top++] = c;
    }
  }
  if (n !== p) throw new VcollError('INTERNAL', `tree reaches ${n} of ${p} ranks from root ${root}`);
  order.reverse();
  return order;
}

/** Depth (number of edges from the root) of every node. */
export function depths(tree: Tree): Int32Array {
  const order = postOrder(tree);
  const d = new Int32Array(tree.p);
  for (let i = order.length - 1; i >= 0; i--) {
    const v = order[i];
    for (const c of tree.children[v]) d[c] = d[v] + 1;
  }
  return d;
}

/** The tree's height: the largest depth (0 for a single node). */
export function treeHeight(tree: Tree): number {
  let h = 0;
  for (const d of depths(tree)) if (d > h) h = d;
  return h;
}

/**
 * True when the tree is ordered (Traff17 Definition 3 in the growing form the DPs build):
 * every subtree spans a consecutive range of ranks, and each node's segment grows by
 * adjacent ranges, so blocks arrive already in rank order and are never permuted.
 */
export function isOrdered(tree: Tree): boolean {
  const order = postOrder(tree);
  const lo = new Int32Array(tree.p);
  const hi = new Int32Array(tree.p);
  for (const v of order) {
    let a = v;
    let b = v;
    for (const c of tree.children[v]) {
      if (hi[c] === a - 1) a = lo[c];
      else if (lo[c] === b + 1) b = hi[c];
      else return false;
    }
    lo[v] = a;
    hi[v] = b;
  }
  return true;
}

/** Plain-object form for JSON output. */
export function treeToJSON(tree: Tree): { p: number; root: number; parent: number[]; children: number[][]; copyAt: number[] } {
  return {
    p: tree.p,
    root: tree.root,
    parent: Array.from(tree.parent),
    children: tree.children.map((c) => [...c]),
    copyAt: Array.from(tree.copyAt),
  };
}
