/**
 * The data phase of a persistent hierarchical gatherv once its sizes are planned
 * (hierarchicalGathervInit, plan.ts): every rank knows the bytes of each child's range, so a
 * start moves exactly the tree's data — no size check, no message for an empty range — as the
 * flat persistent gatherv does once its counts are scattered (Traff18 §3: "an empty range moves
 * no message").
 *
 * Planning (once): one pass up the two-level tree (binomial or adaptive, `roles`): every rank
 * receives from each child its range's bytes and the range's size-check sums (size-check.ts),
 * adds its own, and sends the 16-byte summary to its parent; the root compares each child's
 * with its counts (InvalidArgumentError('counts') at the root, at init: a wrong block or two
 * that cancel never reach a start). Then every rank fixes its receive buffers: one packed
 * buffer for its children's ranges, each child a view of it, and the message to its parent as
 * the list of segments in rank order (node order, then local order), its own block's included.
 *
 * A start: a rank posts a receive per non-empty child, exactly its bytes, and once they are in
 * sends its non-empty range to its parent as one vectored message (nothing copied below the
 * root); the root receives every non-empty child's message straight into its target
 * (root-target.ts: zero-copy or reorder) and copies its own block meanwhile.
 *
 * Cost of a start, one-ported: the two-level tree's data phase, ≤ ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds
 * deep, one message per edge with data (α + β·its range's bytes); the root receives
 * Σ_{i≠root} m_i. Planning: the same tree once more with 16-byte messages.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { MessageData } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError } from '../../errors.js';
import { leaderOf, type LevelRoles } from './level-trees.js';
import { messageOf } from './pieces.js';
import type { RootTarget } from './root-target.js';
import { addSums, blockSumA, blockSumB, readSum, writeSums } from './size-check.js';
import { ranksOfNodes, type NodeStructure } from './structure.js';
import { describe, rootReceive } from './two-level.js';
import { HIER_TAG } from './types.js';

export interface PlannedGatherInput {
  readonly comm: Communicator;
  readonly structure: NodeStructure;
  readonly root: number;
  /** This rank's block (bound for every start). */
  readonly send: Uint8Array;
  /** This rank's place in the two-level tree (binomial, or the adaptive trees the constructions built). */
  readonly roles: LevelRoles;
  /** Root only. */
  readonly target: RootTarget | undefined;
}

/** A child of this rank: who, on which tag, its range's ranks in sequence order, its bytes (known once planned). */
interface Child {
  readonly rank: number;
  readonly tag: number;
  readonly ranks: ArrayLike<number>;
  /** Where its blocks sit in this rank's sequence: node index, then local index of the first. */
  readonly node: number;
  readonly local: number;
}

/** Bytes of the planning summary: the range's bytes (float64) and its two size-check sums. */
const SUMMARY_BYTES = 16;

/** The children of `roles`, node level first, each level smallest range first (the order the receives are posted). */
function childrenOf(input: PlannedGatherInput): Child[] {
  const { comm, structure: s, root, roles } = input;
  const node = s.nodeIndex[comm.rank];
  const members = s.members[node];
  const rootNode = s.nodeIndex[root];
  const out: Child[] = [];
  for (let i = roles.local.length - 1; i >= 0; i--) {
    const c = roles.local[i];
    out.push({ rank: members[c.peer], tag: HIER_TAG.local, ranks: members.subarray(c.lo, c.hi + 1), node, local: c.lo });
  }
  for (let j = roles.remote.length - 1; j >= 0; j--) {
    const c = roles.remote[j];
    out.push({ rank: leaderOf(s, rootNode, root, c.peer), tag: HIER_TAG.bridge, ranks: ranksOfNodes(s, c.lo, c.hi), node: c.lo, local: 0 });
  }
  return out;
}

/**
 * Plans this rank's part (the pass up the tree, checked at the root) and returns its data
 * phase: a function that runs one start.
 */
export async function planGather(input: PlannedGatherInput): Promise<() => Promise<void>> {
  const { comm, structure: s, send, roles, target } = input;
  const me = comm.rank;
  const children = childrenOf(input);
  // every child's summary; the root checks each against its counts
  const summaries = await Promise.all(children.map((c) => receiveSummary(comm, c)));
  if (target !== undefined) {
    children.forEach((c, k) => checkAtRoot(comm, target, c, summaries[k]));
    const live = children.filter((_, k) => summaries[k].bytes > 0);
    const noTrailer = { comm, uniformBytes: 0, field: 'counts' };
    return () => {
      const received = live.map((c) => rootReceive(noTrailer, target, c.rank, c.tag, c.ranks));
      target.copyOwn();
      return Promise.all(received).then(() => target.finish());
    };
  }
  let bytes = send.length;
  let a = blockSumA(send.length);
  let b = blockSumB(me, send.length);
  for (const x of summaries) {
    bytes += x.bytes;
    a = addSums(a, x.a);
    b = addSums(b, x.b);
  }
  const summary = new Uint8Array(SUMMARY_BYTES);
  new DataView(summary.buffer).setFloat64(0, bytes, true);
  writeSums(summary, 8, a, b);
  const leader = roles.leader;
  const tag = leader ? HIER_TAG.bridge : HIER_TAG.local;
  await comm.send(roles.parent, tag, summary);
  // the receive buffers, one packed buffer for all children, and the message to the parent in sequence order
  const packed = new Uint8Array(bytes - send.length);
  const node = s.nodeIndex[me];
  const pieces: { node: number; local: number; data: Uint8Array }[] = [{ node, local: s.localIndex[me], data: send }];
  const receives: { child: Child; into: Uint8Array }[] = [];
  let at = 0;
  children.forEach((c, k) => {
    const n = summaries[k].bytes;
    if (n === 0) return;
    const into = packed.subarray(at, at + n);
    at += n;
    receives.push({ child: c, into });
    pieces.push({ node: c.node, local: c.local, data: into });
  });
  pieces.sort((x, y) => x.node - y.node || x.local - y.local);
  const message: MessageData = messageOf(pieces.map((x) => x.data).filter((d) => d.length > 0));
  const parent = roles.parent;
  return () => {
    const received = receives.map(({ child, into }) =>
      comm.recv(child.rank, child.tag, into).then((st) => {
        if (st.bytes !== into.length) throw protocolError(me, child.rank, `${st.bytes} bytes where the plan has ${into.length}`);
      }),
    );
    return Promise.all(received).then(() => (bytes > 0 ? comm.send(parent, tag, message) : undefined));
  };
}

interface Summary {
  readonly bytes: number;
  readonly a: number;
  readonly b: number;
}

function receiveSummary(comm: Communicator, c: Child): Promise<Summary> {
  const buf = new Uint8Array(SUMMARY_BYTES);
  return comm.recv(c.rank, c.tag, buf).then((st) => {
    if (st.bytes !== SUMMARY_BYTES) throw protocolError(comm.rank, c.rank, `a ${st.bytes}-byte planning message where ${SUMMARY_BYTES} were expected`);
    const bytes = new DataView(buf.buffer).getFloat64(0, true);
    const a = readSum(buf, 8);
    const b = readSum(buf, 12);
    if (!Number.isInteger(bytes) || bytes < 0 || a < 0 || b < 0) throw protocolError(comm.rank, c.rank, 'a planning message without a valid summary');
    return { bytes, a, b };
  });
}

/** The root: a child's summary against the bytes and size-check sums its counts give the child's ranks. */
function checkAtRoot(comm: Communicator, target: RootTarget, c: Child, x: Summary): void {
  let bytes = 0;
  let a = 0;
  let b = 0;
  for (let j = 0; j < c.ranks.length; j++) {
    const r = c.ranks[j];
    const n = target.blockBytes(r);
    bytes += n;
    a = addSums(a, blockSumA(n));
    b = addSums(b, blockSumB(r, n));
  }
  if (x.bytes !== bytes) {
    throw new InvalidArgumentError('counts', `ranks ${describe(c.ranks)} hold ${x.bytes} bytes by their own blocks, the root's counts give ${bytes}`, { rank: comm.rank });
  }
  if (x.a !== a || x.b !== b) {
    throw new InvalidArgumentError('counts', `ranks ${describe(c.ranks)}: their blocks' sizes do not match the root's counts (their total, ${bytes} bytes, does)`, { rank: comm.rank });
  }
}

function protocolError(me: number, peer: number, what: string): CommunicationError {
  return new CommunicationError(`persistent hierarchical gatherv: ${what} from rank ${peer} (do all ranks start the same plan?)`, { rank: me });
}
