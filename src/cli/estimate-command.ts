/**
 * `vcoll estimate`: measures every ordered pair's Hockney parameters α_ij, β_ij by ping-pong
 * (src/run/estimate-pairwise.ts) on the simulator of a given model or on worker threads,
 * prints a summary (min / median / max of α and β over the links, the fit's residuals, and on
 * the simulator the largest error against the true model) and writes the estimated pairwise
 * model as a JSON document (src/model/model-json.ts) that `loadModelJson` reads back.
 */
import { writeFileSync } from 'node:fs';
import Table from 'cli-table3';
import { median } from 'simple-statistics';
import { InvalidArgumentError } from '../errors.js';
import { linearModel, type CostModel } from '../model/cost-model.js';
import { modelToJson } from '../model/model-json.js';
import { readModelFile } from './model-file.js';
import { checkOutputPath } from './options.js';
import { checkPairwiseEstimate } from '../util/limits.js';
import {
  checkEstimateOptions,
  DEFAULT_ESTIMATE_SIZES,
  estimatePairwiseOnMpi,
  estimatePairwiseOnSim,
  estimatePairwiseOnThreads,
  pairwiseSpecOf,
  type EstimateOptions,
  type PairwiseEstimate,
} from '../run/estimate-pairwise.js';
import { TRANSPORT_LABEL, type TransportName } from '../run/spec.js';

export interface EstimateCommandOptions {
  transport: TransportName;
  /** Ranks (sim: default the truth model's size, else 4; threads: default 4). */
  p?: number;
  /** Simulator: the model to measure, a JSON file (default linear α = 100, β = 1 per element). */
  truth?: string;
  /** Message sizes in bytes. */
  sizes?: number[];
  reps?: number;
  /** Threads: warm-up ping-pong time (ms) before measuring. */
  warmupMs?: number;
  /** Bytes per model element (the truth's and the written model's). */
  unitBytes: number;
  /** The JSON file to write. */
  out: string;
  format: 'table' | 'json';
}

/** Min, median and max of a list. */
export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

/** What the command prints with --format json. */
export interface EstimateSummary {
  readonly transport: TransportName;
  readonly p: number;
  /** 'us' (threads) or 'model' (simulator). */
  readonly unit: 'us' | 'model';
  readonly unitBytes: number;
  readonly sizes: number[];
  readonly reps: number;
  /** Over the off-diagonal links: α per message, β per element of unitBytes bytes. */
  readonly alpha: Spread | undefined;
  readonly beta: Spread | undefined;
  /** RMS residual of each link's fit (time units). */
  readonly residual: Spread | undefined;
  /** Fitted values that were negative and set to 0. */
  readonly clamped: number;
  /** Simulator: largest |estimated − true| / true time over every link and size. */
  readonly maxRelativeError?: number;
  /** Wall-clock seconds of the measurement. */
  readonly seconds: number;
  readonly out: string;
}

/** Min, median and max of `xs` (undefined when empty). */
function spread(xs: number[]): Spread | undefined {
  if (xs.length === 0) return undefined;
  return { min: Math.min(...xs), median: median(xs), max: Math.max(...xs) };
}

function offDiagonal(m: number[][]): number[] {
  return m.flatMap((row, i) => row.filter((_, j) => j !== i));
}

/** Largest relative error of the estimate's predictions against the true model at the measured sizes. */
function maxRelativeError(est: PairwiseEstimate, truth: CostModel, unitBytes: number): number {
  let worst = 0;
  for (let i = 0; i < est.p; i++) {
    for (let j = 0; j < est.p; j++) {
      if (i === j) continue;
      for (const m of est.sizes) {
        const t = truth.comm(i, j, m / unitBytes);
        const e = est.alpha[i][j] + est.beta[i][j] * m;
        worst = Math.max(worst, t === 0 ? Math.abs(e) : Math.abs(e - t) / t);
      }
    }
  }
  return worst;
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(4))));

export function formatEstimate(s: EstimateSummary): string {
  const unit = s.unit === 'us' ? 'µs' : 'model units';
  const row = (label: string, x: Spread | undefined): string[] => [label, ...(x ? [fmt(x.min), fmt(x.median), fmt(x.max)] : ['', '', ''])];
  const t = new Table({ head: ['', 'min', 'median', 'max'], style: { head: [], border: [] } });
  t.push(row(`α (${unit})`, s.alpha), row(`β (${unit} per ${s.unitBytes} B)`, s.beta), row(`fit residual, RMS (${unit})`, s.residual));
  const lines = [
    `Per-pair Hockney estimate on ${TRANSPORT_LABEL[s.transport]}: p = ${s.p}, ${s.p * (s.p - 1)} links, ` +
      `sizes ${s.sizes.join(', ')} B, median of ${s.reps} round trips, ${s.seconds.toFixed(2)} s`,
    t.toString(),
  ];
  if (s.clamped > 0) lines.push(`${s.clamped} negative fitted value(s) set to 0`);
  if (s.maxRelativeError !== undefined) lines.push(`largest relative error against the true model: ${s.maxRelativeError.toExponential(2)}`);
  lines.push(`model written to ${s.out}`);
  return lines.join('\n') + '\n';
}

/** Runs the command: measures, writes the model file, prints the summary. */
export async function runEstimate(opts: EstimateCommandOptions, out: NodeJS.WritableStream = process.stdout): Promise<EstimateSummary> {
  if (opts.truth !== undefined && opts.transport !== 'sim') throw new InvalidArgumentError('--truth', 'only with --transport sim (threads measure themselves)');
  if (opts.warmupMs !== undefined && opts.transport === 'sim') throw new InvalidArgumentError('--warmup-ms', 'only with --transport threads or mpi');
  const u = opts.unitBytes;
  const options: EstimateOptions = {
    ...(opts.sizes !== undefined ? { sizes: opts.sizes } : {}),
    ...(opts.reps !== undefined ? { reps: opts.reps } : {}),
    ...(opts.warmupMs !== undefined ? { warmupMs: opts.warmupMs } : {}),
  };
  try {
    checkEstimateOptions(options, opts.transport);
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw new InvalidArgumentError(`--${e.field.replace('warmupMs', 'warmup-ms')}`, e.detail);
    throw e;
  }
  checkOutputPath('--out', opts.out);
  const t0 = performance.now();
  let est: PairwiseEstimate;
  let truth: CostModel | undefined;
  if (opts.transport === 'sim') {
    truth = opts.truth !== undefined ? readModelFile(opts.truth, '--truth').model : linearModel({ alpha: 100, beta: 1 });
    const p = opts.p ?? truth.size ?? 4;
    if (truth.size !== undefined && truth.size !== p) {
      throw new InvalidArgumentError('--p', `is ${p}, but the --truth model is defined for ${truth.size} ranks`);
    }
    // O(p²) links, O(p³) simulated time: refused at once when too large
    checkPairwiseEstimate('--p', p, options.sizes?.length ?? DEFAULT_ESTIMATE_SIZES.length, options.reps ?? 5);
    est = await estimatePairwiseOnSim(truth, p, options, { unitBytes: u });
  } else if (opts.transport === 'mpi') {
    est = await estimatePairwiseOnMpi(opts.p ?? 4, options);
  } else {
    est = await estimatePairwiseOnThreads(opts.p ?? 4, options);
  }
  const seconds = (performance.now() - t0) / 1000;
  const spec = pairwiseSpecOf(est, { unitBytes: u });
  const description =
    `vcoll estimate --transport ${opts.transport}: ping-pong Hockney fit per ordered pair, sizes ${est.sizes.join(',')} B, ` +
    `median of ${est.reps}; beta per element of ${u} B`;
  writeFileSync(opts.out, modelToJson(spec, { unit: est.unit, description }));
  const summary: EstimateSummary = {
    transport: opts.transport,
    p: est.p,
    unit: est.unit,
    unitBytes: u,
    sizes: est.sizes,
    reps: est.reps,
    alpha: spread(offDiagonal(spec.alpha.map((r) => [...r]))),
    beta: spread(offDiagonal(spec.beta.map((r) => [...r]))),
    residual: spread(offDiagonal(est.residual)),
    clamped: est.clamped,
    ...(truth !== undefined ? { maxRelativeError: maxRelativeError(est, truth, u) } : {}),
    seconds,
    out: opts.out,
  };
  out.write(opts.format === 'json' ? `${JSON.stringify(summary)}\n` : formatEstimate(summary));
  return summary;
}
