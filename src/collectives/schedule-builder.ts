/**
 * The parts every gatherv/scatterv schedule compiler shares (src/comm/schedule.ts is the
 * representation): what one rank knows, its named buffers, spans, operations and steps, and
 * the linear and tree ranks' buffers and pieces. The compilers are with their variants
 * (gatherv/linear.ts, scatterv/linear.ts, gatherv/tree.ts, scatterv/tree.ts); the public
 * entry points are in v-schedule.ts.
 *
 * Buffers of a rank's schedule, in this order where present: 'send' (gatherv: every rank,
 * its block; scatterv: the root's user buffer), 'recv' (gatherv: the root's user buffer;
 * scatterv: every rank's block), 'packed' (a buffer the executor allocates).
 */
import { InvalidArgumentError } from '../errors.js';
import type { ByteRange, RankSchedule, ScheduleBuffer, ScheduleOp, ScheduleStep, Span } from '../comm/schedule.js';
import type { NodeSchedule } from './node-schedule.js';
import { sequenceRuns } from './placement.js';
import type { VOp } from './v-variants.js';

export type { RankSchedule };

/** What one rank knows of a gatherv/scatterv (the fields of its plan input the executors use). */
export interface VRankDescription {
  readonly rank: number;
  readonly p: number;
  readonly root: number;
  /** Bytes per element. */
  readonly unitBytes: number;
  /** This rank's count (elements). */
  readonly count: number;
  /** Root only: every rank's count and displacement (elements). */
  readonly counts?: readonly number[];
  readonly displs?: readonly number[];
  /** Root only: MPI_IN_PLACE (its own block is already in place: no copy). Default false. */
  readonly inPlace?: boolean;
  /** The model's ports (k ≥ 1) and copyAll (Traff18 Lemma 4). */
  readonly ports: number;
  readonly copyAll: boolean;
}

export class Buffers {
  readonly list: ScheduleBuffer[] = [];
  private readonly index = new Map<string, number>();

  add(name: string, bytes: number): number {
    const i = this.list.length;
    this.list.push({ name, bytes });
    this.index.set(name, i);
    return i;
  }

  of(name: string): number {
    const i = this.index.get(name);
    if (i === undefined) throw new Error(`v-schedule: no buffer '${name}'`);
    return i;
  }
}

/** `length` bytes of buffer `buffer` at `offset`: one range, or no range when empty. */
export function span(buffer: number, offset: number, length: number): Span {
  return length > 0 ? [{ buffer, offset, length }] : [];
}

/** The root's capacity: the end of the last block (bytes). */
export function capacityBytes(counts: readonly number[], displs: readonly number[], u: number): number {
  let end = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] > 0 && displs[i] + counts[i] > end) end = displs[i] + counts[i];
  return end * u;
}

/**
 * The ranges of the packed message of `ranks` (in that order) in the root's buffer: empty
 * blocks dropped, adjacent ones merged (collectives/placement.ts, sequencePlacement).
 */
export function sequenceSpan(buffer: number, counts: readonly number[], displs: readonly number[], u: number, ranks: ArrayLike<number>): Span {
  const out: ByteRange[] = [];
  sequenceRuns({ counts, displs, unitBytes: u }, ranks, (start, end) => out.push({ buffer, offset: start, length: end - start }));
  return out;
}

export const send = (peer: number, tag: number, data: Span): ScheduleOp => ({ kind: 'send', peer, tag, data });
export const recv = (peer: number, tag: number, data: Span): ScheduleOp => ({ kind: 'recv', peer, tag, data });
export const copy = (to: Span, from: Span, tag?: number): ScheduleOp => (tag === undefined ? { kind: 'copy', from, to } : { kind: 'copy', from, to, tag });

/**
 * The local copy `from` → `to`: one-ported the processor's copy; with k > 1 ports a copy
 * through a port, the message to itself with the plan's tag (collectives/ports.ts, selfCopy).
 */
export function localCopy(ops: ScheduleOp[], tag: number, ports: number, to: Span, from: Span): void {
  ops.push(ports > 1 ? copy(to, from, tag) : copy(to, from));
}

export class Steps {
  readonly list: ScheduleStep[] = [];

  /** A step of `ops` with at most `window` outstanding (none: no step). */
  add(ops: readonly ScheduleOp[], window: number): this {
    if (ops.length > 0) this.list.push({ ops, window: Math.max(1, window) });
    return this;
  }
}

export function rootArrays(d: VRankDescription): { counts: readonly number[]; displs: readonly number[] } {
  const { counts, displs } = d;
  if (counts === undefined || displs === undefined) {
    throw new InvalidArgumentError('counts', `the root (rank ${d.rank}) needs counts and displs`, { rank: d.rank });
  }
  return { counts, displs };
}

/**
 * A non-root rank of linear: its block straight to (gather) or from (scatter) the root, or,
 * under copyAll (Traff18 Lemma 4), through a communication buffer ('packed') with one copy.
 */
export function linearLeaf(op: VOp, d: VRankDescription, tag: number): RankSchedule {
  const b = new Buffers();
  const steps = new Steps();
  const block = d.count * d.unitBytes;
  const user = b.add(op === 'gatherv' ? 'send' : 'recv', block);
  const message = (buffer: number): ScheduleOp => (op === 'gatherv' ? send : recv)(d.root, tag, span(buffer, 0, block));
  if (!d.copyAll) {
    steps.add([message(user)], 1);
  } else {
    const packed = b.add('packed', block);
    const toPacked = copy(span(packed, 0, block), span(user, 0, block));
    const fromPacked = copy(span(user, 0, block), span(packed, 0, block));
    if (op === 'gatherv') steps.add([toPacked], 1).add([message(packed)], 1);
    else steps.add([message(packed)], 1).add([fromPacked], 1);
  }
  return { rank: d.rank, buffers: b.list, steps: steps.list };
}

/**
 * The root of linear: its buffers ('send', 'recv'), the view of rank i's block in the user's
 * buffer at its displacement, and `own(ops)`, which appends the root's own block's local copy
 * (none in place).
 */
export function linearRoot(op: VOp, d: VRankDescription, tag: number): { b: Buffers; view: (i: number) => Span; own: (ops: ScheduleOp[]) => void } {
  const u = d.unitBytes;
  const me = d.rank;
  const b = new Buffers();
  const { counts, displs } = rootArrays(d);
  const inPlace = d.inPlace ?? false;
  const mine = counts[me] * u;
  const whole = capacityBytes(counts, displs, u);
  const sendBuf = b.add('send', op === 'gatherv' ? (inPlace ? 0 : mine) : whole);
  const recvBuf = b.add('recv', op === 'gatherv' ? whole : inPlace ? 0 : mine);
  const user = op === 'gatherv' ? recvBuf : sendBuf;
  const view = (i: number): Span => span(user, displs[i] * u, counts[i] * u);
  const own = (ops: ScheduleOp[]): void => {
    if (inPlace) return;
    if (op === 'gatherv') localCopy(ops, tag, d.ports, view(me), span(sendBuf, 0, mine));
    else localCopy(ops, tag, d.ports, span(recvBuf, 0, mine), view(me));
  };
  return { b, view, own };
}

/** Where a tree rank's pieces are: its own block and each child's message. */
export interface TreePieces {
  /** The span this rank's block occupies in what it communicates (packed buffer or root buffer). */
  readonly own: Span;
  /** Its user block ('send' for a gather, 'recv' for a scatter). */
  readonly block: Span;
  /** Each child's message. */
  readonly children: readonly Span[];
  /** Whether the rank makes its local copy at all. */
  readonly copies: boolean;
  /** What it sends to (gather) / receives from (scatter) its parent (non-root). */
  readonly whole: Span;
}

/** Buffers and pieces of a tree rank (packedBuffer and rootPlacements of tree-exec.ts). */
export function treePieces(op: VOp, d: VRankDescription, node: NodeSchedule, b: Buffers): TreePieces {
  const u = d.unitBytes;
  const me = d.rank;
  const userName = op === 'gatherv' ? 'send' : 'recv';
  if (node.parent < 0) {
    const { counts, displs } = rootArrays(d);
    const inPlace = d.inPlace ?? false;
    const blockBytes = inPlace ? 0 : counts[me] * u;
    const capacity = capacityBytes(counts, displs, u);
    const sendBuf = b.add('send', op === 'gatherv' ? blockBytes : capacity);
    const recvBuf = b.add('recv', op === 'gatherv' ? capacity : blockBytes);
    const user = op === 'gatherv' ? recvBuf : sendBuf;
    const block = span(op === 'gatherv' ? sendBuf : recvBuf, 0, blockBytes);
    const children = node.children.map((c) => sequenceSpan(user, counts, displs, u, c.ranks ?? []));
    return { own: span(user, displs[me] * u, counts[me] * u), block, children, copies: !inPlace, whole: [] };
  }
  const userBuf = b.add(userName, d.count * u);
  const block = span(userBuf, 0, d.count * u);
  const direct = node.children.length === 0 && !d.copyAll;
  const buf = direct ? userBuf : b.add('packed', node.total * u);
  return {
    own: span(buf, node.ownOffset * u, node.count * u),
    block,
    children: node.children.map((c) => span(buf, c.offset * u, c.size * u)),
    copies: !direct,
    whole: span(buf, 0, node.total * u),
  };
}

