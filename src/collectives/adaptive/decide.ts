/**
 * The constant-size information of Traff18 Lemma 3 and the join decision both fixed roots
 * of a round compute from it (identically, so they agree without further communication).
 *
 * A range's record: its gather root, its total data, the gather root's completion-time
 * estimate C (exact model time of the range's tree so far), whether the gather root already
 * received (the copy convention of its first receive depends on it) and the gather root's own
 * block size (its copy cost). Five numbers (plus a fingerprint of the context: 48 bytes),
 * whatever p and the counts.
 *
 * The decision replicates `adaptiveRounds` (src/trees/adaptive.ts) for one port operation by
 * operation, so the distributed tree is identical to the centralised builder's:
 * - the range that contains the MPI root receives (Lemma 2);
 * - rule 'exact': the direction whose join completes first in the model, ties to the upper
 *   range; rule 'lemma1': the range with the larger C receives (the faster tree sends),
 *   ties to the range with more data, then to the upper range (Lemma 1);
 * - with `copyAll` (Lemma 4) every rank's copy is in its C from the start and a first
 *   receive carries no copy; otherwise the first receive of a gather root carries its copy,
 *   overlapping the wait when the sender lies to its right and after it when to its left.
 * Any one-ported cost model works (per-pair models too): the costs only need the two gather
 * roots' ranks, which the records carry. O(1) time. A k-ported model joins groups of k + 1
 * ranges with the gather roots' port-free times in the records: kported-decide.ts.
 */
import type { CostModel } from '../../model/cost-model.js';
import type { AdaptiveRule } from '../../trees/adaptive.js';
import { degradingJoin, degradingLeaf, type DegradingCosts, type Verdict } from '../../trees/degrading-rule.js';

export interface RangeRecord {
  /** The range's gather root (receives the range's data). */
  readonly gatherRoot: number;
  /** Σ of the range's blocks (elements). */
  readonly total: number;
  /** Completion time of the range's tree at its gather root (model units). */
  readonly time: number;
  /** The gather root has received at least once (possibly an empty range). */
  readonly received: boolean;
  /** The gather root's own block (elements). */
  readonly rootBlock: number;
  /** Joins the gather root received (the degrading rule: non-empty ones only); received ⇔ kids > 0 there. */
  readonly kids: number;
  /** The degrading rule, the MPI root's range only: B_r (trees/degrading-rule.ts); else 0. */
  readonly busy: number;
}

export interface JoinContext {
  readonly model: CostModel;
  readonly rule: AdaptiveRule;
  /** Lemma 4: every rank copies its block into a communication buffer. */
  readonly copyAll: boolean;
  /** The MPI root (always the receiver of the ranges that contain it). */
  readonly root: number;
  /**
   * Set: the degrading rule (trees/degrading-rule.ts: late partners of the root's range open,
   * empty ranges hang under the root) takes the decisions instead, and the records carry κ and
   * B_r (DEGRADING_RECORD_BYTES).
   */
  readonly degrading?: DegradingCosts;
}

export interface JoinDecision {
  /** True when the right (upper) range's gather root receives. */
  readonly rightReceives: boolean;
  /** The joined range's record. */
  readonly joined: RangeRecord;
  /** The degrading rule's verdict on the sender (VERDICT), and its opening deadline. */
  readonly verdict?: Verdict;
  readonly deadline?: number;
}

/** Record of a single rank v (level 0). */
export function leafRecord(v: number, count: number, ctx: JoinContext): RangeRecord {
  if (ctx.degrading !== undefined) return { ...degradingLeaf(v, count, ctx.degrading), received: false };
  return { gatherRoot: v, total: count, time: ctx.copyAll ? ctx.model.copy(v, count) : 0, received: false, rootBlock: count, kids: 0, busy: 0 };
}

/** Completion time at `recv`'s gather root of receiving `send`'s range (as adaptiveRounds' join). */
export function joinTime(recv: RangeRecord, send: RangeRecord, ctx: JoinContext): number {
  // The receiving gather root's port runs its operations one after the other from recv.time,
  // each starting when the port is free and its input ready; the join ends at the latest end.
  // Written out (no closure): every fixed root calls this twice per round.
  const r = recv.gatherRoot;
  const s = send.gatherRoot;
  const dur = ctx.model.comm(s, r, send.total);
  if (!recv.received && !ctx.copyAll) {
    const copy = ctx.model.copy(r, recv.rootBlock);
    if (s > r) {
      const copied = Math.max(recv.time, 0) + copy; // the copy overlaps the wait for the sender
      const received = Math.max(copied, send.time) + dur;
      return Math.max(recv.time, copied, received);
    }
    const received = Math.max(recv.time, send.time) + dur; // the copy after the receive
    const copied = Math.max(received, 0) + copy;
    return Math.max(recv.time, received, copied);
  }
  return Math.max(recv.time, Math.max(recv.time, send.time) + dur);
}

/**
 * Joins the adjacent ranges left = [leftLo .. x] and right = [x + 1 .. rightHi].
 * Both fixed roots call this with the same arguments and get the same answer.
 */
export function decideJoin(left: RangeRecord, right: RangeRecord, leftLo: number, leftHi: number, rightHi: number, ctx: JoinContext): JoinDecision {
  if (ctx.degrading !== undefined) {
    const d = degradingJoin(left, right, leftLo, leftHi, rightHi, ctx.degrading);
    return { rightReceives: d.rightReceives, joined: { ...d.joined, received: d.joined.kids > 0 }, verdict: d.verdict, deadline: d.deadline };
  }
  const root = ctx.root;
  let rightReceives: boolean;
  if (root >= leftLo && root <= leftHi) rightReceives = false;
  else if (root > leftHi && root <= rightHi) rightReceives = true;
  else if (ctx.rule === 'exact') rightReceives = joinTime(right, left, ctx) <= joinTime(left, right, ctx);
  else rightReceives = right.time > left.time || (right.time === left.time && right.total >= left.total);
  const recv = rightReceives ? right : left;
  const send = rightReceives ? left : right;
  return {
    rightReceives,
    joined: {
      gatherRoot: recv.gatherRoot,
      total: left.total + right.total,
      time: joinTime(recv, send, ctx),
      received: true,
      rootBlock: recv.rootBlock,
      kids: recv.kids + 1,
      busy: 0,
    },
  };
}

/**
 * A fingerprint of everything the decisions depend on besides the records (root, rule,
 * copy convention, model kind, ports and homogeneous parameters): two fixed roots whose
 * fingerprints differ would decide differently, so the exchange carries it and a mismatch is
 * an error instead of an inconsistent tree. FNV-1a over the parameters' text. A model without
 * homogeneous parameters (per-pair, hierarchical, a level's view of one) is probed instead: its
 * costs of 1 and 65,536 elements and its copy between a few fixed pairs of its ranks (first,
 * second, middle, last), O(1) — two ranks with different α or β there disagree; a difference
 * elsewhere in a per-pair matrix is not seen (its ranks must pass the same values).
 */
export function contextFingerprint(ctx: JoinContext): number {
  // cached per frozen model object (vcoll's models are; a user's mutable one is hashed every
  // time) and (root, rule, copyAll): a one-shot call would otherwise build the text each time
  const model = ctx.model;
  if (!Object.isFrozen(model)) return fingerprintOf(ctx);
  let byModel = fingerprints.get(model);
  if (byModel === undefined) {
    byModel = new Map();
    fingerprints.set(model, byModel);
  }
  const key = ctx.root * 8 + (ctx.degrading !== undefined ? 4 : 0) + (ctx.rule === 'exact' ? 2 : 0) + (ctx.copyAll ? 1 : 0);
  let h = byModel.get(key);
  if (h === undefined) {
    h = fingerprintOf(ctx);
    if (byModel.size < 256) byModel.set(key, h);
  }
  return h;
}

const fingerprints = new WeakMap<object, Map<number, number>>();

/** A model's costs at a few fixed pairs of ranks (contextFingerprint), as text. */
function probes(m: CostModel): string {
  const n = m.size ?? 2;
  const ranks = [...new Set([0, 1, n >> 1, n - 1])].filter((r) => r >= 0 && r < n);
  const out: number[] = [];
  for (const a of ranks) {
    out.push(m.copy(a, 65536));
    for (const b of ranks) if (a !== b) out.push(m.comm(a, b, 1), m.comm(a, b, 65536));
  }
  return out.join(',');
}

function fingerprintOf(ctx: JoinContext): number {
  const m = ctx.model;
  const l = m.linear;
  const text = [ctx.root, ctx.rule, ctx.copyAll, ctx.degrading !== undefined ? 'degrading' : 'adaptive', m.kind, m.ports, m.size ?? '', l ? `${l.alpha},${l.beta},${l.gamma}` : probes(m)].join('|');
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Bytes of an encoded record (with the context fingerprint): 6 float64. */
export const RECORD_BYTES = 48;
/** The degrading rule's record: B_r as a seventh float64 (κ shares the check's word). */
export const DEGRADING_RECORD_BYTES = 56;
/** κ's share of the check word under the degrading rule: word = κ + KIDS_SPAN·check (κ ≤ ⌈log₂p⌉ < 128). */
const KIDS_SPAN = 128;

/** The bytes of a record under `ctx`'s rule. */
export function recordBytes(ctx: JoinContext): number {
  return ctx.degrading !== undefined ? DEGRADING_RECORD_BYTES : RECORD_BYTES;
}

/**
 * The record on the wire; `check` (the range's count checksum, countCheck) shares the float64
 * of the `received` bit as received + 2·check, exact below 2^53: the message keeps its size.
 */
export function encodeRecord(r: RangeRecord, fingerprint: number, into: Float64Array = new Float64Array(6), check = 0): Uint8Array {
  writeRecord(r, fingerprint, check, into);
  return new Uint8Array(into.buffer, into.byteOffset, RECORD_BYTES);
}

/**
 * encodeRecord's six words written into `into` (nothing allocated); `degrading`: the degrading
 * rule's seven (κ + 128·check in the check's word, B_r seventh).
 */
export function writeRecord(r: RangeRecord, fingerprint: number, check: number, into: Float64Array, degrading = false): void {
  into[0] = r.gatherRoot;
  into[1] = r.total;
  into[2] = r.time;
  into[3] = degrading ? r.kids + KIDS_SPAN * check : (r.received ? 1 : 0) + 2 * check;
  into[4] = r.rootBlock;
  into[5] = fingerprint;
  if (degrading) into[6] = r.busy;
}

/** A record's words as writeRecord wrote them: the record, the fingerprint and the range's count checksum. */
export function readRecord(f: ArrayLike<number>, degrading = false): { record: RangeRecord; fingerprint: number; check: number } {
  if (degrading) {
    const kids = f[3] % KIDS_SPAN;
    return {
      record: { gatherRoot: f[0], total: f[1], time: f[2], received: kids > 0, rootBlock: f[4], kids, busy: f[6] },
      fingerprint: f[5],
      check: (f[3] - kids) / KIDS_SPAN,
    };
  }
  const bit = f[3] % 2;
  return {
    record: { gatherRoot: f[0], total: f[1], time: f[2], received: bit === 1, rootBlock: f[4], kids: bit, busy: 0 },
    fingerprint: f[5],
    check: (f[3] - bit) / 2,
  };
}

export function decodeRecord(bytes: Uint8Array): { record: RangeRecord; fingerprint: number; check: number } {
  const aligned = bytes.byteOffset % 8 === 0;
  const f = aligned ? new Float64Array(bytes.buffer, bytes.byteOffset, 6) : new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + RECORD_BYTES));
  return readRecord(f);
}

/**
 * Count checksums. Lemma 3's records carry only range totals, so count errors of two ranks of
 * one range that cancel (rank a has k elements more than the root's counts[a], rank b k fewer)
 * would pass the root's check of the totals and shift blocks inside the range. Each range
 * therefore also carries Σ_{i in range} m_i·w_i mod M with M = 2^31 − 1 (prime) and
 * w_i = 7^(i+1) mod M (7 is a primitive root of M, so the weights of distinct ranks below
 * M − 1 differ), additive over joined ranges and packed into the record's `received` word. The
 * root compares it with the same sum over its counts: an error confined to two ranks of a range
 * whose totals agree is always caught (k·(w_a − w_b) ≢ 0 mod M unless M divides k, k ≥ 2^31 − 1
 * elements); any other error passes with probability about 1/M. No message, no byte added.
 */
export const CHECK_MOD = 2147483647;
const CHECK_BASE = 7;

/** a·b mod M for a, b in [0, M), exact in float64 (b split in 16-bit halves). */
function mulMod(a: number, b: number): number {
  const hi = Math.floor(b / 65536);
  const lo = b - hi * 65536;
  return (((a * hi) % CHECK_MOD) * 65536 + a * lo) % CHECK_MOD;
}

/** The weight w_v = 7^(v+1) mod M of rank v (O(log v)). */
export function countWeight(v: number): number {
  let result = 1;
  let base = CHECK_BASE;
  for (let e = v + 1; e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) result = mulMod(result, base);
    base = mulMod(base, base);
  }
  return result;
}

/** The checksum m·w_v mod M of rank v's block of m elements. */
export function countCheck(v: number, m: number): number {
  return mulMod(m % CHECK_MOD, countWeight(v));
}

/** The checksum of two joined ranges. */
export function addChecks(a: number, b: number): number {
  return (a + b) % CHECK_MOD;
}

/** Prefix checksums of `counts` (rank order): the checksum of [lo..hi] is rangeCheck(prefix, lo, hi). O(p). */
export function checkPrefix(counts: readonly number[]): Float64Array {
  const out = new Float64Array(counts.length + 1);
  let w = 1;
  for (let i = 0; i < counts.length; i++) {
    w = mulMod(w, CHECK_BASE);
    out[i + 1] = (out[i] + mulMod(counts[i] % CHECK_MOD, w)) % CHECK_MOD;
  }
  return out;
}

export function rangeCheck(prefix: Float64Array, lo: number, hi: number): number {
  return (prefix[hi + 1] - prefix[lo] + CHECK_MOD) % CHECK_MOD;
}
