/**
 * Benchmark of the homogeneous optimal-tree DP (Traff17 Theorem 2): the crossing kernel of
 * src/trees/optimal/crossing-kernel.ts where it applies, on one core and (best root) on two
 * cores (src/trees/optimal/parallel-kernel.ts) side by side on the same input, the full-scan
 * kernel (optimal/kernel.ts, `kernel: 'scan'`) and a straightforward implementation of the
 * same recurrence (src/trees/optimal/reference.ts), with peak memory, and the opt-in
 * monotone heuristic. All must give the same time and root; one and two cores must also give
 * the same tree (parent array and child order). Exit code 1 otherwise.
 *
 *   npx tsx tools/dp.ts [--p 2000,4000,10000] [--skip-naive] [--naive-max 2000]
 *                       [--scan-max 2000] [--mode exact|paper] [--root N] [--dist random]
 *                       [--b 1000] [--alpha 100] [--beta 1] [--gamma 1] [--heuristic]
 *                       [--skip-one-core] [--skip-two-cores]
 *
 * Wall time and CPU time are both printed: on a shared 2-core machine wall time also counts
 * other processes. Peak memory is sampled from the progress callback during each run (RSS,
 * V8 heap, ArrayBuffers; the garbage of the previous run is collected first, so each run's
 * figures are its own) and read from the OS (maxRSS, the whole process) before the naive run
 * starts.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { blockSizes, parseDistribution } from '../src/workloads/distributions.js';
import { linearModel } from '../src/model/cost-model.js';
import { triangleSize } from '../src/trees/optimal/kernel.js';
import { optimalTree, type OptimalMode } from '../src/trees/optimal/homogeneous.js';
import { naiveOptimal } from '../src/trees/optimal/reference.js';
import type { BuiltTree } from '../src/trees/types.js';

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
  skipOne: boolean;
  skipTwo: boolean;
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
    skipOne: false,
    skipTwo: false,
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
      case '--skip-one-core':
        a.skipOne = true;
        break;
      case '--skip-two-cores':
        a.skipTwo = true;
        break;
      case '--help':
      case '-h':
        console.log('usage: npx tsx tools/dp.ts [--p 2000,4000,10000] [--skip-naive] [--naive-max N] [--scan-max N] [--mode exact|paper] [--root N] [--dist NAME] [--b N] [--alpha A] [--beta B] [--gamma G] [--heuristic] [--skip-one-core] [--skip-two-cores]');
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${flag}`);
    }
  }
  return a;
}

/** A full garbage collection (V8's gc, exposed at run time): each run's memory figures are its own. */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

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

/** Same time, root, and tree: parent array and every child order. */
function sameTree(a: BuiltTree, b: BuiltTree): boolean {
  if (a.time !== b.time || a.root !== b.root || a.tree.p !== b.tree.p) return false;
  for (let v = 0; v < a.tree.p; v++) {
    if (a.tree.parent[v] !== b.tree.parent[v] || a.tree.copyAt[v] !== b.tree.copyAt[v]) return false;
    const ca = a.tree.children[v];
    const cb = b.tree.children[v];
    if (ca.length !== cb.length || ca.some((c, q) => c !== cb[q])) return false;
  }
  return true;
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
    const resetPeaks = (): void => {
      collectGarbage();
      peakRss = 0;
      peakHeap = 0;
      peakBuffers = 0;
    };
    const sample = (): void => {
      const u = process.memoryUsage();
      peakRss = Math.max(peakRss, u.rss);
      peakHeap = Math.max(peakHeap, u.heapUsed);
      peakBuffers = Math.max(peakBuffers, u.arrayBuffers);
    };
    // the crossing kernel with the best root runs on one or two cores: run both, same input
    const crossing = optimalUsesCrossing(args, root);
    const twoCores = crossing && root === undefined;
    const runs: { label: string; t: Timed<BuiltTree>; memory: string }[] = [];
    const run = (label: string, workers: 1 | 2): void => {
      resetPeaks();
      const t = timed(() => optimalTree(sizes, model, { mode: args.mode, root, onProgress: sample, workers }));
      sample();
      runs.push({ label, t, memory: `peak sampled RSS ${fmtMB(peakRss)}, heap ${fmtMB(peakHeap)}, ArrayBuffers ${fmtMB(peakBuffers)}` });
    };
    if (!twoCores || !args.skipOne) run(twoCores ? 'one core' : 'default', 1);
    if (twoCores && !args.skipTwo) run('two cores', 2);
    if (runs.length === 0) throw new Error('--skip-one-core and --skip-two-cores leave nothing to run');
    const mine = runs[runs.length - 1].t;
    const maxRss = process.resourceUsage().maxRSS * 1024;
    const tri = triangleSize(p);
    const choiceBytes = p <= 32767 ? 2 : 4;
    const fCells = root === undefined ? 0 : (root + 1) * (p - root);
    // the crossing kernel adds row deques: one more choice-sized triangle (and F rectangle)
    const tables =
      tri * 8 +
      tri * choiceBytes * (args.mode === 'paper' && root === undefined ? 2 : 1) +
      fCells * (8 + choiceBytes) +
      (crossing ? (tri + fCells) * choiceBytes : 0);
    for (const { label, t, memory } of runs) {
      console.log(
        `p=${p}: ${crossing ? 'crossing' : 'full-scan'} kernel, ${label}: ${fmtS(t.wallMs)} wall, ${fmtS(t.cpuMs)} CPU; ` +
          `time=${t.value.time} root=${t.value.root}; ${memory}`,
      );
    }
    if (runs.length === 2) {
      const [one, two] = [runs[0].t, runs[1].t];
      const same = sameTree(one.value, two.value);
      console.log(
        `  two cores vs one core: wall-time speed-up ${(one.wallMs / two.wallMs).toFixed(2)}x, CPU time ${(two.cpuMs / one.cpuMs).toFixed(2)}x; ` +
          `${same ? 'same time, root and tree' : 'DIFFERENT RESULT!'}`,
      );
      if (!same) process.exitCode = 1;
    }
    console.log(
      `  memory: tables ${fmtMB(tables)} (Float64 triangle + Int${8 * choiceBytes} choices${fCells > 0 ? ' + F' : ''}${crossing ? ' + deques' : ''}); ` +
        `process maxRSS so far ${fmtMB(maxRss)}`,
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
