/**
 * `npm run bench:gatherv`: gatherv and scatterv on worker threads (p = 8 by default),
 * b = 1, 10, 100, 1000, 10000, the distributions of seed 000's experiments (§5): the adaptive
 * algorithm (seed 000) against linear (what Open MPI and MPICH ship) and the block-size
 * oblivious binomial tree, measured side by side in one run — for every (op, b, distribution)
 * the three algorithms run back to back, each seed 000's way (warm-up, repetitions between
 * barriers, slowest rank, minimum) — and printed as times and ratios linear/adaptive and
 * binomial/adaptive (> 1: adaptive is faster). Every result is verified; exit 1 otherwise.
 *
 *   npm run bench:gatherv [-- --p 8 --b 1,10,100 --reps 10 --warmup 3 --persistent]
 */
import Table from 'cli-table3';
import { Command } from 'commander';
import { parseIntegerOption } from '../cli/options.js';
import { runOnThreads, type RunReport } from '../run/job.js';
import { SEED000_DISTRIBUTIONS, V_OPERATIONS, type RunCase } from '../run/spec.js';
import { DISTRIBUTION_LABELS } from './distributions.js';

const ALGORITHMS = ['adaptive', 'linear', 'binomial'] as const;

interface BenchOptions {
  p: number;
  b: number[];
  reps: number;
  warmup: number;
  unitBytes: number;
  seed: number;
  persistent: boolean;
}

const geomean = (xs: readonly number[]): number => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

async function bench(o: BenchOptions): Promise<boolean> {
  const cases: RunCase[] = [];
  for (const op of V_OPERATIONS) {
    for (const b of o.b) {
      for (const dist of SEED000_DISTRIBUTIONS) {
        for (const algorithm of ALGORITHMS) {
          cases.push({
            op,
            algorithm,
            dist,
            b,
            rho: 5,
            seed: o.seed,
            root: 0,
            unitBytes: o.unitBytes,
            model: { alpha: 0, beta: 0, gamma: 0 }, // replaced by the calibration
            persistent: o.persistent,
            reps: o.reps,
            warmup: o.warmup,
          });
        }
      }
    }
  }
  const t0 = performance.now();
  const { calibration, reports } = await runOnThreads(o.p, cases, { calibrate: {} });
  const seconds = (performance.now() - t0) / 1000;
  const out = process.stdout;
  out.write(
    `gatherv/scatterv on ${o.p} worker threads, root 0, ${o.unitBytes}-byte elements, ${o.persistent ? 'persistent start() only' : 'whole calls'}; ` +
      `min of ${o.reps} after ${o.warmup} warm-up; ${cases.length} cases in ${seconds.toFixed(1)} s\n`,
  );
  if (calibration) {
    out.write(`calibration: α = ${calibration.alphaUs.toFixed(2)} µs, β = ${(calibration.betaUs * 1e3).toFixed(3)} ns/B, γ = ${(calibration.gammaUs * 1e3).toFixed(3)} ns/B\n`);
  }
  let i = 0;
  let ok = true;
  const summary = new Table({ head: ['op', 'b', 'linear/adaptive (geomean)', 'binomial/adaptive (geomean)'], style: { head: [], border: [] } });
  for (const op of V_OPERATIONS) {
    for (const b of o.b) {
      const t = new Table({
        head: ['distribution', 'adaptive (µs)', 'linear (µs)', 'binomial (µs)', 'linear/adaptive', 'binomial/adaptive'],
        colAligns: ['left', 'right', 'right', 'right', 'right', 'right'],
        style: { head: [], border: [] },
      });
      const lin: number[] = [];
      const bin: number[] = [];
      for (const dist of SEED000_DISTRIBUTIONS) {
        const [a, l, bi] = [reports[i], reports[i + 1], reports[i + 2]] as RunReport[];
        i += 3;
        for (const r of [a, l, bi]) {
          if (!r.verified) {
            ok = false;
            out.write(`FAILED ${op} ${r.algorithm} ${dist} b=${b}: ${r.mismatches.join('; ')}\n`);
          }
        }
        lin.push(l.time / a.time);
        bin.push(bi.time / a.time);
        t.push([DISTRIBUTION_LABELS[dist], (a.time * 1e6).toFixed(1), (l.time * 1e6).toFixed(1), (bi.time * 1e6).toFixed(1), (l.time / a.time).toFixed(2), (bi.time / a.time).toFixed(2)]);
      }
      out.write(`\n${op}, b = ${b}\n${t.toString()}\n`);
      summary.push([op, String(b), geomean(lin).toFixed(2), geomean(bin).toFixed(2)]);
    }
  }
  out.write(`\nsummary (ratio > 1: adaptive faster)\n${summary.toString()}\n${ok ? 'every result verified' : 'SOME RESULTS FAILED VERIFICATION'}\n`);
  return ok;
}

const parseList = (v: string): number[] => v.split(',').map((s, k) => parseIntegerOption(`b[${k}]`, 1)(s.trim()));

const program = new Command()
  .name('bench:gatherv')
  .option('--p <n>', 'worker threads', parseIntegerOption('p', 2), 8)
  .option('--b <list>', 'average block sizes', parseList, [1, 10, 100, 1000, 10000])
  .option('--reps <n>', 'timed repetitions', parseIntegerOption('reps', 1), 10)
  .option('--warmup <n>', 'untimed executions first', parseIntegerOption('warmup', 0), 3)
  .option('--unit-bytes <n>', 'bytes per element', parseIntegerOption('unit-bytes', 1), 1)
  .option('--seed <n>', 'seed of the random distributions', parseIntegerOption('seed', 0), 1)
  .option('--persistent', 'time only start() of persistent plans', false);
program.parse(process.argv);
const ok = await bench(program.opts<BenchOptions>());
process.exitCode = ok ? 0 : 1;
