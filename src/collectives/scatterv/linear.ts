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
 */
import { InvalidArgumentError } from '../../errors.js';
import type { Request } from '../../comm/request.js';
import { V_TAGS } from '../defaults.js';
import { countMismatch } from '../gatherv/linear.js';
import { inOrder } from '../../comm/request.js';
import { selfCopy } from '../ports.js';
import { blockView, rootLayout } from '../placement.js';
import { nextDataTag, persistentPlan } from '../node-schedule.js';
import type { PersistentCollective } from '../types.js';
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';

export const LINEAR_SCATTERV: ScattervVariant = {
  name: 'linear',
  description: 'the root sends every block directly, all sends posted at once in rank order (Open MPI, MPICH)',
  init(input: ScattervPlanInput): Promise<PersistentCollective> {
    const { comm, root, unitBytes: u } = input;
    const tag = nextDataTag(comm, V_TAGS.dataFirst);
    const p = comm.size;
    const info = { algorithm: 'linear' as const, constructionRounds: 0, height: p > 1 ? 1 : 0 };
    const copyAll = input.model.copyAll;
    if (comm.rank !== root) {
      // Lemma 4: through a communication buffer, copied out (γ·m_i) after the receive
      const into = copyAll ? new Uint8Array(input.recv.length) : input.recv;
      const run = async (): Promise<void> => {
        let bytes: number;
        try {
          bytes = (await comm.recv(root, tag, into)).bytes;
        } catch (e) {
          throw countMismatch(comm, 'count', root, e);
        }
        if (bytes !== input.recv.length) {
          throw new InvalidArgumentError('count', `rank ${comm.rank} expects ${input.count} elements, the root sent ${bytes / u}`, {
            rank: comm.rank,
          });
        }
        if (copyAll) comm.copy(input.recv, into);
      };
      return Promise.resolve(persistentPlan(comm, info, run));
    }
    const layout = rootLayout(input);
    const send = input.send as Uint8Array;
    const views = Array.from({ length: p }, (_, i) => blockView(send, layout, i));
    const copyOwn = (): void => {
      if (!input.inPlace) comm.copy(input.recv, views[root]);
    };
    const reversed: number[] = [];
    for (let i = p - 1; i >= 0; i--) if (i !== root) reversed.push(i);
    const ports = input.model.ports;
    // k ports: the gather sequence reversed (rank order backwards, then the copy) with at most
    // k outstanding, the copy on a port as a message to itself (collectives/ports.ts).
    const sequence = input.inPlace ? reversed : [...reversed, -1];
    const step = (i: number): PromiseLike<void> => (i < 0 ? selfCopy(comm, tag, input.recv, views[root]) : comm.isend(i, tag, views[i]));
    const run = async (): Promise<void> => {
      if (ports > 1) return inOrder(sequence, ports, step);
      if (copyAll) {
        await inOrder(reversed, ports, (i) => comm.isend(i, tag, views[i]));
        copyOwn();
        return;
      }
      copyOwn();
      const ops: Request<void>[] = [];
      for (let i = 0; i < p; i++) if (i !== root) ops.push(comm.isend(i, tag, views[i]));
      await comm.waitAll(ops);
    };
    return Promise.resolve(persistentPlan(comm, info, run));
  },
};
