/**
 * The simulator's engine replaying one schedule without rank-program wake-ups: every rank
 * binds ONE schedule made of `reps` copies of its gatherv steps (compileVSchedule, random
 * counts, b = 10) and runs it once; prints wall and process CPU milliseconds of the timed run
 * and simulated messages per second. `warm` untimed runs first warm the JIT up.
 *
 *   npx tsx tools/sim-replay.ts [p = 8000] [algorithm = linear] [reps = 20] [warm = 0]
 *
 * (`npm run bench:schedule` measures the same engine with the rank programs, and checks the
 * virtual times against the portable executor.)
 */
import { compileVSchedule } from '../src/collectives/v-schedule.js';
import { bindSchedule } from '../src/schedule/run.js';
import { runSim } from '../src/transports/sim/index.js';
import { linearModel } from '../src/model/cost-model.js';
import { blockSizes } from '../src/workloads/distributions.js';
const p = Number(process.argv[2] ?? 8000);
const alg = process.argv[3] ?? 'linear';
const reps = Number(process.argv[4] ?? 20);
/** Untimed runs of the schedule first (JIT warm-up), default none. */
const warm = Number(process.argv[5] ?? 0);
const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
const counts = blockSizes('random', { p, b: 10, rho: 5, seed: 1 });
const world = compileVSchedule('gatherv', alg, counts, { root: 0, model });
const res = await runSim(p, async (comm) => {
  const rs = world.ranks[comm.rank];
  const bufs = rs.buffers.map((b) => new Uint8Array(b.bytes));
  const repeated = { ...rs, steps: Array.from({ length: reps }, () => rs.steps).flat() };
  const nativeR = bindSchedule(comm, repeated, bufs);
  for (let k = 0; k < warm; k++) await nativeR.run();
  await (comm.clock as NonNullable<typeof comm.clock>).sync();
  const w = performance.now();
  const u = comm.rank === 0 ? process.cpuUsage() : undefined;
  await nativeR.run();
  await (comm.clock as NonNullable<typeof comm.clock>).sync();
  if (u === undefined) return [0, 0];
  const c = process.cpuUsage(u);
  return [performance.now() - w, (c.user + c.system) / 1000];
}, { model });
const [ms, cpu] = res.results[0];
/** Messages of the timed part. */
const msgs = Math.round(res.messages / (warm + 1));
console.log(`${alg} p=${p} reps=${reps}${warm > 0 ? ` (after ${warm} untimed)` : ''}: ${ms.toFixed(1)} ms, ${(msgs / ms / 1000).toFixed(3)} M msgs/s (CPU ${cpu.toFixed(1)} ms, ${(msgs / cpu / 1000).toFixed(3)} M msgs/s), msgs ${msgs}`);
