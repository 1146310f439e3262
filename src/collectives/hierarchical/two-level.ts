/**
 * The two-level gather of TraffRougier14 Fig. 1 (and Fig. 6 for the zero-copy root): a gather on
 * every node to its local root — the root itself on the root's node, else the node's lowest
 * rank — then a gather over the local roots (the bridge) to the root. Both levels are the
 * ordered binomial tree of basic/tree.ts (any root; every subtree a consecutive range, of
 * local ranks on a node, of nodes on the bridge), so a message always holds the blocks of
 * consecutive local ranks, or of consecutive nodes node by node: the root places each with
 * one placement (root-target.ts).
 *
 * Every rank posts all its receives (node children and, at a local root, bridge children) at
 * once, so a bridge message may arrive while the node gather is still running. A rank other
 * than the root never copies: it sends its own block and what it received as segments of one
 * vectored message (pieces.ts). The root copies its own block (and, for 'reorder', every
 * other block once at the end; root-target.ts).
 *
 * Cost, one-ported, α per message (p ranks, N nodes, n_k ranks on node k, n_max the largest):
 * the node gather takes ⌈log₂n_k⌉ rounds, the bridge ⌈log₂N⌉, so the root completes after at
 * most ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds (TraffRougier14 §2: ≤ ⌈log₂p⌉ + 1 for equal nodes).
 * Bytes: the root receives Σ_{i≠root} m_i (β_intra for its node's, β_inter for the rest); as
 * in any binomial gather, a block crosses one edge per tree level between its rank and the
 * root. Every edge is one message of exactly its subtree's data (gatherv below the root, where
 * the size is not known, receives with recvAlloc: pieces.ts); gatherv adds an 8-byte trailer
 * to every message, the size check of size-check.ts, so the root catches blocks that disagree
 * with its counts even when a message's total agrees. Local work O(p) at the root (placements), O(log n + log N) elsewhere.
 *
 * The regular gather (every size known) runs the same messages as a compiled schedule over
 * the caller's communicator instead (schedule.ts); this program code runs gatherv.
 */
import type { Communicator } from '../../comm/communicator.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';
import { orderedBinomialRole, type Subtree } from '../basic/tree.js';
import { joinPieces, piecesOf, recvKnown, recvUnknown, sendKnown, NO_PIECES, type Pieces } from './pieces.js';
import type { RootTarget } from './root-target.js';
import { addChecks, blockCheck, CHECK_BYTES, decodeCheck, encodeCheck, NO_BLOCKS, sameCheck, type SizeCheck } from './size-check.js';
import { ranksInNodes, type Bridge, type NodeStructure } from './structure.js';
import { HIER_TAG } from './types.js';

export interface TwoLevelInput {
  /** Both levels travel on it: the node level between a node's members (HIER_TAG.local), the bridge between leaders (HIER_TAG.bridge). */
  readonly comm: Communicator;
  readonly structure: NodeStructure;
  readonly bridge: Bridge;
  readonly root: number;
  /** This rank's block. */
  readonly send: Uint8Array;
  /** Regular gather: every block's bytes, known on every rank; undefined for gatherv. */
  readonly uniformBytes: number | undefined;
  /** Root only. */
  readonly target: RootTarget | undefined;
  /** Names a wrong byte count at the root ('send' for gather, 'counts' for gatherv). */
  readonly field: string;
}

/** A subtree's pieces and where they go in the parent's sequence (local index or node index); gatherv: their size check. */
interface Part {
  readonly at: number;
  readonly pieces: Pieces;
  readonly check: SizeCheck;
}

export async function twoLevelGather(input: TwoLevelInput): Promise<void> {
  const { comm, structure: s, bridge, root, target } = input;
  const me = comm.rank;
  const myNode = s.nodeIndex[me];
  const members = s.members[myNode];
  const onRootNode = myNode === bridge.rootNode;
  const localRoot = onRootNode ? s.localIndex[root] : 0;
  const li = s.localIndex[me];
  const lrole = orderedBinomialRole(members.length, localRoot, li);
  const isLeader = li === localRoot;

  const checked = input.uniformBytes === undefined;
  const protocol = (peer: string, what: string): CommunicationError =>
    new CommunicationError(`hierarchical gatherv: ${what} from ${peer} (do all ranks call the same collective and variant?)`, { rank: me });

  /** Receives one child's message: into the root's target, or as pieces. */
  const receive = (
    c: Subtree,
    level: 'local' | 'bridge',
    peer: number,
    tag: number,
    ranks: () => ArrayLike<number>,
    count: () => number,
  ): Promise<Part> => {
    if (target !== undefined) {
      const seq = ranks();
      const place = target.place(seq);
      const trailer = checked ? new Uint8Array(CHECK_BYTES) : undefined;
      const into = trailer === undefined ? place.buffer : [...(Array.isArray(place.buffer) ? place.buffer : [place.buffer]), trailer];
      const want = place.bytes + (trailer === undefined ? 0 : CHECK_BYTES);
      return comm.recv(peer, tag, into).then(
        (st) => {
          if (st.bytes !== want) {
            throw new InvalidArgumentError(
              input.field,
              `ranks ${describe(seq)} delivered ${st.bytes - (want - place.bytes)} bytes, the root expects ${place.bytes}`,
              { rank: me },
            );
          }
          if (trailer !== undefined) {
            let expected = NO_BLOCKS;
            for (let j = 0; j < seq.length; j++) expected = addChecks(expected, blockCheck(seq[j], target.blockBytes(seq[j])));
            const got = decodeCheck(trailer);
            if (got === undefined || !sameCheck(got, expected)) {
              throw new InvalidArgumentError(
                input.field,
                `ranks ${describe(seq)}: their blocks' sizes do not match the root's counts (their total, ${place.bytes} bytes, does)`,
                { rank: me },
              );
            }
          }
          return { at: c.lo, pieces: NO_PIECES, check: NO_BLOCKS };
        },
        (e: unknown) => {
          // longer than the root's counts allow: the message would overrun the target (TraffRougier14 §6)
          if (e instanceof TruncationError) {
            throw new InvalidArgumentError(
              input.field,
              `ranks ${describe(seq)} delivered more than the ${place.bytes} bytes the root expects from them (their blocks do not match the root's counts)`,
              { rank: me, cause: e },
            );
          }
          throw e;
        },
      );
    }
    if (!checked) return recvKnown(comm, peer, tag, count() * (input.uniformBytes as number), 'send').then((pieces) => ({ at: c.lo, pieces, check: NO_BLOCKS }));
    return recvUnknown(comm, peer, tag).then((all) => {
      const buf = all.segs.length === 0 ? new Uint8Array(0) : all.segs[0];
      const where = `${level} child ${peer}`;
      if (buf.length < CHECK_BYTES) throw protocol(where, `a ${buf.length}-byte message where at least ${CHECK_BYTES} were expected`);
      const check = decodeCheck(buf.subarray(buf.length - CHECK_BYTES));
      if (check === undefined) throw protocol(where, 'a message without a valid size check');
      const data = buf.subarray(0, buf.length - CHECK_BYTES);
      return { at: c.lo, pieces: piecesOf(data), check };
    });
  };

  // Node level: children in reverse order (smallest range first), all posted now.
  const localParts = [...lrole.children]
    .reverse()
    .map((c) => receive(c, 'local', members[c.peer], HIER_TAG.local, () => members.subarray(c.lo, c.hi + 1), () => c.hi - c.lo + 1));
  // Bridge level (local roots only), posted at once too.
  const brole = bridge.role;
  const bridgeParts = isLeader
    ? [...brole.children].reverse().map((c, j, all) => {
        const k = all.length - 1 - j;
        return receive(c, 'bridge', bridge.leaders[c.peer], HIER_TAG.bridge, () => bridge.childRanks[k], () => ranksInNodes(s, c.lo, c.hi));
      })
    : [];
  if (target !== undefined) target.copyOwn();

  // Awaited together, so that a failure of one leaves no rejection unobserved.
  const [fromNode, fromBridge] = await Promise.all([Promise.all(localParts), Promise.all(bridgeParts)]);
  const own: Part = { at: li, pieces: piecesOf(input.send), check: checked ? blockCheck(me, input.send.length) : NO_BLOCKS };
  if (!isLeader) {
    await sendKnown(comm, members[lrole.parent], HIER_TAG.local, withCheck(combine(own, fromNode), checked));
    return;
  }
  if (target !== undefined) {
    target.finish();
    return;
  }
  const node = combine(own, fromNode);
  const all = combine({ at: myNode, ...node }, fromBridge);
  const parentNode = brole.parent;
  const parent = parentNode === bridge.rootNode ? root : bridge.leaders[parentNode];
  await sendKnown(comm, parent, HIER_TAG.bridge, withCheck(all, checked));
}

/** Own pieces and the children's, in sequence order, and the sum of their size checks. */
function combine(own: Part, children: readonly Part[]): { pieces: Pieces; check: SizeCheck } {
  const parts = [own, ...children].sort((a, b) => a.at - b.at);
  let check = NO_BLOCKS;
  for (const p of parts) check = addChecks(check, p.check);
  return { pieces: joinPieces(parts.map((p) => p.pieces)), check };
}

/** The pieces to send: gatherv appends the size check as a trailer segment. */
function withCheck(x: { pieces: Pieces; check: SizeCheck }, checked: boolean): Pieces {
  return checked ? joinPieces([x.pieces, piecesOf(encodeCheck(x.check))]) : x.pieces;
}

/** The ranks of a message as error texts name them: all of them up to 8, else the ends. */
export function describe(ranks: ArrayLike<number>): string {
  const n = ranks.length;
  if (n === 0) return '[]';
  return n <= 8 ? `[${Array.from(ranks).join(', ')}]` : `[${ranks[0]}, ${ranks[1]}, …, ${ranks[n - 1]}] (${n} ranks)`;
}
