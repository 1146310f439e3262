/**
 * A binary min-heap of simulator events ordered by (time, seq): events at the same virtual
 * time come out in the order they were pushed, so the simulation is deterministic.
 */
export interface HeapItem {
  /** Virtual time of the event. */
  t: number;
  /** Insertion sequence number (tie-break). */
  s: number;
}

export class EventHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(x: T): void {
    const a = this.items;
    let i = a.length;
    a.push(x);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const y = a[parent];
      if (y.t < x.t || (y.t === x.t && y.s < x.s)) break;
      a[i] = y;
      i = parent;
    }
    a[i] = x;
  }

  pop(): T | undefined {
    const a = this.items;
    const n = a.length;
    if (n === 0) return undefined;
    const top = a[0];
    const last = a.pop() as T;
    if (n === 1) return top;
    const m = n - 1;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= m) break;
      const r = c + 1;
      if (r < m && (a[r].t < a[c].t || (a[r].t === a[c].t && a[r].s < a[c].s))) c = r;
      const y = a[c];
      if (last.t < y.t || (last.t === y.t && last.s < y.s)) break;
      a[i] = y;
      i = c;
    }
    a[i] = last;
    return top;
  }

  /** Every item, in no particular order. */
  toArray(): readonly T[] {
    return this.items;
  }
}
