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
import { nextPlanTags } from '../adaptive/tags.js';

interface EventSource {
  next(): Promise<RoleEvent | undefined>;
}

const noop = (): void => {};

/** One rank's data phase while the joins are still arriving (the first start, overlapped with the construction). */
class GatherExecutor {
  private readonly comm: Communicator;
  private readonly rank: number;
  private readonly u: number;
  private buffer: RangeBuffer | undefined;
  /** The root's placement of each join's range (made when first needed). */
  private placements: Placement[] | null = null;

  constructor(
    private readonly input: GathervPlanInput,
    private readonly tag: number,
    private readonly copyAll: boolean,
  ) {
    this.comm = input.comm;
    this.rank = input.comm.rank;
    this.u = input.unitBytes;
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

  run(source: EventSource): Promise<void> {
    return this.rank === this.input.root ? this.runRoot(source) : this.runOther(source);
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

  private async runOther(source: EventSource): Promise<void> {
    const { comm, input, u } = this;
    let e = await source.next();
    if (e === undefined) throw new VcollError('INTERNAL', `rank ${this.rank}: no join in the adaptive tree`, { rank: this.rank });
    if (e.kind === 'send' && !this.copyAll) {
      if (input.count > 0) await comm.send(e.peer, this.tag, input.send);
      return;
    }
    const buf = (this.buffer ??= RangeBuffer.growable(input.comm, input.count * u));
    buf.reset();
    let copied = false;
    const copyOwn = (): void => {
      copied = true;
      comm.copy(buf.ownView(), input.send);
    };
    if (this.copyAll || e.lo > this.rank) copyOwn();
    while (e.kind === 'recv') {
      const n = e.size * u;
      const view = e.lo < this.rank ? buf.prepend(n) : buf.append(n);
      if (n > 0) await comm.recv(e.peer, this.tag, view);
      if (!copied) copyOwn();
      const next: RoleEvent | undefined = await source.next();
      if (next === undefined) throw new VcollError('INTERNAL', `rank ${this.rank}: the adaptive construction ended without a parent`, { rank: this.rank });
      e = next;
    }
    if (!copied) copyOwn();
    const out = buf.contents();
    if (out.length !== e.size * u) {
      throw new VcollError('INTERNAL', `rank ${this.rank}: range ${e.lo}..${e.hi} holds ${out.length} bytes, the construction says ${e.size * u}`, { rank: this.rank });
    }
    if (out.length > 0) await comm.send(e.peer, this.tag, out);
  }
}

async function initAdaptiveGatherv(input: GathervPlanInput): Promise<PersistentCollective> {
  const { comm, root } = input;
  const ctx = adaptiveContext(comm, root, input.model, input.adaptive);
  const tags = nextPlanTags(comm);
  const exec = new GatherExecutor(input, tags.data, ctx.copyAll);
  const check = comm.rank === root ? rootRangeCheck(comm.rank, input.counts as readonly number[]) : undefined;
  const info = adaptiveInfo(comm.size);

  // once the role is known, the data phase is a compiled schedule (adaptive/schedule.ts)
  const compile = (role: AdaptiveRole): BoundSchedule => bindPlanSchedule(input, adaptiveGatherSchedule({ ...describeRank(input), copyAll: ctx.copyAll }, role, tags.data));
  if (!input.adaptive.overlap) {
    const role = await constructAdaptive({ comm, root, count: input.count, ctx, tags, onEvent: check });
    return schedulePlan(comm, info, compile(role));
  }

  const queue = new EventQueue<RoleEvent>();
  const built = constructAdaptive({
    comm,
    root,
    count: input.count,
    ctx,
    tags,
    onEvent: (e) => {
      check?.(e);
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
  // compiled at the second start: a one-shot call (one start) never pays for it
  let role: AdaptiveRole | undefined;
  let bound: BoundSchedule | undefined;
  return persistentPlan(comm, info, () => {
    if (role !== undefined) return (bound ??= compile(role)).run();
    return exec.run(queue).then(async () => {
      role = await built;
    });
  });
}

export const ADAPTIVE_GATHERV: GathervVariant = {
  name: 'adaptive',
  description: 'Traff18: distributed adaptive binomial tree (Lemma 3, constant-size messages), fixed root (Lemma 2), construction overlapped with the data',
  init: initAdaptiveGatherv,
};
