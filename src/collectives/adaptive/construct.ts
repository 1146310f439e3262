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
 */
import type { Communicator } from '../../comm/communicator.js';
import { handled, type Request } from '../../comm/request.js';
import { CommunicationError, InvalidArgumentError } from '../../errors.js';
import {
  addChecks,
  contextFingerprint,
  countCheck,
  decideJoin,
  decodeRecord,
  encodeRecord,
  leafRecord,
  RECORD_BYTES,
  type JoinContext,
  type RangeRecord,
} from './decide.js';
import { hypercubeRounds, partnerOf, rangeOf } from './hypercube.js';
import type { ScheduleBuffer, Span } from '../../comm/schedule.js';
import { scheduleOfShape } from '../../schedule/shapes.js';
import { bindSchedule } from '../../schedule/run.js';

/** A construction round's exchange: this rank's record out, the partner's in (RECORD_BYTES each). */
const EXCHANGE_BUFFERS: readonly ScheduleBuffer[] = [
  { name: 'in', bytes: RECORD_BYTES },
  { name: 'out', bytes: RECORD_BYTES },
];
const RECORD_SPAN_IN: Span = [{ buffer: 0, offset: 0, length: RECORD_BYTES }];
const RECORD_SPAN_OUT: Span = [{ buffer: 1, offset: 0, length: RECORD_BYTES }];
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
}

/** Bytes of a notification: kind (+ 2·count checksum), round, peer, size as float64. */
export const NOTIFY_BYTES = 32;

/** A gather root's notification from its range's fixed root: one receive of NOTIFY_BYTES. */
const NOTIFY_BUFFERS: readonly ScheduleBuffer[] = [{ name: 'notification', bytes: NOTIFY_BYTES }];
const NOTIFY_SPAN: Span = [{ buffer: 0, offset: 0, length: NOTIFY_BYTES }];

function encodeEvent(e: RoleEvent): Uint8Array {
  const f = new Float64Array([(e.kind === 'recv' ? 0 : 1) + 2 * e.check, e.round, e.peer, e.size]);
  return new Uint8Array(f.buffer);
}


/**
 * Runs this rank's part of the construction. Every rank of `comm` must call it with the same
 * root, context and tags.
 */
export async function constructAdaptive(input: ConstructionInput): Promise<AdaptiveRole> {
  const { comm, root, count, ctx, tags } = input;
  const v = comm.rank;
  const p = comm.size;
  const D = hypercubeRounds(p);
  const children: RoleEvent[] = [];
  let parent: RoleEvent | undefined;
  const emit = (e: RoleEvent): void => {
    if (e.kind === 'recv') children.push(e);
    else parent = e;
    input.onEvent?.(e);
  };
  // Defined while this rank is the fixed root of its range; it is a gather root until it has a parent.
  let record: RangeRecord | undefined = leafRecord(v, count, ctx);
  let check = countCheck(v, count); // of the range whose fixed root this rank is
  const pending: Request<void>[] = [];
  const recBuf = new Float64Array(6);
  // one receive buffer each for the rounds' records and notifications (a round's message is
  // decoded before the next round's receive is posted)
  let recordIn: Uint8Array | undefined;
  let notifyIn: Uint8Array | undefined;
  const fingerprint = contextFingerprint(ctx);
  for (let d = 0; d < D && (record !== undefined || parent === undefined); d++) {
    const own = rangeOf(v, d, p);
    const other = partnerOf(own, d, p);
    if (other === undefined) continue; // the incomplete last range passes through this round
    const ownIsLeft = own.index % 2 === 0;
    const left = ownIsLeft ? own : other;
    const right = ownIsLeft ? other : own;
    if (record !== undefined) {
      // Fixed root (v = own.hi): exchange records with the partner range's fixed root.
      // the round's exchange is one step of a schedule: one native run (MPI: in C), receive first
      const into = (recordIn ??= new Uint8Array(RECORD_BYTES));
      const mismatch = (): InvalidArgumentError =>
        new InvalidArgumentError(
          'model',
          `ranks ${v} and ${other.hi} run the adaptive construction with different roots, cost models or adaptive options (every rank must pass the same)`,
          { rank: v },
        );
      const peer = other.hi;
      const exchange = scheduleOfShape(`adaptive exchange ${v} ${peer} ${tags.exchange}`, () => ({
        rank: v,
        buffers: EXCHANGE_BUFFERS,
        steps: [
          {
            window: 2,
            ops: [
              { kind: 'recv', peer, tag: tags.exchange, data: RECORD_SPAN_IN },
              { kind: 'send', peer, tag: tags.exchange, data: RECORD_SPAN_OUT },
            ],
          },
        ],
      }));
      const out = encodeRecord(record, fingerprint, recBuf, check);
      // a message of another length: the partner runs something else (a longer one: the transport's truncation)
      await bindSchedule(comm, exchange, [into, out], { once: true, recvError: (_peer, _tag, _expected, got, cause) => (got === undefined ? (cause as Error) : mismatch()) }).run();
      const got = decodeRecord(into);
      if (got.fingerprint !== fingerprint) throw mismatch();
      const theirs = got.record;
      const dec = decideJoin(ownIsLeft ? record : theirs, ownIsLeft ? theirs : record, left.lo, left.hi, right.hi, ctx);
      const ownReceives = dec.rightReceives !== ownIsLeft;
      const ev: RoleEvent = ownReceives
        ? { kind: 'recv', round: d, peer: theirs.gatherRoot, size: theirs.total, lo: other.lo, hi: other.hi, check: got.check }
        : { kind: 'send', round: d, peer: theirs.gatherRoot, size: record.total, lo: own.lo, hi: own.hi, check: 0 };
      if (record.gatherRoot === v) {
        emit(ev);
      } else {
        pending.push(handled(comm.isend(record.gatherRoot, tags.notify, encodeEvent(ev))));
      }
      record = ownIsLeft ? undefined : dec.joined;
      check = addChecks(check, got.check);
    } else {
      // Gather root only: the range's fixed root tells it the outcome.
      const into = (notifyIn ??= new Uint8Array(NOTIFY_BYTES));
      const from = own.hi;
      const notify = scheduleOfShape(`adaptive notify ${v} ${from} ${tags.notify}`, () => ({
        rank: v,
        buffers: NOTIFY_BUFFERS,
        steps: [{ window: 1, ops: [{ kind: 'recv', peer: from, tag: tags.notify, data: NOTIFY_SPAN }] }],
      }));
      await bindSchedule(comm, notify, [into], {
        once: true,
        recvError: (peer, _tag, expected, got, cause) =>
          got === undefined ? (cause as Error) : new CommunicationError(`rank ${v}: adaptive construction notification of ${got} bytes from rank ${peer}, ${expected} expected`, { rank: v }),
      }).run();
      const f = new Float64Array(into.buffer, 0, 4);
      const kind = f[0] % 2;
      if (f[1] !== d) throw new CommunicationError(`rank ${v}: adaptive construction notification for round ${f[1]} in round ${d}`, { rank: v });
      const ev: RoleEvent =
        kind === 0
          ? { kind: 'recv', round: d, peer: f[2], size: f[3], lo: other.lo, hi: other.hi, check: (f[0] - kind) / 2 }
          : { kind: 'send', round: d, peer: f[2], size: f[3], lo: own.lo, hi: own.hi, check: 0 };
      emit(ev);
    }
  }
  await comm.waitAll(pending);
  if (v !== root && parent === undefined) {
    throw new CommunicationError(`rank ${v}: the adaptive construction gave it no parent`, { rank: v });
  }
  // p = 1: the lone root still copies its block into the result (as adaptiveRounds and evaluate charge)
  const final = v === p - 1 && record !== undefined && p === 1 ? { ...record, time: ctx.model.copy(v, count) } : record;
  return { rank: v, p, root, count, children, parent, final: v === p - 1 ? final : undefined };
}

/**
 * Rounds reported in CollectiveInfo.constructionRounds: the longest chain of dependent
 * construction messages the protocol can produce, ⌈log₂p⌉ + 1 (p = 2: one exchange; p = 1: 0).
 */
export function constructionRounds(p: number): number {
  const D = hypercubeRounds(p);
  return p <= 2 ? D : D + 1;
}
