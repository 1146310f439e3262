/**
 * The virtual-time simulator transport: p rank programs (ordinary async code written against
 * `Communicator`) run in one process under a deterministic discrete-event simulation of a
 * cost model (docs/MODEL.md, seed 004 §2.1).
 *
 * Conventions:
 * - Every rank has its own virtual clock. An operation is *posted* at the rank's clock and
 *   becomes visible to matching at that virtual time (events are processed in time order).
 * - Matching is MPI's: a send is matched with the first posted receive of its destination
 *   that accepts it (ANY_SOURCE / ANY_TAG wildcards), a receive with the first visible
 *   unmatched send; both queues are kept in visibility order, so messages of one
 *   (source, dest, tag) never overtake each other.
 * - A matched pair of n > 0 bytes is a synchronous pairwise transfer: it starts once the
 *   sender has a free send port and the receiver a free receive port, lasts
 *   model.comm(s, d, n / unitBytes) and holds both ports throughout. Ports: one-ported half
 *   duplex (one transfer at a time, send or receive), full duplex (one send and one receive
 *   at a time), or k half-duplex ports (k transfers at a time, in any direction).
 * - Port arbitration: at each virtual time, after every event of that time has been
 *   processed and the rank programs have run to quiescence, waiting matched transfers whose
 *   ports are free start in the order they were matched (first matched, first served).
 * - A 0-byte message (and a message a rank sends to itself) matches and completes at once,
 *   takes no port and no time; the data is still copied.
 * - `copy` advances the rank's clock by model.copy(rank, bytes / unitBytes); it does not
 *   hold a port (a rank that awaits its transfers never overlaps them with a copy).
 * - A send resolves (and the sender's clock advances) when its transfer ends; data moves
 *   at that moment. Truncation (message longer than the receive buffer) rejects the receive
 *   with a CommunicationError at match time; the send then completes without a transfer.
 * - Rank programs must only await the communicator's promises (and other microtasks):
 *   timers or real I/O are invisible to the virtual clock and look like a deadlock.
 */
import { ANY_SOURCE, ANY_TAG, BaseCommunicator, type Communicator, type Status } from '../../comm/communicator.js';
import { CommunicationError, InvalidArgumentError } from '../../errors.js';
import { requireModelFits, type CostModel } from '../../model/cost-model.js';
import { EventHeap } from './heap.js';

export type PortSetting = 'one-ported' | 'full-duplex' | number;

export interface SimOptions {
  readonly model: CostModel;
  /** Port model; default `model.ports` half-duplex ports (1 = one-ported). */
  readonly ports?: PortSetting;
  /** Bytes per model unit (default 1): a message of n bytes costs model.comm(s, d, n / unitBytes). */
  readonly unitBytes?: number;
  /** Record every message and copy. */
  readonly trace?: boolean;
}

export interface SimMessageRecord {
  from: number;
  to: number;
  tag: number;
  bytes: number;
  start: number;
  end: number;
}

export interface SimCopyRecord {
  rank: number;
  bytes: number;
  start: number;
  end: number;
}

export interface SimTrace {
  messages: SimMessageRecord[];
  copies: SimCopyRecord[];
}

export interface SimResult<T> {
  /** Max over ranks of their final virtual clock. */
  time: number;
  /** Final virtual clock of every rank. */
  finish: number[];
  /** What every rank's program returned. */
  results: T[];
  /** Completed point-to-point messages (0-byte ones included). */
  messages: number;
  /** Bytes moved by those messages. */
  bytes: number;
  trace?: SimTrace;
}

export type RankProgram<T> = (comm: Communicator) => Promise<T>;

const SEND = 0;
const RECV = 1;
const EV_POST = 0;
const EV_END = 1;

const noop = (): void => {};

class Op {
  pending = true;
  promise!: Promise<unknown>;
  resolve!: (v: unknown) => void;
  reject!: (e: unknown) => void;
  constructor(
    readonly rank: number,
    readonly kind: number,
    /** dest for a send; source (or ANY_SOURCE) for a receive. */
    readonly peer: number,
    readonly tag: number,
    readonly buf: Uint8Array,
  ) {}
}

class Transfer {
  /** Heap fields: candidates are ordered by match sequence only. */
  t = 0;
  s: number;
  started = false;
  start = 0;
  constructor(
    readonly send: Op,
    readonly recv: Op,
    seq: number,
  ) {
    this.s = seq;
  }
}

class SimEvent {
  constructor(
    public t: number,
    public s: number,
    readonly kind: number,
    readonly op: Op | null,
    readonly tr: Transfer | null,
  ) {}
}

const drain = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function describeOp(op: Op): string {
  if (op.kind === SEND) return `send to ${op.peer} tag ${op.tag} (${op.buf.length} bytes)`;
  const src = op.peer === ANY_SOURCE ? 'any source' : String(op.peer);
  const tag = op.tag === ANY_TAG ? 'any tag' : String(op.tag);
  return `recv from ${src} tag ${tag}`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class SimComm extends BaseCommunicator {
  readonly size: number;
  constructor(
    private readonly sim: Simulation,
    readonly rank: number,
  ) {
    super();
    this.size = sim.p;
  }

  isend(dest: number, tag: number, data: Uint8Array): Promise<void> {
    return this.sim.post(this.rank, SEND, dest, tag, data) as Promise<void>;
  }

  irecv(source: number, tag: number, into: Uint8Array): Promise<Status> {
    return this.sim.post(this.rank, RECV, source, tag, into) as Promise<Status>;
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    if (!(dst instanceof Uint8Array)) throw new InvalidArgumentError('dst', 'must be a Uint8Array', { rank: this.rank });
    if (!(src instanceof Uint8Array)) throw new InvalidArgumentError('src', 'must be a Uint8Array', { rank: this.rank });
    if (src.length > dst.length) {
      throw new InvalidArgumentError('dst', `holds ${dst.length} bytes, the copy needs ${src.length}`, { rank: this.rank });
    }
    dst.set(src);
    this.sim.chargeCopy(this.rank, src.length);
  }

  nodeOf(rank: number): number {
    if (!(Number.isInteger(rank) && rank >= 0 && rank < this.size)) {
      throw new InvalidArgumentError('rank', `${rank} outside [0, ${this.size - 1}]`, { rank: this.rank });
    }
    return this.sim.nodeOf(rank);
  }
}

class Simulation {
  readonly p: number;
  private readonly model: CostModel;
  private readonly k: number;
  private readonly duplex: boolean;
  private readonly unit: number;
  private readonly nodes: ArrayLike<number> | undefined;
  private readonly clock: Float64Array;
  private readonly recvQ: Op[][];
  private readonly sendQ: Op[][];
  private readonly pend: Transfer[][];
  private readonly busyS: Int32Array;
  private readonly busyR: Int32Array;
  private readonly heap = new EventHeap<SimEvent>();
  private readonly cand = new EventHeap<Transfer>();
  private readonly dirty: number[] = [];
  private readonly dirtyFlag: Uint8Array;
  private evSeq = 0;
  private trSeq = 0;
  private now = 0;
  private needDrain = true;
  private aborted: string | undefined;
  private finished = 0;
  /** Operations posted and not yet completed or rejected. */
  private live = 0;
  private readonly done: Uint8Array;
  private failure: { rank: number; error: unknown } | undefined;
  private messages = 0;
  private bytes = 0;
  private readonly trace: SimTrace | undefined;

  constructor(p: number, options: SimOptions) {
    if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be an integer >= 1, got ${p}`);
    const model = options?.model;
    if (model === null || typeof model !== 'object' || typeof model.comm !== 'function') {
      throw new InvalidArgumentError('model', 'must be a cost model');
    }
    requireModelFits(model, p);
    const ports = options.ports ?? model.ports;
    if (ports === 'one-ported') {
      this.k = 1;
      this.duplex = false;
    } else if (ports === 'full-duplex') {
      this.k = 1;
      this.duplex = true;
    } else if (typeof ports === 'number' && Number.isInteger(ports) && ports >= 1) {
      this.k = ports;
      this.duplex = false;
    } else {
      throw new InvalidArgumentError('ports', `must be 'one-ported', 'full-duplex' or an integer >= 1, got ${String(ports)}`);
    }
    const unit = options.unitBytes ?? 1;
    if (typeof unit !== 'number' || !(unit > 0) || !Number.isFinite(unit)) {
      throw new InvalidArgumentError('unitBytes', `must be a positive number, got ${String(unit)}`);
    }
    this.p = p;
    this.model = model;
    this.unit = unit;
    const nodes = (model as { nodeOf?: unknown }).nodeOf;
    this.nodes = nodes !== null && typeof nodes === 'object' && typeof (nodes as ArrayLike<number>).length === 'number'
      ? (nodes as ArrayLike<number>)
      : undefined;
    this.clock = new Float64Array(p);
    this.recvQ = Array.from({ length: p }, () => []);
    this.sendQ = Array.from({ length: p }, () => []);
    this.pend = Array.from({ length: p }, () => []);
    this.busyS = new Int32Array(p);
    this.busyR = new Int32Array(p);
    this.dirtyFlag = new Uint8Array(p);
    this.done = new Uint8Array(p);
    this.trace = options.trace ? { messages: [], copies: [] } : undefined;
  }

  nodeOf(rank: number): number {
    return this.nodes === undefined ? 0 : this.nodes[rank];
  }

  post(rank: number, kind: number, peer: number, tag: number, buf: Uint8Array): Promise<unknown> {
    if (this.aborted !== undefined) return Promise.reject(new CommunicationError(this.aborted, { rank }));
    const p = this.p;
    if (kind === SEND) {
      if (!(Number.isInteger(peer) && peer >= 0 && peer < p)) {
        return Promise.reject(new InvalidArgumentError('dest', `${peer} outside [0, ${p - 1}]`, { rank }));
      }
      if (!(Number.isInteger(tag) && tag >= 0)) {
        return Promise.reject(new InvalidArgumentError('tag', `must be an integer >= 0, got ${tag}`, { rank }));
      }
      if (!(buf instanceof Uint8Array)) return Promise.reject(new InvalidArgumentError('data', 'must be a Uint8Array', { rank }));
    } else {
      if (!(peer === ANY_SOURCE || (Number.isInteger(peer) && peer >= 0 && peer < p))) {
        return Promise.reject(new InvalidArgumentError('source', `${peer} outside [0, ${p - 1}] and not ANY_SOURCE`, { rank }));
      }
      if (!(tag === ANY_TAG || (Number.isInteger(tag) && tag >= 0))) {
        return Promise.reject(new InvalidArgumentError('tag', `must be an integer >= 0 or ANY_TAG, got ${tag}`, { rank }));
      }
      if (!(buf instanceof Uint8Array)) return Promise.reject(new InvalidArgumentError('into', 'must be a Uint8Array', { rank }));
    }
    const op = new Op(rank, kind, peer, tag, buf);
    this.live++;
    op.promise = new Promise((resolve, reject) => {
      op.resolve = resolve;
      op.reject = reject;
    });
    const t = this.clock[rank];
    if (t <= this.now) {
      // Visible now: match at once (rank programs only run between event batches of `now`).
      this.clock[rank] = this.now;
      this.match(op);
    } else {
      this.heap.push(new SimEvent(t, this.evSeq++, EV_POST, op, null));
    }
    return op.promise;
  }

  chargeCopy(rank: number, nbytes: number): void {
    let start = this.clock[rank];
    if (start < this.now) start = this.now;
    const end = start + this.model.copy(rank, nbytes / this.unit);
    this.clock[rank] = end;
    if (this.trace) this.trace.copies.push({ rank, bytes: nbytes, start, end });
  }

  async run<T>(program: RankProgram<T>): Promise<SimResult<T>> {
    const p = this.p;
    const results: T[] = new Array<T>(p);
    for (let r = 0; r < p; r++) {
      const comm = new SimComm(this, r);
      Promise.resolve()
        .then(() => program(comm))
        .then(
          (v) => {
            results[r] = v;
            this.done[r] = 1;
            this.finished++;
          },
          (e: unknown) => {
            this.done[r] = 1;
            if (this.failure === undefined) this.failure = { rank: r, error: e };
          },
        );
    }
    const heap = this.heap;
    for (;;) {
      if (this.needDrain) {
        this.needDrain = false;
        await drain();
      }
      if (this.failure !== undefined) {
        const { rank, error } = this.failure;
        this.abortAll(`rank ${rank} failed: ${errorText(error)}`, error);
        await drain();
        throw new CommunicationError(`rank ${rank} failed: ${errorText(error)}`, { rank, cause: error });
      }
      const top = heap.peek();
      if (top !== undefined && top.t <= this.now) {
        while (heap.size > 0 && (heap.peek() as SimEvent).t <= this.now) {
          const ev = heap.pop() as SimEvent;
          if (ev.kind === EV_POST) this.match(ev.op as Op);
          else this.endTransfer(ev.tr as Transfer);
        }
        continue;
      }
      if (this.dirty.length > 0) {
        this.arbitrate();
        continue;
      }
      if (top !== undefined) {
        this.now = top.t;
        continue;
      }
      break;
    }
    if (this.finished < p || this.live > 0) {
      const stuck = this.describeStuck();
      const what = this.finished < p ? 'deadlock' : 'unmatched operations at the end';
      const msg = `${what} at virtual time ${this.now}: ${stuck.join('; ')}`;
      this.abortAll(msg, undefined);
      await drain();
      throw new CommunicationError(msg);
    }
    const finish = Array.from(this.clock);
    let time = 0;
    for (const f of finish) if (f > time) time = f;
    const out: SimResult<T> = { time, finish, results, messages: this.messages, bytes: this.bytes };
    if (this.trace) out.trace = this.trace;
    return out;
  }

  private markDirty(r: number): void {
    if (!this.dirtyFlag[r]) {
      this.dirtyFlag[r] = 1;
      this.dirty.push(r);
    }
  }

  private match(op: Op): void {
    if (op.kind === SEND) {
      const q = this.recvQ[op.peer];
      for (let i = 0; i < q.length; i++) {
        const r = q[i];
        if ((r.peer === ANY_SOURCE || r.peer === op.rank) && (r.tag === ANY_TAG || r.tag === op.tag)) {
          removeAt(q, i);
          this.pair(op, r);
          return;
        }
      }
      this.sendQ[op.peer].push(op);
    } else {
      const q = this.sendQ[op.rank];
      for (let i = 0; i < q.length; i++) {
        const s = q[i];
        if ((op.peer === ANY_SOURCE || op.peer === s.rank) && (op.tag === ANY_TAG || op.tag === s.tag)) {
          removeAt(q, i);
          this.pair(s, op);
          return;
        }
      }
      this.recvQ[op.rank].push(op);
    }
  }

  private pair(send: Op, recv: Op): void {
    const n = send.buf.length;
    const from = send.rank;
    const to = recv.rank;
    if (n > recv.buf.length) {
      recv.pending = false;
      this.live--;
      this.settleClock(to);
      recv.promise.catch(noop);
      recv.reject(
        new CommunicationError(
          `rank ${to}: message of ${n} bytes from rank ${from} tag ${send.tag} truncated: the receive buffer holds ${recv.buf.length} bytes`,
          { rank: to },
        ),
      );
      send.pending = false;
      this.live--;
      this.settleClock(from);
      send.resolve(undefined);
      this.needDrain = true;
      return;
    }
    const tr = new Transfer(send, recv, this.trSeq++);
    if (n === 0 || from === to) {
      tr.start = this.now;
      this.complete(tr);
      return;
    }
    this.pend[from].push(tr);
    this.pend[to].push(tr);
    this.markDirty(from);
    this.markDirty(to);
  }

  private settleClock(r: number): void {
    if (this.clock[r] < this.now) this.clock[r] = this.now;
  }

  private complete(tr: Transfer): void {
    const { send, recv } = tr;
    const n = send.buf.length;
    if (n > 0) recv.buf.set(send.buf);
    this.settleClock(send.rank);
    this.settleClock(recv.rank);
    this.messages++;
    this.bytes += n;
    if (this.trace) {
      this.trace.messages.push({ from: send.rank, to: recv.rank, tag: send.tag, bytes: n, start: tr.start, end: this.now });
    }
    send.pending = false;
    recv.pending = false;
    this.live -= 2;
    send.resolve(undefined);
    recv.resolve({ source: send.rank, tag: send.tag, bytes: n });
    this.needDrain = true;
  }

  private endTransfer(tr: Transfer): void {
    const from = tr.send.rank;
    const to = tr.recv.rank;
    this.busyS[from]--;
    this.busyR[to]--;
    this.markDirty(from);
    this.markDirty(to);
    this.complete(tr);
  }

  private canSend(r: number): boolean {
    return this.duplex ? this.busyS[r] === 0 : this.busyS[r] + this.busyR[r] < this.k;
  }

  private canRecv(r: number): boolean {
    return this.duplex ? this.busyR[r] === 0 : this.busyS[r] + this.busyR[r] < this.k;
  }

  private startable(tr: Transfer): boolean {
    return !tr.started && this.canSend(tr.send.rank) && this.canRecv(tr.recv.rank);
  }

  /** The earliest-matched waiting transfer of rank r whose ports are all free. */
  private firstStartable(r: number): Transfer | undefined {
    if (!this.canSend(r) && !this.canRecv(r)) return undefined;
    const list = this.pend[r];
    for (let i = 0; i < list.length; i++) if (this.startable(list[i])) return list[i];
    return undefined;
  }

  private pushCandidate(r: number): void {
    const x = this.firstStartable(r);
    if (x !== undefined) this.cand.push(x);
  }

  /** Starts waiting transfers whose ports are free, first matched first (see the module comment). */
  private arbitrate(): void {
    const cand = this.cand;
    for (const r of this.dirty) {
      this.dirtyFlag[r] = 0;
      this.pushCandidate(r);
    }
    this.dirty.length = 0;
    while (cand.size > 0) {
      const x = cand.pop() as Transfer;
      if (x.started) continue;
      const from = x.send.rank;
      const to = x.recv.rank;
      if (this.startable(x)) {
        this.startTransfer(x);
      }
      this.pushCandidate(from);
      this.pushCandidate(to);
    }
  }

  private startTransfer(tr: Transfer): void {
    const from = tr.send.rank;
    const to = tr.recv.rank;
    tr.started = true;
    tr.start = this.now;
    remove(this.pend[from], tr);
    remove(this.pend[to], tr);
    this.busyS[from]++;
    this.busyR[to]++;
    const dur = this.model.comm(from, to, tr.send.buf.length / this.unit);
    this.heap.push(new SimEvent(this.now + dur, this.evSeq++, EV_END, null, tr));
  }

  /** Every unfinished rank with the operations it waits for. */
  private describeStuck(): string[] {
    const waits: string[][] = Array.from({ length: this.p }, () => []);
    for (let r = 0; r < this.p; r++) {
      for (const op of this.recvQ[r]) waits[op.rank].push(describeOp(op));
      for (const op of this.sendQ[r]) waits[op.rank].push(describeOp(op));
      for (const tr of this.pend[r]) {
        if (tr.send.rank === r) waits[r].push(describeOp(tr.send));
        else waits[r].push(describeOp(tr.recv));
      }
    }
    const out: string[] = [];
    for (let r = 0; r < this.p; r++) {
      if (waits[r].length > 0) out.push(`rank ${r}: ${waits[r].join(', ')}`);
      else if (!this.done[r]) out.push(`rank ${r}: blocked outside the communicator`);
    }
    return out;
  }

  /** Rejects every pending operation so no rank program stays suspended on one. */
  private abortAll(reason: string, cause: unknown): void {
    this.aborted = reason;
    const ops: Op[] = [];
    for (let r = 0; r < this.p; r++) {
      ops.push(...this.recvQ[r], ...this.sendQ[r]);
      for (const tr of this.pend[r]) ops.push(tr.send, tr.recv);
      this.recvQ[r].length = 0;
      this.sendQ[r].length = 0;
      this.pend[r].length = 0;
    }
    for (const ev of this.heap.toArray()) {
      if (ev.op) ops.push(ev.op);
      if (ev.tr) ops.push(ev.tr.send, ev.tr.recv);
    }
    for (const op of ops) {
      if (!op.pending) continue;
      op.pending = false;
      this.live--;
      op.promise.catch(noop);
      op.reject(new CommunicationError(`rank ${op.rank}: ${describeOp(op)} aborted: ${reason}`, { rank: op.rank, cause }));
    }
  }
}

function removeAt<T>(list: T[], i: number): void {
  if (i === 0) list.shift();
  else list.splice(i, 1);
}

function remove<T>(list: T[], x: T): void {
  if (list[0] === x) {
    list.shift();
    return;
  }
  const i = list.indexOf(x);
  if (i >= 0) list.splice(i, 1);
}

/**
 * Runs `program` once per rank (p ranks) under the virtual clock of `options.model` and
 * resolves with the virtual completion times, the programs' results and optionally a trace.
 * Rejects with a CommunicationError on deadlock (listing the blocked ranks and what each
 * waits for) or when a rank's program throws (naming that rank).
 */
export function runSim<T>(p: number, program: RankProgram<T>, options: SimOptions): Promise<SimResult<T>> {
  let sim: Simulation;
  try {
    sim = new Simulation(p, options);
  } catch (e) {
    return Promise.reject(e);
  }
  return sim.run(program);
}
