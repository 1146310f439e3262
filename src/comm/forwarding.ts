/**
 * A Communicator that forwards every operation to another one: the base of wrappers that
 * observe traffic (counting, tracing) without changing it. Subclasses override the
 * operations they observe and `wrap`, which wraps the sub-communicators split from this one
 * so they are observed too. Schedules (Communicator.bindValidatedSchedule) are not forwarded
 * here: without a subclass that forwards and observes them, they run on the portable executor,
 * operation by operation through the methods above.
 */
import { BaseCommunicator, type Communicator, type Received, type Status } from './communicator.js';
import type { Request } from './request.js';
import type { MessageData } from './segments.js';

export abstract class ForwardingCommunicator extends BaseCommunicator {
  constructor(readonly inner: Communicator) {
    super();
  }

  /** Wraps a sub-communicator split from `inner`. */
  protected abstract wrap(sub: Communicator): Communicator;

  get rank(): number {
    return this.inner.rank;
  }

  get size(): number {
    return this.inner.size;
  }

  get clock(): Communicator['clock'] {
    return this.inner.clock;
  }

  get native(): Communicator['native'] {
    return this.inner.native;
  }

  isend(dest: number, tag: number, data: MessageData): Request<void> {
    return this.inner.isend(dest, tag, data);
  }

  irecv(source: number, tag: number, into: MessageData): Request<Status> {
    return this.inner.irecv(source, tag, into);
  }

  irecvAlloc(source: number, tag: number, maxBytes?: number): Request<Received> {
    return this.inner.irecvAlloc(source, tag, maxBytes);
  }

  override waitAll<T>(ops: readonly Request<T>[]): Promise<T[]> {
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
    return sub === null ? null : this.wrap(sub);
  }

  async splitByNode(): Promise<Communicator> {
    return this.wrap(await this.inner.splitByNode());
  }
}
