/**
 * The soak's cases: what one case is, how it is drawn from a seed, and how it is printed as
 * one reproducer token (base64url of its JSON) and read back. Pure: no communication.
 */
import prand from 'pure-rand';
import {
  ALLGATHER_ALGORITHMS,
  ALLGATHERV_ALGORITHMS,
  DISTRIBUTIONS,
  HIERARCHICAL_VARIANT_NAMES,
  PORTABLE_V_ALGORITHMS,
  type DistributionName,
} from '../../src/index.js';

export type Transport = 'sim' | 'threads' | 'mpi';
export const TRANSPORTS: readonly Transport[] = ['sim', 'threads', 'mpi'];

/** Intragroup operations (on the world or a split sub-communicator). */
export const INTRA_OPS = [
  'gatherv',
  'scatterv',
  'allgather',
  'allgatherv',
  'hier-gather',
  'hier-gatherv',
  'bcast',
  'reduce',
  'allreduce',
  'exscan',
  'gather',
  'scatter',
  'barrier',
] as const;
/** Intergroup operations (Kang19), on an intercommunicator made by splitIntercomm. */
export const INTER_OPS = ['inter-allgather', 'inter-allgatherv'] as const;
export type OpName = (typeof INTRA_OPS)[number] | (typeof INTER_OPS)[number];

/** Where a case's element layouts put the blocks at the receiver (gatherv, scatterv, allgatherv, hierarchical gatherv, inter allgatherv). */
export type LayoutKind = 'default' | 'explicit' | 'gaps' | 'permuted' | 'strided';
export const LAYOUT_KINDS: readonly LayoutKind[] = ['default', 'explicit', 'gaps', 'permuted', 'strided'];

export type FaultKind = 'throw' | 'exit' | 'stuck' | 'wrong-count';
export const FAULT_KINDS: readonly FaultKind[] = ['throw', 'exit', 'stuck', 'wrong-count'];
/** Faults planted to test the soak itself (expectation "verified": the soak must report them): wrong counts, or one byte of a result flipped after the op. */
export type PlantKind = 'wrong-count' | 'corrupt';
export const PLANT_KINDS: readonly PlantKind[] = ['wrong-count', 'corrupt'];

/** One collective of a case. Every parameter that depends on the group size is derived at run time from these. */
export interface OpSpec {
  readonly op: OpName;
  /** The algorithm / variant (reduce, allreduce, exscan: `op/variant`, e.g. `sum/vcoll`). */
  readonly variant: string;
  /** Root = root % size of the group. */
  readonly root: number;
  readonly dist: DistributionName;
  /** Average block size (elements), or m of the regular operations. */
  readonly b: number;
  readonly rho: number;
  /** Seed of the counts, displacements and data. */
  readonly seed: number;
  readonly unitBytes: number;
  readonly layout: LayoutKind;
  readonly inPlace: boolean;
  /** 0: one-shot; n > 0: persistent (…Init, then n start() calls). */
  readonly starts: number;
}

export interface Fault {
  readonly kind: FaultKind | 'corrupt';
  /** World rank that misbehaves. */
  readonly rank: number;
  /** Index of the op in `ops` where it misbehaves. */
  readonly op: number;
  /** 'error' (default): the run must reject with a typed error; 'verified': planted failure, the soak must report it. */
  readonly expect?: 'error' | 'verified';
}

export interface Case {
  readonly transport: Transport;
  readonly p: number;
  /** world; split (color rank < splitAt, key reversed when `reverse`); inter (groups rank < splitAt, the rest). */
  readonly comm: 'world' | 'split' | 'inter';
  readonly splitAt: number;
  readonly reverse: boolean;
  /** More than one: an in-flight mix (all issued without awaiting, in the same order on every rank, then awaited together). */
  readonly ops: readonly OpSpec[];
  /** Cost model the trees are built for and (sim) the network charges. */
  readonly model: { readonly alpha: number; readonly beta: number; readonly gamma: number; readonly ports: number };
  readonly fault?: Fault;
}

export type Rng = prand.RandomGenerator;
const int = (rng: Rng, lo: number, hi: number): number => prand.unsafeUniformIntDistribution(lo, hi, rng);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, 0, xs.length - 1)];
const chance = (rng: Rng, x: number): boolean => int(rng, 0, 9999) < x * 10000;

/** The node of every rank used on every transport (unequal, interleaved nodes of about 3 ranks). */
export function nodesFor(p: number): number[] {
  const n = Math.ceil(p / 3);
  return Array.from({ length: p }, (_, i) => (i * 5 + 1) % n);
}

/** Sizes of the groups a case's ops run in. */
export function groupSizes(c: Pick<Case, 'p' | 'comm' | 'splitAt'>): number[] {
  return c.comm === 'world' ? [c.p] : [c.splitAt, c.p - c.splitAt];
}

/** The group (0 or 1) of world rank r and its rank inside it. */
export function groupOf(c: Pick<Case, 'p' | 'comm' | 'splitAt' | 'reverse'>, r: number): { g: number; rank: number; size: number } {
  if (c.comm === 'world') return { g: 0, rank: r, size: c.p };
  const g = r < c.splitAt ? 0 : 1;
  const size = g === 0 ? c.splitAt : c.p - c.splitAt;
  const local = g === 0 ? r : r - c.splitAt;
  return { g, rank: c.comm === 'split' && c.reverse ? size - 1 - local : local, size };
}

export interface GenOptions {
  /** Include in-flight mixes (default true). */
  readonly mixes: boolean;
  /** Fraction of cases with an injected fault. */
  readonly faultRate: number;
  /** Fault kinds allowed on this transport. */
  readonly faults: readonly FaultKind[];
  /** Largest p (sim 64, occasionally 512; threads 8; MPI 4). */
  readonly pMax: number;
  /** Plant this fault in every case that can hold it, with the expectation "verified" (tests the soak itself). */
  readonly plant?: PlantKind;
}

function variantsOf(op: OpName, t: Transport): readonly string[] {
  const native = t === 'mpi' ? ['mpi-native'] : [];
  switch (op) {
    case 'gatherv':
    case 'scatterv':
      return [...PORTABLE_V_ALGORITHMS, ...native];
    case 'allgather':
      return ALLGATHER_ALGORITHMS;
    case 'allgatherv':
      return ALLGATHERV_ALGORITHMS;
    case 'inter-allgather':
    case 'inter-allgatherv':
      return ['root-gathering', 'segmented', ...native];
    case 'hier-gather':
    case 'hier-gatherv':
      return HIERARCHICAL_VARIANT_NAMES;
    case 'bcast':
      return ['binomial', 'scatter-allgather'];
    case 'reduce':
    case 'exscan':
      return ['sum', 'max', 'min', 'bxor'];
    case 'allreduce':
      return ['sum/vcoll', 'max/vcoll', 'bxor/vcoll', ...(t === 'mpi' ? ['sum/mpi-native', 'max/mpi-native'] : [])];
    case 'gather':
    case 'scatter':
    case 'barrier':
      return ['vcoll', ...native];
  }
}

function drawOp(rng: Rng, t: Transport, op: OpName, p: number): OpSpec {
  let variant = pick(rng, variantsOf(op, t));
  // the O(p³) dynamic programs: keep them to p ≤ 128 so one case stays well under a second
  if (p > 128 && (variant === 'optimal' || variant === 'binary')) variant = 'adaptive';
  const r = int(rng, 0, 99);
  const b = r < 8 ? 0 : r < 55 ? int(rng, 1, 8) : r < 93 ? int(rng, 9, 300) : int(rng, 301, t === 'sim' ? 5000 : 40000);
  const persistent = (op === 'gatherv' || op === 'scatterv') && chance(rng, 0.35);
  return {
    op,
    variant,
    root: int(rng, 0, 1 << 20),
    dist: pick(rng, DISTRIBUTIONS),
    b,
    rho: pick(rng, [2, 5, 8]),
    seed: int(rng, 0, 2 ** 30),
    unitBytes: pick(rng, [1, 1, 2, 4, 8]),
    layout: pick(rng, LAYOUT_KINDS),
    inPlace: chance(rng, 0.2),
    starts: persistent ? int(rng, 1, 4) : 0,
  };
}

/** Case `index` of `seed` on transport `t` (independent of every other case: reproducible alone). */
export function drawCase(t: Transport, seed: number, index: number, o: GenOptions): Case {
  const rng = prand.xoroshiro128plus((seed * 1_000_003 + index * 7919 + TRANSPORTS.indexOf(t)) | 0);
  for (let k = 0; k < 4; k++) prand.unsafeUniformIntDistribution(0, 1, rng);
  const pSmall = Math.min(o.pMax, 64);
  const p = o.pMax > 64 && chance(rng, 0.02) ? int(rng, 65, o.pMax) : chance(rng, 0.15) ? int(rng, 1, 3) : int(rng, 1, pSmall);
  let comm: Case['comm'] = pick(rng, ['world', 'world', 'world', 'split', 'inter'] as const);
  if (p < 2 && comm !== 'world') comm = 'world';
  const splitAt = p < 2 ? p : int(rng, 1, p - 1);
  const mix = o.mixes && chance(rng, 0.25);
  const nOps = mix ? int(rng, 2, 4) : 1;
  const pool: readonly OpName[] = comm === 'inter' ? INTER_OPS : INTRA_OPS;
  const ops = Array.from({ length: nOps }, () => drawOp(rng, t, pick(rng, pool), p));
  const ports = t === 'sim' && chance(rng, 0.15) ? int(rng, 2, 3) : 1;
  const model = { alpha: pick(rng, [100, 100, 0, 5, 10000]), beta: pick(rng, [1, 1, 0.01, 10]), gamma: pick(rng, [0, 0, 1]), ports };
  const base: Case = { transport: t, p, comm, splitAt, reverse: chance(rng, 0.5), ops, model };
  if (o.plant === 'corrupt') {
    // every rank that holds a result of op i flips one byte of it (rank is unused)
    const i = base.ops.findIndex((s) => s.op !== 'barrier' && s.op !== 'exscan' && s.b >= 2);
    return i < 0 ? base : { ...base, fault: { kind: 'corrupt', rank: 0, op: i, expect: 'verified' } };
  }
  if (o.plant === 'wrong-count') {
    const fault = faultFor(rng, base, 'wrong-count');
    return fault === undefined ? base : { ...base, fault: { ...fault, expect: 'verified' } };
  }
  if (o.faults.length > 0 && chance(rng, o.faultRate)) {
    const fault = faultFor(rng, base, pick(rng, o.faults));
    if (fault !== undefined) return { ...base, fault };
  }
  return base;
}

/**
 * A fault of `kind` for case `c`, or undefined when none fits: a wrong count needs an op with
 * sizes in a group of at least 2 (a lone rank's sizes agree with themselves) or a root that
 * can contradict its own block.
 */
function faultFor(rng: Rng, c: Case, kind: FaultKind): Fault | undefined {
  const rank = int(rng, 0, c.p - 1);
  // a stuck rank that nobody waits for is a program that never ends, not a communication failure: no transport can tell
  if (kind === 'stuck' && c.comm !== 'inter' && groupOf(c, rank).size < 2) return undefined;
  if (kind !== 'wrong-count') return { kind, rank, op: int(rng, 0, c.ops.length - 1) };
  const size = groupOf(c, rank).size;
  const fits = c.ops.map((s, i) => (wrongCountFits(s, size, c.comm === 'inter' ? c.p - size : 0) ? i : -1)).filter((i) => i >= 0);
  if (fits.length === 0) return undefined;
  return { kind, rank, op: pick(rng, fits) };
}

/** Whether a wrong count of op `s` at a rank of a group of `size` (remote group `remote`) can be seen by someone. */
export function wrongCountFits(s: OpSpec, size: number, remote: number): boolean {
  if (s.op === 'barrier') return false;
  // The MPI library's own calls check nothing beyond MPI: a message shorter than its receive is
  // not an error there (MPI-4.0 §6.1: such a program is erroneous, the library need not say so),
  // so vcoll's mpi-native variants inherit that (README, MPI). Not drawn.
  if (s.variant.includes('mpi-native')) return false;
  if (s.op === 'inter-allgather' || s.op === 'inter-allgatherv') return remote >= 1;
  if (s.op === 'gatherv' || s.op === 'scatterv' || s.op === 'hier-gatherv') return size >= 2 || !s.inPlace;
  return size >= 2;
}

/** The reproducer token of a case. */
export function encodeCase(c: Case): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/** Reads a reproducer token back (throws on a malformed one). */
export function decodeCase(token: string): Case {
  const c = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Case;
  if (c === null || typeof c !== 'object' || !TRANSPORTS.includes(c.transport) || !Array.isArray(c.ops) || !(c.p >= 1)) {
    throw new Error(`not a soak case: ${token.slice(0, 40)}…`);
  }
  return c;
}

/** One line describing a case (for the report beside its reproducer). */
export function describeCase(c: Case): string {
  const ops = c.ops
    .map((s) => `${s.op}:${s.variant}${s.starts ? `×${s.starts}` : ''} ${s.dist} b=${s.b} u=${s.unitBytes} ${s.layout}${s.inPlace ? ' inPlace' : ''}`)
    .join(' + ');
  const fault = c.fault ? ` fault ${c.fault.kind}@rank ${c.fault.rank} op ${c.fault.op}${c.fault.expect === 'verified' ? ' (planted)' : ''}` : '';
  return `${c.transport} p=${c.p} ${c.comm}${c.comm === 'world' ? '' : `@${c.splitAt}`} ${c.ops.length > 1 ? 'mix ' : ''}${ops}${c.model.ports > 1 ? ` ports=${c.model.ports}` : ''}${fault}`;
}
