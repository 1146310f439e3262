/**
 * `npm run bench:degrading`: the degrading adaptive tree (src/trees/degrading.ts, Traff18 §3's
 * graceful degradation) against adaptive, linear and the optimal fixed-root tree (Traff17
 * Theorem 2), in the model (exact evaluator; no wall-clock time involved), over seed 000's eight
 * distributions × b × p × roots {0, p/2} × α × γ (β = 1).
 *
 * Prints per distribution and b, over the p, roots, α and γ of the grid: the worst and best
 * ratio degrading / min(adaptive, linear), the cases within 1.02 and at or below 0.9, the
 * median and worst ratio to the optimal tree, and the lower bound every tree obeys
 * (β·Σ_{i≠r} m_i + α + γ·m_r) over min(adaptive, linear): where that bound is above 0.9 no tree
 * can be 10 % faster. Exit 1 when a case is above 1.02 × min(adaptive, linear).
 *
 *   npm run bench:degrading [-- --ps 64,560,2000 --bs 1,10,100,1000,10000 --no-optimal]
 */
import Table from 'cli-table3';
import { Command } from 'commander';
import { parseIntegerListOption } from '../src/cli/options.js';
import { linearModel } from '../src/model/cost-model.js';
import { adaptiveBinomialTree } from '../src/trees/adaptive.js';
import { degradingTree } from '../src/trees/degrading.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { SEED000_DISTRIBUTIONS } from '../src/run/spec.js';
import { blockSizes, type DistributionName } from '../src/workloads/distributions.js';

// seed 000's distributions as the main job runs them, and Traff18's own two blocks (m_0 = m_{p−1} = b)
const DISTS: readonly DistributionName[] = [...SEED000_DISTRIBUTIONS, 'two-blocks-small'];
const ALPHAS = [1, 100];
const GAMMAS = [0, 1];

const program = new Command()
  .name('bench:degrading')
  .option('--ps <list>', 'process counts', parseIntegerListOption('--ps', 2), [64, 560, 2000])
  .option('--bs <list>', 'average block sizes b', parseIntegerListOption('--bs', 1), [1, 10, 100, 1000, 10000])
  .option('--no-optimal', 'leave out the optimal tree (O(p³))')
  .parse();
const opts = program.opts<{ ps: number[]; bs: number[]; optimal: boolean }>();

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)];
};
const f = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : '—');

const table = new Table({ head: ['distribution', 'b', 'cases', 'D/min(A,L) worst', 'best', '≤ 1.02', '≤ 0.9', 'D/opt median', 'D/opt worst', 'bound/min(A,L) min'] });
let above = 0;
let total = 0;
let below = 0;
const started = performance.now();
for (const dist of DISTS) {
  for (const b of opts.bs) {
    const ratios: number[] = [];
    const toOpt: number[] = [];
    const bounds: number[] = [];
    for (const p of opts.ps) {
      const sizes = blockSizes(dist, { p, b });
      const sum = sizes.reduce((x, y) => x + y, 0);
      for (const root of [0, Math.floor(p / 2)]) {
        for (const alpha of ALPHAS) {
          for (const gamma of GAMMAS) {
            const model = linearModel({ alpha, beta: 1, gamma });
            const d = degradingTree(sizes, model, { root }).time;
            const a = evaluate(adaptiveBinomialTree(sizes, model, { root }).tree, sizes, model).time;
            const l = evaluate(linearTree(sizes, model, { root }).tree, sizes, model).time;
            const best = Math.min(a, l);
            ratios.push(d / best);
            bounds.push((sum - sizes[root] + alpha + gamma * sizes[root]) / best);
            if (opts.optimal) toOpt.push(d / optimalTree(sizes, model, { root }).time);
          }
        }
      }
    }
    const within = ratios.filter((r) => r <= 1.02).length;
    const fast = ratios.filter((r) => r <= 0.9).length;
    above += ratios.length - within;
    below += fast;
    total += ratios.length;
    table.push([dist, b, ratios.length, f(Math.max(...ratios)), f(Math.min(...ratios)), within, fast, f(median(toOpt)), f(toOpt.length ? Math.max(...toOpt) : NaN), f(Math.min(...bounds))]);
  }
}
console.log(`degrading adaptive tree (D) against adaptive (A), linear (L) and the optimal fixed-root tree, exact model times; p ∈ {${opts.ps.join(', ')}}, roots 0 and p/2, α ∈ {${ALPHAS.join(', ')}}, β = 1, γ ∈ {${GAMMAS.join(', ')}}`);
console.log(table.toString());
console.log(`${total} cases: ${total - above} within 1.02 × min(adaptive, linear), ${below} at or below 0.9 × (${((performance.now() - started) / 1000).toFixed(1)} s)`);
if (above > 0) {
  console.log(`${above} case(s) above 1.02 × min(adaptive, linear)`);
  process.exitCode = 1;
}
