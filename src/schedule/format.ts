/**
 * A schedule as readable text: per rank its buffers, then each step and its operations, one
 * a line, e.g.
 *
 *     rank 0: buffers send (4 B), recv (16 B)
 *       step 0 (window 1):
 *         copy send[0..4) → recv[0..4) (4 B)
 *         recv ← 1 tag 7  recv[4..8) (4 B)
 *       rank 0: 2 steps, 0 messages sent, 0 B sent
 *
 * A step of concurrent streams (ScheduleStep.streams) says so in its heading
 * (`step 1 (window 1 per stream, 2 streams):`), heads each stream (`stream 0 (3 ops):`) and
 * marks an operation with a dependency (`after op 4`, its index in the step).
 *
 * Vectored spans are their ranges joined by '+' (`recv[0..4)+recv[8..12)`). Tags of vcoll's
 * collectives (≥ COLLECTIVE_TAG) are printed in hex, user tags in decimal. Ends with the
 * total over all ranks. Cost: O(operations + ranges).
 */
import { COLLECTIVE_TAG } from '../comm/communicator.js';
import { type RankSchedule, type Span, spanBytes, type WorldSchedule } from './types.js';

/** The listing of every rank's schedule and the totals. */
export function formatSchedule(world: WorldSchedule): string {
  const lines: string[] = [`schedule '${world.label}': ${world.ranks.length} rank${world.ranks.length === 1 ? '' : 's'}`];
  let steps = 0;
  let messages = 0;
  let bytes = 0;
  for (const rs of world.ranks) {
    const sum = formatRank(rs, lines);
    steps += rs.steps.length;
    messages += sum.messages;
    bytes += sum.bytes;
  }
  lines.push(`total: ${steps} step${steps === 1 ? '' : 's'}, ${plural(messages, 'message')} sent, ${bytes} B sent`);
  return lines.join('\n');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A tag as printed: hex for the collectives' reserved tags, else decimal. */
export function formatTag(tag: number): string {
  return tag >= COLLECTIVE_TAG ? `0x${tag.toString(16)}` : String(tag);
}

/** A span as `name[a..b)+name[c..d)` (`(empty)` when it has no ranges). */
export function formatSpan(rs: RankSchedule, span: Span): string {
  if (span.length === 0) return '(empty)';
  return span.map((r) => `${rs.buffers[r.buffer]?.name ?? `#${r.buffer}`}[${r.offset}..${r.offset + r.length})`).join('+');
}

function formatRank(rs: RankSchedule, lines: string[]): { messages: number; bytes: number } {
  const bufs = rs.buffers.map((b) => `${b.name} (${b.bytes} B)`).join(', ');
  lines.push(`rank ${rs.rank}: buffers ${bufs === '' ? '(none)' : bufs}`);
  let messages = 0;
  let bytes = 0;
  rs.steps.forEach((st, s) => {
    const streams = st.streams;
    lines.push(
      streams === undefined
        ? `  step ${s} (window ${st.window}):`
        : `  step ${s} (window ${st.window} per stream, ${plural(streams.length, 'stream')}):`,
    );
    if (st.ops.length === 0) lines.push('    (no operations)');
    const opLine = (j: number, pad: string): void => {
      const op = st.ops[j];
      const dep = st.after === undefined || st.after[j] < 0 ? '' : `  after op ${st.after[j]}`;
      if (op.kind === 'copy') {
        const port = op.tag === undefined ? '' : `  through a port, tag ${formatTag(op.tag)}`;
        lines.push(`${pad}copy ${formatSpan(rs, op.from)} → ${formatSpan(rs, op.to)} (${spanBytes(op.from)} B)${port}${dep}`);
        return;
      }
      if (op.kind === 'combine') {
        lines.push(`${pad}combine ${formatSpan(rs, op.into)} ⊕= ${formatSpan(rs, op.from)} (${spanBytes(op.from)} B)${dep}`);
        return;
      }
      const n = spanBytes(op.data);
      const arrow = op.kind === 'send' ? '→' : '←';
      lines.push(`${pad}${op.kind} ${arrow} ${op.peer} tag ${formatTag(op.tag)}  ${formatSpan(rs, op.data)} (${n} B)${dep}`);
      if (op.kind === 'send') {
        messages++;
        bytes += n;
      }
    };
    if (streams === undefined) {
      for (let j = 0; j < st.ops.length; j++) opLine(j, '    ');
      return;
    }
    let j = 0;
    streams.forEach((count, k) => {
      lines.push(`    stream ${k} (${plural(count, 'op')}):`);
      for (let c = 0; c < count; c++) opLine(j++, '      ');
    });
  });
  lines.push(`  rank ${rs.rank}: ${plural(rs.steps.length, 'step')}, ${plural(messages, 'message')} sent, ${bytes} B sent`);
  return { messages, bytes };
}
