/**
 * Linear gatherv: what Open MPI and MPICH ship (Traff18 §1, Traff17 §5.1 "Linear"). The
 * root copies its own block, then posts one receive per rank, in rank order, straight into
 * that rank's place in recv, and waits for all; every other rank sends its block to the
 * root. No planning, no construction rounds.
 *
 * Under model.copyAll (Traff18 Lemma 4: every processor copies its block into a
 * communication buffer before it communicates) every other rank first copies its block
 * (γ·m_i) and sends the copy, and the root receives in rank order with at most model.ports
 * receives outstanding, as the evaluator runs the star (`linearTree`): with ranks ready at
 * different times, receives posted all at once would be served in arrival order instead.
 *
 * Cost (one-ported): Σ_{i≠r, m_i>0}(α + β·m_i) + γ·m_r at the root, i.e. (p − 1)α + βΣ_{i≠r}m_i
 * when no block is empty, the start-up term linear in p; under copyAll
 * t = γ·m_r, then t ← max(t, γ·m_i) + α + β·m_i for i ≠ r in rank order. Every rank sends, even an empty
 * block (a 0-byte message costs nothing on the simulator), so the root sees every rank's
 * count: a message of another size than counts[i] is an InvalidArgumentError('counts[i]')
 * on the root.
 *
 * The data phase is a compiled schedule (collectives/compiled-plan.ts): a non-root rank one
 * step (its send; under copyAll the copy first), the root its copy and then one step of
 * every receive (window p − 1; under copyAll window 1, in rank order); with k > 1 ports one
 * step of window k, the copy first as a message to itself.
 */
import type { Communicator } from '../../comm/communicator.js';
import { CommunicationError, DeadlockError, InvalidArgumentError } from '../../errors.js';
import { compiledPlan, describeRank } from '../compiled-plan.js';
import { V_TAGS } from '../defaults.js';
import { nextDataTag } from '../node-schedule.js';
import { linearLeaf, linearRoot, recv, Steps, type RankSchedule, type VRankDescription } from '../schedule-builder.js';
import type { ScheduleOp } from '../../comm/schedule.js';
import type { PersistentCollective } from '../types.js';
import type { GathervPlanInput, GathervVariant } from '../variant.js';

/**
 * A receive of rank `from`'s block failed or brought the wrong size: the counts disagree.
 * A CommunicationError naming this rank (or no rank) is the transport's truncation of a
 * longer message; errors naming another rank (a failed peer) and deadlocks pass through.
 */
export function countMismatch(comm: Communicator, field: string, from: number, e: unknown): unknown {
  if (e instanceof CommunicationError && !(e instanceof DeadlockError) && (e.rank === undefined || e.rank === comm.rank)) {
    return new InvalidArgumentError(field, `rank ${from} sent more elements than this rank expects (${e.message})`, {
      rank: comm.rank,
      cause: e,
    });
  }
  return e;
}

/** This rank's schedule of linear gatherv (see the module comment). */
export function linearGather(d: VRankDescription, tag: number): RankSchedule {
  if (d.rank !== d.root) return linearLeaf('gatherv', d, tag);
  const me = d.rank;
  const { b, view, own } = linearRoot('gatherv', d, tag);
  const steps = new Steps();
  const receives: ScheduleOp[] = [];
  for (let i = 0; i < d.p; i++) if (i !== me) receives.push(recv(i, tag, view(i)));
  if (d.ports > 1) {
    const ops: ScheduleOp[] = [];
    own(ops);
    ops.push(...receives);
    steps.add(ops, d.ports);
  } else {
    const first: ScheduleOp[] = [];
    own(first);
    steps.add(first, 1);
    steps.add(receives, d.copyAll ? 1 : receives.length);
  }
  return { rank: me, buffers: b.list, steps: steps.list };
}

export const LINEAR_GATHERV: GathervVariant = {
  name: 'linear',
  description: 'the root receives every block directly, all receives posted at once in rank order (Open MPI, MPICH)',
  init(input: GathervPlanInput): Promise<PersistentCollective> {
    const { comm, root, unitBytes: u } = input;
    const tag = nextDataTag(comm, V_TAGS.dataFirst);
    const info = { algorithm: 'linear' as const, constructionRounds: 0, height: comm.size > 1 ? 1 : 0 };
    const counts = input.counts;
    const recvError = (peer: number, _tag: number, expected: number, got: number | undefined, cause: unknown): Error => {
      const field = `counts[${peer}]`;
      if (got === undefined) return countMismatch(comm, field, peer, cause) as Error;
      return new InvalidArgumentError(field, `rank ${peer} sent ${got / u} elements, counts[${peer}] is ${counts?.[peer] ?? expected / u}`, {
        rank: comm.rank,
      });
    };
    return Promise.resolve(compiledPlan(input, linearGather(describeRank(input), tag), info, comm.rank === root ? { recvError } : {}));
  },
};
