/**
 * The rules of a step's concurrent streams (comm/schedule.ts ScheduleStep `streams`, `after`),
 * checked where a schedule is bound (run.ts) and by the static check (check.ts).
 */
import type { ScheduleStep } from './types.js';

/**
 * What is wrong with a step's `streams` and `after` (comm/schedule.ts ScheduleStep), or
 * undefined: streams non-negative integers summing to the operations, `after` only with
 * streams, one entry per operation, each −1 or an operation of an earlier stream; the sends of
 * one (peer, tag) in one stream, and the receives of one (peer, tag) (static MPI matching).
 */
export function checkStreams(st: ScheduleStep): { field: string; message: string } | undefined {
  const { streams, after } = st;
  if (streams === undefined) {
    return after === undefined ? undefined : { field: 'after', message: 'is given without streams' };
  }
  if (!Array.isArray(streams)) return { field: 'streams', message: 'is not an array of operation counts' };
  let sum = 0;
  for (let k = 0; k < streams.length; k++) {
    const c: unknown = streams[k];
    if (typeof c !== 'number' || !Number.isSafeInteger(c) || c < 0) return { field: `streams[${k}]`, message: `${String(c)} is not an integer ≥ 0` };
    sum += c;
  }
  const n = st.ops.length;
  if (sum !== n) return { field: 'streams', message: `count ${sum} operations, the step has ${n}` };
  const streamOf = new Int32Array(n);
  for (let k = 0, i = 0; k < streams.length; k++) for (let c = 0; c < streams[k]; c++) streamOf[i++] = k;
  if (after !== undefined) {
    if (!Array.isArray(after) || after.length !== n) return { field: 'after', message: `must have one entry per operation (${n})` };
    for (let i = 0; i < n; i++) {
      const d: unknown = after[i];
      if (d === -1) continue;
      if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0 || d >= n || streamOf[d] >= streamOf[i]) {
        return { field: `after[${i}]`, message: `${String(d)} is neither −1 nor an operation of an earlier stream than operation ${i}'s (stream ${streamOf[i]})` };
      }
    }
  }
  if (streams.length > 1) {
    const owner = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const op = st.ops[i];
      if (op.kind !== 'send' && op.kind !== 'recv') continue;
      const key = `${op.kind} ${op.peer} ${op.tag}`;
      const k = owner.get(key);
      if (k === undefined) owner.set(key, streamOf[i]);
      else if (k !== streamOf[i]) {
        return {
          field: `ops[${i}]`,
          message: `${op.kind === 'send' ? 'sends to' : 'receives from'} rank ${op.peer} with tag ${op.tag} in stream ${streamOf[i]}, and stream ${k} does too: their order would depend on the streams' interleaving`,
        };
      }
    }
  }
  return undefined;
}
