/**
 * The heaps of sim/heap.ts over integer items (operation numbers of the schedule replay,
 * replay.ts): keys and items all in typed arrays, so a heap of millions of entries is a few
 * flat arrays and pushing allocates nothing once grown. Same order: lexicographic on the two
 * keys; IntEventQueue adds the FIFO lane for events of one virtual time.
 */
export class IntKeyHeap {
  private ka = new Float64Array(256);
  private kb = new Float64Array(256);
  private items = new Int32Array(256);
  size = 0;

  topA(): number {
    return this.ka[0];
  }

  topB(): number {
    return this.kb[0];
  }

  push(a: number, b: number, x: number): void {
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

  pop(): number {
    const ka = this.ka;
    const kb = this.kb;
    const items = this.items;
    const top = items[0];
    const m = --this.size;
    const a = ka[m];
    const b = kb[m];
    const x = items[m];
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

  private grow(): void {
    const n = this.ka.length * 2;
    const ka = new Float64Array(n);
    const kb = new Float64Array(n);
    const items = new Int32Array(n);
    ka.set(this.ka);
    kb.set(this.kb);
    items.set(this.items);
    this.ka = ka;
    this.kb = kb;
    this.items = items;
  }
}

/** sim/heap.ts EventQueue over integer items: a heap plus a FIFO lane for one virtual time. */
export class IntEventQueue {
  private readonly heap = new IntKeyHeap();
  private laneT = 0;
  private laneS = new Float64Array(256);
  private lane = new Int32Array(256);
  private head = 0;
  private tail = 0;

  get size(): number {
    return this.heap.size + this.tail - this.head;
  }

  topT(): number {
    if (this.head === this.tail) return this.heap.topA();
    if (this.heap.size === 0) return this.laneT;
    const h = this.heap.topA();
    return h < this.laneT ? h : this.laneT;
  }

  /** `s` must be larger than every sequence number pushed before. */
  push(t: number, s: number, x: number): void {
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
      const l = new Int32Array(this.lane.length * 2);
      l.set(this.lane);
      this.lane = l;
    }
    this.laneS[this.tail] = s;
    this.lane[this.tail++] = x;
  }

  pop(): number {
    if (this.head < this.tail) {
      const h = this.heap;
      if (h.size === 0 || this.laneT < h.topA() || (this.laneT === h.topA() && this.laneS[this.head] < h.topB())) {
        return this.lane[this.head++];
      }
    }
    return this.heap.pop();
  }
}
