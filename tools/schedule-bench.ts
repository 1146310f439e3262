/**
 * The simulator's wall time per persistent gatherv data phase: the variant's own `start()`,
 * its compiled schedule replayed by the engine's native executor (`bindSchedule(…).run()`)
 * and by the portable executor (`bindSchedule(…, { portable: true }).run()`), on the same
 * simulation; prints simulated messages per second of wall time for each and whether the
 * virtual times are equal (they must be: every rank's time of every run).
 *
 * Each variant: the clocks synced, then every rank runs it `reps` times back to back (as a
 * persistent collective is started again and again), then synced again; the wall time is
 * rank 0's from the first sync's release to the second's (so it includes every rank
 * program's own continuations: one wake-up per rank and run at least); the process's CPU
 * time over the same interval is printed too (less sensitive to other load on the machine;
 * it includes the collector's helper threads).
 *
 *   npx tsx tools/schedule-bench.ts [p = 8000] [algorithm = binomial] [reps = 5] [rounds = 3]
 *
 * `rounds`: the variants measured in turn that many times (the best and the spread over
 * rounds are printed).
 *
 * Two more lines show the replay without the rank programs: `native×reps` / `portable×reps`
 * run one schedule made of `reps` copies of the rank's steps, once (one wake-up per rank for
 * all `reps` runs; their per-rank virtual times are compared with each other).
 */
import { gathervInit, type VAlgorithm } from '../src/collectives/index.js';
import { compileVSchedule } from '../src/collectives/v-schedule.js';
import { bindSchedule } from '../src/schedule/run.js';
import { runSim } from '../src/transports/sim/index.js';
import { linearModel } from '../src/model/cost-model.js';
import { blockSizes } from '../src/workloads/distributions.js';

const p = Number(process.argv[2] ?? 8000);
const alg = process.argv[3] ?? 'binomial';
const reps = Number(process.argv[4] ?? 5);
const rounds = Number(process.argv[5] ?? 3);
const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
const counts = blockSizes('random', { p, b: 10, rho: 5, seed: 1 });
const world = compileVSchedule('gatherv', alg, counts, { root: 0, model });
/** Messages of one run of the schedule (a copy through a port is a message too). */
let messages = 0;
for (const rs of world.ranks) for (const st of rs.steps) for (const op of st.ops) if (op.kind === 'send' || (op.kind === 'copy' && op.tag !== undefined)) messages++;

type Variant = 'plan' | 'native' | 'portable' | 'native×reps' | 'portable×reps';
const VARIANTS: Variant[] = ['plan', 'native', 'portable', 'native×reps', 'portable×reps'];
const empty = (): Record<Variant, number[]> => ({ plan: [], native: [], portable: [], 'native×reps': [], 'portable×reps': [] });

const res = await runSim(
  p,
  async (comm) => {
    const me = comm.rank;
    const send = new Uint8Array(counts[me]);
    const recv = me === 0 ? new Uint8Array(counts.reduce((a, b) => a + b, 0)) : undefined;
    const plan = await gathervInit(comm, me === 0 ? { root: 0, send, recv, counts } : { root: 0, send }, { algorithm: alg as VAlgorithm, model });
    const rs = world.ranks[me];
    const bufs = rs.buffers.map((b) => new Uint8Array(b.bytes));
    const native = bindSchedule(comm, rs, bufs);
    const portable = bindSchedule(comm, rs, bufs, { portable: true });
    const repeated = { ...rs, steps: Array.from({ length: reps }, () => rs.steps).flat() };
    const nativeR = bindSchedule(comm, repeated, bufs);
    const portableR = bindSchedule(comm, repeated, bufs, { portable: true });
    const run: Record<Variant, () => PromiseLike<void>> = {
      plan: () => plan.start(),
      native: () => native.run(),
      portable: () => portable.run(),
      'native×reps': () => nativeR.run(),
      'portable×reps': () => portableR.run(),
    };
    const c = comm.clock;
    if (c === undefined) throw new Error('the simulator has a clock');
    const wall = empty();
    const cpu = empty();
    const virtual = empty();
    for (let round = 0; round < rounds; round++) {
      for (const v of VARIANTS) {
        const go = run[v];
        const spans = virtual[v];
        await c.sync();
        const w = performance.now();
        const u = process.cpuUsage();
        const times = v.endsWith('×reps') ? 1 : reps;
        for (let k = 0; k < times; k++) {
          const t = c.now();
          await go();
          spans.push(c.now() - t);
        }
        await c.sync();
        wall[v].push((performance.now() - w) / reps);
        const d = process.cpuUsage(u);
        cpu[v].push((d.user + d.system) / 1000 / reps);
      }
    }
    return { wall, cpu, virtual };
  },
  { model },
);

const r0 = res.results;
const fmt = (x: number): string => x.toFixed(x < 10 ? 2 : 1);
const rate = (ms: number): string => (messages / (ms / 1000) / 1e6).toFixed(3);
console.log(`p=${p} gatherv ${alg}: ${messages} messages per run; ${rounds} rounds of ${reps} runs back to back per variant (rank 0's wall clock, sync to sync)`);
for (const v of VARIANTS) {
  const ms = r0[0].wall[v];
  const best = Math.min(...ms);
  console.log(
    `  ${v.padEnd(13)} wall per run: best ${fmt(best)} ms (${rate(best)} M msgs/s), rounds ${ms.map(fmt).join(' / ')} ms (${ms.map(rate).join(' / ')} M msgs/s); process CPU per run: best ${fmt(Math.min(...r0[0].cpu[v]))} ms (${rate(Math.min(...r0[0].cpu[v]))} M msgs/s); virtual time of a start (max over ranks) ${Math.max(...r0.map((r) => r.virtual[v][0]))}`,
  );
}
let equal = true;
for (let k = 0; k < rounds * reps; k++) {
  for (let r = 0; r < p; r++) {
    const x = r0[r].virtual;
    if (x.native[k] !== x.plan[k] || x.portable[k] !== x.plan[k]) equal = false;
  }
}
for (let k = 0; k < rounds; k++) for (let r = 0; r < p; r++) if (r0[r].virtual['native×reps'][k] !== r0[r].virtual['portable×reps'][k]) equal = false;
console.log(`  virtual times per rank and run equal (plan = native = portable, native×reps = portable×reps): ${equal ? 'yes' : 'NO'}`);
