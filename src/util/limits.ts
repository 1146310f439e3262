/**
 * Resources bounded before use: what a request (p ranks, blocks of b elements, a tree
 * construction, a ping-pong estimate) will need in memory and time, estimated from its
 * parameters alone and compared with the machine's limits before any work or allocation.
 * A request above a limit is refused at once with a TooLargeError naming the field, the
 * estimate and the limit (exit status 2 on the command line).
 *
 * The per-rank and per-operation constants were measured (Node 20, x86-64; README
 * "Resource limits" gives the commands); they are deliberately on the high side. The limits:
 *   memory  VCOLL_MAX_MEMORY bytes (suffix K, M, G or T allowed; `off`: no limit), default
 *           half of os.totalmem(); JavaScript objects (simulated ranks, trees) also stay under
 *           V8's heap limit (node --max-old-space-size raises it);
 *   time    VCOLL_MAX_SECONDS of estimated computation (`off`: no limit), default 600.
 */
import { constants as bufferConstants } from 'node:buffer';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { InvalidArgumentError, TooLargeError } from '../errors.js';

export interface ResourceLimits {
  /** Bytes one request may use in all (buffers and objects). */
  readonly memoryBytes: number;
  /** Bytes of JavaScript objects (V8's heap limit, at most memoryBytes). */
  readonly heapBytes: number;
  /** Seconds of estimated computation one request may take. */
  readonly seconds: number;
}

/** Default time budget (s) of one request. */
export const DEFAULT_MAX_SECONDS = 600;

/** Largest typed array (bytes) Node allocates: one buffer (e.g. the root's) may not exceed it. */
export const MAX_BUFFER_BYTES: number = bufferConstants.MAX_LENGTH;

/** Simulator, per rank, empty program: endpoint, communicator, clock, queues (measured ~0.64 KiB). */
export const SIM_RANK_BYTES = 1024;
/** Simulator, per rank, one linear gatherv/scatterv run of `vcoll run` (peak RSS per rank measured 6.9–8.4 KiB at p = 2^17…2^20). */
export const SIM_RUN_LINEAR_RANK_BYTES = 8 * 1024;
/** Simulator, per rank, the binomial tree's run (measured 8.8 KiB at p = 2^18). */
export const SIM_RUN_BINOMIAL_RANK_BYTES = 10 * 1024;
/**
 * Simulator, per rank, the two-block tree's run (peak RSS 11.7 KiB at p = 2^17; at 2^20 10.4 KiB
 * under a 16 GiB heap, and it runs under the 11.8 GiB heap the default limit gives on 24 GiB).
 */
export const SIM_RUN_TWO_BLOCK_RANK_BYTES = 11 * 1024;
/**
 * Simulator, per rank, any other tree algorithm or auto (auto 19.3 KiB at p = 4096…32768).
 */
export const SIM_RUN_TREE_RANK_BYTES = 20 * 1024;
/**
 * Simulator, per rank, the adaptive construction and data phase: peak RSS of `vcoll run
 * --transport sim --algorithm adaptive` (gatherv, random, b = 100) at p = 2^20 under a 16 GiB
 * heap: one-shot 9.8–10.0 KiB, persistent 11.7–11.8 KiB, scatterv 10.6 / 11.5 KiB (one-shot /
 * persistent); each of them also completes, verified, in about the same time under the 11.8 GiB
 * heap that half of a 24 GiB machine gives (the default limit), where the collector keeps less.
 */
export const SIM_RUN_ADAPTIVE_RANK_BYTES = 11 * 1024;
/** `vcoll model` / `vcoll tree`, per rank: sizes, trees, evaluation (measured 0.8 KiB). */
export const TREE_RANK_BYTES = 1024;
/** Seconds per rank of an O(p log p) tree (linear, oblivious, adaptive …), both roots (measured ~23 µs). */
export const TREE_RANK_SECONDS = 25e-6;
/** Seconds per p³ of the O(p³) dynamic programs (binary: 7.5e-10, optimal: 5.6e-10 measured at p = 2000, both roots). */
export const CUBIC_SECONDS = 8e-10;
/** Simulator ping-pong estimate: bytes per round trip recorded (measured ~650 B at p = 100…200). */
export const ESTIMATE_TRIP_BYTES = 700;
/** Simulator ping-pong estimate: seconds per p³ · (sizes · rounds) / 25 (measured 17.8 s at p = 200, 5 sizes, 5 reps). */
export const ESTIMATE_CUBIC_SECONDS = 2.3e-6;

const UNITS: Readonly<Record<string, number>> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

function envNumber(name: string, raw: string | undefined, units: boolean): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const v = raw.trim().toLowerCase();
  if (v === 'off' || v === 'none' || v === 'infinity') return Infinity;
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/.exec(v);
  const x = m && (units || m[2] === '') ? Number(m[1]) * UNITS[m[2]] : NaN;
  if (!(x > 0)) throw new InvalidArgumentError(name, `must be a positive number${units ? ' of bytes (suffix K, M, G, T)' : ''} or "off", got "${raw}"`);
  return x;
}

/** The limits in force (environment read at each call, so tests and callers may change it). */
export function resourceLimits(env: NodeJS.ProcessEnv = process.env): ResourceLimits {
  const memoryBytes = envNumber('VCOLL_MAX_MEMORY', env.VCOLL_MAX_MEMORY, true) ?? Math.floor(totalmem() / 2);
  const seconds = envNumber('VCOLL_MAX_SECONDS', env.VCOLL_MAX_SECONDS, false) ?? DEFAULT_MAX_SECONDS;
  return { memoryBytes, heapBytes: Math.min(memoryBytes, getHeapStatistics().heap_size_limit), seconds };
}

/** Bytes for people: 1.5 GiB, 800 KiB, 12 B. */
export function formatBytes(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${i === 0 ? x : x.toPrecision(3)} ${units[i]}`;
}

function formatSeconds(s: number): string {
  return s < 120 ? `${s.toPrecision(2)} s` : s < 7200 ? `${(s / 60).toPrecision(2)} min` : `${(s / 3600).toPrecision(3)} h`;
}

/**
 * Refuses (TooLargeError(field)) when `bytes` of JavaScript objects (`heap`) or of buffers
 * exceed the limit; `what` says what needs them, e.g. "simulating 1048576 ranks (8 KiB each)".
 */
export function checkMemory(field: string, bytes: number, what: string, options: { heap?: boolean; limits?: ResourceLimits } = {}): void {
  const l = options.limits ?? resourceLimits();
  const heap = options.heap === true;
  const limit = heap ? l.heapBytes : l.memoryBytes;
  if (!(bytes <= limit)) {
    const hint =
      heap && l.heapBytes < l.memoryBytes
        ? "V8's heap limit; raise it with node --max-old-space-size=MiB"
        : 'VCOLL_MAX_MEMORY, default half of the RAM; raise it to allow more';
    throw new TooLargeError(field, `${what} needs about ${formatBytes(bytes)}, above the limit of ${formatBytes(limit)} (${hint})`);
  }
}

/** Refuses (TooLargeError(field)) when the estimated `seconds` exceed the time limit (VCOLL_MAX_SECONDS). */
export function checkSeconds(field: string, seconds: number, what: string, limits: ResourceLimits = resourceLimits()): void {
  if (!(seconds <= limits.seconds)) {
    throw new TooLargeError(
      field,
      `${what} takes about ${formatSeconds(seconds)} (estimated), above the limit of ${formatSeconds(limits.seconds)} (VCOLL_MAX_SECONDS; raise it or set it to "off" to allow more)`,
    );
  }
}

/**
 * V8's semi-space (MiB) for a simulation large enough to need a raised heap. The engine runs
 * the ranks' steps in virtual-time order, so an object a rank makes lives until that rank's next
 * step, after every other rank's: with Node's 16 MiB semi-spaces almost everything survives two
 * scavenges and is copied twice on its way to the old generation. Measured (idle, `vcoll run
 * --transport sim --p 1048576 --op gatherv --dist random --b 100`): linear 39 → 32 s, binomial
 * 103 → 78 s; adaptive at 2^18 38 → 31 s; it costs at most 3 × 128 MiB of young generation.
 */
export const SIM_SEMI_SPACE_MIB = 128;

/** The Node flags of a process that simulates with a heap of `heapMiB` MiB (see SIM_SEMI_SPACE_MIB). */
export function simHeapFlags(heapMiB: number): string[] {
  return [`--max-old-space-size=${heapMiB}`, `--max-semi-space-size=${SIM_SEMI_SPACE_MIB}`];
}

/**
 * The V8 heap (MiB) to run with when `bytes` of JavaScript objects exceed this process's heap
 * limit but fit the memory limit (VCOLL_MAX_MEMORY): twice the estimate (a collector with
 * room to work), at most the memory limit; undefined when the heap already suffices or the
 * memory limit does not (then the checks refuse it as before).
 */
export function heapToRaise(bytes: number, limits: ResourceLimits = resourceLimits()): number | undefined {
  const heapLimit = getHeapStatistics().heap_size_limit;
  if (bytes <= heapLimit || !(bytes <= limits.memoryBytes)) return undefined;
  return Math.ceil(Math.min(2 * bytes, limits.memoryBytes) / 2 ** 20);
}

/** The simulator's own state for p ranks (runSim's entry guard; any rank program). */
export function checkSimRanks(p: number, field = 'p', bytesPerRank = SIM_RANK_BYTES, what = 'the simulator'): void {
  checkMemory(field, p * bytesPerRank, `${what} with ${p} ranks (${formatBytes(bytesPerRank)} per rank)`, { heap: true });
}

/**
 * The data of one gatherv/scatterv run of `vcoll run` / `vcoll bench` with `total` elements
 * of `unitBytes` bytes over p ranks: the root's buffer must be one typed array (≤ MAX_BUFFER_BYTES);
 * in all `copies` copies of the data live at once (blocks, their copies, the root's buffer and
 * its reference, data in flight through the tree).
 */
export function checkRunData(field: string, total: number, unitBytes: number, copies: number): void {
  const bytes = total * unitBytes;
  if (!(bytes <= MAX_BUFFER_BYTES)) {
    throw new TooLargeError(field, `the root's buffer would hold ${bytes} bytes (Σ counts = ${total} elements of ${unitBytes} B), above the largest buffer of ${formatBytes(MAX_BUFFER_BYTES)}`);
  }
  checkMemory(field, bytes * copies, `the data (${formatBytes(bytes)} × ${copies} copies)`);
}

/** Copies of the data a verified run holds at once: blocks and their copies, root buffer and reference, plus in-flight data of trees (≤ tree height). */
export function runDataCopies(p: number, algorithm: string): number {
  return algorithm === 'linear' ? 4 : 4 + Math.ceil(Math.log2(Math.max(2, p)));
}

/** Tree constructions whose dynamic programs take O(p³) time. */
const CUBIC_TREES = new Set(['binary', 'optimal', 'optimal-paper', 'optimal-pairwise']);

/**
 * Estimated seconds of building (and evaluating) `algorithm`'s tree for p ranks `runs` times
 * (e.g. distributions × roots): O(p³) for the dynamic programs, O(p log p) otherwise.
 */
export function treeSeconds(algorithm: string, p: number, runs = 1): number {
  return runs * (CUBIC_TREES.has(algorithm) ? CUBIC_SECONDS * p ** 3 : TREE_RANK_SECONDS * p);
}

/** The memory and time of building trees for p ranks (`vcoll model`, `vcoll tree`). */
export function checkTreeWork(field: string, p: number, algorithms: readonly string[], runs: number): void {
  checkMemory(field, p * TREE_RANK_BYTES, `building trees for ${p} ranks (${formatBytes(TREE_RANK_BYTES)} per rank)`, { heap: true });
  const s = algorithms.reduce((a, alg) => a + treeSeconds(alg, p, runs), 0);
  checkSeconds(field, s, `building ${algorithms.join(', ')} for ${p} ranks${runs > 1 ? ` (${runs} times)` : ''}`);
}

/**
 * A simulated per-pair ping-pong estimate (Dichev10 §3): every ordered pair, `sizes` message
 * sizes, `rounds` round trips each (warm-up and timed): O(p²) records, O(p³) time.
 */
export function checkPairwiseEstimate(field: string, p: number, sizes: number, rounds: number): void {
  const trips = p * (p - 1) * sizes * rounds;
  checkMemory(field, trips * ESTIMATE_TRIP_BYTES, `estimating ${p * (p - 1)} links × ${sizes} sizes × ${rounds} round trips`, { heap: true });
  checkSeconds(field, (ESTIMATE_CUBIC_SECONDS * p ** 3 * sizes * rounds) / 25, `estimating ${p * (p - 1)} links × ${sizes} sizes × ${rounds} round trips`);
}
