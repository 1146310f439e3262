/**
 * Hierarchical scatterv over the binomial two-level tree: the mirror of the two-level gatherv
 * (TraffRougier14 Fig. 1, two-level.ts). The root sends each bridge child the blocks of its
 * range of nodes and each node child its range of the root's node; a leader forwards the nodes
 * of its bridge range to its bridge children, then its own node's blocks down the node-level
 * tree; every rank keeps its own block. Sequence order everywhere: node order, each node in
 * local order (the node-sorted order π of TraffRougier14 Fig. 2), so every message is a run of
 * consecutive ranks of that order and the root sends it straight out of `send` (root-source.ts).
 *
 * Sizes. Only the root knows `counts` (MPI_Scatterv); a rank knows its own count only. Below the
 * root a rank with children must learn how its range splits among them, so a message to a
 * subtree of k > 1 ranks starts with the counts of its k ranks (4 bytes each, in sequence order)
 * — where the flat binomial scatterv first scatters the counts down the tree in ⌈log₂p⌉ rounds of
 * their own, here they travel with the data, one message per tree edge. Such a rank receives
 * with `recvAlloc` (the message's size is unknown to it: MPI_Mprobe + MPI_Mrecv), checks its own
 * entry against its count (InvalidArgumentError('count') on that rank), sends each child its
 * slice of the counts and of the blocks as one vectored message (nothing copied), then copies
 * its own block out (γ·m_i, after the sends are posted: it holds no port). A leaf (k = 1) gets
 * its block alone, straight into `recv`, and a block of another length is reported there
 * ('count').
 *
 * The root sends one message at a time (its sends start at time 0, maybe before a child has
 * posted its receive: in order, they are matched in order) and copies its own block beside the
 * last that moves bytes (root-source.ts `sendCopyingOwn`: it delays no send).
 *
 * Cost, one-ported: ≤ ⌈log₂N⌉ + ⌈log₂n_max⌉ rounds (bridge children before node children);
 * the root sends Σ_{i≠root} m_i bytes plus 4 bytes per rank of every inner subtree on each edge
 * above it; copies: the root's own block (zero-copy; reorder also packs every other block
 * first), and the own block of every non-root rank with children. Local work O(k) for a range
 * of k ranks, O(p) at the root.
 */
import type { MessageData, Request } from '../../comm/communicator.js';
import type { MessageBuffer } from '../../comm/segments.js';
import { CommunicationError, InvalidArgumentError, TruncationError } from '../../errors.js';
import type { LevelRoles } from './level-trees.js';
import { sendCopyingOwn, type RootSource, type ScatterRank } from './root-source.js';
import { scatterPlan } from './scatter-schedule.js';
import { readU32, writeU32 } from './size-check.js';

export interface TwoLevelScatterInput extends ScatterRank {
  readonly roles: LevelRoles;
}

/** Bytes of one count in a message's header. */
export const COUNT_BYTES = 4;

/** The segments of a buffer. */
export function segmentsOf(b: MessageBuffer): readonly Uint8Array[] {
  return b instanceof Uint8Array ? (b.length > 0 ? [b] : []) : b;
}

/** Runs this rank's part; resolves with `result()` once its block is in place and its sends are done. */
export function twoLevelScatter<T>(input: TwoLevelScatterInput, result: () => T): Promise<T> {
  try {
    const run = input.source !== undefined ? rootScatter(input, input.source) : rankScatter(input);
    return run.then(result);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The root: each child's message (its counts first when it holds more than one rank) straight out of `send`. */
async function rootScatter(input: TwoLevelScatterInput, source: RootSource): Promise<void> {
  const { comm, structure: s, root } = input;
  const counts = input.counts as readonly number[];
  const plan = scatterPlan(s, s.nodeIndex[root], root, root, input.roles);
  source.prepare();
  // one send at a time (as scatter-schedule.ts's root), its own block copied beside the last that moves bytes
  const messages = plan.sends.map((x) => {
    const k = x.ranks.length;
    const place = source.place(x.ranks);
    let data: MessageData = place.buffer;
    if (k > 1) {
      const header = new Uint8Array(COUNT_BYTES * k);
      for (let j = 0; j < k; j++) writeU32(header, COUNT_BYTES * j, counts[x.ranks[j]]);
      data = [header, ...segmentsOf(place.buffer)];
    }
    return { peer: x.peer, tag: x.tag, data };
  });
  await sendCopyingOwn(comm, source, messages, 'last');
}

function countError(me: number, what: string, cause?: unknown): InvalidArgumentError {
  return new InvalidArgumentError('count', `rank ${me}: ${what} (its count is not its entry in the root's counts)`, { rank: me, ...(cause !== undefined ? { cause } : {}) });
}

/** A rank below the root: a leaf receives its block; a rank with children its range with the counts, then forwards. */
async function rankScatter(input: TwoLevelScatterInput): Promise<void> {
  const { comm, structure: s, root, recv } = input;
  const me = comm.rank;
  const u = input.unitBytes;
  const plan = scatterPlan(s, s.nodeIndex[root], root, me, input.roles);
  const k = plan.sequence.length;
  if (k === 1) {
    const st = await comm.recv(plan.parent, plan.tag, recv).catch((e: unknown) => {
      throw e instanceof TruncationError ? countError(me, `the root sends more than the ${recv.length} bytes of its count ${input.count}`, e) : e;
    });
    if (st.bytes !== recv.length) throw countError(me, `the root sends ${st.bytes} bytes, its count ${input.count} makes ${recv.length}`);
    return;
  }
  const msg = (await comm.recvAlloc(plan.parent, plan.tag)).data;
  const head = COUNT_BYTES * k;
  if (msg.length < head) throw new CommunicationError(`rank ${me}: a ${msg.length}-byte hierarchical scatterv message where at least ${head} were expected (do all ranks call the same collective and variant?)`, { rank: me });
  // byte offsets of the blocks behind the counts, in sequence order
  const at = new Float64Array(k + 1);
  for (let j = 0; j < k; j++) at[j + 1] = at[j] + readU32(msg, COUNT_BYTES * j) * u;
  if (head + at[k] !== msg.length) {
    throw new CommunicationError(`rank ${me}: a hierarchical scatterv message of ${msg.length} bytes whose counts make ${head + at[k]} (do all ranks call the same collective and variant?)`, { rank: me });
  }
  const mine = readU32(msg, COUNT_BYTES * plan.own);
  if (mine !== input.count) throw countError(me, `the root's counts give it ${mine} elements, its count is ${input.count}`);
  const sends: Request<void>[] = [];
  for (const x of plan.sends) {
    const n = x.ranks.length;
    const blocks = msg.subarray(head + at[x.at], head + at[x.at + n]);
    sends.push(comm.isend(x.peer, x.tag, n > 1 ? [msg.subarray(COUNT_BYTES * x.at, COUNT_BYTES * (x.at + n)), blocks] : blocks));
  }
  // the own block out of the message once the sends are under way (the copy holds no port)
  if (recv.length > 0) comm.copy(recv, msg.subarray(head + at[plan.own], head + at[plan.own + 1]));
  await comm.waitAll(sends);
}
