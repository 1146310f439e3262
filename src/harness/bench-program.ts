/**
 * The rank program of `vcoll bench` (the same on the simulator, worker threads and MPI): for
 * every case (operation, distribution, b) it makes every variant ready — the algorithms of the
 * irregular operation and the guideline references (src/run/reference.ts) — then runs, seed
 * 000 §5's method, `warmup` untimed and `reps` timed executions of each, the processes
 * synchronised by the timer (a barrier; the simulator's ideal one) before each execution. The
 * variants of a case take turns execution by execution (their order rotates), so they share
 * the machine's state. Every execution's data is checked on every rank. On the simulator
 * (every rank in the harness's process, `BenchLocal`) the algorithms' blocks are views of one
 * buffer per case and each rank's results are folded into a BenchCollector as it finishes,
 * so nothing of size O(p) is kept per rank.
 */
import type { CollectiveInfo } from '../collectives/types.js';
import type { Communicator } from '../comm/communicator.js';
import { calibrate, type Calibration, type CalibrationOptions } from '../run/calibrate.js';
import { CountingCommunicator } from '../run/counting.js';
import { referenceExecution, type ReferenceKind, type ReferenceVariant } from '../run/reference.js';
import { prepareCase, VIRTUAL_TIMER, WALL_TIMER, type RankTimer } from '../run/rank.js';
import { sharedCaseData, type SharedCaseData } from '../run/data.js';
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

/** What a case's variant measured over every rank: the slowest rank's times, the traffic summed, the first ranks' mismatches. */
export interface BenchVariantTotals {
  readonly times: number[];
  /** The mismatches of the lowest-numbered ranks that had one (at most MISMATCHES_KEPT), in rank order. */
  readonly mismatches: string[];
  readonly messages: number;
  readonly bytes: number;
  /** The root's CollectiveInfo (algorithm variants). */
  readonly info: CollectiveInfo | undefined;
}

/** Mismatches a row keeps (the harness shows the first few). */
export const MISMATCHES_KEPT = 8;

/**
 * Every rank's results folded as they arrive, when the ranks share one process (the
 * simulator): per case and variant O(reps) in all instead of O(reps) per rank, and the ranks
 * return nothing. The totals equal what the harness computes from per-rank results (times:
 * the maximum over the ranks; messages and bytes: sums of integers; mismatches: the lowest
 * ranks' in rank order).
 */
export class BenchCollector {
  private readonly slots: { times: number[]; mismatches: { rank: number; text: string }[]; messages: number; bytes: number; info: CollectiveInfo | undefined }[][];

  constructor(cases: readonly BenchProgramCase[]) {
    this.slots = cases.map((bc) =>
      bc.variants.map(() => ({ times: new Array<number>(bc.base.reps).fill(-Infinity), mismatches: [], messages: 0, bytes: 0, info: undefined })),
    );
  }

  add(ci: number, vi: number, rank: number, isRoot: boolean, r: BenchVariantResult): void {
    const s = this.slots[ci][vi];
    r.times.forEach((t, j) => {
      if (t > s.times[j]) s.times[j] = t;
    });
    s.messages += r.messages;
    s.bytes += r.bytes;
    if (isRoot) s.info = r.info;
    if (r.mismatch !== undefined && (s.mismatches.length < MISMATCHES_KEPT || rank < s.mismatches[s.mismatches.length - 1].rank)) {
      let at = s.mismatches.length;
      while (at > 0 && s.mismatches[at - 1].rank > rank) at--;
      s.mismatches.splice(at, 0, { rank, text: r.mismatch });
      if (s.mismatches.length > MISMATCHES_KEPT) s.mismatches.pop();
    }
  }

  totals(ci: number, vi: number): BenchVariantTotals {
    const s = this.slots[ci][vi];
    return { times: s.times, mismatches: s.mismatches.map((m) => m.text), messages: s.messages, bytes: s.bytes, info: s.info };
  }
}

/**
 * Given by a caller whose ranks share its process (the simulator): the algorithms' blocks
 * and own buffers as views of one case-wide reference and arena (src/run/data.ts), and the
 * results folded into `collector` instead of returned by every rank.
 */
export interface BenchLocal {
  readonly collector: BenchCollector;
  readonly sharedData: boolean;
}

/** The case of one algorithm variant, one object per (case, algorithm) for every rank of the process (prepareCase keeps per-case state by object). */
const VARIANT_CASES = new WeakMap<RunCase, Map<string, RunCase>>();

function variantCase(c: RunCase, algorithm: RunCase['algorithm']): RunCase {
  let byAlgorithm = VARIANT_CASES.get(c);
  if (byAlgorithm === undefined) {
    byAlgorithm = new Map();
    VARIANT_CASES.set(c, byAlgorithm);
  }
  let vc = byAlgorithm.get(algorithm);
  if (vc === undefined) {
    vc = { ...c, algorithm };
    byAlgorithm.set(algorithm, vc);
  }
  return vc;
}

/** One case's shared data (reference and arena) for every rank of the process, built by the first. */
const SHARED_DATA = new WeakMap<RunCase, SharedCaseData>();

function sharedDataOf(c: RunCase, p: number): SharedCaseData {
  const counts = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  let d = SHARED_DATA.get(c);
  if (d === undefined || d.counts !== counts || d.unitBytes !== c.unitBytes) {
    d = sharedCaseData(counts, c.unitBytes);
    SHARED_DATA.set(c, d);
  }
  return d;
}

interface Ready {
  prepare(): void;
  run(): Promise<CollectiveInfo | undefined>;
  check(): string | undefined;
}

async function ready(comm: Communicator, counting: CountingCommunicator, c: RunCase, v: BenchVariant, timer: RankTimer, sharedData: boolean): Promise<Ready> {
  if (v.kind === 'algorithm') {
    const vc = variantCase(c, v.algorithm);
    // sharedDataOf and prepareCase's own look-up of the counts run without an await between them
    const { exec } = await prepareCase(comm, counting, vc, timer, sharedData ? sharedDataOf(c, comm.size) : undefined);
    return exec;
  }
  const counts = sharedBlockSizes(c.dist, { p: comm.size, b: c.b, rho: c.rho, seed: c.seed });
  const ref = referenceExecution(counting, c.op, v.kind, v.variant, counts, c.root, c.unitBytes);
  return { prepare: () => ref.prepare(), run: () => ref.run().then(() => undefined), check: () => ref.check() };
}

async function runCase(comm: Communicator, c: RunCase, variants: readonly BenchVariant[], timer: RankTimer, sharedData: boolean): Promise<BenchVariantResult[]> {
  const counting = new CountingCommunicator(comm);
  const execs: Ready[] = [];
  for (const v of variants) execs.push(await ready(comm, counting, c, v, timer, sharedData));
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

/**
 * The rank program. `local` (the simulator, every rank in the caller's process): results go
 * to its collector (`results` is then empty) and, with `sharedData`, the algorithms' buffers
 * are views of shared ones.
 */
export default async function benchProgram(comm: Communicator, args: BenchProgramArgs, local?: BenchLocal): Promise<BenchRankResult> {
  const timer = args.timer === 'virtual' ? VIRTUAL_TIMER : WALL_TIMER;
  const calibration = args.calibrate ? await calibrate(comm, args.calibrate) : undefined;
  const results: BenchVariantResult[][] = [];
  for (const [ci, bc] of args.cases.entries()) {
    const c = calibration ? calibratedCase(bc.base, calibration) : bc.base;
    const got = await runCase(comm, c, bc.variants, timer, local?.sharedData === true && calibration === undefined);
    if (local === undefined) results.push(got);
    else got.forEach((r, vi) => local.collector.add(ci, vi, comm.rank, comm.rank === c.root, r));
  }
  return { calibration, results };
}
