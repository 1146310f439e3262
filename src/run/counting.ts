/**
 * A Communicator that forwards every operation to another one and counts the point-to-point
 * messages this rank sends (isend calls, 0-byte ones included, as the simulator counts them)
 * and their bytes. Summed over the ranks this is the operation's traffic on any transport.
 * Sub-communicators split from it count into the same counter.
 */
import { BaseCommunicator, type Communicator, type Status } from '../comm/communicator.js';

/** Messages and bytes sent by one rank. */
export interface TrafficCounter {
  messages: number;
  bytes: number;
}

export class CountingCommunicator extends BaseCommunicator {
  constructor(
    readonly inner: Communicator,
    readonly counter: TrafficCounter = { messages: 0, bytes: 0 },
  ) {
    super();
  }

  get rank(): number {
    return this.inner.rank;
  }

  get size(): number {
    return this.inner.size;
  }

  get clock(): Communicator['clock'] {
    return this.inner.clock;
  }

  /** Sets the counter back to zero. */
  reset(): void {
    this.counter.messages = 0;
    this.counter.bytes = 0;
  }

  isend(dest: number, tag: number, data: Uint8Array): Promise<void> {
    this.counter.messages++;
    this.counter.bytes += data.length;
    return this.inner.isend(dest, tag, data);
  }

  irecv(source: number, tag: number, into: Uint8Array): Promise<Status> {
    return this.inner.irecv(source, tag, into);
  }

  override waitAll<T>(ops: readonly Promise<T>[]): Promise<T[]> {
    return this.inner.waitAll(ops);
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    this.inner.copy(dst, src);
  }

  nodeOf(rank: number): number {
    return this.inner.nodeOf(rank);
  }

  async split(color: number, key: number): Promise<Communicator | null> {
    const sub = await this.inner.split(color, key);
    return sub === null ? null : new CountingCommunicator(sub, this.counter);
  }

  async splitByNode(): Promise<Communicator> {
    return new CountingCommunicator(await this.inner.splitByNode(), this.counter);
  }
}
