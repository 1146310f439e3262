/**
 * A Communicator that forwards every operation to another one and counts the point-to-point
 * messages this rank sends (isend calls, 0-byte ones included, as the simulator counts them)
 * and their bytes. Summed over the ranks this is the operation's traffic on any transport.
 * Sub-communicators split from it count into the same counter. Schedules go to the inner
 * communicator's native executor, each run counted when it starts: its sends, and its copies
 * through a port (messages to itself), as the portable executor would send them.
 */
import type { Communicator } from '../comm/communicator.js';
import { spanBytes, type BoundSchedule, type RankSchedule, type ScheduleOptions } from '../comm/schedule.js';
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

  get bindValidatedSchedule(): Communicator['bindValidatedSchedule'] {
    const bind = this.inner.bindValidatedSchedule;
    if (bind === undefined) return undefined;
    return (schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions): BoundSchedule | undefined => {
      // declined by the native executor: the portable one then runs through isend (counted there)
      const inner = bind.call(this.inner, schedule, buffers, options);
      if (inner === undefined) return undefined;
      let messages = 0;
      let bytes = 0;
      for (const step of schedule.steps) {
        for (const op of step.ops) {
          if (op.kind === 'send') {
            messages++;
            bytes += spanBytes(op.data);
          } else if (op.kind === 'copy' && op.tag !== undefined) {
            messages++;
            bytes += spanBytes(op.from);
          }
        }
      }
      return inner.runBlocking === undefined
        ? new CountedBound(inner, this.counter, messages, bytes)
        : new BlockingCountedBound(inner, this.counter, messages, bytes);
    };
  }

  override isend(dest: number, tag: number, data: MessageData): Request<void> {
    this.counter.messages++;
    this.counter.bytes += byteLength(data);
    return this.inner.isend(dest, tag, data);
  }
}

/** A bound schedule whose every run adds its sends to a counter: one object, no closures. */
class CountedBound implements BoundSchedule {
  constructor(
    protected readonly inner: BoundSchedule,
    protected readonly counter: TrafficCounter,
    protected readonly messages: number,
    protected readonly bytes: number,
  ) {}

  protected count(): void {
    this.counter.messages += this.messages;
    this.counter.bytes += this.bytes;
  }

  run(tagShift?: number): PromiseLike<void> {
    this.count();
    return this.inner.run(tagShift);
  }
}

class BlockingCountedBound extends CountedBound {
  runBlocking(tagShift?: number): void {
    this.count();
    (this.inner.runBlocking as (tagShift?: number) => void).call(this.inner, tagShift);
  }
}
