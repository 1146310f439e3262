/**
 * A persistent hierarchical gatherv or scatterv (the shape of MPI-4.0 §6.13's
 * MPI_Gatherv_init / MPI_Scatterv_init: arguments and buffers bound at init, the contents of
 * the buffers free to change between starts): what a caller pays once and what it pays per
 * start() (hierarchicalGathervInit / hierarchicalScattervInit in index.ts).
 *
 * Planned in one call slot of the communicator (every rank plans in the same order, as it calls
 * collectives); every start() takes the next call number, so the data of two plans, or of a
 * plan and a call, never match each other's receives; a start() before the previous one has
 * resolved is refused (InvalidArgumentError 'start'), as the other persistent plans refuse it.
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError } from '../../errors.js';
import { beginCall, CallScope } from '../call-scope.js';
import type { HierarchicalInfo } from './types.js';

/** A planned hierarchical gatherv or scatterv: start() runs its data phase. */
export interface HierarchicalPlan {
  /** What a start() runs: the variant, the tree, the data rounds (the constructions were paid at init: constructionRounds is theirs). */
  readonly info: HierarchicalInfo;
  /** Runs the data phase once; may be called again after it resolved. */
  start(): Promise<void>;
}

class Plan implements HierarchicalPlan {
  private running = false;

  constructor(
    readonly info: HierarchicalInfo,
    /** The scope the plan was made in when init opened it (its starts renew it), else undefined. */
    private readonly scope: CallScope | undefined,
    private readonly rank: number,
    private readonly run: () => Promise<void>,
  ) {}

  start(): Promise<void> {
    if (this.running) return Promise.reject(new InvalidArgumentError('start', 'the previous start() of this plan has not resolved yet', { rank: this.rank }));
    this.scope?.renew();
    let done: Promise<void>;
    try {
      done = this.run();
    } catch (e) {
      return Promise.reject(e);
    }
    this.running = true;
    return done.then(
      () => {
        this.running = false;
      },
      (e: unknown) => {
        this.running = false;
        throw e;
      },
    );
  }
}

/**
 * Plans on `comm` in a call slot of its own: `init(scope)` validates and plans (its messages,
 * the constructions, travel in that slot) and returns the data phase, which every start() runs
 * in the next call slot. Inside a call (comm already a scope) plan and starts stay in its slot.
 */
export async function hierarchicalPlan(comm: Communicator, init: (scope: Communicator) => Promise<{ info: HierarchicalInfo; run: () => Promise<void> }>): Promise<HierarchicalPlan> {
  const scope = beginCall(comm);
  const { info, run } = await init(scope);
  return new Plan(info, scope !== comm && scope instanceof CallScope ? scope : undefined, comm.rank, run);
}
