/**
 * Cost models of point-to-point communication (see docs/MODEL.md and Traff17 §2.1).
 *
 * - `linear`: homogeneous α + β·m per message, γ·m per locally copied element.
 * - `pairwise`: non-homogeneous Hockney model, α_ij + β_ij·m from rank i to rank j.
 * - `hierarchical`: ranks live on nodes; intra-node and inter-node α, β.
 *
 * A transfer of 0 units costs nothing and sends no message, in every model.
 * `ports` is the number of transfers a processor can take part in at once (k-ported);
 * `copyAll` is Traff18 Lemma 4's convention where every processor, leaves included,
 * copies its own block into a communication buffer before it communicates.
 */
import { InvalidArgumentError } from '../errors.js';
import { requireInteger, requireNonNegativeFinite } from './validate.js';

export interface LinearParams {
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
}

export type CostModelKind = 'linear' | 'pairwise' | 'hierarchical';

export interface CostModel {
  readonly kind: CostModelKind;
  /** Number of communication ports per processor (k >= 1). */
  readonly ports: number;
  /** Lemma 4 of Traff18: every processor copies its block, leaves included. */
  readonly copyAll: boolean;
  /** Number of ranks the model is defined for, or undefined when it fits any p. */
  readonly size: number | undefined;
  /** Time to send `units` elements from `from` to `to`; 0 when units = 0. */
  comm(from: number, to: number, units: number): number;
  /** Time for `rank` to copy `units` of its own elements locally. */
  copy(rank: number, units: number): number;
  /** The homogeneous parameters when every pair of ranks costs the same, else undefined. */
  readonly linear: LinearParams | undefined;
  /**
   * The largest α, β, γ over all pairs and ranks (an upper bound of every cost), for
   * `requireFiniteCosts`; optional so that hand-made models stay valid.
   */
  readonly bounds?: LinearParams;
}

export interface ModelOptions {
  ports?: number;
  copyAll?: boolean;
}

/** The most ports a model may have (a processor with more is effectively unbounded). */
export const MAX_PORTS = 2 ** 16;
/** The largest node number of a hierarchical model (stored as int32). */
export const MAX_NODE = 2 ** 31 - 1;

function commonOptions(opts: ModelOptions | undefined): { ports: number; copyAll: boolean } {
  const ports = requireInteger('ports', opts?.ports ?? 1, 1, MAX_PORTS);
  const copyAll = opts?.copyAll ?? false;
  if (typeof copyAll !== 'boolean') throw new InvalidArgumentError('copyAll', 'must be a boolean');
  return { ports, copyAll };
}

/**
 * The formula of a model made by this module's factories, as data (what native code evaluates
 * in the same floating-point operations: sim/replay.ts's native loop); a model made otherwise
 * (an object of one's own) has none.
 */
export type ModelFormula =
  | { readonly kind: 'linear'; readonly alpha: number; readonly beta: number; readonly gamma: number }
  | { readonly kind: 'pairwise'; readonly p: number; readonly alpha: Float64Array; readonly beta: Float64Array; readonly gamma: Float64Array }
  | {
      readonly kind: 'hierarchical';
      readonly nodeOf: Int32Array;
      readonly intra: { readonly alpha: number; readonly beta: number };
      readonly inter: { readonly alpha: number; readonly beta: number };
      readonly gamma: number;
    };

const formulas = new WeakMap<CostModel, ModelFormula>();

/** The formula of `model` when a factory of this module made it (see ModelFormula). */
export function modelFormula(model: CostModel): ModelFormula | undefined {
  return formulas.get(model);
}

function withFormula(model: CostModel, formula: ModelFormula): CostModel {
  formulas.set(model, formula);
  return model;
}

/** Homogeneous linear model: comm(m) = α + β·m (m > 0), copy(m) = γ·m. */
export function linearModel(params: { alpha: number; beta: number; gamma?: number } & ModelOptions): CostModel {
  const alpha = requireNonNegativeFinite('alpha', params.alpha);
  const beta = requireNonNegativeFinite('beta', params.beta);
  const gamma = requireNonNegativeFinite('gamma', params.gamma ?? 0);
  const { ports, copyAll } = commonOptions(params);
  const linear: LinearParams = Object.freeze({ alpha, beta, gamma });
  const model: CostModel = Object.freeze({
    kind: 'linear' as const,
    ports,
    copyAll,
    size: undefined,
    linear,
    bounds: linear,
    comm: (_from: number, _to: number, units: number) => (units > 0 ? alpha + beta * units : 0),
    copy: (_rank: number, units: number) => gamma * units,
  });
  return withFormula(model, { kind: 'linear', alpha, beta, gamma });
}

export type Matrix = ArrayLike<ArrayLike<number>>;

function readMatrix(field: string, m: Matrix, p: number): Float64Array {
  if (m === null || typeof m !== 'object' || typeof m.length !== 'number') {
    throw new InvalidArgumentError(field, 'must be a p x p matrix (array of rows)');
  }
  if (m.length !== p) throw new InvalidArgumentError(field, `must have ${p} rows, got ${m.length}`);
  const out = new Float64Array(p * p);
  for (let i = 0; i < p; i++) {
    const row = m[i];
    if (row === null || typeof row !== 'object' || typeof row.length !== 'number') {
      throw new InvalidArgumentError(`${field}[${i}]`, 'must be an array');
    }
    if (row.length !== p) throw new InvalidArgumentError(`${field}[${i}]`, `must have ${p} entries, got ${row.length}`);
    for (let j = 0; j < p; j++) out[i * p + j] = requireNonNegativeFinite(`${field}[${i}][${j}]`, row[j]);
  }
  return out;
}

function readPerRank(field: string, v: number | ArrayLike<number> | undefined, p: number): Float64Array {
  const out = new Float64Array(p);
  if (v === undefined) return out;
  if (typeof v === 'number') {
    out.fill(requireNonNegativeFinite(field, v));
    return out;
  }
  if (v.length !== p) throw new InvalidArgumentError(field, `must be a number or have ${p} entries, got ${v.length}`);
  for (let i = 0; i < p; i++) out[i] = requireNonNegativeFinite(`${field}[${i}]`, v[i]);
  return out;
}

function maxOf(v: Float64Array): number {
  let x = 0;
  for (let i = 0; i < v.length; i++) if (v[i] > x) x = v[i];
  return x;
}

/** The largest entry of a p×p row-major matrix off its (unused) diagonal. */
function maxOffDiagonal(v: Float64Array, p: number): number {
  let x = 0;
  for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) if (i !== j && v[i * p + j] > x) x = v[i * p + j];
  return x;
}

function checkRank(field: string, r: number, p: number): void {
  if (!(r >= 0 && r < p && Number.isInteger(r))) throw new InvalidArgumentError(field, `rank ${r} outside [0, ${p - 1}]`);
}

/**
 * Non-homogeneous (Hockney) model over p ranks: comm(i, j, m) = α[i][j] + β[i][j]·m.
 * γ is one number for every rank, or one per rank. Diagonal entries are not used.
 */
export function pairwiseModel(params: {
  alpha: Matrix;
  beta: Matrix;
  gamma?: number | ArrayLike<number>;
} & ModelOptions): CostModel {
  const p = params.alpha?.length;
  if (typeof p !== 'number' || p < 1) throw new InvalidArgumentError('alpha', 'must be a non-empty p x p matrix');
  const a = readMatrix('alpha', params.alpha, p);
  const b = readMatrix('beta', params.beta, p);
  const g = readPerRank('gamma', params.gamma, p);
  const { ports, copyAll } = commonOptions(params);
  const bounds = Object.freeze({ alpha: maxOffDiagonal(a, p), beta: maxOffDiagonal(b, p), gamma: maxOf(g) });
  const model: CostModel = Object.freeze({
    kind: 'pairwise' as const,
    ports,
    copyAll,
    size: p,
    linear: undefined,
    bounds,
    comm: (from: number, to: number, units: number) => {
      if (units <= 0) return 0;
      checkRank('from', from, p);
      checkRank('to', to, p);
      const k = from * p + to;
      return a[k] + b[k] * units;
    },
    copy: (rank: number, units: number) => {
      checkRank('rank', rank, p);
      return g[rank] * units;
    },
  });
  return withFormula(model, { kind: 'pairwise', p, alpha: a, beta: b, gamma: g });
}

/**
 * Hierarchical model: rank i lives on node `nodeOf[i]`; ranks on the same node talk at
 * (intra.alpha, intra.beta), ranks on different nodes at (inter.alpha, inter.beta).
 */
export function hierarchicalModel(params: {
  nodeOf: ArrayLike<number>;
  intra: { alpha: number; beta: number };
  inter: { alpha: number; beta: number };
  gamma?: number;
} & ModelOptions): CostModel {
  const nodeOf = params.nodeOf;
  if (nodeOf === null || typeof nodeOf !== 'object' || typeof nodeOf.length !== 'number' || nodeOf.length < 1) {
    throw new InvalidArgumentError('nodeOf', 'must be a non-empty array of node numbers, one per rank');
  }
  const p = nodeOf.length;
  const node = new Int32Array(p);
  for (let i = 0; i < p; i++) {
    const x = nodeOf[i];
    // the field's name only for an error (p names would be p strings)
    node[i] = typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= MAX_NODE ? x : requireInteger(`nodeOf[${i}]`, x, 0, MAX_NODE);
  }
  const ia = requireNonNegativeFinite('intra.alpha', params.intra?.alpha);
  const ib = requireNonNegativeFinite('intra.beta', params.intra?.beta);
  const ea = requireNonNegativeFinite('inter.alpha', params.inter?.alpha);
  const eb = requireNonNegativeFinite('inter.beta', params.inter?.beta);
  const gamma = requireNonNegativeFinite('gamma', params.gamma ?? 0);
  const { ports, copyAll } = commonOptions(params);
  let multi = false; // ranks on more than one node
  for (let i = 1; i < p && !multi; i++) multi = node[i] !== node[0];
  const homogeneous = (ia === ea && ib === eb) || !multi;
  const lin = !multi ? { alpha: ia, beta: ib, gamma } : { alpha: ea, beta: eb, gamma };
  const bounds = Object.freeze({
    alpha: multi ? Math.max(ia, ea) : ia,
    beta: multi ? Math.max(ib, eb) : ib,
    gamma,
  });
  const model: CostModel = Object.freeze({
    kind: 'hierarchical' as const,
    ports,
    copyAll,
    size: p,
    linear: homogeneous ? Object.freeze(lin) : undefined,
    bounds,
    comm: (from: number, to: number, units: number) => {
      if (units <= 0) return 0;
      checkRank('from', from, p);
      checkRank('to', to, p);
      return node[from] === node[to] ? ia + ib * units : ea + eb * units;
    },
    copy: (_rank: number, units: number) => gamma * units,
    nodeOf: node,
  });
  return withFormula(model, { kind: 'hierarchical', nodeOf: node, intra: { alpha: ia, beta: ib }, inter: { alpha: ea, beta: eb }, gamma });
}

/** Checks that a model covers p ranks (per-pair and hierarchical models have a fixed size). */
export function requireModelFits(model: CostModel, p: number): void {
  if (model.size !== undefined && model.size !== p) {
    throw new InvalidArgumentError('model', `is defined for ${model.size} ranks, the problem has ${p}`);
  }
}

/**
 * The largest time a tree may take in a model: the tree builders add, compare and subtract a
 * few such times, so a margin of 2^32 below Number.MAX_VALUE (≈ 4.2e298) keeps every
 * intermediate finite.
 */
export const MAX_MODEL_TIME = Number.MAX_VALUE / 2 ** 32;

/** Hand-made models without `bounds` are probed pair by pair up to this p (O(p²) calls). */
const MAX_PROBED_P = 2048;

/** The largest α, β, γ of a model (its `bounds`, its homogeneous parameters, or probed). */
function boundsOf(model: CostModel, p: number): LinearParams | undefined {
  if (model.bounds !== undefined) return model.bounds;
  if (model.linear !== undefined) return model.linear;
  if (p > MAX_PROBED_P) return undefined;
  let alpha = 0;
  let beta = 0;
  let gamma = 0;
  for (let i = 0; i < p; i++) {
    gamma = Math.max(gamma, model.copy(i, 1));
    for (let j = 0; j < p; j++) {
      if (i === j) continue;
      const one = model.comm(i, j, 1);
      const b = model.comm(i, j, 2) - one;
      beta = Math.max(beta, b);
      alpha = Math.max(alpha, one - b);
    }
  }
  return { alpha, beta, gamma };
}

/**
 * Checks that every gather/scatter tree over `sizes` has a finite time in `model`: at most
 * p − 1 transfers of at most T = Σ sizes elements and every block copied once, so
 * (p − 1)·(α + β·T) + γ·T with the largest α, β, γ of the model must be ≤ MAX_MODEL_TIME.
 * Otherwise throws InvalidArgumentError naming the parameter with the largest term
 * ('alpha', 'beta' or 'gamma'), its value and the bound. O(p) (O(p²) for a hand-made
 * per-pair model without `bounds`, skipped above 2048 ranks).
 */
export function requireFiniteCosts(model: CostModel, sizes: ArrayLike<number>): void {
  const p = sizes.length;
  const b = boundsOf(model, p);
  if (b === undefined) return;
  let total = 0;
  for (let i = 0; i < p; i++) total += sizes[i];
  const terms = { alpha: (p - 1) * b.alpha, beta: (p - 1) * b.beta * total, gamma: b.gamma * total };
  const bound = (p - 1) * (b.alpha + b.beta * total) + b.gamma * total;
  if (bound <= MAX_MODEL_TIME) return;
  const field = terms.alpha >= terms.beta && terms.alpha >= terms.gamma ? 'alpha' : terms.beta >= terms.gamma ? 'beta' : 'gamma';
  throw new InvalidArgumentError(
    field,
    `${b[field]} lets a tree's time overflow: (p − 1)·(α + β·T) + γ·T = ${bound} with α = ${b.alpha}, β = ${b.beta}, ` +
      `γ = ${b.gamma} (largest over the model), p = ${p}, T = ${total} elements, must be ≤ ${MAX_MODEL_TIME.toPrecision(3)} (Number.MAX_VALUE / 2^32)`,
  );
}
