/**
 * The last step of the degrading construction (trees/degrading-rule.ts; Traff18 §3's graceful
 * degradation): after the construction's rounds (construct.ts with the degrading rule) every
 * rank but the root learns whether it keeps its construction parent, and passes the answer on
 * to its own children — the top-down pass that opens late subtrees.
 *
 * A rank's verdict comes from the construction when its range joined the root's range (its
 * 'send' event: WHOLE, or OPEN at deadline D) or had nothing to send (EMPTY); otherwise
 * (FREE) from its construction parent, one 16-byte message [verdict, deadline]:
 * - FREE (confirmed) or WHOLE: it keeps its children and tells each "confirmed"; WHOLE sends
 *   its range to the root instead of the parent;
 * - OPEN at t: it sends only its own block to the root and hands its children their verdicts
 *   in the order of their completion times (openingPass: OPEN at their deadline, or WHOLE),
 *   from the summaries the construction's notifications carried;
 * - EMPTY: nothing to send (no children with data).
 * Cost: one constant-size message per rank with a construction parent, sent along the
 * construction's edges: a chain of at most ⌈log₂p⌉ dependent messages after the last round.
 * The root takes no part: it builds the same tree from its counts (trees/degrading.ts).
 */
import type { Communicator } from '../../comm/communicator.js';
import { CommunicationError } from '../../errors.js';
import { openingPass, VERDICT, type DegradingCosts, type DegradingRecord } from '../../trees/degrading-rule.js';
import type { AdaptiveRole, RoleEvent } from './construct.js';

/** Bytes of a verdict: the verdict and the opening deadline, as float64. */
export const VERDICT_BYTES = 16;

function verdictMessage(verdict: number, deadline: number): Uint8Array {
  return new Uint8Array(Float64Array.of(verdict, deadline).buffer);
}

/**
 * This rank's role in the degrading tree (module comment), from its role in the construction.
 * Every rank but the root calls it (the root's role comes from its counts); `tag` is the
 * plan's verdict tag.
 */
export async function settleDegradingRole(comm: Communicator, role: AdaptiveRole, costs: DegradingCosts, tag: number): Promise<AdaptiveRole> {
  const v = role.rank;
  const parent = role.parent;
  if (parent === undefined) return role;
  let verdict = parent.verdict ?? VERDICT.FREE;
  let deadline = parent.deadline ?? 0;
  if (verdict === VERDICT.FREE) {
    const got = new Uint8Array(VERDICT_BYTES);
    const st = await comm.recv(parent.peer, tag, got);
    if (st.bytes !== VERDICT_BYTES) {
      throw new CommunicationError(`rank ${v}: degrading verdict of ${st.bytes} bytes from rank ${parent.peer}, ${VERDICT_BYTES} expected`, { rank: v });
    }
    const f = new Float64Array(got.buffer);
    verdict = f[0] as typeof verdict;
    deadline = f[1];
  }
  const kids = role.children.filter((c) => c.size > 0);
  const sends = [];
  let children: readonly RoleEvent[] = kids;
  let up: RoleEvent = parent;
  if (verdict === VERDICT.OPEN) {
    const summaries = kids.map((c) => c.summary as DegradingRecord);
    for (const c of openingPass(v, role.count, deadline, summaries, costs)) {
      sends.push(comm.isend(c.record.gatherRoot, tag, c.opens ? verdictMessage(VERDICT.OPEN, c.deadline) : verdictMessage(VERDICT.WHOLE, 0)));
    }
    children = [];
    up = { ...parent, peer: costs.root, size: role.count, lo: v, hi: v };
  } else {
    for (const c of kids) sends.push(comm.isend(c.peer, tag, verdictMessage(VERDICT.FREE, 0)));
    if (verdict !== VERDICT.FREE) up = { ...parent, peer: costs.root };
  }
  await comm.waitAll(sends);
  return { ...role, children, parent: up };
}
