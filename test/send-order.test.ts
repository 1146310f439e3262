/**
 * send-order.ts: sending by decreasing tail (Jackson's rule) gives the smallest subtree end of
 * any order of the children (checked against every permutation), ties keep the given order, and
 * the tail's wire form; copySlot picks the send beside which the root's copy ends its subtree first.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copySlot, readTail, sendOrder, TAIL_BYTES, writeTail } from '../src/collectives/hierarchical/send-order.js';

function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  const out: number[][] = [];
  for (const rest of permutations(n - 1)) for (let i = 0; i <= rest.length; i++) out.push([...rest.slice(0, i), n - 1, ...rest.slice(i)]);
  return out;
}

/** The subtree's end when the children are sent in `order`. */
function endOf(order: readonly number[], tails: readonly number[], costs: readonly number[]): number {
  let t = 0;
  let end = 0;
  for (const i of order) {
    t += costs[i];
    end = Math.max(end, t + tails[i]);
  }
  return end;
}

describe('sendOrder (Jackson\'s rule)', () => {
  it('no order of up to 6 children ends earlier; the tail is the end of the order it returns (property)', () => {
    const child = fc.record({ tail: fc.integer({ min: 0, max: 50 }), cost: fc.integer({ min: 0, max: 20 }) });
    fc.assert(
      fc.property(fc.array(child, { maxLength: 6 }), (kids) => {
        const tails = kids.map((k) => k.tail);
        const costs = kids.map((k) => k.cost);
        const { order, tail } = sendOrder(tails, costs);
        expect([...order].sort((a, b) => a - b)).toEqual(kids.map((_, i) => i));
        expect(tail).toBe(endOf(order, tails, costs));
        const best = Math.min(...permutations(kids.length).map((o) => endOf(o, tails, costs)));
        expect(tail).toBe(best);
      }),
      { numRuns: 300 },
    );
  });

  it('orders by decreasing tail, ties in the given order; no children: tail 0', () => {
    expect(sendOrder([3, 9, 3, 5], [1, 1, 1, 1])).toEqual({ order: [1, 3, 0, 2], tail: 10 });
    expect(sendOrder([], [])).toEqual({ order: [], tail: 0 });
    // a long message to a child with a short tail goes last: max(2 + 50, 102 + 1) = 103, the other way max(100 + 1, 102 + 50) = 152
    expect(sendOrder([1, 50], [100, 2])).toEqual({ order: [1, 0], tail: 103 });
  });

  it('copySlot: the root\'s copy beside the send it picks ends the subtree no later than beside any other or after the last (property)', () => {
    /**
     * The end with the copy beside send k (k = n: after the last send), in closed form: send i
     * starts at the costs before it, plus what the copy outlasts send k for every i > k; the
     * copy starts with send k (after the last: at the sum of all costs).
     */
    const endWithCopy = (k: number, tails: readonly number[], costs: readonly number[], copy: number): number => {
      const n = tails.length;
      const before = (i: number): number => costs.slice(0, i).reduce((a, x) => a + x, 0);
      const delay = k < n ? Math.max(0, copy - costs[k]) : 0;
      const ends = tails.map((q, i) => before(i) + (i > k ? delay : 0) + costs[i] + q);
      return Math.max(0, ...ends, before(k) + copy);
    };
    const child = fc.record({ tail: fc.integer({ min: 0, max: 50 }), cost: fc.integer({ min: 1, max: 20 }) });
    fc.assert(
      fc.property(fc.array(child, { maxLength: 6 }), fc.integer({ min: 0, max: 80 }), (kids, copy) => {
        const tails = kids.map((k) => k.tail);
        const costs = kids.map((k) => k.cost);
        const k = copySlot(tails, costs, copy);
        if (kids.length === 0) {
          expect(k).toBe(-1);
        } else {
          expect(k).toBeGreaterThanOrEqual(0);
          const got = endWithCopy(k, tails, costs, copy);
          for (let j = 0; j <= kids.length; j++) expect(got).toBeLessThanOrEqual(endWithCopy(j, tails, costs, copy));
        }
      }),
      { numRuns: 300 },
    );
    // a long copy goes beside the long transfer: beside send 0 (cost 30) it hides, beside send 1 it would delay nothing but end at 31 + 25
    expect(copySlot([0, 0], [30, 1], 25)).toBe(0);
  });

  it('a tail travels as 8 bytes; anything else reads as −1', () => {
    const w = writeTail(12.375);
    expect(w.length).toBe(TAIL_BYTES);
    expect(readTail(w)).toBe(12.375);
    expect(readTail(w.subarray(1))).toBe(-1);
    expect(readTail(writeTail(-1))).toBe(-1);
    expect(readTail(writeTail(Number.NaN))).toBe(-1);
    expect(readTail(writeTail(Number.POSITIVE_INFINITY))).toBe(-1);
  });
});
