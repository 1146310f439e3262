/**
 * Runs one hierarchical gather, gatherv, scatter or scatterv case (TraffRougier14 and its
 * mirror; `vcoll run --algorithm hierarchical`) on the simulator, worker threads or MPI
 * processes, and turns the ranks' reports into the run's report (RunReport of src/run/job.ts,
 * with the hierarchical fields).
 *
 * On the simulator the node structure is computed once for the run, O(p), and shared by every
 * rank (HierarchicalOptions.structure), as are the block data (src/run/data.ts) and the
 * call's options: no rank does O(p) work of its own but the root. The simulator charges the
 * case's two-level model, whose nodeOf is the run's node map (comm.nodeOf). On threads and MPI
 * the map goes to the transport (`nodes`) and each communicator computes its own structure.
 *
 * `predicted` (src/run/hierarchical-predict.ts): the exact simulator time of the call for
 * 'zero-copy' and 'reorder' over either tree, except tree 'adaptive' of gatherv and scatterv,
 * whose prediction is the data phase of the trees the construction builds (the construction is
 * not predicted); for the flat gather and scatter the binomial tree over all ranks (interior
 * ranks copying their block: a one-node structure); for the flat gatherv and scatterv the data
 * phase of the binomial (adaptive) tree, as `--algorithm binomial` (adaptive) predicts it
 * (src/run/predict.ts), without the scatter of the counts (the construction) that precedes it.
 *
 * Persistent (`--persistent`: always gatherv or scatterv), every rank plans once
 * (hierarchicalGathervInit / hierarchicalScattervInit: the adaptive trees' constructions and,
 * either tree, the pass of the sizes over the tree, planned-gather.ts / planned-scatter.ts; the
 * flat variant's own planning: the scatter of the counts, or Traff18's construction) and the
 * timed executions are start(): `time` is then the data phase that `predicted` describes (the
 * tree's data alone: no size checks, counts or empty messages), on the simulator exactly (up to
 * rounding) for every variant and tree; `planTime` (slowest rank), `planMessages` and
 * `planBytes` (summed over the ranks) are what planning took, as src/run/job.ts reports the
 * flat algorithms' plans.
 */
import { nodeStructure, type NodeStructure } from '../collectives/hierarchical/index.js';
import { runMpi, type RunMpiOptions } from '../transports/mpi/run.js';
import { runSim } from '../transports/sim/index.js';
import { runThreads } from '../transports/threads/index.js';
import { maxOf } from '../util/extremes.js';
import { sharedBlockSizes } from '../workloads/distributions.js';
import { checkHierarchicalResources } from './case-limits.js';
import { sharedCaseData } from './data.js';
import type { HierarchicalRunCase } from './hierarchical-case.js';
import { treeModelOf, usesTreeModel } from './hierarchical-case.js';
import { adaptiveRolesOf, binomialRolesOf, flatRolesOf, oneNodeStructure, predictTwoLevel, plannedRootCopySlot, predictTwoLevelScatter, rolesTree, tailOrderedTree } from './hierarchical-predict.js';
import type { HierarchicalJobArgs } from './hierarchical-program.js';
import { runHierarchicalOnRank, type HierarchicalRankResult, type HierarchicalShared } from './hierarchical-rank.js';
import { foldRanks, type RunReport, type SimRunOptions } from './job.js';
import { predictTime } from './predict.js';
import { VIRTUAL_TIMER } from './rank.js';
import type { TransportName } from './spec.js';

const PROGRAM_URL = new URL(import.meta.url.endsWith('.ts') ? './hierarchical-program.ts' : './hierarchical-program.js', import.meta.url);

/** The bytes of the size check every hierarchical gatherv message carries (collectives/hierarchical/size-check.ts). */
const GATHERV_CHECK_BYTES = 8;
/** Bytes per rank of a binomial scatterv message's counts (two-level-scatter.ts), per node of an adaptive scatterv bridge message's checks (adaptive-scatter.ts). */
const SCATTERV_COUNT_BYTES = 4;
const SCATTERV_NODE_CHECK_BYTES = 4;

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
  const p = counts.length;
  const root = c.root;
  const blockBytes = new Float64Array(p);
  for (let i = 0; i < p; i++) blockBytes[i] = counts[i] * u;
  const gather = c.collective === 'gather' || c.collective === 'gatherv';
  const regular = c.collective === 'gather' || c.collective === 'scatter';
  const op = gather ? 'gatherv' : 'scatterv';
  if (c.variant === 'flat') {
    if (!regular || c.tree === 'adaptive') return predictTime(c.tree === 'adaptive' ? 'adaptive' : 'binomial', op, counts, hc.model, root);
    const one = oneNodeStructure(p);
    const tree = rolesTree(one, root, flatRolesOf(p, root));
    if (gather) return predictTwoLevel({ structure: one, tree, blockBytes, root, unitBytes: u, trailerBytes: 0, reorder: false, interiorCopies: true }, hc.model);
    return predictTwoLevelScatter({ structure: one, tree, blockBytes, root, unitBytes: u, reorder: false, interiorCopies: true, copyAfterSends: true }, hc.model);
  }
  const reorder = c.variant === 'reorder';
  // the model the ranks plan in (usesTreeModel): the adaptive trees are decided in it on bytes (regular) or elements (irregular), a persistent scatterv orders its sends by it
  const planModel = treeModelOf(c, hc.nodeOf);
  const rolesOf = c.tree === 'binomial' ? binomialRolesOf(structure, root) : adaptiveRolesOf(structure, root, regular ? blockBytes : counts, planModel);
  if (c.persistent) {
    // a planned start (planned-gather.ts, planned-scatter.ts): the tree's data alone, no size checks or counts, no empty message
    const tree = rolesTree(structure, root, rolesOf);
    if (gather) return predictTwoLevel({ structure, blockBytes, root, unitBytes: u, trailerBytes: 0, reorder, tree }, hc.model);
    // every rank's sends by decreasing tail in the model the ranks plan in (send-order.ts)
    const ordered = tailOrderedTree(tree, blockBytes, u, planModel);
    const rootCopyBeside = plannedRootCopySlot(ordered, blockBytes, root, u, planModel);
    return predictTwoLevelScatter({ structure, tree: ordered, blockBytes, root, unitBytes: u, reorder, rootCopyBeside }, hc.model);
  }
  if (gather) {
    const tree = c.tree === 'binomial' ? undefined : rolesTree(structure, root, rolesOf);
    const trailerBytes = c.collective === 'gatherv' ? GATHERV_CHECK_BYTES : 0;
    return predictTwoLevel({ structure, blockBytes, root, unitBytes: u, trailerBytes, reorder, ...(tree !== undefined ? { tree } : {}) }, hc.model);
  }
  const tree = rolesTree(structure, root, rolesOf);
  let extraBytes: ((child: number, ranks: number) => number) | undefined;
  if (c.collective === 'scatterv' && c.tree === 'binomial') extraBytes = (_child, ranks) => (ranks > 1 ? SCATTERV_COUNT_BYTES * ranks : 0);
  if (c.collective === 'scatterv' && c.tree === 'adaptive') {
    // a bridge message carries one check per node of its range: a leader's nodes are its own and its bridge children's ranges
    const nodes = new Int32Array(p);
    for (let v = 0; v < p; v++) {
      const r = rolesOf(v);
      if (!r.leader || r.parent < 0) continue;
      const b = structure.nodeIndex[v];
      let lo = b;
      let hi = b;
      for (const x of r.remote) {
        lo = Math.min(lo, x.lo);
        hi = Math.max(hi, x.hi);
      }
      nodes[v] = hi - lo + 1;
    }
    extraBytes = (child) => SCATTERV_NODE_CHECK_BYTES * nodes[child];
  }
  return predictTwoLevelScatter(
    {
      structure,
      tree,
      blockBytes,
      root,
      unitBytes: u,
      reorder,
      interiorCopies: c.collective === 'scatterv' && c.tree === 'binomial',
      // the scatterv roots copy their own block beside their last send (root-source.ts sendCopyingOwn), the regular scatter's schedule after its sends
      ...(c.collective === 'scatterv' ? { rootCopyBeside: 'last' as const } : {}),
      ...(extraBytes !== undefined ? { extraBytes } : {}),
    },
    hc.model,
  );
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
  // before the data: the flat binomial gatherv/scatterv's counts scatter, the adaptive trees' construction
  const constructionRounds = info?.constructionRounds ?? 0;
  const { twoLevel } = hc;
  const persistent = c.persistent;
  let planMessages = 0;
  let planBytes = 0;
  if (persistent) {
    for (const r of ranks) {
      planMessages += r.planMessages;
      planBytes += r.planBytes;
    }
  }
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
    op: c.collective === 'gather' || c.collective === 'gatherv' ? 'gatherv' : 'scatterv',
    algorithm: 'hierarchical',
    requestedAlgorithm: 'hierarchical',
    p,
    root: c.root,
    dist: c.dist,
    b: c.b,
    unitBytes: c.unitBytes,
    size: counts.reduce((a, x) => a + x, 0),
    persistent,
    reps: c.reps,
    model: { alpha: twoLevel.inter.alpha, beta: twoLevel.inter.beta, gamma: twoLevel.gamma },
    modelKind: 'hierarchical',
    predicted: predictHierarchical(hc, structure, counts),
    repTimes,
    ...(persistent ? { planTime: maxOf(ranks, (r) => r.planTime ?? 0), planMessages, planBytes } : {}),
    mismatches,
    collective: c.collective,
    variant: c.variant,
    tree: c.tree,
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
  const shared: HierarchicalShared = {
    data,
    options: { variant: c.variant, tree: c.tree, structure, ...(usesTreeModel(c) ? { model: treeModelOf(c, hc.nodeOf) } : {}) },
  };
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
