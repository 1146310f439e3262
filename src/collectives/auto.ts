/**
 * `auto`: the root, the only rank that knows the counts, picks the algorithm and tells the
 * others — unless every rank can see on its own that the root would pick `linear`.
 *
 * Decision (root): the predicted time of each cheap candidate under options.model — the
 * exact model time of its data tree from the tree layer (linear: `linearTree`; binomial:
 * `obliviousBinomialTree`; adaptive, when that variant is registered: `adaptiveBinomialTree`
 * (k-ported for a k-ported model);
 * two-block, when the counts have at most two distinct values: `twoBlockTree`), plus an
 * estimate of its planning phase: nothing for linear; the root's sends of the counts
 * scatter for binomial; those of the two schedule scatters for two-block; 2⌈log_{k+1}p⌉
 * constant-size messages for adaptive (k = model.ports) — plus `roundLatency` (options.auto)
 * per dependent round: linear 1, binomial ⌈log₂p⌉ + its height, adaptive its construction
 * rounds + ⌈log_{k+1}p⌉, two-block 2⌈log₂p⌉ + its height. The smallest wins, ties in AUTO_ORDER (simplest first).
 * The optimal and binary dynamic programs (O(p³)) are never run by auto, nor is `mpi-native`
 * (the MPI library's own collective, MPI transport only: auto plans among the portable
 * variants, `portableVariants`). Cost at the root: O(p log p) time.
 *
 * Broadcast: one byte (the index of the choice in AUTO_ORDER) down the binomial tree of
 * collectives/basic (bcast): ⌈log₂p⌉ rounds, ⌈log₂p⌉(α + β) on the critical path, added to
 * the chosen plan's constructionRounds.
 *
 * No broadcast when linear provably wins (`linearWinsForAnyCounts`, every rank, O(log p)): in
 * a one-ported homogeneous model without copyAll every candidate's data phase is at least
 * γ·m_r + β·Σ_{i≠r} m_i (the root receives or sends every other block and copies its own,
 * one operation at a time), linear's at most that + (p − 1)α; the other candidates' planning
 * costs and round counts do not depend on the counts. So if (p − 1)α + roundLatency is at
 * most every other candidate's planning cost + rounds × roundLatency, the root would choose
 * linear whatever the counts, and every rank plans linear at once. That is the common case
 * on worker threads, where a dependent round (a thread waking up) costs far more than a
 * message whose data is already there. Every rank must pass algorithm 'auto' and the same
 * model and options (as every rank must pass the same algorithm).
 */
import { CommunicationError, InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { treeHeight } from '../trees/tree.js';
import { bcast } from './basic/bcast.js';
import { ceilLog2 } from '../util/ceil-log.js';
import type { AutoOptions, PersistentCollective, VAlgorithm } from './types.js';
import { autoRows, checkVariantRestrictions, failedRestriction, type AutoCandidate, type VVariantName } from './v-variants.js';
import { portableVariants, type VariantRequirement, type VPlanInput } from './variant.js';

type Concrete = Exclude<VAlgorithm, 'auto'>;

/** Every algorithm a decision byte can name (index = byte): the rows of the variant table with `auto`, by byte. */
export const AUTO_ORDER: readonly Concrete[] = autoRows().map((r) => r.name);

/** One candidate's predicted time (model units). */
export interface AutoPrediction {
  readonly algorithm: Concrete;
  /** Data phase: the exact model time of the candidate's tree. */
  readonly data: number;
  /** Planning phase estimate (construction or schedule distribution). */
  readonly setup: number;
  /** Dependent communication rounds (planning + data). */
  readonly rounds: number;
  /** data + setup + rounds × roundLatency. */
  readonly total: number;
}

/** The candidates of auto (rows with a planning estimate), in AUTO_ORDER. */
const CANDIDATES = autoRows().filter((r) => r.auto?.planning !== undefined);

function planningOf(candidate: AutoCandidate): NonNullable<AutoCandidate['planning']> {
  return candidate.planning as NonNullable<AutoCandidate['planning']>;
}

/** Whether a candidate plans anything (linear does not: it is the only candidate for p = 1). */
function plansNothing(name: VVariantName): boolean {
  return name === 'linear';
}

/**
 * Predicted times of the candidates auto considers, in AUTO_ORDER (`available`: the
 * algorithms registered for this operation; `roundLatency`: see AutoOptions). A candidate
 * whose restrictions (variant table) fail for this model or these counts is left out.
 */
export function predictAuto(
  counts: readonly number[],
  model: CostModel,
  root: number,
  unitBytes: number,
  available: ReadonlySet<string>,
  roundLatency = 0,
): AutoPrediction[] {
  const p = counts.length;
  const out: AutoPrediction[] = [];
  for (const row of CANDIDATES) {
    if (!available.has(row.name)) continue;
    if (p === 1 && !plansNothing(row.name)) continue;
    if (failedRestriction(row, { p, model, counts }, ['model', 'counts']) !== undefined) continue;
    const auto = row.auto as AutoCandidate;
    const plan = planningOf(auto)(model, p, root, unitBytes);
    const built = row.dataTree(counts, model, root, 'gatherv');
    const rounds = auto.plusTreeHeight === true ? plan.rounds + treeHeight(built.tree) : plan.rounds;
    out.push({ algorithm: row.name, data: built.time, setup: plan.setup, rounds, total: built.time + plan.setup + rounds * roundLatency });
  }
  return out;
}

/** The candidate with the smallest predicted total (ties to the earlier one in AUTO_ORDER). */
export function chooseAuto(predictions: readonly AutoPrediction[]): Concrete {
  let best = predictions[0];
  for (const x of predictions) if (x.total < best.total) best = x;
  return best.algorithm;
}

/**
 * Whether the root's choice is `linear` for every possible counts (see the module comment):
 * needs only p, the root, the model and the options, so every rank decides alike. False for
 * models where the bound does not hold (k ports, copyAll, non-homogeneous).
 */
export function linearWinsForAnyCounts(
  p: number,
  root: number,
  model: CostModel,
  unitBytes: number,
  available: ReadonlySet<string>,
  roundLatency = 0,
): boolean {
  if (!available.has('linear')) return false;
  if (p <= 1) return true;
  const lin = model.linear;
  if (lin === undefined || model.ports !== 1 || model.copyAll) return false;
  const linear = (p - 1) * lin.alpha + roundLatency;
  for (const row of CANDIDATES) {
    if (plansNothing(row.name) || !available.has(row.name)) continue;
    const auto = row.auto as AutoCandidate;
    const plan = planningOf(auto)(model, p, root, unitBytes);
    // a tree's height is at least 1 for p > 1
    const rounds = auto.plusTreeHeight === true ? plan.rounds + 1 : plan.rounds;
    if (linear > plan.setup + rounds * roundLatency) return false;
  }
  return true;
}

interface VariantLike<I> {
  readonly name: Concrete;
  readonly requires?: VariantRequirement;
  init(input: I): Promise<PersistentCollective>;
}

/**
 * Plans `auto`: linear at once when it wins for any counts; otherwise the root decides,
 * broadcasts one byte, every rank plans the chosen variant. Only the portable variants of
 * `all` take part (never one that `requires` the transport's own collectives, `mpi-native`).
 */
export async function autoInit<I extends VPlanInput>(
  input: I,
  all: readonly VariantLike<I>[],
  options: Required<AutoOptions> = { roundLatency: 0 },
): Promise<PersistentCollective> {
  const { comm, root } = input;
  const p = comm.size;
  const variants = portableVariants(all);
  const available = new Set<string>(variants.map((v) => v.name));
  if (linearWinsForAnyCounts(p, root, input.model, input.unitBytes, available, options.roundLatency)) {
    return (variants.find((v) => v.name === 'linear') as VariantLike<I>).init(input);
  }
  const decision = new Uint8Array(1);
  if (comm.rank === root) {
    const predictions = predictAuto(input.counts as readonly number[], input.model, root, input.unitBytes, available, options.roundLatency);
    decision[0] = AUTO_ORDER.indexOf(chooseAuto(predictions));
  }
  await bcast(comm, decision, root);
  const name = AUTO_ORDER[decision[0]];
  const variant = variants.find((v) => v.name === name);
  if (variant === undefined) {
    throw new CommunicationError(`rank ${comm.rank}: the root chose '${String(name)}', which this rank does not have`, { rank: comm.rank });
  }
  const plan = await variant.init(input);
  const info = { ...plan.info, constructionRounds: plan.info.constructionRounds + ceilLog2(p) };
  return { info, start: () => plan.start() };
}

/**
 * Plans `algorithm` with the matching one of `variants` (the registered algorithms of `op`),
 * or `auto` among them.
 */
export function planVariant<I extends VPlanInput>(
  input: I,
  algorithm: VAlgorithm,
  variants: readonly VariantLike<I>[],
  op: 'gatherv' | 'scatterv',
  auto?: Required<AutoOptions>,
): Promise<PersistentCollective> {
  // a plain function (no async frame resolving with the variant's promise: a simulation holds
  // one call chain per rank); errors as rejections
  try {
    if (algorithm === 'auto') return autoInit(input, variants, auto);
    const variant = variants.find((v) => v.name === algorithm);
    if (variant === undefined) {
      throw new InvalidArgumentError('algorithm', `'${algorithm}' is not available for ${op} yet`, { rank: input.comm.rank });
    }
    // every rank sees the model: a variant it cannot run fails on every rank before planning
    checkVariantRestrictions(algorithm, input.model, input.comm.size, input.comm.rank);
    return variant.init(input);
  } catch (e) {
    return Promise.reject(e);
  }
}
