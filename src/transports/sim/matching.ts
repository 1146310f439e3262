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

type Heads = (Op | null)[];

export class MatchBook {
  /** Posted receives with a source, per destination (links qPrev/qNext). */
  private readonly rHead: Heads;
  private readonly rTail: Heads;
  private readonly nR: Int32Array;
  /** ANY_SOURCE receives (links aPrev/aNext). */
  private readonly anyHead: Heads;
  private readonly anyTail: Heads;
  /** Unexpected sends in arrival order (links aPrev/aNext). */
  private readonly uHead: Heads;
  private readonly uTail: Heads;
  private readonly nU: Int32Array;
  /** Per destination: buckets keyed ctx·p + source (links bPrev/bNext), or null. */
  private readonly index: (Map<number, Bucket> | null)[];

  constructor(private readonly p: number) {
    const heads = (): Heads => new Array<Op | null>(p).fill(null);
    this.rHead = heads();
    this.rTail = heads();
    this.anyHead = heads();
    this.anyTail = heads();
    this.uHead = heads();
    this.uTail = heads();
    this.nR = new Int32Array(p);
    this.nU = new Int32Array(p);
    this.index = new Array<Map<number, Bucket> | null>(p).fill(null);
  }

  /** The receive `s` matches (removed from the queues), or null after queueing `s` as unexpected. */
  matchSend(s: Op): Op | null {
    const d = s.peer;
    const tag = s.tag;
    const ctx = s.ctx;
    const src = s.rank;
    const idx = this.index[d];
    let r: Op | null;
    let b: Bucket | undefined;
    if (idx === null) {
      r = this.rHead[d];
      while (r !== null && !(r.peer === src && r.ctx === ctx && (r.tag === ANY_TAG || r.tag === tag))) r = r.qNext;
    } else {
      b = idx.get(ctx * this.p + src);
      r = b === undefined ? null : b.rHead;
      while (r !== null && r.tag !== ANY_TAG && r.tag !== tag) r = r.bNext;
    }
    let a = this.anyHead[d];
    while (a !== null && (a.ctx !== ctx || (a.tag !== ANY_TAG && a.tag !== tag))) a = a.aNext;
    if (r !== null && (a === null || r.seq < a.seq)) {
      this.removeRecv(r, d, b);
      return r;
    }
    if (a !== null) {
      if (a.aPrev === null) this.anyHead[d] = a.aNext;
      else a.aPrev.aNext = a.aNext;
      if (a.aNext === null) this.anyTail[d] = a.aPrev;
      else a.aNext.aPrev = a.aPrev;
      a.aPrev = a.aNext = null;
      return a;
    }
    s.aNext = null;
    s.aPrev = this.uTail[d];
    if (s.aPrev === null) this.uHead[d] = s;
    else s.aPrev.aNext = s;
    this.uTail[d] = s;
    this.nU[d]++;
    if (idx !== null) this.bucketAdd(idx, s, false);
    else if (this.nU[d] > INDEX_AT) this.build(d);
    return null;
  }

  /** The send `r` matches (removed from the queues), or null after queueing `r` as posted. */
  matchRecv(r: Op): Op | null {
    const d = r.rank;
    const tag = r.tag;
    const ctx = r.ctx;
    const src = r.peer;
    const idx = this.index[d];
    let s: Op | null;
    let b: Bucket | undefined;
    if (idx === null || src === ANY_SOURCE) {
      s = this.uHead[d];
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
      r.aPrev = this.anyTail[d];
      if (r.aPrev === null) this.anyHead[d] = r;
      else r.aPrev.aNext = r;
      this.anyTail[d] = r;
      return null;
    }
    r.qNext = null;
    r.qPrev = this.rTail[d];
    if (r.qPrev === null) this.rHead[d] = r;
    else r.qPrev.qNext = r;
    this.rTail[d] = r;
    this.nR[d]++;
    if (idx !== null) this.bucketAdd(idx, r, true);
    else if (this.nR[d] > INDEX_AT) this.build(d);
    return null;
  }

  private removeRecv(r: Op, d: number, b: Bucket | undefined): void {
    if (r.qPrev === null) this.rHead[d] = r.qNext;
    else r.qPrev.qNext = r.qNext;
    if (r.qNext === null) this.rTail[d] = r.qPrev;
    else r.qNext.qPrev = r.qPrev;
    r.qPrev = r.qNext = null;
    this.nR[d]--;
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
    if (s.aPrev === null) this.uHead[d] = s.aNext;
    else s.aPrev.aNext = s.aNext;
    if (s.aNext === null) this.uTail[d] = s.aPrev;
    else s.aNext.aPrev = s.aPrev;
    s.aPrev = s.aNext = null;
    this.nU[d]--;
    const idx = this.index[d];
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
    if (this.index[d] !== null && this.nR[d] === 0 && this.nU[d] === 0) this.index[d] = null;
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
    const idx = new Map<number, Bucket>();
    this.index[d] = idx;
    for (let x = this.rHead[d]; x !== null; x = x.qNext) this.bucketAdd(idx, x, true);
    for (let x = this.uHead[d]; x !== null; x = x.aNext) this.bucketAdd(idx, x, false);
  }

  /** Every queued (unmatched) operation, in no particular order. */
  unmatched(): Op[] {
    const out: Op[] = [];
    for (let d = 0; d < this.p; d++) {
      for (let x = this.rHead[d]; x !== null; x = x.qNext) out.push(x);
      for (let x = this.anyHead[d]; x !== null; x = x.aNext) out.push(x);
      for (let x = this.uHead[d]; x !== null; x = x.aNext) out.push(x);
    }
    return out;
  }

  clear(): void {
    for (const a of [this.rHead, this.rTail, this.anyHead, this.anyTail, this.uHead, this.uTail, this.index]) a.fill(null);
    this.nR.fill(0);
    this.nU.fill(0);
  }
}
