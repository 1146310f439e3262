/**
 * A binary min-heap of items keyed by two numbers (a, b), compared lexicographically. The keys
 * live in typed arrays beside the items, so an item may sit in the heap more than once (stale
 * entries are the caller's business) and its own fields can change while it is there.
 * The simulator keys events by (virtual time, insertion sequence): events of one virtual time
 * come out in the order they were pushed, so runs are deterministic.
 */
export class KeyHeap<T> {
  private ka = new Float64Array(256);
  private kb = new Float64Array(256);
  private items: (T | undefined)[] = [];
  size = 0;

  /** Key a of the minimum (undefined behaviour when empty: check `size`). */
  topA(): number {
    return this.ka[0];
  }

  /** Key b of the minimum. */
  topB(): number {
    return this.kb[0];
  }

  push(a: number, b: number, x: T): void {
    let i = this.size++;
    if (i === this.ka.length) this.grow();
    const ka = this.ka;
    const kb = this.kb;
    const items = this.items;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pa = ka[parent];
      if (pa < a || (pa === a && kb[parent] < b)) break;
      ka[i] = pa;
      kb[i] = kb[parent];
      items[i] = items[parent];
      i = parent;
    }
    ka[i] = a;
    kb[i] = b;
    items[i] = x;
  }

  pop(): T {
    const ka = this.ka;
    const kb = this.kb;
    const items = this.items;
    const top = items[0] as T;
    const m = --this.size;
    const a = ka[m];
    const b = kb[m];
    const x = items[m];
    items[m] = undefined;
    if (m === 0) return top;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= m) break;
      const r = c + 1;
      if (r < m && (ka[r] < ka[c] || (ka[r] === ka[c] && kb[r] < kb[c]))) c = r;
      if (a < ka[c] || (a === ka[c] && b < kb[c])) break;
      ka[i] = ka[c];
      kb[i] = kb[c];
      items[i] = items[c];
      i = c;
    }
    ka[i] = a;
    kb[i] = b;
    items[i] = x;
    return top;
  }

  /** Every item, in no particular order. */
  toArray(): T[] {
    return this.items.slice(0, this.size) as T[];
  }

  clear(): void {
    this.items.fill(undefined, 0, this.size);
    this.size = 0;
  }

  private grow(): void {
    const n = this.ka.length * 2;
    const ka = new Float64Array(n);
    const kb = new Float64Array(n);
    ka.set(this.ka);
    kb.set(this.kb);
    this.ka = ka;
    this.kb = kb;
  }
}

/**
 * The simulator's event queue: a KeyHeap plus a FIFO lane for the common case of many events
 * at one virtual time (e.g. every transfer of a round ends at the same time). An event whose
 * time equals the lane's goes to the lane in O(1); since sequence numbers only grow, the lane
 * stays sorted, and `pop` takes the smaller of the lane's head and the heap's top.
 */
export class EventQueue<T> {
  private readonly heap = new KeyHeap<T>();
  private laneT = 0;
  private laneS = new Float64Array(256);
  private lane: (T | undefined)[] = [];
  private head = 0;
  private tail = 0;

  get size(): number {
    return this.heap.size + this.tail - this.head;
  }

  /** Time of the earliest event (check `size` first). */
  topT(): number {
    if (this.head === this.tail) return this.heap.topA();
    if (this.heap.size === 0) return this.laneT;
    const h = this.heap.topA();
    return h < this.laneT ? h : this.laneT;
  }

  /** `s` must be larger than every sequence number pushed before. */
  push(t: number, s: number, x: T): void {
    if (this.head === this.tail) {
      this.head = this.tail = 0;
      this.laneT = t;
    } else if (t !== this.laneT) {
      this.heap.push(t, s, x);
      return;
    }
    if (this.tail === this.laneS.length) {
      const a = new Float64Array(this.laneS.length * 2);
      a.set(this.laneS);
      this.laneS = a;
    }
    this.laneS[this.tail] = s;
    this.lane[this.tail++] = x;
  }

  pop(): T {
    if (this.head < this.tail) {
      const h = this.heap;
      if (h.size === 0 || this.laneT < h.topA() || (this.laneT === h.topA() && this.laneS[this.head] < h.topB())) {
        const x = this.lane[this.head] as T;
        this.lane[this.head++] = undefined;
        return x;
      }
    }
    return this.heap.pop();
  }

  toArray(): T[] {
    return [...this.heap.toArray(), ...(this.lane.slice(this.head, this.tail) as T[])];
  }

  clear(): void {
    this.heap.clear();
    this.lane.fill(undefined, this.head, this.tail);
    this.head = this.tail = 0;
  }
}
