/**
 * Distributed construction of the adaptive gather/scatter tree: Traff18 Lemma 3 (Fig. 2),
 * with Lemma 2's fixed MPI root and Lemma 4's copy convention (see decide.ts).
 *
 * Invariant for every range of the ordered hypercube at level d: its fixed root (last rank,
 * hypercube.ts) holds the range's record (gather root, total, completion time, root block);
 * its gather root knows that it is one. Round d, for each pair of adjacent level-d ranges:
 *   1. the two fixed roots exchange their records (one constant-size message each way) and
 *      both compute the same decision (decideJoin);
 *   2. each fixed root whose gather root is another rank sends it a constant-size
 *      notification: "receive `size` elements from gather root x" or "send your range to x".
 * The right range's fixed root is the joined range's fixed root and keeps the joined record.
 * Nobody ever holds more than O(1) information per round and no rank needs the counts.
 *
 * Cost: ⌈log₂p⌉ rounds; a fixed root sends and receives one 48-byte record per round and
 * sends at most one 32-byte notification; a gather root receives at most one notification
 * per round. Longest chain of dependent messages: the exchanges of rounds 0 … d, then the
 * notification of round d, so at most ⌈log₂p⌉ + 1 ≤ 2⌈log₂p⌉ (the paper counts 2⌈log₂p⌉ − 1
 * by serialising each round's two steps). In time: ≤ ⌈log₂p⌉·(2 exchanges + 1 notification)
 * constant-size messages on a one-ported machine.
 *
 * The result is this rank's role in the tree: the joins it receives, in order (its children),
 * and the join where it sends its whole range (its parent); the MPI root only receives.
 * `onEvent` reports each join the moment this rank learns it, which lets the gather data
 * phase start before the construction has finished (Traff18 §3).
 *
 * Under the degrading rule (JoinContext.degrading, trees/degrading-rule.ts) the records are
 * 56 bytes (κ and B_r) and the notifications too: a 'recv' carries the sender range's summary
 * (C, κ, own block), which the receiver needs if it is opened later; a 'send' carries the
 * verdict on the sender (free join, empty, whole to the root, or open at deadline D). What
 * the verdicts mean for the ranks below an opened gather root is settled after the
 * construction (adaptive/verdicts.ts).
 *
 * This is the one-ported construction (48-byte records, 32-byte notifications); a k-ported
 * model (k ≥ 2) runs kported-construct.ts (groups of k + 1 ranges over the (k+1)-ary
 * hypercube), which `constructAdaptive` and `startConstruction` choose by model.ports.
 */
import type { Communicator, Status } from '../../comm/communicator.js';
import { handled, Resumable, type Request } from '../../comm/request.js';
import { CommunicationError, InvalidArgumentError } from '../../errors.js';
import {
  addChecks,
  contextFingerprint,
  countCheck,
  decideJoin,
  DEGRADING_RECORD_BYTES,
  writeRecord,
  leafRecord,
  readRecord,
  RECORD_BYTES,
  type JoinContext,
  type RangeRecord,
} from './decide.js';
import { VERDICT, type DegradingRecord, type Verdict } from '../../trees/degrading-rule.js';
import { hypercubeRounds } from './hypercube.js';
import { constructAdaptiveK, startConstructionK } from './kported-construct.js';
import type { ScheduleBuffer, ScheduleOptions, Span } from '../../comm/schedule.js';
import { scheduleOfShape } from '../../schedule/shapes.js';
import { bindSchedule } from '../../schedule/run.js';
import { scratchBuffer } from '../../comm/scratch.js';

/**
 * A rank's construction buffer: the exchange's record in [0, R) and out [R, 2R), the
 * notification [2R, 2R + N) (R, N: a record's and a notification's bytes under the rule). One
 * buffer for both kinds of round (a simulation holds one per rank).
 */
interface Wire {
  readonly recordBytes: number;
  readonly notifyBytes: number;
  readonly bufferBytes: number;
  readonly buffers: readonly ScheduleBuffer[];
  readonly recordIn: Span;
  readonly recordOut: Span;
  readonly notifyAt: number;
  readonly notifySpan: Span;
  readonly degrading: boolean;
}

function wire(recordBytes: number, notifyBytes: number, degrading: boolean): Wire {
  const bufferBytes = 2 * recordBytes + notifyBytes;
  const notifyAt = 2 * recordBytes;
  return {
    recordBytes,
    notifyBytes,
    bufferBytes,
    buffers: [{ name: 'construction', bytes: bufferBytes }],
    recordIn: [{ buffer: 0, offset: 0, length: recordBytes }],
    recordOut: [{ buffer: 0, offset: recordBytes, length: recordBytes }],
    notifyAt,
    notifySpan: [{ buffer: 0, offset: notifyAt, length: notifyBytes }],
    degrading,
  };
}

/** Bytes of a notification: kind (+ 2·count checksum), round, peer, size as float64. */
export const NOTIFY_BYTES = 32;
/** The degrading rule's notification: three more words (a 'recv': the sender's C, κ, own block; a 'send': verdict, deadline). */
export const DEGRADING_NOTIFY_BYTES = 56;

const ADAPTIVE_WIRE = wire(RECORD_BYTES, NOTIFY_BYTES, false);
const DEGRADING_WIRE = wire(DEGRADING_RECORD_BYTES, DEGRADING_NOTIFY_BYTES, true);

/** Words of a record or notification while it is encoded or decoded (synchronously, then copied). */
const WORDS = new Float64Array(DEGRADING_RECORD_BYTES / 8);
const WORD_BYTES = new Uint8Array(WORDS.buffer);
import type { AdaptiveTags } from './tags.js';

/** One join as the gather root taking part in it sees it. */
export interface RoleEvent {
  /** 'recv': this rank receives the adjacent range [lo..hi]; 'send': it sends its range [lo..hi]. */
  readonly kind: 'recv' | 'send';
  /** Construction round (hypercube level) of the join. */
  readonly round: number;
  /** The other gather root: the sender of a 'recv', the receiver of a 'send'. */
  readonly peer: number;
  /** Elements that move: the total of [lo..hi]. */
  readonly size: number;
  readonly lo: number;
  readonly hi: number;
  /** Count checksum of [lo..hi] by its ranks' own counts (decide.ts countCheck); 0 on a 'send'. */
  readonly check: number;
  /** The degrading rule, a 'recv': the sending range's summary when it joined (peer = its gather root). */
  readonly summary?: DegradingRecord;
  /** The degrading rule, a 'send': what the sender does (VERDICT) and its opening deadline. */
  readonly verdict?: Verdict;
  readonly deadline?: number;
}

/** A rank's place in the tree. */
export interface AdaptiveRole {
  readonly rank: number;
  readonly p: number;
  readonly root: number;
  /** This rank's own block (elements). */
  readonly count: number;
  /** The joins this rank receives, in order (its children in gather receive order). */
  readonly children: readonly RoleEvent[];
  /** Where this rank sends its range (undefined at the MPI root). */
  readonly parent: RoleEvent | undefined;
  /**
   * Rank p − 1 only (the fixed root of the whole range): the final record, whose `time` is
   * the completion time of the whole tree in the model and `total` the sum of all blocks.
   */
  readonly final: RangeRecord | undefined;
}

export interface ConstructionInput {
  readonly comm: Communicator;
  readonly root: number;
  /** This rank's block (elements). */
  readonly count: number;
  readonly ctx: JoinContext;
  readonly tags: AdaptiveTags;
  /** Called the moment this rank learns one of its joins (may throw to abort, e.g. validation). */
  readonly onEvent?: (e: RoleEvent) => void;
  /** How the construction's errors name `comm`'s ranks (default: "rank r", reported as rank r). */
  readonly names?: RankNames;
}

/**
 * How a construction's errors name the ranks of its communicator: a level view of the
 * hierarchical collectives (collectives/hierarchical/level-view.ts) names the caller's ranks, not
 * the level's.
 */
export interface RankNames {
  /** The text naming rank r. */
  rankName(r: number): string;
  /** The rank an error about rank r reports (its `rank` field). */
  errorRank(r: number): number;
}

/** A notification's bytes (a small typed array: on V8's heap, no ArrayBuffer of its own). */
function encodeEvent(e: RoleEvent, w: Wire): Uint8Array {
  WORDS[0] = (e.kind === 'recv' ? 0 : 1) + 2 * e.check;
  WORDS[1] = e.round;
  WORDS[2] = e.peer;
  WORDS[3] = e.size;
  if (w.degrading) {
    const s = e.summary;
    WORDS[4] = s !== undefined ? s.time : (e.verdict ?? VERDICT.FREE);
    WORDS[5] = s !== undefined ? s.kids : (e.deadline ?? 0);
    WORDS[6] = s !== undefined ? s.rootBlock : 0;
  }
  const out = new Uint8Array(w.notifyBytes);
  for (let i = 0; i < w.notifyBytes; i++) out[i] = WORD_BYTES[i];
  return out;
}

const NO_PENDING: readonly Request<void>[] = [];
const WAIT_EXCHANGE = 0;
const WAIT_NOTIFY = 1;
const WAIT_END = 2;

/**
 * Runs this rank's part of the construction. Every rank of `comm` must call it with the same
 * root, context and tags. A k-ported model (k ≥ 2) runs the k-ported construction
 * (kported-construct.ts: groups of k + 1 ranges per round); the degrading rule is one-ported.
 */
export function constructAdaptive(input: ConstructionInput): Promise<AdaptiveRole> {
  if (input.ctx.model.ports > 1) return constructAdaptiveK(input);
  return new Construction(input).run();
}

/**
 * Who learns how a construction ended (`startConstruction`): `built` or `buildFailed`, once,
 * from a callback; `joined`, when given, each join the moment it is learnt (in place of
 * ConstructionInput.onEvent; it may throw to abort). Methods, so that the sink can be a state
 * machine's own object (no closures).
 */
export interface ConstructionSink {
  built(role: AdaptiveRole): void;
  buildFailed(error: unknown): void;
  joined?(e: RoleEvent): void;
}

/**
 * `constructAdaptive` without its promise: the role (or the error) goes to `sink` (a callback
 * state machine waiting on it holds no promise per rank).
 */
export function startConstruction(input: ConstructionInput, sink: ConstructionSink): void {
  if (input.ctx.model.ports > 1) startConstructionK(input, sink);
  else new Construction(input).runInto(sink);
}

/**
 * One rank's construction as a state machine: a round waits on one message (the exchange, or
 * the notification) and continues in a callback. A simulation holds one of these per rank
 * while all of them wait at once, so it keeps its state in a few fields (no suspended async
 * frame, no closure or buffer per round).
 */
class Construction extends Resumable {
  private readonly comm: Communicator;
  private readonly v: number;
  private readonly p: number;
  private readonly rounds: number;
  private d = 0;
  /** Defined while this rank is the fixed root of its range; it is a gather root until it has a parent. */
  private record: RangeRecord | undefined;
  /** Count checksum of the range whose fixed root this rank is. */
  private check: number;
  private readonly children: RoleEvent[] = [];
  private parent: RoleEvent | undefined;
  private pending: Request<void>[] | null = null;
  private readonly fingerprint: number;
  /** The sizes and buffer layout of the messages under the rule. */
  private readonly wire: Wire;
  /** This round's ranges: own [ownLo..ownHi], the partner's [otherLo..otherHi]. */
  private ownLo = 0;
  private ownHi = 0;
  private otherLo = 0;
  private otherHi = 0;
  private ownIsLeft = false;
  /** The construction buffer (made at the first round), and what binds it. */
  private buffers: Uint8Array[] | undefined;
  private exchangeOptions: ScheduleOptions | undefined;
  private notifyOptions: ScheduleOptions | undefined;
  /** The construction buffer's views a round receives into and sends from (simulator; made when first needed). */
  private recordIn: Uint8Array | undefined;
  private recordOut: Uint8Array | undefined;
  private notifyIn: Uint8Array | undefined;
  /** Who learns the outcome (null once it has: a construction settles once, as a promise). */
  private sink: ConstructionSink | null = null;
  /** What the simulator's plain requests wait for (the resumer calls `resumed`): an exchange, a notification, the end. */
  private waiting = WAIT_EXCHANGE;

  constructor(private readonly input: ConstructionInput) {
    super();
    const comm = input.comm;
    this.comm = comm;
    this.v = comm.rank;
    this.p = comm.size;
    this.rounds = hypercubeRounds(this.p);
    this.record = leafRecord(this.v, input.count, input.ctx);
    this.check = countCheck(this.v, input.count);
    this.fingerprint = contextFingerprint(input.ctx);
    this.wire = input.ctx.degrading !== undefined ? DEGRADING_WIRE : ADAPTIVE_WIRE;
  }

  run(): Promise<AdaptiveRole> {
    return new Promise<AdaptiveRole>((resolve, reject) => {
      this.runInto({ built: resolve, buildFailed: reject });
    });
  }

  runInto(sink: ConstructionSink): void {
    this.sink = sink;
    this.advance();
  }

  private resolve(role: AdaptiveRole): void {
    const sink = this.sink;
    this.sink = null;
    sink?.built(role);
  }

  private reject(e: unknown): void {
    const sink = this.sink;
    this.sink = null;
    sink?.buildFailed(e);
  }

  private readonly failed = (e: unknown): void => this.reject(e);

  /** Continuations of a round's schedule (real transports): made when first needed. */
  private exchangedFn: (() => void) | undefined;
  private notifiedFn: (() => void) | undefined;

  private exchanged(): void {
    this.continueWith(this.afterExchange);
  }

  private notified(): void {
    this.continueWith(this.afterNotification);
  }

  private emit(e: RoleEvent): void {
    if (e.kind === 'recv') this.children.push(e);
    else this.parent = e;
    const sink = this.sink;
    if (sink?.joined !== undefined) sink.joined(e);
    else this.input.onEvent?.(e);
  }

  private continueWith(step: (this: Construction) => void): void {
    try {
      step.call(this);
      this.d++;
    } catch (e) {
      this.reject(e);
      return;
    }
    this.advance();
  }

  /** Starts the next round that involves this rank, or finishes. */
  private advance(): void {
    try {
      const { v, p } = this;
      for (; this.d < this.rounds && (this.record !== undefined || this.parent === undefined); this.d++) {
        const w = 2 ** this.d;
        const index = Math.floor(v / w);
        const otherLo = (index ^ 1) * w;
        if (otherLo >= p) continue; // the incomplete last range passes through this round
        this.ownLo = index * w;
        this.ownHi = Math.min(this.ownLo + w - 1, p - 1);
        this.otherLo = otherLo;
        this.otherHi = Math.min(otherLo + w - 1, p - 1);
        this.ownIsLeft = index % 2 === 0;
        if (this.record !== undefined) this.exchange(this.record);
        else this.awaitNotification();
        return;
      }
      this.finish();
    } catch (e) {
      this.reject(e);
    }
  }

  private constructionBuffers(): Uint8Array[] {
    return (this.buffers ??= [scratchBuffer(this.comm, this.wire.bufferBytes)]);
  }

  /** The words received at [at, at + bytes) of the construction buffer (in WORDS, valid until the next call). */
  private words(at: number, bytes: number): Float64Array {
    const b = (this.buffers as Uint8Array[])[0];
    for (let i = 0; i < bytes; i++) WORD_BYTES[i] = b[at + i];
    return WORDS;
  }

  /** `rank r` as the errors say it (ConstructionInput.names). */
  private named(r: number): string {
    return this.input.names?.rankName(r) ?? `rank ${r}`;
  }

  /** The rank an error of this rank reports. */
  private errorRank(): { rank: number } {
    return { rank: this.input.names?.errorRank(this.v) ?? this.v };
  }

  private mismatch(): InvalidArgumentError {
    return new InvalidArgumentError(
      'model',
      `${this.named(this.v)} and ${this.named(this.otherHi)} run the adaptive construction with different roots, cost models or adaptive options (every rank must pass the same)`,
      this.errorRank(),
    );
  }

  /**
   * Fixed root (v = own hi): exchange records with the partner range's fixed root, receive
   * first. On a real transport the round's exchange is one step of a schedule: one native run
   * (MPI: in C). On the simulator (comm.clock: every rank in one process, all waiting at once)
   * it is two plain requests, which cost less memory than binding a schedule per round.
   */
  private exchange(record: RangeRecord): void {
    const { v, comm, wire: w } = this;
    const rb = w.recordBytes;
    const peer = this.otherHi;
    const tag = this.input.tags.exchange;
    const buffers = this.constructionBuffers();
    writeRecord(record, this.fingerprint, this.check, WORDS, w.degrading);
    buffers[0].set(WORD_BYTES.subarray(0, rb), rb);
    if (comm.clock !== undefined) {
      const b = buffers[0];
      this.waiting = WAIT_EXCHANGE;
      this.wait(comm.irecv(peer, tag, (this.recordIn ??= b.subarray(0, rb))), comm.isend(peer, tag, (this.recordOut ??= b.subarray(rb, 2 * rb))));
      return;
    }
    // a message of another length: the partner runs something else (a longer one: the transport's truncation)
    this.exchangeOptions ??= { once: true, recvError: (_peer, _tag, _expected, got, cause) => (got === undefined ? (cause as Error) : this.mismatch()) };
    const schedule = scheduleOfShape(`adaptive exchange ${v} ${peer} ${tag} ${rb}`, () => ({
      rank: v,
      buffers: w.buffers,
      steps: [
        {
          window: 2,
          ops: [
            { kind: 'recv', peer, tag, data: w.recordIn },
            { kind: 'send', peer, tag, data: w.recordOut },
          ],
        },
      ],
    }));
    bindSchedule(comm, schedule, buffers, this.exchangeOptions).run().then((this.exchangedFn ??= () => this.exchanged()), this.failed);
  }

  /**
   * A plain request's wait ended (simulator): the exchange (a record of another length is the
   * partner running something else), the notification (of another length: a protocol
   * error), or the last sends.
   */
  protected resume(): void {
    if (this.waiting === WAIT_END) {
      this.finished();
      return;
    }
    const st = this.waitedValue<Status>();
    if (this.waiting === WAIT_EXCHANGE) {
      if (st.bytes === this.wire.recordBytes) this.exchanged();
      else this.reject(this.mismatch());
    } else if (st.bytes === this.wire.notifyBytes) this.notified();
    else this.reject(this.shortNotification(st.source, st.bytes, this.wire.notifyBytes));
  }

  private afterExchange(): void {
    const { v, ownIsLeft, d } = this;
    const record = this.record as RangeRecord;
    const w = this.wire;
    const { record: theirs, fingerprint, check: theirCheck } = readRecord(this.words(0, w.recordBytes), w.degrading);
    if (fingerprint !== this.fingerprint) throw this.mismatch();
    const leftLo = ownIsLeft ? this.ownLo : this.otherLo;
    const leftHi = ownIsLeft ? this.ownHi : this.otherHi;
    const rightHi = ownIsLeft ? this.otherHi : this.ownHi;
    const dec = decideJoin(ownIsLeft ? record : theirs, ownIsLeft ? theirs : record, leftLo, leftHi, rightHi, this.input.ctx);
    const ownReceives = dec.rightReceives !== ownIsLeft;
    let ev: RoleEvent;
    if (!w.degrading) {
      ev = ownReceives
        ? { kind: 'recv', round: d, peer: theirs.gatherRoot, size: theirs.total, lo: this.otherLo, hi: this.otherHi, check: theirCheck }
        : { kind: 'send', round: d, peer: theirs.gatherRoot, size: record.total, lo: this.ownLo, hi: this.ownHi, check: 0 };
    } else if (ownReceives) {
      const summary: DegradingRecord = { gatherRoot: theirs.gatherRoot, total: theirs.total, time: theirs.time, kids: theirs.kids, rootBlock: theirs.rootBlock, busy: 0 };
      ev = { kind: 'recv', round: d, peer: theirs.gatherRoot, size: theirs.total, lo: this.otherLo, hi: this.otherHi, check: theirCheck, summary };
    } else {
      const verdict = dec.verdict ?? VERDICT.FREE;
      ev = { kind: 'send', round: d, peer: theirs.gatherRoot, size: record.total, lo: this.ownLo, hi: this.ownHi, check: 0, verdict, deadline: dec.deadline ?? 0 };
    }
    if (record.gatherRoot === v) {
      this.emit(ev);
    } else {
      (this.pending ??= []).push(handled(this.comm.isend(record.gatherRoot, this.input.tags.notify, encodeEvent(ev, w))));
    }
    this.record = ownIsLeft ? undefined : dec.joined;
    this.check = addChecks(this.check, theirCheck);
  }

  /** Gather root only: the range's fixed root tells it the outcome (a plain receive on the simulator, as the exchange). */
  private awaitNotification(): void {
    const { v, comm } = this;
    const from = this.ownHi;
    const tag = this.input.tags.notify;
    const buffers = this.constructionBuffers();
    const w = this.wire;
    if (comm.clock !== undefined) {
      this.waiting = WAIT_NOTIFY;
      this.wait(comm.irecv(from, tag, (this.notifyIn ??= buffers[0].subarray(w.notifyAt, w.notifyAt + w.notifyBytes))));
      return;
    }
    this.notifyOptions ??= { once: true, recvError: (peer, _tag, expected, got, cause) => (got === undefined ? (cause as Error) : this.shortNotification(peer, got, expected)) };
    const schedule = scheduleOfShape(`adaptive notify ${v} ${from} ${tag} ${w.notifyBytes}`, () => ({
      rank: v,
      buffers: w.buffers,
      steps: [{ window: 1, ops: [{ kind: 'recv', peer: from, tag, data: w.notifySpan }] }],
    }));
    bindSchedule(comm, schedule, buffers, this.notifyOptions).run().then((this.notifiedFn ??= () => this.notified()), this.failed);
  }

  private shortNotification(peer: number, got: number, expected: number): CommunicationError {
    return new CommunicationError(`${this.named(this.v)}: adaptive construction notification of ${got} bytes from ${this.named(peer)}, ${expected} expected`, this.errorRank());
  }

  private afterNotification(): void {
    const { v, d } = this;
    const w = this.wire;
    const f = this.words(w.notifyAt, w.notifyBytes);
    const kind = f[0] % 2;
    if (f[1] !== d) throw new CommunicationError(`${this.named(v)}: adaptive construction notification for round ${f[1]} in round ${d}`, this.errorRank());
    let ev: RoleEvent;
    if (kind === 0) {
      const check = (f[0] - kind) / 2;
      ev = { kind: 'recv', round: d, peer: f[2], size: f[3], lo: this.otherLo, hi: this.otherHi, check };
      if (w.degrading) ev = { ...ev, summary: { gatherRoot: f[2], total: f[3], time: f[4], kids: f[5], rootBlock: f[6], busy: 0 } };
    } else {
      ev = { kind: 'send', round: d, peer: f[2], size: f[3], lo: this.ownLo, hi: this.ownHi, check: 0 };
      if (w.degrading) ev = { ...ev, verdict: f[4] as Verdict, deadline: f[5] };
    }
    this.emit(ev);
  }

  /** Waits for the notifications this rank sent, then resolves with the role. */
  private finish(): void {
    const pending = this.pending ?? NO_PENDING;
    if (this.comm.clock === undefined) {
      this.comm.waitAll(pending).then(() => this.finished(), this.failed);
      return;
    }
    this.waiting = WAIT_END;
    this.waitEach(pending);
  }

  protected resumeFailed(e: unknown): void {
    this.reject(e);
  }

  private finished(): void {
    try {
      const { v, p, input, record } = this;
      if (v !== input.root && this.parent === undefined) {
        throw new CommunicationError(`${this.named(v)}: the adaptive construction gave it no parent`, this.errorRank());
      }
      // p = 1: the lone root still copies its block into the result (as adaptiveRounds and evaluate charge)
      const final = v === p - 1 && record !== undefined && p === 1 ? { ...record, time: input.ctx.model.copy(v, input.count) } : record;
      this.resolve({ rank: v, p, root: input.root, count: input.count, children: this.children, parent: this.parent, final: v === p - 1 ? final : undefined });
    } catch (e) {
      this.reject(e);
    }
  }
}

/**
 * Rounds reported in CollectiveInfo.constructionRounds: the longest chain of dependent
 * construction messages the protocol can produce, ⌈log₂p⌉ + 1 (p = 2: one exchange; p = 1: 0);
 * with k ports ⌈log_{k+1}p⌉ + 1 (p ≤ k + 1: one exchange, every rank its own fixed root).
 */
export function constructionRounds(p: number, ports = 1): number {
  const D = hypercubeRounds(p, ports);
  return p <= ports + 1 ? D : D + 1;
}
