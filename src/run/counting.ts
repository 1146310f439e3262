/**
 * A Communicator that forwards every operation to another one and counts the point-to-point
 * messages this rank sends (isend calls, 0-byte ones included, as the simulator counts them)
 * and their bytes. Summed over the ranks this is the operation's traffic on any transport.
 * Sub-communicators split from it count into the same counter.
 */
import type { Communicator } from '../comm/communicator.js';
import { ForwardingCommunicator } from '../comm/forwarding.js';
import type { Request } from '../comm/request.js';
import { byteLength, type MessageData } from '../comm/segments.js';

/** Messages and bytes sent by one rank. */
export interface TrafficCounter {
  messages: number;
  bytes: number;
}

export class CountingCommunicator extends ForwardingCommunicator {
  constructor(
    inner: Communicator,
    readonly counter: TrafficCounter = { messages: 0, bytes: 0 },
  ) {
    super(inner);
  }

  protected wrap(sub: Communicator): Communicator {
    return new CountingCommunicator(sub, this.counter);
  }

  /** Sets the counter back to zero. */
  reset(): void {
    this.counter.messages = 0;
    this.counter.bytes = 0;
  }

  override isend(dest: number, tag: number, data: MessageData): Request<void> {
    this.counter.messages++;
    this.counter.bytes += byteLength(data);
    return this.inner.isend(dest, tag, data);
  }
}
