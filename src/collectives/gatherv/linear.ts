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
 */
import { inOrder } from '../../comm/request.js';
import { selfCopy } from '../ports.js';
import { CommunicationError, DeadlockError, InvalidArgumentError } from '../../errors.js';
import type { Communicator } from '../../comm/communicator.js';
import { mapRequest, type Request } from '../../comm/request.js';
import { V_TAGS } from '../defaults.js';
import { blockView, rootLayout } from '../placement.js';
import { nextDataTag, persistentPlan } from '../node-schedule.js';
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

export const LINEAR_GATHERV: GathervVariant = {
  name: 'linear',
  description: 'the root receives every block directly, all receives posted at once in rank order (Open MPI, MPICH)',
  init(input: GathervPlanInput): Promise<PersistentCollective> {
    const { comm, root, unitBytes: u } = input;
    const tag = nextDataTag(comm, V_TAGS.dataFirst);
    const p = comm.size;
    const copyAll = input.model.copyAll;
    const info = { algorithm: 'linear' as const, constructionRounds: 0, height: p > 1 ? 1 : 0 };
    if (comm.rank !== root) {
      if (!copyAll) return Promise.resolve(persistentPlan(comm, info, () => comm.send(root, tag, input.send)));
      // Lemma 4: the block goes through a communication buffer (charged γ·m_i first)
      const commBuffer = new Uint8Array(input.send.length);
      return Promise.resolve(
        persistentPlan(comm, info, () => {
          comm.copy(commBuffer, input.send);
          return comm.send(root, tag, commBuffer);
        }),
      );
    }
    const layout = rootLayout(input);
    const recv = input.recv as Uint8Array;
    const views = Array.from({ length: p }, (_, i) => blockView(recv, layout, i));
    const receive = (i: number): Request<void> => {
      const field = `counts[${i}]`;
      return mapRequest(
        comm.irecv(i, tag, views[i]),
        (st) => {
          if (st.bytes !== views[i].length) {
            throw new InvalidArgumentError(field, `rank ${i} sent ${st.bytes / u} elements, counts[${i}] is ${layout.counts[i]}`, {
              rank: comm.rank,
            });
          }
        },
        (e: unknown) => countMismatch(comm, field, i, e),
      );
    };
    const others = Array.from({ length: p }, (_, i) => i).filter((i) => i !== root);
    const ports = input.model.ports;
    // k ports: the tree's sequence (copy first, then rank order) with at most k outstanding,
    // the copy on a port as a message to itself (collectives/ports.ts).
    const sequence = input.inPlace ? others : [-1, ...others];
    const step = (i: number): PromiseLike<void> => (i < 0 ? selfCopy(comm, tag, views[root], input.send) : receive(i));
    const run = async (): Promise<void> => {
      if (ports > 1) return inOrder(sequence, ports, step);
      if (!input.inPlace) comm.copy(views[root], input.send);
      if (copyAll) await inOrder(others, ports, receive);
      else await comm.waitAll(others.map(receive));
    };
    return Promise.resolve(persistentPlan(comm, info, run));
  },
};
