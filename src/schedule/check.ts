/**
 * Static checks of a WorldSchedule (every rank's schedule of one collective), before anything
 * runs:
 *
 * - shape: ranks are 0..p−1 in order, every peer an integer in [0, p), every tag an integer
 *   ≥ 0, every window an integer ≥ 1, every buffer size an integer ≥ 0, a step's streams and
 *   dependencies as schedule/streams.ts requires (the sends of one (peer, tag) in one stream,
 *   its receives too: their matching order is static);
 * - range: every ByteRange names an existing buffer and lies within its bytes (offset and
 *   length non-negative integers);
 * - matching (MPI's): for each (source, dest, tag) the sends of source to dest with that tag
 *   in program order (step order, then operation order) and the receives of dest from source
 *   with that tag in program order pair up one to one, with equal byte lengths; a copy's two
 *   spans have equal lengths, and a combine's (each one range or none);
 * - deadlock freedom: the schedules run abstractly with rendezvous semantics (a send and its
 *   receive complete together once both are posted, a copy or combine once it is posted; operation j of
 *   a step is posted once fewer than `window` of the step's earlier operations are incomplete —
 *   in a step of streams, of its stream's, and once its dependency (`after`) has completed;
 *   a step ends when all its operations have completed). A worklist of ranks runs this to its
 *   fixed point; a rank that has not finished then is blocked, and is reported with the
 *   operation it waits on and why its partner has not posted it. Rendezvous is the strictest
 *   semantics (no send completes before its receive is posted), so a schedule that passes
 *   runs on any transport, eager or not;
 * - overlap: two receives of one step (or a receive and a copy's destination or a combine's
 *   result; a combine and another combine or processor copy run in order and may share bytes) writing
 *   overlapping bytes of one buffer.
 *
 * Matching and the deadlock run are skipped when a shape problem was found (peers and ranks
 * would not mean anything). Cost: O(N log N) for N operations and ranges (the sort of the
 * overlap check; matching uses a hash map, the deadlock run posts and completes each
 * operation once).
 */
import { VcollError } from '../errors.js';
import { checkStreams } from './streams.js';
import { type ByteRange, type RankSchedule, type ScheduleOp, type Span, spanBytes, type WorldSchedule } from './types.js';

export type ScheduleProblemKind = 'range' | 'unmatched-send' | 'unmatched-recv' | 'length' | 'deadlock' | 'overlap' | 'shape';

/** One problem of a schedule: where (rank, step and operation index when it is one operation's) and what. */
export interface ScheduleProblem {
  readonly kind: ScheduleProblemKind;
  readonly rank: number;
  readonly step?: number;
  readonly op?: number;
  readonly message: string;
}

/** How many problems assertSchedule lists. */
const LISTED = 10;

/** Every problem of `world` (empty: the schedule is well formed, matched and deadlock-free). */
export function checkSchedule(world: WorldSchedule): ScheduleProblem[] {
  return checkAndPair(world).problems;
}

/**
 * checkSchedule's problems, and the pairing its matching found: `partner[g]` is the receive of
 * send g and the send of receive g (-1: unmatched, or not a send or receive), the operations
 * numbered rank by rank, step by step, in order. Under MPI matching every run of the schedule
 * pairs them so (sim/replay.ts matches by it). Empty when a shape problem stopped the check.
 */
export function checkAndPair(world: WorldSchedule): { problems: ScheduleProblem[]; partner: Int32Array } {
  const problems: ScheduleProblem[] = [];
  const shapeOk = checkShape(world, problems);
  checkRanges(world, problems);
  checkOverlaps(world, problems);
  if (!shapeOk) return { problems, partner: new Int32Array(0) };
  const flat = flatten(world);
  matchOps(world, flat, problems);
  runAbstract(world, flat, problems);
  return { problems, partner: flat.partner };
}

/** checkAndPair's pairing alone, for a schedule already checked (no problem). */
export function pairOps(world: WorldSchedule): Int32Array {
  const flat = flatten(world);
  matchOps(world, flat, []);
  return flat.partner;
}

/** Throws a VcollError (code INTERNAL) listing up to 10 problems when `world` has any. */
export function assertSchedule(world: WorldSchedule): void {
  const problems = checkSchedule(world);
  if (problems.length === 0) return;
  const shown = problems.slice(0, LISTED).map((p) => `  ${p.kind}: ${p.message}`);
  const more = problems.length > LISTED ? `\n  … and ${problems.length - LISTED} more` : '';
  throw new VcollError(
    'INTERNAL',
    `schedule '${world.label}' has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${shown.join('\n')}${more}`,
  );
}

const isNonNegInt = (x: number): boolean => Number.isSafeInteger(x) && x >= 0;

function where(rank: number, step: number, op: number): string {
  return `rank ${rank} step ${step} op ${op}`;
}

/** Ranks, peers, tags, windows, buffer sizes; returns whether matching can run. */
function checkShape(world: WorldSchedule, problems: ScheduleProblem[]): boolean {
  const p = world.ranks.length;
  let ok = true;
  const bad = (rank: number, message: string, step?: number, op?: number): void => {
    ok = false;
    problems.push({ kind: 'shape', rank, step, op, message });
  };
  for (let r = 0; r < p; r++) {
    const rs = world.ranks[r];
    if (rs.rank !== r) bad(r, `ranks[${r}] is the schedule of rank ${String(rs.rank)}; ranks must be 0..${p - 1} in order`);
    rs.buffers.forEach((b, i) => {
      if (!isNonNegInt(b.bytes)) bad(r, `rank ${r} buffer ${i} (${b.name}) has ${String(b.bytes)} bytes, not an integer ≥ 0`);
    });
    rs.steps.forEach((st, s) => {
      if (!Number.isSafeInteger(st.window) || st.window < 1) bad(r, `rank ${r} step ${s} has window ${String(st.window)}, not an integer ≥ 1`, s);
      const streams = checkStreams(st);
      if (streams !== undefined) bad(r, `rank ${r} step ${s}: ${streams.field} ${streams.message}`, s);
      st.ops.forEach((op, j) => {
        if (op.kind === 'copy') {
          if (op.tag !== undefined && !isNonNegInt(op.tag)) bad(r, `${where(r, s, j)}: copy tag ${String(op.tag)} is not an integer ≥ 0`, s, j);
          return;
        }
        if (op.kind === 'combine') {
          if (op.into.length > 1 || op.from.length > 1) bad(r, `${where(r, s, j)}: a combine operand is one range (or none)`, s, j);
          return;
        }
        if (op.kind !== 'send' && op.kind !== 'recv') {
          bad(r, `${where(r, s, j)} has unknown kind ${String((op as { kind: unknown }).kind)}`, s, j);
          return;
        }
        if (!Number.isSafeInteger(op.peer) || op.peer < 0 || op.peer >= p) {
          bad(r, `${where(r, s, j)}: ${op.kind} peer ${String(op.peer)} is not a rank in [0, ${p})`, s, j);
        }
        if (!isNonNegInt(op.tag)) bad(r, `${where(r, s, j)}: ${op.kind} tag ${String(op.tag)} is not an integer ≥ 0`, s, j);
      });
    });
  }
  return ok;
}

function rangeText(rs: RankSchedule, r: ByteRange): string {
  const name = rs.buffers[r.buffer]?.name ?? `#${String(r.buffer)}`;
  return `${name}[${String(r.offset)}..${String(r.offset + r.length)})`;
}

/** Every ByteRange within its buffer. */
function checkRanges(world: WorldSchedule, problems: ScheduleProblem[]): void {
  world.ranks.forEach((rs, rank) => {
    const check = (span: Span, what: string, s: number, j: number): void => {
      span.forEach((br, k) => {
        const at = `${where(rank, s, j)}: ${what} range ${k}`;
        const buf = Number.isSafeInteger(br.buffer) ? rs.buffers[br.buffer] : undefined;
        let message: string | undefined;
        if (buf === undefined) message = `${at} names buffer ${String(br.buffer)}, which rank ${rank} does not have (${rs.buffers.length} buffers)`;
        else if (!isNonNegInt(br.offset) || !isNonNegInt(br.length)) {
          message = `${at} has offset ${String(br.offset)} and length ${String(br.length)}, not integers ≥ 0`;
        } else if (br.offset + br.length > buf.bytes) {
          message = `${at} ${rangeText(rs, br)} ends beyond buffer ${buf.name} (${buf.bytes} B)`;
        }
        if (message !== undefined) problems.push({ kind: 'range', rank, step: s, op: j, message });
      });
    };
    rs.steps.forEach((st, s) => {
      st.ops.forEach((op, j) => {
        if (op.kind === 'copy') {
          check(op.from, 'copy source', s, j);
          check(op.to, 'copy destination', s, j);
          const a = spanBytes(op.from);
          const b = spanBytes(op.to);
          if (a !== b) problems.push({ kind: 'length', rank, step: s, op: j, message: `${where(rank, s, j)}: copy of ${a} B into ${b} B` });
        } else if (op.kind === 'combine') {
          check(op.from, 'combine operand', s, j);
          check(op.into, 'combine result', s, j);
          const a = spanBytes(op.from);
          const b = spanBytes(op.into);
          if (a !== b) problems.push({ kind: 'length', rank, step: s, op: j, message: `${where(rank, s, j)}: combine of ${a} B into ${b} B` });
        } else if (op.kind === 'send' || op.kind === 'recv') check(op.data, op.kind, s, j);
      });
    });
  });
}

/** Receives and copy destinations of one step writing overlapping bytes of one buffer. */
function checkOverlaps(world: WorldSchedule, problems: ScheduleProblem[]): void {
  interface Write {
    buffer: number;
    start: number;
    end: number;
    op: number;
    /** A combine: done when issued, in order, so it may update bytes another combine or a processor copy of the step writes. */
    combine: boolean;
    /** A combine or a processor copy (no tag): done when issued. */
    local: boolean;
  }
  world.ranks.forEach((rs, rank) => {
    rs.steps.forEach((st, s) => {
      const writes: Write[] = [];
      st.ops.forEach((op, j) => {
        const span = op.kind === 'recv' ? op.data : op.kind === 'copy' ? op.to : op.kind === 'combine' ? op.into : undefined;
        if (span === undefined) return;
        for (const br of span) if (br.length > 0) writes.push({ buffer: br.buffer, start: br.offset, end: br.offset + br.length, op: j, combine: op.kind === 'combine', local: op.kind === 'combine' || (op.kind === 'copy' && op.tag === undefined) });
      });
      if (writes.length < 2) return;
      writes.sort((a, b) => a.buffer - b.buffer || a.start - b.start || a.op - b.op);
      const seen = new Set<string>();
      let reach: Write = writes[0];
      for (let i = 1; i < writes.length; i++) {
        const w = writes[i];
        if (w.buffer !== reach.buffer) {
          reach = w;
          continue;
        }
        if (w.start < reach.end && w.op !== reach.op && !(w.local && reach.local && (w.combine || reach.combine))) {
          const a = Math.min(w.op, reach.op);
          const b = Math.max(w.op, reach.op);
          const key = `${a} ${b}`;
          if (!seen.has(key)) {
            seen.add(key);
            const name = rs.buffers[w.buffer]?.name ?? `#${w.buffer}`;
            const lo = w.start;
            const hi = Math.min(w.end, reach.end);
            problems.push({
              kind: 'overlap',
              rank,
              step: s,
              op: b,
              message: `rank ${rank} step ${s}: ops ${a} (${opText(st.ops[a])}) and ${b} (${opText(st.ops[b])}) both write ${name}[${lo}..${hi})`,
            });
          }
        }
        if (w.end > reach.end) reach = w;
      }
    });
  });
}

function opText(op: ScheduleOp): string {
  if (op.kind === 'send') return `send to ${op.peer} tag ${op.tag}`;
  if (op.kind === 'recv') return `recv from ${op.peer} tag ${op.tag}`;
  return op.kind;
}

/** Every operation of the world numbered in rank, step, operation order. */
interface Flat {
  readonly ops: ScheduleOp[];
  readonly rank: Int32Array;
  readonly step: Int32Array;
  readonly index: Int32Array;
  /** The global number of op 0 of step s of rank r: first[r][s]. */
  readonly first: number[][];
  /** The matching operation of each send and receive (-1: none, or a copy). */
  readonly partner: Int32Array;
}

function flatten(world: WorldSchedule): Flat {
  let n = 0;
  for (const rs of world.ranks) for (const st of rs.steps) n += st.ops.length;
  const flat: Flat = {
    ops: new Array<ScheduleOp>(n),
    rank: new Int32Array(n),
    step: new Int32Array(n),
    index: new Int32Array(n),
    first: [],
    partner: new Int32Array(n).fill(-1),
  };
  let g = 0;
  world.ranks.forEach((rs, r) => {
    const first: number[] = [];
    rs.steps.forEach((st, s) => {
      first.push(g);
      st.ops.forEach((op, j) => {
        flat.ops[g] = op;
        flat.rank[g] = r;
        flat.step[g] = s;
        flat.index[g] = j;
        g++;
      });
    });
    flat.first.push(first);
  });
  return flat;
}

/**
 * Pairs sends and receives per (source, dest, tag) in program order. The channels are numbered
 * in order of first appearance (a number key per (source, dest, tag) while p²·tags stays an exact
 * integer), their operations chained in typed arrays: no string or array per operation.
 */
function matchOps(world: WorldSchedule, flat: Flat, problems: ScheduleProblem[]): void {
  const p = world.ranks.length;
  const n = flat.ops.length;
  const tagIndex = new Map<number, number>();
  for (let g = 0; g < n; g++) {
    const op = flat.ops[g];
    if ((op.kind === 'send' || op.kind === 'recv') && !tagIndex.has(op.tag)) tagIndex.set(op.tag, tagIndex.size);
  }
  const tags = Math.max(1, tagIndex.size);
  const exact = p * p * tags <= Number.MAX_SAFE_INTEGER;
  const ids = new Map<number | string, number>();
  const head = [new Int32Array(n), new Int32Array(n)];
  const tail = [new Int32Array(n), new Int32Array(n)];
  const count = [new Int32Array(n), new Int32Array(n)];
  const next = new Int32Array(n).fill(-1);
  // side 0: sends, 1: receives
  const add = (src: number, dst: number, tag: number, side: number, g: number): void => {
    const key = exact ? (src * p + dst) * tags + (tagIndex.get(tag) as number) : `${src} ${dst} ${tag}`;
    let c = ids.get(key);
    if (c === undefined) {
      c = ids.size;
      ids.set(key, c);
      head[0][c] = head[1][c] = tail[0][c] = tail[1][c] = -1;
    }
    if (tail[side][c] === -1) head[side][c] = g;
    else next[tail[side][c]] = g;
    tail[side][c] = g;
    count[side][c]++;
  };
  for (let g = 0; g < n; g++) {
    const op = flat.ops[g];
    if (op.kind === 'send') add(flat.rank[g], op.peer, op.tag, 0, g);
    else if (op.kind === 'recv') add(op.peer, flat.rank[g], op.tag, 1, g);
  }
  const at = (g: number): string => where(flat.rank[g], flat.step[g], flat.index[g]);
  for (let c = 0; c < ids.size; c++) {
    let s = head[0][c];
    let r = head[1][c];
    while (s !== -1 && r !== -1) {
      flat.partner[s] = r;
      flat.partner[r] = s;
      const sb = spanBytes((flat.ops[s] as { data: Span }).data);
      const rb = spanBytes((flat.ops[r] as { data: Span }).data);
      if (sb !== rb) {
        problems.push({
          kind: 'length',
          rank: flat.rank[r],
          step: flat.step[r],
          op: flat.index[r],
          message: `${at(r)}: ${opText(flat.ops[r])} receives ${rb} B, but its send (${at(s)}, ${opText(flat.ops[s])}) has ${sb} B`,
        });
      }
      s = next[s];
      r = next[r];
    }
    // the unpaired rest of either side (n sends or receives of the one rank with the other)
    const unmatched = (kind: 'unmatched-send' | 'unmatched-recv', first: number, mine: number, theirs: number): void => {
      const [mineName, theirsName, dir] = kind === 'unmatched-send' ? ['send', 'receive', 'from'] : ['receive', 'send', 'to'];
      for (let g = first; g !== -1; g = next[g]) {
        const op = flat.ops[g] as { peer: number; tag: number };
        const message =
          `${at(g)}: ${opText(flat.ops[g])} has no matching ${theirsName} (${mine} ${mineName}s, ${theirs} ${theirsName}` +
          `${theirs === 1 ? '' : 's'} of rank ${op.peer} ${dir} rank ${flat.rank[g]} with tag ${op.tag})`;
        problems.push({ kind, rank: flat.rank[g], step: flat.step[g], op: flat.index[g], message });
      }
    };
    unmatched('unmatched-send', s, count[0][c], count[1][c]);
    unmatched('unmatched-recv', r, count[1][c], count[0][c]);
  }
}

/**
 * The abstract run with rendezvous semantics to its fixed point; reports every rank that has
 * not finished then.
 */
function runAbstract(world: WorldSchedule, flat: Flat, problems: ScheduleProblem[]): void {
  const p = world.ranks.length;
  const n = flat.ops.length;
  const posted = new Uint8Array(n);
  const completed = new Uint8Array(n);
  // per rank: current step, next op to post, posted-but-incomplete ops, completed ops of the step
  const step = new Int32Array(p);
  const next = new Int32Array(p);
  const outstanding = new Int32Array(p);
  const done = new Int32Array(p);
  const queued = new Uint8Array(p);
  const work: number[] = [];
  const enqueue = (r: number): void => {
    if (queued[r] === 0) {
      queued[r] = 1;
      work.push(r);
    }
  };
  // a step with streams: per stream the next op (step-relative), its end and its outstanding ops
  const streamState = new Map<number, { next: Int32Array; end: Int32Array; running: Int32Array }>();
  const streamAt = new Int32Array(n);
  const complete = (g: number): void => {
    completed[g] = 1;
    const r = flat.rank[g];
    outstanding[r]--;
    const ss = streamState.get(r);
    if (ss !== undefined) ss.running[streamAt[g]]--;
    done[r]++;
    enqueue(r);
  };
  /** Posts operation g of rank r; completes it (and its partner) when it can. */
  const post = (g: number): void => {
    posted[g] = 1;
    outstanding[flat.rank[g]]++;
    const kind = flat.ops[g].kind;
    if (kind === 'copy' || kind === 'combine') complete(g);
    else {
      const q = flat.partner[g];
      if (q >= 0 && posted[q] === 1) {
        complete(g);
        complete(q);
      }
    }
  };
  for (let r = 0; r < p; r++) enqueue(r);
  // `work` grows while it is walked (at most p + one entry per completion)
  for (let w = 0; w < work.length; w++) {
    const r = work[w];
    queued[r] = 0;
    const steps = world.ranks[r].steps;
    while (step[r] < steps.length) {
      const st = steps[step[r]];
      const base = flat.first[r][step[r]];
      if (st.streams === undefined) {
        while (next[r] < st.ops.length && outstanding[r] < st.window) post(base + next[r]++);
      } else {
        let ss = streamState.get(r);
        if (ss === undefined) {
          const m = st.streams.length;
          ss = { next: new Int32Array(m), end: new Int32Array(m), running: new Int32Array(m) };
          for (let k = 0, at = 0; k < m; k++) {
            ss.next[k] = at;
            for (let c = 0; c < st.streams[k]; c++) streamAt[base + at + c] = k;
            at += st.streams[k];
            ss.end[k] = at;
          }
          streamState.set(r, ss);
        }
        // until no stream can post: a completion (a local op, or a partner posted) may free another
        for (let progress = true; progress; ) {
          progress = false;
          for (let k = 0; k < ss.next.length; k++) {
            while (ss.next[k] < ss.end[k] && ss.running[k] < st.window) {
              const d = st.after === undefined ? -1 : st.after[ss.next[k]];
              if (d >= 0 && completed[base + d] === 0) break;
              ss.running[k]++;
              post(base + ss.next[k]++);
              progress = true;
            }
          }
        }
      }
      if (done[r] < st.ops.length) break;
      streamState.delete(r);
      step[r]++;
      next[r] = 0;
      outstanding[r] = 0;
      done[r] = 0;
    }
  }

  const finished = (r: number): boolean => step[r] >= world.ranks[r].steps.length;
  /** The posted, incomplete operations of blocked rank r's current step, in order. */
  const waits = (r: number): number[] => {
    const out: number[] = [];
    const base = flat.first[r][step[r]];
    const count = world.ranks[r].steps[step[r]].ops.length;
    for (let j = 0; j < count; j++) if (posted[base + j] === 1 && completed[base + j] === 0) out.push(base + j);
    return out;
  };
  const waitText = (g: number): string => `rank ${flat.rank[g]} step ${flat.step[g]} waits on op ${flat.index[g]} (${opText(flat.ops[g])})`;
  // each blocked rank's pending operations, listed once (O(its step) per blocked rank)
  const pendingOf = new Map<number, number[]>();
  for (let r = 0; r < p; r++) if (!finished(r)) pendingOf.set(r, waits(r));
  for (const [r, pending] of pendingOf) {
    const g = pending[0];
    const q = flat.partner[g];
    let why: string;
    if (q < 0) why = `, which no ${flat.ops[g].kind === 'send' ? 'receive' : 'send'} matches`;
    else {
      const rq = flat.rank[q];
      const theirs = pendingOf.get(rq);
      const after = theirs === undefined ? '' : `, while ${waitText(theirs[0])}`;
      if (flat.step[q] > step[rq]) why = `, which rank ${rq} posts only in step ${flat.step[q]} (op ${flat.index[q]})${after}`;
      else {
        const sq = world.ranks[rq].steps[flat.step[q]];
        const w = sq.window;
        const rule = sq.streams === undefined ? `(window ${w})` : `of its stream (window ${w} per stream), and its dependency, if any, has completed`;
        why = `, which rank ${rq} posts as op ${flat.index[q]} of its step ${flat.step[q]} only once fewer than ${w} earlier ops are incomplete ${rule}${after}`;
      }
    }
    const more = pending.length > 1 ? ` (and ${pending.length - 1} more posted op${pending.length > 2 ? 's' : ''})` : '';
    problems.push({ kind: 'deadlock', rank: r, step: step[r], op: flat.index[g], message: `deadlock: ${waitText(g)}${why}${more}` });
  }
}
