/**
 * The ordered binomial tree the rooted building blocks (bcast, reduce, gather, scatter) share.
 *
 * Recursive halving of the rank range [0, p−1]: the holder of a range [lo, hi] (at first the
 * root) splits it into [lo, mid] and [mid+1, hi] (the left half has ⌈n/2⌉ ranks), hands the
 * half it is not in to that half's rank nearest to it, and keeps the other; both recurse. Every
 * subtree is a contiguous range of ranks, whatever the root, so
 * - gather/scatter place every subtree's blocks with one offset (blocks are in rank order at
 *   the root with no reordering copy, intermediate ranks send one contiguous buffer);
 * - reduce combines adjacent ranges only, in rank order, so non-commutative operators are
 *   correct for every root.
 * Depth ⌈log₂p⌉ (each split at most halves a range rounding up); for root 0 and p = 2^k it is
 * the classic binomial tree (Chan et al. 2007, as cited by Traff18 §1). O(log p) per rank.
 */

/** A child's subtree: the child rank and the range of ranks under it. */
export interface Subtree {
  readonly peer: number;
  readonly lo: number;
  readonly hi: number;
}

/** One rank's place in the tree. */
export interface TreeRole {
  /** −1 at the root. */
  readonly parent: number;
  /** The ranks of this rank's subtree, [lo, hi] (the root: [0, p−1]). */
  readonly lo: number;
  readonly hi: number;
  /**
   * Children in the order a broadcast sends to them (largest range first); a reduction
   * receives from them in reverse order, each range adjacent to the ranges combined so far.
   */
  readonly children: readonly Subtree[];
}

export function orderedBinomialRole(p: number, root: number, rank: number): TreeRole {
  let lo = 0;
  let hi = p - 1;
  let holder = root;
  let parent = -1;
  let myLo = 0;
  let myHi = p - 1;
  const children: Subtree[] = [];
  while (lo < hi) {
    const mid = lo + ((hi - lo) >> 1);
    const holderLeft = holder <= mid;
    const oLo = holderLeft ? mid + 1 : lo;
    const oHi = holderLeft ? hi : mid;
    const sub = holderLeft ? mid + 1 : mid;
    if (holder === rank) children.push({ peer: sub, lo: oLo, hi: oHi });
    if (rank >= oLo && rank <= oHi) {
      if (rank === sub) {
        parent = holder;
        myLo = oLo;
        myHi = oHi;
      }
      holder = sub;
      lo = oLo;
      hi = oHi;
    } else if (holderLeft) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return { parent, lo: myLo, hi: myHi, children };
}
