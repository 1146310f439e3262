/**
 * `npm run bench:inter`: Kang19's experiments — intergroup allgather (settings 1–4,
 * Algorithm 1) and allgatherv (settings 5–8, Algorithm 2) against root gathering (what Open MPI's
 * coll/inter and MPICH ship), measured side by side in one run:
 *
 *   1. on worker threads with small groups (default 8 ranks: 4/4 and 6/2), real bytes, wall
 *      clock: both algorithms of a case run in one worker start-up, interleaved round by round
 *      (warm-ups, then repetitions; the minimum over rounds of the slowest rank's time);
 *   2. on the simulator with the paper's sizes (64 and 256 ranks, 64 KiB … 8 MiB per rank,
 *      full duplex, α = 1000, β = 1 per byte — the model of Kang19 §2), exact virtual times.
 *
 * Prints, per part and rank count, the improvement ratio root-gathering / new algorithm for every
 * setting and size, beside Eq. (5) for the run's group sizes and the paper's value, and the
 * times at the largest size. Every run is verified byte for byte; exit 1 otherwise.
 *
 *   npm run bench:inter [-- --threads-ranks 8 --threads-sizes 65536,524288,4194304
 *                          --sim-ranks 64,256 --sim-sizes 65536,…,8388608 --reps 5 --warmup 2
 *                          --no-threads --no-sim]
 */
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import { Command } from 'commander';
import { parseIntegerListOption, parseIntegerOption, parseNumberOption } from '../src/cli/options.js';
import { INTER_SWEEP } from '../src/cli/inter-command.js';
import { INTER_SETTINGS, interSetting, PAPER_RATIOS, type InterSettingNumber } from '../src/run/inter-settings.js';
import { runInter, type InterReport, type InterTransport } from '../src/run/inter.js';

interface BenchOptions {
  threads: boolean;
  sim: boolean;
  threadsRanks: number[];
  threadsSizes: number[];
  simRanks: number[];
  simSizes: number[];
  reps: number;
  warmup: number;
  alpha: number;
  beta: number;
}

const total = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0);

/**
 * The ratio if the new algorithm took exactly its theorem's transfer bound (α = 0): root
 * gathering's M + 3ΣA + 3ΣB over Theorem 1's M + k_B (Algorithm 1, B the smaller group) or
 * Theorem 3's max(ΣA + max k_A, ΣB + max k_B) (Algorithm 2). Eq. (5) drops these k terms; they
 * are 1/q of M for Algorithm 1, so small groups sit below Eq. (5).
 */
function boundRatio(setting: InterSettingNumber, ranks: number, size: number): number {
  const s = interSetting(setting, ranks, size);
  const sa = total(s.sizesA);
  const sb = total(s.sizesB);
  const m = Math.max(sa, sb);
  const small = s.q <= s.p ? s.kB : s.kA;
  const bound = s.vector ? Math.max(sa + s.kA, sb + s.kB) : m + small;
  return bound === 0 ? 1 : (m + 3 * sa + 3 * sb) / bound;
}

const kib = (b: number): string => (b >= 2 ** 20 ? `${b / 2 ** 20} MiB` : `${b / 1024} KiB`);
const fmt = (x: number): string => x.toPrecision(4);

async function part(transport: InterTransport, ranks: number, sizes: readonly number[], o: BenchOptions, bar: cliProgress.SingleBar): Promise<InterReport[]> {
  const reports: InterReport[] = [];
  for (const setting of INTER_SETTINGS) {
    for (const size of sizes) {
      bar.increment(0, { label: `${transport} ${ranks} ranks, setting ${setting}, ${kib(size)}` });
      const rounds = transport === 'threads' ? { warmup: o.warmup, reps: o.reps } : {};
      reports.push(await runInter({ transport, setting, ranks, size, alpha: o.alpha, beta: o.beta, ...rounds }));
      bar.increment(1);
    }
  }
  return reports;
}

function print(transport: InterTransport, ranks: number, sizes: readonly number[], reports: readonly InterReport[], o: BenchOptions): void {
  const largest = sizes[sizes.length - 1];
  const unit = transport === 'sim' ? 'model units' : 's';
  const head = ['setting', 'p/q', ...sizes.map(kib), 'at the bound', 'Eq. 5', 'paper', `root gathering @${kib(largest)} (${unit})`, `new @${kib(largest)}`];
  const table = new Table({ head });
  for (const setting of INTER_SETTINGS) {
    const rows = sizes.map((size) => reports.find((r) => r.setting === setting && r.size === size));
    const last = rows[rows.length - 1];
    if (last === undefined) continue;
    table.push([
      `${setting} ${setting <= 4 ? '(Alg. 1)' : '(Alg. 2)'}`,
      `${last.p}/${last.q}`,
      ...rows.map((r) => (r === undefined ? '' : `${r.ratio.toFixed(2)}${r.verified ? '' : ' UNVERIFIED'}`)),
      boundRatio(setting, ranks, largest).toFixed(2),
      last.expected.toFixed(2),
      PAPER_RATIOS[setting].toFixed(2),
      fmt(last.rootGathering),
      fmt(last.algorithm),
    ]);
  }
  const how =
    transport === 'sim'
      ? `simulator, full duplex, α = ${o.alpha}, β = ${o.beta} per byte, exact virtual times`
      : `worker threads, wall clock, minimum of ${o.reps} interleaved rounds after ${o.warmup} warm-ups`;
  process.stdout.write(`\n${ranks} ranks on the ${how}: improvement ratio root gathering / new algorithm, per rank's block size\n`);
  process.stdout.write(`${table.toString()}\n`);
  if (transport === 'sim') {
    const off = reports.filter((r) => r.size === largest).map((r) => (r.ratio - r.expected) / r.expected);
    const worst = off.reduce((a, x) => (Math.abs(x) > Math.abs(a) ? x : a), 0);
    process.stdout.write(
      `at ${kib(largest)}: measured ratio vs Eq. 5 for these group sizes, largest deviation ${(100 * worst).toFixed(1)} %` +
        ' ("at the bound": the ratio if the new algorithm took exactly Theorem 1\'s M + k_B or Theorem 3\'s bound; Eq. 5 drops the k term, and Eq. 2 counts whole groups where root gathering moves (n − 1)/n of them, so small groups sit below both)\n',
    );
  }
}

async function bench(o: BenchOptions): Promise<boolean> {
  const parts: [InterTransport, number, number[]][] = [
    ...(o.threads ? o.threadsRanks.map((r): [InterTransport, number, number[]] => ['threads', r, o.threadsSizes]) : []),
    ...(o.sim ? o.simRanks.map((r): [InterTransport, number, number[]] => ['sim', r, o.simSizes]) : []),
  ];
  const total = parts.reduce((a, [, , sizes]) => a + sizes.length * INTER_SETTINGS.length, 0);
  const bar = new cliProgress.SingleBar(
    { format: '{label} [{bar}] {value}/{total}', stream: process.stderr, clearOnComplete: true, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { label: '' });
  const results: [InterTransport, number, number[], InterReport[]][] = [];
  try {
    for (const [transport, ranks, sizes] of parts) results.push([transport, ranks, sizes, await part(transport, ranks, sizes, o, bar)]);
  } finally {
    bar.stop();
  }
  process.stdout.write('Kang19: intergroup allgather(v), root gathering (Open MPI coll/inter, MPICH) vs Algorithms 1 and 2; ratio > 1: the new algorithm is faster\n');
  for (const [transport, ranks, sizes, reports] of results) print(transport, ranks, sizes, reports, o);
  const ok = results.every(([, , , reports]) => reports.every((r) => r.verified));
  process.stdout.write(ok ? '\nevery run verified byte for byte\n' : '\nSOME RUNS DELIVERED WRONG DATA\n');
  return ok;
}

const program = new Command()
  .name('bench:inter')
  .option('--no-threads', 'skip the worker-threads part')
  .option('--no-sim', 'skip the simulator part')
  .option('--threads-ranks <list>', 'p + q on threads (comma list)', parseIntegerListOption('threads-ranks', 2), [8])
  .option('--threads-sizes <list>', 'bytes per rank on threads (comma list)', parseIntegerListOption('threads-sizes', 0), [65536, 524288, 4194304])
  .option('--sim-ranks <list>', 'p + q on the simulator (comma list)', parseIntegerListOption('sim-ranks', 2), [64, 256])
  .option('--sim-sizes <list>', 'bytes per rank on the simulator (comma list)', parseIntegerListOption('sim-sizes', 0), [...INTER_SWEEP])
  .option('--reps <n>', 'timed rounds on threads', parseIntegerOption('reps', 1), 5)
  .option('--warmup <n>', 'untimed rounds on threads', parseIntegerOption('warmup', 0), 2)
  .option('--alpha <x>', 'simulator start-up time per message', parseNumberOption('alpha'), 1000)
  .option('--beta <x>', 'simulator time per byte', parseNumberOption('beta'), 1)
  .action(async (o: BenchOptions) => {
    if (!(await bench(o))) process.exitCode = 1;
  });

await program.parseAsync(process.argv);
