/**
 * One gatherv or scatterv on the simulator under a platform's per-pair model (src/bench/platforms.ts):
 * planned with `algorithm`, clocks synchronised, one start() timed (the slowest rank), every byte
 * checked. Shared by npm run bench:hetero and test/model-trees.test.ts.
 */
import { gathervInit, scattervInit } from '../collectives/index.js';
import type { PersistentCollective, VAlgorithm } from '../collectives/types.js';
import type { Communicator } from '../comm/communicator.js';
import { runSim } from '../transports/sim/index.js';
import type { Platform } from './platforms.js';

/** One run on the simulator: the data phase's virtual time (slowest rank) and whether every byte arrived. */
export async function runTreeOnSim(op: 'gatherv' | 'scatterv', algorithm: VAlgorithm, pl: Platform, root: number): Promise<{ time: number; ok: boolean }> {
  const { p, sizes: counts, model } = pl;
  const displs: number[] = [];
  let at = 0;
  for (const c of counts) {
    displs.push(at);
    at += c;
  }
  const byte = (rank: number, i: number): number => (rank * 131 + i * 7 + 11) & 0xff;
  const res = await runSim(
    p,
    async (comm: Communicator) => {
      const me = comm.rank;
      const mine = Uint8Array.from({ length: counts[me] }, (_, i) => byte(me, i));
      let out: Uint8Array;
      let plan: PersistentCollective;
      if (op === 'gatherv') {
        out = new Uint8Array(me === root ? at : 0);
        plan = await gathervInit(comm, me === root ? { root, send: mine, recv: out, counts } : { root, send: mine }, { algorithm, model });
      } else {
        out = new Uint8Array(counts[me]);
        const all = new Uint8Array(me === root ? at : 0);
        if (me === root) for (let r = 0; r < p; r++) for (let i = 0; i < counts[r]; i++) all[displs[r] + i] = byte(r, i);
        plan = await scattervInit(comm, me === root ? { root, recv: out, send: all, counts } : { root, recv: out }, { algorithm, model });
      }
      const clock = comm.clock;
      if (clock === undefined) throw new Error('the simulator communicator has no clock');
      await clock.sync();
      const t0 = clock.now();
      await plan.start();
      const time = clock.now() - t0;
      let ok = true;
      if (op === 'scatterv') {
        for (let i = 0; i < counts[me]; i++) if (out[i] !== byte(me, i)) ok = false;
      } else if (me === root) {
        for (let r = 0; r < p; r++) for (let i = 0; i < counts[r]; i++) if (out[displs[r] + i] !== byte(r, i)) ok = false;
      }
      return { time, ok };
    },
    { model },
  );
  return { time: Math.max(...res.results.map((r) => r.time)), ok: res.results.every((r) => r.ok) };
}
