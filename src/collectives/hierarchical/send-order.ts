/**
 * The order in which a scatter sends to its children: by decreasing tail (Jackson's rule).
 *
 * A rank v sends its children's messages one at a time from the moment its own message is in
 * (one port): child c's message is in once the sends before it and its own have taken
 * Σ cost, and c's subtree is done `tail(c)` later. v's subtree is done
 *   tail(v) = max over the children in send order of (Σ_{j ≤ i} cost_j + tail(c_i)),
 * and sending by decreasing tail minimises it for v's tree (the exchange argument of Jackson's
 * rule for one machine with delivery times: swapping two adjacent children out of that order
 * never lowers the maximum). Applied at every rank bottom up it gives the fastest scatter over
 * a fixed tree. It is the time reverse of a gather that takes its children in the order they are
 * ready (C(c) ascending, TraffRougier14's and Traff18's receive order), so over the same tree, in a model where
 * a message costs the same in both directions, the scatter then takes the gather's time (apart
 * from the root's own copy: beside its receives in a gather, beside one of its sends in a
 * scatter, the next send waiting for it — `copySlot` picks which).
 *
 * Used by the persistent hierarchical scatterv (planned-scatter.ts: the children's tails come
 * up the tree once, at init) and by its prediction (src/run/hierarchical-predict.ts
 * `tailOrderedTree`, `plannedRootCopySlot`), so that both order the same children the same way
 * (ties keep the given order: a stable sort) and copy beside the same send.
 *
 * Cost: O(k log k) for k children (`copySlot`: O(k²)).
 */

/** Bytes of a tail on the wire (a float64, little-endian). */
export const TAIL_BYTES = 8;

export interface SendOrder {
  /** The children's indices in send order. */
  readonly order: number[];
  /** The rank's own tail: when its subtree is done, counted from its own message's arrival. */
  readonly tail: number;
}

/** `tails[i]`: child i's tail; `costs[i]`: the cost of its message (0 for a message never sent). */
export function sendOrder(tails: ArrayLike<number>, costs: ArrayLike<number>): SendOrder {
  const n = tails.length;
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => tails[b] - tails[a]);
  let t = 0;
  let tail = 0;
  for (const i of order) {
    t += costs[i];
    tail = Math.max(tail, t + tails[i]);
  }
  return { order, tail };
}

/**
 * Beside which send a root copies its own block (`copy` long) so that its subtree ends first:
 * `tails` and `costs` are its sends that move bytes, in send order. Copying beside send k (its
 * processor copies while the transfer runs; the copy holds no port) delays the sends after k by
 * what the copy outlasts the transfer; the root's end is the latest of its children's ends and
 * its copy's. Returns the index k (ties: the latest), −1 when nothing is sent. O(n²), n ≤ the
 * root's children.
 */
export function copySlot(tails: ArrayLike<number>, costs: ArrayLike<number>, copy: number): number {
  const n = tails.length;
  let best = -1;
  let bestEnd = Infinity;
  for (let k = 0; k < n; k++) {
    let t = 0;
    let end = 0;
    for (let i = 0; i < n; i++) {
      const start = t;
      t += costs[i];
      end = Math.max(end, t + tails[i]);
      if (i === k) {
        t = Math.max(t, start + copy);
        end = Math.max(end, start + copy);
      }
    }
    if (end <= bestEnd) {
      best = k;
      bestEnd = end;
    }
  }
  return best;
}

export function writeTail(tail: number): Uint8Array {
  const out = new Uint8Array(TAIL_BYTES);
  new DataView(out.buffer).setFloat64(0, tail, true);
  return out;
}

/** The tail in `data`, or −1 when it is not one (wrong length, not a finite non-negative number). */
export function readTail(data: Uint8Array): number {
  if (data.length !== TAIL_BYTES) return -1;
  const x = new DataView(data.buffer, data.byteOffset, TAIL_BYTES).getFloat64(0, true);
  return Number.isFinite(x) && x >= 0 ? x : -1;
}
