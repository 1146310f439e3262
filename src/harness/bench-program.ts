/**
 * The rank program of `vcoll bench` (the same on the simulator, worker threads and MPI): for
 * every case (operation, distribution, b) it makes every variant ready — the algorithms of the
 * irregular operation and the guideline references (src/run/reference.ts) — then runs, seed
 * 000 §5's method, `warmup` untimed and `reps` timed executions of each, the processes
 * synchronised by the timer (a barrier; the simulator's ideal one) before each execution. The
 * variants of a case take turns execution by execution (their order rotates), so they share
 * the machine's state. Every execution's data is checked on every rank.
 */
import type { CollectiveInfo } from '../collectives/types.js';
import type { Communicator } from '../comm/communicator.js';
import { calibrate, type Calibration, type CalibrationOptions } from '../run/calibrate.js';
import { CountingCommunicator } from '../run/counting.js';
import { referenceExecution, type ReferenceKind, type ReferenceVariant } from '../run/reference.js';
import { prepareCase, VIRTUAL_TIMER, WALL_TIMER, type RankTimer } from '../run/rank.js';
import type { RunCase } from '../run/spec.js';
import { calibratedCase } from '../run/threads-program.js';
import { sharedBlockSizes } from '../workloads/distributions.js';

/** A variant of a case: one algorithm of the irregular operation, or a guideline reference. */
export type BenchVariant = { readonly kind: 'algorithm'; readonly algorithm: RunCase['algorithm'] } | { readonly kind: ReferenceKind; readonly variant: ReferenceVariant };

export interface BenchProgramCase {
  /** The case (its `algorithm` is replaced by each algorithm variant's; reps and warmup apply to every variant). */
  readonly base: RunCase;
  readonly variants: readonly BenchVariant[];
}

export interface BenchProgramArgs {
  readonly cases: readonly BenchProgramCase[];
  /** Fit α, β, γ first and use them as every case's model (threads, MPI). */
  readonly calibrate?: CalibrationOptions;
  /** 'virtual': the simulator's clock; 'wall': a barrier and performance.now. */
  readonly timer: 'virtual' | 'wall';
}

/** One rank's measurement of one variant of one case. */
export interface BenchVariantResult {
  /** This rank's time of each timed execution (timer units). */
  readonly times: number[];
  readonly mismatch: string | undefined;
  /** Messages and bytes this rank sent in the first timed execution. */
  readonly messages: number;
  readonly bytes: number;
  /** Algorithm variants: what the collective reported (auto resolved). */
  readonly info: CollectiveInfo | undefined;
}

export interface BenchRankResult {
  readonly calibration: Calibration | undefined;
  /** results[case][variant]. */
  readonly results: BenchVariantResult[][];
}

interface Ready {
  prepare(): void;
  run(): Promise<CollectiveInfo | undefined>;
  check(): string | undefined;
}

async function ready(comm: Communicator, counting: CountingCommunicator, c: RunCase, v: BenchVariant, timer: RankTimer): Promise<Ready> {
  if (v.kind === 'algorithm') {
    const { exec } = await prepareCase(comm, counting, { ...c, algorithm: v.algorithm }, timer);
    return exec;
  }
  const counts = sharedBlockSizes(c.dist, { p: comm.size, b: c.b, rho: c.rho, seed: c.seed });
  const ref = referenceExecution(counting, c.op, v.kind, v.variant, counts, c.root, c.unitBytes);
  return { prepare: () => ref.prepare(), run: () => ref.run().then(() => undefined), check: () => ref.check() };
}

async function runCase(comm: Communicator, c: RunCase, variants: readonly BenchVariant[], timer: RankTimer): Promise<BenchVariantResult[]> {
  const counting = new CountingCommunicator(comm);
  const execs: Ready[] = [];
  for (const v of variants) execs.push(await ready(comm, counting, c, v, timer));
  const n = variants.length;
  const times: number[][] = variants.map(() => []);
  const mismatch: (string | undefined)[] = variants.map(() => undefined);
  const messages = new Array<number>(n).fill(0);
  const bytes = new Array<number>(n).fill(0);
  const info: (CollectiveInfo | undefined)[] = variants.map(() => undefined);
  for (let i = 0; i < c.warmup + c.reps; i++) {
    for (let k = 0; k < n; k++) {
      const v = (i + k) % n; // rotate the order execution by execution
      const e = execs[v];
      e.prepare();
      await timer.sync(comm);
      counting.reset();
      const t0 = timer.now(comm);
      const got = await e.run();
      const t = timer.now(comm) - t0;
      if (i >= c.warmup) times[v].push(t);
      if (i === c.warmup) {
        messages[v] = counting.counter.messages;
        bytes[v] = counting.counter.bytes;
      }
      info[v] ??= got;
      mismatch[v] ??= e.check();
    }
  }
  return variants.map((_, v) => ({ times: times[v], mismatch: mismatch[v], messages: messages[v], bytes: bytes[v], info: info[v] }));
}

export default async function benchProgram(comm: Communicator, args: BenchProgramArgs): Promise<BenchRankResult> {
  const timer = args.timer === 'virtual' ? VIRTUAL_TIMER : WALL_TIMER;
  const calibration = args.calibrate ? await calibrate(comm, args.calibrate) : undefined;
  const results: BenchVariantResult[][] = [];
  for (const bc of args.cases) {
    const c = calibration ? calibratedCase(bc.base, calibration) : bc.base;
    results.push(await runCase(comm, c, bc.variants, timer));
  }
  return { calibration, results };
}
