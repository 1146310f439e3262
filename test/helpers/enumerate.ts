/**
 * Every ordered tree over p ranks (each node's segment grows by adjacent ranges), enumerated
 * independently of src/trees/brute-force.ts, as a second ground truth for the DPs.
 */
import { TreeBuilder, type Tree } from '../../src/trees/tree.js';

export interface Sub {
  root: number;
  kids: Sub[];
}

export function allOrdered(p: number): Sub[] {
  const memo = new Map<number, Sub[]>();
  const go = (i: number, j: number, r: number): Sub[] => {
    const key = (i * p + j) * p + r;
    const hit = memo.get(key);
    if (hit) return hit;
    const out: Sub[] = [];
    if (i === j) out.push({ root: r, kids: [] });
    else {
      for (let k = r; k < j; k++) {
        for (const prev of go(i, k, r)) {
          for (let w = k + 1; w <= j; w++) for (const c of go(k + 1, j, w)) out.push({ root: r, kids: [...prev.kids, c] });
        }
      }
      for (let k = i; k < r; k++) {
        for (const prev of go(k + 1, j, r)) {
          for (let w = i; w <= k; w++) for (const c of go(i, k, w)) out.push({ root: r, kids: [...prev.kids, c] });
        }
      }
    }
    memo.set(key, out);
    return out;
  };
  const all: Sub[] = [];
  for (let r = 0; r < p; r++) all.push(...go(0, p - 1, r));
  return all;
}

export function toTree(p: number, s: Sub): Tree {
  const b = new TreeBuilder(p, s.root);
  const stack = [s];
  while (stack.length > 0) {
    const v = stack.pop()!;
    for (const c of v.kids) {
      b.addChild(v.root, c.root);
      stack.push(c);
    }
  }
  return b.build(); // ordered copy convention
}
