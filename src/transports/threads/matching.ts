/**
 * MPI matching of the threads endpoint: the receives posted and not yet matched (post order)
 * and the messages that arrived before a receive accepted them (arrival order; possibly still
 * arriving), each an intrusive doubly-linked list of pooled records (pools.ts). A message takes
 * the earliest-posted receive that accepts its (context, source, tag) — `matches`: a receive
 * may name ANY_SOURCE and ANY_TAG — and a receive takes the earliest-arrived message it
 * accepts, so messages of one (source, context, tag) never overtake each other. The scans are
 * written out where they happen (endpoint.ts `postRecv` and `deliverLocal`, progress.ts
 * `openSink` and `takeFocus`): they are the hot path, and a helper call per scan costs inlining.
 * Also what a matched receive gets: its buffer if its size was unknown, its truncation error.
 */

import { ANY_SOURCE, ANY_TAG, type Received } from '../../comm/communicator.js';
import { type CommunicationError, TruncationError } from '../../errors.js';
import { RecordPools, type RecvOp, type Unexpected } from './pools.js';

/** Whether the receive `op` accepts a message (ctx, source, tag). */
export function matches(op: RecvOp, ctx: number, source: number, tag: number): boolean {
  return op.ctx === ctx && (op.source === ANY_SOURCE || op.source === source) && (op.tag === ANY_TAG || op.tag === tag);
}

/** A receive of unknown size gets a buffer of the matched message's size (if within its limit). */
export function allocFor(op: RecvOp, len: number): void {
  if (op.alloc && len <= op.cap) op.into = new Uint8Array(len);
}

/** What a completed receive of unknown size resolves with. */
export function received(op: RecvOp, source: number, tag: number, bytes: number): Received {
  return { source, tag, bytes, data: op.into as Uint8Array };
}

export function truncation(source: number, tag: number, len: number, cap: number, rank: number): CommunicationError {
  return new TruncationError(`message of ${len} bytes from rank ${source} (tag ${tag}) exceeds the receive buffer of ${cap} bytes`, len, cap, { rank });
}

/** The posted receives and the unexpected messages of one endpoint (a link of its class chain). */
export abstract class MatchQueues extends RecordPools {
  protected postedHead: RecvOp | null = null;
  protected postedTail: RecvOp | null = null;
  protected unexpectedHead: Unexpected | null = null;
  protected unexpectedTail: Unexpected | null = null;

  protected linkPosted(op: RecvOp): void {
    op.next = null;
    op.prev = this.postedTail;
    if (this.postedTail === null) this.postedHead = op;
    else this.postedTail.next = op;
    this.postedTail = op;
  }

  protected unlinkPosted(op: RecvOp): void {
    if (op.prev === null) this.postedHead = op.next;
    else op.prev.next = op.next;
    if (op.next === null) this.postedTail = op.prev;
    else op.next.prev = op.prev;
    op.prev = op.next = null;
  }

  protected linkUnexpected(u: Unexpected): void {
    u.next = null;
    u.prev = this.unexpectedTail;
    if (this.unexpectedTail === null) this.unexpectedHead = u;
    else this.unexpectedTail.next = u;
    this.unexpectedTail = u;
  }

  protected unlinkUnexpected(u: Unexpected): void {
    if (u.prev === null) this.unexpectedHead = u.next;
    else u.prev.next = u.next;
    if (u.next === null) this.unexpectedTail = u.prev;
    else u.next.prev = u.prev;
    u.prev = u.next = null;
  }

  /** A new unexpected message (ctx, source, tag) of `len` bytes, queued last; it has not arrived yet. */
  protected newUnexpected(ctx: number, source: number, tag: number, len: number): Unexpected {
    const u = this.takeUnexpected(ctx, source, tag, len);
    this.linkUnexpected(u);
    return u;
  }
}
