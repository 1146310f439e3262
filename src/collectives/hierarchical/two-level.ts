/**
 * The two-level gather of TraffRougier14 Fig. 1 (and Fig. 6 for the zero-copy root): a gather on
 * every node to its local root — the root itself on the root's node, else the node's highest
 * rank — then a gather over the local roots (the bridge) to the root. Both levels are the
 * ordered-hypercube binomial tree of hypercube-role.ts (any root; every subtree a consecutive range, of
 * local ranks on a node, of nodes on the bridge), so a message always holds the blocks of
 * consecutive local ranks, or of consecutive nodes node by node: the root places each with
 * one placement (root-target.ts).
 *
 * Every rank posts all its receives (node children and, at a local root, bridge children) at
 * once, so a bridge message may arrive while the node gather is still running. A rank other
 * than the root never copies: it sends its own block and what it received as segments of one
 * vectored message (pieces.ts). The root copies its own block (and, for 'reorder', every
 * other block once at the end; root-target.ts).
 *
 * Mechanics. A rank other than the root with children is a small state machine driven by its
 * requests' callbacks (TwoLevelRank: one object, no suspended async frame, no Promise.all, no
 * closure per receive; a simulation holds one per rank, all waiting at once). It identifies
 * each arriving message by its source, checks and sums its trailer at once, and after the last
 * one sends its message. Its children's blocks go into that message in rank order without
 * sorting: basic/tree.ts lists a rank's children outermost range first, so those left of it
 * come in ascending order and those right of it in descending order (recursive halving). The
 * size checks need no order either (sums mod P). A child's message is received whole (recvAlloc)
 * and is the receiver's buffer: its blocks are forwarded as a view of it, or, when they come
 * last, the buffer itself with the rank's own sums written over the child's trailer, so most
 * messages need no trailer of their own; the others take 8 bytes of a shared slab
 * (size-check.ts). A leaf posts its one send a microtask after its call, as it did when it too
 * first awaited its (no) children: a simulation's ranks then post every receive before the
 * leaves' sends, so the simulator matches, and starts, the transfers of one virtual time in the
 * same order (simulated times and traces unchanged). A failed receive rejects the rank's
 * promise (every request has a rejection handler: no unhandled rejection); what arrives after
 * is ignored. The root, one per call, runs as one async call.
 *
 * Cost, one-ported, α per message (p ranks, N nodes, n_k ranks on node k, n_max the largest):
 * the node gather takes ⌈log₂n_k⌉ rounds, the bridge ⌈log₂N⌉, so the root completes after at
 * most ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds (TraffRougier14 §2: ≤ ⌈log₂p⌉ + 1 for equal nodes).
 * Bytes: the root receives Σ_{i≠root} m_i (β_intra for its node's, β_inter for the rest); as
 * in any binomial gather, a block crosses one edge per tree level between its rank and the
 * root. Every edge is one message of exactly its subtree's data (gatherv below the root, where
 * the size is not known, receives with recvAlloc: pieces.ts); gatherv adds an 8-byte trailer
 * to every message, the size check of size-check.ts, so the root catches blocks that disagree
 * with its counts even when a message's total agrees. Local work O(p) at the root
 * (placements); elsewhere O(k) for a rank's k ≤ ⌈log₂n⌉ + ⌈log₂N⌉ children per message
 * received (finding which child sent it), O(k²) in all.
 *
 * The regular gather (every size known) runs the same messages as a compiled schedule over
 * the caller's communicator instead (schedule.ts); this program code runs gatherv.
 */
import type { Communicator, Received, Status } from '../../comm/communicator.js';
import { scratchBuffer } from '../../comm/scratch.js';
import type { MessageData } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError, TruncationError, VcollError } from '../../errors.js';
import { expectBytes } from '../bytes.js';
import type { Subtree } from '../basic/tree.js';
import { nodeRole } from './cache.js';
import { leaderIndex } from './level-trees.js';
import { messageOf } from './pieces.js';
import type { RootTarget } from './root-target.js';
import { addSums, blockSumA, blockSumB, CHECK_BYTES, readSum, trailerOf, writeSums } from './size-check.js';
import { ranksInNodes, type Bridge, type NodeStructure } from './structure.js';
import { HIER_TAG } from './types.js';

export interface TwoLevelInput {
  /** Both levels travel on it: the node level between a node's members (HIER_TAG.local), the bridge between leaders (HIER_TAG.bridge). */
  readonly comm: Communicator;
  readonly structure: NodeStructure;
  readonly bridge: Bridge;
  readonly root: number;
  /** This rank's block. */
  readonly send: Uint8Array;
  /** Regular gather: every block's bytes, known on every rank; undefined for gatherv. */
  readonly uniformBytes: number | undefined;
  /** Root only. */
  readonly target: RootTarget | undefined;
  /** Names a wrong byte count at the root ('send' for gather, 'counts' for gatherv). */
  readonly field: string;
}

/**
 * Runs this rank's part of the two-level gather; once it is done (the root: every block in
 * place) the promise resolves with `result()`, called then (the caller's return value, chained
 * here rather than by one more `then` per rank).
 */
export function twoLevelGather<T>(input: TwoLevelInput, result: () => T): Promise<T> {
  try {
    if (input.target !== undefined) return rootGather(input, input.target, result);
    return TwoLevelRank.run(input, result);
  } catch (e) {
    return Promise.reject(e);
  }
}

function protocolError(me: number, peer: string, what: string): CommunicationError {
  return new CommunicationError(`hierarchical gatherv: ${what} from ${peer} (do all ranks call the same collective and variant?)`, { rank: me });
}

// One executor for every rank's promise (no closure per rank), as comm/request.ts does.
let capturedResolve: (v: unknown) => void = () => undefined;
let capturedReject: (e: unknown) => void = () => undefined;
function capture(res: (v: never) => void, rej: (e: unknown) => void): void {
  capturedResolve = res as (v: unknown) => void;
  capturedReject = rej;
}

const SETTLED: Promise<void> = Promise.resolve();

/**
 * A rank other than the root (see the module comment): its receives, posted at once (node
 * children smallest range first, then, at a local root, its bridge children smallest range
 * first), their blocks and size checks as they arrive, then one message to its parent — the
 * node parent, or a local root's bridge parent (the root itself for a child of the root's
 * node). Settles with `result()` when that send has completed; rejects on the first failed
 * receive or bad message. `run` keeps no object for a leaf.
 */
class TwoLevelRank<T> {
  private readonly comm: Communicator;
  private readonly send: Uint8Array;
  /** Regular gather: the bytes of every block; undefined for gatherv (the size-checked messages). */
  private readonly uniformBytes: number | undefined;
  /** Node-level children (local indices, outermost range first), the node's members, this rank's local index. */
  private readonly local: readonly Subtree[];
  private readonly members: Int32Array;
  private readonly li: number;
  /** A local root's bridge children (node indices, outermost first; none elsewhere), the leaders, this rank's node. */
  private readonly remote: readonly Subtree[];
  private readonly leaders: Int32Array;
  private readonly node: number;
  private readonly parent: number;
  private readonly tag: number;
  /**
   * Each child's message, by index: node children, then bridge children, in the order of `local`
   * and `remote` (gatherv: as received, its blocks then its trailer; regular gather: the buffer
   * its blocks are received into).
   */
  private readonly parts: Uint8Array[];
  /** Receives still to come (0: the message to the parent is under way); −1 once the rank failed (later arrivals are then ignored). */
  private left: number;
  /** Gatherv: the size check's sums so far (own block and the trailers received). */
  private sumA: number;
  private sumB: number;
  private readonly result: () => T;
  private readonly resolve: (v: T) => void;
  private readonly reject: (e: unknown) => void;
  readonly promise: Promise<T>;

  /** This rank's part: a leaf only sends (no state kept), any other rank waits for its children in a TwoLevelRank. */
  static run<T>(input: TwoLevelInput, result: () => T): Promise<T> {
    const { comm, structure: s, bridge, root } = input;
    const me = comm.rank;
    const node = s.nodeIndex[me];
    const members = s.members[node];
    const li = s.localIndex[me];
    const leader = leaderIndex(s, bridge.rootNode, root, node);
    const lrole = nodeRole(s, members.length, leader, li);
    const remote = li === leader ? bridge.role.children : NO_CHILDREN;
    const parent = li !== leader ? members[lrole.parent] : bridge.role.parent === bridge.rootNode ? root : bridge.leaders[bridge.role.parent];
    const tag = li !== leader ? HIER_TAG.local : HIER_TAG.bridge;
    if (lrole.children.length + remote.length > 0) return new TwoLevelRank(input, result, lrole.children, li, remote, node, parent, tag).promise;
    // A leaf: its block (and, gatherv, the size check of that block alone), sent a microtask
    // later (see the module comment: the simulator then matches the leaves' sends after every
    // rank's receives, in rank order)
    const send = input.send;
    let message: MessageData = send;
    if (input.uniformBytes === undefined) {
      const trailer = trailerOf(blockSumA(send.length), blockSumB(me, send.length));
      message = send.length > 0 ? [send, trailer] : trailer;
    }
    return SETTLED.then(() => comm.send(parent, tag, message).then(result));
  }

  private constructor(
    input: TwoLevelInput,
    result: () => T,
    local: readonly Subtree[],
    li: number,
    remote: readonly Subtree[],
    node: number,
    parent: number,
    tag: number,
  ) {
    const { comm, structure: s, bridge } = input;
    this.comm = comm;
    this.send = input.send;
    this.uniformBytes = input.uniformBytes;
    this.local = local;
    this.members = s.members[node];
    this.li = li;
    this.remote = remote;
    this.leaders = bridge.leaders;
    this.node = node;
    this.parent = parent;
    this.tag = tag;
    const children = local.length + remote.length;
    this.parts = new Array<Uint8Array>(children);
    this.left = children;
    this.sumA = this.uniformBytes === undefined ? blockSumA(this.send.length) : 0;
    this.sumB = this.uniformBytes === undefined ? blockSumB(comm.rank, this.send.length) : 0;
    this.result = result;
    this.promise = new Promise<T>(capture);
    this.resolve = capturedResolve;
    this.reject = capturedReject;
    // every receive now, node level first, each level smallest range first
    for (let i = local.length - 1; i >= 0; i--) this.post(i, this.members[local[i].peer], HIER_TAG.local, local[i].hi - local[i].lo + 1);
    for (let j = remote.length - 1; j >= 0; j--) {
      const c = remote[j];
      this.post(local.length + j, this.leaders[c.peer], HIER_TAG.bridge, ranksInNodes(s, c.lo, c.hi));
    }
  }

  /** Posts child i's receive; `ranks`: how many blocks its message holds (needed by the regular gather only). */
  private post(i: number, peer: number, tag: number, ranks: number): void {
    const u = this.uniformBytes;
    if (u === undefined) {
      this.comm.recvAlloc(peer, tag).then(this.received, this.failed);
      return;
    }
    const buf = scratchBuffer(this.comm, ranks * u);
    this.parts[i] = buf;
    this.comm.recv(peer, tag, buf).then(this.received, this.failed);
  }

  private readonly failed = (e: unknown): void => {
    if (this.left < 0) return;
    this.left = -1;
    this.reject(e);
  };

  /**
   * One child's message (gatherv: Received, its data and trailer; regular gather: the status of
   * a receive into parts[i]); after the last, the completion of the send to the parent.
   */
  private readonly received = (r: unknown): void => {
    if (this.left < 0) return;
    try {
      if (this.left === 0) {
        this.resolve(this.result());
        return;
      }
      this.take(r as Received | Status);
      if (--this.left === 0) this.forward();
    } catch (e) {
      this.failed(e);
    }
  };

  private take(r: Received | Status): void {
    const { local, remote } = this;
    const kn = local.length;
    let i = 0;
    while (i < kn && this.members[local[i].peer] !== r.source) i++;
    if (i === kn) {
      let j = 0;
      while (j < remote.length && this.leaders[remote[j].peer] !== r.source) j++;
      if (j === remote.length) throw new VcollError('INTERNAL', `hierarchical gatherv: a message from ${r.source}, not a child`, { rank: this.comm.rank });
      i = kn + j;
    }
    if (this.uniformBytes !== undefined) {
      expectBytes(this.comm, 'send', r, this.parts[i].length);
      return;
    }
    const buf = (r as Received).data;
    const where = `${i < kn ? 'local' : 'bridge'} child ${r.source}`;
    const me = this.comm.rank;
    if (buf.length < CHECK_BYTES) throw protocolError(me, where, `a ${buf.length}-byte message where at least ${CHECK_BYTES} were expected`);
    const n = buf.length - CHECK_BYTES;
    const a = readSum(buf, n);
    const b = readSum(buf, n + 4);
    if (a < 0 || b < 0) throw protocolError(me, where, 'a message without a valid size check');
    this.sumA = addSums(this.sumA, a);
    this.sumB = addSums(this.sumB, b);
    this.parts[i] = buf;
  }

  /**
   * Every child is in: the subtree's blocks in rank order (node by node across the bridge) and,
   * gatherv, the trailer, to the parent. When a child's blocks come last, its message goes
   * whole with our sums written over its trailer (the buffer is ours: recvAlloc), so the
   * message needs no trailer and no view of its own.
   */
  private forward(): void {
    const { local, remote, parts, li, node, send } = this;
    const kn = local.length;
    const checked = this.uniformBytes === undefined;
    // the child whose blocks come last, if it comes after this rank: the outermost on the right (bridge level first)
    let last = -1;
    if (checked) {
      for (let j = remote.length - 1; j >= 0; j--) if (remote[j].lo > node) last = kn + j;
      if (last < 0) for (let i = kn - 1; i >= 0; i--) if (local[i].lo > li) last = i;
    }
    // the segments, counted first: an array of exactly that many (one grown by push keeps room for more)
    let count = (send.length > 0 ? 1 : 0) + (checked ? 1 : 0);
    for (let i = 0; i < parts.length; i++) if (i !== last && this.blockBytes(i) > 0) count++;
    const segs = new Array<Uint8Array>(count);
    let k = 0;
    for (let j = 0; j < remote.length; j++) if (remote[j].lo < node) k = this.piece(segs, k, kn + j);
    for (let i = 0; i < kn; i++) if (local[i].lo < li) k = this.piece(segs, k, i);
    if (send.length > 0) segs[k++] = send;
    for (let i = kn - 1; i >= 0; i--) if (local[i].lo > li && i !== last) k = this.piece(segs, k, i);
    for (let j = remote.length - 1; j >= 0; j--) if (remote[j].lo > node && kn + j !== last) k = this.piece(segs, k, kn + j);
    if (last >= 0) {
      const buf = parts[last];
      writeSums(buf, buf.length - CHECK_BYTES, this.sumA, this.sumB);
      segs[k++] = buf;
    } else if (checked) segs[k++] = trailerOf(this.sumA, this.sumB);
    this.comm.send(this.parent, this.tag, messageOf(segs)).then(this.received, this.failed);
  }

  /** The bytes of child i's blocks: its message without the trailer (gatherv), or its buffer. */
  private blockBytes(i: number): number {
    const m = this.parts[i];
    return this.uniformBytes === undefined ? m.length - CHECK_BYTES : m.length;
  }

  /** Puts child i's blocks, if any, at segs[k]; returns the next free index. */
  private piece(segs: Uint8Array[], k: number, i: number): number {
    const n = this.blockBytes(i);
    if (n === 0) return k;
    const m = this.parts[i];
    segs[k] = n === m.length ? m : m.subarray(0, n);
    return k + 1;
  }
}

const NO_CHILDREN: readonly Subtree[] = [];

/**
 * The root: every receive posted at once into its target (node children, then bridge children,
 * each smallest range first), its own block copied meanwhile, then the target's last step.
 */
async function rootGather<T>(input: TwoLevelInput, target: RootTarget, result: () => T): Promise<T> {
  const { comm, structure: s, bridge } = input;
  const me = comm.rank;
  const members = s.members[s.nodeIndex[me]];
  const li = s.localIndex[me];
  const lrole = nodeRole(s, members.length, li, li);

  const receive = (peer: number, tag: number, seq: ArrayLike<number>): Promise<void> => rootReceive(input, target, peer, tag, seq);

  const received: Promise<void>[] = [];
  const local = lrole.children;
  for (let i = local.length - 1; i >= 0; i--) {
    const c = local[i];
    received.push(receive(members[c.peer], HIER_TAG.local, members.subarray(c.lo, c.hi + 1)));
  }
  const remote = bridge.role.children;
  for (let k = remote.length - 1; k >= 0; k--) received.push(receive(bridge.leaders[remote[k].peer], HIER_TAG.bridge, bridge.childRanks[k]));
  target.copyOwn();
  // awaited together, so that a failure of one leaves no rejection unobserved
  await Promise.all(received);
  target.finish();
  return result();
}

/**
 * The root receives one child's message (the blocks of `seq`, in that order, and for gatherv
 * the size check behind them) into its target, and checks it against its counts: a total
 * that differs, or blocks whose sizes differ in a way the total hides (size-check.ts), is an
 * InvalidArgumentError on `input.field` naming the ranks; a longer message too (not the
 * transport's truncation).
 */
export function rootReceive(input: Pick<TwoLevelInput, 'comm' | 'uniformBytes' | 'field'>, target: RootTarget, peer: number, tag: number, seq: ArrayLike<number>): Promise<void> {
  const { comm } = input;
  const me = comm.rank;
  const checked = input.uniformBytes === undefined;
  const place = target.place(seq);
  const trailer = checked ? new Uint8Array(CHECK_BYTES) : undefined;
  const into = trailer === undefined ? place.buffer : [...(Array.isArray(place.buffer) ? place.buffer : [place.buffer]), trailer];
  const want = place.bytes + (trailer === undefined ? 0 : CHECK_BYTES);
  return comm.recv(peer, tag, into).then(
    (st) => {
      if (st.bytes !== want) {
        throw new InvalidArgumentError(
          input.field,
          `ranks ${describe(seq)} delivered ${st.bytes - (want - place.bytes)} bytes, the root expects ${place.bytes}`,
          { rank: me },
        );
      }
      if (trailer !== undefined) {
        // the sums the root's counts give (size-check.ts); readSum's −1 for no valid sum never matches
        let a = 0;
        let b = 0;
        for (let j = 0; j < seq.length; j++) {
          const bytes = target.blockBytes(seq[j]);
          a = addSums(a, blockSumA(bytes));
          b = addSums(b, blockSumB(seq[j], bytes));
        }
        if (readSum(trailer, 0) !== a || readSum(trailer, 4) !== b) {
          throw new InvalidArgumentError(
            input.field,
            `ranks ${describe(seq)}: their blocks' sizes do not match the root's counts (their total, ${place.bytes} bytes, does)`,
            { rank: me },
          );
        }
      }
    },
    (e: unknown) => {
      // longer than the root's counts allow: the message would overrun the target (TraffRougier14 §6)
      if (e instanceof TruncationError) {
        throw new InvalidArgumentError(
          input.field,
          `ranks ${describe(seq)} delivered more than the ${place.bytes} bytes the root expects from them (their blocks do not match the root's counts)`,
          { rank: me, cause: e },
        );
      }
      throw e;
    },
  );
}

/** The ranks of a message as error texts name them: all of them up to 8, else the ends. */
export function describe(ranks: ArrayLike<number>): string {
  const n = ranks.length;
  if (n === 0) return '[]';
  return n <= 8 ? `[${Array.from(ranks).join(', ')}]` : `[${ranks[0]}, ${ranks[1]}, …, ${ranks[n - 1]}] (${n} ranks)`;
}
