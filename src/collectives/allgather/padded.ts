/**
 * An allgather of padded blocks: p blocks of `stride` bytes of which only the first `piece`
 * bytes carry data, and of all the data together only the first n bytes — the pieces of the
 * scatter-allgather broadcast (basic/bcast.ts; van de Geijn's long-message broadcast as
 * surveyed by Chan et al. 2007): ⌈n/p⌉ bytes each, the last ones padded, each followed by an
 * 8-byte trailer (the root's length). The messages keep their lengths — they are the
 * algorithm's cost, 2β(p−1)(⌈n/p⌉ + 8) — but once the scatter has delivered each rank its
 * piece nobody reads padding or trailers, so no rank needs to hold them: a buffer of
 * p(⌈n/p⌉ + 8) bytes per rank (9p for n < p; Bruck's packed copy as much again) is O(p²)
 * over a simulation's ranks, which run at once (47 GB for a group of 51 200 ranks).
 *
 * So the allgather's schedule (Bruck or recursive doubling, compiled over the regular layout
 * of stride-byte blocks and schedule-parts.ts's buffers 'send', 'recv' and Bruck's 'tmp') is
 * placed onto two buffers: 'data', the caller's n bytes (block i's data at i·piece), and
 * 'sink', one scratch buffer of the process that every unread byte is received into and sent
 * from. A message keeps its length and its place in the schedule; its bytes are the data of
 * its blocks in block order, then as many sink bytes as the rest — sender and receiver name
 * the same blocks in the same order, so every data byte lands where it belongs. Bruck's 'tmp'
 * (block j: rank r + j's) is placed at each block's own place, so its rotation copies in place.
 * A copy keeps the lengths of its pieces (each is charged as one: γ per byte on the simulator)
 * and moves sink bytes; the own block's data is put in place first (placePadded's caller).
 * Simulated times stay exactly those of the unplaced schedule.
 */
import type { ByteRange, RankSchedule, ScheduleOp, Span } from '../../comm/schedule.js';
import { spanBytes, spanView } from '../../comm/schedule.js';
import type { MessageBuffer } from '../../comm/segments.js';
import { pushMerged, RECV, SEND, TMP, type AllgatherRankDescription } from './schedule-parts.js';

/** The padded blocks as a rank holds them: `data` (n bytes), block i's data at i·piece. */
export interface PaddedBlocks {
  /** Data bytes per block (⌈n/p⌉). */
  readonly piece: number;
  /** Bytes per block in every message (piece + the trailer). */
  readonly stride: number;
  /** The data of all blocks, back to back. */
  readonly data: Uint8Array;
}

/** Buffer indices of a placed schedule. */
const DATA = 0;
const SINK = 1;

/** The process's sink (grown as needed; its contents are never read). */
let sink = new Uint8Array(0);

function sinkOf(bytes: number): Uint8Array {
  if (sink.length < bytes) sink = new Uint8Array(Math.max(bytes, 2 * sink.length));
  return sink.subarray(0, bytes);
}

/** Bytes of a padded allgather's sink (tests: the process holds one, whatever p). */
export function sinkBytes(): number {
  return sink.length;
}

/** A placed schedule, its bound buffers, and the views of spans of the unplaced one. */
export interface PlacedAllgather {
  readonly schedule: RankSchedule;
  readonly buffers: readonly Uint8Array[];
  /** The bytes of a span of the unplaced schedule (Bruck's first step, program code). */
  view(span: Span): MessageBuffer;
}

/** Calls `run(first, end)` for each run of consecutive blocks [first, end) that range `r` of the unplaced schedule holds. */
function blockRuns(d: AllgatherRankDescription, stride: number, r: ByteRange, run: (first: number, end: number) => void): void {
  if (r.offset % stride !== 0 || r.length % stride !== 0) {
    throw new Error(`padded allgather: range ${r.offset}+${r.length} of buffer ${r.buffer} is not whole ${stride}-byte blocks`);
  }
  const k = r.length / stride;
  if (r.buffer === SEND) run(d.rank, d.rank + 1);
  else if (r.buffer === RECV) run(r.offset / stride, r.offset / stride + k);
  else if (r.buffer === TMP) {
    // tmp's block j (from 1) is rank + j's, mod p (bruck.ts): at most two runs
    const s = (d.rank + 1 + r.offset / stride) % d.p;
    if (s + k <= d.p) run(s, s + k);
    else {
      run(s, d.p);
      run(0, s + k - d.p);
    }
  } else throw new Error(`padded allgather: unknown buffer ${r.buffer}`);
}

/** A message's span placed: its blocks' data in block order, then the rest from the sink. O(runs), not O(blocks). */
function placeMessage(d: AllgatherRankDescription, blocks: PaddedBlocks, span: Span): Span {
  const { piece, stride } = blocks;
  const n = blocks.data.length;
  const out: ByteRange[] = [];
  let data = 0;
  for (const r of span) {
    blockRuns(d, stride, r, (first, end) => {
      const lo = first * piece;
      const hi = Math.min(n, end * piece);
      if (hi <= lo) return;
      pushMerged(out, { buffer: DATA, offset: lo, length: hi - lo });
      data += hi - lo;
    });
  }
  const rest = spanBytes(span) - data;
  if (rest > 0) out.push({ buffer: SINK, offset: 0, length: rest });
  return out;
}

/** Ranges of the sink with the lengths of `span`'s ranges (a copy's pieces stay as long). */
function sinkRanges(span: Span): Span {
  return span.map((r) => ({ buffer: SINK, offset: 0, length: r.length }));
}

function placeOp(d: AllgatherRankDescription, blocks: PaddedBlocks, op: ScheduleOp): ScheduleOp {
  if (op.kind === 'send' || op.kind === 'recv') return { ...op, data: placeMessage(d, blocks, op.data) };
  if (op.kind === 'copy') return { ...op, from: sinkRanges(op.from), to: sinkRanges(op.to) };
  throw new Error('padded allgather: a combine operation');
}

/** The largest range any span of `schedule` takes from the sink. */
function sinkNeed(schedule: RankSchedule): number {
  let need = 0;
  const of = (span: Span): void => {
    for (const r of span) if (r.buffer === SINK && r.length > need) need = r.length;
  };
  for (const st of schedule.steps) {
    for (const op of st.ops) {
      if (op.kind === 'send' || op.kind === 'recv') of(op.data);
      else if (op.kind === 'copy') {
        of(op.from);
        of(op.to);
      }
    }
  }
  return need;
}

/**
 * `compiled` (this rank's allgather schedule over the regular layout of `blocks.stride`-byte
 * blocks) placed onto `blocks.data` and the sink: the same steps, windows, peers, tags and
 * lengths (see the module comment).
 */
export function placePadded(d: AllgatherRankDescription, compiled: RankSchedule, blocks: PaddedBlocks): PlacedAllgather {
  const steps = compiled.steps.map((st) => ({ ...st, ops: st.ops.map((op) => placeOp(d, blocks, op)) }));
  const placed: RankSchedule = { rank: compiled.rank, buffers: [], steps };
  const need = Math.max(sinkNeed(placed), blocks.stride);
  const schedule: RankSchedule = {
    ...placed,
    buffers: [
      { name: 'data', bytes: blocks.data.length },
      { name: 'sink', bytes: need },
    ],
  };
  const buffers = [blocks.data, sinkOf(need)];
  return { schedule, buffers, view: (span) => spanView(buffers, placeMessage(d, blocks, span)) };
}

/** Puts this rank's own block's data (the first bytes of `own`) in place, before the placed schedule sends it. */
export function placeOwnData(rank: number, own: Uint8Array, blocks: PaddedBlocks): void {
  const lo = rank * blocks.piece;
  const hi = Math.min(blocks.data.length, lo + blocks.piece);
  if (hi > lo) blocks.data.set(own.subarray(0, hi - lo), lo);
}
