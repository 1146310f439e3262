/**
 * The memory of a `vcoll bench` run on the simulator, estimated before any work from the
 * configuration alone (src/util/limits.ts has the limits: V8's heap for the ranks' objects,
 * VCOLL_MAX_MEMORY for everything), per process count:
 *
 *   objects  p × (the simulator's own state + the bench program's + every variant's ready
 *            state + the largest state of one variant running): all variants of a case are
 *            made ready on every rank before the first execution, then run one at a time;
 *   data     per case, the algorithms' data (Σ counts × unit bytes × runDataCopies) and the
 *            references' (p·max m_i × unit bytes × referenceDataCopies: the regular gather /
 *            scatter moves every block padded to the largest, its inner ranks holding their
 *            subtrees' blocks at once).
 *
 * The guideline references (src/run/reference.ts) cost O(1) per rank beside their padded
 * blocks (the counts' maximum and displacements are computed once per run, not per rank), so
 * they grow like the algorithms — O(p log p · max m_i) bytes — but with their own constants:
 * a run whose algorithms fit may not fit with its references. `referencePlan` tells, per p,
 * whether the references fit and, when not, the largest p each would fit at; the harness then
 * refuses or drops them (src/harness/harness.ts).
 *
 * Per-rank constants measured on Node 20, x86-64, at p = 16384 … 131072 (docs/measurements.md,
 * "vcoll bench on the simulator at scale"); like src/util/limits.ts's, on the high side.
 */
import { TooLargeError } from '../errors.js';
import { sharedBlockSizes, type DistributionName } from '../workloads/distributions.js';
import { formatBytes, resourceLimits, runDataCopies, SIM_RANK_BYTES, type ResourceLimits } from '../util/limits.js';
import { maxOf } from '../util/extremes.js';
import type { BenchConfig } from './results.js';
import type { VOperation } from '../run/spec.js';

/** Per rank, the bench program itself on the simulator: its case loop, counting communicator, timer and folded results. */
export const SIM_BENCH_RANK_BYTES = 2 * 1024;
/** Per rank and variant made ready (its execution's closures and buffer views): every variant of a case is ready at once. */
export const SIM_BENCH_VARIANT_BYTES = 1024;
/**
 * Per rank, what running one variant holds while it runs (schedules, requests, the
 * simulator's state of its messages); the variants of a case run one at a time, so the
 * largest counts. Measured live (heap after a full GC, sampled) at p = 16384 and 32768:
 * linear 6 KiB, binomial 6 KiB, adaptive 10 KiB, a reference 28 KiB (its recursive-doubling
 * allreduce: ⌈log₂p⌉ exchanges compiled per rank) beside the bench's own ~1 KiB.
 */
export const SIM_BENCH_LINEAR_RUN_BYTES = 6 * 1024;
export const SIM_BENCH_TREE_RUN_BYTES = 12 * 1024;
export const SIM_BENCH_REFERENCE_RUN_BYTES = 36 * 1024;

/** The references' copies of their padded data at once: the blocks, the root's buffers, the binomial tree's inner ranks' subtrees (≤ ⌈log₂p⌉). */
export function referenceDataCopies(p: number): number {
  return 4 + Math.ceil(Math.log2(Math.max(2, p)));
}

/** Per rank, running an algorithm variant on the simulator. */
export function simAlgorithmRunBytes(algorithm: string): number {
  return algorithm === 'linear' ? SIM_BENCH_LINEAR_RUN_BYTES : SIM_BENCH_TREE_RUN_BYTES;
}

/** The key of ReferencePlan's largestP for every reference together. */
export const ALL_REFERENCES = 'all references';

/** A guideline reference of a run: its row name and where it runs. */
export interface ReferenceRef {
  readonly op: VOperation;
  readonly kind: 'gl1' | 'gl2';
  readonly name: string;
}

/** The memory of one process count of a bench run on the simulator. */
export interface BenchMemory {
  readonly p: number;
  /** Objects of the ranks without / with the references (bytes, V8's heap). */
  readonly heap: number;
  readonly heapWithReferences: number;
  /** Buffers of the largest case without / with the references. */
  readonly data: number;
  readonly dataWithReferences: number;
}

interface CaseShape {
  /** Σ counts and the largest block of a case at the estimated p. */
  readonly total: number;
  readonly max: number;
  readonly dist: DistributionName;
}

/** Every (dist, b) case's total and largest block at p. */
function caseShapes(c: BenchConfig, p: number): CaseShape[] {
  const shapes: CaseShape[] = [];
  for (const dist of c.dists) {
    for (const b of c.bs) {
      const sizes = sharedBlockSizes(dist, { p, b, rho: c.rho, seed: c.seed });
      let total = 0;
      for (const x of sizes) total += x;
      shapes.push({ total, max: Math.max(0, maxOf(sizes, (x) => x)), dist });
    }
  }
  return shapes;
}

/**
 * The estimate at p' ≤ p from the case shapes at p (scaled: totals in proportion to p', the
 * largest block as at p): used to find the largest p at which something fits.
 */
function estimate(c: BenchConfig, p: number, shapes: readonly CaseShape[], at: number, kinds: ReadonlySet<'gl1' | 'gl2'>): BenchMemory {
  const algorithmsRun = Math.max(...c.algorithms.map(simAlgorithmRunBytes));
  const algRank = SIM_RANK_BYTES + SIM_BENCH_RANK_BYTES + c.algorithms.length * SIM_BENCH_VARIANT_BYTES + algorithmsRun;
  const copies = Math.max(...c.algorithms.map((a) => runDataCopies(at, a)));
  const refCopies = referenceDataCopies(at);
  const u = c.unitBytes;
  let refsPerCase = 0;
  let data = 0;
  let dataWithReferences = 0;
  for (const s of shapes) {
    const refs = (kinds.has('gl2') ? 1 : 0) + (kinds.has('gl1') && s.dist === 'same' ? 1 : 0);
    refsPerCase = Math.max(refsPerCase, refs);
    const algData = ((s.total * at) / p) * u * copies;
    data = Math.max(data, algData);
    dataWithReferences = Math.max(dataWithReferences, algData + refs * at * s.max * u * refCopies);
  }
  return {
    p: at,
    heap: at * algRank,
    heapWithReferences: at * (algRank + refsPerCase * SIM_BENCH_VARIANT_BYTES + (refsPerCase > 0 ? Math.max(0, SIM_BENCH_REFERENCE_RUN_BYTES - algorithmsRun) : 0)),
    data,
    dataWithReferences,
  };
}

function fits(m: BenchMemory, withReferences: boolean, l: ResourceLimits): boolean {
  const heap = withReferences ? m.heapWithReferences : m.heap;
  const data = withReferences ? m.dataWithReferences : m.data;
  return heap <= l.heapBytes && heap + data <= l.memoryBytes;
}

/** What one process count's references do: run, or not fit (each one's largest p alone beside the algorithms). */
export interface ReferencePlan {
  readonly p: number;
  readonly memory: BenchMemory;
  /** The references run at this p (empty: none configured). */
  readonly references: readonly ReferenceRef[];
  /** Undefined when they fit; else why not, and the largest p they fit at: ALL_REFERENCES together, then each alone beside the algorithms (0: at none). */
  readonly tooLarge?: { readonly reason: string; readonly largestP: ReadonlyMap<string, number> };
}

/** The references a configuration runs at p (names as the rows give them). */
export function referencesOf(c: BenchConfig, referenceName: (op: VOperation, kind: 'gl1' | 'gl2') => string): ReferenceRef[] {
  if (c.references === 'none') return [];
  const refs: ReferenceRef[] = [];
  for (const op of c.ops) {
    if (c.dists.includes('same')) refs.push({ op, kind: 'gl1', name: referenceName(op, 'gl1') });
    refs.push({ op, kind: 'gl2', name: referenceName(op, 'gl2') });
  }
  return refs;
}

/** The heap limit in words: V8's (raise with --max-old-space-size) or VCOLL_MAX_MEMORY when that is lower. */
function heapLimitText(l: ResourceLimits): string {
  return l.heapBytes < l.memoryBytes
    ? `V8's heap limit of ${formatBytes(l.heapBytes)} (raise it with node --max-old-space-size=MiB, e.g. in NODE_OPTIONS)`
    : `the limit of ${formatBytes(l.memoryBytes)} (VCOLL_MAX_MEMORY, default half of the RAM; raise it to allow more)`;
}

function memoryLimitText(l: ResourceLimits): string {
  return `the limit of ${formatBytes(l.memoryBytes)} (VCOLL_MAX_MEMORY, default half of the RAM; raise it to allow more)`;
}

function describe(m: BenchMemory, l: ResourceLimits): string {
  return m.heapWithReferences > l.heapBytes
    ? `the ranks' objects with the references need about ${formatBytes(m.heapWithReferences)} (without: ${formatBytes(m.heap)}), above ${heapLimitText(l)}`
    : `the run with the references needs about ${formatBytes(m.heapWithReferences + m.dataWithReferences)} (without: ${formatBytes(m.heap + m.data)}), above ${memoryLimitText(l)}`;
}

/** The largest p' ≤ p at which `ok(p')` (monotone: true up to some p'), 0 when at none. */
function largestP(p: number, ok: (at: number) => boolean): number {
  if (!ok(1)) return 0;
  let lo = 1;
  let hi = p;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The memory of a bench run on the simulator at every p of `c`, checked before any work:
 * TooLargeError('p') when the algorithms alone do not fit (naming the estimate, the limit and
 * the largest p that fits); per p, whether the references fit beside them.
 */
export function planSimBenchMemory(c: BenchConfig, references: readonly ReferenceRef[], limits: ResourceLimits = resourceLimits()): ReferencePlan[] {
  const plans: ReferencePlan[] = [];
  const kinds = new Set(references.map((r) => r.kind));
  for (const p of c.ps) {
    const shapes = caseShapes(c, p);
    const m = estimate(c, p, shapes, p, kinds);
    if (!fits(m, false, limits)) {
      const largest = largestP(p, (at) => fits(estimate(c, p, shapes, at, kinds), false, limits));
      const what =
        m.heap > limits.heapBytes
          ? `the ranks' objects need about ${formatBytes(m.heap)}, above ${heapLimitText(limits)}`
          : `the run needs about ${formatBytes(m.heap + m.data)}, above ${memoryLimitText(limits)}`;
      throw new TooLargeError('p', `simulating ${p} ranks of --algorithms ${c.algorithms.join(',')} (${formatBytes(m.heap / p)} per rank; data ${formatBytes(m.data)}): ${what}; it fits up to p = ${largest}`);
    }
    if (references.length === 0 || fits(m, true, limits)) {
      plans.push({ p, memory: m, references });
      continue;
    }
    const largest = new Map<string, number>();
    largest.set(ALL_REFERENCES, largestP(p, (at) => fits(estimate(c, p, shapes, at, kinds), true, limits)));
    for (const r of references) {
      // the reference alone beside the algorithms
      const alone = new Set([r.kind]);
      largest.set(r.name, largestP(p, (at) => fits(estimate(c, p, shapes, at, alone), true, limits)));
    }
    plans.push({ p, memory: m, references, tooLarge: { reason: describe(m, limits), largestP: largest } });
  }
  return plans;
}
