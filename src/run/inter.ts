/**
 * `vcoll inter`: Kang19's intergroup allgather / allgatherv settings (src/run/inter-settings.ts)
 * on the simulator (or for real on worker threads, small groups, seconds): root gathering (what MPICH and Open MPI ship) against the paper's
 * Algorithm 1 (allgather) or Algorithm 2 (allgatherv), both verified byte for byte on every rank,
 * timed as the slowest rank between two ideal barriers.
 *
 * Model: homogeneous, full duplex (one send and one receive at a time, Kang19 §2): α = t_s per
 * message, β = t_w per byte. Scale: the simulator moves real bytes, and p·q·8 MiB does not fit in
 * memory; every block is simulated with ⌈bytes/scale⌉ real bytes and β·scale per real byte, so
 * the transfer terms keep their logical size (α terms are unchanged). `scale` is the smallest
 * power of two that keeps the run's buffers under `maxBytes` (reported); a block keeps at least
 * one real byte, so the receive buffers never go below 2pq bytes (interSimBytes).
 */
import { InvalidArgumentError } from '../errors.js';
import { linearModel } from '../model/cost-model.js';
import { checkMemory, checkSimRanks, formatBytes, SIM_RUN_TREE_RANK_BYTES } from '../util/limits.js';
import { runSim } from '../transports/sim/index.js';
import { runThreads } from '../transports/threads/index.js';
import { interRank, type InterRankArgs, type InterRankResult } from './inter-rank.js';
import { expectedRatio, interSetting, type InterSettingNumber } from './inter-settings.js';
import { interBlockScale, simulatedSizes } from './inter-block-scale.js';
import { maxOf } from '../util/extremes.js';

export type InterTransport = 'sim' | 'threads';

export interface InterRunOptions {
  /** Default 'sim'. Threads: real bytes (no scaling), times in seconds. */
  readonly transport?: InterTransport;
  readonly setting: InterSettingNumber;
  /** p + q. */
  readonly ranks: number;
  /** Bytes per rank of the larger block. */
  readonly size: number;
  /** Start-up time per message (model units). */
  readonly alpha: number;
  /** Time per byte (model units). */
  readonly beta: number;
  /** Bytes of all receive buffers together above which blocks are scaled down (default 128 MiB). */
  readonly maxBytes?: number;
  /** Untimed rounds before the timed ones (default: 0 on the simulator, which is deterministic; 2 on threads). */
  readonly warmup?: number;
  /** Timed rounds; each algorithm's time is the minimum over them of the slowest rank's (default: 1 on the simulator, 5 on threads). */
  readonly reps?: number;
}

/** The JSON contract of `vcoll inter --format json` (a contract: scripts read it), plus context fields. */
export interface InterReport {
  readonly setting: InterSettingNumber;
  readonly p: number;
  readonly q: number;
  readonly kA: number;
  readonly kB: number;
  /** Virtual time of the root-gathering algorithm (slowest rank). */
  readonly rootGathering: number;
  /** Virtual time of Algorithm 1 (settings 1–4) or Algorithm 2 (5–8). */
  readonly algorithm: number;
  /** rootGathering / algorithm. */
  readonly ratio: number;
  /** Kang19 Eq. (5) for these block sizes. */
  readonly expected: number;
  readonly verified: boolean;
  readonly size: number;
  /** Logical bytes per real byte of a simulated block (inter-block-scale.ts); 1 on threads. */
  readonly scale: number;
  /**
   * The times are the model's for the requested sizes: scale 1. Scaled runs (scale > 1) keep
   * the blocks' transfer terms, but the algorithms' small control messages (counts, trailers)
   * are charged β · scale per byte and their size thresholds see the scaled sizes, so their
   * times are approximate (docs/cli.md, `vcoll inter`, gives the measured deviation).
   */
  readonly exact: boolean;
  /**
   * No scale divides every block within the memory budget (arithmetic sizes at large p + q):
   * blocks are rounded to multiples of `scale` (inter-block-scale.ts), and `expected` is that
   * of the rounded sizes.
   */
  readonly rounded: boolean;
  readonly model: { readonly alpha: number; readonly beta: number; readonly ports: 'full-duplex' };
  /** 'sim': model units; 'threads': seconds (measured). */
  readonly transport: InterTransport;
  /** Untimed and timed rounds (both algorithms interleaved in every round). */
  readonly warmup: number;
  readonly reps: number;
}

/** Bytes of all receive buffers together above which the blocks are scaled down (runInter's default maxBytes). */
export const INTER_MAX_BYTES = 128 * 2 ** 20;

/**
 * What a simulated run of the settings takes besides its per-rank and data parts: Node, the
 * code, the engine, and most of the final stages that are quadratic by design — the
 * (pipelined) ring over a group (Kang19 ref [16]) holds O(n) operations per rank — which the
 * settings only reach while the scaled blocks are large, at P ≤ 4096 (measured ≤ 1.2 GB;
 * setting 3 at P = 4096, 3.0 GB, exceeds the estimate, far below any limit).
 */
export const INTER_SIM_FIXED_BYTES = 2 ** 30;

/**
 * Per simulated rank: its endpoint, world communicator, the intercommunicator (both groups'
 * world ranks are views of one shared table: comm/group.ts worldRange), the collectives'
 * schedules and requests (their layouts shared: collectives/allgather/shared-layout.ts), and
 * the collector's slack. Fitted to maxRSS (/usr/bin/time, size 64 KiB, settings 1–8, P = 2^11
 * … 2^15: 0.6 → 3.8 GB for the heaviest, settings 7 and 8, when root gathering's broadcast
 * still held a padded buffer per rank; 2.9 GB since, settings 5–8; docs/cli.md, `vcoll inter`).
 */
export const INTER_SIM_RANK_BYTES = 48 * 1024;

/**
 * Copies of the receive data alive at once: every rank's receive buffer, the final stage's
 * Bruck buffer of the blocks in flight (Kang19 §4: the intragroup allgatherv), the root
 * gathering's broadcast pieces.
 */
export const INTER_SIM_DATA_COPIES = 3;

/**
 * The bytes of a simulated run of the settings on `ranks` = p + q ranks: fixed, per rank, and
 * the real receive data. The blocks are scaled to keep the receive buffers under
 * INTER_MAX_BYTES, but a block is at least one real byte and every rank receives every remote
 * block: 2pq ≤ ranks²/2 bytes more — the one part that stays quadratic, by design (1 byte per
 * pair: 2 GiB at p + q = 2^16).
 */
export function interSimBytes(ranks: number, maxBytes = INTER_MAX_BYTES): number {
  return INTER_SIM_FIXED_BYTES + ranks * INTER_SIM_RANK_BYTES + INTER_SIM_DATA_COPIES * (maxBytes + interFloorBytes(ranks));
}

/**
 * Real receive bytes a scaled run may hold beyond INTER_MAX_BYTES (inter-block-scale.ts's
 * budget): (p + q)²/2 — a block is at least one real byte, and there are 2pq ≤ (p + q)²/2
 * (rank, remote block) pairs. Not more: larger real blocks at p + q = 2^16 turn the final
 * stages into the (pipelined) ring, O(n) operations per rank (setting 3 with 16 KiB blocks
 * exact, 5pq real bytes: past 21 GB of RSS, stopped).
 */
export function interFloorBytes(ranks: number): number {
  return (ranks * ranks) / 2;
}

/**
 * Refuses (TooLargeError naming `field`) a simulated run of the settings on `ranks` ranks
 * whose ranks (the JavaScript heap) or whose whole run (interSimBytes) would not fit.
 */
export function checkInterRanks(ranks: number, field = 'ranks'): void {
  checkSimRanks(ranks, field, SIM_RUN_TREE_RANK_BYTES, 'simulating the intergroup settings');
  checkMemory(
    field,
    interSimBytes(ranks),
    `simulating the intergroup settings on ${ranks} simulated ranks (${formatBytes(INTER_SIM_FIXED_BYTES)} + ${formatBytes(INTER_SIM_RANK_BYTES)} per rank + ${INTER_SIM_DATA_COPIES} × the receive buffers, ≥ 1 byte per pair of ranks)`,
  );
}

const INTER_PROGRAM = new URL(import.meta.url.endsWith('.ts') ? './inter-rank.ts' : './inter-rank.js', import.meta.url);

/**
 * Every algorithm of `args` in one job, interleaved round by round; per algorithm the minimum
 * over the timed rounds of the slowest rank's time (Traff18 §5's method), and whether every
 * rank's data was right in every round.
 */
async function measure(transport: InterTransport, args: InterRankArgs, alpha: number, beta: number): Promise<{ time: number; verified: boolean }[]> {
  const ranks = args.sizes[0].length + args.sizes[1].length;
  const results =
    transport === 'sim'
      ? (await runSim(ranks, (comm) => interRank(comm, args), { model: linearModel({ alpha, beta, gamma: 0 }), ports: 'full-duplex' })).results
      : await runThreads<InterRankResult>(ranks, INTER_PROGRAM, args);
  return args.algorithms.map((_, a) => {
    const reps = results[0].times[a].length;
    let best = Infinity;
    for (let i = 0; i < reps; i++) best = Math.min(best, maxOf(results, (r) => r.times[a][i]));
    return { time: best, verified: results.every((r) => r.ok[a]) };
  });
}

function rounds(name: 'warmup' | 'reps', v: number | undefined, fallback: number, min: number): number {
  const n = v ?? fallback;
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(name, `must be an integer >= ${min}, got ${n}`);
  return n;
}

export async function runInter(o: InterRunOptions): Promise<InterReport> {
  if (!(o.alpha >= 0)) throw new InvalidArgumentError('alpha', `must be >= 0, got ${o.alpha}`);
  if (!(o.beta >= 0)) throw new InvalidArgumentError('beta', `must be >= 0, got ${o.beta}`);
  // the simulated ranks' memory, before the settings' block lists are drawn
  if ((o.transport ?? 'sim') === 'sim' && typeof o.ranks === 'number') checkInterRanks(o.ranks);
  const s = interSetting(o.setting, o.ranks, o.size);
  const maxBytes = o.maxBytes ?? INTER_MAX_BYTES;
  const transport = o.transport ?? 'sim';
  // frozen real sizes: every simulated rank shares them, and the layouts derived from them
  // (interRank); on threads the bytes are real (scale 1)
  const scaled = transport === 'threads' ? interBlockScale(s.sizesA, s.sizesB, Infinity, 0) : interBlockScale(s.sizesA, s.sizesB, maxBytes, interFloorBytes(o.ranks));
  if (transport === 'threads' && scaled.realBytes > maxBytes) {
    throw new InvalidArgumentError('size', `on threads the blocks are real: ${scaled.realBytes} bytes of receive buffers exceed ${maxBytes}; use fewer ranks or a smaller size`);
  }
  const { scale } = scaled;
  const rounded = !scaled.blocksExact;
  const real = [scaled.realA, scaled.realB];
  const beta = o.beta * scale;
  const warmup = rounds('warmup', o.warmup, transport === 'sim' ? 0 : 2, 0);
  const reps = rounds('reps', o.reps, transport === 'sim' ? 1 : 5, 1);
  const [root, alg] = await measure(transport, { algorithms: ['root-gathering', 'segmented'], vector: s.vector, sizes: real, warmup, reps }, o.alpha, beta);
  return {
    setting: s.setting,
    p: s.p,
    q: s.q,
    kA: s.kA,
    kB: s.kB,
    rootGathering: root.time,
    algorithm: alg.time,
    ratio: alg.time > 0 ? root.time / alg.time : 1,
    expected: !rounded ? expectedRatio(s.sizesA, s.sizesB) : expectedRatio(simulatedSizes(scaled.realA, scale), simulatedSizes(scaled.realB, scale)),
    verified: root.verified && alg.verified,
    size: o.size,
    scale,
    exact: scale === 1,
    rounded,
    model: { alpha: o.alpha, beta: o.beta, ports: 'full-duplex' },
    transport,
    warmup,
    reps,
  };
}
