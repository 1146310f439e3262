/**
 * Rank programs exercising communicators (split, splitByNode, intercommunicators) that run
 * unchanged on every transport: the in-memory test endpoint, the simulator and worker threads
 * (through comm-program.ts). Each returns plain observations; the tests compute what they
 * must be from the arguments alone.
 */
import { ANY_SOURCE, ANY_TAG, type Communicator } from '../../src/comm/communicator.js';
import { barrier } from '../../src/collectives/basic/barrier.js';
import { bcast } from '../../src/collectives/basic/bcast.js';
import { createIntercomm, type InterCommunicator, splitIntercomm } from '../../src/comm/intercomm.js';
import { VcollError } from '../../src/errors.js';

const TAG = 7;

/** Observed failure of an operation: the typed error's code, field and rank. */
export interface Failure {
  readonly name: string;
  readonly code: string | undefined;
  readonly field: string | undefined;
  readonly rank: number | undefined;
  readonly message: string;
}

export function failure(e: unknown): Failure {
  const err = e instanceof Error ? e : new Error(String(e));
  return {
    name: err.name,
    code: e instanceof VcollError ? e.code : undefined,
    field: (e as { field?: string }).field,
    rank: e instanceof VcollError ? e.rank : undefined,
    message: err.message,
  };
}

async function settle<T>(p: Promise<T>): Promise<{ ok: T } | { error: Failure }> {
  try {
    return { ok: await p };
  } catch (e) {
    return { error: failure(e) };
  }
}

function int32s(...xs: number[]): Uint8Array {
  return new Uint8Array(Int32Array.from(xs).buffer);
}

function readInt32s(b: Uint8Array, n: number): number[] {
  return Array.from(new Int32Array(b.slice(0, 4 * n).buffer));
}

/**
 * Every member learns the `id` of every member, by point-to-point messages with specific
 * sources on tag `tag`: the group as the communicator sees it, in rank order.
 */
export async function exchangeIds(c: Communicator | InterCommunicator, id: number, tag: number, remote = false): Promise<number[]> {
  const n = remote ? (c as InterCommunicator).remoteSize : c.size;
  const sends: PromiseLike<void>[] = [];
  for (let d = 0; d < n; d++) sends.push(c.isend(d, tag, int32s(id)));
  const got = await Promise.all(
    Array.from({ length: n }, async (_, s) => {
      const into = new Uint8Array(4);
      const st = await c.irecv(s, tag, into);
      if (st.source !== s || st.bytes !== 4 || st.tag !== tag) throw new Error(`status ${JSON.stringify(st)} from ${s}`);
      return readInt32s(into, 1)[0];
    }),
  );
  await Promise.all(sends);
  return got;
}

export interface SplitObservation {
  readonly rank: number;
  readonly size: number;
  /** World ranks of the new communicator's members in its rank order (null: UNDEFINED). */
  readonly members: number[];
}

/** split(colors[r], keys[r]) and the resulting group as observed by traffic. */
export async function splitScenario(
  comm: Communicator,
  args: { colors: number[]; keys: number[] },
): Promise<SplitObservation | null> {
  const c = await comm.split(args.colors[comm.rank], args.keys[comm.rank]);
  if (c === null) return null;
  return { rank: c.rank, size: c.size, members: await exchangeIds(c, comm.rank, TAG) };
}

export interface RingObservation {
  /** Status.source of the wildcard receive. */
  readonly source: number;
  /** Marker of the communicator the message was sent on. */
  readonly marker: number;
  /** World rank of the sender as written in the payload. */
  readonly world: number;
}

/**
 * On each of `comms` (marker = its index) every rank sends [marker, worldRank] to rank+1 of
 * that communicator, all with the same tag; then it receives with ANY_SOURCE/ANY_TAG on each
 * communicator, in the reverse order (so a leaking context would be caught).
 */
async function rings(comms: Communicator[], world: number): Promise<RingObservation[]> {
  const sends = comms.map((c, i) => c.isend((c.rank + 1) % c.size, TAG, int32s(i, world)));
  const out: RingObservation[] = new Array<RingObservation>(comms.length);
  for (let i = comms.length - 1; i >= 0; i--) {
    const into = new Uint8Array(16);
    const st = await comms[i].recv(ANY_SOURCE, ANY_TAG, into);
    const [marker, w] = readInt32s(into, 2);
    out[i] = { source: st.source, marker, world: w };
  }
  await Promise.all(sends);
  return out;
}

export interface IsolationObservation {
  /** Per level (world, split, nested split): rank, size, members and the ring receive. */
  readonly levels: { rank: number; size: number; members: number[]; ring: RingObservation }[];
}

/**
 * World → split by parity with reversed keys → nested split of that into halves; ring traffic
 * with one tag on all three at once (parent and child traffic must never mix).
 */
export async function isolationScenario(comm: Communicator): Promise<IsolationObservation> {
  const a = (await comm.split(comm.rank % 2, -comm.rank)) as Communicator;
  const b = (await a.split(a.rank < a.size / 2 ? 0 : 1, a.rank)) as Communicator;
  const comms = [comm, a, b];
  const members: number[][] = [];
  for (const c of comms) members.push(await exchangeIds(c, comm.rank, TAG + 1));
  // Last: a wildcard receive would also match later traffic of a faster rank.
  const ring = await rings(comms, comm.rank);
  return { levels: comms.map((c, i) => ({ rank: c.rank, size: c.size, members: members[i], ring: ring[i] })) };
}

/** Two splits started without awaiting the first (a duplicate of the world and a parity split). */
export async function concurrentScenario(comm: Communicator): Promise<RingObservation[]> {
  const [a, b] = await Promise.all([comm.split(0, comm.rank), comm.split(comm.rank % 2, comm.rank)]);
  return rings([comm, a as Communicator, b as Communicator], comm.rank);
}

/** One rank passes a bad color (or key); every rank reports what split did. */
export async function badSplitScenario(
  comm: Communicator,
  args: { badRank: number; color: number; key: number },
): Promise<Failure | 'resolved'> {
  const bad = comm.rank === args.badRank;
  const r = await settle(comm.split(bad ? args.color : 0, bad ? args.key : comm.rank));
  if ('ok' in r) return 'resolved';
  // The world must still work after the failed split.
  await exchangeIds(comm, comm.rank, TAG + 2);
  return r.error;
}

export interface NodeObservation {
  readonly node: number;
  readonly rank: number;
  readonly members: number[];
  readonly nodesSeen: number[];
}

/** splitByNode: the group and every member's node as the new communicator reports it. */
export async function byNodeScenario(comm: Communicator): Promise<NodeObservation> {
  const c = await comm.splitByNode();
  const nodesSeen = Array.from({ length: c.size }, (_, i) => c.nodeOf(i));
  return { node: comm.nodeOf(comm.rank), rank: c.rank, members: await exchangeIds(c, comm.rank, TAG), nodesSeen };
}

export interface InterObservation {
  readonly rank: number;
  readonly size: number;
  readonly remoteSize: number;
  /** World ranks of the local group (through `local`). */
  readonly localMembers: number[];
  /** World ranks of the remote group, in remote rank order (specific-source receives). */
  readonly remoteMembers: number[];
  /** Sources and payload world ranks of wildcard receives, sorted by source. */
  readonly wildcard: { source: number; world: number }[];
  /** World ranks of the merged communicator in rank order, and this rank there. */
  readonly merged: { rank: number; members: number[] };
  /** Errors of bad remote ranks. */
  readonly errors: Failure[];
}

async function observeInter(comm: Communicator, ic: InterCommunicator, high: boolean): Promise<InterObservation> {
  const localMembers = await exchangeIds(ic.local, comm.rank, TAG);
  const remoteMembers = await exchangeIds(ic, comm.rank, TAG, true);
  // Every rank sends to every remote rank on one tag; wildcard receives.
  const sends = Array.from({ length: ic.remoteSize }, (_, d) => ic.isend(d, TAG + 3, int32s(comm.rank)));
  const wildcard: { source: number; world: number }[] = [];
  for (let i = 0; i < ic.remoteSize; i++) {
    const into = new Uint8Array(4);
    // A specific tag: an ANY_TAG receive could match the remote leader's merge traffic.
    const st = await ic.recv(ANY_SOURCE, TAG + 3, into);
    wildcard.push({ source: st.source, world: readInt32s(into, 1)[0] });
  }
  await Promise.all(sends);
  wildcard.sort((x, y) => x.source - y.source);
  const errors: Failure[] = [];
  for (const op of [
    () => ic.isend(ic.remoteSize, TAG, new Uint8Array(1)),
    () => ic.irecv(-2, TAG, new Uint8Array(1)),
    () => ic.isend(0, -3, new Uint8Array(1)),
    () => Promise.resolve(ic.nodeOfRemote(ic.remoteSize)),
  ]) {
    try {
      await op();
      errors.push(failure(new Error('no error')));
    } catch (e) {
      errors.push(failure(e));
    }
  }
  const m = await ic.merge(high);
  return {
    rank: ic.rank,
    size: ic.size,
    remoteSize: ic.remoteSize,
    localMembers,
    remoteMembers,
    wildcard,
    merged: { rank: m.rank, members: await exchangeIds(m, comm.rank, TAG) },
    errors,
  };
}

/**
 * Intercommunicator between ranks of color 0 and 1, built by `splitIntercomm` or by
 * `createIntercomm` (local groups by split, leaders = lowest rank of each color, peer = world);
 * merged with high = (color === 1) unless `sameHigh`.
 */
export async function interScenario(
  comm: Communicator,
  args: { colors: (0 | 1)[]; how: 'split' | 'create'; sameHigh?: boolean },
): Promise<InterObservation> {
  const color = args.colors[comm.rank];
  let ic: InterCommunicator;
  if (args.how === 'split') {
    ic = await splitIntercomm(comm, color);
  } else {
    const local = (await comm.split(color, comm.rank)) as Communicator;
    const remoteLeader = args.colors.findIndex((c) => c !== color);
    ic = await createIntercomm(local, 0, comm, remoteLeader, 77);
  }
  return observeInter(comm, ic, args.sameHigh === true ? false : color === 1);
}

export type BadInterArg = 'peer' | 'remoteLeader' | 'tag' | 'leaderRange' | 'leaderMismatch';

export interface BadInterObservation {
  /** What createIntercomm did on this rank ('idle': the rank took no part). */
  readonly outcome: Failure | 'resolved' | 'idle';
  /** World ranks of the remote group seen through a correct createIntercomm afterwards (when both groups took part). */
  readonly after: number[] | null;
}

/**
 * createIntercomm between the ranks of color 0 and 1 (leaders: local rank 0, peer: this
 * communicator, tag 77) where group `badGroup` passes one bad argument: at its leader (peer,
 * remoteLeader, tag) or at its last rank (a localLeader out of range, or one that differs from
 * rank 0's). With `remoteIdle` the other group does not call createIntercomm at all. When both
 * groups took part, a correct createIntercomm follows and its remote group is observed.
 */
export async function badInterScenario(
  comm: Communicator,
  args: { colors: (0 | 1)[]; bad: BadInterArg; badGroup: 0 | 1; remoteIdle: boolean },
): Promise<BadInterObservation> {
  const color = args.colors[comm.rank];
  const local = (await comm.split(color, comm.rank)) as Communicator;
  const remoteLeader = args.colors.findIndex((c) => c !== color);
  const bad = color === args.badGroup;
  if (!bad && args.remoteIdle) return { outcome: 'idle', after: null };
  let localLeader = 0;
  let peer: Communicator | null = comm;
  let rl = remoteLeader;
  let tag = 77;
  const last = local.rank === local.size - 1;
  if (bad && local.rank === 0 && args.bad === 'peer') peer = null;
  if (bad && local.rank === 0 && args.bad === 'remoteLeader') rl = comm.size + 3;
  if (bad && local.rank === 0 && args.bad === 'tag') tag = -5;
  if (bad && last && args.bad === 'leaderRange') localLeader = local.size;
  if (bad && last && args.bad === 'leaderMismatch') localLeader = local.size - 1;
  const r = await settle(createIntercomm(local, localLeader, peer, rl, tag));
  const outcome = 'ok' in r ? ('resolved' as const) : r.error;
  if (args.remoteIdle) return { outcome, after: null };
  const ic = await createIntercomm(local, 0, comm, remoteLeader, 77);
  return { outcome, after: await exchangeIds(ic, comm.rank, TAG, true) };
}

/** Bad ranks and tags on a sub-communicator: every failure observed. */
export async function badArgsScenario(comm: Communicator): Promise<Failure[]> {
  const c = (await comm.split(comm.rank % 2, comm.rank)) as Communicator;
  const out: Failure[] = [];
  const ops: (() => unknown)[] = [
    () => c.isend(c.size, 0, new Uint8Array(1)),
    () => c.irecv(-2, 0, new Uint8Array(1)),
    () => c.irecv(c.size, 0, new Uint8Array(1)),
    () => c.isend(0, 2 ** 31, new Uint8Array(1)),
    () => c.isend(0, 1.5, new Uint8Array(1)),
    () => c.irecv(0, -2, new Uint8Array(1)),
    () => c.nodeOf(c.size),
  ];
  for (const op of ops) {
    try {
      await op();
      out.push(failure(new Error('no error')));
    } catch (e) {
      out.push(failure(e));
    }
  }
  return out;
}

export interface AnyTagObservation {
  /** Status of the ANY_SOURCE / ANY_TAG receive posted before the collectives. */
  readonly status: { source: number; tag: number; bytes: number };
  /** Rank (in the communicator) written in the payload of the message it got. */
  readonly from: number;
  /** Whether the broadcast delivered the root's bytes. */
  readonly bcastOk: boolean;
  /** Size of the communicator split off while the receive was pending. */
  readonly splitSize: number;
}

/**
 * A user ANY_SOURCE / ANY_TAG receive is pending while collectives (bcast, barrier) and a split
 * run on the same communicator; only then does every rank send one user message (tag 3) to the
 * next rank. The wildcard receive must get that message, never a collective's.
 */
export async function anyTagScenario(comm: Communicator): Promise<AnyTagObservation> {
  const into = new Uint8Array(64);
  const pending = comm.irecv(ANY_SOURCE, ANY_TAG, into);
  const buf = new Uint8Array(40);
  if (comm.rank === 0) buf.set(Array.from({ length: 40 }, (_, i) => (i * 7 + 1) & 255));
  await bcast(comm, buf, 0);
  await barrier(comm);
  const sub = (await comm.split(0, comm.rank)) as Communicator;
  await comm.send((comm.rank + 1) % comm.size, 3, int32s(comm.rank, 12345));
  const st = await pending;
  return {
    status: { source: st.source, tag: st.tag, bytes: st.bytes },
    from: readInt32s(into, 1)[0],
    bcastOk: buf.every((b, i) => b === ((i * 7 + 1) & 255)),
    splitSize: sub.size,
  };
}

/** Rank `args.rank` throws after a split; every other rank waits on its sub-communicator. */
export async function failureScenario(comm: Communicator, args: { rank: number }): Promise<string> {
  const c = (await comm.split(comm.rank % 2, 0)) as Communicator;
  if (comm.rank === args.rank) throw new Error('boom in a sub-communicator');
  await c.recv(ANY_SOURCE, 0, new Uint8Array(4));
  return 'unreachable';
}

/** What `blockingRecvScenario` saw. */
export interface BlockingRecvObservation {
  /** Rank and size in the communicator the scenario ran on. */
  readonly rank: number;
  readonly size: number;
  /** Per round of the ring: whether the bytes from the left neighbour were the expected ones. */
  readonly ring: boolean[];
  /** Tags out of order: whether each of the two messages was right, and the two statuses. */
  readonly outOfOrder: boolean[];
  readonly statuses: { source: number; tag: number; bytes: number }[];
}

/** The byte `i` of the message rank `from` sends in round `round`. */
const patternByte = (from: number, round: number, i: number): number => (from * 31 + round * 7 + i) & 255;

function pattern(from: number, round: number, n: number, offset = 0): Uint8Array {
  const out = new Uint8Array(offset + n).subarray(offset);
  for (let i = 0; i < n; i++) out[i] = patternByte(from, round, i);
  return out;
}

function isPattern(buf: Uint8Array, from: number, round: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (buf[i] !== patternByte(from, round, i)) return false;
  return true;
}

/**
 * Blocking receives (`recv`, which a transport may serve by watching the channel before it
 * posts): (1) a ring where every rank calls `recv` from the left *before* it sends to the
 * right in the same Promise.all — the receive must not hold up the send for good; sizes from
 * 0 to past a small ring, misaligned; (2) two messages from the left with tags 1 then 2,
 * received tag 2 first. Runs on whatever communicator it is given (world or split).
 */
export async function blockingRecvScenario(
  world: Communicator,
  args: { sizes: number[]; split?: boolean },
): Promise<BlockingRecvObservation> {
  // Split: two halves by parity, ranked in reverse (local ranks and statuses differ from the world's).
  const comm = args.split === true ? ((await world.split(world.rank % 2, -world.rank)) as Communicator) : world;
  const p = comm.size;
  const right = (comm.rank + 1) % p;
  const left = (comm.rank - 1 + p) % p;
  const ring: boolean[] = [];
  for (let round = 0; round < args.sizes.length; round++) {
    const n = args.sizes[round];
    const into = new Uint8Array(n + 3).subarray(round % 3);
    const [st] = await Promise.all([comm.recv(left, TAG, into), comm.send(right, TAG, pattern(comm.rank, round, n, round % 5))]);
    ring.push(st.source === left && st.tag === TAG && st.bytes === n && isPattern(into, left, round, n));
  }
  const a = new Uint8Array(100);
  const b = new Uint8Array(100);
  await comm.send(right, 1, pattern(comm.rank, 1001, 70));
  await comm.send(right, 2, pattern(comm.rank, 1002, 9));
  const s2 = await comm.recv(left, 2, b);
  const s1 = await comm.recv(left, 1, a);
  return {
    rank: comm.rank,
    size: p,
    ring,
    outOfOrder: [isPattern(a, left, 1001, 70), isPattern(b, left, 1002, 9)],
    statuses: [s2, s1].map((st) => ({ source: st.source, tag: st.tag, bytes: st.bytes })),
  };
}

/** What `allocRecvScenario` saw. */
export interface AllocRecvObservation {
  readonly rank: number;
  readonly size: number;
  /** Per size: posted before the message came (ring), and after (unexpected), both right. */
  readonly posted: boolean[];
  readonly unexpected: boolean[];
  /** ANY_SOURCE from the left neighbour: source, tag, bytes and data right. */
  readonly anySource: boolean;
  /** A message to oneself. */
  readonly self: boolean;
  /** A message longer than maxBytes, then bad maxBytes. */
  readonly tooLong: Failure | 'resolved';
  readonly badMax: Failure | 'resolved';
}

/**
 * irecvAlloc (receive of unknown size) on a ring: a receive posted before its message is sent
 * and one posted after the message arrived, for sizes around the transports' thresholds;
 * ANY_SOURCE, to oneself, over maxBytes (TruncationError), bad maxBytes. On the world
 * communicator or (`split`) on a reversed half.
 */
export async function allocRecvScenario(world: Communicator, args: { sizes: number[]; split?: boolean }): Promise<AllocRecvObservation> {
  const comm = args.split === true ? ((await world.split(world.rank % 2, -world.rank)) as Communicator) : world;
  const p = comm.size;
  const right = (comm.rank + 1) % p;
  const left = (comm.rank - 1 + p) % p;
  const good = (st: { source: number; tag: number; bytes: number; data: Uint8Array }, from: number, tag: number, round: number, n: number): boolean =>
    st.source === from && st.tag === tag && st.bytes === n && st.data.length === n && isPattern(st.data, from, round, n);
  const posted: boolean[] = [];
  const unexpected: boolean[] = [];
  for (let round = 0; round < args.sizes.length; round++) {
    const n = args.sizes[round];
    const pending = comm.irecvAlloc(left, TAG);
    await barrier(comm);
    const [st] = await Promise.all([pending, comm.send(right, TAG, pattern(comm.rank, round, n, round % 3))]);
    posted.push(good(st, left, TAG, round, n));
    const sent = comm.isend(right, TAG + 1, pattern(comm.rank, round + 100, n));
    await barrier(comm);
    const st2 = await comm.recvAlloc(left, TAG + 1, n);
    await sent;
    unexpected.push(good(st2, left, TAG + 1, round + 100, n));
  }
  const [sa] = await Promise.all([comm.recvAlloc(ANY_SOURCE, TAG + 2), comm.send(right, TAG + 2, pattern(comm.rank, 500, 33))]);
  const [ss] = await Promise.all([comm.recvAlloc(comm.rank, TAG + 3), comm.send(comm.rank, TAG + 3, pattern(comm.rank, 501, 77))]);
  const sendLong = comm.send(right, TAG + 4, pattern(comm.rank, 502, 100));
  const long = await settle(comm.recvAlloc(left, TAG + 4, 99));
  await sendLong;
  const tooLong = 'ok' in long ? ('resolved' as const) : long.error;
  const bad = await settle(comm.recvAlloc(left, TAG + 5, -1));
  const badMax = 'ok' in bad ? ('resolved' as const) : bad.error;
  return {
    rank: comm.rank,
    size: p,
    posted,
    unexpected,
    anySource: good(sa, left, TAG + 2, 500, 33),
    self: good(ss, comm.rank, TAG + 3, 501, 77),
    tooLong,
    badMax,
  };
}

export const scenarios = {
  allocRecv: allocRecvScenario,
  blockingRecv: blockingRecvScenario,
  failure: failureScenario,
  anyTag: anyTagScenario,
  badInter: badInterScenario,
  split: splitScenario,
  isolation: isolationScenario,
  concurrent: concurrentScenario,
  badSplit: badSplitScenario,
  byNode: byNodeScenario,
  inter: interScenario,
  badArgs: badArgsScenario,
};
