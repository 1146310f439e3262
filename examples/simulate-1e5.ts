/**
 * 100 000 ranks on the simulator: a gatherv of the spikes distribution (b = 10, ρ = 5: two block
 * sizes) to root p/2 with each tree, in the linear model α = 100, β = 1, γ = 0 per element. Each
 * tree's data phase (planned once with gathervInit, then start() timed on the virtual clock)
 * beside the completion time the evaluator predicts for the same tree: the two columns agree.
 *
 *   npm run build && npx tsx examples/simulate-1e5.ts        # 30–60 s, 1.5 GB; or: … simulate-1e5.ts 10000
 */
import { adaptiveBinomialTree, blockSizes, evaluate, gathervInit, linearModel, linearTree, obliviousBinomialTree, runSim, twoBlockTree } from 'vcoll';

const p = Number(process.argv[2] ?? 100_000);
const root = Math.floor(p / 2);
const model = linearModel({ alpha: 100, beta: 1, gamma: 0 });
const counts = blockSizes('spikes', { p, b: 10, rho: 5, seed: 1 });
const total = counts.reduce((a, b) => a + b);
// The gatherv variants and the trees their data phases follow (`binomial` is the rank-ordered, oblivious one).
const trees = [
  ['linear', linearTree],
  ['binomial', obliviousBinomialTree],
  ['adaptive', adaptiveBinomialTree],
  ['two-block', twoBlockTree],
] as const;

console.log(`p = ${p}, spikes: ${total} elements to root ${root}; model units, α = 100, β = 1 per element`);
console.log('algorithm    simulated   predicted   wall');
for (const [algorithm, build] of trees) {
  const predicted = evaluate(build(counts, model, { root }).tree, counts, model, 'gather').time;
  const t0 = performance.now();
  const { results } = await runSim(
    p,
    async (comm) => {
      const rootArgs = comm.rank === root ? { recv: new Uint8Array(total), counts } : {};
      const plan = await gathervInit(comm, { root, send: new Uint8Array(counts[comm.rank]), ...rootArgs }, { algorithm, model });
      const clock = comm.clock;
      if (clock === undefined) throw new Error('no virtual clock');
      await clock.sync(); // an ideal barrier: every rank starts the data phase at the same virtual time
      const start = clock.now();
      await plan.start();
      return clock.now() - start;
    },
    { model },
  );
  const simulated = results.reduce((a, b) => Math.max(a, b));
  const wall = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(`${algorithm.padEnd(10)} ${String(simulated).padStart(11)} ${String(predicted).padStart(11)} ${wall.padStart(5)} s`);
  if (simulated !== predicted) throw new Error(`${algorithm}: the simulation differs from the evaluator`);
}
