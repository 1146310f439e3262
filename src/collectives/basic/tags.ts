/**
 * Tags of the building-block collectives: COLLECTIVE_TAG + 0x100 … COLLECTIVE_TAG + 0x1ff
 * (gatherv/scatterv and the communicator management use other offsets). One tag per
 * collective: every collective's messages between one pair of ranks are sent and received in
 * the same order on both sides, so MPI's non-overtaking rule keeps consecutive calls apart.
 */
import { COLLECTIVE_TAG } from '../../comm/communicator.js';

export const BASIC_TAG_FIRST = COLLECTIVE_TAG + 0x100;
export const BASIC_TAG_LAST = COLLECTIVE_TAG + 0x1ff;

export const BASIC_TAG = {
  barrier: BASIC_TAG_FIRST,
  bcast: BASIC_TAG_FIRST + 1,
  reduce: BASIC_TAG_FIRST + 2,
  allreduce: BASIC_TAG_FIRST + 3,
  exscan: BASIC_TAG_FIRST + 4,
  gather: BASIC_TAG_FIRST + 5,
  scatter: BASIC_TAG_FIRST + 6,
  allgather: BASIC_TAG_FIRST + 7,
} as const;
