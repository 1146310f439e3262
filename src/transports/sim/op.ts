/**
 * One posted point-to-point operation of the simulator. A matched pair is a transfer,
 * represented by its send operation (`partner` is the receive). Every list an operation can be
 * in is intrusive (links on the object), so queueing and removal allocate nothing and take
 * O(1); completed operations go back to a pool (OpPool) and are reused.
 */
import { ANY_SOURCE, ANY_TAG } from '../../comm/communicator.js';
import type { OpRequest } from '../../comm/request.js';
import type { MessageBuffer } from '../../comm/segments.js';
import { tagText } from '../../comm/tags.js';

export const SEND = 0;
export const RECV = 1;

/**
 * Who settles an operation posted without a request (Simulation.postOwned): a native
 * schedule (sim/schedule.ts). `index` and `run` are what the owner passed when posting.
 */
export interface OpOwner {
  /** The operation completed; `bytes`: the message's length. */
  opDone(index: number, run: number, bytes: number): void;
  /** The operation failed (a truncated receive, or the simulation aborted). */
  opFailed(index: number, run: number, error: unknown): void;
}

export class Op {
  kind = 0;
  rank = 0;
  ctx = 0;
  /** dest for a send; source (or ANY_SOURCE) for a receive. */
  peer = 0;
  tag = 0;
  /** Contiguous, or vectored (segments in order). */
  buf: MessageBuffer = EMPTY;
  /** Bytes of `buf` (a receive of unknown size: its maxBytes until matched). */
  len = 0;
  /** A receive of unknown size (irecvAlloc): `buf` is allocated when it matches. */
  alloc = false;
  pending = false;
  /** A transfer that holds its ports (its end is in the event heap). */
  started = false;
  /** What the rank program holds (not pooled: programs may keep it); null when `owner` settles it. */
  req: OpRequest<unknown> | null = null;
  /** Who settles an operation without a request (a native schedule), and its index and run there. */
  owner: OpOwner | null = null;
  oIndex = 0;
  oRun = 0;
  /** Before matching: visibility order (first posted, first matched); after: match order (ports). */
  seq = 0;
  /** Destination's queue while unmatched; then the rank's list of transfers waiting for ports. */
  qPrev: Op | null = null;
  qNext: Op | null = null;
  /** Per-rank list while unmatched: ANY_SOURCE receives, or unexpected sends in arrival order. */
  aPrev: Op | null = null;
  aNext: Op | null = null;
  /** Bucket queue of an indexed destination (matching.ts), while unmatched. */
  bPrev: Op | null = null;
  bNext: Op | null = null;
  /** A transfer's entry in the simulation's waiting arrays (-1: not waiting). */
  wIndex = -1;
  /** The matched operation. */
  partner: Op | null = null;
  /** Virtual start time of the transfer. */
  start = 0;
}

const EMPTY = new Uint8Array(0);

/** A free list of operations: no allocation per operation once the pool is warm. */
export class OpPool {
  private readonly free: Op[] = [];

  take(kind: number, rank: number, ctx: number, peer: number, tag: number, buf: MessageBuffer, len: number): Op {
    const op = this.free.length > 0 ? (this.free.pop() as Op) : new Op();
    op.kind = kind;
    op.rank = rank;
    op.ctx = ctx;
    op.peer = peer;
    op.tag = tag;
    op.buf = buf;
    op.len = len;
    op.alloc = false;
    op.pending = true;
    op.started = false;
    return op;
  }

  /** Returns a settled operation that nothing refers to any more. */
  give(op: Op): void {
    op.buf = EMPTY;
    op.req = null;
    op.owner = null;
    op.partner = null;
    op.qPrev = op.qNext = op.aPrev = op.aNext = op.bPrev = op.bNext = null;
    this.free.push(op);
  }
}

export function describeOp(op: Op): string {
  const ctx = op.ctx === 0 ? '' : ` (context ${op.ctx})`;
  if (op.kind === SEND) return `send to ${op.peer} tag ${tagText(op.tag)} (${op.len} bytes)${ctx}`;
  const src = op.peer === ANY_SOURCE ? 'any source' : String(op.peer);
  const tag = op.tag === ANY_TAG ? 'any tag' : tagText(op.tag);
  return `recv from ${src} tag ${tag}${ctx}`;
}

