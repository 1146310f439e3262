/**
 * Cost models as JSON documents (pure: text in, text out; files are the caller's business).
 *
 * A document is one object with `format: "vcoll-cost-model"`, `version: 1`, the model's `kind`
 * and exactly the parameters of its factory in src/model/cost-model.ts:
 * - linear:       alpha, beta, gamma (numbers);
 * - pairwise:     alpha, beta (p x p matrices, row = sender, column = receiver; the diagonal is
 *                 not used), gamma (a number or one per rank);
 * - hierarchical: nodeOf (one node per rank), intra {alpha, beta}, inter {alpha, beta}, gamma;
 * and for every kind `ports` (integer >= 1) and `copyAll` (boolean). Optional metadata:
 * `unit` (what one time unit is, e.g. "us" or "model") and `description` (free text).
 *
 * Loading validates everything and throws InvalidArgumentError whose `field` is the JSON path
 * of the bad value (`beta[3][7]`, `intra.alpha`, `version`); unknown fields are errors too.
 * Saving writes numbers in JavaScript's shortest round-trip form, so save → load gives the
 * same doubles bit for bit (−0 is written as 0).
 *
 * A CostModel object does not expose its matrices, so documents are written from a
 * CostModelSpec (the plain parameters). `specOfModel` recovers the spec of a linear model (from
 * `model.linear`) and of any model built here (`modelFromSpec`, `loadModelJson`).
 */
import { MAX_NODE, MAX_PORTS } from './cost-model.js';
import { InvalidArgumentError } from '../errors.js';
import { hierarchicalModel, linearModel, pairwiseModel, type CostModel } from './cost-model.js';

export const MODEL_JSON_FORMAT = 'vcoll-cost-model';
export const MODEL_JSON_VERSION = 1;

interface SpecCommon {
  /** Communication ports per processor (>= 1). */
  readonly ports: number;
  /** Traff18 Lemma 4: every processor copies its block. */
  readonly copyAll: boolean;
}

export interface LinearModelSpec extends SpecCommon {
  readonly kind: 'linear';
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
}

export interface PairwiseModelSpec extends SpecCommon {
  readonly kind: 'pairwise';
  /** alpha[i][j]: start-up time of a message from rank i to rank j. */
  readonly alpha: readonly (readonly number[])[];
  /** beta[i][j]: time per element from rank i to rank j. */
  readonly beta: readonly (readonly number[])[];
  /** One copy time per element for every rank, or one per rank. */
  readonly gamma: number | readonly number[];
}

export interface HierarchicalModelSpec extends SpecCommon {
  readonly kind: 'hierarchical';
  readonly nodeOf: readonly number[];
  readonly intra: { readonly alpha: number; readonly beta: number };
  readonly inter: { readonly alpha: number; readonly beta: number };
  readonly gamma: number;
}

export type CostModelSpec = LinearModelSpec | PairwiseModelSpec | HierarchicalModelSpec;

/** Optional metadata kept alongside a model. */
export interface ModelMeta {
  /** What one time unit is ("us" for measured models, "model" for simulator units, …). */
  readonly unit?: string;
  readonly description?: string;
}

/** A loaded document: the validated spec, its model and the metadata. */
export interface LoadedModel {
  readonly spec: CostModelSpec;
  readonly model: CostModel;
  readonly meta: ModelMeta;
}

// ---------------------------------------------------------------------------------------------
// Validation of untrusted values; every error names the JSON path of the value.

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing (missing)';
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return v === null ? 'null' : typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}

function field(obj: JsonObject, key: string, path: string): unknown {
  if (!Object.prototype.hasOwnProperty.call(obj, key)) throw new InvalidArgumentError(path, 'is missing');
  return obj[key];
}

function nonNegative(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidArgumentError(path, `must be a finite number, got ${describe(v)}`);
  if (v < 0) throw new InvalidArgumentError(path, `must be >= 0, got ${v}`);
  // −0 and 0 are the same time; keep one of them so a round trip is exact
  return v === 0 ? 0 : v;
}

function integer(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new InvalidArgumentError(path, `must be an integer, got ${describe(v)}`);
  if (v < min || v > max) throw new InvalidArgumentError(path, `must be in [${min}, ${max}], got ${v}`);
  return v === 0 ? 0 : v;
}

function array(v: unknown, path: string, length?: number): unknown[] {
  if (!Array.isArray(v)) throw new InvalidArgumentError(path, `must be an array, got ${describe(v)}`);
  if (length !== undefined && v.length !== length) throw new InvalidArgumentError(path, `must have ${length} entries, got ${v.length}`);
  return v;
}

function matrix(v: unknown, path: string, p: number): number[][] {
  return array(v, path, p).map((row, i) => array(row, `${path}[${i}]`, p).map((x, j) => nonNegative(x, `${path}[${i}][${j}]`)));
}

function alphaBeta(v: unknown, path: string): { alpha: number; beta: number } {
  if (!isObject(v)) throw new InvalidArgumentError(path, `must be an object {alpha, beta}, got ${describe(v)}`);
  onlyKeys(v, ['alpha', 'beta'], `${path}.`);
  return { alpha: nonNegative(field(v, 'alpha', `${path}.alpha`), `${path}.alpha`), beta: nonNegative(field(v, 'beta', `${path}.beta`), `${path}.beta`) };
}

function onlyKeys(obj: JsonObject, allowed: readonly string[], prefix = ''): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw new InvalidArgumentError(`${prefix}${k}`, `is not a field of this model (allowed: ${allowed.join(', ')})`);
  }
}

const COMMON_KEYS = ['format', 'version', 'kind', 'ports', 'copyAll', 'unit', 'description'] as const;
const KIND_KEYS = {
  linear: ['alpha', 'beta', 'gamma'],
  pairwise: ['alpha', 'beta', 'gamma'],
  hierarchical: ['nodeOf', 'intra', 'inter', 'gamma'],
} as const;

function common(obj: JsonObject): SpecCommon {
  const ports = integer(field(obj, 'ports', 'ports'), 'ports', 1, MAX_PORTS);
  const copyAll = field(obj, 'copyAll', 'copyAll');
  if (typeof copyAll !== 'boolean') throw new InvalidArgumentError('copyAll', `must be true or false, got ${describe(copyAll)}`);
  return { ports, copyAll };
}

/**
 * Validates a spec given as an untrusted value (a parsed document or a spec object) and
 * returns a fresh, plain copy. `withHeader`: the value must also carry format and version.
 */
function readSpec(v: unknown, withHeader: boolean): CostModelSpec {
  if (!isObject(v)) throw new InvalidArgumentError('(document)', `must be a JSON object, got ${describe(v)}`);
  if (withHeader) {
    const format = field(v, 'format', 'format');
    if (format !== MODEL_JSON_FORMAT) throw new InvalidArgumentError('format', `must be "${MODEL_JSON_FORMAT}", got ${describe(format)}`);
    const version = field(v, 'version', 'version');
    if (version !== MODEL_JSON_VERSION) throw new InvalidArgumentError('version', `must be ${MODEL_JSON_VERSION} (the only version this vcoll reads), got ${describe(version)}`);
  }
  const kind = field(v, 'kind', 'kind');
  if (kind !== 'linear' && kind !== 'pairwise' && kind !== 'hierarchical') {
    throw new InvalidArgumentError('kind', `must be "linear", "pairwise" or "hierarchical", got ${describe(kind)}`);
  }
  onlyKeys(v, [...(withHeader ? COMMON_KEYS : COMMON_KEYS.slice(2, 5)), ...KIND_KEYS[kind]]);
  const { ports, copyAll } = common(v);
  if (kind === 'linear') {
    const alpha = nonNegative(field(v, 'alpha', 'alpha'), 'alpha');
    const beta = nonNegative(field(v, 'beta', 'beta'), 'beta');
    const gamma = nonNegative(field(v, 'gamma', 'gamma'), 'gamma');
    return { kind, alpha, beta, gamma, ports, copyAll };
  }
  if (kind === 'pairwise') {
    const rawAlpha = field(v, 'alpha', 'alpha');
    const p = array(rawAlpha, 'alpha').length;
    if (p < 1) throw new InvalidArgumentError('alpha', 'must be a non-empty p x p matrix');
    const alpha = matrix(rawAlpha, 'alpha', p);
    const beta = matrix(field(v, 'beta', 'beta'), 'beta', p);
    const g = field(v, 'gamma', 'gamma');
    const gamma = typeof g === 'number' ? nonNegative(g, 'gamma') : array(g, 'gamma', p).map((x, i) => nonNegative(x, `gamma[${i}]`));
    return { kind, alpha, beta, gamma, ports, copyAll };
  }
  const nodes = array(field(v, 'nodeOf', 'nodeOf'), 'nodeOf');
  if (nodes.length < 1) throw new InvalidArgumentError('nodeOf', 'must list the node of at least one rank');
  const nodeOf = nodes.map((x, i) => integer(x, `nodeOf[${i}]`, 0, MAX_NODE));
  const intra = alphaBeta(field(v, 'intra', 'intra'), 'intra');
  const inter = alphaBeta(field(v, 'inter', 'inter'), 'inter');
  const gamma = nonNegative(field(v, 'gamma', 'gamma'), 'gamma');
  return { kind, nodeOf, intra, inter, gamma, ports, copyAll };
}

function readMeta(v: JsonObject): ModelMeta {
  const meta: { unit?: string; description?: string } = {};
  for (const k of ['unit', 'description'] as const) {
    if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
    const x = v[k];
    if (typeof x !== 'string') throw new InvalidArgumentError(k, `must be a string, got ${describe(x)}`);
    meta[k] = x;
  }
  return meta;
}

/** Checks a spec (e.g. one built by hand) and returns a plain, validated copy. */
export function validateModelSpec(spec: CostModelSpec): CostModelSpec {
  return readSpec(spec, false);
}

// ---------------------------------------------------------------------------------------------
// Models from specs and back.

const SPEC_OF = new WeakMap<CostModel, CostModelSpec>();

/** The CostModel a spec describes (validated here). */
export function modelFromSpec(spec: CostModelSpec): CostModel {
  return buildModel(validateModelSpec(spec));
}

/** Freezes a spec and its arrays, so the spec kept for a model can never drift from it. */
function deepFreeze<T>(x: T): T {
  if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

/** The model of a spec readSpec has already validated (and copied). */
function buildModel(s: CostModelSpec): CostModel {
  const opts = { ports: s.ports, copyAll: s.copyAll };
  let model: CostModel;
  if (s.kind === 'linear') model = linearModel({ alpha: s.alpha, beta: s.beta, gamma: s.gamma, ...opts });
  else if (s.kind === 'pairwise') model = pairwiseModel({ alpha: s.alpha, beta: s.beta, gamma: s.gamma, ...opts });
  else model = hierarchicalModel({ nodeOf: s.nodeOf, intra: s.intra, inter: s.inter, gamma: s.gamma, ...opts });
  SPEC_OF.set(model, deepFreeze(s));
  return model;
}

/**
 * The spec of a model: any linear model (its `linear` parameters), or a model of any kind
 * built by modelFromSpec / loadModelJson. Per-pair and hierarchical models built directly by
 * pairwiseModel / hierarchicalModel do not expose their parameters: pass their spec instead.
 */
export function specOfModel(model: CostModel): CostModelSpec {
  const known = SPEC_OF.get(model);
  if (known !== undefined) return known;
  if (model.kind === 'linear' && model.linear !== undefined) {
    const { alpha, beta, gamma } = model.linear;
    return { kind: 'linear', alpha, beta, gamma, ports: model.ports, copyAll: model.copyAll };
  }
  throw new InvalidArgumentError(
    'model',
    `a ${model.kind} model built by ${model.kind}Model() does not expose its parameters; save its spec, or build it with modelFromSpec()`,
  );
}

// ---------------------------------------------------------------------------------------------
// Text.

const num = (x: number): string => JSON.stringify(x);
const row = (r: readonly number[]): string => `[${r.map(num).join(', ')}]`;
const matrixText = (m: readonly (readonly number[])[]): string => `[\n    ${m.map(row).join(',\n    ')}\n  ]`;

/** The JSON document of a model (a spec, or a model specOfModel can read), one matrix row per line. */
export function modelToJson(model: CostModelSpec | CostModel, meta: ModelMeta = {}): string {
  const s = 'comm' in model ? specOfModel(model) : validateModelSpec(model);
  const lines: [string, string][] = [
    ['format', JSON.stringify(MODEL_JSON_FORMAT)],
    ['version', num(MODEL_JSON_VERSION)],
    ['kind', JSON.stringify(s.kind)],
  ];
  if (meta.unit !== undefined) lines.push(['unit', JSON.stringify(meta.unit)]);
  if (meta.description !== undefined) lines.push(['description', JSON.stringify(meta.description)]);
  lines.push(['ports', num(s.ports)], ['copyAll', JSON.stringify(s.copyAll)]);
  if (s.kind === 'linear') {
    lines.push(['alpha', num(s.alpha)], ['beta', num(s.beta)], ['gamma', num(s.gamma)]);
  } else if (s.kind === 'pairwise') {
    lines.push(['alpha', matrixText(s.alpha)], ['beta', matrixText(s.beta)], ['gamma', typeof s.gamma === 'number' ? num(s.gamma) : row(s.gamma)]);
  } else {
    const ab = (x: { alpha: number; beta: number }): string => `{ "alpha": ${num(x.alpha)}, "beta": ${num(x.beta)} }`;
    lines.push(['nodeOf', row(s.nodeOf)], ['intra', ab(s.intra)], ['inter', ab(s.inter)], ['gamma', num(s.gamma)]);
  }
  return `{\n${lines.map(([k, v]) => `  ${JSON.stringify(k)}: ${v}`).join(',\n')}\n}\n`;
}

/** Parses and validates a document; errors name the JSON path of the bad field. */
export function parseModelJson(text: string): { spec: CostModelSpec; meta: ModelMeta } {
  if (typeof text !== 'string') throw new InvalidArgumentError('(document)', 'must be JSON text');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new InvalidArgumentError('(document)', `is not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const spec = readSpec(v, true);
  return { spec, meta: readMeta(v as JsonObject) };
}

/** Parses, validates and builds the model of a document. */
export function loadModelJson(text: string): LoadedModel {
  const { spec, meta } = parseModelJson(text);
  return { spec, model: buildModel(spec), meta };
}
