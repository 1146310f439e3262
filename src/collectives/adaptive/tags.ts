/**
 * Tags of the adaptive gatherv/scatterv: COLLECTIVE_TAG + 0x200 … COLLECTIVE_TAG + 0x2ff (the
 * 'adaptive' row of the tag table, comm/tags.ts).
 *
 * Every adaptive plan a rank creates on a communicator gets the next sequence number (all
 * ranks create their plans in the same order, as MPI requires of collective calls), and
 * plan s uses the four tags 0x200 + 4·(s mod 64) + {0: exchange between fixed roots,
 * 1: fixed root → gather root notification, 2: data, 3: the degrading rule's verdicts}. So the construction of one plan and
 * the data of another never match each other, even when they run at the same time (an
 * overlapped construction still running while the next collective starts), and
 * construction messages are told apart from data messages by their tag (the tests count
 * them in the simulator's trace).
 */
import type { Communicator } from '../../comm/communicator.js';
import { firstTag, lastTag, tagRange } from '../../comm/tags.js';
import { unslottedTag } from '../call-scope.js';
import { commState } from '../../comm/comm-state.js';

const PLAN = tagRange('adaptive').plan;
export const ADAPTIVE_TAG_FIRST = firstTag('adaptive');
export const ADAPTIVE_TAG_LAST = lastTag('adaptive');
/** Tags per plan (4) and plan blocks in the range (64). */
const STRIDE = PLAN.stride;
const SLOTS = (ADAPTIVE_TAG_LAST - ADAPTIVE_TAG_FIRST + 1) / STRIDE;

export interface AdaptiveTags {
  readonly exchange: number;
  readonly notify: number;
  readonly data: number;
  /** The degrading rule: a gather root's verdict to its children (adaptive/verdicts.ts). */
  readonly verdict: number;
}

export type AdaptiveMessageKind = 'exchange' | 'notify' | 'data' | 'verdict';


/** The tags of the next adaptive plan on `comm` (advances this rank's sequence). */
export function nextPlanTags(comm: Communicator): AdaptiveTags {
  const s = commState(comm).adaptivePlans++;
  const base = ADAPTIVE_TAG_FIRST + STRIDE * (s % SLOTS);
  return { exchange: base + PLAN.kinds.exchange, notify: base + PLAN.kinds.notify, data: base + PLAN.kinds.data, verdict: base + PLAN.kinds.verdict };
}

/** What an adaptive tag is used for, in any call slot (undefined for tags outside the adaptive range). */
export function adaptiveTagKind(travelled: number): AdaptiveMessageKind | undefined {
  const tag = unslottedTag(travelled); // in whichever call slot it travelled (call-scope.ts)
  if (tag < ADAPTIVE_TAG_FIRST || tag > ADAPTIVE_TAG_LAST) return undefined;
  const k = (tag - ADAPTIVE_TAG_FIRST) % STRIDE;
  return k === PLAN.kinds.exchange ? 'exchange' : k === PLAN.kinds.notify ? 'notify' : k === PLAN.kinds.data ? 'data' : k === PLAN.kinds.verdict ? 'verdict' : undefined;
}
