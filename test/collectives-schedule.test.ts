/**
 * The pure parts of the gatherv/scatterv planning: the locally computed binomial tree, the
 * schedule encoding (packed layouts) and the root-side block placement.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prefixSums, rangeElements, rangePlacement, sequencePlacement } from '../src/collectives/placement.js';
import { byteLength, contiguous, copyBytes } from '../src/comm/segments.js';
import { binomialHeight, binomialNode, binomialSchedule, encodeSchedules } from '../src/collectives/node-schedule.js';
import { ceilLog2 } from '../src/util/ceil-log.js';
import { obliviousTreeFor } from '../src/trees/binomial.js';
import { depths, isOrdered, postOrder } from '../src/trees/tree.js';
import { linearModel } from '../src/model/cost-model.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { twoBlockTree } from '../src/trees/two-block.js';
import { int, rng } from './helpers/random.js';
import { randomTree } from './helpers/trees.js';

describe('binomialNode: the oblivious binomial tree computed by one rank', () => {
  it('equals obliviousTreeFor(p, root) for every rank, p 1..40 every root, larger p some roots', () => {
    const cases: [number, number][] = [];
    for (let p = 1; p <= 40; p++) for (let root = 0; root < p; root++) cases.push([p, root]);
    for (const p of [64, 100, 129, 300]) for (const root of [0, 1, p >> 1, p - 2, p - 1]) cases.push([p, root]);
    for (const [p, root] of cases) {
      {
        const tree = obliviousTreeFor(p, root);
        const d = depths(tree);
        let h = 0;
        for (const x of d) h = Math.max(h, x);
        expect(binomialHeight(p, root)).toBe(h);
        for (let v = 0; v < p; v++) {
          const node = binomialNode(p, root, v);
          expect(node.parent).toBe(tree.parent[v]);
          expect(node.children.map((c) => c.rank)).toEqual(tree.children[v]);
          // subtree ranges: consecutive, and the children's ranges tile it with v
          const covered = [v];
          for (const c of node.children) for (let x = c.lo; x <= c.hi; x++) covered.push(x);
          covered.sort((a, b) => a - b);
          expect(covered).toEqual(Array.from({ length: node.hi - node.lo + 1 }, (_, i) => node.lo + i));
        }
        expect(binomialNode(p, root, root)).toMatchObject({ lo: 0, hi: p - 1 });
      }
    }
  });

  it('binomialSchedule places the copy as obliviousTreeFor does (ordered and copyAll)', () => {
    for (const p of [1, 2, 5, 8, 13]) {
      for (let root = 0; root < p; root++) {
        for (const copyAll of [false, true]) {
          const tree = obliviousTreeFor(p, root, copyAll);
          const counts = Array.from({ length: p }, (_, i) => (i * 7) % 5);
          for (let v = 0; v < p; v++) {
            const node = binomialNode(p, root, v);
            const s = binomialSchedule(p, root, v, counts.slice(node.lo, node.hi + 1), copyAll);
            expect(s.copyAt).toBe(tree.copyAt[v]);
            expect(s.count).toBe(counts[v]);
            expect(s.total).toBe(counts.slice(node.lo, node.hi + 1).reduce((a, b) => a + b, 0));
            expect(s.ownOffset).toBe(counts.slice(node.lo, v).reduce((a, b) => a + b, 0));
          }
        }
      }
    }
  });

  it('ceilLog2', () => {
    expect([1, 2, 3, 4, 5, 8, 9, 1024, 1025].map(ceilLog2)).toEqual([0, 1, 2, 2, 3, 3, 4, 10, 11]);
  });
});

describe('encodeSchedules', () => {
  /** Checks the packed layouts of every rank of `tree` against the counts. */
  function checkEncoding(tree: ReturnType<typeof randomTree>, counts: number[]): void {
    const p = tree.p;
    const enc = encodeSchedules(tree, counts);
    const W = 7;
    const sub = new Array<Set<number>>(p);
    for (const v of postOrder(tree)) {
      sub[v] = new Set([v]);
      for (const c of tree.children[v]) for (const x of sub[c]) sub[v].add(x);
    }
    let at = 0;
    for (let v = 0; v < p; v++) {
      const f = v * W;
      const k = enc.fixed[f + 2];
      expect(enc.fixed[f]).toBe(counts[v]);
      expect(enc.fixed[f + 1]).toBe(tree.parent[v]);
      expect(k).toBe(tree.children[v].length);
      expect(enc.fixed[f + 3]).toBe(tree.copyAt[v]);
      const total = [...sub[v]].reduce((s, x) => s + counts[x], 0);
      expect(enc.fixed[f + 5]).toBe(total);
      // the own block and the children's messages tile [0, total) without overlap
      const pieces: [number, number][] = [[enc.fixed[f + 4], counts[v]]];
      for (let j = 0; j < k; j++) {
        const c = enc.children[at + 3 * j];
        expect(c).toBe(tree.children[v][j]);
        const size = [...sub[c]].reduce((s, x) => s + counts[x], 0);
        expect(enc.children[at + 3 * j + 1]).toBe(size);
        pieces.push([enc.children[at + 3 * j + 2], size]);
      }
      at += 3 * k;
      pieces.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      let off = 0;
      for (const [o, n] of pieces) {
        expect(o).toBe(off);
        off += n;
      }
      expect(off).toBe(total);
    }
    expect(at).toBe(enc.children.length);
    // the root's children: packed rank sequences are exactly their subtrees
    const r = tree.root;
    expect(enc.root.parent).toBe(-1);
    for (const slot of enc.root.children) {
      expect([...(slot.ranks as Int32Array)].sort((a, b) => a - b)).toEqual([...sub[slot.rank]].sort((a, b) => a - b));
    }
    expect(enc.root.children.map((c) => c.rank)).toEqual(tree.children[r]);
  }

  it('lays out random (non-ordered) trees consistently', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (p, seed) => {
        const rnd = rng(seed);
        const root = int(rnd, 0, p - 1);
        const tree = randomTree(p, root, rnd);
        const counts = Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : int(rnd, 1, 9)));
        checkEncoding(tree, counts);
      }),
      { numRuns: 60 },
    );
  });

  it('packs ordered trees in rank order (the root sees consecutive ranges)', () => {
    const rnd = rng(7);
    for (let trial = 0; trial < 20; trial++) {
      const p = int(rnd, 2, 30);
      const counts = Array.from({ length: p }, () => int(rnd, 0, 50));
      const root = int(rnd, 0, p - 1);
      const tree = optimalTree(counts, linearModel({ alpha: int(rnd, 0, 100), beta: 1, gamma: int(rnd, 0, 2) }), { root }).tree;
      expect(isOrdered(tree)).toBe(true);
      checkEncoding(tree, counts);
      for (const slot of encodeSchedules(tree, counts).root.children) {
        const ranks = [...(slot.ranks as Int32Array)];
        expect(ranks).toEqual(Array.from({ length: ranks.length }, (_, i) => ranks[0] + i));
      }
    }
  });

  it('handles two-block trees (non-ordered domains)', () => {
    const counts = [9, 1, 1, 9, 1, 9, 9, 1, 1, 1, 9];
    for (let root = 0; root < counts.length; root++) {
      checkEncoding(twoBlockTree(counts, linearModel({ alpha: 50, beta: 1, gamma: 1 }), { root }).tree, counts);
    }
  });
});

describe('layout: block placement at the root', () => {
  const layout = { counts: [2, 0, 3, 1], displs: [0, 7, 2, 5], unitBytes: 2 };

  it('prefix sums and range sizes', () => {
    const prefix = prefixSums([2, 0, 3, 1]);
    expect(Array.from(prefix)).toEqual([0, 2, 2, 5, 6]);
    expect(rangeElements(prefix, 1, 3)).toBe(4);
    expect(rangeElements(prefix, 0, 0)).toBe(2);
  });

  it('contiguous blocks (empty ones skipped) give one view of the user buffer', () => {
    const buf = new Uint8Array(16);
    const pl = rangePlacement(buf, layout, 0, 3);
    // ranks 0..3 in rank order: 0 at bytes 0..3, 1 empty, 2 at 4..9, 3 at 10..11
    expect(pl.bytes).toBe(12);
    expect(pl.segments).toBe(1);
    const view = pl.buffer as Uint8Array;
    expect(view).toBeInstanceOf(Uint8Array);
    expect(view.buffer).toBe(buf.buffer);
    expect(view.byteOffset).toBe(0);
    expect(view.length).toBe(12);
    const empty = rangePlacement(buf, layout, 1, 1);
    expect(empty.bytes).toBe(0);
    expect(empty.segments).toBe(0);
    expect(byteLength(empty.buffer)).toBe(0);
  });

  it('out-of-order blocks give their views in sequence order (vectored), adjacent views merged, no staging', () => {
    const buf = new Uint8Array(16).fill(0xee);
    // ranks 3 then 0: block 3 at bytes 10..11, block 0 at 0..3, not contiguous in this order
    const g = sequencePlacement(buf, layout, [3, 0]);
    expect(g.bytes).toBe(6);
    expect(g.segments).toBe(2);
    const segs = g.buffer as readonly Uint8Array[];
    expect(Array.isArray(segs)).toBe(true);
    expect(segs.map((x) => [x.byteOffset, x.length])).toEqual([
      [10, 2],
      [0, 4],
    ]);
    for (const x of segs) expect(x.buffer).toBe(buf.buffer);
    // receiving the packed message fills the blocks in place
    copyBytes(g.buffer, Uint8Array.from([1, 2, 3, 4, 5, 6]), 6);
    expect(Array.from(buf)).toEqual([3, 4, 5, 6, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 1, 2, 0xee, 0xee, 0xee, 0xee]);
    // sending packs them in sequence order, reading the buffer's current contents
    buf[10] = 9;
    expect(Array.from(contiguous(g.buffer))).toEqual([9, 2, 3, 4, 5, 6]);
    // ranks 0, 2, 1 (empty), 3: 0 and 2 adjacent, then 3 adjacent to 2: one view
    const merged = sequencePlacement(buf, layout, [0, 2, 1, 3]);
    expect(merged.segments).toBe(1);
    // ranks 2, 0: 2 ends at byte 10, 0 starts at 0: two segments
    expect(sequencePlacement(buf, layout, [2, 0, 1]).segments).toBe(2);
    // gapped displacements: [0, 10] with a gap between
    const gapped = { counts: [2, 2], displs: [0, 3], unitBytes: 1 };
    const gp = rangePlacement(buf, gapped, 0, 1);
    expect(gp.segments).toBe(2);
    expect((gp.buffer as readonly Uint8Array[]).map((x) => x.byteOffset)).toEqual([0, 3]);
  });
});
