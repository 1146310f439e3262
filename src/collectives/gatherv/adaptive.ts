/**
 * Adaptive gatherv (Traff18: TUW_Gatherv, Lemmas 1–4, Theorem 1, §3).
 *
 * Construction: the distributed, constant-size-message construction of Lemma 3
 * (adaptive/construct.ts) with the MPI root fixed (Lemma 2); the tree equals
 * `adaptiveBinomialTree(sizes, model, { root, rule })` (Lemma 4's with `adaptive.lemma4`).
 * Data: each gather root receives the adjacent ranges in join order into an intermediate
 * buffer kept in rank order (its own block copied to its offset: before the first receive
 * when that range lies to its right, after it when to its left; every rank first under
 * Lemma 4), then sends its whole range to its parent as one message; leaves send straight
 * from their block. The root receives straight into its buffer at the displacements (a
 * vectored receive when the range's blocks are not contiguous there, collectives/placement.ts;
 * nothing staged). An empty range sends no message.
 *
 * Overlap (default, §3): `init` starts the construction and returns at once; the first
 * `start()` posts each receive as soon as the rank learns the join (and its previous
 * receives are done), so the construction hides behind the data. Later starts (and every
 * start without overlap, where `init` waits for the construction) only run the data phase,
 * compiled into a schedule once the role is known (adaptive/schedule.ts) and run by the
 * transport's executor.
 *
 * k ports (model.ports = k > 1; Theorem 1's k-ported remark): the construction joins groups
 * of k + 1 ranges per round (adaptive/kported-construct.ts) and the compiled data phase runs
 * each rank's receives and copy with k outstanding (adaptive/schedule.ts). The overlapped first
 * start is one-ported only: with k > 1 `init` runs the construction and every start the
 * compiled schedule, whatever `adaptive.overlap` says.
 *
 * Cost (homogeneous one-ported model, γ = 0, free root of the Lemma 1 rule, p = 2^d,
 * positive blocks): data phase ⌈log₂p⌉α + βΣ_{i≠r} m_i; in general exactly the evaluator's
 * time of the tree (k-ported too); construction ⌈log_{k+1}p⌉ rounds of constant-size messages.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { BoundSchedule } from '../../comm/schedule.js';
import { OpRequest, Resumable, type Request } from '../../comm/request.js';
import { bindPlanSchedule, describeRank, schedulePlan } from '../compiled-plan.js';
import { adaptiveGatherSchedule } from '../adaptive/schedule.js';
import { VcollError } from '../../errors.js';
import { blockView, rangePlacement, rootLayout, type Placement } from '../placement.js';
import { runnerPlan } from '../node-schedule.js';
import type { PersistentCollective } from '../types.js';
import type { GathervPlanInput, GathervVariant } from '../variant.js';
import { EventQueue, RangeBuffer } from '../adaptive/buffer.js';
import { constructAdaptive, startConstruction, type AdaptiveRole, type ConstructionSink, type RoleEvent } from '../adaptive/construct.js';
import { adaptiveContext, adaptiveInfo, rootRangeCheck } from '../adaptive/plan.js';
import { nextPlanTags, type AdaptiveTags } from '../adaptive/tags.js';
import type { JoinContext } from '../adaptive/decide.js';

/**
 * One rank's plan: the construction, the data phase of the first start while the joins are
 * still arriving, then the compiled schedule. A non-root rank's first start is a state
 * machine driven by callbacks (no suspended async frame and no promise per join or message:
 * a simulation holds one such rank per process, all waiting at once); its waits on messages
 * are Resumable's, its wait for the next join is the `joins` list below. The root (one rank)
 * runs its first start as an async function over an EventQueue.
 */
class AdaptiveGather extends Resumable implements ConstructionSink {
  private readonly comm: Communicator;
  private readonly rank: number;
  private readonly isRoot: boolean;
  private readonly u: number;
  private readonly tag: number;
  private readonly ctx: JoinContext;
  private readonly copyAll: boolean;
  private readonly check: ((e: RoleEvent) => void) | undefined;
  /** The root's joins, as its async first start reads them. */
  private queue: EventQueue<RoleEvent> | undefined;
  private role: AdaptiveRole | undefined;
  private bound: BoundSchedule | undefined;
  private buffer: RangeBuffer | undefined;
  /** The root's placement of each join's range (made when first needed). */
  private placements: Placement[] | null = null;
  /** A non-root rank's joins learnt and not yet taken by its first start, from `taken` on. */
  private joins: RoleEvent[] | null = null;
  private taken = 0;
  /** The first start waits for the next join (handed over one microtask turn later, as a promise's). */
  private wantJoin = false;
  /** How the construction ended: not yet, with the role (`role`), or with `buildError`. */
  private buildState = BUILDING;
  private buildError: unknown = undefined;
  /** The first start: its request, its current join, whether its own block is in place, its data phase done. */
  private firstStart: OpRequest<void> | undefined;
  private event: RoleEvent | undefined;
  private copied = false;
  private dataDone = false;
  private dataStarted = false;
  /** The first start has settled (then later starts run the compiled schedule), and its error if it failed. */
  private firstOver = false;
  private firstError: { readonly error: unknown } | undefined;
  /** What the current wait is for: a message received or sent, or the next join. */
  private waitingFor = WAIT_RECV;

  constructor(
    private readonly input: GathervPlanInput,
    private readonly tags: AdaptiveTags,
    ctx: JoinContext,
  ) {
    super();
    this.comm = input.comm;
    this.rank = input.comm.rank;
    this.isRoot = this.rank === input.root;
    this.u = input.unitBytes;
    this.tag = tags.data;
    this.copyAll = ctx.copyAll;
    this.check = this.isRoot ? rootRangeCheck(this.rank, input.counts as readonly number[]) : undefined;
    this.ctx = ctx;
  }

  /** Once the role is known, the data phase is a compiled schedule (adaptive/schedule.ts). */
  private compile(role: AdaptiveRole): BoundSchedule {
    return bindPlanSchedule(this.input, adaptiveGatherSchedule({ ...describeRank(this.input), copyAll: this.copyAll }, role, this.tag));
  }

  /** Without overlap: the construction, then the compiled data phase. */
  planned(): Promise<PersistentCollective> {
    const { comm, input } = this;
    return constructAdaptive({ comm, root: input.root, count: input.count, ctx: this.ctx, tags: this.tags, onEvent: this.check }).then((role) =>
      schedulePlan(comm, adaptiveInfo(comm.size, input.model.ports), this.compile(role)),
    );
  }

  /** With overlap (§3): the construction starts now; the first start receives each join as it is learnt. */
  overlapped(): PersistentCollective {
    const { comm, input } = this;
    if (this.isRoot) this.queue = new EventQueue<RoleEvent>();
    startConstruction({ comm, root: input.root, count: input.count, ctx: this.ctx, tags: this.tags }, this);
    // compiled at the second start: a one-shot call (one start) never pays for it
    return runnerPlan(comm, adaptiveInfo(comm.size, input.model.ports), this);
  }

  /** A join this rank takes part in, the moment the construction learns it (ConstructionSink). */
  joined(e: RoleEvent): void {
    const queue = this.queue;
    if (queue !== undefined) {
      (this.check as (e: RoleEvent) => void)(e);
      queue.push(e);
      return;
    }
    if (this.joins === null) this.joins = [e];
    else this.joins.push(e);
    if (this.wantJoin) this.takeJoin();
  }

  built(role: AdaptiveRole): void {
    this.role = role;
    this.buildState = BUILT;
    this.queue?.close();
    if (this.wantJoin) this.takeJoin();
    else if (this.dataDone) this.settleFirst();
  }

  buildFailed(e: unknown): void {
    this.buildState = BUILD_FAILED;
    this.buildError = e;
    this.queue?.fail(e);
    if (this.wantJoin) this.takeJoin();
    else if (this.dataDone) this.settleFirst();
  }

  /** PlanRunner: a start of the plan (RunPlan never overlaps two). */
  run(): PromiseLike<void> {
    if (this.firstOver) {
      // a failed first start leaves the plan failed: later starts report its error
      if (this.firstError !== undefined) return OpRequest.failed<void>(this.firstError.error);
      return (this.bound ??= this.compile(this.role as AdaptiveRole)).run();
    }
    const first = new OpRequest<void>();
    this.firstStart = first;
    if (this.isRoot) {
      this.runRoot(this.queue as EventQueue<RoleEvent>).then(
        () => this.dataFinished(),
        (e: unknown) => this.dataFailed(e),
      );
    }
    else this.takeJoin();
    return first;
  }

  private placement(k: number, e: RoleEvent): Placement {
    const placements = (this.placements ??= []);
    let pl = placements[k];
    if (pl === undefined) {
      pl = rangePlacement(this.input.recv as Uint8Array, rootLayout(this.input), e.lo, e.hi);
      placements[k] = pl;
    }
    return pl;
  }

  private async runRoot(source: EventQueue<RoleEvent>): Promise<void> {
    const { comm, input } = this;
    let copied = false;
    const copyOwn = (): void => {
      copied = true;
      if (!input.inPlace) comm.copy(blockView(input.recv as Uint8Array, rootLayout(this.input), this.rank), input.send);
    };
    let k = 0;
    for (let e = await source.next(); e !== undefined; e = await source.next()) {
      if (k === 0 && (this.copyAll || e.lo > this.rank)) copyOwn();
      const pl = this.placement(k++, e);
      if (e.size > 0) await comm.recv(e.peer, this.tag, pl.buffer);
      if (!copied) copyOwn();
    }
    if (!copied) copyOwn();
  }

  /** The first start's data phase is over (its last message sent): it ends once the construction has too. */
  private dataFinished(): void {
    this.dataDone = true;
    if (this.buildState !== BUILDING) this.settleFirst();
  }

  private dataFailed(e: unknown): void {
    const first = this.firstStart as OpRequest<void>;
    if (!first.pending) return;
    this.firstOver = true;
    this.firstError = { error: e };
    first.reject(e);
  }

  /** Both over: the first start resolves (the role kept for the compiled schedule), or fails with the construction's error. */
  private settleFirst(): void {
    const first = this.firstStart as OpRequest<void>;
    if (!first.pending) return;
    if (this.buildState === BUILD_FAILED) {
      this.dataFailed(this.buildError);
      return;
    }
    this.firstOver = true;
    first.resolve(undefined);
  }

  // A non-root rank's first start: its joins in order (receives into the range buffer), then its
  // range to its parent; a leaf sends straight from its block.

  /** The next join to the first start, one microtask turn from now (as a queue's promise would): one learnt, or the construction's end. */
  private takeJoin(): void {
    const joins = this.joins;
    if (joins !== null && this.taken < joins.length) {
      this.wantJoin = false;
      this.event = joins[this.taken];
      joins[this.taken++] = NO_JOIN;
    } else if (this.buildState === BUILDING) {
      this.wantJoin = true;
      return;
    } else {
      this.wantJoin = false;
      this.event = undefined;
    }
    // a wait on nothing: resume() one microtask turn from now
    this.waitingFor = WAIT_JOIN;
    this.waitEach(NO_REQUESTS);
  }

  private nextJoin(): void {
    try {
      if (this.event === undefined && this.buildState === BUILD_FAILED) throw this.buildError;
      if (!this.dataStarted) this.firstJoin();
      else this.laterJoin();
    } catch (err) {
      this.dataFailed(err);
    }
  }

  private firstJoin(): void {
    const { comm, input, u } = this;
    const e = this.event;
    if (e === undefined) throw new VcollError('INTERNAL', `rank ${this.rank}: no join in the adaptive tree`, { rank: this.rank });
    this.dataStarted = true;
    if (e.kind === 'send' && !this.copyAll) {
      if (input.count > 0) this.sendRange(e.peer, input.send);
      else this.dataFinished();
      return;
    }
    const buf = (this.buffer ??= RangeBuffer.growable(comm, input.count * u));
    buf.reset();
    this.copied = false;
    if (this.copyAll || e.lo > this.rank) this.copyOwn(buf);
    this.receive(e);
  }

  private laterJoin(): void {
    const e = this.event;
    if (e === undefined) throw new VcollError('INTERNAL', `rank ${this.rank}: the adaptive construction ended without a parent`, { rank: this.rank });
    this.receive(e);
  }

  private copyOwn(buf: RangeBuffer): void {
    this.copied = true;
    this.comm.copy(buf.ownView(), this.input.send);
  }

  /** A join: a receive into the range buffer, or (a 'send') the whole range to the parent. */
  private receive(e: RoleEvent): void {
    const buf = this.buffer as RangeBuffer;
    if (e.kind === 'recv') {
      const n = e.size * this.u;
      const view = e.lo < this.rank ? buf.prepend(n) : buf.append(n);
      if (n > 0) {
        this.waitingFor = WAIT_RECV;
        // the simulator: a plain request this object waits on; elsewhere the blocking form (the endpoint may poll)
        this.wait(this.comm.clock !== undefined ? this.comm.irecv(e.peer, this.tag, view) : this.comm.recv(e.peer, this.tag, view));
      } else this.received();
      return;
    }
    if (!this.copied) this.copyOwn(buf);
    const out = buf.contents();
    if (out.length !== e.size * this.u) {
      throw new VcollError('INTERNAL', `rank ${this.rank}: range ${e.lo}..${e.hi} holds ${out.length} bytes, the construction says ${e.size * this.u}`, { rank: this.rank });
    }
    if (out.length > 0) this.sendRange(e.peer, out);
    else this.dataFinished();
  }

  private sendRange(peer: number, data: Uint8Array): void {
    this.waitingFor = WAIT_SEND;
    this.wait(this.comm.clock !== undefined ? this.comm.isend(peer, this.tag, data) : this.comm.send(peer, this.tag, data));
  }

  protected resume(): void {
    if (this.waitingFor === WAIT_JOIN) this.nextJoin();
    else if (this.waitingFor === WAIT_SEND) this.dataFinished();
    else this.received();
  }

  protected resumeFailed(e: unknown): void {
    this.dataFailed(e);
  }

  private received(): void {
    try {
      if (!this.copied) this.copyOwn(this.buffer as RangeBuffer);
      this.takeJoin();
    } catch (err) {
      this.dataFailed(err);
    }
  }
}

const BUILDING = 0;
const BUILT = 1;
const BUILD_FAILED = 2;
const WAIT_RECV = 0;
const WAIT_SEND = 1;
const WAIT_JOIN = 2;
const NO_REQUESTS: readonly Request<unknown>[] = [];
/** What a taken join's slot holds (the list keeps no event alive). */
const NO_JOIN: RoleEvent = { kind: 'send', round: -1, peer: -1, size: 0, lo: 0, hi: -1, check: 0 };

function initAdaptiveGatherv(input: GathervPlanInput): Promise<PersistentCollective> {
  try {
    const { comm, root } = input;
    const ctx = adaptiveContext(comm, root, input.model, input.adaptive);
    const plan = new AdaptiveGather(input, nextPlanTags(comm), ctx);
    // the overlapped first start is one-ported (its receives one at a time as the joins arrive)
    return input.adaptive.overlap && input.model.ports === 1 ? Promise.resolve(plan.overlapped()) : plan.planned();
  } catch (e) {
    return Promise.reject(e);
  }
}

export const ADAPTIVE_GATHERV: GathervVariant = {
  name: 'adaptive',
  description: 'Traff18: distributed adaptive binomial tree (Lemma 3, constant-size messages), fixed root (Lemma 2), construction overlapped with the data (one-ported; k-ported: construction, then the data)',
  init: initAdaptiveGatherv,
};
