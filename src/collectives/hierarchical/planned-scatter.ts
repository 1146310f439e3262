/**
 * The data phase of a persistent hierarchical scatterv once its sizes are planned
 * (hierarchicalScattervInit, plan.ts): the mirror of planned-gather.ts. Every rank knows the
 * bytes of each child's range, so a start moves exactly the tree's data — no counts, no node
 * checks, no message for an empty range — as the flat persistent scatterv does once its counts
 * are scattered.
 *
 * Planning (once): one pass down the two-level tree (binomial or adaptive, `roles`): the root
 * sends each child the counts of its range's ranks in sequence order (4 bytes each, node order
 * then local order); a rank checks its own entry against its count (InvalidArgumentError('count')
 * on that rank, at init) and forwards each child its slice. Then every rank fixes its receive:
 * its own block straight into `recv`, its children's ranges into one scratch buffer, each child
 * a view of it, all in sequence order as one vectored receive.
 *
 * Then, in the plan's model, one pass up the tree: every rank orders its children by
 * decreasing tail (send-order.ts, Jackson's rule: the fastest order for the tree) and sends its
 * parent its own tail (8 bytes).
 *
 * A start: a rank with a non-empty range receives it from its parent, then sends each
 * non-empty child its part, one message at a time in that order; the root sends straight out
 * of `send` (root-source.ts: zero-copy, or reorder's packed buffer) and copies its own block
 * while one of its messages is on its way (the processor's copy holds no port): beside the one
 * that lets its subtree end first in the model (send-order.ts `copySlot`).
 *
 * Cost of a start, one-ported: the two-level tree's data phase, one message per edge with data
 * (α + β·its range's bytes); the root sends Σ_{i≠root} m_i; in a model whose messages cost the
 * same both ways, the gather's time over the same tree (send-order.ts). Planning: the same
 * tree twice more, down with 4 bytes per rank of each range on its edge, up with 8 bytes per edge.
 */
import type { CostModel } from '../../model/cost-model.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';
import { leaderOf, type LevelRoles } from './level-trees.js';
import { sendCopyingOwn, type ScatterRank } from './root-source.js';
import { copySlot, readTail, sendOrder, TAIL_BYTES, writeTail } from './send-order.js';
import { readU32, writeU32 } from './size-check.js';
import { ranksOfNodes, type NodeStructure } from './structure.js';
import { HIER_TAG } from './types.js';

/** `recv` is bound for every start. */
export interface PlannedScatterInput extends ScatterRank {
  /** This rank's place in the two-level tree (binomial, or the adaptive trees the constructions built). */
  readonly roles: LevelRoles;
  /** The model the sends are ordered in (per element, over the communicator's ranks). */
  readonly model: CostModel;
}

/** A child of this rank in send order: who, on which tag, its range's ranks (level indices lo … hi) and its position in this rank's sequence. */
interface Child {
  readonly rank: number;
  readonly tag: number;
  /** Bridge child: nodes lo … hi; node child: local indices lo … hi. */
  readonly bridge: boolean;
  readonly lo: number;
  readonly hi: number;
}

const COUNT_BYTES = 4;

/** The children of `roles`: bridge children, then node children, each outermost range first (the one-shot scatters' send order; ties of send-order.ts keep it). */
function childrenOf(input: PlannedScatterInput): Child[] {
  const { comm, structure: s, root, roles } = input;
  const members = s.members[s.nodeIndex[comm.rank]];
  const rootNode = s.nodeIndex[root];
  const out: Child[] = [];
  for (const c of roles.remote) out.push({ rank: leaderOf(s, rootNode, root, c.peer), tag: HIER_TAG.bridge, bridge: true, lo: c.lo, hi: c.hi });
  for (const c of roles.local) out.push({ rank: members[c.peer], tag: HIER_TAG.local, bridge: false, lo: c.lo, hi: c.hi });
  return out;
}

/** The ranks of a child's range in sequence order. */
function ranksOf(s: NodeStructure, members: Int32Array, c: Child): Int32Array {
  return c.bridge ? ranksOfNodes(s, c.lo, c.hi) : members.subarray(c.lo, c.hi + 1);
}

/** Plans this rank's part (the pass down the tree, each rank checking its own count) and returns its data phase. */
export async function planScatter(input: PlannedScatterInput): Promise<() => Promise<void>> {
  const { comm, structure: s, source } = input;
  const me = comm.rank;
  const members = s.members[s.nodeIndex[me]];
  const children = childrenOf(input);
  const u = input.unitBytes;
  if (source !== undefined) {
    const counts = input.counts as readonly number[];
    const all: { child: Child; ranks: Int32Array; bytes: number }[] = [];
    for (const c of children) {
      const ranks = ranksOf(s, members, c);
      const out = new Uint8Array(COUNT_BYTES * ranks.length);
      let bytes = 0;
      for (let j = 0; j < ranks.length; j++) {
        writeU32(out, COUNT_BYTES * j, counts[ranks[j]]);
        bytes += counts[ranks[j]] * u;
      }
      await comm.send(c.rank, c.tag, out);
      all.push({ child: c, ranks, bytes });
    }
    const { order, tails, costs } = await orderSends(input, children, all.map((x) => x.bytes));
    const live = order.filter((i) => all[i].bytes > 0);
    // its own block copied beside the send that lets its subtree end first (send-order.ts copySlot)
    const own = source.blockBytes(me);
    const beside = copySlot(
      live.map((i) => tails[i]),
      live.map((i) => costs[i]),
      own > 0 ? input.model.copy(me, own / u) : 0,
    );
    return async () => {
      source.prepare();
      await sendCopyingOwn(
        comm,
        source,
        live.map((i) => ({ peer: all[i].child.rank, tag: all[i].child.tag, data: source.place(all[i].ranks).buffer })),
        beside,
      );
    };
  }
  const roles = input.roles;
  const tag = roles.leader ? HIER_TAG.bridge : HIER_TAG.local;
  const got = await comm.recvAlloc(roles.parent, tag);
  const header = got.data;
  if (header.length % COUNT_BYTES !== 0) throw protocolError(me, roles.parent, `a ${header.length}-byte planning message`);
  // this rank's sequence: the parts in node order, then local order (own block at its local index)
  const node = s.nodeIndex[me];
  const li = s.localIndex[me];
  interface Part {
    readonly child: Child | undefined;
    readonly node: number;
    readonly local: number;
    readonly ranks: number;
  }
  const parts: Part[] = [{ child: undefined, node, local: li, ranks: 1 }];
  for (const c of children) parts.push({ child: c, node: c.bridge ? c.lo : node, local: c.bridge ? 0 : c.lo, ranks: ranksOf(s, members, c).length });
  parts.sort((x, y) => x.node - y.node || x.local - y.local);
  const total = parts.reduce((n, x) => n + x.ranks, 0);
  if (header.length !== COUNT_BYTES * total) throw protocolError(me, roles.parent, `the counts of ${header.length / COUNT_BYTES} ranks where this rank's range has ${total}`);
  let k = 0;
  const sizes = new Map<Child, { counts: Uint8Array; bytes: number }>();
  let own = -1;
  for (const x of parts) {
    const slice = header.subarray(COUNT_BYTES * k, COUNT_BYTES * (k + x.ranks));
    k += x.ranks;
    if (x.child === undefined) {
      own = readU32(slice, 0);
      continue;
    }
    let bytes = 0;
    for (let j = 0; j < x.ranks; j++) bytes += readU32(slice, COUNT_BYTES * j) * u;
    sizes.set(x.child, { counts: slice, bytes });
  }
  if (own !== input.count) {
    throw new InvalidArgumentError('count', `rank ${me} expects ${input.count} elements, the root's counts give it ${own}`, { rank: me });
  }
  // each child its counts, in send order
  for (const c of children) await comm.send(c.rank, c.tag, (sizes.get(c) as { counts: Uint8Array }).counts);
  // the receive: own block into recv, the children's ranges into one scratch buffer, in sequence order
  let restBytes = 0;
  for (const v of sizes.values()) restBytes += v.bytes;
  const rest = new Uint8Array(restBytes); // the plan's own: it outlives any one call
  const views = new Map<Child, Uint8Array>();
  const into: Uint8Array[] = [];
  let at = 0;
  for (const x of parts) {
    if (x.child === undefined) {
      if (input.recv.length > 0) into.push(input.recv);
      continue;
    }
    const n = (sizes.get(x.child) as { bytes: number }).bytes;
    const v = rest.subarray(at, at + n);
    at += n;
    views.set(x.child, v);
    if (n > 0) into.push(v);
  }
  const want = input.recv.length + restBytes;
  const parent = roles.parent;
  const { order, tail } = await orderSends(input, children, children.map((c) => (views.get(c) as Uint8Array).length));
  await comm.send(parent, tag, writeTail(tail));
  const sends = order.map((i) => children[i]).filter((c) => (views.get(c) as Uint8Array).length > 0);
  return async () => {
    if (want > 0) {
      const st = await comm.recv(parent, tag, into.length === 1 ? into[0] : into).catch((e: unknown) => {
        if (e instanceof TruncationError) throw protocolError(me, parent, `more than the ${want} bytes the plan has`);
        throw e;
      });
      if (st.bytes !== want) throw protocolError(me, parent, `${st.bytes} bytes where the plan has ${want}`);
    }
    for (const c of sends) await comm.send(c.rank, c.tag, views.get(c) as Uint8Array);
  };
}

/** Every child's tail (one 8-byte message up from each), and this rank's send order and tail in the plan's model (send-order.ts). */
async function orderSends(input: PlannedScatterInput, children: readonly Child[], bytes: readonly number[]): Promise<{ order: number[]; tail: number; tails: number[]; costs: number[] }> {
  const { comm, model } = input;
  const me = comm.rank;
  const tails = await Promise.all(
    children.map((c) =>
      comm.recvAlloc(c.rank, c.tag, TAIL_BYTES).then((r) => {
        const t = readTail(r.data);
        if (t < 0) throw protocolError(me, c.rank, `a ${r.data.length}-byte planning message where a tail was expected`);
        return t;
      }),
    ),
  );
  const costs = children.map((c, i) => (bytes[i] > 0 ? model.comm(me, c.rank, bytes[i] / input.unitBytes) : 0));
  return { ...sendOrder(tails, costs), tails, costs };
}

function protocolError(me: number, peer: number, what: string): CommunicationError {
  return new CommunicationError(`persistent hierarchical scatterv: ${what} from rank ${peer} (do all ranks start the same plan?)`, { rank: me });
}
