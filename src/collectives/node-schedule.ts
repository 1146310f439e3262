/**
 * Per-rank schedules of the tree-based gatherv/scatterv and how they reach the ranks.
 *
 * A `NodeSchedule` is what one rank needs to play its part in a gather/scatter tree
 * (Traff17 Definition 2, the Tree of src/trees/tree.ts): its parent, its children in gather
 * receive order with the size of each child's subtree, where its local copy goes among
 * those receives (`copyAt`), and the layout of its packed buffer. A packed buffer holds
 * the blocks of the rank's subtree back to back; its pieces (the rank's own block and each
 * child's message, itself a packed buffer) are placed in increasing order of the smallest
 * rank they hold. For ordered trees (every subtree a consecutive range) that is rank order;
 * for any tree it means a non-root rank never reorders anything: a child's message lands
 * contiguously at its offset. Only the root maps packed messages to displacements
 * (collectives/placement.ts: one view when contiguous, else the blocks' views as a vectored buffer).
 *
 * Distribution. The root, which knows the counts, builds the tree and encodes one record
 * per rank: a fixed part of SCHEDULE_WIDTH Int32 (count, parent, number of children k,
 * copyAt, own offset, packed total, tree height) and a variable part of 3k Int32 (child,
 * subtree size, offset). Both are scattered down the ordered binomial tree of Traff18
 * (rooted at the fixed root, `binomialNode`): first the fixed parts (every rank knows the
 * size of its binomial subtree, so it knows how much to receive), then the variable parts
 * (whose lengths the fixed parts told). Cost: 2⌈log₂p⌉ rounds; the root sends
 * 2⌈log₂p⌉ messages carrying 4·(7p + 3(p − 1)) bytes in all, so on the critical path about
 * 2⌈log₂p⌉·α + 40p·β (β per byte here) instead of the p − 1 start-ups of sending every rank
 * its record directly. A persistent plan pays this once, at init.
 *
 * The binomial gatherv/scatterv use the same binomial tree for data and scatter only the
 * counts down it (one Int32 per rank): ⌈log₂p⌉ rounds, the root sending 4(p − 1) bytes in
 * ⌈log₂p⌉ messages; each rank then derives its schedule locally (`binomialSchedule`).
 */
import { commState } from '../comm/comm-state.js';
import { scratchBuffer } from '../comm/scratch.js';
import { bytesOf, type Communicator, type Status } from '../comm/communicator.js';
import { OpRequest, toPromise, type Waiter } from '../comm/request.js';
import type { BoundSchedule } from '../comm/schedule.js';
import { CommunicationError, InvalidArgumentError, VcollError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { postOrder, treeHeight, type Tree } from '../trees/tree.js';
import { findTreeAlgorithm } from '../trees/registry.js';
import type { BuiltTree } from '../trees/types.js';
import type { CollectiveInfo, PersistentCollective } from './types.js';

// ---------------------------------------------------------------------------------------
// The ordered binomial tree with a fixed root (the oblivious tree of src/trees/binomial.ts).

export interface BinomialChild {
  /** The child's rank: the root of its range. */
  readonly rank: number;
  readonly lo: number;
  readonly hi: number;
}

/** One rank's place in the ordered binomial tree rooted at `root`. */
export interface BinomialNode {
  /** −1 at the root. */
  readonly parent: number;
  /** The consecutive ranks of this rank's subtree. */
  readonly lo: number;
  readonly hi: number;
  /** Children in gather order (level by level, smallest subtree first). */
  readonly children: readonly BinomialChild[];
}

/** Root of a range of the ordered hypercube when the tree's root is r: r if inside, else the last rank. */
function rangeRoot(lo: number, hi: number, r: number): number {
  return r >= lo && r <= hi ? r : hi;
}

/**
 * Rank v's parent, subtree range and children in `obliviousTreeFor(p, root)` (Traff18 §2,
 * Lemma 2: level h = 1, 2, 4, … joins [lo..lo+h−1] and [lo+h..lo+2h−1]; the range holding
 * the root receives, otherwise the upper range's root, its last rank, receives). O(log p).
 */
export function binomialNode(p: number, root: number, v: number): BinomialNode {
  let lo = v;
  let hi = v;
  let parent = -1;
  const children: BinomialChild[] = [];
  for (let h = 1; h < p; h *= 2) {
    const base = Math.floor(v / (2 * h)) * 2 * h;
    const mid = base + h; // first rank of the upper range
    if (mid >= p) continue; // no partner range at this level
    const top = Math.min(base + 2 * h, p) - 1;
    const lowerReceives = root >= base && root < mid;
    const mineLower = v < mid;
    const [oLo, oHi] = mineLower ? [mid, top] : [base, mid - 1];
    if (mineLower === lowerReceives) {
      children.push({ rank: rangeRoot(oLo, oHi, root), lo: oLo, hi: oHi });
      lo = Math.min(lo, oLo);
      hi = Math.max(hi, oHi);
    } else {
      parent = rangeRoot(oLo, oHi, root);
      break;
    }
  }
  return { parent, lo, hi, children };
}

/** Height of `obliviousTreeFor(p, root)` in O(log² p). */
export function binomialHeight(p: number, root: number): number {
  let size = 1;
  while (size < p) size *= 2;
  const height = (lo: number, n: number): number => {
    if (n <= 1 || lo + 1 >= p) return 0;
    const half = n / 2;
    if (lo + half >= p) return height(lo, half);
    const complete = lo + n <= p;
    if (complete && !(root >= lo && root < lo + n)) return Math.log2(n);
    const lowerReceives = root >= lo && root < lo + half;
    const recv = lowerReceives ? height(lo, half) : height(lo + half, half);
    const send = lowerReceives ? height(lo + half, half) : height(lo, half);
    return Math.max(recv, 1 + send);
  };
  return height(0, size);
}

// ---------------------------------------------------------------------------------------
// Messages

/** A receive must bring exactly `expected` bytes. */
export function expectStatus(comm: Communicator, st: Status, expected: number, what: string): void {
  if (st.bytes !== expected) {
    throw new CommunicationError(`rank ${comm.rank}: ${what} from rank ${st.source} has ${st.bytes} bytes, expected ${expected}`, {
      rank: comm.rank,
    });
  }
}

/**
 * Scatters fixed-width Int32 records down the binomial tree: `all` (root only) holds
 * `width` Int32 per rank in rank order; every rank resolves with the records of its binomial
 * subtree's ranks lo..hi (the root: `all` itself). ⌈log₂p⌉ rounds.
 */
export async function scatterFixed(
  comm: Communicator,
  node: BinomialNode,
  width: number,
  all: Int32Array | undefined,
  tag: number,
): Promise<Int32Array> {
  let data: Int32Array;
  if (node.parent < 0) {
    if (all === undefined || all.length !== comm.size * width) {
      throw new CommunicationError(`rank ${comm.rank}: the root has no records to scatter`, { rank: comm.rank });
    }
    data = all;
  } else {
    const n = (node.hi - node.lo + 1) * width;
    const scratch = scratchBuffer(comm, 4 * n);
    data = new Int32Array(scratch.buffer, scratch.byteOffset, n);
    const st = await comm.recv(node.parent, tag, bytesOf(data));
    expectStatus(comm, st, data.byteLength, 'schedule message');
  }
  for (let j = node.children.length - 1; j >= 0; j--) {
    const c = node.children[j];
    await comm.send(c.rank, tag, bytesOf(data.subarray((c.lo - node.lo) * width, (c.hi - node.lo + 1) * width)));
  }
  return data;
}

/**
 * Scatters variable-length Int32 records down the binomial tree: `lengths[i]` is the
 * length of the record of rank node.lo + i (every rank knows those of its subtree), `all`
 * (root only) the records of all ranks concatenated in rank order. Resolves with the
 * concatenated records of this rank's subtree. Empty parts travel as no message.
 */
export async function scatterVariable(
  comm: Communicator,
  node: BinomialNode,
  lengths: ArrayLike<number>,
  all: Int32Array | undefined,
  tag: number,
): Promise<{ readonly data: Int32Array; readonly start: Int32Array }> {
  const n = node.hi - node.lo + 1;
  const start = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) start[i + 1] = start[i] + lengths[i];
  let data: Int32Array;
  if (node.parent < 0) {
    if (all === undefined || all.length !== start[n]) {
      throw new CommunicationError(`rank ${comm.rank}: the root's records do not match their lengths`, { rank: comm.rank });
    }
    data = all;
  } else {
    const scratch = scratchBuffer(comm, 4 * start[n]);
    data = new Int32Array(scratch.buffer, scratch.byteOffset, start[n]);
    if (data.length > 0) {
      const st = await comm.recv(node.parent, tag, bytesOf(data));
      expectStatus(comm, st, data.byteLength, 'schedule message');
    }
  }
  for (let j = node.children.length - 1; j >= 0; j--) {
    const c = node.children[j];
    const part = data.subarray(start[c.lo - node.lo], start[c.hi - node.lo + 1]);
    if (part.length > 0) await comm.send(c.rank, tag, bytesOf(part));
  }
  return { data, start };
}

// ---------------------------------------------------------------------------------------
// Schedules

export interface ChildSlot {
  readonly rank: number;
  /** Elements in the child's subtree: the size of its message. */
  readonly size: number;
  /** Element offset of the child's message in this rank's packed buffer (non-root ranks). */
  readonly offset: number;
  /** Root only: the ranks whose blocks the child's message holds, in packed order. */
  readonly ranks: ArrayLike<number> | undefined;
}

/** One rank's part in a gather/scatter tree. */
export interface NodeSchedule {
  /** −1 at the root. */
  readonly parent: number;
  /** This rank's count as the root's counts say. */
  readonly count: number;
  /** Children in gather receive order (a scatter sends in reverse order). */
  readonly children: readonly ChildSlot[];
  /** How many receives precede the local copy (gather order). */
  readonly copyAt: number;
  /** Element offset of this rank's own block in its packed buffer (non-root). */
  readonly ownOffset: number;
  /** Elements in this rank's subtree (its packed buffer). */
  readonly total: number;
  /** Height of the whole tree (levels; 0 for p = 1). */
  readonly height: number;
}

export const SCHEDULE_WIDTH = 7;
export const CHILD_WIDTH = 3;

/** The encoded schedules of every rank (built by the root). */
export interface EncodedSchedules {
  /** SCHEDULE_WIDTH Int32 per rank, rank order. */
  readonly fixed: Int32Array;
  /** CHILD_WIDTH·k Int32 per rank, concatenated in rank order. */
  readonly children: Int32Array;
  /** The root's own schedule, with the packed rank sequence of each child. */
  readonly root: NodeSchedule;
}

/**
 * Encodes `tree` with blocks `counts` (elements) into per-rank schedules: packed layouts
 * as described in the module comment. O(p log p).
 */
export function encodeSchedules(tree: Tree, counts: ArrayLike<number>): EncodedSchedules {
  const p = tree.p;
  const order = postOrder(tree);
  const size = new Float64Array(p);
  const minRank = new Int32Array(p);
  const ownOffset = new Float64Array(p);
  const childOffset = new Float64Array(p);
  /** Pieces of each rank in packed order: the rank itself stands for its own block. */
  const pieces: number[][] = new Array<number[]>(p);
  for (const v of order) {
    const kids = tree.children[v];
    let lo = v;
    for (const c of kids) if (minRank[c] < lo) lo = minRank[c];
    minRank[v] = lo;
    const list = packedOrder(v, kids, minRank);
    let off = 0;
    for (const x of list) {
      if (x === v) {
        ownOffset[v] = off;
        off += counts[v];
      } else {
        childOffset[x] = off;
        off += size[x];
      }
    }
    size[v] = off;
    pieces[v] = list;
  }
  const height = treeHeight(tree);
  const fixed = new Int32Array(p * SCHEDULE_WIDTH);
  let nChildren = 0;
  for (let v = 0; v < p; v++) nChildren += tree.children[v].length;
  const children = new Int32Array(nChildren * CHILD_WIDTH);
  let at = 0;
  for (let v = 0; v < p; v++) {
    const kids = tree.children[v];
    const f = v * SCHEDULE_WIDTH;
    fixed[f] = counts[v];
    fixed[f + 1] = tree.parent[v];
    fixed[f + 2] = kids.length;
    fixed[f + 3] = tree.copyAt[v];
    fixed[f + 4] = ownOffset[v];
    fixed[f + 5] = size[v];
    fixed[f + 6] = height;
    for (const c of kids) {
      children[at++] = c;
      children[at++] = size[c];
      children[at++] = childOffset[c];
    }
  }
  const r = tree.root;
  const rootSchedule: NodeSchedule = {
    parent: -1,
    count: counts[r],
    children: tree.children[r].map((c) => ({ rank: c, size: size[c], offset: childOffset[c], ranks: packedRanks(c, pieces) })),
    copyAt: tree.copyAt[r],
    ownOffset: ownOffset[r],
    total: size[r],
    height,
  };
  return { fixed, children, root: rootSchedule };
}

/**
 * v and its children in packed order (by the least rank of each piece, v's own block standing
 * for v). Most trees are ordered already: then no sort and no comparator.
 */
function packedOrder(v: number, kids: readonly number[], minRank: Int32Array): number[] {
  const list = new Array<number>(kids.length + 1);
  list[0] = v;
  let sorted = true;
  let last = v;
  for (let i = 0; i < kids.length; i++) {
    list[i + 1] = kids[i];
    const key = minRank[kids[i]];
    if (key < last) sorted = false;
    last = key;
  }
  return sorted ? list : list.sort((a, b) => (a === v ? v : minRank[a]) - (b === v ? v : minRank[b]));
}

/** The ranks of v's subtree in packed order (iterative depth-first walk of the pieces). */
function packedRanks(v: number, pieces: readonly (readonly number[])[]): Int32Array {
  const out: number[] = [];
  const stack: [number, number][] = [[v, 0]];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const [x, i] = top;
    const list = pieces[x];
    if (i >= list.length) {
      stack.pop();
      continue;
    }
    top[1] = i + 1;
    const y = list[i];
    if (y === x) out.push(x);
    else stack.push([y, 0]);
  }
  return Int32Array.from(out);
}

/** Decodes one non-root rank's record. */
export function decodeSchedule(fixed: Int32Array, f: number, children: Int32Array, c0: number): NodeSchedule {
  const k = fixed[f + 2];
  const slots: ChildSlot[] = new Array<ChildSlot>(k);
  for (let j = 0; j < k; j++) {
    const c = c0 + j * CHILD_WIDTH;
    slots[j] = { rank: children[c], size: children[c + 1], offset: children[c + 2], ranks: undefined };
  }
  return {
    parent: fixed[f + 1],
    count: fixed[f],
    children: slots,
    copyAt: fixed[f + 3],
    ownOffset: fixed[f + 4],
    total: fixed[f + 5],
    height: fixed[f + 6],
  };
}

/**
 * Delivers every rank its schedule: `encoded` at the root (undefined elsewhere). Collective;
 * 2⌈log₂p⌉ rounds (see the module comment).
 */
export async function distributeSchedules(
  comm: Communicator,
  root: number,
  encoded: EncodedSchedules | undefined,
  tags: { readonly fixed: number; readonly children: number },
): Promise<NodeSchedule> {
  const me = comm.rank;
  if (me === root && encoded === undefined) {
    throw new CommunicationError(`rank ${me}: the root has no schedules to distribute`, { rank: me });
  }
  if (comm.size === 1) return (encoded as EncodedSchedules).root;
  const node = binomialNode(comm.size, root, me);
  const fixed = await scatterFixed(comm, node, SCHEDULE_WIDTH, encoded?.fixed, tags.fixed);
  const n = node.hi - node.lo + 1;
  const lengths = new Int32Array(n);
  for (let i = 0; i < n; i++) lengths[i] = fixed[i * SCHEDULE_WIDTH + 2] * CHILD_WIDTH;
  const { data, start } = await scatterVariable(comm, node, lengths, encoded?.children, tags.children);
  if (me === root) return (encoded as EncodedSchedules).root;
  const i = me - node.lo;
  return decodeSchedule(fixed, i * SCHEDULE_WIDTH, data, start[i]);
}

/**
 * Rank `me`'s schedule in the ordered binomial tree, from the counts of its binomial
 * subtree (`rangeCounts[i]` = count of rank node.lo + i). Root: children carry their rank
 * ranges. The copy follows the ordered convention (first child left of me: after it) or
 * comes first under `copyAll` — exactly `obliviousTreeFor(p, root, copyAll)`.
 */
export function binomialSchedule(p: number, root: number, me: number, rangeCounts: ArrayLike<number>, copyAll: boolean): NodeSchedule {
  const node = binomialNode(p, root, me);
  const n = node.hi - node.lo + 1;
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i] + rangeCounts[i];
  const children = node.children.map((c) => {
    const a = c.lo - node.lo;
    const b = c.hi - node.lo + 1;
    let ranks: Int32Array | undefined;
    if (node.parent < 0) {
      ranks = new Int32Array(c.hi - c.lo + 1);
      for (let i = 0; i < ranks.length; i++) ranks[i] = c.lo + i;
    }
    return { rank: c.rank, size: prefix[b] - prefix[a], offset: prefix[a], ranks };
  });
  const copyAt = copyAll ? 0 : children.length > 0 && children[0].rank < me ? 1 : 0;
  return {
    parent: node.parent,
    count: rangeCounts[me - node.lo],
    children,
    copyAt,
    ownOffset: prefix[me - node.lo],
    total: prefix[n],
    height: binomialHeight(p, root),
  };
}

/** A non-root rank's own count must be the root's counts entry for it. */
export function checkOwnCount(comm: Communicator, mine: number, schedule: NodeSchedule): void {
  if (schedule.parent >= 0 && mine !== schedule.count) {
    throw new InvalidArgumentError(
      'count',
      `rank ${comm.rank} has ${mine} elements, the root's counts[${comm.rank}] is ${schedule.count}`,
      { rank: comm.rank },
    );
  }
}

// ---------------------------------------------------------------------------------------
// Trees the root builds

/**
 * The tree the construction `name` of trees/registry.ts builds for `counts` under `model` with
 * the fixed root (run by the root), for the operation `op` (Dichev10's model-based trees
 * predict child → parent for a gather, parent → child for a scatter; Traff17's are the same
 * for both), with the time its builder computed. Builder errors about the sizes are reported
 * as the root's `counts`.
 */
export function buildRootTree(name: string, counts: readonly number[], model: CostModel, root: number, rank: number, op: 'gatherv' | 'scatterv'): BuiltTree {
  try {
    // optimal: the per-pair DP (Traff17 Theorem 1) under a non-homogeneous model
    const algorithm = findTreeAlgorithm(name === 'optimal' && model.linear === undefined ? 'optimal-pairwise' : name);
    if (algorithm === undefined) throw new VcollError('INTERNAL', `no tree construction named ${name}`);
    return algorithm.build(counts, model, { root, op: op === 'gatherv' ? 'gather' : 'scatter' });
  } catch (e) {
    if (e instanceof InvalidArgumentError && e.field.startsWith('sizes')) {
      throw new InvalidArgumentError(e.field.replace(/^sizes/, 'counts'), e.detail, { rank, cause: e });
    }
    throw e;
  }
}

/** buildRootTree's tree. */
export function buildTree(name: string, counts: readonly number[], model: CostModel, root: number, rank: number, op: 'gatherv' | 'scatterv'): Tree {
  return buildRootTree(name, counts, model, root, rank, op).tree;
}

// ---------------------------------------------------------------------------------------
// Persistent plans

/**
 * The test of whether `plan` (made by persistentPlan or boundPlan) has a start() that has not
 * settled yet; undefined for plans made otherwise.
 */
export function runningTest(plan: PersistentCollective<unknown>): (() => boolean) | undefined {
  return plan instanceof RunPlan ? () => plan.isRunning() : undefined;
}

/** What a plan's start() runs: a bound schedule, or a function's run. */
interface PlanRunner {
  run(): PromiseLike<void>;
  runBlocking?(): void;
}

/**
 * A plan whose start() runs its runner and refuses to overlap with itself. It is the waiter of
 * its pending run's request (no closure per plan: a simulated rank holds one per call).
 */
class RunPlan<I = CollectiveInfo> implements PersistentCollective<I>, Waiter {
  private running = false;

  constructor(
    private readonly rank: number,
    readonly info: I,
    protected readonly runner: PlanRunner,
  ) {}

  isRunning(): boolean {
    return this.running;
  }

  protected busy(): InvalidArgumentError {
    return new InvalidArgumentError('start', 'the previous start() of this plan has not resolved yet', { rank: this.rank });
  }

  /** The pending run's request settled (Waiter). */
  settled(): boolean {
    this.running = false;
    return true;
  }

  start(): Promise<void> {
    if (this.running) return Promise.reject(this.busy());
    let r: PromiseLike<void>;
    try {
      r = this.runner.run();
    } catch (e) {
      return Promise.reject(e);
    }
    if (r instanceof OpRequest) {
      if (!r.pending) return r.asPromise() as Promise<void>;
      if (r.waiter === null) {
        // settled in order: the promise's reactions are queued, then the plan is free again
        this.running = true;
        r.waiter = this;
        return r.asPromise() as Promise<void>;
      }
    }
    this.running = true;
    const done = toPromise(r);
    done.then(
      () => this.settled(),
      () => this.settled(),
    );
    return done;
  }
}

class BlockingRunPlan<I = CollectiveInfo> extends RunPlan<I> {
  startBlocking(): void {
    if (this.isRunning()) throw this.busy();
    (this.runner.runBlocking as () => void).call(this.runner);
  }
}

/**
 * A plan whose start() runs `run` and refuses to overlap with itself. A run that completes
 * when it is started (a request already settled: a native executor that finished within its
 * spin) costs no promise of its own.
 */
export function persistentPlan<I = CollectiveInfo>(
  comm: Communicator,
  info: I,
  run: () => PromiseLike<void>,
  runBlocking?: () => void,
): PersistentCollective<I> {
  return runBlocking === undefined ? new RunPlan(comm.rank, info, { run }) : new BlockingRunPlan(comm.rank, info, { run, runBlocking });
}

/** persistentPlan running `runner.run()` (an object's method: no closure per plan). */
export function runnerPlan(comm: Communicator, info: CollectiveInfo, runner: { run(): PromiseLike<void> }): PersistentCollective {
  return new RunPlan(comm.rank, info, runner);
}

/** persistentPlan running a bound schedule (its runBlocking too, where the executor has one). */
export function boundPlan(comm: Communicator, info: CollectiveInfo, bound: BoundSchedule): PersistentCollective {
  return bound.runBlocking === undefined ? new RunPlan(comm.rank, info, bound) : new BlockingRunPlan(comm.rank, info, bound);
}

const DATA_TAG_SLOTS = 128;

/**
 * The data tag of the next gatherv/scatterv plan on `comm`: every plan a rank creates takes
 * the next of 128 tags (all ranks create plans in the same order, as MPI requires), so the
 * data of plans started back to back never match each other's receives.
 */
export function nextDataTag(comm: Communicator, first: number): number {
  const s = commState(comm).plans++;
  return first + (s % DATA_TAG_SLOTS);
}
