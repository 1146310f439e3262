/**
 * `vcoll schedule`: the data phase of one gatherv or scatterv compiled into every rank's
 * schedule (collectives/v-schedule.ts) for the blocks of a distribution — or of an allgatherv
 * (ring, recursive doubling, Bruck: allgather/schedule.ts, the whole data phase, its first
 * exchange included), or of a building block (bcast, gather, scatter, reduce, allreduce,
 * exscan, barrier; basic/world-schedule.ts) with b·unit-bytes bytes per rank — printed as text (schedule/format.ts) or as the
 * WorldSchedule in JSON, with the static checker's verdict (schedule/check.ts): "check: ok"
 * or the problems (JSON: the field `problems`). With `--simulate`, the schedule is then replayed
 * on the simulator (sim/replay.ts, times only) under the command's model, `--runs` times back to
 * back: its virtual time, messages and bytes (JSON: the field `simulation`).
 */
import { COMPILED_ALLGATHER_ALGORITHMS, compileAllgatherSchedule } from '../collectives/allgather/schedule.js';
import { compileVSchedule } from '../collectives/v-schedule.js';
import type { VOp } from '../collectives/v-variants.js';
import { BASIC_SCHEDULE_OPS, compileBasicSchedule, type BasicScheduleOp } from '../collectives/basic/world-schedule.js';
import { InvalidArgumentError } from '../errors.js';
import { linearModel } from '../model/cost-model.js';
import { checkSchedule, type ScheduleProblem } from '../schedule/check.js';
import { formatSchedule } from '../schedule/format.js';
import { replayCheckedSchedule } from '../transports/sim/replay.js';
import type { WorldSchedule } from '../schedule/types.js';
import { blockSizes, parseDistribution } from '../workloads/distributions.js';

/** The operations `vcoll schedule --op` takes. */
export const SCHEDULE_OPS = ['gatherv', 'scatterv', 'allgatherv', ...BASIC_SCHEDULE_OPS] as const;

/** `--algorithm` when it is not given: gatherv/scatterv 'binomial', allgatherv 'ring'. */
export function defaultScheduleAlgorithm(op: ScheduleCommandOptions['op']): string {
  return op === 'allgatherv' ? 'ring' : 'binomial';
}

export interface ScheduleCommandOptions {
  op: VOp | 'allgatherv' | BasicScheduleOp;
  /** Default (undefined): defaultScheduleAlgorithm(op). */
  algorithm?: string;
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
  /** Replay the schedule on the simulator. */
  simulate?: boolean;
  /** Runs back to back of the replay (default 1). */
  runs?: number;
  /** Text: print the ranks' schedules (default true; false: counts, check and simulation only). */
  listing?: boolean;
}

/** What `--simulate` reports: the replay's virtual times (model units), messages and bytes, and its wall time. */
export interface ScheduleSimulation {
  readonly runs: number;
  /** Latest final clock. */
  readonly time: number;
  /** Every rank's final clock. */
  readonly finish: readonly number[];
  readonly messages: number;
  readonly bytes: number;
  /** Wall time of the replay (ms), its check and layout included. */
  readonly wallMs: number;
  /** The loop that ran it: the C one (native/sim, `npm run build:sim`) or the JavaScript one. */
  readonly engine: 'native' | 'js';
}

export interface ScheduleReport {
  /** Every rank's block (elements; the building blocks: b on every rank, none for the barrier). */
  readonly counts: readonly number[];
  readonly schedule: WorldSchedule;
  readonly problems: readonly ScheduleProblem[];
  /** With --simulate and no problems. */
  readonly simulation?: ScheduleSimulation;
}

/** Compiles and checks the schedule the options describe (errors name the option). */
export function compileFromOptions(opts: ScheduleCommandOptions): ScheduleReport {
  if (opts.root >= opts.p) throw new InvalidArgumentError('--root', `must be < --p (${opts.p}), got ${opts.root}`);
  const algorithm = opts.algorithm ?? defaultScheduleAlgorithm(opts.op);
  if (opts.op === 'allgatherv') {
    if (!(COMPILED_ALLGATHER_ALGORITHMS as readonly string[]).includes(algorithm)) {
      throw new InvalidArgumentError('--algorithm', `allgatherv is compiled for ${COMPILED_ALLGATHER_ALGORITHMS.join(', ')}, got '${algorithm}'`);
    }
    const counts = blockSizes(parseDistribution(opts.dist, '--dist'), { p: opts.p, b: opts.b, rho: opts.rho, seed: opts.seed });
    const schedule = compileAllgatherSchedule(algorithm, counts.map((c) => c * opts.unitBytes), undefined, { firstStep: true });
    return { counts, schedule, problems: checkSchedule(schedule) };
  }
  if (opts.op !== 'gatherv' && opts.op !== 'scatterv') {
    if (opts.op === 'exscan' && opts.p < 2) throw new InvalidArgumentError('--p', 'exscan needs at least 2 ranks');
    const counts = new Array<number>(opts.p).fill(opts.op === 'barrier' ? 0 : opts.b);
    const schedule = compileBasicSchedule(opts.op, opts.p, opts.op === 'barrier' ? 0 : opts.b * opts.unitBytes, opts.root);
    return { counts, schedule, problems: checkSchedule(schedule) };
  }
  const counts = blockSizes(parseDistribution(opts.dist, '--dist'), { p: opts.p, b: opts.b, rho: opts.rho, seed: opts.seed });
  const model = linearModel({ alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma, ports: opts.ports, copyAll: opts.copyAll });
  const schedule = compileVSchedule(opts.op, algorithm, counts, { root: opts.root, model, unitBytes: opts.unitBytes });
  return { counts, schedule, problems: checkSchedule(schedule) };
}

/** The text output: the counts, the listing (unless `listing` is false), the checker's verdict, the simulation. */
export function formatScheduleReport(r: ScheduleReport, listing = true): string {
  const lines: string[] = [];
  if (listing || r.counts.length <= 16) lines.push(`counts: ${r.counts.join(',')}`);
  else {
    let [sum, min, max] = [0, Infinity, -Infinity];
    for (const c of r.counts) {
      sum += c;
      if (c < min) min = c;
      if (c > max) max = c;
    }
    lines.push(`counts: ${r.counts.length} blocks, ${sum} elements (${min} to ${max} per rank)`);
  }
  if (listing) lines.push(formatSchedule(r.schedule));
  else lines.push(`schedule '${r.schedule.label}': ${r.schedule.ranks.length} ranks`);
  if (r.problems.length === 0) lines.push('check: ok');
  else {
    lines.push(`check: ${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}`);
    for (const p of r.problems) lines.push(`  ${p.kind}: ${p.message}`);
  }
  const sim = r.simulation;
  if (sim !== undefined) {
    const rate = sim.wallMs >= 10 ? `, ${(sim.messages / sim.wallMs / 1000).toFixed(2)} M msgs/s` : '';
    const runs = sim.runs === 1 ? '1 run' : `${sim.runs} runs back to back`;
    const loop = sim.engine === 'native' ? 'C loop' : 'JavaScript loop';
    lines.push(`simulated (${runs}): time ${sim.time}, ${sim.messages} messages, ${sim.bytes} bytes (replay ${sim.wallMs.toFixed(1)} ms${rate}, ${loop})`);
  }
  return lines.join('\n');
}

/** Replays `r`'s schedule under the options' model (times only). */
function simulate(r: ScheduleReport, opts: ScheduleCommandOptions): ScheduleSimulation {
  const runs = opts.runs ?? 1;
  if (!Number.isSafeInteger(runs) || runs < 1) throw new InvalidArgumentError('--runs', `must be an integer >= 1, got ${runs}`);
  const model = linearModel({ alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma, ports: opts.ports, copyAll: opts.copyAll });
  const t = performance.now();
  // compileFromOptions checked it (simulate runs only when it found no problem)
  const res = replayCheckedSchedule(r.schedule, { model, unitBytes: opts.unitBytes, runs, data: false });
  return { runs, time: res.time, finish: res.finish, messages: res.messages, bytes: res.bytes, wallMs: performance.now() - t, engine: res.engine };
}

/** Runs the command; returns the report (exit status 1 when the checker found problems is the caller's). */
export function runScheduleCommand(opts: ScheduleCommandOptions, out: NodeJS.WritableStream = process.stdout): ScheduleReport {
  const compiled = compileFromOptions(opts);
  const r: ScheduleReport = opts.simulate === true && compiled.problems.length === 0 ? { ...compiled, simulation: simulate(compiled, opts) } : compiled;
  if (opts.format === 'json') {
    const sim = r.simulation === undefined ? {} : { simulation: r.simulation };
    out.write(`${JSON.stringify({ label: r.schedule.label, counts: r.counts, ranks: r.schedule.ranks, problems: r.problems, ...sim })}\n`);
  } else {
    out.write(`${formatScheduleReport(r, opts.listing !== false)}\n`);
  }
  return r;
}
