/**
 * Collectives in flight together on one communicator. MPI lets a program start any number of
 * nonblocking collectives on a communicator as long as every rank starts them in the same
 * order (MPI-4.0 §6.12: they are matched in issue order); vcoll's promise API is the same
 * thing. The algorithms use fixed tags per message kind, so two calls in flight at once could
 * take each other's messages whenever a transport delivers them in another order than the
 * simulator does. Open MPI's libNBC solves this with a per-communicator tag counter; vcoll
 * does the same with tag *slots*:
 *
 * - every collective call on a communicator takes the next call number of that communicator on
 *   this rank, synchronously at the call (the same number on every rank, since the calls are
 *   issued in the same order), and runs on a `CallScope`: the communicator seen through a tag
 *   shift, so that each collective tag t (COLLECTIVE_TAG ≤ t < COLLECTIVE_TAG + CALL_TAG_STRIDE)
 *   travels as t + slot·CALL_TAG_STRIDE. Calls in flight together therefore never share a tag
 *   (up to OWN_SLOTS calls in flight on one communicator; the slots are reused cyclically);
 *   slot 0 is the first call, so a communicator's first collective uses the kind tags unshifted;
 * - a collective called on a CallScope (an algorithm calling another collective, e.g. a
 *   broadcast inside a gatherv) runs in the caller's slot: nested calls run one after the other
 *   inside one call, as before;
 * - a persistent plan (`gathervInit` …) takes a new call number at every `start()` (MPI-4.0
 *   §6.13: persistent collective starts are ordered like calls);
 * - a communicator derived inside a call (the node communicator of the hierarchical gather,
 *   an intercommunicator's local group) is used in a derived slot of the same call number,
 *   in a second range (DERIVED_FIRST …) so it never meets calls made on that communicator
 *   directly.
 * Tags outside the shifted range (user tags, communicator management's top 16) pass unchanged.
 * Status.tag of a receive through a scope is the tag as it travelled (shifted).
 */
import { commState, type CommState, type CommStateHolder } from '../comm/comm-state.js';
import { COLLECTIVE_TAG, type Communicator, type MessageData, type Received, type Status } from '../comm/communicator.js';
import { CALL_TAG_STRIDE, DERIVED_FIRST, DERIVED_SLOTS, OWN_SLOTS } from '../comm/tags.js';
import type { VirtualClock } from '../comm/endpoint.js';
import type { InterCommunicator } from '../comm/intercomm.js';
import type { NativeCollectives, NativeInterCollectives } from '../comm/native.js';
import { waitAll, type Request } from '../comm/request.js';
import type { BoundSchedule, RankSchedule, ScheduleOptions } from '../comm/schedule.js';
import { runningTest } from './node-schedule.js';
import type { CollectiveInfo, PersistentCollective } from './types.js';

// The slot arithmetic (CALL_TAG_STRIDE, OWN_SLOTS, derived slots, unslottedTag, callSlotOfTag)
// is part of the tag table, comm/tags.ts.
export { CALL_TAG_STRIDE, OWN_SLOTS, callSlotOfTag, unslottedTag } from '../comm/tags.js';

const SHIFTED_LAST = COLLECTIVE_TAG + CALL_TAG_STRIDE - 1;

/** Each communicator's call counter (one mutable record, so a scope can keep it). */
function counterOf(base: object): { n: number } {
  const state = commState(base);
  return (state.calls ??= { n: 0 });
}

function nextSlot(base: object): number {
  return counterOf(base).n++ % OWN_SLOTS;
}

function shiftOf(slot: number): number {
  return slot * CALL_TAG_STRIDE;
}

/** What a communicator and an intercommunicator share: point-to-point, copies, locality. */
type PointToPoint = Pick<Communicator, 'isend' | 'irecv' | 'irecvAlloc' | 'send' | 'recv' | 'recvAlloc' | 'copy' | 'nodeOf'>;

/** Point-to-point of `base` with the collective tags shifted into one call slot. */
abstract class SlotView<B extends PointToPoint> implements CommStateHolder {
  protected shift: number;
  /** Sequence numbers of the collectives on this scope (a collective inside a collective: comm/comm-state.ts). */
  commState: CommState | null = null;

  constructor(
    /** The communicator the call was made on. */
    readonly base: B,
    protected slotNumber: number,
  ) {
    this.shift = shiftOf(slotNumber);
  }

  /** The call's slot. */
  get slot(): number {
    return this.slotNumber;
  }

  /** How the call's collective tags are moved now (its slot's shift). */
  get tagShift(): number {
    return this.shift;
  }

  private tagOf(tag: number): number {
    return tag >= COLLECTIVE_TAG && tag <= SHIFTED_LAST ? tag + this.shift : tag;
  }

  isend(dest: number, tag: number, data: MessageData): Request<void> {
    return this.base.isend(dest, this.tagOf(tag), data);
  }

  irecv(source: number, tag: number, into: MessageData): Request<Status> {
    return this.base.irecv(source, this.tagOf(tag), into);
  }

  irecvAlloc(source: number, tag: number, maxBytes?: number): Request<Received> {
    return this.base.irecvAlloc(source, this.tagOf(tag), maxBytes);
  }

  send(dest: number, tag: number, data: MessageData): Promise<void> {
    return this.base.send(dest, this.tagOf(tag), data);
  }

  recv(source: number, tag: number, into: MessageData): Promise<Status> {
    return this.base.recv(source, this.tagOf(tag), into);
  }

  recvAlloc(source: number, tag: number, maxBytes?: number): Promise<Received> {
    return this.base.recvAlloc(source, this.tagOf(tag), maxBytes);
  }

  waitAll<T>(ops: readonly Request<T>[]): Promise<T[]> {
    return waitAll(ops);
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    this.base.copy(dst, src);
  }

  nodeOf(rank: number): number {
    return this.base.nodeOf(rank);
  }
}

/** A communicator seen by one collective call: its collective tags shifted into the call's slot. */
export class CallScope extends SlotView<Communicator> implements Communicator {
  private counter: { n: number } | undefined;

  /** Takes the next call number of the base communicator (a persistent plan's start()). */
  renew(): void {
    this.slotNumber = (this.counter ??= counterOf(this.base)).n++ % OWN_SLOTS;
    this.shift = shiftOf(this.slotNumber);
  }

  get rank(): number {
    return this.base.rank;
  }

  get size(): number {
    return this.base.size;
  }

  get clock(): VirtualClock | undefined {
    return this.base.clock;
  }

  get native(): NativeCollectives | undefined {
    return this.base.native;
  }

  split(color: number, key: number): Promise<Communicator | null> {
    return this.base.split(color, key);
  }

  splitByNode(): Promise<Communicator> {
    return this.base.splitByNode();
  }

  /**
   * The base communicator's native schedule executor, each run in the slot this scope is in
   * when it starts (a persistent plan renews its slot at every start): the run's collective
   * tags are shifted as this scope shifts them.
   */
  get bindValidatedSchedule(): Communicator['bindValidatedSchedule'] {
    return shiftedBinder(this.base, this.base.bindValidatedSchedule, this);
  }
}

/**
 * The communicator a collective call runs on: `comm` itself seen through the next call slot,
 * or, when `comm` is already a call's scope (a collective inside a collective), that scope.
 * Call it synchronously at the collective's entry, before any await.
 */
export function beginCall(comm: Communicator): Communicator {
  if (comm instanceof CallScope) return comm;
  return new CallScope(comm, nextSlot(comm));
}

/** The communicator a call was made on (`comm` itself outside a call). */
export function baseOf(comm: Communicator): Communicator {
  return comm instanceof CallScope ? comm.base : comm;
}

/**
 * `sub` (a communicator derived from the call's, e.g. its node communicator) used inside the
 * call `parent`: in the derived slot of the parent's slot. Outside a call, `sub` itself.
 */
export function derivedScope(sub: Communicator, parent: Communicator): Communicator {
  if (!(parent instanceof CallScope)) return sub;
  return new CallScope(baseOf(sub), DERIVED_FIRST + (parent.slot % DERIVED_SLOTS));
}

/** An intercommunicator seen by one collective call (CallScope's tag shift; `local` in the derived slot). */
export class InterCallScope extends SlotView<InterCommunicator> implements InterCommunicator {
  private localScope: Communicator | undefined;

  get rank(): number {
    return this.base.rank;
  }

  get size(): number {
    return this.base.size;
  }

  get remoteSize(): number {
    return this.base.remoteSize;
  }

  get lowGroup(): boolean {
    return this.base.lowGroup;
  }

  get clock(): VirtualClock | undefined {
    return this.base.clock;
  }

  get native(): NativeInterCollectives | undefined {
    return this.base.native;
  }

  get local(): Communicator {
    this.localScope ??= new CallScope(baseOf(this.base.local), DERIVED_FIRST + (this.slot % DERIVED_SLOTS));
    return this.localScope;
  }

  nodeOfRemote(rank: number): number {
    return this.base.nodeOfRemote(rank);
  }

  /** The base's native executor with this call's tag shift (as CallScope's). */
  get bindValidatedSchedule(): InterCommunicator['bindValidatedSchedule'] {
    return shiftedBinder(this.base, this.base.bindValidatedSchedule, this);
  }

  merge(high: boolean): Promise<Communicator> {
    return this.base.merge(high);
  }
}

type Binder = (schedule: RankSchedule, buffers: readonly Uint8Array[], options: ScheduleOptions) => BoundSchedule | undefined;

/**
 * `bind` (a base communicator's native executor) with every run's collective tags moved by
 * the scope's shift at the time the run starts (a persistent plan renews its slot).
 */
function shiftedBinder(base: object, bind: Binder | undefined, scope: { readonly tagShift: number }): Binder | undefined {
  if (bind === undefined) return undefined;
  return (schedule, buffers, options) => {
    const inner = bind.call(base, schedule, buffers, options);
    if (inner === undefined) return undefined;
    return inner.runBlocking === undefined ? new ShiftedBound(inner, scope) : new BlockingShiftedBound(inner, scope);
  };
}

/** A bound schedule run in a scope's slot: one object, no closures (a simulated rank holds one per call). */
class ShiftedBound implements BoundSchedule {
  constructor(
    protected readonly inner: BoundSchedule,
    protected readonly scope: { readonly tagShift: number },
  ) {}

  run(tagShift = 0): PromiseLike<void> {
    return this.inner.run(this.scope.tagShift + tagShift);
  }
}

class BlockingShiftedBound extends ShiftedBound {
  runBlocking(tagShift = 0): void {
    (this.inner.runBlocking as (tagShift?: number) => void).call(this.inner, this.scope.tagShift + tagShift);
  }
}

/** `beginCall` for intercommunicators. */
export function beginInterCall(inter: InterCommunicator): InterCommunicator {
  if (inter instanceof InterCallScope) return inter;
  return new InterCallScope(inter, nextSlot(inter));
}

/**
 * A persistent collective planned by `init` on `comm`: planned in one call slot, and every
 * `start()` takes the next call number of `comm` (at the call, before anything is awaited).
 * Inside a call (comm already a scope), plan and starts stay in that call's slot.
 */
export async function plannedInCall<I = CollectiveInfo>(
  comm: Communicator,
  init: (scope: Communicator) => Promise<PersistentCollective<I>>,
): Promise<PersistentCollective<I>> {
  const scope = beginCall(comm);
  const plan = await init(scope);
  if (scope === comm || !(scope instanceof CallScope)) return plan;
  return plan.startBlocking === undefined ? new ScopedPlan(plan, scope) : new BlockingScopedPlan(plan, scope);
}

/** A plan whose every start() takes the next call number of its communicator (plannedInCall): one object, no closures. */
class ScopedPlan<I> implements PersistentCollective<I> {
  readonly info: I;
  private readonly test: (() => boolean) | undefined;
  /** Whether a start() made here has not settled (for plans without a running test). */
  private mine = false;

  constructor(
    protected readonly plan: PersistentCollective<I>,
    protected readonly scope: CallScope,
  ) {
    this.info = plan.info;
    this.test = runningTest(plan);
  }

  protected running(): boolean | undefined {
    return this.test?.();
  }

  start(): Promise<void> {
    // an overlapping start is the plan's to refuse: no call number is taken for it
    const busy = this.running() ?? this.mine;
    if (busy) return this.plan.start();
    this.scope.renew();
    const done = this.plan.start();
    if (this.test === undefined) {
      this.mine = true;
      const settled = (): void => {
        this.mine = false;
      };
      done.then(settled, settled);
    }
    return done;
  }
}

class BlockingScopedPlan<I> extends ScopedPlan<I> {
  startBlocking(): void {
    const blocking = this.plan.startBlocking as () => void;
    if (this.running() === true) {
      blocking.call(this.plan); // the plan refuses it: no call number is taken
      return;
    }
    this.scope.renew();
    blocking.call(this.plan);
  }
}
