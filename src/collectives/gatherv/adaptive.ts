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
 * Cost (homogeneous one-ported model, γ = 0, free root of the Lemma 1 rule, p = 2^d,
 * positive blocks): data phase ⌈log₂p⌉α + βΣ_{i≠r} m_i; in general exactly the evaluator's
 * time of the tree; construction ⌈log₂p⌉ rounds of constant-size messages.
 */
import type { Communicator } from '../../comm/communicator.js';
import type { BoundSchedule } from '../../comm/schedule.js';
import { bindPlanSchedule, describeRank, schedulePlan } from '../compiled-plan.js';
import { adaptiveGatherSchedule } from '../adaptive/schedule.js';
import { VcollError } from '../../errors.js';
import { blockView, rangePlacement, rootLayout, type Placement } from '../placement.js';
import { persistentPlan } from '../node-schedule.js';
import type { PersistentCollective } from '../types.js';
import type { GathervPlanInput, GathervVariant } from '../variant.js';
import { EventQueue, RangeBuffer } from '../adaptive/buffer.js';
import { constructAdaptive, type AdaptiveRole, type RoleEvent } from '../adaptive/construct.js';
import { adaptiveContext, adaptiveInfo, rootRangeCheck } from '../adaptive/plan.js';
import { nextPlanTags, type AdaptiveTags } from '../adaptive/tags.js';
import type { JoinContext } from '../adaptive/decide.js';

interface EventSource {
  next(): Promise<RoleEvent | undefined>;
}

const noop = (): void => {};

/**
 * One rank's plan: the construction, the data phase of the first start while the joins are
 * still arriving, then the compiled schedule. A non-root rank's first start is a state
 * machine driven by callbacks (no suspended async frame: a simulation holds one such rank
 * per process, all waiting at once).
 */
class AdaptiveGather {
  private readonly comm: Communicator;
  private readonly rank: number;
  private readonly u: number;
  private readonly tag: number;
  private readonly ctx: JoinContext;
  private readonly copyAll: boolean;
  private readonly check: ((e: RoleEvent) => void) | undefined;
  private readonly queue = new EventQueue<RoleEvent>();
  private built: Promise<AdaptiveRole> | undefined;
  private role: AdaptiveRole | undefined;
  private bound: BoundSchedule | undefined;
  private buffer: RangeBuffer | undefined;
  /** The root's placement of each join's range (made when first needed). */
  private placements: Placement[] | null = null;
  /** The first start of a non-root rank: its current join, whether its own block is in place, and its promise's settling. */
  private event: RoleEvent | undefined;
  private copied = false;
  private done: () => void = noop;
  private fail: (e: unknown) => void = noop;

  constructor(
    private readonly input: GathervPlanInput,
    private readonly tags: AdaptiveTags,
    ctx: JoinContext,
  ) {
    this.comm = input.comm;
    this.rank = input.comm.rank;
    this.u = input.unitBytes;
    this.tag = tags.data;
    this.copyAll = ctx.copyAll;
    this.check = this.rank === input.root ? rootRangeCheck(this.rank, input.counts as readonly number[]) : undefined;
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
      schedulePlan(comm, adaptiveInfo(comm.size), this.compile(role)),
    );
  }

  /** With overlap (§3): the construction starts now; the first start receives each join as it is learnt. */
  overlapped(): PersistentCollective {
    const { comm, input, queue } = this;
    const check = this.check;
    const built = constructAdaptive({
      comm,
      root: input.root,
      count: input.count,
      ctx: this.ctx,
      tags: this.tags,
      onEvent:
        check === undefined
          ? (e) => queue.push(e)
          : (e) => {
              check(e);
              queue.push(e);
            },
    }).then(
      (role) => {
        queue.close();
        return role;
      },
      (e: unknown) => {
        queue.fail(e);
        throw e;
      },
    );
    built.catch(noop);
    this.built = built;
    // compiled at the second start: a one-shot call (one start) never pays for it
    return persistentPlan(comm, adaptiveInfo(comm.size), () => this.start());
  }

  private start(): PromiseLike<void> {
    if (this.role !== undefined) return (this.bound ??= this.compile(this.role)).run();
    const first = this.rank === this.input.root ? this.runRoot(this.queue) : this.runOther();
    return first.then(() =>
      (this.built as Promise<AdaptiveRole>).then((role) => {
        this.role = role;
      }),
    );
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

  private async runRoot(source: EventSource): Promise<void> {
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

  // A non-root rank's first start: its joins in order (receives into the range buffer), then its
  // range to its parent; a leaf sends straight from its block.
  private runOther(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.done = resolve;
      this.fail = reject;
      this.queue.next().then(this.firstEvent, this.failed);
    });
  }

  private readonly failed = (e: unknown): void => this.fail(e);
  private readonly finished = (): void => this.done();

  private readonly firstEvent = (e: RoleEvent | undefined): void => {
    try {
      const { comm, input, u } = this;
      if (e === undefined) throw new VcollError('INTERNAL', `rank ${this.rank}: no join in the adaptive tree`, { rank: this.rank });
      if (e.kind === 'send' && !this.copyAll) {
        if (input.count > 0) comm.send(e.peer, this.tag, input.send).then(this.finished, this.failed);
        else this.done();
        return;
      }
      const buf = (this.buffer ??= RangeBuffer.growable(comm, input.count * u));
      buf.reset();
      this.copied = false;
      if (this.copyAll || e.lo > this.rank) this.copyOwn(buf);
      this.event = e;
      this.receive();
    } catch (err) {
      this.fail(err);
    }
  };

  private copyOwn(buf: RangeBuffer): void {
    this.copied = true;
    this.comm.copy(buf.ownView(), this.input.send);
  }

  /** The current join: a receive into the range buffer, or (a 'send') the whole range to the parent. */
  private receive(): void {
    const e = this.event as RoleEvent;
    const buf = this.buffer as RangeBuffer;
    if (e.kind === 'recv') {
      const n = e.size * this.u;
      const view = e.lo < this.rank ? buf.prepend(n) : buf.append(n);
      if (n > 0) this.comm.recv(e.peer, this.tag, view).then(this.received, this.failed);
      else this.received();
      return;
    }
    if (!this.copied) this.copyOwn(buf);
    const out = buf.contents();
    if (out.length !== e.size * this.u) {
      throw new VcollError('INTERNAL', `rank ${this.rank}: range ${e.lo}..${e.hi} holds ${out.length} bytes, the construction says ${e.size * this.u}`, { rank: this.rank });
    }
    if (out.length > 0) this.comm.send(e.peer, this.tag, out).then(this.finished, this.failed);
    else this.done();
  }

  private readonly received = (): void => {
    try {
      if (!this.copied) this.copyOwn(this.buffer as RangeBuffer);
      this.queue.next().then(this.nextEvent, this.failed);
    } catch (err) {
      this.fail(err);
    }
  };

  private readonly nextEvent = (e: RoleEvent | undefined): void => {
    try {
      if (e === undefined) throw new VcollError('INTERNAL', `rank ${this.rank}: the adaptive construction ended without a parent`, { rank: this.rank });
      this.event = e;
      this.receive();
    } catch (err) {
      this.fail(err);
    }
  };
}

function initAdaptiveGatherv(input: GathervPlanInput): Promise<PersistentCollective> {
  try {
    const { comm, root } = input;
    const ctx = adaptiveContext(comm, root, input.model, input.adaptive);
    const plan = new AdaptiveGather(input, nextPlanTags(comm), ctx);
    return input.adaptive.overlap ? Promise.resolve(plan.overlapped()) : plan.planned();
  } catch (e) {
    return Promise.reject(e);
  }
}

export const ADAPTIVE_GATHERV: GathervVariant = {
  name: 'adaptive',
  description: 'Traff18: distributed adaptive binomial tree (Lemma 3, constant-size messages), fixed root (Lemma 2), construction overlapped with the data',
  init: initAdaptiveGatherv,
};
