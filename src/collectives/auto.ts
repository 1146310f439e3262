/**
 * `auto`: the root, the only rank that knows the counts, picks the algorithm and tells the
 * others.
 *
 * Decision (root): the predicted time of each cheap candidate under options.model — the
 * exact model time of its data tree from the tree layer (linear: `linearTree`; binomial:
 * `obliviousBinomialTree`; adaptive, when that variant is registered: `adaptiveBinomialTree`;
 * two-block, when the counts have at most two distinct values: `twoBlockTree`), plus an
 * estimate of its planning phase: nothing for linear; the root's sends of the counts
 * scatter for binomial; those of the two schedule scatters for two-block; 2⌈log₂p⌉
 * constant-size messages for adaptive. The smallest wins, ties in that order (simplest
 * first). The optimal and binary dynamic programs (O(p³)) are never run by auto. Cost at
 * the root: O(p log p) time.
 *
 * Broadcast: one byte (the index of the choice in AUTO_ORDER) down the binomial tree of
 * collectives/basic (bcast): ⌈log₂p⌉ rounds, ⌈log₂p⌉(α + β) on the critical path, added to
 * the chosen plan's constructionRounds. Every rank must pass algorithm 'auto' (as every
 * rank must pass the same algorithm).
 */
import { CommunicationError, InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { adaptiveBinomialTree } from '../trees/adaptive.js';
import { obliviousBinomialTree } from '../trees/binomial.js';
import { linearTree } from '../trees/linear.js';
import { twoBlockTree } from '../trees/two-block.js';
import { bcast } from './basic/bcast.js';
import { ceilLog2 } from '../util/ceil-log.js';
import { binomialNode, SCHEDULE_WIDTH } from './schedule.js';
import type { PersistentCollective, VAlgorithm } from './types.js';
import type { VPlanInput } from './variant.js';

type Concrete = Exclude<VAlgorithm, 'auto'>;

/** Every algorithm a decision byte can name (index = byte). */
export const AUTO_ORDER: readonly Concrete[] = ['linear', 'binomial', 'adaptive', 'two-block', 'optimal', 'binary'];

/** One candidate's predicted time (model units). */
export interface AutoPrediction {
  readonly algorithm: Concrete;
  /** Data phase: the exact model time of the candidate's tree. */
  readonly data: number;
  /** Planning phase estimate (construction or schedule distribution). */
  readonly setup: number;
  readonly total: number;
}

/** The root's sends when it scatters `width` Int32 per rank down the binomial tree. */
function binomialScatterCost(model: CostModel, p: number, root: number, width: number, unitBytes: number): number {
  let t = 0;
  for (const c of binomialNode(p, root, root).children) t += model.comm(root, c.rank, (4 * width * (c.hi - c.lo + 1)) / unitBytes);
  return t;
}

/**
 * Predicted times of the candidates auto considers, in AUTO_ORDER (`available`: the
 * algorithms registered for this operation).
 */
export function predictAuto(
  counts: readonly number[],
  model: CostModel,
  root: number,
  unitBytes: number,
  available: ReadonlySet<string>,
): AutoPrediction[] {
  const p = counts.length;
  const out: AutoPrediction[] = [];
  const add = (algorithm: Concrete, data: number, setup: number): void => {
    out.push({ algorithm, data, setup, total: data + setup });
  };
  if (available.has('linear')) add('linear', linearTree(counts, model, { root }).time, 0);
  if (p === 1) return out;
  if (available.has('binomial')) {
    add('binomial', obliviousBinomialTree(counts, model, { root }).time, binomialScatterCost(model, p, root, 1, unitBytes));
  }
  const neighbour = (root + 1) % p;
  if (available.has('adaptive')) {
    add('adaptive', adaptiveBinomialTree(counts, model, { root }).time, 2 * ceilLog2(p) * model.comm(root, neighbour, 16 / unitBytes));
  }
  if (available.has('two-block') && new Set(counts).size <= 2) {
    const setup = binomialScatterCost(model, p, root, SCHEDULE_WIDTH, unitBytes) + binomialScatterCost(model, p, root, 3, unitBytes);
    add('two-block', twoBlockTree(counts, model, { root }).time, setup);
  }
  return out;
}

/** The candidate with the smallest predicted total (ties to the earlier one in AUTO_ORDER). */
export function chooseAuto(predictions: readonly AutoPrediction[]): Concrete {
  let best = predictions[0];
  for (const x of predictions) if (x.total < best.total) best = x;
  return best.algorithm;
}

interface VariantLike<I> {
  readonly name: Concrete;
  init(input: I): Promise<PersistentCollective>;
}

/** Plans `auto`: the root decides, broadcasts one byte, every rank plans the chosen variant. */
export async function autoInit<I extends VPlanInput>(input: I, variants: readonly VariantLike<I>[]): Promise<PersistentCollective> {
  const { comm, root } = input;
  const p = comm.size;
  const decision = new Uint8Array(1);
  if (comm.rank === root) {
    const available = new Set(variants.map((v) => v.name));
    const choice = chooseAuto(predictAuto(input.counts as readonly number[], input.model, root, input.unitBytes, available));
    decision[0] = AUTO_ORDER.indexOf(choice);
  }
  if (p > 1) await bcast(comm, decision, root);
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
export async function planVariant<I extends VPlanInput>(
  input: I,
  algorithm: VAlgorithm,
  variants: readonly VariantLike<I>[],
  op: 'gatherv' | 'scatterv',
): Promise<PersistentCollective> {
  if (algorithm === 'auto') return autoInit(input, variants);
  const variant = variants.find((v) => v.name === algorithm);
  if (variant === undefined) {
    throw new InvalidArgumentError('algorithm', `'${algorithm}' is not available for ${op} yet`, { rank: input.comm.rank });
  }
  return variant.init(input);
}
