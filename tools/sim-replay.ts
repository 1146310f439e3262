/**
 * Simulated messages per second of wall time of the whole-schedule replay (sim/replay.ts):
 * gatherv's compiled schedule (random counts, b = 10, root 0, α = 100, β = 1) replayed `runs`
 * times back to back on every rank, with the data moved and with times only (`data: false`),
 * by the C loop (native/sim, when built: `npm run build:sim`) and by the JavaScript loop,
 * interleaved for `rounds` rounds after one untimed warm-up round; prints the median and the
 * spread, the one-time cost of checking and laying out the schedule, and whether the virtual
 * times equal those of the simulator running rank programs that bind the same schedules
 * (two runs each, every rank's final clock) for every loop and setting.
 *
 *   npx tsx tools/sim-replay.ts [p = 8000] [algorithms = linear,binomial,adaptive] [runs = 100] [rounds = 7]
 *
 * (`npm run bench:schedule` compares the engine's ways of running a persistent plan.)
 */
import { compileVSchedule } from '../src/collectives/v-schedule.js';
import type { WorldSchedule } from '../src/comm/schedule.js';
import { linearModel } from '../src/model/cost-model.js';
import { bindSchedule } from '../src/schedule/run.js';
import { runSim } from '../src/transports/sim/index.js';
import { simAddonMissing } from '../src/transports/sim/native-replay.js';
import { ScheduleReplay } from '../src/transports/sim/replay.js';
import { blockSizes } from '../src/workloads/distributions.js';

const p = Number(process.argv[2] ?? 8000);
const algorithms = (process.argv[3] ?? 'linear,binomial,adaptive').split(',');
const runs = Number(process.argv[4] ?? 100);
const rounds = Number(process.argv[5] ?? 7);
const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
const counts = blockSizes('random', { p, b: 10, rho: 5, seed: 1 });

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const m = (x: number): string => x.toFixed(2);

/** Every rank's final clock when rank programs run the bound schedules twice. */
async function engineFinish(world: WorldSchedule): Promise<number[]> {
  const res = await runSim(
    p,
    async (comm) => {
      const rs = world.ranks[comm.rank];
      const bound = bindSchedule(
        comm,
        rs,
        rs.buffers.map((b) => new Uint8Array(b.bytes)),
      );
      await bound.run();
      await bound.run();
    },
    { model },
  );
  return res.finish;
}

const engines = simAddonMissing() === '' ? (['native', 'js'] as const) : (['js'] as const);
if (engines.length === 1) console.log(`(the C loop is ${simAddonMissing()}: the JavaScript loop only)`);
console.log(`p=${p} gatherv (random counts, b = 10): ${runs} runs per replay, ${rounds} rounds, M simulated messages/s of wall time (median, min–max)`);
type Key = `${'native' | 'js'} ${'data' | 'times'}`;
for (const alg of algorithms) {
  const world = compileVSchedule('gatherv', alg, counts, { root: 0, model });
  const replays: [Key, ScheduleReplay][] = [];
  let setupMs = 0;
  for (const engine of engines) {
    const t = performance.now();
    replays.push([`${engine} data`, new ScheduleReplay(world, { model, engine })]);
    if (engine === 'native') setupMs = performance.now() - t;
    replays.push([`${engine} times`, new ScheduleReplay(world, { model, engine, data: false })]);
  }
  const rate = new Map<Key, number[]>(replays.map(([k]) => [k, []]));
  let messages = 0;
  for (let round = 0; round <= rounds; round++) {
    for (const [key, rp] of replays) {
      const t = performance.now();
      const r = rp.run(runs);
      const ms = performance.now() - t;
      messages = r.messages;
      if (round > 0) rate.get(key)?.push(r.messages / ms / 1000);
    }
  }
  const engine = await engineFinish(world);
  const equal = replays.every(([, rp]) => rp.run(2).finish.every((f, r) => f === engine[r]));
  const line = (k: Key): string => {
    const xs = rate.get(k) ?? [];
    return `${m(median(xs))} (${m(Math.min(...xs))}–${m(Math.max(...xs))})`;
  };
  const parts = engines.map((e) => `${e === 'native' ? 'C' : 'JavaScript'}: data moved ${line(`${e} data`)}, times only ${line(`${e} times`)}`);
  console.log(`  ${alg.padEnd(9)} ${parts.join('; ')}; ${messages} messages per replay; check and layout ${setupMs.toFixed(0)} ms; times equal to the engine's rank programs: ${equal ? 'yes' : 'NO'}`);
}
