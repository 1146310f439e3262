/**
 * Tags of the adaptive gatherv/scatterv: COLLECTIVE_TAG + 0x200 … COLLECTIVE_TAG + 0x2ff.
 *
 * Every adaptive plan a rank creates on a communicator gets the next sequence number (all
 * ranks create their plans in the same order, as MPI requires of collective calls), and
 * plan s uses the four tags 0x200 + 4·(s mod 64) + {0: exchange between fixed roots,
 * 1: fixed root → gather root notification, 2: data}. So the construction of one plan and
 * the data of another never match each other, even when they run at the same time (an
 * overlapped construction still running while the next collective starts), and
 * construction messages are told apart from data messages by their tag (the tests count
 * them in the simulator's trace).
 */
import { COLLECTIVE_TAG, type Communicator } from '../../comm/communicator.js';
import { unslottedTag } from '../call-scope.js';

export const ADAPTIVE_TAG_FIRST = COLLECTIVE_TAG + 0x200;
export const ADAPTIVE_TAG_LAST = COLLECTIVE_TAG + 0x2ff;
const SLOTS = 64;

export interface AdaptiveTags {
  readonly exchange: number;
  readonly notify: number;
  readonly data: number;
}

export type AdaptiveMessageKind = 'exchange' | 'notify' | 'data';

const sequence = new WeakMap<Communicator, number>();

/** The tags of the next adaptive plan on `comm` (advances this rank's sequence). */
export function nextPlanTags(comm: Communicator): AdaptiveTags {
  const s = sequence.get(comm) ?? 0;
  sequence.set(comm, s + 1);
  const base = ADAPTIVE_TAG_FIRST + 4 * (s % SLOTS);
  return { exchange: base, notify: base + 1, data: base + 2 };
}

/** What an adaptive tag is used for, in any call slot (undefined for tags outside the adaptive range). */
export function adaptiveTagKind(travelled: number): AdaptiveMessageKind | undefined {
  const tag = unslottedTag(travelled); // in whichever call slot it travelled (call-scope.ts)
  if (tag < ADAPTIVE_TAG_FIRST || tag > ADAPTIVE_TAG_LAST) return undefined;
  const k = (tag - ADAPTIVE_TAG_FIRST) % 4;
  return k === 0 ? 'exchange' : k === 1 ? 'notify' : k === 2 ? 'data' : undefined;
}
