/**
 * Intercommunicators (MPI-4.0 §7.6): a local and a disjoint remote group; point-to-point
 * operations address ranks of the REMOTE group, and `local` is the intra-communicator of the
 * local group (for intergroup collectives, e.g. the intergroup allgather of the papers).
 *
 * - `createIntercomm` (MPI_Intercomm_create): each group agrees on the maximum of its members'
 *   context counters (Bruck allgather, ⌈log₂n⌉α), the two leaders exchange that and their
 *   group's world ranks over the `peer` communicator (α + 8(n+1)β), and each leader broadcasts
 *   the other group's list and the agreed context within its group (binomial,
 *   ⌈log₂n⌉(α + 8(n'+1)β)).
 * - `splitIntercomm`: both groups out of one communicator by color 0/1 in one max-allreduce
 *   (⌈log₂p⌉(α + 48β)) when each color's ranks are consecutive, plus an allgather of the
 *   colors (⌈log₂p⌉α + 8(p−1)β) when they are not: no leader traffic.
 * - `merge` (MPI_Intercomm_merge): the union as an intra-communicator, the group passing
 *   `high` = false first; same cost shape as createIntercomm with constant-size messages.
 *
 * Context agreement covers both groups, so the new context differs from every context any
 * member of either group uses (see src/comm/agree.ts); user and collective tags travel in the
 * context's two endpoint contexts (`endpointCtx`), as on intra-communicators.
 */

import { InvalidArgumentError } from '../errors.js';
import { allgatherRecords, allreduceMaxRecords, bcastBytes, endpointCtx, MANAGEMENT_TAG, withContext } from './agree.js';
import { ANY_SOURCE, PointToPointBase, type Communicator, type Received, type Status } from './communicator.js';
import type { Endpoint, VirtualClock } from './endpoint.js';
import type { NativeInterCollectives } from './native.js';
import { handled, mapRequest, OpRequest, type Request, waitAll } from './request.js';
import { type MessageData, toBytes } from './segments.js';
import { boundOf, type BoundSchedule, type RankSchedule, type ScheduleOptions } from './schedule.js';
import { badMaxBytes, badRank, badTag, GroupCommunicator, indexInWorldRange, indexOfWorldRanks } from './group.js';

const TAG_INTER_GATHER = MANAGEMENT_TAG + 3;
const TAG_INTER_BCAST = MANAGEMENT_TAG + 4;
const TAG_MERGE_GATHER = MANAGEMENT_TAG + 5;
const TAG_MERGE_LEADER = MANAGEMENT_TAG + 6;
const TAG_MERGE_BCAST = MANAGEMENT_TAG + 7;

export interface InterCommunicator {
  /** This rank in the local group. */
  readonly rank: number;
  /** Size of the local group. */
  readonly size: number;
  /** Size of the remote group. */
  readonly remoteSize: number;
  /** The intra-communicator of the local group. */
  readonly local: Communicator;
  readonly clock?: VirtualClock;
  /** Sends to rank `dest` of the REMOTE group. */
  isend(dest: number, tag: number, data: MessageData): Request<void>;
  /** Receives from rank `source` of the REMOTE group (or ANY_SOURCE); Status.source is a remote rank. */
  irecv(source: number, tag: number, into: MessageData): Request<Status>;
  /** A receive of unknown size from remote rank `source` (Communicator.irecvAlloc). */
  irecvAlloc(source: number, tag: number, maxBytes?: number): Request<Received>;
  recvAlloc(source: number, tag: number, maxBytes?: number): Promise<Received>;
  send(dest: number, tag: number, data: MessageData): Promise<void>;
  recv(source: number, tag: number, into: MessageData): Promise<Status>;
  waitAll<T>(ops: readonly Request<T>[]): Promise<T[]>;
  copy(dst: Uint8Array, src: Uint8Array): void;
  /** The node of local rank `rank`. */
  nodeOf(rank: number): number;
  /** The node of remote rank `rank`. */
  nodeOfRemote(rank: number): number;
  /**
   * The transport's own intergroup collectives (MPI's, on the MPI transport; absent elsewhere).
   * The first use is collective over both groups (it makes the MPI intercommunicator).
   */
  readonly native?: NativeInterCollectives;
  /**
   * Present when the transport has a native executor of schedules: binds this rank's
   * `schedule`, whose peers are ranks of the REMOTE group, to `buffers` (validated by the
   * caller: schedule/run.ts bindInterSchedule); undefined when the executor declines it.
   */
  readonly bindValidatedSchedule?: (schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions) => BoundSchedule | undefined;
  /**
   * Whether this group is the "low" group: its local rank 0 has a lower world rank than the
   * remote group's (MPICH's is_low_group). Known locally; the same answer on every rank of a
   * group and the opposite one in the other group.
   */
  readonly lowGroup: boolean;
  /**
   * MPI_Intercomm_merge, collective over both groups: one intra-communicator, the group whose
   * ranks pass `high` = false first (if both pass the same value, the group holding the lower
   * world rank first), each group in its local order. All ranks of a group pass the same `high`.
   */
  merge(high: boolean): Promise<Communicator>;
}

function groupOf(c: Communicator, field: string, rank?: number): GroupCommunicator {
  if (!(c instanceof GroupCommunicator)) {
    throw new InvalidArgumentError(field, 'must be a communicator built by vcoll (createWorldCommunicator or split)', {
      rank,
    });
  }
  return c;
}

function f64bytes(a: Float64Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function asF64(b: Uint8Array): Float64Array {
  const copy = new Uint8Array(b.length);
  copy.set(b);
  return new Float64Array(copy.buffer);
}

class GroupInterCommunicator extends PointToPointBase implements InterCommunicator {
  readonly rank: number;
  readonly size: number;
  readonly remoteSize: number;
  readonly lowGroup: boolean;
  readonly clock?: VirtualClock;
  private readonly endpoint: Endpoint;
  private remoteOf: Map<number, number> | undefined;
  readonly bindValidatedSchedule?: (schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions) => BoundSchedule | undefined;

  constructor(
    readonly local: GroupCommunicator,
    private readonly ctx: number,
    private readonly remote: Int32Array,
  ) {
    super();
    this.endpoint = local.endpoint;
    this.rank = local.rank;
    this.size = local.size;
    this.lowGroup = local.worldRankOf(0) < remote[0];
    this.remoteSize = remote.length;
    if (local.clock !== undefined) this.clock = local.clock;
    this.endpoint.openContext?.(ctx, [...local.worldRanks(), ...remote].sort((a, b) => a - b));
    const native = this.endpoint.bindSchedule;
    if (native !== undefined) {
      const endpoint = this.endpoint;
      // the schedule's peers are remote ranks: `remote` maps them to world ranks
      this.bindValidatedSchedule = (schedule, buffers, options) => {
        const es = native.call(endpoint, ctx, remote, schedule, buffers, options);
        return es === undefined ? undefined : boundOf(es);
      };
    }
  }

  private nativeOps: NativeInterCollectives | null | undefined;

  get native(): NativeInterCollectives | undefined {
    if (this.nativeOps === undefined) {
      const ep = this.endpoint;
      this.nativeOps = ep.nativeInterCollectives === undefined ? null : ep.nativeInterCollectives(this.ctx, this.local.ctx, this.remote[0]);
    }
    return this.nativeOps ?? undefined;
  }

  private badRemote(field: string, r: number, wildcard: boolean): InvalidArgumentError | undefined {
    return badRank(field, r, this.remoteSize, wildcard, this.rank, 'remote rank');
  }

  private badTag(t: number, wildcard: boolean): InvalidArgumentError | undefined {
    return badTag(t, wildcard, this.rank);
  }

  private remoteRankOfWorld(world: number): number {
    const inRange = indexInWorldRange(this.remote, world);
    if (inRange !== undefined) return inRange;
    if (this.remoteOf === undefined) this.remoteOf = indexOfWorldRanks(this.remote);
    return this.remoteOf.get(world) ?? -1;
  }

  isend(dest: number, tag: number, data: MessageData): Request<void> {
    const bad = this.badRemote('dest', dest, false) ?? this.badTag(tag, false);
    if (bad !== undefined) return OpRequest.failed(bad);
    return this.endpoint.isend(endpointCtx(this.ctx, tag), this.remote[dest], tag, toBytes(data));
  }

  irecv(source: number, tag: number, into: MessageData): Request<Status> {
    const bad = this.badRemote('source', source, true) ?? this.badTag(tag, true);
    if (bad !== undefined) return OpRequest.failed(bad);
    const ctx = endpointCtx(this.ctx, tag);
    if (source !== ANY_SOURCE) {
      return mapRequest(this.endpoint.irecv(ctx, this.remote[source], tag, toBytes(into)), (st) => ({ source, tag: st.tag, bytes: st.bytes }));
    }
    return mapRequest(this.endpoint.irecv(ctx, ANY_SOURCE, tag, toBytes(into)), (st) => ({
      source: this.remoteRankOfWorld(st.source),
      tag: st.tag,
      bytes: st.bytes,
    }));
  }

  irecvAlloc(source: number, tag: number, maxBytes = Infinity): Request<Received> {
    const bad = this.badRemote('source', source, true) ?? this.badTag(tag, true) ?? badMaxBytes(maxBytes, this.rank);
    if (bad !== undefined) return OpRequest.failed(bad);
    const ctx = endpointCtx(this.ctx, tag);
    if (source !== ANY_SOURCE) {
      return mapRequest(this.endpoint.irecvAlloc(ctx, this.remote[source], tag, maxBytes), (st) => ({ source, tag: st.tag, bytes: st.bytes, data: st.data }));
    }
    return mapRequest(this.endpoint.irecvAlloc(ctx, ANY_SOURCE, tag, maxBytes), (st) => ({
      source: this.remoteRankOfWorld(st.source),
      tag: st.tag,
      bytes: st.bytes,
      data: st.data,
    }));
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    this.endpoint.copy(dst, src);
  }

  nodeOf(rank: number): number {
    return this.local.nodeOf(rank);
  }

  nodeOfRemote(rank: number): number {
    const bad = this.badRemote('rank', rank, false);
    if (bad !== undefined) throw bad;
    return this.endpoint.nodeOf(this.remote[rank]);
  }

  merge(high: boolean): Promise<Communicator> {
    const local = this.local;
    return withContext(this.endpoint, async (counter) => {
      const flagBad = typeof high === 'boolean' ? 0 : 1;
      const mine = Float64Array.of(high === true ? 1 : 0, counter.next, flagBad);
      const all = await allgatherRecords(local, TAG_MERGE_GATHER, mine);
      let localMax = 0;
      let bad = 0;
      for (let i = 0; i < local.size; i++) {
        localMax = Math.max(localMax, all[i * 3 + 1]);
        if (all[i * 3 + 2] !== 0 || all[i * 3] !== all[0]) bad = 1;
      }
      const localHigh = all[0];
      let remoteInfo: Uint8Array | null = null;
      if (local.rank === 0) {
        const out = Float64Array.of(localHigh, localMax, bad);
        const into = new Float64Array(3);
        await waitAll<unknown>([
          this.endpoint.isend(endpointCtx(this.ctx, TAG_MERGE_LEADER), this.remote[0], TAG_MERGE_LEADER, f64bytes(out)),
          this.endpoint.irecv(endpointCtx(this.ctx, TAG_MERGE_LEADER), this.remote[0], TAG_MERGE_LEADER, f64bytes(into)),
        ]);
        remoteInfo = f64bytes(into);
      }
      const got = asF64(await bcastBytes(local, TAG_MERGE_BCAST, 0, remoteInfo, 24));
      const [remoteHigh, remoteMax, remoteBad] = [got[0], got[1], got[2]];
      if (bad !== 0 || remoteBad !== 0) {
        throw new InvalidArgumentError(
          'high',
          `every rank of ${bad !== 0 ? 'this' : 'the remote'} group must pass the same boolean`,
          { rank: local.rank },
        );
      }
      const ctx = Math.max(localMax, remoteMax);
      counter.claim(ctx);
      const mineWorld = local.worldRanks();
      const theirs = Array.from(this.remote);
      const localFirst = localHigh !== remoteHigh ? localHigh === 0 : this.lowGroup;
      const group = localFirst ? [...mineWorld, ...theirs] : [...theirs, ...mineWorld];
      const rank = localFirst ? local.rank : theirs.length + local.rank;
      return new GroupCommunicator(this.endpoint, ctx, group, rank);
    });
  }
}

/** The arguments of createIntercomm whose errors a group reports (index + 1 is the code exchanged). */
const FIELDS = ['localLeader', 'peer', 'remoteLeader', 'tag'] as const;
/** Status codes of the leader's broadcast: 0 fine, REMOTE_BAD + i: field i bad in the remote group. */
const REMOTE_BAD = 10;
const NOT_DISJOINT = 20;

/**
 * What the leader sees wrong with the arguments only it uses (undefined: nothing): `peer` must be
 * a vcoll communicator on the same transport, `remoteLeader` one of its ranks, `tag` a valid tag.
 */
function badPeerArgs(lc: GroupCommunicator, peer: Communicator | null, remoteLeader: number, tag: number): InvalidArgumentError | undefined {
  const rank = lc.rank;
  if (!(peer instanceof GroupCommunicator)) {
    return new InvalidArgumentError('peer', 'must be a communicator built by vcoll (createWorldCommunicator or split)', { rank });
  }
  if (peer.endpoint !== lc.endpoint) return new InvalidArgumentError('peer', 'must live on the same transport as local', { rank });
  return badRank('remoteLeader', remoteLeader, peer.size, false, rank) ?? badTag(tag, false, rank);
}

/**
 * MPI_Intercomm_create, collective over both groups: `local` is this group's communicator and
 * `localLeader` its leader (the same on every rank of the group); at the leader, `peer` is a
 * communicator holding both leaders, `remoteLeader` the other leader's rank in `peer` and
 * `tag` the tag of the leaders' exchange on `peer` (ignored elsewhere). The groups must be
 * disjoint.
 *
 * Bad arguments: every rank checks `local` and `localLeader`, the leader `peer`, `remoteLeader`
 * and `tag`, and the group shares what it found in its first allgather, so every rank of the
 * group rejects with an InvalidArgumentError naming the field (no rank of the group hangs).
 * The remote group is told too (and rejects naming the field) whenever the leader can still
 * reach the remote leader, i.e. unless the bad argument is `peer`, `remoteLeader` or `tag`
 * itself: the remote leader then waits for a message that cannot come, as in MPI, where such a
 * call is erroneous. A `local` that is not a vcoll communicator rejects at once on that rank.
 */
export async function createIntercomm(
  local: Communicator,
  localLeader: number,
  peer: Communicator | null,
  remoteLeader: number,
  tag: number,
): Promise<InterCommunicator> {
  const lc = groupOf(local, 'local');
  const leaderOk = Number.isInteger(localLeader) && localLeader >= 0 && localLeader < lc.size;
  const leader = leaderOk && lc.rank === localLeader;
  const peerBad = leader ? badPeerArgs(lc, peer, remoteLeader, tag) : undefined;
  const endpoint = lc.endpoint;
  const maxBytes = 8 * (endpoint.worldSize + 2);
  return withContext(endpoint, async (counter) => {
    // Every member's counter, its localLeader (-1: out of range) and, at a leader, the index in
    // FIELDS of a bad peer argument (0: none, -1: not a leader).
    const verdict = !leader ? -1 : peerBad === undefined ? 0 : FIELDS.indexOf(peerBad.field as (typeof FIELDS)[number]);
    const all = await allgatherRecords(lc, TAG_INTER_GATHER, Float64Array.of(counter.next, leaderOk ? localLeader : -1, verdict));
    let localMax = 0;
    for (let i = 0; i < lc.size; i++) localMax = Math.max(localMax, all[i * 3]);
    // The group's leader is rank 0's choice; every rank must have made it.
    const theLeader = all[1];
    let error: InvalidArgumentError | undefined;
    for (let i = 0; i < lc.size && error === undefined; i++) {
      const l = all[i * 3 + 1];
      if (l < 0 || l !== theLeader) {
        const what = l < 0 ? `a leader outside [0, ${lc.size})` : `${l} while rank 0 passed ${theLeader}`;
        error = new InvalidArgumentError('localLeader', `rank ${i} passed ${what}; every rank must pass the same leader`, { rank: lc.rank });
      }
    }
    const leaderVerdict = theLeader >= 0 ? all[theLeader * 3 + 2] : -1;
    if (error === undefined && leaderVerdict > 0) {
      error =
        peerBad ??
        new InvalidArgumentError(FIELDS[leaderVerdict], `the leader (rank ${theLeader}) passed a bad ${FIELDS[leaderVerdict]}`, {
          rank: lc.rank,
        });
    }
    // The exchange of the leaders takes place whenever this group's leader can reach the other.
    const exchanging = leaderVerdict === 0 && lc.rank === theLeader;
    let info: Uint8Array | null = null;
    if (exchanging) {
      const pc = peer as GroupCommunicator;
      const code = error === undefined ? 0 : 1 + FIELDS.indexOf(error.field as (typeof FIELDS)[number]);
      const out = Float64Array.from([code, localMax, ...lc.worldRanks()]);
      const into = new Uint8Array(maxBytes);
      const send = handled(pc.isend(remoteLeader, tag, f64bytes(out)));
      const st = await pc.irecv(remoteLeader, tag, into);
      await send;
      const theirs = asF64(into.subarray(0, st.bytes));
      // [status, context, the remote group's world ranks…]
      const remoteCode = theirs[0];
      theirs[0] = remoteCode !== 0 ? REMOTE_BAD + remoteCode - 1 : 0;
      theirs[1] = Math.max(theirs[1], localMax);
      const mine = new Set(lc.worldRanks());
      for (let i = 2; i < theirs.length && theirs[0] === 0; i++) if (mine.has(theirs[i])) theirs[0] = NOT_DISJOINT;
      info = f64bytes(theirs);
    }
    // Every rank knows of an error of its own group from the allgather: nothing more to wait for.
    if (error !== undefined) throw error;
    const got = asF64(await bcastBytes(lc, TAG_INTER_BCAST, theLeader, info, maxBytes));
    const status = got[0];
    if (status === NOT_DISJOINT) throw new InvalidArgumentError('local', 'the local and the remote group must be disjoint', { rank: lc.rank });
    if (status !== 0) {
      const field = FIELDS[status - REMOTE_BAD];
      throw new InvalidArgumentError(field, `the remote group's ${field} was invalid (its ranks report which)`, { rank: lc.rank });
    }
    const ctx = got[1];
    counter.claim(ctx);
    return new GroupInterCommunicator(lc, ctx, Int32Array.from(got.subarray(2)));
  });
}

/**
 * The record every rank contributes to splitIntercomm's max-allreduce: [the highest rank that
 * passed a bad color, the context counter, for color 0 the last and (negated) the first rank
 * that passed it, the same for color 1]. −∞: nobody.
 */
const SPLIT_BAD = 0;
const SPLIT_CTX = 1;
const SPLIT_LAST = [2, 4] as const;
const SPLIT_FIRST_NEGATED = [3, 5] as const;

function splitRecord(rank: number, color: unknown, counter: number): Float64Array {
  const r = Float64Array.of(-Infinity, counter, -Infinity, -Infinity, -Infinity, -Infinity);
  if (color === 0 || color === 1) {
    r[SPLIT_LAST[color]] = rank;
    r[SPLIT_FIRST_NEGATED[color]] = -rank;
  } else {
    r[SPLIT_BAD] = rank;
  }
  return r;
}

/** The ranks [first, first + size) of each color when every color's ranks are consecutive, else undefined. */
function colorRanges(all: Float64Array): readonly { first: number; size: number }[] | undefined {
  const ranges = ([0, 1] as const).map((c) => {
    const first = -all[SPLIT_FIRST_NEGATED[c]];
    return { first, size: all[SPLIT_LAST[c]] - first + 1 };
  });
  // Every rank has color 0 or 1: if the spans [first, last] of the two colors are disjoint,
  // each color's ranks are exactly its span.
  const [a, b] = ranges;
  return a.first + a.size <= b.first || b.first + b.size <= a.first ? ranges : undefined;
}

/**
 * An intercommunicator from one communicator: ranks passing color 0 form one group, color 1
 * the other (each in `comm`'s rank order). Collective over `comm`; both groups must be
 * non-empty, and a bad color anywhere rejects on every rank.
 *
 * One max-allreduce of a 48-byte record (comm/agree.ts, ⌈log₂p⌉(α + 48β)) gives every rank the
 * context, any bad color, and the first and last rank of each color. When each color's ranks
 * are consecutive (a group given by a range, as Kang19's groups A and B of §5 are) that is
 * the whole membership: both groups are views of one shared table of world ranks, O(1) per
 * rank, so that a simulation's P ranks hold O(P) in all, not P². Otherwise (colors
 * interleaved) every rank gathers every color (Bruck allgather of 8-byte records, ⌈log₂p⌉α +
 * 8(p−1)β) and keeps its own lists. Every rank takes the same path, from the same maxima.
 */
export function splitIntercomm(comm: Communicator, color: 0 | 1): Promise<InterCommunicator> {
  const c = groupOf(comm, 'comm');
  return withContext(c.endpoint, async (counter) => {
    const all = await allreduceMaxRecords(c, TAG_INTER_GATHER, splitRecord(c.rank, color, counter.next));
    if (all[SPLIT_BAD] >= 0) {
      throw new InvalidArgumentError('color', `rank ${all[SPLIT_BAD]} passed a color other than 0 or 1`, { rank: c.rank });
    }
    if (all[SPLIT_LAST[1 - color]] < 0) {
      throw new InvalidArgumentError('color', `every rank passed ${color}; both groups must be non-empty`, { rank: c.rank });
    }
    // The two local intra-communicators are disjoint and may share ctx; the intercomm takes ctx + 1.
    const ctx = all[SPLIT_CTX];
    counter.claim(ctx + 1);
    const ranges = colorRanges(all);
    let mine: Int32Array;
    let theirs: Int32Array;
    let rank: number;
    if (ranges !== undefined) {
      mine = c.worldRanksOfRange(ranges[color].first, ranges[color].size);
      theirs = c.worldRanksOfRange(ranges[1 - color].first, ranges[1 - color].size);
      rank = c.rank - ranges[color].first;
    } else {
      // the same tag as the allreduce: every rank's allreduce messages precede its gather's
      const colors = await allgatherRecords(c, TAG_INTER_GATHER, Float64Array.of(color));
      const own: number[] = [];
      const other: number[] = [];
      for (let i = 0; i < c.size; i++) (colors[i] === color ? own : other).push(c.worldRankOf(i));
      mine = Int32Array.from(own);
      theirs = Int32Array.from(other);
      rank = own.indexOf(c.worldRankOf(c.rank));
    }
    const localComm = new GroupCommunicator(c.endpoint, ctx, mine, rank);
    return new GroupInterCommunicator(localComm, ctx + 1, theirs);
  });
}
