/** Hierarchical gatherv (TraffRougier14 Figs. 1, 6): a block longer than the root's count is reported as `counts`, not as a raw truncation. */
import { describe, expect, it } from 'vitest';
import { hierarchicalGatherv } from '../src/collectives/hierarchical/index.js';
import type { Communicator } from '../src/comm/communicator.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { hierarchicalModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';

const p = 8;
const nodeOf = [0, 1, 0, 1, 2, 2, 0, 1];
const model = hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 1 }, inter: { alpha: 10, beta: 2 }, gamma: 0 });
const sim = (program: (comm: Communicator) => Promise<unknown>) => runSim(p, program, { model });

async function failure(run: Promise<unknown>): Promise<InvalidArgumentError> {
  try {
    await run;
  } catch (e) {
    const cause = e instanceof CommunicationError && e.cause !== undefined ? e.cause : e;
    expect(cause).toBeInstanceOf(InvalidArgumentError);
    return cause as InvalidArgumentError;
  }
  throw new Error('expected a rejection');
}

describe('hierarchical gatherv: a block longer than the root counts', () => {
  it('zero-copy and reorder name counts and the ranks, at the root, with no truncation message', async () => {
    const counts = [2, 2, 2, 2, 2, 2, 2, 2];
    for (const variant of ['zero-copy', 'reorder'] as const) {
      for (const wrong of [1, 3, 4]) {
        const e = await failure(
          sim((c) =>
            hierarchicalGatherv(c, { send: new Uint8Array(c.rank === wrong ? 5 : 2), recv: new Uint8Array(2 * p), counts: c.rank === 0 ? counts : undefined, root: 0 }, { variant }),
          ),
        );
        expect(e.field).toBe('counts');
        expect(e.rank).toBe(0);
        expect(e.message).not.toMatch(/truncat/i);
        expect(e.message).toMatch(/more than|expects/);
      }
    }
  });
});
