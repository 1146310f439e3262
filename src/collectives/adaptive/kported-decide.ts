/**
 * The constant-size records and the join decision of the k-ported distributed construction
 * (Traff18 §2, Lemma 3 with Theorem 1's k-ported remark; kported-construct.ts runs it).
 *
 * A range's record, as float64 words (RECORD_WORDS_K + k of them, 48 + 8k bytes):
 *   [0] gather root, [1] total data, [2] completion time C of the range's tree at its gather
 *   root, [3] received + 2·check (the gather root already received; the range's count
 *   checksum, decide.ts countCheck), [4] the gather root's own block, [5] the context
 *   fingerprint (decide.ts contextFingerprint), [6 … 6+k) the gather root's k port-free times.
 * Constant for a fixed k, whatever p and the counts.
 *
 * The decision replicates `adaptiveBinomialTree` (src/trees/adaptive.ts, `construct`: its
 * `join`, `run` and `order`) operation by operation and in the same floating-point order, so
 * every rank of a group computes the same receiver and the distributed tree is bit-for-bit the
 * builder's (test/adaptive-kported.test.ts proves it on random instances):
 * - the group's senders, outward from the receiver j: j − 1, j + 1, j − 2, j + 2, … (this keeps
 *   the tree ordered);
 * - a candidate join runs the receiver's operations, in that order, each on its earliest-free
 *   port (ties to the lowest port), from when that port is free and the sender's range is
 *   complete (its C); the gather root's first receive carries its copy (before it when the
 *   sender lies to its right, after it when to its left), none under copyAll (Traff18 Lemma 4:
 *   the copy is already on port 0 from time 0);
 * - the range that holds the MPI root receives (Lemma 2); rule 'exact': the candidate whose
 *   join completes first, ties to the uppermost range; rule 'lemma1': the larger C receives,
 *   ties to more data, then to the uppermost range (Lemma 1).
 * It is written separately from the builder's (whose hot loop at p = 2^20 must not allocate
 * or call through records): the equality is the tests', not shared code. Cost O(k³) per group
 * (k + 1 candidates of k operations over k ports), O(k) memory per GroupDecision.
 */
import { addChecks, type JoinContext, type RangeRecord } from './decide.js';

/** Words of a k-ported record besides the k port-free times. */
export const RECORD_WORDS_K = 6;
export const W_ROOT = 0;
export const W_TOTAL = 1;
export const W_TIME = 2;
export const W_FLAGS = 3;
export const W_BLOCK = 4;
export const W_PRINT = 5;
export const W_PORTS = 6;

/** Float64 words of a k-ported record. */
export function recordWordsK(ports: number): number {
  return RECORD_WORDS_K + ports;
}

/** Bytes of a k-ported record: 48 + 8k (k = 2: 64, k = 3: 72, k = 4: 80). */
export function recordBytesK(ports: number): number {
  return 8 * recordWordsK(ports);
}

/** Writes rank v's level-0 record (its own block) at `at` of `into` (as trees/adaptive.ts starts every rank). */
export function writeLeafRecordK(into: Float64Array, at: number, v: number, count: number, ctx: JoinContext, fingerprint: number, check: number): void {
  const k = ctx.model.ports;
  // Lemma 4: the copy is every rank's first operation, on port 0 from time 0
  const copy = ctx.copyAll ? ctx.model.copy(v, count) : 0;
  into[at + W_ROOT] = v;
  into[at + W_TOTAL] = count;
  into[at + W_TIME] = copy;
  into[at + W_FLAGS] = 2 * check;
  into[at + W_BLOCK] = count;
  into[at + W_PRINT] = fingerprint;
  for (let q = 0; q < k; q++) into[at + W_PORTS + q] = q === 0 ? copy : 0;
}

/** The received bit of a record's flags word. */
export function receivedOf(flags: number): boolean {
  return flags % 2 === 1;
}

/** The count checksum of a record's flags word. */
export function checkOf(flags: number): number {
  return (flags - (flags % 2)) / 2;
}

/** A k-ported record as the one-ported RangeRecord (AdaptiveRole.final). */
export function rangeRecordK(words: Float64Array, at: number): RangeRecord {
  const received = receivedOf(words[at + W_FLAGS]);
  return {
    gatherRoot: words[at + W_ROOT],
    total: words[at + W_TOTAL],
    time: words[at + W_TIME],
    received,
    rootBlock: words[at + W_BLOCK],
    kids: received ? 1 : 0,
    busy: 0,
  };
}

/**
 * One group's decision, every fixed root of the group computing it alike from the same records
 * (see the module comment). Preallocated: a decision allocates nothing.
 */
export class GroupDecision {
  readonly ports: number;
  /** Words per record. */
  readonly stride: number;
  /** Index (in the group) of the receiving range, after `decide`. */
  receiver = 0;
  /** The senders' indices in the group, in the order the receiver takes them (n − 1 of them). */
  readonly senders: Int32Array;
  /** Ranges of the last decided group. */
  n = 0;
  /** The joined range's record (its fingerprint word copied from the receiver's). */
  readonly joined: Float64Array;
  private readonly tmp: Float64Array;
  private end = 0;

  constructor(private readonly ctx: JoinContext) {
    const k = ctx.model.ports;
    this.ports = k;
    this.stride = recordWordsK(k);
    this.senders = new Int32Array(k);
    this.joined = new Float64Array(this.stride);
    this.tmp = new Float64Array(k);
  }

  /**
   * Decides the join of the group's `n` ranges, whose records are at i·stride of `recs` in
   * range order (i = 0 … n − 1); the group's first rank is `lo`, its ranges have `width` ranks.
   */
  decide(recs: Float64Array, n: number, lo: number, width: number): void {
    const ctx = this.ctx;
    const S = this.stride;
    this.n = n;
    const hi = lo + n * width - 1; // the last range may be cut: the root test only needs its lo
    let recv: number;
    if (ctx.root >= lo && ctx.root <= hi) {
      recv = Math.floor((ctx.root - lo) / width);
    } else if (ctx.rule === 'exact') {
      recv = -1;
      let bestT = Infinity;
      for (let j = 0; j < n; j++) {
        const t = this.join(recs, j, this.order(j, n));
        if (t <= bestT) {
          bestT = t;
          recv = j;
        }
      }
    } else {
      recv = 0;
      for (let j = 1; j < n; j++) {
        const cj = recs[j * S + W_TIME];
        const cb = recs[recv * S + W_TIME];
        if (cj > cb || (cj === cb && recs[j * S + W_TOTAL] >= recs[recv * S + W_TOTAL])) recv = j;
      }
    }
    this.receiver = recv;
    const time = this.join(recs, recv, this.order(recv, n));
    const out = this.joined;
    const r = recv * S;
    let total = 0;
    let check = 0;
    for (let i = 0; i < n; i++) {
      total += recs[i * S + W_TOTAL];
      check = addChecks(check, checkOf(recs[i * S + W_FLAGS]));
    }
    out[W_ROOT] = recs[r + W_ROOT];
    out[W_TOTAL] = total;
    out[W_TIME] = time;
    out[W_FLAGS] = 1 + 2 * check;
    out[W_BLOCK] = recs[r + W_BLOCK];
    out[W_PRINT] = recs[r + W_PRINT];
    for (let q = 0; q < this.ports; q++) out[W_PORTS + q] = this.tmp[q];
  }

  /** The senders of candidate j of ranges 0 … n − 1 into `senders`, outward from j; their count. */
  private order(j: number, n: number): number {
    const s = this.senders;
    let m = 0;
    for (let d = 1; d < n; d++) {
      if (j - d >= 0) s[m++] = j - d;
      if (j + d < n) s[m++] = j + d;
    }
    return m;
  }

  /** One operation on the receiver's earliest free port: from `ready` for `dur` (trees/adaptive.ts `run`). */
  private run(ready: number, dur: number): void {
    const tmp = this.tmp;
    let best = 0;
    for (let q = 1; q < this.ports; q++) if (tmp[q] < tmp[best]) best = q;
    const e = Math.max(tmp[best], ready) + dur;
    tmp[best] = e;
    if (e > this.end) this.end = e;
  }

  /**
   * Range j's gather root receiving the first m senders of `senders` in order (trees/adaptive.ts
   * `join`): its completion time; its port-free times are left in `tmp`.
   */
  private join(recs: Float64Array, j: number, m: number): number {
    const { ctx, stride: S, tmp } = this;
    const model = ctx.model;
    const b = j * S;
    const r = recs[b + W_ROOT];
    for (let q = 0; q < this.ports; q++) tmp[q] = recs[b + W_PORTS + q];
    this.end = recs[b + W_TIME];
    let first = !receivedOf(recs[b + W_FLAGS]) && !ctx.copyAll;
    for (let i = 0; i < m; i++) {
      const s = this.senders[i] * S;
      const sr = recs[s + W_ROOT];
      const dur = model.comm(sr, r, recs[s + W_TOTAL]);
      if (first) {
        // the ordered copy convention: overlap when the sender is to the right
        const copy = model.copy(r, recs[b + W_BLOCK]);
        if (sr > r) {
          this.run(0, copy);
          this.run(recs[s + W_TIME], dur);
        } else {
          this.run(recs[s + W_TIME], dur);
          this.run(0, copy);
        }
        first = false;
      } else {
        this.run(recs[s + W_TIME], dur);
      }
    }
    return this.end;
  }
}
