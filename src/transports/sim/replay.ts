/**
 * The simulator replaying a whole schedule at once (every rank's RankSchedule of a
 * WorldSchedule), synchronously, without rank programs, requests or promises: the engine of
 * sim.ts and the native executor of sim/schedule.ts fused into one loop over flat typed arrays
 * (LogGOPSim's way of simulating from a precomputed schedule, Hoefler et al., HPDC 2010, here
 * on vcoll's own schedules and cost models).
 *
 * The result is the one the simulator gives when every rank binds its schedule (a persistent
 * plan) and runs it `runs` times back to back from virtual time 0 — `for (…) await
 * bound.run()` in each rank program: the same virtual times per rank, messages, bytes, data
 * and trace (test/sim-replay.test.ts compares the two). To get there it keeps every rule of
 * sim.ts (visibility at the poster's clock, MPI matching, synchronous pairwise transfers,
 * ports, first matched first served arbitration at each virtual time, copies, 0-byte
 * messages) and the order in which things happen at one virtual time: the executor's
 * continuations go through the same FIFO ready queue counted in promise hops, and a rank whose
 * run ended starts its next one where its program would (after the ready queue has drained,
 * in the order the runs ended).
 *
 * What it does not need to do, because the schedule is checked first (schedule/check.ts:
 * matched, equal lengths, deadlock-free): receives of unknown size, wildcards, truncation.
 * Matching is the checker's pairing (checkAndPair): under MPI's rules the k-th send of a
 * channel meets its k-th receive in every run, so a posted operation pairs with its partner
 * once that is posted too.
 *
 * Steps with concurrent streams (comm/schedule.ts ScheduleStep `streams`, `after`) run as
 * sim/schedule.ts runs them (schedule/run.ts `streamed`): each stream issued in order with at
 * most `window` of its own operations outstanding, an operation waiting for its dependency; an
 * operation's continuation comes as many hops after its completion as a windowed one's (two
 * after a message, one after a processor copy or combine), issues from its own stream first,
 * then from the others in index order, and the last one ends the step one hop later. The
 * streams are laid out once (`sm`, E_STREAM, E_AFTER, ST_STREAM, a negative ST_WINDOW below);
 * a run only resets their counters. A step without streams takes the path it took before
 * streams existed (one more test on the windowed path, none on the others).
 *
 * Cost: O(N log N) to check and lay out N operations; then per message O(1) (matching, the
 * ready queue) plus O(log E) for its events (E pending) and arbitration; per run no
 * allocation. Memory: ~100 bytes per operation and ~80 per rank (plus the data buffers when
 * `data` is on).
 */
import { endpointCtx } from '../../comm/agree.js';
import { badTag } from '../../comm/group.js';
import { combineFunction, type RankSchedule, type ScheduleCombiner, type Span, spanBytes, spanView, type WorldSchedule } from '../../comm/schedule.js';
import { copyBytes, type MessageBuffer } from '../../comm/segments.js';
import { DeadlockError, type DeadlockedRank, InvalidArgumentError, UnavailableError } from '../../errors.js';
import { checkAndPair, pairOps } from '../../schedule/check.js';
import { type CostModel, type ModelFormula, modelFormula } from '../../model/cost-model.js';
import { engineOptions } from './engine-options.js';
import { IntEventQueue, IntKeyHeap } from './int-heap.js';
import { MODEL_CODES, O, OUT_COUNT, P, PARAM_COUNT, type SimAddon, simAddon, simAddonMissing } from './native-replay.js';
import type { SimOptions, SimTrace } from './types.js';

export interface ReplayOptions extends SimOptions {
  /** Runs of the schedule by every rank, back to back (default 1; 0: nothing runs). */
  readonly runs?: number;
  /**
   * Move the data (default true): every rank's buffers are zeroed arrays of the schedule's
   * sizes unless `buffers` gives them. false: times, messages and trace only (copies and
   * messages are charged, no byte moves, combines do not run).
   */
  readonly data?: boolean;
  /** Every rank's bound buffers (rank r: one per entry of its RankSchedule.buffers, at least that many bytes). */
  readonly buffers?: readonly (readonly Uint8Array[])[];
  /** The operator of the schedule's combine operations (required when it has any and `data` is on). */
  readonly combine?: ScheduleCombiner;
  /**
   * Which loop runs the replay: 'auto' (default) the C one (native/sim, `npm run build:sim`)
   * when it is built and can run this replay, else this module's; 'js' this module's; 'native'
   * the C one or an UnavailableError saying why not. Both give the same results.
   */
  readonly engine?: 'auto' | 'js' | 'native';
}

export interface ReplayResult {
  /** Latest final clock. */
  time: number;
  /** Every rank's virtual clock after its last run. */
  finish: number[];
  /** Messages completed (0-byte ones and copies through a port included), over all runs. */
  messages: number;
  bytes: number;
  trace?: SimTrace;
  /** Every rank's bound buffers (what the last run left in them; empty arrays when `data` is off). */
  buffers: Uint8Array[][];
  /** The loop that ran: the C one (native/sim) or this module's. */
  engine: 'native' | 'js';
}

// schedule operation kinds
const K_SEND = 0;
const K_RECV = 1;
const K_COPY = 2;
const K_PORT = 3;
const K_COMBINE = 4;
// continuations (ready queue codes, see `later`)
/** A windowed step's operation of rank r completed (payload r). */
const C_OP = 0;
/** Rank r's run resumes after its step (payload r). */
const C_STEP = 1;
/** A stream step's operation g completed (payload g: the operation, not its rank). */
const C_SOP = 2;
/** Payloads of the ready queue are below this (an entry is payload · 8 + (hops − 1) · 4 + code, an Int32Array element). */
const PAYLOAD_MAX = 2 ** 28;
/**
 * Bytes up to which a copy is a loop rather than copyWithin (a call into the runtime, ~25 ns
 * on the 2-core machine, about the time of a 20-byte loop). sim.ts copies a message of up to
 * 16 bytes by a forward loop and a processor copy of up to 16 disjoint bytes too; larger,
 * TypedArray set (memmove, as copyWithin): where the two differ (overlapping bytes) the
 * replay does what sim.ts does.
 */
const LOOP_COPY = 8;

/**
 * Per engine operation e, at I·e of `io` (one cache line: 12 integers, then two doubles in
 * `fo`, a view of the same memory): engine operations 0..N−1 are the schedule's operations in
 * order (a send, a receive, a copy through a port's receive side); N + g is the send side of
 * copy-through-a-port g.
 */
const I = 16;
/** The schedule operation's kind (K_*), K_PORT_SEND on a port copy's send side. */
const E_KIND = 0;
const E_RANK = 1;
/** World rank of the other side (destination of a send, source of a receive). */
const E_PEER = 2;
const E_LEN = 3;
const E_PARTNER = 4;
/** Links in a rank's list of transfers waiting for ports. */
const E_QPREV = 5;
const E_QNEXT = 6;
/** On block g of an operation of a stream step: its stream (index into `sm`); −1 in a step without streams. */
const E_STREAM = 7;
/** On block g of an operation of a stream step: the operation it waits for (`after`, as an operation index), or −1. */
const E_AFTER = 8;
/** A transfer's state: IDLE, POSTED (visible, its partner not yet), STARTED, or its entry in the waiting arrays (≥ 0). */
const E_STATE = 9;
/**
 * On block g: engine operations of schedule operation g outstanding; in a stream step DONE
 * once its continuation has run (schedule/run.ts `finished`), until the step starts again.
 */
const S_CUR = 10;
const DONE = -1;
/** Offset in the arena of the operation's one range (-1: several ranges, `bufs` has its view). */
const E_OFF = 11;
/** In `fo` (stride I / 2): match order, transfer start. */
const F_SEQ = 6;
const F_START = 7;
const IDLE = -1;
const STARTED = -2;
const POSTED = -3;
/** A copy through a port's send side (engine operation N + g). */
const K_PORT_SEND = 5;

/** Per rank r, at Q·r of `ro` (one cache line: 14 integers, then the clock in `rf`). */
const Q = 16;
const Q_STEP = 0;
const Q_LO = 1;
const Q_HI = 2;
const Q_NEXT = 3;
const Q_RUNNING = 4;
const Q_DONE = 5;
const Q_UNFINISHED = 6;
/** ISSUING | WINDOWED | DIRTY | STREAMED. */
const Q_FLAGS = 7;
const Q_WSIZE = 8;
const Q_RUNS = 9;
const Q_BUSY_S = 10;
const Q_BUSY_R = 11;
const Q_PHEAD = 12;
const Q_PTAIL = 13;
/** In `rf` (stride Q / 2): the virtual clock. */
const R_CLOCK = 7;
/** Per step s, at 4s of `st`. */
const ST_LO = 0;
/** Its window; −window for a step with streams (whatever its window: so nextStep tells them apart on its windowed path). */
const ST_WINDOW = 1;
/** 1: the step has an operation with a request (anything but a processor copy or combine). */
const ST_REQS = 2;
/** Its first stream in `sm`: its streams are [ST_STREAM of s, ST_STREAM of s + 1) (none: a step without streams). */
const ST_STREAM = 3;
const ISSUING = 1;
const WINDOWED = 2;
const DIRTY = 4;
/** The current step has streams (WINDOWED is set too). */
const STREAMED = 8;

/** Per stream x (of every stream step of every rank, in order), at SM·x of `sm`. */
const SM = 4;
/** Its operations are [SM_START, SM_END) (static). */
const SM_START = 0;
const SM_END = 1;
/** Its next operation to issue, and its operations issued whose continuation has not run (per run of the step). */
const SM_NEXT = 2;
const SM_RUNNING = 3;

/**
 * Replays `world` (checked first: a schedule with problems is an InvalidArgumentError listing
 * them) under the simulator's `options`; see the module comment for what it equals.
 */
export function replaySchedule(world: WorldSchedule, options: ReplayOptions): ReplayResult {
  return new ScheduleReplay(world, options).run(options.runs ?? 1);
}

/**
 * A schedule laid out for replays: checked and laid out once (O(N log N)), then `run(runs)`
 * as often as wanted, each an independent simulation from virtual time 0 (like
 * replaySchedule; `options.runs` is ignored here). The bound buffers keep their bytes from one
 * `run` to the next; buffers given in the options are copied in at the start of each `run`
 * and back at its end.
 */
export class ScheduleReplay {
  private readonly replay: Replay;

  constructor(world: WorldSchedule, options: ReplayOptions) {
    this.replay = prepare(world, options);
  }

  /** Replays the schedule `runs` times back to back on every rank (default 1). */
  run(runs = 1): ReplayResult {
    return this.replay.run(runs);
  }
}

/**
 * replaySchedule for a schedule its caller has just checked (checkSchedule found no problem in
 * this very object, unchanged since): the check is not repeated (at 2^20 ranks it costs
 * seconds). Not part of the public API — a schedule that was not checked could make the C loop
 * read outside its arrays.
 */
export function replayCheckedSchedule(world: WorldSchedule, options: ReplayOptions): ReplayResult {
  return prepare(world, options, true).run(options.runs ?? 1);
}

function prepare(world: WorldSchedule, options: ReplayOptions, checked = false): Replay {
  const p = world.ranks.length;
  const eo = engineOptions(p, options);
  const { problems, partner } = checked ? { problems: [], partner: pairOps(world) } : checkAndPair(world);
  if (problems.length > 0) {
    const shown = problems.slice(0, 5).map((x) => `${x.kind}: ${x.message}`);
    throw new InvalidArgumentError('schedule', `'${world.label}' has ${problems.length} problem${problems.length === 1 ? '' : 's'}: ${shown.join('; ')}`);
  }
  const data = options.data ?? true;
  const bound = boundBuffers(world, options, data);
  const engine = options.engine ?? 'auto';
  if (engine !== 'auto' && engine !== 'js' && engine !== 'native') throw new InvalidArgumentError('engine', `must be 'auto', 'js' or 'native', got ${String(engine)}`);
  return new Replay(world, partner, eo.model, eo.k, eo.duplex, eo.unit, bound, data, options.combine, options.trace === true, engine);
}

/** Bytes of all buffers at most (offsets into the arena are 32-bit integers). */
const ARENA_MAX = 0x7fffffff;

/**
 * The bytes the replay works on: every rank's buffers laid out in one arena (`mem`, each
 * buffer at a multiple of 8 bytes, so combines see aligned elements), so that moving a
 * message is a copy between two offsets of one array, with the caller's buffers (checked)
 * copied in; or, without data, views of one scratch area for the lengths only.
 */
interface Bound {
  readonly views: Uint8Array[][];
  readonly mem: Uint8Array;
  readonly base: number[][];
  readonly given: readonly (readonly Uint8Array[])[] | undefined;
}

function boundBuffers(world: WorldSchedule, options: ReplayOptions, data: boolean): Bound {
  const given = options.buffers;
  if (given !== undefined) {
    if (given.length !== world.ranks.length) throw new InvalidArgumentError('buffers', `must have one entry per rank (${world.ranks.length}), got ${given.length}`);
    world.ranks.forEach((rs, r) => {
      const b = given[r];
      if (b.length !== rs.buffers.length) throw new InvalidArgumentError('buffers', `rank ${r}: must have ${rs.buffers.length} buffers, got ${b.length}`, { rank: r });
      rs.buffers.forEach((sb, i) => {
        if (!(b[i] instanceof Uint8Array) || b[i].length < sb.bytes) {
          throw new InvalidArgumentError('buffers', `rank ${r}: buffer ${i} ('${sb.name}') must be a Uint8Array of at least ${sb.bytes} bytes`, { rank: r });
        }
      });
    });
  }
  // without data nothing is bound: the layout needs the ranges' lengths only
  if (!data) return { views: [], mem: EMPTY, base: [], given: undefined };
  let total = 0;
  const base = world.ranks.map((rs) =>
    rs.buffers.map((b) => {
      const at = total;
      total += Math.ceil(b.bytes / 8) * 8;
      return at;
    }),
  );
  if (total > ARENA_MAX) {
    throw new InvalidArgumentError('buffers', `the schedule's buffers total ${total} bytes; a replay that moves data holds at most ${ARENA_MAX} (replay with data: false for times only)`);
  }
  const mem = new Uint8Array(total);
  const views = world.ranks.map((rs, r) => rs.buffers.map((b, i) => mem.subarray(base[r][i], base[r][i] + b.bytes)));
  return { views, mem, base, given };
}

const EMPTY = new Uint8Array(0);


/**
 * The pieces sim/schedule.ts copies a processor copy in (one copy when both spans are one range
 * or none, else comm/segments.ts forEachPiece's: the longest runs within a range of each), as
 * (destination, source, bytes) with arena offsets (0 without `base`: no data).
 */
function spanPieces(to: Span, from: Span, len: number, base: readonly number[] | undefined, piece: (d: number, s: number, k: number) => void): void {
  const at = (span: Span, i: number, off: number): number => (base === undefined ? 0 : base[span[i].buffer] + span[i].offset + off);
  if (to.length <= 1 && from.length <= 1) {
    piece(to.length === 0 ? 0 : at(to, 0, 0), from.length === 0 ? 0 : at(from, 0, 0), from.length === 0 ? 0 : from[0].length);
    return;
  }
  let di = 0;
  let doff = 0;
  let si = 0;
  let soff = 0;
  let left = len;
  while (left > 0) {
    const dl = to[di].length;
    const sl = from[si].length;
    const k = Math.min(left, dl - doff, sl - soff);
    if (k > 0) {
      piece(at(to, di, doff), at(from, si, soff), k);
      doff += k;
      soff += k;
      left -= k;
    }
    if (doff === dl) {
      di++;
      doff = 0;
    }
    if (soff === sl) {
      si++;
      soff = 0;
    }
  }
}

/** `tag`, or the endpoint's InvalidArgumentError when it is no tag (the checker takes any integer ≥ 0). */
function tagOf(tag: number, rank: number): number {
  const bad = badTag(tag, false, rank);
  if (bad !== undefined) throw bad;
  return tag;
}


class Replay {
  private readonly p: number;
  private readonly model: CostModel;
  private readonly k: number;
  private readonly duplex: boolean;
  private readonly unit: number;
  private readonly data: boolean;
  /** Schedule operations. */
  private readonly n: number;
  private readonly io: Int32Array;
  private readonly fo: Float64Array;
  /** Every rank's buffers, one after the other (empty without data). */
  private readonly mem: Uint8Array;
  /**
   * Engine operation e's bytes when they are several ranges (E_OFF −1): send data, receive
   * buffer, a port copy's destination (e = g) or source (e = N + g); sparse.
   */
  private readonly bufs: MessageBuffer[] = [];
  /** A processor copy g's pieces [pieceLo[g], pieceLo[g + 1]) (empty for other operations): arena offsets and length. */
  private readonly pieceLo: Int32Array;
  private readonly pieceDst: Int32Array;
  private readonly pieceSrc: Int32Array;
  private readonly pieceLen: Int32Array;
  private pieceShort: Uint8Array = EMPTY;
  private readonly combineFns: (() => void)[] = [];
  /**
   * Steps: rank r's are [stepBase[r], stepBase[r + 1]); step s at 4s of `st` (one block):
   * ST_LO (its operations are [ST_LO of s, ST_LO of s + 1)), ST_WINDOW (negative: the step has
   * streams), ST_REQS, ST_STREAM.
   */
  private readonly stepBase: Int32Array;
  private readonly st: Int32Array;
  /** The streams of the stream steps, SM per stream (empty without any). */
  private readonly sm: Int32Array;
  private readonly ro: Int32Array;
  /** The ranks' clocks, in their blocks of `ro` (R_CLOCK). */
  private readonly rf: Float64Array;
  /** Schedule operation g's tag (for traces and error texts). */
  private readonly tags: Int32Array;
  private events = new IntEventQueue();
  private cand = new IntKeyHeap();
  private readonly dirty: Int32Array;
  private nDirty = 0;
  private wOps = new Int32Array(64);
  private wFrom = new Int32Array(64);
  private wTo = new Int32Array(64);
  private wLen = 0;
  private nWaiting = 0;
  /** The ready queue, a ring of (rank, hops left, code) entries (see `later`). */
  private ready = new Int32Array(64);
  private readyHead = 0;
  private readyTail = 0;
  /** Ranks whose run ended, in that order, to start their next run (a ring of p). */
  private readonly restart: Int32Array;
  private restartHead = 0;
  private restartCount = 0;
  private evSeq = 0;
  private matchSeq = 0;
  private now = 0;
  private live = 0;
  private finished = 0;
  private messages = 0;
  private bytes = 0;
  private trace: SimTrace | undefined;
  private readonly tracing: boolean;
  /** The C loop when it runs this replay (see the constructor), and its parameters. */
  private native: SimAddon | undefined = undefined;
  private readonly params = new Float64Array(PARAM_COUNT);
  private readonly out = new Float64Array(OUT_COUNT);
  private nodeOf: Int32Array = new Int32Array(0);
  private alphaM: Float64Array = new Float64Array(0);
  private betaM: Float64Array = new Float64Array(0);
  private gammaV: Float64Array = new Float64Array(0);
  /** The last run ended normally (every queue empty, every operation idle): the next needs no full reset. */
  private clean = true;
  private readonly bound: Bound;

  constructor(
    world: WorldSchedule,
    /** checkAndPair's pairing of the sends and receives, in this class's operation order. */
    partner: Int32Array,
    model: CostModel,
    k: number,
    duplex: boolean,
    unit: number,
    bound: Bound,
    data: boolean,
    combine: ScheduleCombiner | undefined,
    trace: boolean,
    engine: 'auto' | 'js' | 'native',
  ) {
    const p = world.ranks.length;
    this.p = p;
    this.model = model;
    this.k = k;
    this.duplex = duplex;
    this.unit = unit;
    this.data = data;
    this.bound = bound;
    this.mem = bound.mem;
    this.tracing = trace;
    let n = 0;
    let nSteps = 0;
    let nStreams = 0;
    let ports = false;
    for (const rs of world.ranks) {
      nSteps += rs.steps.length;
      for (const st of rs.steps) {
        n += st.ops.length;
        if (st.streams !== undefined) nStreams += st.streams.length;
        if (!ports) for (const op of st.ops) if (op.kind === 'copy' && op.tag !== undefined) ports = true;
      }
    }
    if (nStreams > 0 && n >= PAYLOAD_MAX) {
      throw new UnavailableError('replay-streams', `the schedule replay runs schedules with concurrent streams of fewer than 2^28 operations ('${world.label}' has ${n})`);
    }
    this.n = n;
    this.sm = new Int32Array(SM * nStreams);
    const ne = ports ? 2 * n : n;
    this.io = new Int32Array(I * ne);
    this.fo = new Float64Array(this.io.buffer);
    this.pieceLo = new Int32Array(n + 1);
    this.tags = new Int32Array(n);
    this.stepBase = new Int32Array(p + 1);
    this.st = new Int32Array(4 * (nSteps + 1));
    this.ro = new Int32Array(Q * p);
    this.rf = new Float64Array(this.ro.buffer);
    this.dirty = new Int32Array(p);
    this.restart = new Int32Array(p);
    const io = this.io;
    const pieceDst: number[] = [];
    const pieceSrc: number[] = [];
    const pieceLen: number[] = [];
    /** What keeps the C loop from running this replay (data it does not move, a model it does not know). */
    let nativeBlock = '';
    let g = 0;
    let s = 0;
    let x = 0;
    for (let r = 0; r < p; r++) {
      const rs: RankSchedule = world.ranks[r];
      const bufs = data ? bound.views[r] : [];
      const base = data ? bound.base[r] : undefined;
      /** Arena offset of a span of one range (-1: several; 0 when no data moves). */
      const offOf = (span: Span): number => (base === undefined || span.length === 0 ? 0 : span.length === 1 ? base[span[0].buffer] + span[0].offset : -1);
      this.stepBase[r] = s;
      for (const st of rs.steps) {
        this.st[4 * s + ST_LO] = g;
        // an integer ≥ 1 (checked); a window of 2^31 or more covers every step; negated for a step with streams
        this.st[4 * s + ST_WINDOW] = (st.streams === undefined ? 1 : -1) * Math.min(st.window, 0x7fffffff);
        this.st[4 * s + ST_REQS] = st.ops.some((op) => (op.kind !== 'copy' && op.kind !== 'combine') || (op.kind === 'copy' && op.tag !== undefined)) ? 1 : 0;
        this.st[4 * s + ST_STREAM] = x;
        s++;
        const first = g;
        const after = st.after;
        // the step's streams (checked: schedule/streams.ts), each operation's stream and dependency below
        const streams = st.streams;
        let sx = x;
        if (streams !== undefined) x = this.layStreams(x, g, streams);
        for (const op of st.ops) {
          const at = I * g;
          this.pieceLo[g] = pieceDst.length;
          io[at + E_RANK] = r;
          io[at + E_STATE] = IDLE;
          if (streams === undefined) {
            io[at + E_STREAM] = io[at + E_AFTER] = -1;
          } else {
            while (this.sm[SM * sx + SM_END] <= g) sx++;
            io[at + E_STREAM] = sx;
            const d = after === undefined ? -1 : after[g - first];
            io[at + E_AFTER] = d < 0 ? -1 : first + d;
          }
          if (op.kind === 'send' || op.kind === 'recv') {
            const send = op.kind === 'send';
            io[at + E_KIND] = send ? K_SEND : K_RECV;
            this.tags[g] = tagOf(op.tag, r);
            io[at + E_PEER] = op.peer;
            io[at + E_LEN] = spanBytes(op.data);
            io[at + E_PARTNER] = partner[g];
            io[at + E_OFF] = offOf(op.data);
            if (io[at + E_OFF] === -1) {
              this.bufs[g] = spanView(bufs, op.data);
              nativeBlock ||= 'a message of several ranges moves data';
            }
          } else if (op.kind === 'copy') {
            const len = spanBytes(op.from);
            if (op.tag !== undefined) {
              io[at + E_KIND] = K_PORT;
              this.tags[g] = tagOf(op.tag, r);
              io[at + E_PEER] = r;
              io[at + E_LEN] = len;
              // the two sides of a copy through a port are each other's partner
              io[at + E_PARTNER] = n + g;
              io[at + E_OFF] = offOf(op.to);
              if (io[at + E_OFF] === -1) {
                this.bufs[g] = spanView(bufs, op.to);
                nativeBlock ||= 'a copy through a port of several ranges moves data';
              }
              const bt = I * (n + g);
              io[bt + E_KIND] = K_PORT_SEND;
              io[bt + E_RANK] = r;
              io[bt + E_PEER] = r;
              io[bt + E_LEN] = len;
              io[bt + E_PARTNER] = g;
              io[bt + E_STATE] = IDLE;
              io[bt + E_OFF] = offOf(op.from);
              if (io[bt + E_OFF] === -1) {
                this.bufs[n + g] = spanView(bufs, op.from);
                nativeBlock ||= 'a copy through a port of several ranges moves data';
              }
            } else {
              io[at + E_KIND] = K_COPY;
              // as sim/schedule.ts: one copy of whole views, else piece by piece (forEachPiece's pieces)
              spanPieces(op.to, op.from, len, base, (d, x, k) => {
                pieceDst.push(d);
                pieceSrc.push(x);
                pieceLen.push(k);
              });
            }
          } else {
            io[at + E_KIND] = K_COMBINE;
            if (data) {
              if (combine === undefined && op.into.length > 0) {
                throw new InvalidArgumentError('combine', `rank ${r}: the schedule has combine operations: give the operator (ReplayOptions.combine)`, { rank: r });
              }
              this.combineFns[g] = combineFunction(op, bufs, combine);
              if (op.into.length > 0) nativeBlock ||= 'combines run with data (a JavaScript operator)';
            }
          }
          g++;
        }
      }
    }
    this.stepBase[p] = s;
    this.st[4 * s + ST_LO] = g;
    this.st[4 * s + ST_STREAM] = x;
    this.pieceLo[n] = pieceDst.length;
    this.pieceDst = Int32Array.from(pieceDst);
    this.pieceSrc = Int32Array.from(pieceSrc);
    this.pieceLen = Int32Array.from(pieceLen);
    this.pieceShort = new Uint8Array(this.pieceDst.length);
    // a loop where it gives set's bytes (disjoint ranges), cheaper than the runtime call up to LOOP_COPY bytes
    for (let x = 0; x < this.pieceDst.length; x++) {
      const dst = this.pieceDst[x];
      const src = this.pieceSrc[x];
      const len = this.pieceLen[x];
      this.pieceShort[x] = len <= LOOP_COPY && (dst + len <= src || src + len <= dst) ? 1 : 0;
    }
    const formula = modelFormula(model);
    if (formula === undefined) nativeBlock ||= 'the cost model is not one of linearModel, pairwiseModel, hierarchicalModel';
    if (engine !== 'js' && nativeBlock === '') {
      this.native = simAddon();
      if (this.native !== undefined && formula !== undefined) this.setNativeModel(formula);
    }
    if (engine === 'native' && this.native === undefined) {
      throw new UnavailableError('sim-native', `the native replay cannot run this schedule: ${nativeBlock || simAddonMissing()}`);
    }
  }

  /** Lays out in `sm`, from stream x on, the streams of a step whose first operation is g; returns the next free stream. */
  private layStreams(x: number, g: number, streams: readonly number[]): number {
    const sm = this.sm;
    let at = g;
    for (const count of streams) {
      sm[SM * x + SM_START] = at;
      at += count;
      sm[SM * x + SM_END] = at;
      x++;
    }
    return x;
  }

  /** The model's formula in the C loop's parameters. */
  private setNativeModel(f: ModelFormula): void {
    const q = this.params;
    q[P.p] = this.p;
    q[P.n] = this.n;
    q[P.k] = this.k;
    q[P.duplex] = this.duplex ? 1 : 0;
    q[P.unit] = this.unit;
    q[P.data] = this.data ? 1 : 0;
    q[P.trace] = this.tracing ? 1 : 0;
    q[P.model] = MODEL_CODES[f.kind];
    if (f.kind === 'linear') {
      q[P.alpha] = f.alpha;
      q[P.beta] = f.beta;
      q[P.gamma] = f.gamma;
    } else if (f.kind === 'hierarchical') {
      q[P.intraAlpha] = f.intra.alpha;
      q[P.intraBeta] = f.intra.beta;
      q[P.interAlpha] = f.inter.alpha;
      q[P.interBeta] = f.inter.beta;
      q[P.gamma] = f.gamma;
      this.nodeOf = f.nodeOf;
    } else {
      this.alphaM = f.alpha;
      this.betaM = f.beta;
      this.gammaV = f.gamma;
    }
  }

  run(runs: number): ReplayResult {
    if (!Number.isInteger(runs) || runs < 0) throw new InvalidArgumentError('runs', `must be an integer >= 0, got ${String(runs)}`);
    const p = this.p;
    this.reset();
    const native = this.native;
    if (native !== undefined) {
      // the same loop in C, on the same arrays, from the same reset state
      this.params[P.runs] = runs;
      const out = this.out;
      const ok = native.replay(
        this.io,
        this.ro,
        this.st,
        this.stepBase,
        this.sm,
        this.pieceLo,
        this.pieceDst,
        this.pieceSrc,
        this.pieceLen,
        this.pieceShort,
        this.mem,
        this.params,
        this.nodeOf,
        this.alphaM,
        this.betaM,
        this.gammaV,
        out,
      );
      if (ok === false) throw new RangeError('the native replay ran out of memory');
      const trace = this.trace;
      if (trace !== undefined && ok !== true) {
        const [m, c] = ok;
        for (let i = 0; i < m.length; i += 6) {
          const tag = this.tags[m[i + 2]];
          trace.messages.push({ from: m[i], to: m[i + 1], ctx: endpointCtx(0, tag), tag, bytes: m[i + 3], start: m[i + 4], end: m[i + 5] });
        }
        for (let i = 0; i < c.length; i += 4) trace.copies.push({ rank: c[i], bytes: c[i + 1], start: c[i + 2], end: c[i + 3] });
      }
      this.messages = out[O.messages];
      this.bytes = out[O.bytes];
      this.now = out[O.now];
      this.live = out[O.live];
      this.finished = out[O.finished];
    } else {
      if (runs > 0) {
        // every rank program starts its first run, in rank order
        for (let r = 0; r < p; r++) {
          this.ro[Q * r + Q_RUNS] = runs;
          this.pushRestart(r);
        }
      } else {
        this.finished = p;
      }
      this.loop();
    }
    if (this.finished < p || this.live > 0) {
      const stuck = this.stuckRanks();
      const listed = stuck.slice(0, 10).map((x) => `rank ${x.rank}: ${x.waitsFor.join(', ')}`);
      if (stuck.length > 10) listed.push(`and ${stuck.length - 10} more ranks`);
      const msg = `deadlock at virtual time ${this.now}: ${listed.join('; ')}`;
      throw new DeadlockError(msg, stuck);
    }
    const finish = new Array<number>(p);
    for (let r = 0; r < p; r++) finish[r] = this.rf[(Q / 2) * r + R_CLOCK];
    let time = 0;
    for (const f of finish) if (f > time) time = f;
    const out: ReplayResult = { time, finish, messages: this.messages, bytes: this.bytes, buffers: this.buffersOut(), engine: native !== undefined ? 'native' : 'js' };
    if (this.trace !== undefined) out.trace = this.trace;
    this.clean = true;
    return out;
  }

  /** The state of virtual time 0 (after a failed run, every operation's too), the caller's bytes copied in. */
  private reset(): void {
    const p = this.p;
    const ro = this.ro;
    if (!this.clean) {
      this.events = new IntEventQueue();
      this.cand = new IntKeyHeap();
      const io = this.io;
      for (let e = 0; e < io.length; e += I) {
        io[e + S_CUR] = 0;
        io[e + E_STATE] = IDLE;
      }
    }
    this.clean = false;
    // every field 0 (the clock too), but the lists' ends
    ro.fill(0);
    for (let r = 0; r < p; r++) {
      ro[Q * r + Q_PHEAD] = -1;
      ro[Q * r + Q_PTAIL] = -1;
    }
    this.nDirty = this.wLen = this.nWaiting = 0;
    this.readyHead = this.readyTail = 0;
    this.restartHead = this.restartCount = 0;
    this.evSeq = this.matchSeq = this.now = this.live = this.finished = this.messages = this.bytes = 0;
    this.trace = this.tracing ? { messages: [], copies: [] } : undefined;
    const given = this.bound.given;
    if (this.data && given !== undefined) this.bound.views.forEach((vs, r) => vs.forEach((v, i) => v.set(given[r][i].subarray(0, v.length))));
  }

  /** sim.ts's run loop, the rank programs' part being the starts of next runs. */
  private loop(): void {
    const events = this.events;
    const io = this.io;
    for (;;) {
      if (this.restartCount > 0) {
        // the programs whose run ended resume (in that order) and start the next one
        while (this.restartCount > 0) {
          const r = this.restart[this.restartHead];
          this.restartHead = this.restartHead + 1 === this.p ? 0 : this.restartHead + 1;
          this.restartCount--;
          this.startRun(r);
        }
        continue;
      }
      if (this.readyHead < this.readyTail) {
        this.runReady();
        continue;
      }
      const now = this.now;
      if (events.size > 0 && events.topT() <= now) {
        do {
          const e = events.pop();
          if (io[I * e + E_STATE] === STARTED) this.endTransfer(e);
          else this.match(e);
        } while (events.size > 0 && events.topT() <= now);
        continue;
      }
      if (this.nDirty > 0) {
        this.arbitrate();
        continue;
      }
      if (events.size > 0) {
        this.now = events.topT();
        continue;
      }
      break;
    }
  }

  private pushRestart(r: number): void {
    let at = this.restartHead + this.restartCount++;
    if (at >= this.p) at -= this.p;
    this.restart[at] = r;
  }

  // ---- the executor (sim/schedule.ts), one rank's state at Q·r of `ro`

  private startRun(r: number): void {
    const ro = this.ro;
    const at = Q * r;
    ro[at + Q_RUNS]--;
    ro[at + Q_STEP] = this.stepBase[r] - 1;
    ro[at + Q_LO] = ro[at + Q_HI] = ro[at + Q_NEXT] = 0;
    ro[at + Q_FLAGS] &= ~ISSUING;
    this.nextStep(r);
  }

  private endRun(r: number): void {
    if (this.ro[Q * r + Q_RUNS] > 0) this.pushRestart(r);
    else this.finished++;
  }

  private nextStep(r: number): void {
    const ro = this.ro;
    const at = Q * r;
    const st = this.st;
    const end = this.stepBase[r + 1];
    let s = ro[at + Q_STEP] + 1;
    while (s < end && st[4 * s + 4 + ST_LO] === st[4 * s + ST_LO]) s++;
    ro[at + Q_STEP] = s;
    if (s === end) {
      this.endRun(r);
      return;
    }
    const first = st[4 * s + ST_LO];
    const hi = st[4 * s + 4 + ST_LO];
    ro[at + Q_LO] = first;
    ro[at + Q_NEXT] = first;
    ro[at + Q_HI] = hi;
    const n = hi - first;
    const w = st[4 * s + ST_WINDOW];
    if (w < n) {
      // (a step with streams has a negative window: one test on the windowed path only)
      if (w < 0) {
        this.startStreams(r, s, -w);
        return;
      }
      ro[at + Q_FLAGS] = (ro[at + Q_FLAGS] & ~STREAMED) | WINDOWED;
      ro[at + Q_WSIZE] = w;
      ro[at + Q_RUNNING] = 0;
      ro[at + Q_DONE] = 0;
      this.launch(r);
      return;
    }
    ro[at + Q_FLAGS] &= ~(WINDOWED | STREAMED);
    ro[at + Q_WSIZE] = n;
    ro[at + Q_UNFINISHED] = n;
    ro[at + Q_FLAGS] |= ISSUING;
    while (ro[at + Q_NEXT] < hi) this.issue(r, ro[at + Q_NEXT]++);
    ro[at + Q_FLAGS] &= ~ISSUING;
    if (ro[at + Q_UNFINISHED] === 0) this.later(r, st[4 * s + ST_REQS] === 1 ? 2 : 1, C_STEP);
  }

  private launch(r: number): void {
    const ro = this.ro;
    const at = Q * r;
    const hi = ro[at + Q_HI];
    while (ro[at + Q_NEXT] < hi && ro[at + Q_RUNNING] < ro[at + Q_WSIZE]) this.issue(r, ro[at + Q_NEXT]++);
  }

  /**
   * Starts rank r's step s, which has streams: each stream from its first operation, at most
   * `window` outstanding per stream, every operation not done; then each stream issues, in
   * index order (sim/schedule.ts startStreams).
   */
  private startStreams(r: number, s: number, window: number): void {
    const ro = this.ro;
    const io = this.io;
    const sm = this.sm;
    const st = this.st;
    const at = Q * r;
    ro[at + Q_FLAGS] |= WINDOWED | STREAMED;
    ro[at + Q_WSIZE] = window;
    ro[at + Q_DONE] = 0;
    // issued from the streams, not in order: a deadlock report looks at every operation
    ro[at + Q_NEXT] = ro[at + Q_HI];
    for (let g = ro[at + Q_LO]; g < ro[at + Q_HI]; g++) io[I * g + S_CUR] = 0;
    const x0 = st[4 * s + ST_STREAM];
    const x1 = st[4 * s + 4 + ST_STREAM];
    for (let x = x0; x < x1; x++) {
      sm[SM * x + SM_NEXT] = sm[SM * x + SM_START];
      sm[SM * x + SM_RUNNING] = 0;
    }
    for (let x = x0; x < x1; x++) this.launchStream(r, x);
  }

  /** Rank r issues from stream x while it has fewer than `window` outstanding and its next operation's dependency (if any) is done. */
  private launchStream(r: number, x: number): void {
    const sm = this.sm;
    const io = this.io;
    const end = sm[SM * x + SM_END];
    const w = this.ro[Q * r + Q_WSIZE];
    while (sm[SM * x + SM_NEXT] < end && sm[SM * x + SM_RUNNING] < w) {
      const g = sm[SM * x + SM_NEXT];
      const d = io[I * g + E_AFTER];
      if (d >= 0 && io[I * d + S_CUR] !== DONE) return;
      sm[SM * x + SM_NEXT] = g + 1;
      sm[SM * x + SM_RUNNING]++;
      this.issue(r, g);
    }
  }

  /** The continuation of stream operation g (sim/schedule.ts streamOpDone): its stream issues first, then the others in index order; the last ends the step. */
  private streamOpDone(g: number): void {
    const io = this.io;
    const ro = this.ro;
    const r = io[I * g + E_RANK];
    const at = Q * r;
    io[I * g + S_CUR] = DONE;
    const x = io[I * g + E_STREAM];
    this.sm[SM * x + SM_RUNNING]--;
    if (++ro[at + Q_DONE] === ro[at + Q_HI] - ro[at + Q_LO]) {
      this.later(r, 1, C_STEP);
      return;
    }
    this.launchStream(r, x);
    const s = ro[at + Q_STEP];
    const x1 = this.st[4 * s + 4 + ST_STREAM];
    for (let y = this.st[4 * s + ST_STREAM]; y < x1; y++) if (y !== x) this.launchStream(r, y);
  }

  /** Processor copy or combine g of rank r done as issued: in a windowed step its continuation one hop later, else one fewer unfinished. */
  private localDone(r: number, g: number): void {
    const at = Q * r;
    const flags = this.ro[at + Q_FLAGS];
    if ((flags & WINDOWED) !== 0) {
      this.ro[at + Q_RUNNING]++;
      if ((flags & STREAMED) === 0) this.later(r, 1, C_OP);
      else this.later(g, 1, C_SOP);
    } else {
      this.ro[at + Q_UNFINISHED]--;
    }
  }

  private issue(r: number, g: number): void {
    const io = this.io;
    const at = I * g;
    const k = io[at + E_KIND];
    if (k === K_COMBINE) {
      io[at + S_CUR] = 0;
      if (this.data) this.combineFns[g]();
      this.localDone(r, g);
      return;
    }
    if (k === K_COPY) {
      io[at + S_CUR] = 0;
      const end = this.pieceLo[g + 1];
      for (let x = this.pieceLo[g]; x < end; x++) {
        const m = this.pieceLen[x];
        if (this.data) {
          const src = this.pieceSrc[x];
          const dst = this.pieceDst[x];
          const mem = this.mem;
          if (this.pieceShort[x] === 1) for (let b = 0; b < m; b++) mem[dst + b] = mem[src + b];
          else mem.copyWithin(dst, src, src + m);
        }
        this.chargeCopy(r, m);
      }
      this.localDone(r, g);
      return;
    }
    this.ro[Q * r + Q_RUNNING]++;
    if (k === K_PORT) {
      io[at + S_CUR] = 2;
      // as collectives/ports.ts selfCopy: the receive first
      this.post(g);
      this.post(this.n + g);
    } else {
      io[at + S_CUR] = 1;
      this.post(g);
    }
  }

  private opDone(g: number): void {
    const io = this.io;
    if (--io[I * g + S_CUR] > 0) return;
    const r = io[I * g + E_RANK];
    const at = Q * r;
    const flags = this.ro[at + Q_FLAGS];
    if ((flags & WINDOWED) !== 0) {
      if ((flags & STREAMED) === 0) this.later(r, 2, C_OP);
      else this.later(g, 2, C_SOP);
    } else if (--this.ro[at + Q_UNFINISHED] === 0 && (flags & ISSUING) === 0) this.later(r, 2, C_STEP);
  }

  /** Continuation `code` of `payload` (a rank; an operation for C_SOP). */
  private hop(payload: number, code: number): void {
    if (code === C_OP) {
      const ro = this.ro;
      const at = Q * payload;
      ro[at + Q_RUNNING]--;
      if (++ro[at + Q_DONE] === ro[at + Q_HI] - ro[at + Q_LO]) this.later(payload, 1, C_STEP);
      else this.launch(payload);
      return;
    }
    if (code === C_SOP) this.streamOpDone(payload);
    else this.nextStep(payload);
  }

  /**
   * Queues continuation `code` of `payload` (a rank; an operation for C_SOP) after `hops` (1
   * or 2) turns of the ready queue; an entry is one integer, payload · 8 + (hops − 1) · 4 + code.
   */
  private later(payload: number, hops: number, code: number): void {
    this.queue(payload * 8 + (hops - 1) * 4 + code);
  }

  private queue(x: number): void {
    if (this.readyTail - this.readyHead === this.ready.length) this.growReady();
    this.ready[this.readyTail++ & (this.ready.length - 1)] = x;
  }

  private growReady(): void {
    const n = this.ready.length;
    const ready = new Int32Array(2 * n);
    for (let k = 0, i = this.readyHead; i < this.readyTail; i++, k++) ready[k] = this.ready[i & (n - 1)];
    this.readyTail -= this.readyHead;
    this.readyHead = 0;
    this.ready = ready;
  }

  private runReady(): void {
    while (this.readyHead < this.readyTail) {
      const x = this.ready[this.readyHead++ & (this.ready.length - 1)];
      // one hop left: run it; two: queue it again with one
      if ((x & 4) !== 0) this.queue(x - 4);
      else this.hop(x >> 3, x & 3);
    }
    this.readyHead = this.readyTail = 0;
  }

  private chargeCopy(r: number, nbytes: number): void {
    const c = (Q / 2) * r + R_CLOCK;
    let start = this.rf[c];
    if (start < this.now) start = this.now;
    const end = start + this.model.copy(r, nbytes / this.unit);
    this.rf[c] = end;
    if (this.trace !== undefined) this.trace.copies.push({ rank: r, bytes: nbytes, start, end });
  }

  // ---- the engine (sim.ts), engine operation e's state at I·e of `io`

  private post(e: number): void {
    this.live++;
    const io = this.io;
    io[I * e + E_STATE] = IDLE;
    const r = io[I * e + E_RANK];
    const c = (Q / 2) * r + R_CLOCK;
    const t = this.rf[c];
    if (t <= this.now) {
      this.rf[c] = this.now;
      this.match(e);
    } else {
      this.events.push(t, this.evSeq++, e);
    }
  }

  /** Operation e becomes visible: it pairs with its partner if that is visible already, else waits for it. */
  private match(e: number): void {
    const io = this.io;
    const q = io[I * e + E_PARTNER];
    if (io[I * q + E_STATE] !== POSTED) {
      io[I * e + E_STATE] = POSTED;
      return;
    }
    io[I * q + E_STATE] = IDLE;
    const k = io[I * e + E_KIND];
    if (k === K_SEND || k === K_PORT_SEND) this.pair(e, q);
    else this.pair(q, e);
  }

  private pair(send: number, recv: number): void {
    const io = this.io;
    const n = io[I * send + E_LEN];
    const from = io[I * send + E_RANK];
    const to = io[I * recv + E_RANK];
    this.fo[(I / 2) * send + F_SEQ] = this.matchSeq++;
    if (from !== to) {
      if (n === 0) {
        this.fo[(I / 2) * send + F_START] = this.now;
        this.complete(send);
      } else if (this.ro[Q * from + Q_PHEAD] === -1 && this.ro[Q * to + Q_PHEAD] === -1 && this.canSend(from) && this.canRecv(to)) {
        this.startTransfer(send);
      } else {
        this.wait(send);
        this.appendPend(to, recv);
        this.markDirty(to);
      }
      return;
    }
    if (n === 0 || !(this.model.copy(from, n / this.unit) > 0)) {
      this.fo[(I / 2) * send + F_START] = this.now;
      this.complete(send);
      return;
    }
    this.wait(send);
  }

  private wait(send: number): void {
    const r = this.io[I * send + E_RANK];
    this.appendPend(r, send);
    this.markDirty(r);
    if (this.wLen === this.wFrom.length) this.growWaiting();
    const i = this.wLen++;
    this.wOps[i] = send;
    this.wFrom[i] = r;
    this.wTo[i] = this.io[I * send + E_PEER];
    this.io[I * send + E_STATE] = i;
    this.nWaiting++;
  }

  private unwaitAndStart(x: number): void {
    const io = this.io;
    const from = io[I * x + E_RANK];
    const to = io[I * x + E_PEER];
    this.unlinkPend(from, x);
    if (to !== from) this.unlinkPend(to, io[I * x + E_PARTNER]);
    this.wOps[io[I * x + E_STATE]] = -1;
    io[I * x + E_STATE] = -1;
    this.nWaiting--;
    this.startTransfer(x);
  }

  private appendPend(r: number, x: number): void {
    const io = this.io;
    const ro = this.ro;
    const tail = ro[Q * r + Q_PTAIL];
    io[I * x + E_QNEXT] = -1;
    io[I * x + E_QPREV] = tail;
    if (tail === -1) ro[Q * r + Q_PHEAD] = x;
    else io[I * tail + E_QNEXT] = x;
    ro[Q * r + Q_PTAIL] = x;
  }

  private unlinkPend(r: number, x: number): void {
    const io = this.io;
    const ro = this.ro;
    const prev = io[I * x + E_QPREV];
    const next = io[I * x + E_QNEXT];
    if (prev === -1) ro[Q * r + Q_PHEAD] = next;
    else io[I * prev + E_QNEXT] = next;
    if (next === -1) ro[Q * r + Q_PTAIL] = prev;
    else io[I * next + E_QPREV] = prev;
  }

  private settleClock(r: number): void {
    const c = (Q / 2) * r + R_CLOCK;
    if (this.rf[c] < this.now) this.rf[c] = this.now;
  }

  private complete(send: number): void {
    const io = this.io;
    const recv = io[I * send + E_PARTNER];
    const n = io[I * send + E_LEN];
    if (this.data && n > 0) {
      const s = io[I * send + E_OFF];
      const d = io[I * recv + E_OFF];
      if (s !== -1 && d !== -1) {
        // as sim.ts: a loop for a few bytes, else TypedArray set's semantics (memmove)
        const mem = this.mem;
        if (n <= LOOP_COPY || (n <= 16 && d + n > s && s + n > d)) for (let i = 0; i < n; i++) mem[d + i] = mem[s + i];
        else mem.copyWithin(d, s, s + n);
      } else {
        copyBytes(this.viewOfOp(recv), this.viewOfOp(send), n);
      }
    }
    const from = io[I * send + E_RANK];
    const to = io[I * recv + E_RANK];
    this.settleClock(from);
    this.settleClock(to);
    this.messages++;
    this.bytes += n;
    if (this.trace !== undefined) {
      const tag = this.tags[this.ownerOf(send)];
      this.trace.messages.push({ from, to, ctx: endpointCtx(0, tag), tag, bytes: n, start: this.fo[(I / 2) * send + F_START], end: this.now });
    }
    io[I * send + E_STATE] = IDLE;
    this.live -= 2;
    this.opDone(this.ownerOf(send));
    this.opDone(this.ownerOf(recv));
  }

  private startTransfer(tr: number): void {
    const io = this.io;
    const from = io[I * tr + E_RANK];
    const to = io[I * tr + E_PEER];
    io[I * tr + E_STATE] = STARTED;
    this.fo[(I / 2) * tr + F_START] = this.now;
    const units = io[I * tr + E_LEN] / this.unit;
    let dur: number;
    if (from !== to) {
      this.ro[Q * from + Q_BUSY_S]++;
      this.ro[Q * to + Q_BUSY_R]++;
      dur = this.model.comm(from, to, units);
    } else {
      this.ro[Q * from + Q_BUSY_S]++;
      if (this.duplex) this.ro[Q * from + Q_BUSY_R]++;
      dur = this.model.copy(from, units);
    }
    this.events.push(this.now + dur, this.evSeq++, tr);
  }

  private endTransfer(tr: number): void {
    const io = this.io;
    const from = io[I * tr + E_RANK];
    const to = io[I * tr + E_PEER];
    this.ro[Q * from + Q_BUSY_S]--;
    if (from !== to) this.ro[Q * to + Q_BUSY_R]--;
    else if (this.duplex) this.ro[Q * from + Q_BUSY_R]--;
    this.markDirty(from);
    if (from !== to) this.markDirty(to);
    this.complete(tr);
  }

  private markDirty(r: number): void {
    const flags = this.ro[Q * r + Q_FLAGS];
    if ((flags & DIRTY) === 0) {
      this.ro[Q * r + Q_FLAGS] = flags | DIRTY;
      this.dirty[this.nDirty++] = r;
    }
  }

  private canSend(r: number): boolean {
    const ro = this.ro;
    return this.duplex ? ro[Q * r + Q_BUSY_S] === 0 : ro[Q * r + Q_BUSY_S] + ro[Q * r + Q_BUSY_R] < this.k;
  }

  private canRecv(r: number): boolean {
    const ro = this.ro;
    return this.duplex ? ro[Q * r + Q_BUSY_R] === 0 : ro[Q * r + Q_BUSY_S] + ro[Q * r + Q_BUSY_R] < this.k;
  }

  private portsFree(from: number, to: number): boolean {
    if (from !== to) return this.canSend(from) && this.canRecv(to);
    const ro = this.ro;
    return this.duplex ? ro[Q * from + Q_BUSY_S] === 0 && ro[Q * from + Q_BUSY_R] === 0 : ro[Q * from + Q_BUSY_S] + ro[Q * from + Q_BUSY_R] < this.k;
  }

  private firstStartable(r: number): number {
    const ro = this.ro;
    const io = this.io;
    if (this.duplex ? ro[Q * r + Q_BUSY_S] > 0 && ro[Q * r + Q_BUSY_R] > 0 : ro[Q * r + Q_BUSY_S] + ro[Q * r + Q_BUSY_R] >= this.k) return -1;
    for (let x = ro[Q * r + Q_PHEAD]; x !== -1; x = io[I * x + E_QNEXT]) {
      const k = io[I * x + E_KIND];
      const tr = k === K_SEND || k === K_PORT_SEND ? x : io[I * x + E_PARTNER];
      if (this.portsFree(io[I * tr + E_RANK], io[I * tr + E_PEER])) return tr;
    }
    return -1;
  }

  private pushCandidate(r: number): void {
    const x = this.firstStartable(r);
    if (x !== -1) this.cand.push(this.fo[(I / 2) * x + F_SEQ], 0, x);
  }

  /** sim.ts arbitrate: waiting transfers whose ports are free start, first matched first. */
  private arbitrate(): void {
    const ro = this.ro;
    if (this.nWaiting === 0) {
      for (let i = 0; i < this.nDirty; i++) ro[Q * this.dirty[i] + Q_FLAGS] &= ~DIRTY;
      this.nDirty = 0;
      if (this.wLen > 0) this.compactWaiting();
      return;
    }
    if (this.nDirty * 4 >= this.nWaiting || this.nDirty * 8 >= this.p) {
      for (let i = 0; i < this.nDirty; i++) ro[Q * this.dirty[i] + Q_FLAGS] &= ~DIRTY;
      this.nDirty = 0;
      this.scanWaiting();
      return;
    }
    const cand = this.cand;
    for (let i = 0; i < this.nDirty; i++) {
      const r = this.dirty[i];
      ro[Q * r + Q_FLAGS] &= ~DIRTY;
      this.pushCandidate(r);
    }
    this.nDirty = 0;
    const io = this.io;
    while (cand.size > 0) {
      const x = cand.pop();
      if (io[I * x + E_STATE] === STARTED) continue;
      const from = io[I * x + E_RANK];
      const to = io[I * x + E_PEER];
      if (this.portsFree(from, to)) this.unwaitAndStart(x);
      this.pushCandidate(from);
      if (to !== from) this.pushCandidate(to);
    }
  }

  private growWaiting(): void {
    if (this.nWaiting * 2 <= this.wLen) {
      this.compactWaiting();
      return;
    }
    const m = this.wOps.length * 2;
    const ops = new Int32Array(m);
    const from = new Int32Array(m);
    const to = new Int32Array(m);
    ops.set(this.wOps);
    from.set(this.wFrom);
    to.set(this.wTo);
    this.wOps = ops;
    this.wFrom = from;
    this.wTo = to;
  }

  private compactWaiting(): void {
    const ops = this.wOps;
    let j = 0;
    for (let i = 0; i < this.wLen; i++) {
      const x = ops[i];
      if (x === -1) continue;
      if (j !== i) {
        ops[j] = x;
        this.wFrom[j] = this.wFrom[i];
        this.wTo[j] = this.wTo[i];
        this.io[I * x + E_STATE] = j;
      }
      j++;
    }
    this.wLen = j;
  }

  private scanWaiting(): void {
    const ops = this.wOps;
    const from = this.wFrom;
    const to = this.wTo;
    const n = this.wLen;
    for (let i = 0; i < n; i++) {
      if (!this.portsFree(from[i], to[i])) continue;
      const x = ops[i];
      if (x !== -1) this.unwaitAndStart(x);
    }
    if (this.nWaiting * 2 <= this.wLen) this.compactWaiting();
  }

  /** The schedule operation of engine operation e. */
  private ownerOf(e: number): number {
    return e >= this.n ? e - this.n : e;
  }

  /** Engine operation e's bytes as a buffer (vectored operations, rare: made when needed). */
  private viewOfOp(e: number): MessageBuffer {
    const off = this.io[I * e + E_OFF];
    return off === -1 ? this.bufs[e] : this.mem.subarray(off, off + this.io[I * e + E_LEN]);
  }

  /** The buffers after the runs: the caller's (the arena copied back into them), the arena's views, or none without data. */
  private buffersOut(): Uint8Array[][] {
    const b = this.bound;
    if (!this.data) return Array.from({ length: this.p }, () => []);
    const given = b.given;
    if (given === undefined) return b.views;
    return b.views.map((vs, r) => vs.map((v, i) => {
      given[r][i].set(v);
      return given[r][i];
    }));
  }

  /** Every unfinished rank with the operation it waits for. */
  private stuckRanks(): DeadlockedRank[] {
    const out: DeadlockedRank[] = [];
    const io = this.io;
    for (let r = 0; r < this.p; r++) {
      const at = Q * r;
      const step = this.ro[at + Q_STEP];
      const finished = this.ro[at + Q_RUNS] === 0 && step === this.stepBase[r + 1];
      const waits: string[] = [];
      if (!finished) {
        for (let g = this.ro[at + Q_LO]; g < this.ro[at + Q_NEXT]; g++) {
          if (io[I * g + S_CUR] <= 0) continue;
          const kind = io[I * g + E_KIND];
          const what = kind === K_SEND ? `send to ${io[I * g + E_PEER]}` : kind === K_RECV ? `recv from ${io[I * g + E_PEER]}` : 'copy to itself';
          waits.push(`${what} tag ${this.tags[g]} (step ${step - this.stepBase[r]} op ${g - this.ro[at + Q_LO]})`);
        }
      }
      if (waits.length > 0) out.push({ rank: r, finished, waitsFor: waits });
    }
    return out;
  }
}

