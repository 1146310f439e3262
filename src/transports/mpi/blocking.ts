/**
 * Blocking point-to-point over MPI, for latency-critical loops: `mpiBlocking(comm).send` is
 * MPI_Send and `.recv` MPI_Recv, called in the rank's thread. They return values, not promises
 * (no `await`, no request object), so a Node ping-pong costs what the same loop costs in C plus
 * one N-API call per operation. The price is MPI's: the thread waits inside MPI, so the event
 * loop stands still meanwhile (vcoll's other pending operations still progress inside MPI, but
 * their continuations run only afterwards), and a receive whose message never comes blocks for
 * good, as MPI_Recv does. Use the promise API (`comm.send` / `comm.recv`) everywhere else.
 */

import { endpointCtx } from '../../comm/agree.js';
import { COLLECTIVE_TAG, type Communicator, type Status } from '../../comm/communicator.js';
import { badRank, badTag, GroupCommunicator } from '../../comm/group.js';
import { unwrapEndpoint } from '../../comm/timeout.js';
import { isMessageBuffer, type MessageData, toBytes } from '../../comm/segments.js';
import { InvalidArgumentError, UnavailableError } from '../../errors.js';
import { MpiEndpoint, type BlockingPort } from './endpoint.js';

export interface BlockingPointToPoint {
  /** MPI_Send of `data` to rank `dest` of the communicator: returns once `data` may be reused. */
  send(dest: number, tag: number, data: MessageData): void;
  /** MPI_Recv from rank `source` (or ANY_SOURCE) of the communicator: returns the status (ranks of the communicator). */
  recv(source: number, tag: number, into: MessageData): Status;
}

const BAD_BUFFER = 'must be a typed array or DataView, or an array of them';
const MAX_TAG = 0x7fffffff;

/**
 * The blocking point-to-point operations of a communicator of the MPI transport (the world of
 * `mpiWorld()` or one split from it). Throws an UnavailableError for a communicator of another
 * transport.
 */
export function mpiBlocking(comm: Communicator): BlockingPointToPoint {
  const unavailable = (): UnavailableError =>
    new UnavailableError('mpi-transport', 'blocking point-to-point (mpiBlocking) needs a communicator of the MPI transport (mpiWorld, runMpiRank, runMpi)');
  if (!(comm instanceof GroupCommunicator)) throw unavailable();
  // The MPI endpoint, also under the watchdog's wrapper (blocking calls wait inside MPI: no JS timeout).
  const ep = unwrapEndpoint(comm.endpoint);
  if (!(ep instanceof MpiEndpoint)) throw unavailable();
  const rank = comm.rank;
  const size = comm.size;
  // The world communicator's ranks are world ranks: its statuses need no translation.
  const world = comm.ctx === 0;
  // Both halves of the context (user tags, collective tags), resolved once.
  const user = ep.blockingPort(endpointCtx(comm.ctx, 0));
  const coll = ep.blockingPort(endpointCtx(comm.ctx, COLLECTIVE_TAG));
  const portOf = (tag: number): BlockingPort => (tag >= COLLECTIVE_TAG ? coll : user);
  const local = (st: Status): Status => (world ? st : { source: comm.rankOfWorld(st.source), tag: st.tag, bytes: st.bytes });
  return {
    send(dest, tag, data) {
      // The common case checked inline (one Uint8Array, ranks and tags in range): the checks
      // below build error messages only when something is wrong.
      if (data instanceof Uint8Array && dest >= 0 && dest < size && (dest | 0) === dest && tag >= 0 && tag <= MAX_TAG && (tag | 0) === tag) {
        portOf(tag).send(world ? dest : comm.worldRankOf(dest), tag, data);
        return;
      }
      const bytes = toBytes(data);
      const bad =
        badRank('dest', dest, size, false, rank) ??
        badTag(tag, false, rank) ??
        (isMessageBuffer(bytes) ? undefined : new InvalidArgumentError('data', BAD_BUFFER, { rank }));
      if (bad !== undefined) throw bad;
      portOf(tag).send(comm.worldRankOf(dest), tag, bytes);
    },
    recv(source, tag, into) {
      if (into instanceof Uint8Array && source >= 0 && source < size && (source | 0) === source && tag >= 0 && tag <= MAX_TAG && (tag | 0) === tag) {
        return local(portOf(tag).recv(world ? source : comm.worldRankOf(source), tag, into));
      }
      const bytes = toBytes(into);
      const bad =
        badRank('source', source, size, true, rank) ??
        badTag(tag, true, rank) ??
        (isMessageBuffer(bytes) ? undefined : new InvalidArgumentError('into', BAD_BUFFER, { rank }));
      if (bad !== undefined) throw bad;
      return local(portOf(tag).recv(source < 0 ? source : comm.worldRankOf(source), tag, bytes));
    },
  };
}
