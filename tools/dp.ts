/**
 * Benchmark of the homogeneous optimal-tree DP (Traff17 Theorem 2): the default kernel
 * (the crossing kernel of src/trees/optimal/crossing-kernel.ts where it applies), the full-scan
 * kernel (optimal/kernel.ts, `kernel: 'scan'`) and a straightforward implementation of the
 * same recurrence (src/trees/optimal/reference.ts), with peak memory, and the opt-in
 * monotone heuristic. All three must give the same time and root.
 *
 *   npx tsx tools/dp.ts [--p 2000,4000,10000] [--skip-naive] [--naive-max 2000]
 *                       [--scan-max 2000] [--mode exact|paper] [--root N] [--dist random]
 *                       [--b 1000] [--alpha 100] [--beta 1] [--gamma 1] [--heuristic]
 *
 * Wall time and CPU time are both printed: on a shared 2-core machine wall time also counts
 * other processes. Peak memory is sampled from the progress callback during the run (RSS,
 * V8 heap, ArrayBuffers) and read from the OS (maxRSS) before the naive run starts.
 */
import { blockSizes, parseDistribution } from '../src/workloads/distributions.js';
import { linearModel } from '../src/model/cost-model.js';
import { triangleSize } from '../src/trees/optimal/kernel.js';
import { optimalTree, type OptimalMode } from '../src/trees/optimal/homogeneous.js';
import { naiveOptimal } from '../src/trees/optimal/reference.js';

interface Args {
  ps: number[];
  skipNaive: boolean;
  naiveMax: number;
  scanMax: number;
  mode: OptimalMode;
  root: number | undefined;
  dist: string;
  b: number;
  alpha: number;
  beta: number;
  gamma: number;
  heuristic: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    ps: [2000, 4000, 10000],
    skipNaive: false,
    naiveMax: 2000,
    scanMax: 2000,
    mode: 'exact',
    root: undefined,
    dist: 'random',
    b: 1000,
    alpha: 100,
    beta: 1,
    gamma: 1,
    heuristic: false,
  };
  for (let q = 0; q < argv.length; q++) {
    const flag = argv[q];
    const value = (): string => {
      const v = argv[++q];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const num = (): number => {
      const v = Number(value());
      if (!Number.isFinite(v)) throw new Error(`${flag} needs a number`);
      return v;
    };
    switch (flag) {
      case '--p':
        a.ps = value()
          .split(',')
          .map((s) => Number(s.trim()));
        if (a.ps.some((p) => !Number.isInteger(p) || p < 1)) throw new Error('--p needs positive integers, e.g. 2000,4000');
        break;
      case '--skip-naive':
        a.skipNaive = true;
        break;
      case '--naive-max':
        a.naiveMax = num();
        break;
      case '--scan-max':
        a.scanMax = num();
        break;
      case '--mode': {
        const m = value();
        if (m !== 'exact' && m !== 'paper') throw new Error("--mode is 'exact' or 'paper'");
        a.mode = m;
        break;
      }
      case '--root':
        a.root = num();
        break;
      case '--dist':
        a.dist = value();
        break;
      case '--b':
        a.b = num();
        break;
      case '--alpha':
        a.alpha = num();
        break;
      case '--beta':
        a.beta = num();
        break;
      case '--gamma':
        a.gamma = num();
        break;
      case '--heuristic':
        a.heuristic = true;
        break;
      case '--help':
      case '-h':
        console.log('usage: npx tsx tools/dp.ts [--p 2000,4000,10000] [--skip-naive] [--naive-max N] [--scan-max N] [--mode exact|paper] [--root N] [--dist NAME] [--b N] [--alpha A] [--beta B] [--gamma G] [--heuristic]');
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${flag}`);
    }
  }
  return a;
}

const MB = 1024 * 1024;
const fmtMB = (bytes: number): string => `${(bytes / MB).toFixed(0)} MB`;
const fmtS = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

interface Timed<T> {
  value: T;
  wallMs: number;
  cpuMs: number;
}

function timed<T>(f: () => T): Timed<T> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { value, wallMs, cpuMs: (c.user + c.system) / 1000 };
}

/** Mirrors optimal/homogeneous.ts: the crossing kernel runs for integer α, β, γ, unless paper mode with the best root. */
function optimalUsesCrossing(args: Args, root: number | undefined): boolean {
  const int = Number.isInteger(args.alpha) && Number.isInteger(args.beta) && Number.isInteger(args.gamma);
  return int && (args.mode === 'exact' || root !== undefined);
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const dist = parseDistribution(args.dist);
  const model = linearModel({ alpha: args.alpha, beta: args.beta, gamma: args.gamma });
  console.log(
    `optimal ordered tree DP, ${args.mode} mode, ${args.root === undefined ? 'best root' : `fixed root ${args.root}`}; ` +
      `${dist} blocks, b=${args.b}, α=${args.alpha} β=${args.beta} γ=${args.gamma}; node ${process.version}`,
  );
  for (const p of args.ps) {
    const sizes = blockSizes(dist, { p, b: args.b, seed: 1 });
    const root = args.root === undefined ? undefined : Math.min(args.root, p - 1);
    let peakRss = 0;
    let peakHeap = 0;
    let peakBuffers = 0;
    const sample = (): void => {
      const u = process.memoryUsage();
      peakRss = Math.max(peakRss, u.rss);
      peakHeap = Math.max(peakHeap, u.heapUsed);
      peakBuffers = Math.max(peakBuffers, u.arrayBuffers);
    };
    const mine = timed(() => optimalTree(sizes, model, { mode: args.mode, root, onProgress: sample }));
    sample();
    const maxRss = process.resourceUsage().maxRSS * 1024;
    const tri = triangleSize(p);
    const choiceBytes = p <= 32767 ? 2 : 4;
    const fCells = root === undefined ? 0 : (root + 1) * (p - root);
    // the crossing kernel adds row deques: one more choice-sized triangle (and F rectangle)
    const crossing = optimalUsesCrossing(args, root);
    const tables =
      tri * 8 +
      tri * choiceBytes * (args.mode === 'paper' && root === undefined ? 2 : 1) +
      fCells * (8 + choiceBytes) +
      (crossing ? (tri + fCells) * choiceBytes : 0);
    console.log(
      `p=${p}: default (${crossing ? 'crossing' : 'full-scan'} kernel) ${fmtS(mine.wallMs)} wall, ${fmtS(mine.cpuMs)} CPU; ` +
        `time=${mine.value.time} root=${mine.value.root}`,
    );
    console.log(
      `  memory: tables ${fmtMB(tables)} (Float64 triangle + Int${8 * choiceBytes} choices${fCells > 0 ? ' + F' : ''}${crossing ? ' + deques' : ''}), ` +
        `peak sampled RSS ${fmtMB(peakRss)}, heap ${fmtMB(peakHeap)}, ArrayBuffers ${fmtMB(peakBuffers)}; process maxRSS so far ${fmtMB(maxRss)}`,
    );
    if (crossing && p <= args.scanMax) {
      const scan = timed(() => optimalTree(sizes, model, { mode: args.mode, root, kernel: 'scan' }));
      const same = scan.value.time === mine.value.time && scan.value.root === mine.value.root;
      console.log(
        `  full-scan kernel: ${fmtS(scan.wallMs)} wall, ${fmtS(scan.cpuMs)} CPU; time=${scan.value.time} root=${scan.value.root} ` +
          `${same ? '(same result)' : '(DIFFERENT RESULT!)'}; crossing speed-up ${(scan.wallMs / mine.wallMs).toFixed(1)}x wall, ` +
          `${(scan.cpuMs / mine.cpuMs).toFixed(1)}x CPU`,
      );
      if (!same) process.exitCode = 1;
    }
    if (args.heuristic && args.mode === 'exact') {
      const h = timed(() => optimalTree(sizes, model, { root, pruning: 'monotone' }));
      const err = h.value.time - mine.value.time;
      console.log(
        `  monotone heuristic (opt-in): ${fmtS(h.wallMs)} wall, ${fmtS(h.cpuMs)} CPU; time=${h.value.time} ` +
          `(${err === 0 ? 'optimal' : `+${err}, ${((100 * err) / mine.value.time).toFixed(4)} % above the optimum`})`,
      );
    }
    if (!args.skipNaive && p <= args.naiveMax) {
      const prm = { alpha: args.alpha, beta: args.beta, gamma: args.gamma };
      const naive = timed(() => naiveOptimal(sizes, prm, { mode: args.mode, root }));
      const same = naive.value.time === mine.value.time && naive.value.root === mine.value.root;
      console.log(
        `  naive recurrence: ${fmtS(naive.wallMs)} wall, ${fmtS(naive.cpuMs)} CPU; time=${naive.value.time} root=${naive.value.root} ` +
          `${same ? '(same result)' : '(DIFFERENT RESULT!)'}; speed-up ${(naive.wallMs / mine.wallMs).toFixed(1)}x wall, ` +
          `${(naive.cpuMs / mine.cpuMs).toFixed(1)}x CPU (against the default kernel)`,
      );
      if (!same) process.exitCode = 1;
    } else if (!args.skipNaive) {
      console.log(`  naive recurrence skipped above p=${args.naiveMax} (--naive-max)`);
    }
  }
}

main();
