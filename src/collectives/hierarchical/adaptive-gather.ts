/**
 * Hierarchical gatherv over adaptive trees (TraffRougier14 Fig. 1's two levels, each an
 * adaptive binomial tree of Traff18 §2): a node's members gather to the leader along Traff18's
 * tree over their blocks, the leaders to the root along Traff18's tree over the node totals.
 * Only the ranks' own counts are known below the root (MPI_Gatherv), so both trees are built
 * by Traff18's distributed construction (level-construction.ts), node level first: it gives
 * the leader its node's total, which the bridge construction then uses.
 *
 * Each rank starts its data once its own constructions are over (a leader: both): it posts a
 * receive per join (the join says the size: the range's total by its ranks' own counts, plus
 * the 8-byte size check) and, once they are in, sends its range to its parent — its own block
 * and what its children sent, in rank order (node order across the bridge), as one vectored
 * message: nothing is copied below the root. So the ranks whose constructions are over move
 * data while the others still construct (Traff18 §3's overlap, rank by rank), but a data
 * transfer never holds the port of a rank that still has construction messages to exchange:
 * on a one-ported machine a 48-byte record would otherwise wait behind a transfer of the whole
 * range (measured on the simulator: posting each receive the moment its join was learnt, as
 * the flat adaptive gatherv does, cost 1.3 ms more than this on 36 × 16 ranks, 'increasing',
 * 32 KiB blocks, behind transfers of up to a megabyte). The root receives every message
 * straight into its target (root-target.ts: zero-copy or reorder) and checks it against its
 * counts (two-level.ts `rootReceive`, with the size check of size-check.ts); it copies its own
 * block once its receives are posted.
 *
 * Cost: the constructions, ⌈log₂n⌉ + ⌈log₂N⌉ rounds of constant-size messages (the bridge's
 * starts at a leader when its node's has ended there), then the data phase of the two trees
 * (every message α + β·(its range's bytes + 8); the root receives Σ_{i≠root} m_i, its node's
 * at the intra-node β, the rest at the inter-node β), ≤ ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds deep.
 * Local work: O(children) per rank, O(p) at the root (placements).
 */
import type { Communicator, Received } from '../../comm/communicator.js';
import { CommunicationError } from '../../errors.js';
import type { CostModel } from '../../model/cost-model.js';
import { leaderIndex, leaderOf } from './level-trees.js';
import { constructLevels, type LevelConstructions, type LevelTags } from './level-construction.js';
import { messageOf } from './pieces.js';
import type { RootTarget } from './root-target.js';
import { addSums, blockSumA, blockSumB, CHECK_BYTES, readSum, trailerOf } from './size-check.js';
import { ranksOfNodes, type NodeStructure } from './structure.js';
import { rootReceive } from './two-level.js';
import { HIER_TAG } from './types.js';

export interface AdaptiveGatherInput {
  readonly comm: Communicator;
  readonly structure: NodeStructure;
  readonly root: number;
  /** This rank's block. */
  readonly send: Uint8Array;
  readonly unitBytes: number;
  /** The model the trees are built for (per element). */
  readonly model: CostModel;
  readonly tags: LevelTags;
  /** Root only. */
  readonly target: RootTarget | undefined;
}

/** Runs this rank's part; resolves with `result()` once it is done (the root: every block in place). */
export function adaptiveGather<T>(input: AdaptiveGatherInput, result: () => T): Promise<T> {
  const { comm, structure: s, root, model, tags } = input;
  return constructLevels(comm, s, root, input.send.length / input.unitBytes, model, tags)
    .then((roles) => (input.target !== undefined ? rootGather(input, input.target, roles) : rankGather(input, roles)))
    .then(result);
}

function protocolError(me: number, peer: number, what: string): CommunicationError {
  return new CommunicationError(`hierarchical gatherv (adaptive): ${what} from rank ${peer} (do all ranks call the same collective, variant and tree?)`, { rank: me });
}

/** A child's message: where its blocks go in the rank's sequence (node index, then local index) and its bytes without the size check. */
interface Piece {
  readonly node: number;
  readonly local: number;
  readonly data: Uint8Array;
}

/** A rank other than the root: a receive per child of its roles, then its range to its parent. */
async function rankGather(input: AdaptiveGatherInput, roles: LevelConstructions): Promise<void> {
  const { comm, structure: s, root } = input;
  const me = comm.rank;
  const u = input.unitBytes;
  const rootNode = s.nodeIndex[root];
  const node = s.nodeIndex[me];
  const members = s.members[node];
  const li = s.localIndex[me];
  const leader = li === leaderIndex(s, rootNode, root, node);
  const send = input.send;
  const up = leader ? roles.bridge?.parent : roles.node.parent;
  if (up === undefined) throw new CommunicationError(`rank ${me}: the adaptive construction gave it no parent`, { rank: me });
  const pieces: Piece[] = [{ node, local: li, data: send }];
  const receive = (peer: number, tag: number, size: number, at: (data: Uint8Array) => Piece): Promise<void> => {
    const want = size * u + CHECK_BYTES;
    return comm.recvAlloc(peer, tag, want).then((r: Received) => {
      const buf = r.data;
      if (buf.length !== want) throw protocolError(me, r.source, `a ${buf.length}-byte message where ${want} were expected`);
      pieces.push(at(buf));
    });
  };
  const received: Promise<void>[] = [];
  for (const e of roles.node.children) received.push(receive(members[e.peer], HIER_TAG.local, e.size, (d) => ({ node, local: e.lo, data: d })));
  for (const e of roles.bridge?.children ?? []) received.push(receive(leaderOf(s, rootNode, root, e.peer), HIER_TAG.bridge, e.size, (d) => ({ node: e.lo, local: 0, data: d })));
  await Promise.all(received);
  // the range in rank order (node order, then local order), every child's size check summed into one
  pieces.sort((a, b) => a.node - b.node || a.local - b.local);
  let sumA = blockSumA(send.length);
  let sumB = blockSumB(me, send.length);
  const segs: Uint8Array[] = [];
  for (const x of pieces) {
    let data = x.data;
    if (x.data !== send) {
      const n = data.length - CHECK_BYTES;
      const a = readSum(data, n);
      const b = readSum(data, n + 4);
      if (a < 0 || b < 0) throw protocolError(me, -1, 'a message without a valid size check');
      sumA = addSums(sumA, a);
      sumB = addSums(sumB, b);
      data = data.subarray(0, n);
    }
    if (data.length > 0) segs.push(data);
  }
  segs.push(trailerOf(sumA, sumB));
  const parent = leader ? leaderOf(s, rootNode, root, up.peer) : members[up.peer];
  await comm.send(parent, leader ? HIER_TAG.bridge : HIER_TAG.local, messageOf(segs));
}

/**
 * The root (its roles: its node's tree as the node's root, the bridge's over the node totals):
 * a receive into the target per child, its own block copied meanwhile, then the target's last
 * step.
 */
async function rootGather(input: AdaptiveGatherInput, target: RootTarget, roles: LevelConstructions): Promise<void> {
  const { comm, structure: s, root } = input;
  const members = s.members[s.nodeIndex[root]];
  const rootNode = s.nodeIndex[root];
  const field = { comm, uniformBytes: undefined, field: 'counts' };
  const received: Promise<void>[] = [];
  for (const e of roles.node.children) received.push(rootReceive(field, target, members[e.peer], HIER_TAG.local, members.subarray(e.lo, e.hi + 1)));
  for (const e of roles.bridge?.children ?? []) received.push(rootReceive(field, target, leaderOf(s, rootNode, root, e.peer), HIER_TAG.bridge, ranksOfNodes(s, e.lo, e.hi)));
  target.copyOwn();
  // awaited together, so that a failure of one leaves no rejection unobserved
  await Promise.all(received);
  target.finish();
}
