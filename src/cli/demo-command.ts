/**
 * The main job (`vcoll demo`, `npm start`): gatherv and scatterv on worker threads — every algorithm, the
 * distributions of Traff18's experiments (§5), p = 8 and b = 100 by default — each result
 * verified byte for byte on every rank, with the measured time beside the model's prediction.
 *
 * The model is calibrated first on the same threads, all p ranks running (src/run/calibrate.ts:
 * α the cost of a small message already there, a round latency from a token passed around
 * all ranks, β from a ping-pong between ranks 0 and 1, γ from a timed local copy), so the
 * trees are built for, auto chooses in, and the predictions are made in this machine's µs. Each case is timed Traff18's way: warm-up, then
 * repetitions, each between barriers; the slowest rank's time, minimum over the repetitions.
 * "call" times the whole collective (construction / schedule distribution included);
 * "start" times only start() of a persistent plan (*Init), which is what the prediction (the
 * evaluator's time of the data-phase tree) describes. Exits with status 1 if any case failed.
 */
import Table from 'cli-table3';
import { DISTRIBUTION_LABELS, blockSizes, type DistributionName } from '../workloads/distributions.js';
import { type VAlgorithm } from '../collectives/types.js';
import { PORTABLE_V_ALGORITHMS } from '../collectives/v-variants.js';
import { InvalidArgumentError } from '../errors.js';
import type { Calibration } from '../run/calibrate.js';
import { runOnThreads, type RunReport } from '../run/job.js';
import { SEED000_DISTRIBUTIONS, V_OPERATIONS, type RunCase, type VOperation } from '../run/spec.js';
import { notApplicable } from '../run/applicable.js';

export interface MainJobOptions {
  readonly p?: number;
  readonly b?: number;
  readonly root?: number;
  readonly unitBytes?: number;
  readonly seed?: number;
  readonly reps?: number;
  readonly warmup?: number;
  readonly ops?: readonly VOperation[];
  readonly algorithms?: readonly VAlgorithm[];
  readonly dists?: readonly DistributionName[];
  /** Where the table goes (default stdout); undefined output: print nothing. */
  readonly out?: NodeJS.WritableStream | null;
}

export interface MainJobRow {
  readonly op: VOperation;
  readonly algorithm: VAlgorithm;
  readonly dist: DistributionName;
  /** Undefined when the algorithm does not apply (two-block with more than two block sizes). */
  readonly call: RunReport | undefined;
  readonly start: RunReport | undefined;
  readonly skipped: string | undefined;
}

export interface MainJobResult {
  readonly calibration: Calibration;
  readonly rows: MainJobRow[];
  /** Every case that ran was verified. */
  readonly ok: boolean;
  readonly seconds: number;
}

const us = (s: number): string => (s * 1e6).toFixed(1);

export function formatMainJob(result: MainJobResult, p: number, b: number): string {
  const c = result.calibration;
  const lines = [
    `vcoll main job: gatherv and scatterv on ${p} worker threads, b = ${b}, ${result.rows.length} cases in ${result.seconds.toFixed(1)} s`,
    `model calibrated here: α = ${c.alphaUs.toFixed(2)} µs, β = ${(c.betaUs * 1e3).toFixed(3)} ns/B, γ = ${(c.gammaUs * 1e3).toFixed(3)} ns/B,` +
      ` round latency ${c.roundUs.toFixed(1)} µs (α: a ${c.smallBytes} B message already there; round: a token around all ${p} ranks;` +
      ` β: ping-pong ${c.smallBytes} B and ${c.largeBytes} B between ranks 0 and 1; γ: local copy)`,
    'call: the whole collective; start: a persistent plan\'s start() only; predicted: the model\'s time of the data-phase tree + the round latency per level',
  ];
  const t = new Table({
    head: ['op', 'algorithm', 'distribution', 'verified', 'call (µs)', 'start (µs)', 'predicted (µs)', 'messages', 'rounds'],
    colAligns: ['left', 'left', 'left', 'left', 'right', 'right', 'right', 'right', 'right'],
    style: { head: [], border: [] },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
  const reasons = new Set<string>();
  for (const r of result.rows) {
    const label = DISTRIBUTION_LABELS[r.dist];
    if (r.call === undefined || r.start === undefined) {
      t.push([r.op, r.algorithm, label, 'n/a', '', '', '', '', '']);
      if (r.skipped !== undefined) reasons.add(`n/a: ${r.algorithm} needs at most two distinct block sizes (${r.skipped})`);
      continue;
    }
    const verified = r.call.verified && r.start.verified;
    const alg = r.algorithm === 'auto' ? `auto → ${r.call.algorithm}` : r.algorithm;
    t.push([r.op, alg, label, verified ? 'yes' : 'NO', us(r.call.time), us(r.start.time), r.start.predicted.toFixed(1), String(r.call.messages), String(r.call.rounds)]);
  }
  lines.push(t.toString(), ...reasons);
  const failed = result.rows.filter((r) => r.call && r.start && !(r.call.verified && r.start.verified));
  for (const r of failed) lines.push(`FAILED ${r.op} ${r.algorithm} ${r.dist}: ${[...(r.call?.mismatches ?? []), ...(r.start?.mismatches ?? [])].join('; ')}`);
  lines.push(result.ok ? 'every result verified' : `${failed.length} case(s) failed verification`);
  return lines.join('\n') + '\n';
}

export async function runMainJob(options: MainJobOptions = {}): Promise<MainJobResult> {
  const p = options.p ?? 8;
  const b = options.b ?? 100;
  const seed = options.seed ?? 1;
  const base = {
    b,
    rho: 5,
    seed,
    root: options.root ?? 0,
    unitBytes: options.unitBytes ?? 1,
    model: { alpha: 0, beta: 0, gamma: 0 }, // replaced by the calibration
    reps: options.reps ?? 5,
    warmup: options.warmup ?? 2,
  };
  const rows: { op: VOperation; algorithm: VAlgorithm; dist: DistributionName; skipped: string | undefined; index: number }[] = [];
  const cases: RunCase[] = [];
  for (const op of options.ops ?? V_OPERATIONS) {
    // worker threads: every algorithm but mpi-native (the MPI library's own, MPI transport only)
    for (const algorithm of options.algorithms ?? PORTABLE_V_ALGORITHMS) {
      for (const dist of options.dists ?? SEED000_DISTRIBUTIONS) {
        const skipped = notApplicable(algorithm, blockSizes(dist, { p, b, rho: base.rho, seed }));
        rows.push({ op, algorithm, dist, skipped, index: skipped ? -1 : cases.length });
        if (!skipped) cases.push({ ...base, op, algorithm, dist, persistent: false }, { ...base, op, algorithm, dist, persistent: true });
      }
    }
  }
  const t0 = performance.now();
  const { calibration, reports } = await runOnThreads(p, cases, { calibrate: {} });
  const seconds = (performance.now() - t0) / 1000;
  const out: MainJobRow[] = rows.map((r) => ({
    op: r.op,
    algorithm: r.algorithm,
    dist: r.dist,
    skipped: r.skipped,
    call: r.index < 0 ? undefined : reports[r.index],
    start: r.index < 0 ? undefined : reports[r.index + 1],
  }));
  const ok = reports.every((r) => r.verified);
  const result: MainJobResult = { calibration: calibration as Calibration, rows: out, ok, seconds };
  if (options.out !== null) (options.out ?? process.stdout).write(formatMainJob(result, p, b));
  return result;
}

/** The options of `vcoll demo` (commander's parsed values). */
export interface DemoCommandOptions {
  readonly p: number;
  readonly b: number;
  readonly root: number;
  readonly unitBytes: number;
  readonly seed: number;
  readonly reps: number;
  readonly warmup: number;
  readonly ops?: VOperation[];
  readonly algorithms?: VAlgorithm[];
  readonly dist?: DistributionName[];
}

/** `vcoll demo [--p 8 --b 100 …]` (and `npm start [-- …]`): the main job; exit status 1 if a case failed. */
export async function runDemoCommand(o: DemoCommandOptions): Promise<void> {
  if (o.root >= o.p) throw new InvalidArgumentError('--root', `must be a rank in [0, ${o.p - 1}], got ${o.root}`);
  const result = await runMainJob({ ...o, dists: o.dist });
  process.exitCode = result.ok ? 0 : 1;
}
