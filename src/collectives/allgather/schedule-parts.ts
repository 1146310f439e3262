/**
 * What the allgather(v) schedule compilers share (src/comm/schedule.ts is the representation;
 * the compilers are with their variants — ring.ts, bruck.ts, recursive-doubling.ts — and the
 * public entry is schedule.ts): what one rank knows, its buffers, the spans of blocks, the
 * operations, and the run of a compiled data phase after the handshake (handshake.ts), which
 * stays program code.
 *
 * Buffers of a rank's schedule, in this order: 'send' (its own block, bytes[rank] bytes),
 * 'recv' (the user's receive buffer up to the end of the last non-empty block) and, for
 * Bruck, 'tmp' (the other ranks' blocks packed, allocated once per call). Block i's place is
 * recv[offsets[i], offsets[i] + bytes[i]); a block is sent from 'send' when it is the rank's
 * own (so the own block's copy into recv can overlap the first transfer), else from recv. A
 * message of several blocks is one vectored message: one range per run of non-empty blocks
 * adjacent in the buffer, in order (blocksSpan). Empty blocks have no range; a message of only
 * empty blocks is a 0-byte message.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { BoundSchedule, ByteRange, RankSchedule, ScheduleOp, ScheduleOptions, ScheduleStep, Span } from '../../comm/schedule.js';
import { bindSchedule } from '../../schedule/run.js';
import { copy, recv, send, span } from '../schedule-builder.js';
import { checkReceived } from './blocks.js';
import type { FirstStep } from './handshake.js';
import { layoutEnd, packedPrefix } from './shared-layout.js';
import type { AllgathervInput } from './types.js';

/** Buffer indices (schedule.buffers order). */
export const SEND = 0;
export const RECV = 1;
export const TMP = 2;

const EMPTY = new Uint8Array(0);

/** What one rank knows of an allgather(v): its rank, p, and every block's bytes and byte offset in recv. */
export interface AllgatherRankDescription {
  readonly rank: number;
  readonly p: number;
  readonly bytes: readonly number[];
  readonly offsets: readonly number[];
}

/** The description of `input`'s rank. */
export function describeAllgather(input: AllgathervInput): AllgatherRankDescription {
  return { rank: input.comm.rank, p: input.comm.size, bytes: input.bytes, offsets: input.offsets };
}

/** Bytes of the 'recv' buffer: the end of the last non-empty block (0 when all are empty). */
export function recvCapacity(d: AllgatherRankDescription): number {
  return layoutEnd(d.bytes, d.offsets);
}

/** The buffers 'send' and 'recv' of a rank's schedule (and 'tmp' of `tmpBytes` when given). */
export function scheduleBuffers(d: AllgatherRankDescription, tmpBytes?: number): RankSchedule['buffers'] {
  const list = [
    { name: 'send', bytes: d.bytes[d.rank] },
    { name: 'recv', bytes: recvCapacity(d) },
  ];
  if (tmpBytes !== undefined) list.push({ name: 'tmp', bytes: tmpBytes });
  return list;
}

/** Block i as sent (`sending`: the own block from 'send') or as received (its place in recv). */
export function blockSpan(d: AllgatherRankDescription, i: number, sending: boolean): Span {
  return sending && i === d.rank ? span(SEND, 0, d.bytes[i]) : span(RECV, d.offsets[i], d.bytes[i]);
}

/** Appends range `r` to `out`, extending the last range when `r` continues it in the same buffer. */
export function pushMerged(out: ByteRange[], r: ByteRange): void {
  const last = out.length > 0 ? out[out.length - 1] : undefined;
  if (last !== undefined && last.buffer === r.buffer && last.offset + last.length === r.offset) {
    out[out.length - 1] = { buffer: r.buffer, offset: last.offset, length: last.length + r.length };
  } else {
    out.push(r);
  }
}

/** A run of consecutive ranks: [first, end). */
export type RankRun = readonly [first: number, end: number];

/**
 * One message of the blocks of `runs` (each a run of consecutive ranks), in that order: empty
 * blocks left out, a block that continues the previous one in the same buffer extends its
 * range. Merged, a message of blocks adjacent in recv is O(1) ranges: a rank's schedule
 * (recursive doubling's rounds) holds no range per block, O(p) per rank and O(p²) for a
 * simulation's ranks. For a packed layout shared by the ranks (shared-layout.ts packedPrefix)
 * a run's blocks are back to back in recv, so each run costs O(1) — one range, cut around the
 * own block when it goes out of 'send' — instead of a walk over its blocks; the ranges, and so
 * the times, are the same.
 */
export function runsSpan(d: AllgatherRankDescription, runs: readonly RankRun[], sending: boolean): Span {
  const out: ByteRange[] = [];
  const prefix = packedPrefix(d.bytes, d.offsets);
  const recvRun = (first: number, end: number): void => {
    if (prefix === undefined) {
      for (let i = first; i < end; i++) for (const r of span(RECV, d.offsets[i], d.bytes[i])) pushMerged(out, r);
    } else {
      for (const r of span(RECV, prefix[first], prefix[end] - prefix[first])) pushMerged(out, r);
    }
  };
  for (const [first, end] of runs) {
    if (sending && first <= d.rank && d.rank < end) {
      recvRun(first, d.rank);
      for (const r of span(SEND, 0, d.bytes[d.rank])) pushMerged(out, r);
      recvRun(d.rank + 1, end);
    } else {
      recvRun(first, end);
    }
  }
  return out;
}

// spans and operations: the gatherv/scatterv compilers' (collectives/schedule-builder.ts)
export { copy, recv, send, span };

/** The own block's copy from 'send' into its place in recv (none for an empty block): blocks.ts copyOwn. */
export function ownCopy(d: AllgatherRankDescription): ScheduleOp[] {
  const m = d.bytes[d.rank];
  return m > 0 ? [copy(span(RECV, d.offsets[d.rank], m), span(SEND, 0, m))] : [];
}

/** Appends a step of `ops` (none when empty), at most `window` outstanding (default: all at once). */
export function addStep(steps: ScheduleStep[], ops: readonly ScheduleOp[], window: number = ops.length): void {
  if (ops.length > 0) steps.push({ ops, window: Math.max(1, window) });
}

/**
 * The error of a receive that got another length than its span, as the program code raised it:
 * fewer bytes, checkReceived's InvalidArgumentError('send'); more, the transport's truncation
 * error unchanged.
 */
export function allgatherRecvError(comm: Communicator): NonNullable<ScheduleOptions['recvError']> {
  return (peer, tag, expected, got, cause) => {
    if (got === undefined) return cause as Error;
    try {
      checkReceived(comm, { source: peer, tag, bytes: got }, expected);
    } catch (e) {
      return e as Error;
    }
    return new Error(`allgather: a receive from rank ${peer} of ${got} bytes reported as wrong, ${expected} expected`);
  };
}

/** The bound buffers of `schedule` for `input`: the user's send and recv, 'tmp' allocated here (once per call). */
export function bindBuffers(input: AllgathervInput, schedule: RankSchedule): Uint8Array[] {
  return schedule.buffers.map((b, i) => {
    if (i === SEND) return input.send.length === b.bytes ? input.send : input.send.subarray(0, b.bytes);
    if (i === RECV) return input.recv.subarray(0, b.bytes);
    return b.bytes === 0 ? EMPTY : new Uint8Array(b.bytes);
  });
}

const noop = (): void => undefined;

/** `schedule` bound for input.comm's executor (schedule/run.ts bindSchedule), receives checked as the program code checked them. */
export function bindAllgather(input: AllgathervInput, schedule: RankSchedule, buffers: readonly Uint8Array[]): BoundSchedule {
  // an allgather call runs its schedule once
  return bindSchedule(input.comm, schedule, buffers, { recvError: allgatherRecvError(input.comm), once: true });
}

/**
 * Runs `schedule` (this rank's data phase after its first step, ring and Bruck) with `buffers`
 * on input.comm (bindAllgather). Its first `lead` steps (the own block's copy, which touches
 * none of the first step's bytes) are issued at once, while the first step (`first`, the
 * handshake; none for p = 1) is in flight, as the program code did; the rest once the first
 * step has completed. Both parts are bound before the copy is issued. The continuation after
 * the first step is the program code's (await received(), await w, post): every rank resumes
 * after as many microtask turns as before, whether it copies or not, so ranks resuming at the
 * same virtual time post in the same order as before (a per-rank extra await here reordered
 * simultaneous posts, and with them one-ported port arbitration).
 */
export async function runAfterFirstStep(
  input: AllgathervInput,
  schedule: RankSchedule,
  buffers: readonly Uint8Array[],
  first: FirstStep | undefined,
  lead: number,
): Promise<void> {
  const n = schedule.steps.length;
  const head = lead > 0 ? bindAllgather(input, { ...schedule, steps: schedule.steps.slice(0, lead) }, buffers) : undefined;
  const tail = lead < n ? bindAllgather(input, lead > 0 ? { ...schedule, steps: schedule.steps.slice(lead) } : schedule, buffers) : undefined;
  const copied = head?.run();
  if (first !== undefined) {
    try {
      await first.received();
      await first.w;
    } catch (e) {
      copied?.then(noop, noop);
      throw e;
    }
  }
  if (tail !== undefined) await tail.run();
  if (copied !== undefined) await copied;
}
