/**
 * Linear scatterv: what Open MPI and MPICH ship. The root posts one send per rank, in rank
 * order, straight from that rank's place in `send`, after copying its own block (the copy
 * cannot overlap the root's communication in the model), and waits for all; every other rank
 * receives its block from the root. No planning.
 *
 * Under model.copyAll (Traff18 Lemma 4) every other rank receives into a communication
 * buffer and copies its block out (γ·m_i), and the root runs the star exactly as the
 * evaluator runs a scatter (the gather sequence reversed): sends in reverse rank order with
 * at most model.ports outstanding, its own copy last.
 *
 * Cost (one-ported): Σ_{i≠r, m_i>0}(α + β·m_i) + γ·m_r at the root. Every rank receives, even
 * an empty block, so a rank whose count differs from the root's counts entry gets a
 * message of the wrong size: an InvalidArgumentError('count') on that rank.
 *
 * The data phase is a compiled schedule (collectives/compiled-plan.ts): a non-root rank one
 * step (its receive; under copyAll then the copy out), the root its copy and then one step of
 * every send (window p − 1); under copyAll the sends one at a time in reverse rank order, the
 * copy last; with k > 1 ports one step of window k, the copy last as a message to itself.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { ScheduleOp } from '../../comm/schedule.js';
import { compiledPlan, describeRank } from '../compiled-plan.js';
import { V_TAGS } from '../defaults.js';
import { countMismatch } from '../gatherv/linear.js';
import { nextDataTag } from '../node-schedule.js';
import { linearLeaf, linearRoot, send, Steps, type RankSchedule, type VRankDescription } from '../schedule-builder.js';
import type { PersistentCollective } from '../types.js';
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';

/** This rank's schedule of linear scatterv (see the module comment). */
export function linearScatter(d: VRankDescription, tag: number): RankSchedule {
  if (d.rank !== d.root) return linearLeaf('scatterv', d, tag);
  const me = d.rank;
  const { b, view, own } = linearRoot('scatterv', d, tag);
  const steps = new Steps();
  const reversed: ScheduleOp[] = [];
  for (let i = d.p - 1; i >= 0; i--) if (i !== me) reversed.push(send(i, tag, view(i)));
  if (d.ports > 1) {
    const ops = [...reversed];
    own(ops);
    steps.add(ops, d.ports);
  } else if (d.copyAll) {
    steps.add(reversed, 1);
    const last: ScheduleOp[] = [];
    own(last);
    steps.add(last, 1);
  } else {
    const first: ScheduleOp[] = [];
    own(first);
    steps.add(first, 1);
    const sends = [...reversed].reverse();
    steps.add(sends, sends.length);
  }
  return { rank: me, buffers: b.list, steps: steps.list };
}

export const LINEAR_SCATTERV: ScattervVariant = {
  name: 'linear',
  description: 'the root sends every block directly, all sends posted at once in rank order (Open MPI, MPICH)',
  init(input: ScattervPlanInput): Promise<PersistentCollective> {
    const { comm, root, unitBytes: u } = input;
    const tag = nextDataTag(comm, V_TAGS.dataFirst);
    const info = { algorithm: 'linear' as const, constructionRounds: 0, height: comm.size > 1 ? 1 : 0 };
    const recvError = (_peer: number, _tag: number, _expected: number, got: number | undefined, cause: unknown): Error => {
      if (got === undefined) return countMismatch(comm, 'count', root, cause) as Error;
      return new InvalidArgumentError('count', `rank ${comm.rank} expects ${input.count} elements, the root sent ${got / u}`, { rank: comm.rank });
    };
    return Promise.resolve(compiledPlan(input, linearScatter(describeRank(input), tag), info, comm.rank === root ? {} : { recvError }));
  },
};
