/**
 * One gatherv or scatterv on the simulator under a platform's per-pair model (src/workloads/platforms.ts):
 * planned with `algorithm`, clocks synchronised, one start() timed (the slowest rank), every byte
 * checked. Shared by npm run bench:hetero and test/model-trees.test.ts.
 */
import { gathervInit, scattervInit } from '../collectives/index.js';
import type { PersistentCollective, VAlgorithm } from '../collectives/types.js';
import type { Communicator } from '../comm/communicator.js';
import { runSim } from '../transports/sim/index.js';
import { blockOf, firstMismatch, fullBuffer } from '../run/data.js';
import { VIRTUAL_TIMER } from '../run/rank.js';
import type { Platform } from '../workloads/platforms.js';
import { maxOf } from '../util/extremes.js';

/** One run on the simulator: the data phase's virtual time (slowest rank) and whether every byte arrived. */
export async function runTreeOnSim(op: 'gatherv' | 'scatterv', algorithm: VAlgorithm, pl: Platform, root: number): Promise<{ time: number; ok: boolean }> {
  const { p, sizes: counts, model } = pl;
  const res = await runSim(
    p,
    async (comm: Communicator) => {
      const me = comm.rank;
      const mine = blockOf(me, counts[me], 1);
      const full = me === root ? fullBuffer(counts, 1) : undefined;
      let out: Uint8Array;
      let plan: PersistentCollective;
      if (op === 'gatherv') {
        out = new Uint8Array(full?.length ?? 0);
        plan = await gathervInit(comm, full !== undefined ? { root, send: mine, recv: out, counts } : { root, send: mine }, { algorithm, model });
      } else {
        out = new Uint8Array(counts[me]);
        plan = await scattervInit(comm, full !== undefined ? { root, recv: out, send: full, counts } : { root, recv: out }, { algorithm, model });
      }
      await VIRTUAL_TIMER.sync(comm);
      const t0 = VIRTUAL_TIMER.now(comm);
      await plan.start();
      const time = VIRTUAL_TIMER.now(comm) - t0;
      const want = op === 'scatterv' ? mine : full;
      const ok = want === undefined || firstMismatch(out, want, 'buffer') === undefined;
      return { time, ok };
    },
    { model },
  );
  return { time: maxOf(res.results, (r) => r.time), ok: res.results.every((r) => r.ok) };
}
