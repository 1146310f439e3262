/** Trees for tests: random gather/scatter trees (random parents, child order and copy positions); a two-level tree's subtrees. */
import type { OrderedTree } from '../../src/run/hierarchical-predict.js';
import { TreeBuilder, type Tree } from '../../src/trees/tree.js';

export function randomTree(p: number, root: number, rnd: () => number): Tree {
  const placed = [root];
  const rest = Array.from({ length: p }, (_, i) => i).filter((i) => i !== root);
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [rest[i], rest[j]] = [rest[j], rest[i]];
  }
  const b = new TreeBuilder(p, root);
  const kids: number[][] = Array.from({ length: p }, () => []);
  for (const v of rest) {
    const parent = placed[Math.floor(rnd() * placed.length)];
    kids[parent].push(v);
    placed.push(v);
  }
  for (let v = 0; v < p; v++) {
    for (const c of kids[v]) b.addChild(v, c);
    if (kids[v].length > 0) b.setCopyAt(v, Math.floor(rnd() * (kids[v].length + 1)));
  }
  return b.build();
}

/** The ranks of v's subtree in a two-level tree (src/run/hierarchical-predict.ts rolesTree). */
export function subtree(tree: OrderedTree, v: number): number[] {
  const out: number[] = [];
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop() as number;
    out.push(x);
    for (let j = tree.first[x]; j < tree.first[x + 1]; j++) stack.push(tree.kids[j]);
  }
  return out;
}
