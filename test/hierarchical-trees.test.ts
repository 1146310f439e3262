/**
 * The trees of the hierarchical collectives' levels: the ordered-hypercube binomial role
 * (collectives/hierarchical/hypercube-role.ts) against the central builder of the same tree
 * (trees/binomial.ts obliviousTreeFor), the leaders (every node's last member unless the root is
 * on it), the two-level binomial tree against the flat tree over all ranks on regular ordered
 * placements, and the adaptive levels' data phase against the binomial levels' (the ordering of
 * Traff18 §6's hierarchical use) on random placements, blocks and machines.
 */
import { describe, expect, it } from 'vitest';
import { nodeStructure } from '../src/collectives/hierarchical/index.js';
import { hypercubeRole } from '../src/collectives/hierarchical/hypercube-role.js';
import { leaderOf } from '../src/collectives/hierarchical/level-trees.js';
import { hierarchicalModel } from '../src/model/cost-model.js';
import { adaptiveRolesOf, binomialRolesOf, predictTwoLevel, predictTwoLevelScatter, rolesTree } from '../src/run/hierarchical-predict.js';
import { obliviousTreeFor } from '../src/trees/binomial.js';
import { blockSizes, DISTRIBUTIONS } from '../src/workloads/distributions.js';
import { int, rng } from './helpers/random.js';

describe('hypercubeRole', () => {
  it('is obliviousTreeFor as every rank sees it: parent, children in receive order, and its subtree as a range', () => {
    for (let n = 1; n <= 70; n++) {
      for (let root = 0; root < n; root++) {
        const t = obliviousTreeFor(n, root);
        const size = new Int32Array(n).fill(1);
        const lo = Int32Array.from({ length: n }, (_, v) => v);
        const hi = Int32Array.from({ length: n }, (_, v) => v);
        // subtree extents bottom-up: children are received in order, each a range next to the ones before
        const order: number[] = [root];
        for (let i = 0; i < order.length; i++) order.push(...t.children[order[i]]);
        for (let i = order.length - 1; i >= 0; i--) {
          const v = order[i];
          for (const c of t.children[v]) {
            size[v] += size[c];
            lo[v] = Math.min(lo[v], lo[c]);
            hi[v] = Math.max(hi[v], hi[c]);
          }
        }
        for (let v = 0; v < n; v++) {
          const role = hypercubeRole(n, root, v);
          expect(role.parent).toBe(t.parent[v]);
          expect(role.children.map((c) => c.peer)).toEqual([...t.children[v]].reverse());
          for (const c of role.children) expect([c.lo, c.hi]).toEqual([lo[c.peer], hi[c.peer]]);
          expect([role.lo, role.hi]).toEqual([lo[v], hi[v]]);
          expect(hi[v] - lo[v] + 1).toBe(size[v]);
        }
      }
    }
  });
});

describe('the two-level binomial tree', () => {
  it('leaders: the root on its node, every other node\'s last member', () => {
    const nodeOf = [2, 0, 1, 0, 2, 1, 1, 0, 2, 2];
    const s = nodeStructure(nodeOf.length, (r) => nodeOf[r]);
    for (let root = 0; root < nodeOf.length; root++) {
      const rootNode = s.nodeIndex[root];
      for (let b = 0; b < s.nodes; b++) {
        const members = s.members[b];
        expect(leaderOf(s, rootNode, root, b)).toBe(b === rootNode ? root : Math.max(...members));
      }
    }
  });

  it('on 2^a nodes × 2^b ranks in rank order it is the flat ordered-hypercube tree over all ranks, edge for edge, whatever the root', () => {
    for (const [nodes, per] of [
      [4, 4],
      [8, 2],
      [2, 8],
      [4, 8],
      [1, 16],
      [16, 1],
    ]) {
      const p = nodes * per;
      const s = nodeStructure(p, (r) => Math.floor(r / per));
      for (let root = 0; root < p; root++) {
        const two = rolesTree(s, root, binomialRolesOf(s, root));
        const flat = obliviousTreeFor(p, root);
        expect(Array.from(two.parent)).toEqual(Array.from(flat.parent));
      }
    }
  });

  it('adaptive levels move the data no slower than binomial levels but in rare latency-bound cases: 400 random placements, blocks, roots and machines, gatherv and scatterv', () => {
    // Traff18's tree is a heuristic (its joins are decided on the level's blocks alone, with
    // every leaf ready at 0 and receives in join order): not a theorem, so the test bounds how
    // often and by how much it loses (seeded: 1 of the 400 here, 6.6 %; 4 of 4000 within 14.4 %)
    const rnd = rng(2026);
    let strictlyFaster = 0;
    const slower: string[] = [];
    let worst = 1;
    for (let t = 0; t < 400; t++) {
      const sizes = Array.from({ length: int(rnd, 1, 20) }, () => int(rnd, 1, 16));
      const nodeOf: number[] = [];
      sizes.forEach((k, b) => {
        for (let i = 0; i < k; i++) nodeOf.push(b);
      });
      if (rnd() < 0.6) {
        for (let i = nodeOf.length - 1; i > 0; i--) {
          const j = int(rnd, 0, i);
          [nodeOf[i], nodeOf[j]] = [nodeOf[j], nodeOf[i]];
        }
      }
      const p = nodeOf.length;
      const root = int(rnd, 0, p - 1);
      const alpha = [0.1, 0.5, 1][int(rnd, 0, 2)];
      const ratio = [0.5, 1, 10, 100][int(rnd, 0, 3)];
      const model = hierarchicalModel({ nodeOf, intra: { alpha, beta: 1 / 4000 }, inter: { alpha: alpha * ratio, beta: 1 / int(rnd, 1000, 5000) }, gamma: 1 / 5000 });
      const dist = DISTRIBUTIONS[int(rnd, 0, DISTRIBUTIONS.length - 1)];
      const counts = blockSizes(dist, { p, b: [1, 16, 1024, 32768][int(rnd, 0, 3)], seed: int(rnd, 1, 1000) });
      const s = nodeStructure(p, (r) => nodeOf[r]);
      const blockBytes = Float64Array.from(counts);
      const adaptive = rolesTree(s, root, adaptiveRolesOf(s, root, counts, model));
      const binomial = rolesTree(s, root, binomialRolesOf(s, root));
      const label = `case ${t}: ${nodeOf.length} ranks on ${sizes.length} nodes, root ${root}, ${dist}, α ${alpha}, 1:${ratio}`;
      const gather = (tree: typeof adaptive): number => predictTwoLevel({ structure: s, blockBytes, root, unitBytes: 1, trailerBytes: 8, reorder: false, tree }, model);
      const scatter = (tree: typeof adaptive): number => predictTwoLevelScatter({ structure: s, tree, blockBytes, root, unitBytes: 1, reorder: false }, model);
      const [ga, gb, sa, sb] = [gather(adaptive), gather(binomial), scatter(adaptive), scatter(binomial)];
      if (ga > gb * (1 + 1e-12)) slower.push(`gatherv ${label}: ${(ga / gb).toFixed(3)}`);
      if (sa > sb * (1 + 1e-12)) slower.push(`scatterv ${label}: ${(sa / sb).toFixed(3)}`);
      worst = Math.max(worst, ga / gb, sa / sb);
      if (ga < gb * (1 - 1e-9)) strictlyFaster++;
    }
    expect(slower.length, slower.join('\n')).toBeLessThanOrEqual(4); // 1 % of the 800 calls
    expect(worst, slower.join('\n')).toBeLessThan(1.15);
    // the adaptive trees are not the binomial ones in disguise
    expect(strictlyFaster).toBeGreaterThan(100);
  });
});
