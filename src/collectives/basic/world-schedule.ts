/**
 * Every rank's schedule of one building block (bcast binomial, gather, scatter, reduce,
 * allreduce, exscan, barrier; schedule.ts and reduce-schedule.ts) as a WorldSchedule, for
 * printing and the static checker (`vcoll schedule --op reduce …`). The tags are the blocks'
 * own (BASIC_TAG) in the first call slot, as a call's schedule carries them before its shift.
 */
import type { WorldSchedule } from '../../comm/schedule.js';
import { BASIC_TAG } from '../../comm/tags.js';
import { InvalidArgumentError } from '../../errors.js';
import { allreduceSchedule, exscanSchedule, reduceSchedule } from './reduce-schedule.js';
import { barrierSchedule, bcastSchedule, gatherSchedule, scatterSchedule } from './schedule.js';

export const BASIC_SCHEDULE_OPS = ['bcast', 'gather', 'scatter', 'reduce', 'allreduce', 'exscan', 'barrier'] as const;
export type BasicScheduleOp = (typeof BASIC_SCHEDULE_OPS)[number];

/**
 * The schedules of `op` over p ranks with `bytes` bytes per rank (bcast: the buffer; gather,
 * scatter: a block; the reductions: the vector; the barrier: none) and `root` (bcast, gather,
 * scatter, reduce).
 */
export function compileBasicSchedule(op: BasicScheduleOp, p: number, bytes: number, root = 0): WorldSchedule {
  if (!Number.isSafeInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be an integer ≥ 1, got ${p}`);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new InvalidArgumentError('bytes', `must be an integer ≥ 0, got ${bytes}`);
  if (!Number.isSafeInteger(root) || root < 0 || root >= p) throw new InvalidArgumentError('root', `must be in [0, ${p}), got ${root}`);
  if (op === 'exscan' && p < 2) throw new InvalidArgumentError('p', 'exscan over one rank moves nothing: p ≥ 2');
  const ranks = Array.from({ length: p }, (_, r) => {
    switch (op) {
      case 'bcast':
        return bcastSchedule(p, root, r, bytes, BASIC_TAG.bcast);
      case 'gather':
        return gatherSchedule(p, root, r, bytes, BASIC_TAG.gather);
      case 'scatter':
        return scatterSchedule(p, root, r, bytes, BASIC_TAG.scatter);
      case 'reduce':
        return reduceSchedule(p, root, r, bytes, BASIC_TAG.reduce);
      case 'allreduce':
        return allreduceSchedule(p, r, bytes, BASIC_TAG.allreduce);
      case 'exscan':
        return exscanSchedule(p, r, bytes, BASIC_TAG.exscan, r > 0);
      case 'barrier':
        return barrierSchedule(p, r, BASIC_TAG.barrier);
    }
  });
  const algorithm = { bcast: 'binomial', gather: 'binomial', scatter: 'binomial', reduce: 'binomial', allreduce: 'recursive doubling', exscan: 'recursive doubling', barrier: 'dissemination' }[op];
  return { label: `${op} ${algorithm}`, ranks };
}
