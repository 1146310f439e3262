/**
 * The rank program of `vcoll run --algorithm hierarchical` on worker threads and MPI processes
 * (loaded by runThreads / runMpi; `export default async function (comm, args)`): one
 * hierarchical gather, gatherv, scatter or scatterv case (TraffRougier14 and its mirror, over
 * binomial or adaptive trees), timed between barriers and verified on every rank. The ranks'
 * nodes are the transport's `comm.nodeOf` (runThreads / runMpi `nodes`); each communicator
 * computes its node structure on its first call (O(p), small p here).
 */
import type { Communicator } from '../comm/communicator.js';
import { runHierarchicalOnRank, type HierarchicalRankCase, type HierarchicalRankResult } from './hierarchical-rank.js';
import { WALL_TIMER } from './rank.js';

export interface HierarchicalJobArgs {
  readonly case: HierarchicalRankCase;
}

export default function hierarchicalProgram(comm: Communicator, args: HierarchicalJobArgs): Promise<HierarchicalRankResult> {
  return runHierarchicalOnRank(comm, args.case, WALL_TIMER);
}
