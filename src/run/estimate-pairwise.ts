/**
 * Per-pair Hockney model estimation by ping-pong (Dichev10 §3: "we used the Hockney model for
 * our predictions", t(i, j, m) = α_ij + β_ij·m per link), collective over all ranks, on any
 * transport.
 *
 * Schedule: a round-robin tournament (circle method; a bye when p is odd) pairs the ranks in
 * p − 1 (p odd: p) rounds of disjoint pairs, so every measurement runs on a pair whose two
 * ranks do nothing else; the ranks synchronise between rounds (the simulator's ideal clock
 * sync, a barrier elsewhere). In a round, partners i < j first measure i → j, then j → i.
 *
 * Measurement of i → j (i times it): `reps` round trips (after `warmup` untimed ones) of
 * m bytes i → j answered by an empty message j → i, at every size m, and as many empty/empty
 * round trips. The one-way time at m is median(round trip at m) − median(empty/empty)/2: the
 * answer's cost is taken as half an empty round trip (round trips cannot split a latency
 * between the two directions without a global clock; on the simulator an empty message
 * costs nothing, so this is exact there). On real transports each pair first ping-pongs
 * untimed for warmupMs / rounds (freshly started workers are slow for about a second).
 *
 * Fit: least squares over the sizes (simple-statistics' linearRegression) of the one-way
 * times, t(m) = α_ij + β_ij·m, β per byte. A negative fitted α or β (noise on a real
 * transport) is clamped to 0 — the models need non-negative parameters — and counted in
 * `clamped`; `residual` is the RMS difference between the measured one-way times and the
 * returned (clamped) line. Each rank fits its own outgoing links; an allgather of the rows
 * gives every rank the matrices, so every rank returns the same estimate.
 *
 * Cost: p·(p − 1) ordered pairs in p − 1 rounds (p odd: p), each pair (|sizes| + 1)·(warmup +
 * reps) round trips; on the simulator with a per-pair model the time is
 * Σ_rounds max over pairs of (warmup + reps)·Σ_m (t_ij(m) + t_ji(m)), plus the allgather of
 * 4p² + p numbers (⌈log₂p⌉ rounds).
 *
 * Units: with a virtual clock (the simulator) the times are model units and β is per byte
 * (the simulator charges model.comm(i, j, bytes / unitBytes)); elsewhere µs and µs per byte.
 * `pairwiseModelOf` turns an estimate into a pairwiseModel per element of `unitBytes` bytes.
 *
 * The default export is the worker-thread rank program of estimatePairwiseOnThreads.
 */
import { linearRegression, median } from 'simple-statistics';
import { barrier, basicAllgather } from '../collectives/basic/index.js';
import type { Communicator } from '../comm/communicator.js';
import { InvalidArgumentError } from '../errors.js';
import { requireModelFits, type CostModel, type ModelOptions } from '../model/cost-model.js';
import { modelFromSpec, type PairwiseModelSpec } from '../model/model-json.js';
import { runSim } from '../transports/sim/index.js';
import { runMpi, type RunMpiOptions } from '../transports/mpi/run.js';
import { runThreads, type RunThreadsOptions } from '../transports/threads/index.js';

/** Default message sizes (bytes): 1 B … 64 KiB. */
export const DEFAULT_ESTIMATE_SIZES: readonly number[] = [1, 1024, 4096, 16384, 65536];

export interface EstimateOptions {
  /** Message sizes in bytes: integers >= 1, at least two different ones (default 1 B … 64 KiB). */
  readonly sizes?: readonly number[];
  /** Timed round trips per ordered pair and size; their median counts (default 5). */
  readonly reps?: number;
  /** Untimed round trips first, per ordered pair and size (default 0 on the simulator, 2 elsewhere). */
  readonly warmup?: number;
  /**
   * Real transports: ping-pong for this long (ms) in all, split over the rounds, with each
   * round's partner before measuring (default 1000; ignored on the simulator). Freshly started workers are
   * slow for a while (module compilation, JIT): round trips of 100–200 µs fall to ~7 µs.
   */
  readonly warmupMs?: number;
  /** Tag of the measurement messages (default 0x5e5; any tag <= TAG_UB). */
  readonly tag?: number;
}

/** What estimatePairwise returns (the same on every rank). Diagonal entries are 0. */
export interface PairwiseEstimate {
  readonly p: number;
  /** alpha[i][j]: start-up time from i to j (unit per message). */
  readonly alpha: number[][];
  /** beta[i][j]: time per byte from i to j. */
  readonly beta: number[][];
  /** RMS of (measured one-way time − α_ij − β_ij·m) over the sizes. */
  readonly residual: number[][];
  /** Half the median empty round trip between i and j (what was subtracted as the answer's cost). */
  readonly emptyHalfRtt: number[][];
  /** How many fitted values were negative and set to 0. */
  readonly clamped: number;
  readonly sizes: number[];
  readonly reps: number;
  readonly warmup: number;
  /** 'model': the simulator's virtual time; 'us': microseconds. */
  readonly unit: 'us' | 'model';
}

interface Settings {
  readonly sizes: number[];
  readonly reps: number;
  readonly warmup: number;
  readonly warmupMs: number;
  readonly tag: number;
}

/**
 * Validates the options and fills in the defaults; `virtual`: the transport has a virtual clock
 * (the simulator). Errors name the option (and `rank`, when given).
 */
function settings(o: EstimateOptions, virtual: boolean, rank?: number): Settings {
  const where = rank === undefined ? undefined : { rank };
  const intIn = (f: string, v: unknown, min: number, max: number): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new InvalidArgumentError(f, `must be an integer in [${min}, ${max}], got ${String(v)}`, where);
    }
    return v;
  };
  if (o === null || typeof o !== 'object') throw new InvalidArgumentError('options', 'must be an object', where);
  const raw = o.sizes ?? DEFAULT_ESTIMATE_SIZES;
  if (!Array.isArray(raw)) throw new InvalidArgumentError('sizes', 'must be an array of message sizes (bytes)', where);
  const sizes = raw.map((x: unknown, i) => intIn(`sizes[${i}]`, x, 1, 1 << 30));
  if (new Set(sizes).size < 2) throw new InvalidArgumentError('sizes', 'needs at least two different sizes to fit α and β', where);
  return {
    sizes,
    reps: intIn('reps', o.reps ?? 5, 1, 1_000_000),
    warmup: intIn('warmup', o.warmup ?? (virtual ? 0 : 2), 0, 1_000_000),
    warmupMs: virtual ? 0 : intIn('warmupMs', o.warmupMs ?? 1000, 0, 600_000),
    tag: intIn('tag', o.tag ?? 0x5e5, 0, 2 ** 30 - 1),
  };
}

/** Checks estimate options before a run (the collective checks them again on every rank). */
export function checkEstimateOptions(options: EstimateOptions, transport: 'sim' | 'threads' | 'mpi'): void {
  settings(options, transport === 'sim');
}

/**
 * The partner of `rank` in round `r` of the circle-method round-robin over n = p (p even) or
 * p + 1 (p odd) players; -1 for a bye. Player n − 1 stays, the others rotate: in round r the
 * pairs are (n − 1, r) and (r + k, r − k) mod (n − 1).
 */
export function tournamentPartner(rank: number, round: number, p: number): number {
  const n = p % 2 === 0 ? p : p + 1;
  const m = n - 1;
  let partner: number;
  if (rank === m) partner = round;
  else if (rank === round) partner = m;
  else partner = (((2 * round - rank) % m) + m) % m;
  return partner >= p ? -1 : partner;
}

/** Rounds of the tournament: p − 1 for even p, p for odd p (0 for p = 1). */
export function tournamentRounds(p: number): number {
  return p <= 1 ? 0 : p % 2 === 0 ? p - 1 : p;
}

const now = (comm: Communicator): number => (comm.clock ? comm.clock.now() : performance.now() * 1000);
const sync = (comm: Communicator): Promise<void> => (comm.clock ? comm.clock.sync() : barrier(comm));

/** Median round trip, initiator side: `bytes` out, an empty answer back. */
async function timeRoundTrips(comm: Communicator, peer: number, buf: Uint8Array, empty: Uint8Array, s: Settings): Promise<number> {
  const times: number[] = [];
  for (let k = 0; k < s.warmup + s.reps; k++) {
    const t0 = now(comm);
    await comm.send(peer, s.tag, buf);
    await comm.recv(peer, s.tag, empty);
    if (k >= s.warmup) times.push(now(comm) - t0);
  }
  return median(times);
}

/** Responder side of timeRoundTrips. */
async function answerRoundTrips(comm: Communicator, peer: number, buf: Uint8Array, empty: Uint8Array, s: Settings): Promise<void> {
  for (let k = 0; k < s.warmup + s.reps; k++) {
    await comm.recv(peer, s.tag, buf);
    await comm.send(peer, s.tag, empty);
  }
}

interface LinkFit {
  alpha: number;
  beta: number;
  residual: number;
  emptyHalf: number;
  clamped: number;
}

/** Measures this rank's link to `peer` (this rank initiates). */
async function measureLink(comm: Communicator, peer: number, bufs: Uint8Array[], empty: Uint8Array, s: Settings): Promise<LinkFit> {
  const emptyHalf = (await timeRoundTrips(comm, peer, empty, empty, s)) / 2;
  const points: [number, number][] = [];
  for (let k = 0; k < s.sizes.length; k++) {
    points.push([s.sizes[k], (await timeRoundTrips(comm, peer, bufs[k], empty, s)) - emptyHalf]);
  }
  const fit = linearRegression(points);
  const clamped = (fit.b < 0 ? 1 : 0) + (fit.m < 0 ? 1 : 0);
  const alpha = Math.max(0, fit.b);
  const beta = Math.max(0, fit.m);
  let sq = 0;
  for (const [x, y] of points) sq += (y - alpha - beta * x) ** 2;
  return { alpha, beta, residual: Math.sqrt(sq / points.length), emptyHalf, clamped };
}

/** Answers `peer`'s measurement of its link to this rank. */
async function answerLink(comm: Communicator, peer: number, bufs: Uint8Array[], empty: Uint8Array, s: Settings): Promise<void> {
  await answerRoundTrips(comm, peer, empty, empty, s);
  for (const buf of bufs) await answerRoundTrips(comm, peer, buf, empty, s);
}

/**
 * Real transports, untimed: the lower rank of a pair sends `buf` and waits for an empty answer until
 * `ms` have passed, then sends an empty message that ends the loop (the answer's length tells
 * the responder which it got).
 */
async function warmUpPair(comm: Communicator, peer: number, buf: Uint8Array, ms: number, tag: number): Promise<void> {
  const empty = new Uint8Array(0);
  if (comm.rank < peer) {
    const end = performance.now() + ms;
    while (performance.now() < end) {
      await comm.send(peer, tag, buf);
      await comm.recv(peer, tag, empty);
    }
    await comm.send(peer, tag, empty);
  } else {
    while ((await comm.recv(peer, tag, buf)).bytes > 0) await comm.send(peer, tag, empty);
  }
}

/** Values per rank's row: α, β, residual, empty half round trip (p each) and the clamp count. */
const rowLength = (p: number): number => 4 * p + 1;

/**
 * Collective over `comm`: measures every ordered pair's one-way time by ping-pong and fits the
 * Hockney parameters per pair. Every rank resolves with the same estimate.
 */
export async function estimatePairwise(comm: Communicator, options: EstimateOptions = {}): Promise<PairwiseEstimate> {
  const s = settings(options, comm.clock !== undefined, comm.rank);
  const { rank: me, size: p } = comm;
  const unit = comm.clock ? 'model' : 'us';
  const row = new Float64Array(rowLength(p));
  const bufs = s.sizes.map((m) => new Uint8Array(m).fill(me & 0xff));
  const empty = new Uint8Array(0);
  const rounds = tournamentRounds(p);
  await sync(comm);
  for (let r = 0; r < rounds; r++) {
    const peer = tournamentPartner(me, r, p);
    if (peer >= 0) {
      if (s.warmupMs > 0) await warmUpPair(comm, peer, bufs[bufs.length - 1], s.warmupMs / rounds, s.tag);
      const first = Math.min(me, peer);
      for (const initiator of [first, me + peer - first]) {
        if (initiator === me) {
          const fit = await measureLink(comm, peer, bufs, empty, s);
          row[peer] = fit.alpha;
          row[p + peer] = fit.beta;
          row[2 * p + peer] = fit.residual;
          row[3 * p + peer] = fit.emptyHalf;
          row[4 * p] += fit.clamped;
        } else {
          await answerLink(comm, peer, bufs, empty, s);
        }
      }
    }
    await sync(comm);
  }
  // every rank gets every rank's row
  const n = rowLength(p);
  const all = new Float64Array(n * p);
  await basicAllgather(comm, { send: new Uint8Array(row.buffer), recv: new Uint8Array(all.buffer) });
  const matrix = (offset: number): number[][] => Array.from({ length: p }, (_, i) => Array.from(all.subarray(i * n + offset * p, i * n + offset * p + p)));
  let clamped = 0;
  for (let i = 0; i < p; i++) clamped += all[i * n + 4 * p];
  return {
    p,
    alpha: matrix(0),
    beta: matrix(1),
    residual: matrix(2),
    emptyHalfRtt: matrix(3),
    clamped,
    sizes: s.sizes,
    reps: s.reps,
    warmup: s.warmup,
    unit,
  };
}

export interface EstimateModelOptions extends ModelOptions {
  /** Bytes per model element (default 1): β per element = β per byte · unitBytes. */
  unitBytes?: number;
  /** Local copy time per element, one number or one per rank (default 0: not measured). */
  gamma?: number | readonly number[];
}

/** The pairwiseModel spec of an estimate, per element of `unitBytes` bytes (JSON-ready). */
export function pairwiseSpecOf(est: PairwiseEstimate, options: EstimateModelOptions = {}): PairwiseModelSpec {
  const u = options.unitBytes ?? 1;
  if (!(Number.isInteger(u) && u >= 1)) throw new InvalidArgumentError('unitBytes', `must be an integer >= 1, got ${String(u)}`);
  const gamma = options.gamma ?? 0;
  return {
    kind: 'pairwise',
    alpha: est.alpha.map((r) => r.slice()),
    beta: est.beta.map((r) => r.map((b) => b * u)),
    gamma: typeof gamma === 'number' ? gamma : gamma.slice(),
    ports: options.ports ?? 1,
    copyAll: options.copyAll ?? false,
  };
}

/** The estimate as a pairwiseModel (per element of `unitBytes` bytes), to build trees with. */
export function pairwiseModelOf(est: PairwiseEstimate, options: EstimateModelOptions = {}): CostModel {
  return modelFromSpec(pairwiseSpecOf(est, options));
}

/** Runs the estimate on the simulator of `truth` (per-pair or hierarchical models fix p). */
export async function estimatePairwiseOnSim(
  truth: CostModel,
  p: number,
  options: EstimateOptions = {},
  sim: { unitBytes?: number } = {},
): Promise<PairwiseEstimate> {
  requireModelFits(truth, p);
  settings(options, true);
  const res = await runSim(p, (comm) => estimatePairwise(comm, options), { model: truth, ...(sim.unitBytes !== undefined ? { unitBytes: sim.unitBytes } : {}) });
  return res.results[0];
}

/** Runs the estimate on p worker threads (µs); resolves with rank 0's (everyone's) estimate. */
export async function estimatePairwiseOnThreads(p: number, options: EstimateOptions = {}, threads?: RunThreadsOptions): Promise<PairwiseEstimate> {
  if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be a positive integer, got ${String(p)}`);
  settings(options, false);
  const results = await runThreads<PairwiseEstimate>(p, new URL(import.meta.url), options, threads);
  return results[0];
}

/** Runs the estimate on p MPI processes started by mpirun (µs); resolves with rank 0's (everyone's) estimate. */
export async function estimatePairwiseOnMpi(p: number, options: EstimateOptions = {}, mpi?: RunMpiOptions): Promise<PairwiseEstimate> {
  if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be a positive integer, got ${String(p)}`);
  settings(options, false);
  const results = await runMpi<PairwiseEstimate>(p, new URL(import.meta.url), options, mpi);
  return results[0];
}

/** Rank program of worker threads and MPI (runThreads and runMpi load this module). */
export default function estimateProgram(comm: Communicator, options: EstimateOptions): Promise<PairwiseEstimate> {
  return estimatePairwise(comm, options ?? {});
}
