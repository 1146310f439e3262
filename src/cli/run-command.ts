/**
 * `vcoll run`: one gatherv or scatterv on one transport (the virtual-time simulator or worker
 * threads), verified byte for byte on every rank, timed, with its traffic and the model's
 * prediction. JSON output is one object (the contract of RunReport in src/run/job.ts).
 */
import Table from 'cli-table3';
import { parseDistribution } from '../bench/distributions.js';
import type { VAlgorithm } from '../collectives/types.js';
import { CommunicationError, InvalidArgumentError } from '../errors.js';
import { runCase, type RunReport } from '../run/job.js';
import { validateCase, type RunCase, type TransportName, type VOperation } from '../run/spec.js';

export interface RunCommandOptions {
  transport: TransportName;
  p: number;
  op: VOperation;
  algorithm: VAlgorithm;
  dist: string;
  b: number;
  rho: number;
  root: number;
  alpha: number;
  beta: number;
  gamma: number;
  unitBytes: number;
  seed: number;
  persistent: boolean;
  reps: number;
  warmup?: number;
  format: 'json' | 'table';
}

/** The case the options describe (validated; errors name the option). */
export function caseFromOptions(opts: RunCommandOptions): RunCase {
  const c: RunCase = {
    op: opts.op,
    algorithm: opts.algorithm,
    dist: parseDistribution(opts.dist, '--dist'),
    b: opts.b,
    rho: opts.rho,
    seed: opts.seed,
    root: opts.root,
    unitBytes: opts.unitBytes,
    model: { alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma },
    persistent: opts.persistent,
    reps: opts.reps,
    // the simulator is deterministic: no warm-up needed; threads warm up once
    warmup: opts.warmup ?? (opts.transport === 'threads' ? 1 : 0),
  };
  return validateCase(opts.p, c, '--');
}

function formatTime(r: RunReport): string {
  return r.timeUnit === 's' ? `${(r.time * 1e6).toFixed(1)} µs` : `${r.time} (model units)`;
}

export function formatRunTable(r: RunReport): string {
  const t = new Table({ head: ['', r.transport === 'sim' ? 'simulator' : 'worker threads'], style: { head: [], border: [] } });
  const rows: [string, string][] = [
    ['operation', `${r.op}, ${r.algorithm}${r.requestedAlgorithm === 'auto' ? ' (auto)' : ''}${r.persistent ? ', persistent' : ''}`],
    ['p, root', `${r.p}, ${r.root}`],
    ['blocks', `${r.dist}, b = ${r.b}, Σ = ${r.size} elements of ${r.unitBytes} B`],
    ['verified', r.verified ? 'yes' : `NO: ${r.mismatches.join('; ')}`],
    ['time', `${formatTime(r)}${r.reps > 1 ? ` (min of ${r.reps})` : ''}`],
    ['predicted', `${r.predicted} (model: α=${r.model.alpha}, β=${r.model.beta}, γ=${r.model.gamma} per element)`],
    ['messages, bytes', `${r.messages}, ${r.bytes}`],
    ['rounds', `${r.rounds} (construction ${r.constructionRounds} + height ${r.height})`],
  ];
  if (r.persistent) rows.push(['planning', `${r.timeUnit === 's' ? `${((r.planTime ?? 0) * 1e6).toFixed(1)} µs` : r.planTime}, ${r.planMessages} messages, ${r.planBytes} bytes`]);
  t.push(...rows);
  return t.toString();
}

/** Runs the command; resolves with the report (exit status 1 when not verified is the caller's). */
export async function runRun(opts: RunCommandOptions, out: NodeJS.WritableStream = process.stdout): Promise<RunReport> {
  const c = caseFromOptions(opts);
  let report: RunReport;
  try {
    report = await runCase(opts.transport, opts.p, c);
  } catch (err) {
    // a rank rejected its arguments (e.g. two-block with more than two block sizes): bad input
    if (err instanceof CommunicationError && err.cause instanceof InvalidArgumentError) throw err.cause;
    throw err;
  }
  out.write(opts.format === 'json' ? `${JSON.stringify(report)}\n` : `${formatRunTable(report)}\n`);
  return report;
}
