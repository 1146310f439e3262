/**
 * `npm run bench:hetero`: Dichev10's experiment on its two platforms (src/workloads/platforms.ts:
 * the HCL-like single-switch cluster, also with the wider block-size ratio, and the
 * Grid5000-like cluster of clusters, ranks grouped by cluster or shuffled), gatherv and
 * scatterv, several total sizes, every root (or a sample): the exact model times (evaluate)
 * of the model-oblivious trees — the rank-ordered binomial tree and Träff's tree with
 * identical links — beside the model-based ones (binomial min-first and max-first, model-
 * based Träff, and the guarded forms that keep the faster of model-based and original).
 *
 * Prints per platform and size the reduction 1 − model/oblivious over the roots (best, mean,
 * worst), beside the seed's "up to 75 % (binomial, min-first) and 60 % (Träff)" on Grid5000.
 * Then runs a subset on the simulator (real bytes through gathervInit/scattervInit, the
 * data phase timed on the virtual clock) and checks each run takes exactly evaluate's time
 * and delivers every byte; exit 1 otherwise.
 *
 *   npm run bench:hetero [-- --totals 65536,1048576,16777216 --roots all|<n> --seed 1
 *                           --sim-roots 2 --sim-total 1048576 --no-sim]
 */
import Table from 'cli-table3';
import { Command } from 'commander';
import { parseIntegerListOption, parseIntegerOption } from '../src/cli/options.js';
import type { ModelTreeAlgorithm } from '../src/collectives/v-variants.js';
import { predictTime } from '../src/run/predict.js';
import type { Operation } from '../src/trees/evaluate.js';
import { runTreeOnSim } from '../src/harness/platform-run.js';
import { grid5000Platform, hclPlatform, type Platform } from '../src/workloads/platforms.js';

interface Setting {
  readonly name: string;
  readonly make: (total: number, seed: number) => Platform;
}

const SETTINGS: readonly Setting[] = [
  { name: 'HCL-like (14 nodes, one switch)', make: (total, seed) => hclPlatform({ total, seed }) },
  { name: 'HCL-like, max/min block ratio 10', make: (total, seed) => hclPlatform({ total, seed, spread: 'wide' }) },
  { name: 'Grid5000-like (39 nodes, 5 clusters, 2 sites)', make: (total, seed) => grid5000Platform({ total, seed }) },
  { name: 'Grid5000-like, ranks shuffled', make: (total, seed) => grid5000Platform({ total, seed, placement: 'shuffled' }) },
];

/** The compared trees: each model-based one against its model-oblivious original. */
const PAIRS: readonly { readonly label: string; readonly model: ModelTreeAlgorithm; readonly original: 'binomial' | 'traff' }[] = [
  { label: 'binomial min-first', model: 'model-binomial-min', original: 'binomial' },
  { label: 'binomial max-first', model: 'model-binomial-max', original: 'binomial' },
  { label: 'binomial guarded', model: 'model-binomial-guarded', original: 'binomial' },
  { label: 'model-based Träff', model: 'model-traff', original: 'traff' },
  { label: 'Träff guarded', model: 'model-traff-guarded', original: 'traff' },
];

/** The exact model time of `name`'s tree (what the run follows: src/run/predict.ts). */
function treeTime(name: ModelTreeAlgorithm | 'binomial', pl: Platform, root: number, op: Operation): number {
  return predictTime(name, op === 'gather' ? 'gatherv' : 'scatterv', pl.sizes, pl.model, root);
}

const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;
const ms = (us: number): string => (us / 1000).toFixed(2);

interface Summary {
  best: number;
  mean: number;
  worst: number;
  slower: number;
}

function summarize(xs: readonly number[]): Summary {
  let best = -Infinity;
  let worst = Infinity;
  let sum = 0;
  let slower = 0;
  for (const x of xs) {
    best = Math.max(best, x);
    worst = Math.min(worst, x);
    sum += x;
    if (x < 0) slower++;
  }
  return { best, mean: sum / xs.length, worst, slower };
}

function rootsOf(p: number, spec: string): number[] {
  if (spec === 'all') return Array.from({ length: p }, (_, i) => i);
  const n = Math.min(p, parseIntegerOption('roots', 1)(spec));
  return Array.from({ length: n }, (_, k) => Math.floor((k * p) / n));
}

/** The model-time tables; returns the overall best reductions per pair (for the summary line). */
function modelTables(totals: readonly number[], rootSpec: string, seed: number): Map<string, number> {
  const overall = new Map<string, number>();
  for (const setting of SETTINGS) {
    const table = new Table({
      head: ['total', 'op', 'binomial ms', 'Träff ms', ...PAIRS.map((x) => `${x.label}\nbest / mean / worst`)],
      style: { head: [], border: [] },
    });
    for (const total of totals) {
      const pl = setting.make(total, seed);
      const roots = rootsOf(pl.p, rootSpec);
      for (const op of ['gather', 'scatter'] as const) {
        const originals = { binomial: roots.map((r) => treeTime('binomial', pl, r, op)), traff: roots.map((r) => treeTime('traff', pl, r, op)) };
        const cells = PAIRS.map((pair) => {
          const red = roots.map((r, k) => 1 - treeTime(pair.model, pl, r, op) / originals[pair.original][k]);
          const s = summarize(red);
          const key = `${setting.name}|${pair.label}`;
          overall.set(key, Math.max(overall.get(key) ?? -Infinity, s.best));
          return `${pct(s.best)} / ${pct(s.mean)} / ${pct(s.worst)}${s.slower > 0 ? `\n(slower for ${s.slower} of ${roots.length} roots)` : ''}`;
        });
        const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
        table.push([`${total / 1024} KiB`, op === 'gather' ? 'gatherv' : 'scatterv', ms(mean(originals.binomial)), ms(mean(originals.traff)), ...cells]);
      }
    }
    console.log(`\n${setting.name}: reduction 1 − model-based / oblivious over ${rootSpec === 'all' ? 'every root' : `${rootSpec} roots`} (exact model times; ms = mean oblivious time)`);
    console.log(table.toString());
  }
  return overall;
}

async function simCheck(total: number, nRoots: number, seed: number): Promise<boolean> {
  const algorithms: (ModelTreeAlgorithm | 'binomial')[] = ['binomial', 'traff', ...PAIRS.map((x) => x.model)];
  let runs = 0;
  let bad = 0;
  for (const setting of SETTINGS) {
    const pl = setting.make(total, seed);
    for (const root of rootsOf(pl.p, String(nRoots))) {
      for (const op of ['gatherv', 'scatterv'] as const) {
        for (const algorithm of algorithms) {
          const want = predictTime(algorithm, op, pl.sizes, pl.model, root);
          const got = await runTreeOnSim(op, algorithm, pl, root);
          runs++;
          if (!got.ok || got.time !== want) {
            bad++;
            console.log(`MISMATCH ${setting.name} ${op} ${algorithm} root ${root}: simulator ${got.time} (bytes ${got.ok ? 'ok' : 'WRONG'}), evaluate ${want}`);
          }
        }
      }
    }
  }
  console.log(
    `\nSimulator check (${total / 1024} KiB, ${nRoots} roots per platform, gatherv and scatterv, ${algorithms.length} trees): ` +
      `${runs - bad} of ${runs} runs delivered every byte in exactly evaluate's time.`,
  );
  return bad === 0;
}

async function main(): Promise<void> {
  const program = new Command()
    .name('bench:hetero')
    .option('--totals <list>', 'total sizes in bytes', parseIntegerListOption('totals', 1), [1 << 16, 1 << 20, 1 << 24])
    .option('--roots <all|n>', "every root ('all') or n evenly spaced roots", 'all')
    .option('--seed <n>', 'platform seed', parseIntegerOption('seed', 0), 1)
    .option('--sim-roots <n>', 'roots per platform run on the simulator', parseIntegerOption('sim-roots', 1), 2)
    .option('--sim-total <bytes>', 'total size of the simulator runs', parseIntegerOption('sim-total', 1), 1 << 20)
    .option('--no-sim', 'skip the simulator check')
    .parse();
  const o = program.opts<{ totals: number[]; roots: string; seed: number; simRoots: number; simTotal: number; sim: boolean }>();
  console.log('vcoll bench:hetero — model-based vs model-oblivious gatherv/scatterv trees (Dichev10), exact model times in µs and bytes');
  const overall = modelTables(o.totals, o.roots, o.seed);
  console.log('\nBest reduction per platform (over sizes, operations and roots) beside the seed (Grid5000: up to 75 % binomial min-first, up to 60 % Träff):');
  const summary = new Table({ head: ['platform', ...PAIRS.map((x) => x.label)], style: { head: [], border: [] } });
  for (const s of SETTINGS) summary.push([s.name, ...PAIRS.map((x) => pct(overall.get(`${s.name}|${x.label}`) ?? 0))]);
  console.log(summary.toString());
  if (o.sim && !(await simCheck(o.simTotal, o.simRoots, o.seed))) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 1;
});
