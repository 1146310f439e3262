/**
 * The simulator's wall time per persistent gatherv data phase, the variant's own `start()`
 * against its compiled schedule run by the portable executor (`bindSchedule(…).run()`), on
 * the same simulation; the virtual times must be equal. The baseline for replaying schedules
 * inside the simulator's engine.
 *
 *   npx tsx tools/schedule-bench.ts [p = 8000] [algorithm = binomial] [reps = 5]
 */
import { gathervInit, type VAlgorithm } from '../src/collectives/index.js';
import { compileVSchedule } from '../src/collectives/v-schedule.js';
import { bindSchedule } from '../src/schedule/run.js';
import { runSim } from '../src/transports/sim/index.js';
import { linearModel } from '../src/model/cost-model.js';
import { blockSizes } from '../src/workloads/distributions.js';
const p = Number(process.argv[2] ?? 8000);
const alg = process.argv[3] ?? 'binomial';
const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
const counts = blockSizes('random', { p, b: 10, rho: 5, seed: 1 });
const world = compileVSchedule('gatherv', alg, counts, { root: 0, model });
const reps = Number(process.argv[4] ?? 5);
const res = await runSim(p, async (comm) => {
  const me = comm.rank;
  const send = new Uint8Array(counts[me]);
  const recv = me === 0 ? new Uint8Array(counts.reduce((a, b) => a + b, 0)) : undefined;
  const plan = await gathervInit(comm, me === 0 ? { root: 0, send, recv, counts } : { root: 0, send }, { algorithm: alg as VAlgorithm, model });
  const rs = world.ranks[me];
  const bufs = rs.buffers.map((b) => new Uint8Array(b.bytes));
  const bound = bindSchedule(comm, rs, bufs);
  const c = comm.clock;
  if (c === undefined) throw new Error('the simulator has a clock');
  const t = { plan: 0, sched: 0, vplan: 0, vsched: 0 };
  for (let k = 0; k < reps; k++) {
    await c.sync(); let w = performance.now(); let v = c.now(); await plan.start(); t.vplan = c.now() - v; await c.sync(); t.plan += performance.now() - w;
    w = performance.now(); v = c.now(); await bound.run(); t.vsched = c.now() - v; await c.sync(); t.sched += performance.now() - w;
  }
  return t;
}, { model });
const r0 = res.results[0];
console.log(`p=${p} ${alg}: wall per start: plan ${(r0.plan / reps).toFixed(1)} ms, schedule ${(r0.sched / reps).toFixed(1)} ms; virtual ${r0.vplan} vs ${r0.vsched}; messages ${res.messages}`);
