/**
 * The simulator's Endpoint (src/comm/endpoint.ts): one per rank, a thin validating layer over
 * the shared Simulation, plus the rank's virtual clock. Communicators (world and split) are
 * built on it by comm/group.ts.
 */
import type { Received, Status } from '../../comm/communicator.js';
import { badMaxBytes, badRank, badTag } from '../../comm/group.js';
import { OpRequest, type Request } from '../../comm/request.js';
import { byteLength, isMessageBuffer, type MessageBuffer } from '../../comm/segments.js';
import type { Endpoint, VirtualClock } from '../../comm/endpoint.js';
import type { EndpointSchedule, RankSchedule, ScheduleOptions } from '../../comm/schedule.js';
import { InvalidArgumentError } from '../../errors.js';
import { RECV, SEND } from './op.js';
import { SimSchedule } from './schedule.js';
import type { Simulation } from './sim.js';

class SimClock implements VirtualClock {
  constructor(
    private readonly sim: Simulation,
    private readonly rank: number,
  ) {}

  now(): number {
    return this.sim.timeOf(this.rank);
  }

  sync(): Promise<void> {
    return this.sim.sync(this.rank);
  }

  chargeCopies(bytes: number, count: number): void {
    this.sim.chargeCopies(this.rank, bytes, count);
  }
}

const EMPTY = new Uint8Array(0);

const isCount = (x: number): boolean => Number.isInteger(x) && x >= 0;

export class SimEndpoint implements Endpoint {
  readonly worldRank: number;
  readonly worldSize: number;
  readonly clock: VirtualClock;

  constructor(
    private readonly sim: Simulation,
    rank: number,
  ) {
    this.worldRank = rank;
    this.worldSize = sim.p;
    this.clock = new SimClock(sim, rank);
  }

  private bad(field: string, message: string): Request<never> {
    return OpRequest.failed(new InvalidArgumentError(field, message, { rank: this.worldRank }));
  }

  // Checks in the order and with the errors of GroupCommunicator (dest/source, tag, buffer):
  // the world communicator trusts them (createWorldCommunicator's endpointChecks).
  isend(ctx: number, dest: number, tag: number, data: MessageBuffer): Request<void> {
    const bad = badRank('dest', dest, this.worldSize, false, this.worldRank) ?? badTag(tag, false, this.worldRank);
    if (bad !== undefined) return OpRequest.failed(bad);
    if (!isCount(ctx)) return this.bad('ctx', `must be an integer >= 0, got ${ctx}`);
    if (data instanceof Uint8Array) return this.sim.post(SEND, this.worldRank, ctx, dest, tag, data, data.length) as OpRequest<void>;
    if (!isMessageBuffer(data)) return this.bad('data', 'must be a Uint8Array or an array of them (communicators take any typed array or DataView)');
    return this.sim.post(SEND, this.worldRank, ctx, dest, tag, data, byteLength(data)) as OpRequest<void>;
  }

  irecv(ctx: number, source: number, tag: number, into: MessageBuffer): Request<Status> {
    const bad = badRank('source', source, this.worldSize, true, this.worldRank) ?? badTag(tag, true, this.worldRank);
    if (bad !== undefined) return OpRequest.failed(bad);
    if (!isCount(ctx)) return this.bad('ctx', `must be an integer >= 0, got ${ctx}`);
    if (into instanceof Uint8Array) return this.sim.post(RECV, this.worldRank, ctx, source, tag, into, into.length) as OpRequest<Status>;
    if (!isMessageBuffer(into)) return this.bad('into', 'must be a Uint8Array or an array of them (communicators take any typed array or DataView)');
    return this.sim.post(RECV, this.worldRank, ctx, source, tag, into, byteLength(into)) as OpRequest<Status>;
  }

  irecvAlloc(ctx: number, source: number, tag: number, maxBytes: number): Request<Received> {
    const bad = badRank('source', source, this.worldSize, true, this.worldRank) ?? badTag(tag, true, this.worldRank) ?? badMaxBytes(maxBytes, this.worldRank);
    if (bad !== undefined) return OpRequest.failed(bad);
    if (!isCount(ctx)) return this.bad('ctx', `must be an integer >= 0, got ${ctx}`);
    return this.sim.post(RECV, this.worldRank, ctx, source, tag, EMPTY, maxBytes, true) as OpRequest<Received>;
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    const rank = this.worldRank;
    if (!(dst instanceof Uint8Array)) throw new InvalidArgumentError('dst', 'must be a Uint8Array', { rank });
    if (!(src instanceof Uint8Array)) throw new InvalidArgumentError('src', 'must be a Uint8Array', { rank });
    if (src.length > dst.length) {
      throw new InvalidArgumentError('dst', `holds ${dst.length} bytes, the copy needs ${src.length}`, { rank });
    }
    dst.set(src);
    this.sim.chargeCopy(rank, src.length);
  }

  /**
   * The engine's native executor of `schedule` (sim/schedule.ts): the portable executor's
   * operations, order, virtual times and errors, with one request per run and none per
   * operation. Validated by the caller (schedule/run.ts bindSchedule).
   */
  bindSchedule(
    ctx: number,
    worldOf: Int32Array | null,
    schedule: RankSchedule,
    buffers: readonly Uint8Array[],
    options: ScheduleOptions,
  ): EndpointSchedule {
    return new SimSchedule(this.sim, this.worldRank, ctx, worldOf, schedule, buffers, options);
  }

  nodeOf(worldRank: number): number {
    if (!(isCount(worldRank) && worldRank < this.worldSize)) {
      throw new InvalidArgumentError('rank', `${worldRank} outside [0, ${this.worldSize - 1}]`, { rank: this.worldRank });
    }
    return this.sim.nodeOf(worldRank);
  }
}
