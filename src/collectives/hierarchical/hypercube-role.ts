/**
 * The binomial tree of both hierarchical levels: Traff18 §2's binomial tree over the ordered
 * hypercube (the tree of src/trees/binomial.ts `obliviousTreeFor` and of the flat `binomial`
 * gatherv/scatterv), as one rank's role.
 *
 * Round h = 1, 2, 4, … joins the ranges [lo, lo + h − 1] and [lo + h, min(lo + 2h, n) − 1];
 * the range holding the root receives, otherwise the upper range's root receives, and the root
 * of a range without the root is its last rank. So a range's data leaves it from its last rank
 * in one message: on a node whose leader is its last member (structure.ts), the last member's
 * block reaches the bridge without a hop inside the node, and on n = 2^k ranks per node in rank
 * order the two levels together are the flat tree over all ranks, edge for edge.
 * Receives come in round order (smallest range first); the adaptive trees of level-trees.ts
 * join the same ranges in the same rounds, one of the two directions each time.
 *
 * Cost: O(log n) time per rank, no allocation but the children list.
 */
import type { Subtree, TreeRole } from '../basic/tree.js';

/** Rank `i`'s place in the ordered-hypercube binomial tree over [0, n − 1] rooted at `root`. */
export function hypercubeRole(n: number, root: number, i: number): TreeRole {
  const children: Subtree[] = [];
  let parent = -1;
  let lo = 0;
  let hi = n - 1;
  for (let h = 1; h < n; h *= 2) {
    const base = i - (i % (2 * h));
    const mid = base + h;
    if (mid >= n) continue; // i's range has no partner this round
    const top = Math.min(base + 2 * h, n) - 1;
    const lower = i < mid;
    const myLo = lower ? base : mid;
    const myHi = lower ? mid - 1 : top;
    const oLo = lower ? mid : base;
    const oHi = lower ? top : mid - 1;
    const rootMine = root >= myLo && root <= myHi;
    const rootOther = root >= oLo && root <= oHi;
    // i is its range's root here: it received in every earlier round
    if (rootMine || (!rootOther && !lower)) {
      children.push({ peer: rootOther ? root : oHi, lo: oLo, hi: oHi });
    } else {
      parent = rootOther ? root : oHi;
      lo = myLo;
      hi = myHi;
      break;
    }
  }
  children.reverse(); // largest range first, as TreeRole lists them
  return { parent, lo, hi, children };
}
