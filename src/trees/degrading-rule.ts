/**
 * The decisions of the degrading adaptive tree (degrading.ts; Traff18 §3's "graceful
 * degradation", left undone there), on constant-size range summaries: the one place both the
 * central builder (trees/degrading.ts) and the distributed construction
 * (collectives/adaptive/construct.ts with the degrading rule) take them from, so the two build
 * the same tree bit for bit.
 *
 * A range's summary: its gather root g, its data S, g's completion time C, κ (the non-empty
 * ranges g received), g's own block m and, for the range of the MPI root r only, B_r — the
 * time the root's port is busy with the pieces it takes so far (γ·m_r and α + β·S per piece).
 * - Free join (neither range holds r): the receiver as in Traff18's exact rule (the join that
 *   completes first, ties to the upper range), the ordered copy convention on the first
 *   receive; an empty sender joins nobody (it hangs under r and sends no message).
 * - Join of r's range with a partner P: deadline D = max(C_r, B_r); if S_P > 0 and P is late,
 *   C_P − D > α_P·κ_P (r would wait for P longer than the κ_P extra start-ups opening P costs),
 *   P *opens*; else r receives P whole.
 * - Opening g at deadline t: g sends only its own block to r; its children, in the order of
 *   their C (then rank), get deadlines t += α·(κ_c + [m_c > 0]) + β·S_c for a child that opens
 *   (the same test), else t = max(t, C_c) + α + β·S_c (the child's whole range to r).
 * α_v, β_v are the model's start-up and per-unit cost of a message from v to r: the linear
 * model's α and β, else read off model.comm(v, r, ·) (per-pair and hierarchical models).
 * Every function is O(1) but the opening pass, O(κ log κ).
 */
import type { CostModel } from '../model/cost-model.js';

/** The constant-size summary of a range (module comment). */
export interface DegradingRecord {
  readonly gatherRoot: number;
  /** S: the range's data (elements, model units). */
  readonly total: number;
  /** C: completion time of the range's tree at its gather root. */
  readonly time: number;
  /** κ: non-empty ranges the gather root received. */
  readonly kids: number;
  /** The gather root's own block. */
  readonly rootBlock: number;
  /** B_r for the MPI root's range (0 for the others). */
  readonly busy: number;
}

/** What a join decides: who receives, the joined summary, and what the sender's gather root does. */
export interface DegradingJoin {
  readonly rightReceives: boolean;
  readonly joined: DegradingRecord;
  readonly verdict: Verdict;
  /** The opening deadline D (verdict OPEN), else 0. */
  readonly deadline: number;
}

/**
 * What happens to the sending range's gather root: FREE — it sends its range to the receiver
 * (a free join; whether the receiver keeps it is decided later); EMPTY — nothing to send, it
 * hangs under the root; WHOLE — its range goes to the root as one piece; OPEN — it opens.
 */
export const VERDICT = { FREE: 0, EMPTY: 1, WHOLE: 2, OPEN: 3 } as const;
export type Verdict = (typeof VERDICT)[keyof typeof VERDICT];

/** The model's costs toward the root, as the rule reads them. */
export interface DegradingCosts {
  readonly model: CostModel;
  readonly root: number;
  /** α_v: start-up of a message from v to the root. */
  startup(v: number): number;
  /** β_v: per-unit cost of a message from v to the root. */
  perUnit(v: number): number;
}

/** The costs of `model` toward `root`. */
export function degradingCosts(model: CostModel, root: number): DegradingCosts {
  const lin = model.linear;
  if (lin !== undefined) {
    const { alpha, beta } = lin;
    return { model, root, startup: () => alpha, perUnit: () => beta };
  }
  const perUnit = (v: number): number => model.comm(v, root, 2) - model.comm(v, root, 1);
  return { model, root, startup: (v) => model.comm(v, root, 1) - perUnit(v), perUnit };
}

/** The summary of rank v alone. */
export function degradingLeaf(v: number, count: number, costs: DegradingCosts): DegradingRecord {
  return { gatherRoot: v, total: count, time: 0, kids: 0, rootBlock: count, busy: v === costs.root ? costs.model.copy(v, count) : 0 };
}

/** Completion time at `recv`'s gather root after it receives `send`'s range (the ordered copy convention). */
export function degradingJoinTime(recv: DegradingRecord, send: DegradingRecord, model: CostModel): number {
  const r = recv.gatherRoot;
  const s = send.gatherRoot;
  const dur = model.comm(s, r, send.total);
  if (recv.kids > 0) return Math.max(recv.time, send.time) + dur;
  const copy = model.copy(r, recv.rootBlock);
  // the first receive: the copy overlaps the wait when the sender lies to the right, follows it otherwise
  return s > r ? Math.max(copy, send.time) + dur : send.time + dur + copy;
}

/** True when the root would wait for g's range (done at C) past `deadline` by more than opening g costs. */
export function isLate(g: DegradingRecord, deadline: number, costs: DegradingCosts): boolean {
  return g.kids > 0 && g.time - deadline > costs.startup(g.gatherRoot) * g.kids;
}

/** The root's port time for g's pieces once g opens: κ + [m > 0] start-ups and the range's data. */
export function openCost(g: DegradingRecord, costs: DegradingCosts): number {
  const v = g.gatherRoot;
  return costs.startup(v) * (g.kids + (g.rootBlock > 0 ? 1 : 0)) + costs.perUnit(v) * g.total;
}

function withRoot(left: DegradingRecord, right: DegradingRecord, rightReceives: boolean, costs: DegradingCosts): DegradingJoin {
  const recv = rightReceives ? right : left;
  const send = rightReceives ? left : right;
  const total = left.total + right.total;
  const deadline = Math.max(recv.time, recv.busy);
  if (send.total > 0 && isLate(send, deadline, costs)) {
    const joined = { gatherRoot: recv.gatherRoot, total, time: recv.time, kids: recv.kids, rootBlock: recv.rootBlock, busy: recv.busy + openCost(send, costs) };
    return { rightReceives, joined, verdict: VERDICT.OPEN, deadline };
  }
  const joined = {
    gatherRoot: recv.gatherRoot,
    total,
    time: degradingJoinTime(recv, send, costs.model),
    kids: recv.kids + 1,
    rootBlock: recv.rootBlock,
    busy: recv.busy + costs.model.comm(send.gatherRoot, recv.gatherRoot, send.total),
  };
  return { rightReceives, joined, verdict: VERDICT.WHOLE, deadline: 0 };
}

/**
 * Joins the adjacent ranges left = [leftLo .. leftHi] and right = [leftHi + 1 .. rightHi].
 * Whoever calls it with the same summaries gets the same answer.
 */
export function degradingJoin(left: DegradingRecord, right: DegradingRecord, leftLo: number, leftHi: number, rightHi: number, costs: DegradingCosts): DegradingJoin {
  const root = costs.root;
  if (root >= leftLo && root <= leftHi) return withRoot(left, right, false, costs);
  if (root > leftHi && root <= rightHi) return withRoot(left, right, true, costs);
  const model = costs.model;
  const rightReceives = degradingJoinTime(right, left, model) <= degradingJoinTime(left, right, model);
  const recv = rightReceives ? right : left;
  const send = rightReceives ? left : right;
  if (send.total === 0) {
    const joined = { gatherRoot: recv.gatherRoot, total: recv.total, time: recv.time, kids: recv.kids, rootBlock: recv.rootBlock, busy: 0 };
    return { rightReceives, joined, verdict: VERDICT.EMPTY, deadline: 0 };
  }
  const joined = {
    gatherRoot: recv.gatherRoot,
    total: left.total + right.total,
    time: degradingJoinTime(recv, send, model),
    kids: recv.kids + 1,
    rootBlock: recv.rootBlock,
    busy: 0,
  };
  return { rightReceives, joined, verdict: VERDICT.FREE, deadline: 0 };
}

/** One child of an opening rank: the summary its range had when it joined, and what it is told. */
export interface OpenedChild {
  readonly record: DegradingRecord;
  /** True: the child opens at `deadline`; false: its whole range goes to the root. */
  readonly opens: boolean;
  readonly deadline: number;
}

/**
 * Opens g (own block `ownBlock`) at `deadline`: its children's summaries (any order) in the
 * order of their completion times (then rank), each with whether it opens and its deadline.
 */
export function openingPass(g: number, ownBlock: number, deadline: number, children: readonly DegradingRecord[], costs: DegradingCosts): OpenedChild[] {
  const sorted = children.slice().sort((a, b) => a.time - b.time || a.gatherRoot - b.gatherRoot);
  const model = costs.model;
  let t = deadline + model.comm(g, costs.root, ownBlock);
  const out: OpenedChild[] = [];
  for (const c of sorted) {
    if (isLate(c, t, costs)) {
      out.push({ record: c, opens: true, deadline: t });
      t += openCost(c, costs);
    } else {
      out.push({ record: c, opens: false, deadline: 0 });
      t = Math.max(t, c.time) + model.comm(c.gatherRoot, costs.root, c.total);
    }
  }
  return out;
}
