/**
 * Byte-buffer checks every collective family shares (the building blocks of basic/, allgather,
 * intergroup and hierarchical): an argument that must be a Uint8Array, and a received message
 * that must have exactly the expected length. Every failure is an InvalidArgumentError naming
 * the field and the rank that saw it.
 */
import type { Communicator, Status } from '../comm/communicator.js';
import { InvalidArgumentError } from '../errors.js';

export function checkBytes(comm: Pick<Communicator, 'rank'>, field: string, x: unknown): Uint8Array {
  if (!(x instanceof Uint8Array)) throw new InvalidArgumentError(field, 'must be a Uint8Array', { rank: comm.rank });
  return x;
}

/**
 * A receive got fewer bytes than this rank expects: some rank's buffer differs in length
 * (more bytes than expected fail earlier, as a truncation CommunicationError of the receive).
 */
export function expectBytes(comm: Communicator, field: string, st: Status, expected: number): void {
  if (st.bytes !== expected) {
    throw new InvalidArgumentError(
      field,
      `received ${st.bytes} bytes from rank ${st.source} where ${expected} were expected: the ranks' buffers differ in length`,
      { rank: comm.rank },
    );
  }
}
