/**
 * The data phases of gatherv/scatterv compiled into schedules (src/schedule/types.ts): the
 * same operations, in the same order, with the same windows as the executors that run them
 * today, as data an executor runs (src/schedule/run.ts) and a checker verifies
 * (src/schedule/check.ts). Compiling never communicates.
 *
 * What is mirrored, rank by rank:
 * - `linear` (gatherv/linear.ts, scatterv/linear.ts): a non-root rank sends (receives) its
 *   block, even an empty one, through a 'packed' communication buffer under model.copyAll;
 *   the root copies its own block and posts every receive (send) at once, in rank order —
 *   under copyAll one at a time (gather: rank order; scatter: reverse rank order, the copy
 *   last) — and with k > 1 ports runs the whole sequence in one step of window k, the copy
 *   a message to itself.
 * - the tree-run variants (`binomial` and every root-built tree: tree-exec.ts with
 *   gatherv/tree.ts and scatterv/tree.ts): a rank's gather sequence (its children's
 *   receives with its local copy after `copyAt` of them, empty subtrees left out) then the
 *   send of its packed buffer to its parent; a scatter rank receives its packed buffer, then
 *   runs the gather sequence reversed. One-ported the sequence runs in a step of window 1
 *   with the copy a `copy` operation; with k ports in a step of window k, the copy a message
 *   to itself (collectives/ports.ts). A leaf that does not copy (no model.copyAll)
 *   communicates straight from 'send' (into 'recv'); every other non-root rank has a
 *   'packed' buffer of its subtree's blocks. The root receives into (sends from) its user
 *   buffer at the blocks' displacements: one range when they are contiguous in packed
 *   order, else the ranges of the blocks (collectives/placement.ts, sequencePlacement).
 *
 * Local copies with k > 1 ports are copies through a port (a `copy` with the plan's tag: the
 * message to itself of ports.ts `selfCopy`), one operation of the window as in `inOrder`.
 *
 * Buffers of a rank's schedule, in this order where present: 'send' (gatherv: every rank,
 * its block; scatterv: the root's user buffer), 'recv' (gatherv: the root's user buffer;
 * scatterv: every rank's block), 'packed' (a buffer the executor allocates).
 */
import { InvalidArgumentError, UnavailableError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import type { ByteRange, RankSchedule, ScheduleBuffer, ScheduleOp, ScheduleStep, Span, WorldSchedule } from '../schedule/types.js';
import { DEFAULT_MODEL, V_TAGS } from './defaults.js';
import { sequenceRuns } from './placement.js';
import {
  binomialNode,
  binomialSchedule,
  buildTree,
  CHILD_WIDTH,
  decodeSchedule,
  encodeSchedules,
  SCHEDULE_WIDTH,
  type NodeSchedule,
} from './node-schedule.js';
import { failedRestriction, variantRow, type VOp } from './v-variants.js';

/** The data tag of the first gatherv/scatterv plan on a communicator: COLLECTIVE_TAG + 0x380 (V_TAGS.dataFirst). */
export const FIRST_DATA_TAG = V_TAGS.dataFirst;

/** The algorithms `compileVSchedule` compiles: every tree-run variant and `linear`. */
export const COMPILED_V_ALGORITHMS = [
  'linear',
  'binomial',
  'optimal',
  'binary',
  'two-block',
  'model-binomial-min',
  'model-binomial-max',
  'model-binomial-guarded',
  'traff',
  'model-traff',
  'model-traff-guarded',
] as const;

export type CompiledVAlgorithm = (typeof COMPILED_V_ALGORITHMS)[number];

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

// ---------------------------------------------------------------------------------------
// Buffers and spans

class Buffers {
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
function span(buffer: number, offset: number, length: number): Span {
  return length > 0 ? [{ buffer, offset, length }] : [];
}

/** The root's capacity: the end of the last block (bytes). */
function capacityBytes(counts: readonly number[], displs: readonly number[], u: number): number {
  let end = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] > 0 && displs[i] + counts[i] > end) end = displs[i] + counts[i];
  return end * u;
}

/**
 * The ranges of the packed message of `ranks` (in that order) in the root's buffer: empty
 * blocks dropped, adjacent ones merged (collectives/placement.ts, sequencePlacement).
 */
function sequenceSpan(buffer: number, counts: readonly number[], displs: readonly number[], u: number, ranks: ArrayLike<number>): Span {
  const out: ByteRange[] = [];
  sequenceRuns({ counts, displs, unitBytes: u }, ranks, (start, end) => out.push({ buffer, offset: start, length: end - start }));
  return out;
}

// ---------------------------------------------------------------------------------------
// Operations

const send = (peer: number, tag: number, data: Span): ScheduleOp => ({ kind: 'send', peer, tag, data });
const recv = (peer: number, tag: number, data: Span): ScheduleOp => ({ kind: 'recv', peer, tag, data });
const copy = (to: Span, from: Span, tag?: number): ScheduleOp => (tag === undefined ? { kind: 'copy', from, to } : { kind: 'copy', from, to, tag });

/**
 * The local copy `from` → `to`: one-ported the processor's copy; with k > 1 ports a copy
 * through a port, the message to itself with the plan's tag (collectives/ports.ts, selfCopy).
 */
function localCopy(ops: ScheduleOp[], tag: number, ports: number, to: Span, from: Span): void {
  ops.push(ports > 1 ? copy(to, from, tag) : copy(to, from));
}

class Steps {
  readonly list: ScheduleStep[] = [];

  /** A step of `ops` with at most `window` outstanding (none: no step). */
  add(ops: readonly ScheduleOp[], window: number): this {
    if (ops.length > 0) this.list.push({ ops, window: Math.max(1, window) });
    return this;
  }
}

// ---------------------------------------------------------------------------------------
// linear

function rootArrays(d: VRankDescription): { counts: readonly number[]; displs: readonly number[] } {
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
function linearLeaf(op: VOp, d: VRankDescription, tag: number): RankSchedule {
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
function linearRoot(op: VOp, d: VRankDescription, tag: number): { b: Buffers; view: (i: number) => Span; own: (ops: ScheduleOp[]) => void } {
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

function linearGather(d: VRankDescription, tag: number): RankSchedule {
  if (d.rank !== d.root) return linearLeaf('gatherv', d, tag);
  const me = d.rank;
  const { b, view, own } = linearRoot('gatherv', d, tag);
  const steps = new Steps();
  const receives: ScheduleOp[] = [];
  for (let i = 0; i < d.p; i++) if (i !== me) receives.push(recv(i, tag, view(i)));
  if (d.ports > 1) {
    const ops: ScheduleOp[] = [];
    own(ops);
    ops.push(...receives);
    steps.add(ops, d.ports);
  } else {
    const first: ScheduleOp[] = [];
    own(first);
    steps.add(first, 1);
    steps.add(receives, d.copyAll ? 1 : receives.length);
  }
  return { rank: me, buffers: b.list, steps: steps.list };
}

function linearScatter(d: VRankDescription, tag: number): RankSchedule {
  if (d.rank !== d.root) return linearLeaf('scatterv', d, tag);
  const me = d.rank;
  const { b, view, own } = linearRoot('scatterv', d, tag);
  const steps = new Steps();
  const reversed: ScheduleOp[] = [];
  for (let i = d.p - 1; i >= 0; i--) if (i !== me) reversed.push(send(i, tag, view(i)));
  if (d.ports > 1) {
    const ops = [...reversed];
    own(ops);
    steps.add(ops, d.ports);
  } else if (d.copyAll) {
    steps.add(reversed, 1);
    const last: ScheduleOp[] = [];
    own(last);
    steps.add(last, 1);
  } else {
    const first: ScheduleOp[] = [];
    own(first);
    steps.add(first, 1);
    const sends = [...reversed].reverse();
    steps.add(sends, sends.length);
  }
  return { rank: me, buffers: b.list, steps: steps.list };
}

// ---------------------------------------------------------------------------------------
// Tree executors (gatherv/tree.ts, scatterv/tree.ts)

/** Where a tree rank's pieces are: its own block and each child's message. */
interface TreePieces {
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
function treePieces(op: VOp, d: VRankDescription, node: NodeSchedule, b: Buffers): TreePieces {
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

function treeGather(d: VRankDescription, node: NodeSchedule, tag: number): RankSchedule {
  const b = new Buffers();
  const steps = new Steps();
  const x = treePieces('gatherv', d, node, b);
  const kids = node.children;
  const k = kids.length;
  const ops: ScheduleOp[] = [];
  for (let j = 0; j <= k; j++) {
    if (j === node.copyAt && x.copies) localCopy(ops, tag, d.ports, x.own, x.block);
    if (j < k && kids[j].size > 0) ops.push(recv(kids[j].rank, tag, x.children[j]));
  }
  steps.add(ops, d.ports);
  if (node.parent >= 0 && node.total > 0) steps.add([send(node.parent, tag, x.whole)], 1);
  return { rank: d.rank, buffers: b.list, steps: steps.list };
}

function treeScatter(d: VRankDescription, node: NodeSchedule, tag: number): RankSchedule {
  const b = new Buffers();
  const steps = new Steps();
  const x = treePieces('scatterv', d, node, b);
  const kids = node.children;
  const k = kids.length;
  if (node.parent >= 0 && node.total > 0) steps.add([recv(node.parent, tag, x.whole)], 1);
  // the gather sequence reversed (scatterv/tree.ts, scatterSequence)
  const ops: ScheduleOp[] = [];
  const own = (): void => {
    if (x.copies) localCopy(ops, tag, d.ports, x.block, x.own);
  };
  if (node.copyAt === k) own();
  for (let j = k - 1; j >= 0; j--) {
    if (kids[j].size > 0) ops.push(send(kids[j].rank, tag, x.children[j]));
    if (j === node.copyAt) own();
  }
  steps.add(ops, d.ports);
  return { rank: d.rank, buffers: b.list, steps: steps.list };
}

// ---------------------------------------------------------------------------------------
// Public API

function isCompiled(algorithm: string): algorithm is CompiledVAlgorithm {
  return (COMPILED_V_ALGORITHMS as readonly string[]).includes(algorithm);
}

function notCompiled(algorithm: string): UnavailableError {
  if (variantRow(algorithm) === undefined && algorithm !== 'auto') {
    return new UnavailableError('schedule', `no gatherv/scatterv algorithm named '${algorithm}'`);
  }
  return new UnavailableError(
    'schedule',
    `${algorithm} is not compiled into schedules (yet): compiled are ${COMPILED_V_ALGORITHMS.join(', ')}` +
      (algorithm === 'adaptive' ? ' (adaptive builds its tree while the data moves)' : '') +
      (algorithm === 'mpi-native' ? " (mpi-native calls the MPI library's own collective)" : '') +
      (algorithm === 'auto' ? ' (auto: choose the algorithm first)' : ''),
  );
}

/**
 * One rank's schedule of the data phase of `algorithm` (see the module comment): `node` is
 * the rank's NodeSchedule for the tree variants (ignored by `linear`), `tag` the plan's data
 * tag. Never communicates.
 */
export function compileRankSchedule(op: VOp, algorithm: string, d: VRankDescription, node: NodeSchedule | undefined, tag: number = FIRST_DATA_TAG): RankSchedule {
  if (!isCompiled(algorithm)) throw notCompiled(algorithm);
  if (!Number.isInteger(d.ports) || d.ports < 1) throw new InvalidArgumentError('ports', `must be an integer >= 1, got ${d.ports}`);
  if (algorithm === 'linear') return op === 'gatherv' ? linearGather(d, tag) : linearScatter(d, tag);
  if (node === undefined) throw new InvalidArgumentError('node', `${algorithm} needs the rank's NodeSchedule`, { rank: d.rank });
  return op === 'gatherv' ? treeGather(d, node, tag) : treeScatter(d, node, tag);
}

export interface CompileVOptions {
  readonly root: number;
  /** The model the trees are built for and whose ports/copyAll the executors follow (default DEFAULT_MODEL). */
  readonly model?: CostModel;
  /** Bytes per element (default 1). */
  readonly unitBytes?: number;
  /** The root's displacements in elements (default: the prefix sums of the counts). */
  readonly displs?: readonly number[];
  /** The data tag (default FIRST_DATA_TAG, the first plan's). */
  readonly tag?: number;
}

/**
 * Every rank's NodeSchedule of a tree variant, as the plan delivers them: `binomial` from the
 * counts (binomialSchedule), a root-built tree from buildRootTree's tree encoded at the root
 * (encodeSchedules) and decoded per rank as distributeSchedules would deliver it.
 */
export function treeNodes(algorithm: string, op: VOp, counts: readonly number[], model: CostModel, root: number): NodeSchedule[] {
  const p = counts.length;
  if (algorithm === 'binomial') {
    return Array.from({ length: p }, (_, me) => {
      const bn = binomialNode(p, root, me);
      return binomialSchedule(p, root, me, counts.slice(bn.lo, bn.hi + 1), model.copyAll);
    });
  }
  const encoded = encodeSchedules(buildTree(algorithm, counts, model, root, root, op), counts);
  const nodes: NodeSchedule[] = [];
  let c0 = 0;
  for (let me = 0; me < p; me++) {
    const f = me * SCHEDULE_WIDTH;
    nodes.push(me === root ? encoded.root : decodeSchedule(encoded.fixed, f, encoded.children, c0));
    c0 += encoded.fixed[f + 2] * CHILD_WIDTH;
  }
  return nodes;
}

/**
 * Every rank's schedule of the data phase of `op` with `algorithm` for `counts` (elements),
 * built from the same trees the runtime uses. Checks the variant's model and counts
 * restrictions as the ranks would. `adaptive`, `mpi-native` and `auto` are not compiled: an
 * UnavailableError.
 */
export function compileVSchedule(op: VOp, algorithm: string, counts: readonly number[], options: CompileVOptions): WorldSchedule {
  if (!isCompiled(algorithm)) throw notCompiled(algorithm);
  const p = counts.length;
  if (p < 1) throw new InvalidArgumentError('counts', 'must have one entry per rank (p >= 1)');
  for (let i = 0; i < p; i++) {
    if (!Number.isInteger(counts[i]) || counts[i] < 0) throw new InvalidArgumentError(`counts[${i}]`, `must be an integer >= 0, got ${counts[i]}`);
  }
  const { root } = options;
  if (!Number.isInteger(root) || root < 0 || root >= p) throw new InvalidArgumentError('root', `must be an integer in 0…${p - 1}, got ${root}`);
  const model = options.model ?? DEFAULT_MODEL;
  const unitBytes = options.unitBytes ?? 1;
  if (!Number.isInteger(unitBytes) || unitBytes < 1) throw new InvalidArgumentError('unitBytes', `must be an integer >= 1, got ${unitBytes}`);
  const tag = options.tag ?? FIRST_DATA_TAG;
  let displs = options.displs;
  if (displs === undefined) {
    const prefix: number[] = [];
    let at = 0;
    for (const c of counts) {
      prefix.push(at);
      at += c;
    }
    displs = prefix;
  } else if (displs.length !== p || displs.some((x) => !Number.isInteger(x) || x < 0)) {
    throw new InvalidArgumentError('displs', `must be ${p} integers >= 0`);
  }
  const row = variantRow(algorithm);
  if (row !== undefined) {
    const failed = failedRestriction(row, { p, model, counts }, ['model', 'counts']);
    if (failed !== undefined) throw failed[0].error(failed[1], root);
  }
  const nodes = algorithm === 'linear' ? undefined : treeNodes(algorithm, op, counts, model, root);
  const ranks: RankSchedule[] = [];
  for (let me = 0; me < p; me++) {
    const d: VRankDescription = {
      rank: me,
      p,
      root,
      unitBytes,
      count: counts[me],
      ...(me === root ? { counts, displs } : {}),
      ports: model.ports,
      copyAll: model.copyAll,
    };
    ranks.push(compileRankSchedule(op, algorithm, d, nodes?.[me], tag));
  }
  return { label: `${op} ${algorithm}`, ranks };
}
