import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { InvalidArgumentError } from '../src/errors.js';
import {
  boundedVector,
  bucket,
  circularVector,
  contiguous,
  elementOffset,
  forEachRun,
  indexed,
  indexedBlock,
  normalize,
  pack,
  requiredLength,
  resized,
  runs,
  signature,
  stretchedVector,
  unpack,
  vector,
  views,
  withDisplacements,
  type Layout,
} from '../src/layout/index.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { BIG } from './helpers/big.js';
import { invalidField } from './helpers/errors.js';

/**
 * A layout with its naive reference: the element offsets of ONE repetition written out from
 * the constructor's definition (not from the library), and the extent the definition gives.
 */
interface Case {
  readonly name: string;
  readonly layout: Layout;
  readonly offsets: readonly number[];
  readonly extent: number;
}

const sum = (a: readonly number[]): number => a.reduce((x, y) => x + y, 0);

function naiveBlocks(lengths: readonly number[], displs: readonly number[]): number[] {
  const out: number[] = [];
  lengths.forEach((len, j) => {
    for (let q = 0; q < len; q++) out.push(displs[j] + q);
  });
  return out;
}

function naiveEnd(lengths: readonly number[], displs: readonly number[]): number {
  let end = 0;
  lengths.forEach((len, j) => {
    if (len > 0) end = Math.max(end, displs[j] + len);
  });
  return end;
}

/** The bounded vector's logical positions, in element order, from the definition. */
function naiveBounded(count: number, bl: number, stride: number, bound: number, start: number): number[] {
  const out: number[] = [];
  for (let t = 0; t < count; t++) {
    for (let q = 0; q < bl; q++) {
      const x = start + t * stride + q;
      if (x < bound) out.push(x);
    }
  }
  return out;
}

/** Element offsets of elements first … first + count − 1 of the repetition, from the reference. */
function expected(c: Case, first: number, count: number): number[] {
  const n = c.offsets.length;
  const out: number[] = [];
  for (let e = first; e < first + count; e++) out.push(Math.floor(e / n) * c.extent + c.offsets[e % n]);
  return out;
}

/** Element offsets of the library's runs, element by element. */
function expand(layout: Layout, first: number, count: number): number[] {
  const out: number[] = [];
  forEachRun(layout, first, count, (o, l) => {
    expect(l).toBeGreaterThan(0);
    for (let q = 0; q < l; q++) out.push(o + q);
  });
  return out;
}

const small = (max: number): fc.Arbitrary<number> => fc.integer({ min: 0, max });
const lengthsArb = (max: number): fc.Arbitrary<number[]> => fc.array(small(max), { maxLength: 8, size: 'medium' });

const contiguousCase: fc.Arbitrary<Case> = small(12).map((n) => ({
  name: `contiguous(${n})`,
  layout: contiguous(n),
  offsets: Array.from({ length: n }, (_, i) => i),
  extent: n,
}));

const vectorCase: fc.Arbitrary<Case> = fc.tuple(small(5), small(4), small(7)).map(([count, bl, stride]) => {
  const offsets: number[] = [];
  for (let t = 0; t < count; t++) for (let q = 0; q < bl; q++) offsets.push(t * stride + q);
  return {
    name: `vector(${count}, ${bl}, ${stride})`,
    layout: vector(count, bl, stride),
    offsets,
    extent: offsets.length === 0 ? 0 : (count - 1) * stride + bl,
  };
});

const indexedCase: fc.Arbitrary<Case> = lengthsArb(4)
  .chain((ls) => fc.tuple(fc.constant(ls), fc.array(small(20), { minLength: ls.length, maxLength: ls.length })))
  .chain(([ls, ds]) =>
    fc.boolean().map((gatherv) => ({
      name: `${gatherv ? 'withDisplacements' : 'indexed'}([${ls}], [${ds}])`,
      layout: gatherv ? withDisplacements(ls, ds) : indexed(ls, ds),
      offsets: naiveBlocks(ls, ds),
      extent: naiveEnd(ls, ds),
    })),
  );

/** Non-overlapping indexed blocks in a random order (a gatherv layout with permuted displacements). */
const permutedCase: fc.Arbitrary<Case> = fc
  .tuple(lengthsArb(4), lengthsArb(3))
  .chain(([ls, gaps]) =>
    fc.tuple(fc.constant(ls), fc.constant(gaps), fc.shuffledSubarray(ls.map((_, j) => j), { minLength: ls.length, maxLength: ls.length })),
  )
  .map(([ls, gaps, order]) => {
    const ds = new Array<number>(ls.length).fill(0);
    let at = 0;
    order.forEach((j, k) => {
      at += gaps[k % Math.max(1, gaps.length)] ?? 0;
      ds[j] = at;
      at += ls[j];
    });
    return { name: `withDisplacements([${ls}], [${ds}])`, layout: withDisplacements(ls, ds), offsets: naiveBlocks(ls, ds), extent: naiveEnd(ls, ds) };
  });

const indexedBlockCase: fc.Arbitrary<Case> = fc.tuple(small(4), fc.array(small(20), { maxLength: 7, size: 'medium' })).map(([bl, ds]) => ({
  name: `indexedBlock(${bl}, [${ds}])`,
  layout: indexedBlock(bl, ds),
  offsets: naiveBlocks(ds.map(() => bl), ds),
  extent: bl === 0 || ds.length === 0 ? 0 : Math.max(...ds) + bl,
}));

const bucketCase: fc.Arbitrary<Case> = small(5).chain((size) =>
  fc.array(small(size), { maxLength: 8, size: 'medium' }).map((counts) => ({
    name: `bucket(${size}, [${counts}])`,
    layout: bucket(size, counts),
    offsets: naiveBlocks(
      counts,
      counts.map((_, i) => i * size),
    ),
    extent: counts.length * size,
  })),
);

const boundedArgs = fc
  .tuple(small(6), small(4), small(4), small(25), small(6))
  .map(([count, bl, extra, bound, start]) => ({ count, bl, stride: bl + extra, bound, start }));

const boundedCase: fc.Arbitrary<Case> = boundedArgs.map(({ count, bl, stride, bound, start }) => ({
  name: `boundedVector(${count}, ${bl}, ${stride}, ${bound}, ${start})`,
  layout: boundedVector(count, bl, stride, bound, start),
  offsets: naiveBounded(count, bl, stride, bound, start),
  extent: bound,
}));

const circularCase: fc.Arbitrary<Case> = fc.tuple(boundedArgs, small(60)).map(([{ count, bl, stride, bound, start }, rotate]) => ({
  name: `circularVector(${count}, ${bl}, ${stride}, ${bound}, ${rotate}, ${start})`,
  layout: circularVector(count, bl, stride, bound, rotate, start),
  offsets: naiveBounded(count, bl, stride, bound, start).map((x) => (x + rotate) % bound),
  extent: bound,
}));

const stretchedCase: fc.Arbitrary<Case> = fc
  .tuple(lengthsArb(4), fc.integer({ min: 1, max: 6 }))
  .chain(([b, p]) => fc.tuple(fc.constant(b), fc.constant(p), fc.integer({ min: 0, max: p - 1 })))
  .map(([b, p, i]) => {
    const offsets: number[] = [];
    b.forEach((len, j) => {
      for (let q = 0; q < len; q++) offsets.push(i * len + p * sum(b.slice(0, j)) + q);
    });
    return { name: `stretchedVector([${b}], ${p}).typeOf(${i})`, layout: stretchedVector(b, p).typeOf(i), offsets, extent: p * sum(b) };
  });

const baseCase = fc.oneof(
  contiguousCase,
  vectorCase,
  indexedCase,
  permutedCase,
  indexedBlockCase,
  bucketCase,
  boundedCase,
  circularCase,
  stretchedCase,
);

const resizedCase: fc.Arbitrary<Case> = fc.tuple(baseCase, small(30)).map(([c, extent]) => ({
  name: `resized(${c.name}, ${extent})`,
  layout: resized(c.layout, extent),
  offsets: c.offsets,
  extent,
}));

const anyCase = fc.oneof({ weight: 9, arbitrary: baseCase }, { weight: 1, arbitrary: resizedCase });

/** A case with a range of elements spanning up to ~3.5 repetitions (empty when the layout is). */
const caseWithRange = anyCase.chain((c) => {
  const n = c.offsets.length;
  if (n === 0) return fc.constant({ c, first: 0, count: 0 });
  return fc.tuple(fc.integer({ min: 0, max: 2 * n }), fc.integer({ min: 0, max: 3 * n + 2 })).map(([first, count]) => ({ c, first, count }));
});

const RUNS = BIG ? 3000 : 600;

describe('layout constructors against their naive expansion', () => {
  it('size, extent and the elements of any range over several repetitions match the definition', () => {
    fc.assert(
      fc.property(caseWithRange, ({ c, first, count }) => {
        const { layout } = c;
        expect(layout.size, c.name).toBe(c.offsets.length);
        expect(layout.extent, c.name).toBe(c.extent);
        const want = expected(c, first, count);
        expect(expand(layout, first, count), c.name).toEqual(want);
        expect(requiredLength(layout, first, count)).toBe(want.length === 0 ? 0 : Math.max(...want) + 1);
        if (count > 0) expect(elementOffset(layout, first + count - 1)).toBe(want[want.length - 1]);
        // Merged runs: same elements, maximal (no run starts where the previous ended).
        const r = runs(layout, first, count);
        const flat: number[] = [];
        r.offsets.forEach((o, t) => {
          expect(r.lengths[t]).toBeGreaterThan(0);
          if (t > 0) expect(o).not.toBe(r.offsets[t - 1] + r.lengths[t - 1]);
          for (let q = 0; q < r.lengths[t]; q++) flat.push(o + q);
        });
        expect(flat).toEqual(want);
        // Normal form: same elements, size and extent; signature: contiguous of the same size.
        const norm = normalize(layout);
        expect(norm.size).toBe(layout.size);
        expect(norm.extent).toBe(layout.extent);
        expect(expand(norm, first, count)).toEqual(want);
        const sig = signature(layout);
        expect([sig.size, sig.extent]).toEqual([layout.size, layout.size]);
        expect(expand(sig, first, count)).toEqual(Array.from({ length: count }, (_, k) => first + k));
      }),
      { numRuns: RUNS, seed: 5001 },
    );
  });

  it('worked examples (the pictures of docs/layouts.md)', () => {
    const listed = (l: Layout, first = 0, count = l.size): [number[], number[]] => {
      const r = runs(l, first, count);
      return [r.offsets, r.lengths];
    };
    expect(listed(vector(3, 2, 5))).toEqual([
      [0, 5, 10],
      [2, 2, 2],
    ]);
    expect(listed(bucket(4, [2, 0, 3]))).toEqual([
      [0, 8],
      [2, 3],
    ]);
    expect(bucket(4, [2, 0, 3]).extent).toBe(12);
    // gatherv: rank 1's 3 elements are elements 2..4 of the layout, at its displacement 10.
    const g = withDisplacements([2, 3, 1], [4, 10, 0]);
    expect(listed(g, 2, 3)).toEqual([[10], [3]]);
    expect(listed(g)).toEqual([
      [4, 10, 0],
      [2, 3, 1],
    ]);
    // bounded: blocks at 1, 5 (9 ≥ 7 vanishes); circular: rotated by 5 modulo 7, the first block wraps.
    expect(listed(boundedVector(10, 2, 4, 7, 1))).toEqual([
      [1, 5],
      [2, 2],
    ]);
    expect(listed(boundedVector(10, 2, 4, 6, 1))).toEqual([
      [1, 5],
      [2, 1],
    ]);
    expect(listed(circularVector(10, 2, 4, 7, 5, 1))).toEqual([
      [6, 0, 3],
      [1, 1, 2],
    ]);
    // stretched vector b = [1, 2], p = 3: super-blocks [0..2] and [3..8].
    const sv = stretchedVector([1, 2], 3);
    expect([0, 1, 2].map((i) => listed(sv.typeOf(i)))).toEqual([
      [
        [0, 3],
        [1, 2],
      ],
      [
        [1, 5],
        [1, 2],
      ],
      [
        [2, 7],
        [1, 2],
      ],
    ]);
    // Repetitions: 5 elements of vector(2, 1, 3) (extent 4): 0, 3 | 4, 7 | 8.
    expect(expand(vector(2, 1, 3), 0, 5)).toEqual([0, 3, 4, 7, 8]);
    expect(expand(resized(vector(2, 1, 2), 1), 0, 4)).toEqual([0, 2, 1, 3]); // interleaved tiling
    expect(listed(indexedBlock(2, [6, 0, 2]))).toEqual([
      [6, 0],
      [2, 4],
    ]);
    expect(normalize(indexed([2, 2, 2], [0, 3, 6])).kind).toBe('vector');
    expect(normalize(withDisplacements([2, 3], [0, 2])).kind).toBe('contiguous');
    expect(normalize(indexed([2, 2], [5, 1])).kind).toBe('indexedBlock');
    expect(normalize(bucket(3, [1, 3])).kind).toBe('indexed'); // [1, 3] at [0, 3], extent 6 as the bucket's
    expect(normalize(bucket(3, [1, 2])).kind).toBe('resized'); // indexed extent 5, the bucket's 6
  });
});

describe('stretched vector', () => {
  it('its p types from one array equal p explicit indexed layouts, and together tile the buffer once', () => {
    fc.assert(
      fc.property(lengthsArb(5), fc.integer({ min: 1, max: 7 }), small(12), (b, p, firstRaw) => {
        const sv = stretchedVector(b, p);
        const total = sum(b);
        expect(sv.extent).toBe(p * total);
        expect(sv.storage).toBe(b.length + 1);
        const seen = new Array<number>(p * total).fill(0);
        for (let i = 0; i < p; i++) {
          const t = sv.typeOf(i);
          const displs = b.map((len, j) => i * len + p * sum(b.slice(0, j)));
          const explicit = resized(indexed(b, displs), p * total);
          const first = total === 0 ? 0 : firstRaw % total;
          const count = total === 0 ? 0 : 2 * total - first;
          expect(runs(t, first, count)).toEqual(runs(explicit, first, count));
          for (const o of expand(t, 0, total)) seen[o]++;
        }
        expect(seen.every((k) => k === 1)).toBe(true);
      }),
      { numRuns: BIG ? 1000 : 200, seed: 5002 },
    );
  });
});

describe('memory: implicit layouts stay O(input)', () => {
  it('a bucket keeps one array of p + 1 numbers; a stretched vector keeps n + 1 for all p types', () => {
    const p = 200_000;
    const counts = Array.from({ length: p }, (_, i) => (i * 7) % 5);
    const bk = bucket(4, counts);
    expect(bk.storage).toBe(p + 1);
    // element offsets far out, found without any displacement array: bucket i = 12346 holds 2
    const i = 12346;
    expect(counts[i]).toBe(2);
    const before = sum(counts.slice(0, i));
    expect(elementOffset(bk, before + 1)).toBe(4 * i + 1);
    expect(elementOffset(bk, 3 * bk.size + before)).toBe(3 * 4 * p + 4 * i);

    // p explicit indexed types would hold p·2n = 2·10^9 numbers (16 GB); the family holds n + 1.
    const n = 1000;
    const types = 1_000_000;
    const b = Array.from({ length: n }, (_, j) => 1 + (j % 3));
    const sv = stretchedVector(b, types);
    expect(sv.storage).toBe(n + 1);
    const heap0 = process.memoryUsage().heapUsed;
    const all: Layout[] = [];
    for (let i = 0; i < types; i += 1000) all.push(sv.typeOf(i));
    const last = sv.typeOf(types - 1);
    expect(last.storage).toBe(n + 1);
    const heapGrowth = process.memoryUsage().heapUsed - heap0;
    expect(heapGrowth).toBeLessThan(8 * n * types * 0.001); // ≪ one explicit type per materialised index
    // type p−1's block 999 starts at (p−1)·b[999] + p·Σ_{k<999} b[k]
    const before999 = sum(b.slice(0, n - 1));
    expect(elementOffset(last, sum(b) - b[n - 1])).toBe((types - 1) * b[n - 1] + types * before999);
    expect(all.length).toBe(1000);
  });
});

/** Bytes that differ per position, never the sentinel pattern. */
const payload = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => ((i * 131 + seed * 17) % 251) + 1);
const SENTINEL = 0;

describe('pack and unpack', () => {
  it('pack gathers exactly the elements; unpack of the packed bytes restores them and touches nothing else', () => {
    fc.assert(
      fc.property(caseWithRange, fc.integer({ min: 1, max: 5 }), small(7), small(1000), ({ c, first, count }, unit, slack, seed) => {
        const { layout } = c;
        const want = expected(c, first, count);
        const need = (want.length === 0 ? 0 : Math.max(...want) + 1) * unit;
        const src = payload(need + slack, seed);
        const packed = new Uint8Array(count * unit + slack).fill(0xee);
        expect(pack(layout, src, first, count, packed, unit)).toBe(count * unit);
        const ref: number[] = [];
        for (const o of want) for (let q = 0; q < unit; q++) ref.push(src[o * unit + q]);
        expect(Array.from(packed.subarray(0, count * unit))).toEqual(ref);
        expect(packed.subarray(count * unit).every((x) => x === 0xee)).toBe(true);

        const dst = new Uint8Array(need + slack).fill(SENTINEL);
        const overlap = new Set(want).size !== want.length;
        if (overlap) {
          expect(invalidField(() => unpack(layout, dst, first, count, packed, unit))).toBe('layout');
          expect(invalidField(() => views(layout, dst, first, count, unit))).toBe('layout');
          expect(() => views(layout, dst, first, count, unit, 'read')).not.toThrow();
          return;
        }
        expect(unpack(layout, dst, first, count, packed, unit)).toBe(count * unit);
        const touched = new Uint8Array(dst.length);
        for (const o of want) touched.fill(1, o * unit, (o + 1) * unit);
        for (let k = 0; k < dst.length; k++) expect(dst[k]).toBe(touched[k] ? src[k] : SENTINEL);
      }),
      { numRuns: RUNS, seed: 5003 },
    );
  });

  it('works on any typed array with its element size as the unit, and on a DataView in bytes', () => {
    const l = withDisplacements([2, 1], [3, 0]);
    const src = Float64Array.of(0.5, 1.5, 2.5, 3.5, 4.5);
    const packed = new Float64Array(3);
    pack(l, src, 0, 3, packed);
    expect(Array.from(packed)).toEqual([3.5, 4.5, 0.5]);
    const back = new Float64Array(5).fill(-1);
    unpack(l, back, 0, 3, packed);
    expect(Array.from(back)).toEqual([0.5, -1, -1, 3.5, 4.5]);
    const dv = new DataView(new ArrayBuffer(4));
    unpack(vector(2, 1, 2), dv, 0, 2, Uint8Array.of(7, 9));
    expect([dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3)]).toEqual([7, 0, 9, 0]);
  });

  it('the hierarchical gather permutation of TraffRougier14 Fig. 2 / Fig. 6: node-order blocks land in rank order', () => {
    // p = 6 ranks on 2 nodes, permuted: node 0 hosts ranks 4, 0, 5; node 1 hosts 2, 1, 3; m = 2 elements each.
    const nodeSorted = [4, 0, 5, 2, 1, 3];
    const m = 2;
    const nodeOrder = new Int32Array(nodeSorted.flatMap((r) => [10 * r, 10 * r + 1]));
    const root = indexedBlock(
      m,
      nodeSorted.map((r) => r * m),
    );
    const out = new Int32Array(12).fill(-1);
    // the bridge gather delivers node 1's 3·m elements as elements 6..11 of the root layout
    unpack(root, out, 3 * m, 3 * m, nodeOrder.subarray(3 * m));
    unpack(root, out, 0, 3 * m, nodeOrder.subarray(0, 3 * m));
    expect(Array.from(out)).toEqual([0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51]);
  });
});

describe('views: vectored receives and sends straight through a layout (simulator)', () => {
  const model = linearModel({ alpha: 10, beta: 1, gamma: 0 });

  it('a receive into views(...) places the bytes exactly where unpack would, in one message, no copy', async () => {
    await fc.assert(
      fc.asyncProperty(caseWithRange, fc.integer({ min: 1, max: 4 }), small(5), small(1000), async ({ c, first, count }, unit, slack, seed) => {
        const { layout } = c;
        const want = expected(c, first, count);
        fc.pre(new Set(want).size === want.length);
        const need = requiredLength(layout, first, count) * unit;
        const message = payload(count * unit, seed);
        const viaUnpack = new Uint8Array(need + slack).fill(SENTINEL);
        unpack(layout, viaUnpack, first, count, message, unit);
        const into = new Uint8Array(need + slack).fill(SENTINEL);
        const res = await runSim(
          2,
          async (comm: Communicator) => {
            if (comm.rank === 0) {
              await comm.send(1, 7, message);
              return 0;
            }
            const st = await comm.recv(0, 7, views(layout, into, first, count, unit));
            return st.bytes;
          },
          { model, trace: true },
        );
        expect(res.results[1]).toBe(count * unit);
        expect(res.messages).toBe(1);
        expect(res.time).toBe(count === 0 ? 0 : 10 + count * unit); // α + β·bytes (empty messages are free)
        expect(res.trace?.copies.length).toBe(0);
        expect(Array.from(into)).toEqual(Array.from(viaUnpack));
      }),
      { numRuns: BIG ? 300 : 60, seed: 5004 },
    );
  });

  it('layout to layout: send through views(A, read), receive through views(B) = pack(A) then unpack(B)', async () => {
    await fc.assert(
      fc.asyncProperty(caseWithRange, caseWithRange, small(1000), async (a, b, seed) => {
        const count = Math.min(a.count, b.count);
        const wantB = expected(b.c, b.first, count);
        fc.pre(new Set(wantB).size === wantB.length);
        const src = payload(requiredLength(a.c.layout, a.first, count) * 2, seed);
        const packed = new Uint8Array(count * 2);
        pack(a.c.layout, src, a.first, count, packed, 2);
        const ref = new Uint8Array(requiredLength(b.c.layout, b.first, count) * 2 + 3);
        unpack(b.c.layout, ref, b.first, count, packed, 2);
        const into = new Uint8Array(ref.length);
        await runSim(
          2,
          async (comm: Communicator) => {
            if (comm.rank === 0) await comm.send(1, 1, views(a.c.layout, src, a.first, count, 2, 'read'));
            else await comm.recv(0, 1, views(b.c.layout, into, b.first, count, 2));
          },
          { model },
        );
        expect(Array.from(into)).toEqual(Array.from(ref));
      }),
      { numRuns: BIG ? 200 : 40, seed: 5005 },
    );
  });

  it('views: one view for one run, an empty view for none, Float64Array elements by default', () => {
    const buf = new Float64Array(10);
    const one = views(withDisplacements([2, 3], [4, 6]), buf, 0, 5);
    expect(one).toBeInstanceOf(Uint8Array);
    expect([(one as Uint8Array).byteOffset, (one as Uint8Array).byteLength]).toEqual([32, 40]);
    const none = views(bucket(3, [0, 0]), buf, 0, 0);
    expect((none as Uint8Array).byteLength).toBe(0);
    const two = views(vector(2, 1, 3), buf, 0, 2) as Uint8Array[];
    expect(two.map((v) => [v.byteOffset, v.byteLength])).toEqual([
      [0, 8],
      [24, 8],
    ]);
    // elements 1 and 2 of vector(2, 1, 3) (extent 4) are at 3 and 4: one merged view
    expect(views(vector(2, 1, 3), buf, 1, 2)).toBeInstanceOf(Uint8Array);
  });
});

describe('validation', () => {
  it('bad constructor arguments name their field', () => {
    expect(invalidField(() => contiguous(-1))).toBe('n');
    expect(invalidField(() => vector(2, 1.5, 3))).toBe('blocklength');
    expect(invalidField(() => vector(2, 1, -3))).toBe('stride');
    expect(invalidField(() => indexed([1, 2], [0]))).toBe('displs');
    expect(invalidField(() => indexed([1, -2], [0, 4]))).toBe('blocklengths[1]');
    expect(invalidField(() => withDisplacements([1, 2], [0, -4]))).toBe('displs[1]');
    expect(invalidField(() => withDisplacements('12' as unknown as number[], [0, 4]))).toBe('counts');
    expect(invalidField(() => indexedBlock(2, [0, Number.NaN]))).toBe('displs[1]');
    expect(invalidField(() => bucket(3, [1, 4]))).toBe('counts[1]');
    expect(invalidField(() => bucket(-3, [1]))).toBe('bucketSize');
    expect(invalidField(() => boundedVector(3, 4, 2, 20))).toBe('stride');
    expect(invalidField(() => boundedVector(3, 1, 2, -1))).toBe('bound');
    expect(invalidField(() => circularVector(3, 1, 2, 9, -1))).toBe('rotate');
    expect(invalidField(() => stretchedVector([1, -1], 3))).toBe('b[1]');
    expect(invalidField(() => stretchedVector([1, 1], 3).typeOf(3))).toBe('i');
    expect(invalidField(() => resized(vector(1, 1, 1), -1))).toBe('extent');
    expect(invalidField(() => vector(2 ** 30, 2 ** 30, 1))).toBe('count');
  });

  it('bad ranges, units and buffers name their field', () => {
    const l = vector(3, 2, 4); // extent 10
    const buf = new Uint8Array(10);
    expect(invalidField(() => pack(l, buf, -1, 2, buf))).toBe('first');
    expect(invalidField(() => pack(l, buf, 0, 2.5, buf))).toBe('count');
    expect(invalidField(() => pack(contiguous(0), buf, 0, 1, buf))).toBe('count');
    expect(invalidField(() => pack(l, buf, 0, 7, new Uint8Array(7)))).toBe('src'); // element 6 at offset 10
    expect(invalidField(() => pack(l, new Uint8Array(20), 0, 7, new Uint8Array(6)))).toBe('dst');
    expect(invalidField(() => unpack(l, new Uint8Array(20), 0, 7, new Uint8Array(6)))).toBe('src');
    expect(invalidField(() => unpack(l, new Uint8Array(10), 0, 7, new Uint8Array(7)))).toBe('dst');
    expect(invalidField(() => views(l, new Uint8Array(19), 0, 6, 2))).toBe('buf');
    expect(invalidField(() => views(l, buf, 0, 1, 0))).toBe('unitBytes');
    expect(invalidField(() => views(l, [1, 2] as unknown as Uint8Array, 0, 1))).toBe('buf');
    expect(invalidField(() => views(l, buf, 0, 1, 1, 'both' as 'read'))).toBe('access');
    expect(() => views(l, new Uint8Array(20), 0, 6, 2)).not.toThrow();
    const e = (() => {
      try {
        pack(l, buf, 0, 7, buf);
      } catch (err) {
        return err as InvalidArgumentError;
      }
      return undefined;
    })();
    expect(e?.message).toMatch(/src.*holds 10 bytes, needs 11/);
  });
});

describe('review fixes: ranges, non-layouts, offsets beyond 2^53', () => {
  /** One of every layout kind, each with 2 elements in one repetition. */
  const everyKind = (): Layout[] => [
    contiguous(2),
    vector(2, 1, 3),
    indexed([1, 1], [4, 0]),
    withDisplacements([2], [1]),
    indexedBlock(1, [3, 0]),
    bucket(3, [1, 0, 1]),
    boundedVector(3, 1, 2, 4),
    circularVector(2, 1, 2, 5, 4),
    stretchedVector([1, 1], 2).typeOf(1),
    resized(indexed([2], [0]), 5),
  ];

  it('Layout.visit past the end of one repetition throws (no hang, no run past the end) for every kind', () => {
    for (const l of everyKind()) {
      expect(l.size).toBe(2);
      const got: number[][] = [];
      let emits = 0;
      const emit = (o: number, k: number): void => {
        if (++emits > 100) throw new Error(`${l.kind}: still emitting`);
        got.push([o, k]);
      };
      expect(invalidField(() => l.visit(0, 3, emit))).toBe('count');
      expect(invalidField(() => l.visit(1, 2, emit))).toBe('count');
      expect(invalidField(() => l.visit(3, 0, emit))).toBe('first');
      expect(invalidField(() => l.visit(-1, 1, emit))).toBe('first');
      expect(invalidField(() => l.visit(0, 0.5, emit))).toBe('count');
      expect(got).toEqual([]);
      l.visit(0, 2, emit);
      l.visit(2, 0, emit);
      expect(sum(got.map(([, k]) => k))).toBe(2);
    }
    // the reviewer's repros: indexed hung, vector emitted a run past its single element
    expect(invalidField(() => indexed([1], [0]).visit(0, 2, () => undefined))).toBe('count');
    expect(invalidField(() => vector(1, 1, 1).visit(0, 2, () => undefined))).toBe('count');
    // ranges over repetitions (forEachRun and everything above it) still span repetitions
    expect(runs(indexed([1], [0]), 0, 2)).toEqual({ offsets: [0], lengths: [2], end: 2 });
  });

  it('anything that is not a Layout raises InvalidArgumentError naming the layout', () => {
    const buf = new Uint8Array(16);
    const notLayouts: unknown[] = [null, undefined, {}, 3, 'x', { size: 1, extent: 1 }, { size: Number.NaN, extent: 1, visit: () => undefined }];
    notLayouts.push({ size: 1, extent: -1, visit: () => undefined }, stretchedVector([1], 2));
    for (const bad of notLayouts) {
      const l = bad as Layout;
      expect(invalidField(() => normalize(l))).toBe('layout');
      expect(invalidField(() => signature(l))).toBe('layout');
      expect(invalidField(() => resized(l, 1))).toBe('layout');
      expect(invalidField(() => pack(l, buf, 0, 1, buf))).toBe('layout');
      expect(invalidField(() => unpack(l, buf, 0, 1, buf))).toBe('layout');
      expect(invalidField(() => views(l, buf, 0, 1))).toBe('layout');
      expect(invalidField(() => runs(l, 0, 1))).toBe('layout');
      expect(invalidField(() => forEachRun(l, 0, 1, () => undefined))).toBe('layout');
      expect(invalidField(() => elementOffset(l, 0))).toBe('layout');
      expect(invalidField(() => requiredLength(l, 0, 1))).toBe('layout');
    }
    // the layout is named before the other arguments
    expect(invalidField(() => pack(null as unknown as Layout, 'x' as unknown as Uint8Array, 0, 1, buf))).toBe('layout');
  });

  it('element offsets beyond 2^53 throw instead of rounding', () => {
    const B = Number.MAX_SAFE_INTEGER;
    // repetition 1 starts at 2^52 + 1; its element is at 2^53 + 1, which a double cannot hold
    const l = indexedBlock(1, [2 ** 52]);
    expect(elementOffset(l, 0)).toBe(2 ** 52);
    expect(invalidField(() => elementOffset(l, 1))).toBe('count');
    expect(invalidField(() => requiredLength(l, 0, 2))).toBe('count');
    expect(invalidField(() => runs(l, 0, 2))).toBe('count');
    // a run that starts safe but whose last element is past 2^53 − 1
    const v = resized(vector(1, 4, 1), B - 2);
    expect(runs(v, 4, 3).lengths).toEqual([3]); // offsets B − 2 … B, the last safe integer
    expect(invalidField(() => runs(v, 4, 4))).toBe('count');
    // the circular offset (x + rotate) mod bound is exact near 2^53
    expect(runs(circularVector(1, 1, 1, B, B - 2, B - 3), 0, 1).offsets).toEqual([B - 5]);
    expect(runs(circularVector(1, 2, 2, B, B - 1, B - 3), 0, 2)).toEqual({ offsets: [B - 4], lengths: [2], end: B - 2 });
    expect(runs(circularVector(1, 3, 3, B, 2, B - 3), 0, 3)).toEqual({ offsets: [B - 1, 0], lengths: [1, 2], end: B });
  });
});
