/**
 * The two heterogeneous platforms of Dichev10 §3 as pure, seeded generators: a per-pair
 * Hockney model (pairwiseModel: α_ij + β_ij·m), CPU speeds and block sizes proportional to
 * them ("a setup which assigns each node a message size based on its CPU speed").
 *
 * Units: time in µs, sizes in bytes (one model unit = one byte: run the simulator with
 * unitBytes 1). 1 MB/s = 1 byte/µs, so a bandwidth of B MB/s is β = 1/B µs per byte.
 *
 * The seed gives no table of link parameters or CPU speeds (its Fig. 2 only plots the
 * Grid5000 size distribution), so every number below is an assumption, chosen to be typical
 * of the hardware the seed names; each draw is uniform in the stated range.
 *
 * (a) `hclPlatform`: "the HCL cluster with a single Gigabit Ethernet switch", 14 nodes, one
 *     process per node (Open MPI 1.2.8 in the seed).
 *     - Node i has a start-up share o_i ∈ [25, 50] µs (NIC, driver, TCP stack) and a NIC
 *       throughput b_i ∈ [100, 120] MB/s; α_ij = o_i + o_j ∈ [50, 100] µs and
 *       β_ij = 1/min(b_i, b_j): the usual TCP-over-GigE figures (≈ 50–100 µs latency,
 *       100–120 MB/s), with small per-node variation as on a single switch.
 *     - CPU speed: a relative speed per node in [0.5, 1] (HCL mixes Xeon, Pentium 4,
 *       Celeron and Opteron nodes of 1.8–3.6 GHz; "a trivial benchmark"): ratio ≤ 2.
 *     - `spread: 'wide'` is the seed's "message size distribution with a larger ratio between
 *       maximal and minimal message size": the same speeds raised to the power that makes
 *       max/min = 10.
 * (b) `grid5000Platform`: "39 nodes from 5 clusters located on 2 sites, running one process
 *     per node" (MPICH2 over TCP/IP in the seed). Site 1 holds clusters A (8 nodes), B (8),
 *     C (7); site 2 holds D (8) and E (8).
 *     - intra-cluster: Gigabit Ethernet, α = o_i + o_j with o ∈ [25, 35] µs, β = 1/min(b_i, b_j)
 *       with b ∈ [105, 118] MB/s;
 *     - between clusters of one site (through the site's router): α = 250 µs + o_i + o_j,
 *       β = 1/90 per MB/s (the GigE NICs still bound it, the router costs a little);
 *     - between the sites (the wide-area backbone, ≈ 10 ms round trip): α = 5 ms + o_i + o_j,
 *       β = 1/20 (one TCP stream over a 10 ms RTT with default buffers: ≈ 20 MB/s).
 *     - CPU speed per cluster (relative, e.g. cores × GHz of the generation): A 1.0, B 1.6,
 *       C 2.2, D 1.3, E 2.6, each node ±3 %: the seed's Fig. 2 shows block sizes that differ
 *       by cluster.
 *     - Ranks are placed cluster by cluster (`placement: 'grouped'`, as a machine file lists
 *       them) or in a seeded random order (`'shuffled'`).
 * Copies (γ): 2⁻¹¹ ≈ 0.0005 µs per byte (memcpy at 2 GB/s) on every node.
 *
 * Block sizes: m_i = total · speed_i / Σ speed, rounded by largest remainder so Σ m = total.
 *
 * Every α is rounded to a multiple of 2⁻¹⁰ µs, every β to a multiple of 2⁻²⁰ µs per byte and
 * γ is 2⁻¹¹ µs per byte (≈ 0.0005: memcpy at 2 GB/s): dyadic numbers, so every predicted
 * time (sums of α + β·m for m < 2³² bytes) is exact in floating point, whatever the order
 * of the additions — the simulator and the evaluator agree to the last bit.
 */
import prand from 'pure-rand';
import { InvalidArgumentError } from '../errors.js';
import { pairwiseModel, type CostModel } from '../model/cost-model.js';
import { requireInteger } from '../model/validate.js';
import { maxOf, minOf } from '../util/extremes.js';

export interface Platform {
  readonly name: string;
  readonly p: number;
  /** Per-pair Hockney model, µs and bytes. */
  readonly model: CostModel;
  /** Block size of every rank in bytes, proportional to its CPU speed; Σ = the requested total. */
  readonly sizes: number[];
  /** Relative CPU speed of every rank. */
  readonly cpuSpeed: number[];
  /** Host name of every rank. */
  readonly nodeNames: string[];
  /** Cluster index of every rank (HCL: all 0). */
  readonly cluster: number[];
  /** Site index of every rank (HCL: all 0). */
  readonly site: number[];
}

export interface PlatformOptions {
  /** Seed of the per-node draws (default 1). */
  readonly seed?: number;
  /** Σ of the block sizes in bytes (default 1 MiB). */
  readonly total?: number;
}

export interface HclOptions extends PlatformOptions {
  /** 'cpu' (default): blocks ∝ CPU speed; 'wide': the seed's larger max/min ratio (10). */
  readonly spread?: 'cpu' | 'wide';
}

export interface Grid5000Options extends PlatformOptions {
  /** 'grouped' (default): ranks cluster by cluster; 'shuffled': a seeded random order. */
  readonly placement?: 'grouped' | 'shuffled';
}

/** Copy cost, µs per byte (≈ 0.0005, dyadic). */
const GAMMA = 2 ** -11;

/** x rounded to a multiple of 2^−bits (exact floating-point sums, see the module comment). */
function dyadic(x: number, bits: number): number {
  return Math.round(x * 2 ** bits) / 2 ** bits;
}

const alphaOf = (x: number): number => dyadic(x, 10);
const betaOf = (mbPerS: number): number => dyadic(1 / mbPerS, 20);

type Uniform = (lo: number, hi: number) => number;

function uniformReal(seed: number): Uniform {
  const rng = prand.xoroshiro128plus(seed);
  const scale = 2 ** 30;
  return (lo, hi) => lo + ((hi - lo) * prand.unsafeUniformIntDistribution(0, scale, rng)) / scale;
}

function readCommon(opts: PlatformOptions | undefined): { seed: number; total: number } {
  const seed = requireInteger('seed', opts?.seed ?? 1, -(2 ** 31), 2 ** 31 - 1);
  const total = requireInteger('total', opts?.total ?? 2 ** 20, 0);
  return { seed, total };
}

/** Sizes ∝ weights with Σ = total exactly (largest remainder, ties to the lower rank). */
export function proportionalBlocks(weights: readonly number[], total: number): number[] {
  requireInteger('total', total, 0);
  if (!Array.isArray(weights) || weights.length === 0) throw new InvalidArgumentError('weights', 'must be a non-empty array of positive numbers');
  let sum = 0;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i];
    if (!(w > 0) || !Number.isFinite(w)) throw new InvalidArgumentError(`weights[${i}]`, `must be a positive finite number, got ${w}`);
    sum += w;
  }
  const exact = weights.map((w) => (total * w) / sum);
  const out = exact.map((x) => Math.floor(x));
  let left = total - out.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (let k = 0; left > 0; k++, left--) out[byRemainder[k % out.length].i]++;
  return out;
}

function square(p: number, f: (i: number, j: number) => number): number[][] {
  return Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => (i === j ? 0 : f(i, j))));
}

/** HCL-like single-switch cluster: 14 nodes, Gigabit Ethernet (see the module comment). */
export function hclPlatform(opts?: HclOptions): Platform {
  const { seed, total } = readCommon(opts);
  const spread = opts?.spread ?? 'cpu';
  if (spread !== 'cpu' && spread !== 'wide') throw new InvalidArgumentError('spread', `must be 'cpu' or 'wide', got ${String(spread)}`);
  const p = 14;
  const u = uniformReal(seed);
  const o = Array.from({ length: p }, () => u(25, 50));
  const bw = Array.from({ length: p }, () => u(100, 120));
  let speed = Array.from({ length: p }, () => u(0.5, 1));
  if (spread === 'wide') {
    const lo = minOf(speed, (x) => x);
    const hi = maxOf(speed, (x) => x);
    const e = hi > lo ? Math.log(10) / Math.log(hi / lo) : 1;
    speed = speed.map((s) => (s / hi) ** e);
  }
  const model = pairwiseModel({
    alpha: square(p, (i, j) => alphaOf(o[i] + o[j])),
    beta: square(p, (i, j) => betaOf(Math.min(bw[i], bw[j]))),
    gamma: GAMMA,
  });
  return {
    name: spread === 'wide' ? 'HCL-like, wide block ratio' : 'HCL-like',
    p,
    model,
    sizes: proportionalBlocks(speed, total),
    cpuSpeed: speed,
    nodeNames: Array.from({ length: p }, (_, i) => `hcl${String(i + 1).padStart(2, '0')}`),
    cluster: new Array<number>(p).fill(0),
    site: new Array<number>(p).fill(0),
  };
}

/** The Grid5000-like clusters: name, site, nodes, relative CPU speed. */
export const GRID5000_CLUSTERS: readonly { readonly name: string; readonly site: number; readonly nodes: number; readonly speed: number }[] = [
  { name: 'a', site: 0, nodes: 8, speed: 1.0 },
  { name: 'b', site: 0, nodes: 8, speed: 1.6 },
  { name: 'c', site: 0, nodes: 7, speed: 2.2 },
  { name: 'd', site: 1, nodes: 8, speed: 1.3 },
  { name: 'e', site: 1, nodes: 8, speed: 2.6 },
];

/** Grid5000-like platform: 39 nodes, 5 clusters, 2 sites (see the module comment). */
export function grid5000Platform(opts?: Grid5000Options): Platform {
  const { seed, total } = readCommon(opts);
  const placement = opts?.placement ?? 'grouped';
  if (placement !== 'grouped' && placement !== 'shuffled') {
    throw new InvalidArgumentError('placement', `must be 'grouped' or 'shuffled', got ${String(placement)}`);
  }
  const u = uniformReal(seed);
  const nodes: { cluster: number; site: number; name: string; o: number; bw: number; speed: number }[] = [];
  GRID5000_CLUSTERS.forEach((c, ci) => {
    for (let k = 0; k < c.nodes; k++) {
      nodes.push({ cluster: ci, site: c.site, name: `${c.name}-${k + 1}.site${c.site + 1}`, o: u(25, 35), bw: u(105, 118), speed: c.speed * u(0.97, 1.03) });
    }
  });
  if (placement === 'shuffled') {
    for (let i = nodes.length - 1; i > 0; i--) {
      const j = Math.min(i, Math.floor(u(0, i + 1)));
      [nodes[i], nodes[j]] = [nodes[j], nodes[i]];
    }
  }
  const p = nodes.length;
  const link = (i: number, j: number): { alpha: number; beta: number } => {
    const a = nodes[i];
    const b = nodes[j];
    const o = a.o + b.o;
    if (a.cluster === b.cluster) return { alpha: alphaOf(o), beta: betaOf(Math.min(a.bw, b.bw)) };
    if (a.site === b.site) return { alpha: alphaOf(250 + o), beta: betaOf(90) };
    return { alpha: alphaOf(5000 + o), beta: betaOf(20) };
  };
  const speed = nodes.map((n) => n.speed);
  const model = pairwiseModel({
    alpha: square(p, (i, j) => link(i, j).alpha),
    beta: square(p, (i, j) => link(i, j).beta),
    gamma: GAMMA,
  });
  return {
    name: placement === 'shuffled' ? 'Grid5000-like, shuffled ranks' : 'Grid5000-like',
    p,
    model,
    sizes: proportionalBlocks(speed, total),
    cpuSpeed: speed,
    nodeNames: nodes.map((n) => n.name),
    cluster: nodes.map((n) => n.cluster),
    site: nodes.map((n) => n.site),
  };
}
