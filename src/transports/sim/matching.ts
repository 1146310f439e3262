/**
 * MPI matching for the simulator: O(1) per operation when a rank has few unmatched
 * operations, O(1) expected with many (per-(context, source) buckets).
 *
 * Per destination rank: its posted receives with a source (post order), its ANY_SOURCE
 * receives, and the unexpected sends addressed to it (arrival order), each an intrusive list.
 * Short lists are scanned; once a rank has more than INDEX_AT unmatched receives or unexpected
 * sends, its operations are also indexed by (context, source) until both lists are empty
 * again. A send takes the earliest-posted receive that accepts it (the first acceptable one
 * with its source, or the first acceptable ANY_SOURCE one, whichever was posted first); a
 * receive takes the earliest-arrived send it accepts. So messages of one (source,
 * destination, context, tag) never overtake each other, and a message of context c only ever
 * matches a receive of context c. Tags are scanned linearly (few per source in practice).
 */
import { ANY_SOURCE, ANY_TAG } from '../../comm/communicator.js';
import type { Op } from './op.js';

/** Unmatched operations of one (destination, context, source) of an indexed destination. */
class Bucket {
  rHead: Op | null = null;
  rTail: Op | null = null;
  sHead: Op | null = null;
  sTail: Op | null = null;
}

/** Unmatched operations of one destination above which it is indexed. */
const INDEX_AT = 16;
/** Empty buckets kept for reuse, per rank (see MatchBook.index). */
const KEEP_PER_RANK = 4;

/**
 * The ends of a rank's lists, one block of L_STRIDE per rank in `MatchBook.ends` (so that
 * matching at a destination touches one or two cache lines of them, not one per list): posted
 * receives with a source (links qPrev/qNext), ANY_SOURCE receives and unexpected sends in
 * arrival order (links aPrev/aNext), and from L_OWN on four slots the book's owner keeps two
 * lists of its own in (the simulation: the rank's transfers waiting for ports, those it sends
 * and those it receives).
 */
export const L_STRIDE = 10;
const L_R_HEAD = 0;
const L_R_TAIL = 1;
const L_ANY_HEAD = 2;
const L_ANY_TAIL = 3;
const L_U_HEAD = 4;
const L_U_TAIL = 5;
/** The first of the owner's slots (the book never touches them). */
export const L_OWN = 6;
/** Per destination, in `MatchBook.cnt` (stride C_STRIDE): its posted receives with a source, unexpected sends, and 1 while indexed. */
const C_STRIDE = 4;
const C_NR = 0;
const C_NU = 1;
const C_INDEXED = 2;

export class MatchBook {
  /** Per destination d, at L_STRIDE·d: the ends of its lists (see L_STRIDE). */
  readonly ends: (Op | null)[];
  private readonly cnt: Int32Array;
  /**
   * Per destination: buckets keyed ctx·p + source (links bPrev/bNext), or null. Used while
   * the destination is indexed (C_INDEXED); after that its map, every bucket empty, stays
   * for the next time it is (no allocation when a rank is indexed again and again, e.g. the
   * root of a persistent gather), as long as the kept buckets number at most KEEP_PER_RANK·p.
   */
  private readonly index: (Map<number, Bucket> | null)[];
  /** Buckets in the maps of destinations not indexed. */
  private kept = 0;

  constructor(private readonly p: number) {
    this.ends = new Array<Op | null>(L_STRIDE * p).fill(null);
    this.cnt = new Int32Array(C_STRIDE * p);
    this.index = new Array<Map<number, Bucket> | null>(p).fill(null);
  }

  private indexOf(d: number): Map<number, Bucket> | null {
    return this.cnt[C_STRIDE * d + C_INDEXED] === 0 ? null : this.index[d];
  }

  /** The receive `s` matches (removed from the queues), or null after queueing `s` as unexpected. */
  matchSend(s: Op): Op | null {
    const d = s.peer;
    const tag = s.tag;
    const ctx = s.ctx;
    const src = s.rank;
    const idx = this.indexOf(d);
    let r: Op | null;
    let b: Bucket | undefined;
    if (idx === null) {
      r = this.ends[L_STRIDE * d + L_R_HEAD];
      while (r !== null && !(r.peer === src && r.ctx === ctx && (r.tag === ANY_TAG || r.tag === tag))) r = r.qNext;
    } else {
      b = idx.get(ctx * this.p + src);
      r = b === undefined ? null : b.rHead;
      while (r !== null && r.tag !== ANY_TAG && r.tag !== tag) r = r.bNext;
    }
    let a = this.ends[L_STRIDE * d + L_ANY_HEAD];
    while (a !== null && (a.ctx !== ctx || (a.tag !== ANY_TAG && a.tag !== tag))) a = a.aNext;
    if (r !== null && (a === null || r.seq < a.seq)) {
      this.removeRecv(r, d, b);
      return r;
    }
    if (a !== null) {
      if (a.aPrev === null) this.ends[L_STRIDE * d + L_ANY_HEAD] = a.aNext;
      else a.aPrev.aNext = a.aNext;
      if (a.aNext === null) this.ends[L_STRIDE * d + L_ANY_TAIL] = a.aPrev;
      else a.aNext.aPrev = a.aPrev;
      a.aPrev = a.aNext = null;
      return a;
    }
    s.aNext = null;
    s.aPrev = this.ends[L_STRIDE * d + L_U_TAIL];
    if (s.aPrev === null) this.ends[L_STRIDE * d + L_U_HEAD] = s;
    else s.aPrev.aNext = s;
    this.ends[L_STRIDE * d + L_U_TAIL] = s;
    this.cnt[C_STRIDE * d + C_NU]++;
    if (idx !== null) this.bucketAdd(idx, s, false);
    else if (this.cnt[C_STRIDE * d + C_NU] > INDEX_AT) this.build(d);
    return null;
  }

  /** The send `r` matches (removed from the queues), or null after queueing `r` as posted. */
  matchRecv(r: Op): Op | null {
    const d = r.rank;
    const tag = r.tag;
    const ctx = r.ctx;
    const src = r.peer;
    const idx = this.indexOf(d);
    let s: Op | null;
    let b: Bucket | undefined;
    if (idx === null || src === ANY_SOURCE) {
      s = this.ends[L_STRIDE * d + L_U_HEAD];
      while (s !== null && !(s.ctx === ctx && (src === ANY_SOURCE || s.rank === src) && (tag === ANY_TAG || s.tag === tag))) {
        s = s.aNext;
      }
    } else {
      b = idx.get(ctx * this.p + src);
      s = b === undefined ? null : b.sHead;
      while (s !== null && tag !== ANY_TAG && s.tag !== tag) s = s.bNext;
    }
    if (s !== null) {
      this.removeSend(s, d, b);
      return s;
    }
    if (src === ANY_SOURCE) {
      r.aNext = null;
      r.aPrev = this.ends[L_STRIDE * d + L_ANY_TAIL];
      if (r.aPrev === null) this.ends[L_STRIDE * d + L_ANY_HEAD] = r;
      else r.aPrev.aNext = r;
      this.ends[L_STRIDE * d + L_ANY_TAIL] = r;
      return null;
    }
    r.qNext = null;
    r.qPrev = this.ends[L_STRIDE * d + L_R_TAIL];
    if (r.qPrev === null) this.ends[L_STRIDE * d + L_R_HEAD] = r;
    else r.qPrev.qNext = r;
    this.ends[L_STRIDE * d + L_R_TAIL] = r;
    this.cnt[C_STRIDE * d + C_NR]++;
    if (idx !== null) this.bucketAdd(idx, r, true);
    else if (this.cnt[C_STRIDE * d + C_NR] > INDEX_AT) this.build(d);
    return null;
  }

  private removeRecv(r: Op, d: number, b: Bucket | undefined): void {
    if (r.qPrev === null) this.ends[L_STRIDE * d + L_R_HEAD] = r.qNext;
    else r.qPrev.qNext = r.qNext;
    if (r.qNext === null) this.ends[L_STRIDE * d + L_R_TAIL] = r.qPrev;
    else r.qNext.qPrev = r.qPrev;
    r.qPrev = r.qNext = null;
    this.cnt[C_STRIDE * d + C_NR]--;
    if (b !== undefined) {
      if (r.bPrev === null) b.rHead = r.bNext;
      else r.bPrev.bNext = r.bNext;
      if (r.bNext === null) b.rTail = r.bPrev;
      else r.bNext.bPrev = r.bPrev;
      r.bPrev = r.bNext = null;
    }
    this.maybeDrop(d);
  }

  private removeSend(s: Op, d: number, b: Bucket | undefined): void {
    if (s.aPrev === null) this.ends[L_STRIDE * d + L_U_HEAD] = s.aNext;
    else s.aPrev.aNext = s.aNext;
    if (s.aNext === null) this.ends[L_STRIDE * d + L_U_TAIL] = s.aPrev;
    else s.aNext.aPrev = s.aPrev;
    s.aPrev = s.aNext = null;
    this.cnt[C_STRIDE * d + C_NU]--;
    const idx = this.indexOf(d);
    if (idx !== null) {
      const bb = b ?? (idx.get(s.ctx * this.p + s.rank) as Bucket);
      if (s.bPrev === null) bb.sHead = s.bNext;
      else s.bPrev.bNext = s.bNext;
      if (s.bNext === null) bb.sTail = s.bPrev;
      else s.bNext.bPrev = s.bPrev;
      s.bPrev = s.bNext = null;
    }
    this.maybeDrop(d);
  }

  private maybeDrop(d: number): void {
    const c = C_STRIDE * d;
    if (this.cnt[c + C_INDEXED] !== 0 && this.cnt[c + C_NR] === 0 && this.cnt[c + C_NU] === 0) {
      this.cnt[c + C_INDEXED] = 0;
      const size = (this.index[d] as Map<number, Bucket>).size;
      if (this.kept + size <= KEEP_PER_RANK * this.p) this.kept += size;
      else this.index[d] = null;
    }
  }

  private bucketAdd(idx: Map<number, Bucket>, x: Op, recv: boolean): void {
    const key = x.ctx * this.p + (recv ? x.peer : x.rank);
    let b = idx.get(key);
    if (b === undefined) {
      b = new Bucket();
      idx.set(key, b);
    }
    x.bNext = null;
    if (recv) {
      x.bPrev = b.rTail;
      if (b.rTail === null) b.rHead = x;
      else b.rTail.bNext = x;
      b.rTail = x;
    } else {
      x.bPrev = b.sTail;
      if (b.sTail === null) b.sHead = x;
      else b.sTail.bNext = x;
      b.sTail = x;
    }
  }

  /** Indexes destination d's queued operations (in queue order, so buckets keep it). */
  private build(d: number): void {
    let idx = this.index[d];
    if (idx === null) {
      idx = new Map<number, Bucket>();
      this.index[d] = idx;
    } else {
      this.kept -= idx.size;
    }
    this.cnt[C_STRIDE * d + C_INDEXED] = 1;
    for (let x = this.ends[L_STRIDE * d + L_R_HEAD]; x !== null; x = x.qNext) this.bucketAdd(idx, x, true);
    for (let x = this.ends[L_STRIDE * d + L_U_HEAD]; x !== null; x = x.aNext) this.bucketAdd(idx, x, false);
  }

  /** Every queued (unmatched) operation, in no particular order. */
  unmatched(): Op[] {
    const out: Op[] = [];
    for (let d = 0; d < this.p; d++) {
      for (let x = this.ends[L_STRIDE * d + L_R_HEAD]; x !== null; x = x.qNext) out.push(x);
      for (let x = this.ends[L_STRIDE * d + L_ANY_HEAD]; x !== null; x = x.aNext) out.push(x);
      for (let x = this.ends[L_STRIDE * d + L_U_HEAD]; x !== null; x = x.aNext) out.push(x);
    }
    return out;
  }

  /** Forgets every queued operation (the owner's slots of `ends` are the owner's business). */
  clear(): void {
    for (let d = 0; d < this.p; d++) for (let k = 0; k < L_OWN; k++) this.ends[L_STRIDE * d + k] = null;
    this.index.fill(null);
    this.kept = 0;
    this.cnt.fill(0);
  }
}
