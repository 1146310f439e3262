/**
 * Runs one hierarchical gather or gatherv case (TraffRougier14; `vcoll run --algorithm
 * hierarchical`) on the simulator, worker threads or MPI processes, and turns the ranks'
 * reports into the run's report (RunReport of src/run/job.ts, with the hierarchical fields).
 *
 * On the simulator the node structure is computed once for the run, O(p), and shared by every
 * rank (HierarchicalOptions.structure), as are the block data (src/run/data.ts) and the
 * call's options: no rank does O(p) work of its own but the root. The simulator charges the
 * case's two-level model, whose nodeOf is the run's node map (comm.nodeOf). On threads and MPI
 * the map goes to the transport (`nodes`) and each communicator computes its own structure.
 *
 * `predicted` (src/run/hierarchical-predict.ts): the exact simulator time of the call for
 * 'zero-copy' and 'reorder', and for the flat gather (the ordered binomial tree over all ranks,
 * interior ranks copying their block: a one-node structure); for the flat gatherv the binomial
 * gatherv's data phase only, as `--algorithm binomial` predicts it (src/run/predict.ts), without
 * the scatter of the counts that precedes it.
 */
import { nodeStructure, type NodeStructure } from '../collectives/hierarchical/index.js';
import { runMpi, type RunMpiOptions } from '../transports/mpi/run.js';
import { runSim } from '../transports/sim/index.js';
import { runThreads } from '../transports/threads/index.js';
import { ceilLog2 } from '../util/ceil-log.js';
import { sharedBlockSizes } from '../workloads/distributions.js';
import { checkHierarchicalResources } from './case-limits.js';
import { sharedCaseData } from './data.js';
import type { HierarchicalRunCase } from './hierarchical-case.js';
import { oneNodeStructure, predictTwoLevel } from './hierarchical-predict.js';
import type { HierarchicalJobArgs } from './hierarchical-program.js';
import { runHierarchicalOnRank, type HierarchicalRankResult, type HierarchicalShared } from './hierarchical-rank.js';
import { foldRanks, type RunReport, type SimRunOptions } from './job.js';
import { predictTime } from './predict.js';
import { VIRTUAL_TIMER } from './rank.js';
import type { TransportName } from './spec.js';

const PROGRAM_URL = new URL(import.meta.url.endsWith('.ts') ? './hierarchical-program.ts' : './hierarchical-program.js', import.meta.url);

/** The bytes of the size check every hierarchical gatherv message carries (collectives/hierarchical/size-check.ts). */
const GATHERV_CHECK_BYTES = 8;

export interface HierarchicalRunOptions extends SimRunOptions {
  /** MPI only: the launcher's options. */
  readonly mpi?: RunMpiOptions;
}

/** The node structure of the run (O(p)): once per run, shared by every simulated rank. */
export function runStructure(hc: HierarchicalRunCase): NodeStructure {
  const nodeOf = hc.nodeOf;
  return nodeStructure(nodeOf.length, (r) => nodeOf[r]);
}

/** The model's time of the call (see the module comment). */
export function predictHierarchical(hc: HierarchicalRunCase, structure: NodeStructure, counts: readonly number[]): number {
  const c = hc.rankCase;
  const u = c.unitBytes;
  const blockBytes = new Float64Array(counts.length);
  for (let i = 0; i < counts.length; i++) blockBytes[i] = counts[i] * u;
  if (c.variant === 'flat') {
    if (c.collective === 'gatherv') return predictTime('binomial', 'gatherv', counts, hc.model, c.root);
    return predictTwoLevel({ structure: oneNodeStructure(counts.length), blockBytes, root: c.root, unitBytes: u, trailerBytes: 0, reorder: false, interiorCopies: true }, hc.model);
  }
  const trailerBytes = c.collective === 'gatherv' ? GATHERV_CHECK_BYTES : 0;
  return predictTwoLevel({ structure, blockBytes, root: c.root, unitBytes: u, trailerBytes, reorder: c.variant === 'reorder' }, hc.model);
}

/** Combines the ranks' results into the report. */
export function summarizeHierarchical(
  transport: TransportName,
  p: number,
  hc: HierarchicalRunCase,
  structure: NodeStructure,
  ranks: readonly HierarchicalRankResult[],
  unit: 'model' | 's',
): RunReport {
  const c = hc.rankCase;
  const info = ranks[c.root].info;
  const counts = sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed });
  const { verified, time, repTimes, messages, bytes, mismatches } = foldRanks(ranks, c.root);
  const rounds = info?.rounds ?? 0;
  // the flat gatherv ('binomial') scatters the counts first: ⌈log₂p⌉ rounds before the data
  const constructionRounds = c.variant === 'flat' && c.collective === 'gatherv' ? ceilLog2(p) : 0;
  const { twoLevel } = hc;
  return {
    verified,
    time,
    timeUnit: unit,
    messages,
    bytes,
    rounds,
    constructionRounds,
    height: rounds - constructionRounds,
    transport,
    op: 'gatherv',
    algorithm: 'hierarchical',
    requestedAlgorithm: 'hierarchical',
    p,
    root: c.root,
    dist: c.dist,
    b: c.b,
    unitBytes: c.unitBytes,
    size: counts.reduce((a, x) => a + x, 0),
    persistent: false,
    reps: c.reps,
    model: { alpha: twoLevel.inter.alpha, beta: twoLevel.inter.beta, gamma: twoLevel.gamma },
    modelKind: 'hierarchical',
    predicted: predictHierarchical(hc, structure, counts),
    repTimes,
    mismatches,
    collective: c.collective,
    variant: c.variant,
    nodes: structure.nodes,
    ...(hc.perNode !== undefined ? { perNode: hc.perNode } : {}),
    largestNode: structure.largestNode,
    placement: hc.placement,
    twoLevel,
  };
}

/** Runs the case on the simulator: one node structure, one block arena, one options object for every rank. */
async function runOnSim(p: number, hc: HierarchicalRunCase, options: SimRunOptions): Promise<RunReport> {
  const c = hc.rankCase;
  const structure = runStructure(hc);
  const data = sharedCaseData(sharedBlockSizes(c.dist, { p, b: c.b, rho: c.rho, seed: c.seed }), c.unitBytes);
  const shared: HierarchicalShared = { data, options: { variant: c.variant, structure } };
  const sim = await runSim(p, (comm) => runHierarchicalOnRank(comm, c, VIRTUAL_TIMER, shared), {
    model: hc.model,
    unitBytes: c.unitBytes,
    trace: options.onTrace !== undefined,
    progress: options.onProgress,
  });
  if (options.onTrace !== undefined && sim.trace !== undefined) options.onTrace(sim.trace);
  return { ...summarizeHierarchical('sim', p, hc, structure, sim.results, 'model'), simTotalMessages: sim.messages, simTotalBytes: sim.bytes };
}

/** Runs one hierarchical case on `transport`; its resources are checked first (TooLargeError before any work). */
export async function runHierarchicalCase(transport: TransportName, p: number, hc: HierarchicalRunCase, options: HierarchicalRunOptions = {}): Promise<RunReport> {
  checkHierarchicalResources(transport, p, hc);
  if (transport === 'sim') return runOnSim(p, hc, options);
  const args: HierarchicalJobArgs = { case: hc.rankCase };
  const nodes = Array.from(hc.nodeOf);
  const ranks =
    transport === 'threads'
      ? await runThreads<HierarchicalRankResult>(p, PROGRAM_URL, args, { nodes })
      : await runMpi<HierarchicalRankResult>(p, PROGRAM_URL, args, { ...options.mpi, nodes });
  return summarizeHierarchical(transport, p, hc, runStructure(hc), ranks, 's');
}
