/**
 * One level of the two-level tree as a communicator of its own, without creating one: the
 * ranks of the level (a node's members in local order, or the nodes' leaders in bridge order)
 * numbered 0 … size−1, every operation passed to the call's communicator with the ranks
 * translated — no context of its own, no message to set it up (TraffRougier14 §2: here every
 * rank knows every rank's node, so both levels are local knowledge). What runs on it is
 * Traff18's distributed construction of the adaptive tree of that level
 * (collectives/adaptive/construct.ts): point-to-point between the level's ranks with the tags
 * the call gives it (two plans of the 'adaptive' tag range), in the call's slot. Schedules
 * run on the portable executor (through these methods); splitting is refused.
 *
 * Cost: O(1) per operation (the translation), nothing kept but the mapping.
 */
import type { Communicator, MessageData, Received, Request, Status } from '../../comm/communicator.js';
import { BaseCommunicator } from '../../comm/communicator.js';
import { mapRequest } from '../../comm/request.js';
import { VcollError } from '../../errors.js';
import type { RankNames } from '../adaptive/construct.js';
import { leaderOf } from './level-trees.js';
import type { NodeStructure } from './structure.js';

/**
 * A level of `comm`'s ranks: `rankOf(i)` is level rank i's rank in `comm`, `indexOf(r)` the
 * reverse (r a rank of the level). Its errors name `comm`'s ranks (RankNames: what the
 * construction's errors say).
 */
abstract class LevelView extends BaseCommunicator implements RankNames {
  constructor(protected readonly comm: Communicator) {
    super();
  }

  /** The rank in `comm` of level rank `i`. */
  protected abstract rankOf(i: number): number;
  /** The level rank of `comm`'s rank `r` (a rank of the level). */
  protected abstract indexOf(r: number): number;
  /** What level rank `i` is, in words ("member 3 of node 2"). */
  protected abstract place(i: number): string;

  rankName(i: number): string {
    return `rank ${this.rankOf(i)} (${this.place(i)})`;
  }

  errorRank(i: number): number {
    return this.rankOf(i);
  }

  get clock(): Communicator['clock'] {
    return this.comm.clock;
  }

  private readonly toLevel = (st: Status): Status => ({ source: this.indexOf(st.source), tag: st.tag, bytes: st.bytes });
  private readonly toLevelReceived = (st: Received): Received => ({ source: this.indexOf(st.source), tag: st.tag, bytes: st.bytes, data: st.data });

  isend(dest: number, tag: number, data: MessageData): Request<void> {
    return this.comm.isend(this.rankOf(dest), tag, data);
  }

  irecv(source: number, tag: number, into: MessageData): Request<Status> {
    return mapRequest(this.comm.irecv(this.rankOf(source), tag, into), this.toLevel);
  }

  irecvAlloc(source: number, tag: number, maxBytes?: number): Request<Received> {
    return mapRequest(this.comm.irecvAlloc(this.rankOf(source), tag, maxBytes), this.toLevelReceived);
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    this.comm.copy(dst, src);
  }

  nodeOf(rank: number): number {
    return this.comm.nodeOf(this.rankOf(rank));
  }

  split(): Promise<Communicator | null> {
    return Promise.reject(new VcollError('INTERNAL', 'a hierarchical level view cannot be split', { rank: this.comm.rank }));
  }

  splitByNode(): Promise<Communicator> {
    return Promise.reject(new VcollError('INTERNAL', 'a hierarchical level view cannot be split', { rank: this.comm.rank }));
  }
}

/** The members of `comm`'s rank's node, in local order (node level). */
export class NodeLevel extends LevelView {
  readonly rank: number;
  readonly size: number;
  private readonly members: Int32Array;

  constructor(
    comm: Communicator,
    private readonly s: NodeStructure,
  ) {
    super(comm);
    this.members = s.members[s.nodeIndex[comm.rank]];
    this.rank = s.localIndex[comm.rank];
    this.size = this.members.length;
  }

  protected rankOf(i: number): number {
    return this.members[i];
  }

  protected indexOf(r: number): number {
    return this.s.localIndex[r];
  }

  protected place(i: number): string {
    return `member ${i} of node ${this.s.nodeIndex[this.comm.rank]}`;
  }
}

/** The leaders of a call rooted at `root`, in bridge order (bridge level); `comm`'s rank must be one. */
export class BridgeLevel extends LevelView {
  readonly rank: number;
  readonly size: number;
  private readonly rootNode: number;

  constructor(
    comm: Communicator,
    private readonly s: NodeStructure,
    private readonly root: number,
  ) {
    super(comm);
    this.rootNode = s.nodeIndex[root];
    this.rank = s.nodeIndex[comm.rank];
    this.size = s.nodes;
  }

  protected rankOf(b: number): number {
    return leaderOf(this.s, this.rootNode, this.root, b);
  }

  protected indexOf(r: number): number {
    return this.s.nodeIndex[r];
  }

  protected place(b: number): string {
    return `the leader of node ${b} on the bridge`;
  }
}
