/**
 * `vcoll schedule`: the data phase of one gatherv or scatterv compiled into every rank's
 * schedule (collectives/v-schedule.ts) for the blocks of a distribution — or of a building
 * block (bcast, gather, scatter, reduce, allreduce, exscan, barrier; basic/world-schedule.ts)
 * with b·unit-bytes bytes per rank — printed as text (schedule/format.ts) or as the
 * WorldSchedule in JSON, with the static checker's verdict (schedule/check.ts): "check: ok"
 * or the problems (JSON: the field `problems`). Nothing runs.
 */
import { compileVSchedule } from '../collectives/v-schedule.js';
import type { VOp } from '../collectives/v-variants.js';
import { BASIC_SCHEDULE_OPS, compileBasicSchedule, type BasicScheduleOp } from '../collectives/basic/world-schedule.js';
import { InvalidArgumentError } from '../errors.js';
import { linearModel } from '../model/cost-model.js';
import { checkSchedule, type ScheduleProblem } from '../schedule/check.js';
import { formatSchedule } from '../schedule/format.js';
import type { WorldSchedule } from '../schedule/types.js';
import { blockSizes, parseDistribution } from '../workloads/distributions.js';

/** The operations `vcoll schedule --op` takes. */
export const SCHEDULE_OPS = ['gatherv', 'scatterv', ...BASIC_SCHEDULE_OPS] as const;

export interface ScheduleCommandOptions {
  op: VOp | BasicScheduleOp;
  algorithm: string;
  p: number;
  dist: string;
  b: number;
  rho: number;
  seed: number;
  root: number;
  alpha: number;
  beta: number;
  gamma: number;
  ports: number;
  copyAll: boolean;
  unitBytes: number;
  format: 'text' | 'json';
}

export interface ScheduleReport {
  /** Every rank's block (elements; the building blocks: b on every rank, none for the barrier). */
  readonly counts: readonly number[];
  readonly schedule: WorldSchedule;
  readonly problems: readonly ScheduleProblem[];
}

/** Compiles and checks the schedule the options describe (errors name the option). */
export function compileFromOptions(opts: ScheduleCommandOptions): ScheduleReport {
  if (opts.root >= opts.p) throw new InvalidArgumentError('--root', `must be < --p (${opts.p}), got ${opts.root}`);
  if (opts.op !== 'gatherv' && opts.op !== 'scatterv') {
    if (opts.op === 'exscan' && opts.p < 2) throw new InvalidArgumentError('--p', 'exscan needs at least 2 ranks');
    const counts = new Array<number>(opts.p).fill(opts.op === 'barrier' ? 0 : opts.b);
    const schedule = compileBasicSchedule(opts.op, opts.p, opts.op === 'barrier' ? 0 : opts.b * opts.unitBytes, opts.root);
    return { counts, schedule, problems: checkSchedule(schedule) };
  }
  const counts = blockSizes(parseDistribution(opts.dist, '--dist'), { p: opts.p, b: opts.b, rho: opts.rho, seed: opts.seed });
  const model = linearModel({ alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma, ports: opts.ports, copyAll: opts.copyAll });
  const schedule = compileVSchedule(opts.op, opts.algorithm, counts, { root: opts.root, model, unitBytes: opts.unitBytes });
  return { counts, schedule, problems: checkSchedule(schedule) };
}

/** The text output: the counts, the listing, the checker's verdict. */
export function formatScheduleReport(r: ScheduleReport): string {
  const lines = [`counts: ${r.counts.join(',')}`, formatSchedule(r.schedule)];
  if (r.problems.length === 0) lines.push('check: ok');
  else {
    lines.push(`check: ${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}`);
    for (const p of r.problems) lines.push(`  ${p.kind}: ${p.message}`);
  }
  return lines.join('\n');
}

/** Runs the command; returns the report (exit status 1 when the checker found problems is the caller's). */
export function runScheduleCommand(opts: ScheduleCommandOptions, out: NodeJS.WritableStream = process.stdout): ScheduleReport {
  const r = compileFromOptions(opts);
  if (opts.format === 'json') {
    out.write(`${JSON.stringify({ label: r.schedule.label, counts: r.counts, ranks: r.schedule.ranks, problems: r.problems })}\n`);
  } else {
    out.write(`${formatScheduleReport(r)}\n`);
  }
  return r;
}
