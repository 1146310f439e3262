/**
 * The worker-thread rank program of `vcoll run --transport threads`, the main job and the
 * threads benchmark (loaded by runThreads; `export default async function (comm, args)`).
 * One worker start-up serves a whole list of cases: optionally a calibration first (whose
 * α, β, γ then become every case's model, and whose round latency auto's), then every case in order, each timed between
 * barriers and verified on every rank.
 */
import type { Communicator } from '../comm/communicator.js';
import { calibrate, type Calibration, type CalibrationOptions } from './calibrate.js';
import { WALL_TIMER, runCaseOnRank, type RankCaseResult } from './rank.js';
import type { RunCase } from './spec.js';

export interface ThreadsJobArgs {
  readonly cases: readonly RunCase[];
  /** Calibrate the linear model first and use it (per element, µs) as every case's model. */
  readonly calibrate?: CalibrationOptions;
}

export interface ThreadsJobRankResult {
  readonly calibration: Calibration | undefined;
  readonly results: RankCaseResult[];
}

/** The model of a case under a calibration: α per message, β and γ per element of unitBytes bytes (µs). */
export function calibratedModel(cal: Calibration, unitBytes: number): RunCase['model'] {
  return { alpha: cal.alphaUs, beta: cal.betaUs * unitBytes, gamma: cal.gammaUs * unitBytes };
}

/** A case with the calibrated model (its ports kept) and round latency (µs). */
export function calibratedCase(c: RunCase, cal: Calibration): RunCase {
  const model = calibratedModel(cal, c.unitBytes);
  return { ...c, model: c.model.ports === undefined ? model : { ...model, ports: c.model.ports }, roundLatency: cal.roundUs };
}

export default async function threadsProgram(comm: Communicator, args: ThreadsJobArgs): Promise<ThreadsJobRankResult> {
  const calibration = args.calibrate ? await calibrate(comm, args.calibrate) : undefined;
  const results: RankCaseResult[] = [];
  for (const c of args.cases) {
    const run = calibration ? calibratedCase(c, calibration) : c;
    results.push(await runCaseOnRank(comm, run, WALL_TIMER));
  }
  return { calibration, results };
}
