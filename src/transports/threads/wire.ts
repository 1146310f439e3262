/**
 * What crosses the thread boundary of a threads run besides the channels: a rank's error, sent
 * as plain data and rebuilt on the main thread with its class (errors.ts, or a built-in Error
 * class), message, stack and own fields (code, field, detail, rank, bytes, capacity, ranks, …),
 * and the check that the run's `args` can be cloned to the workers at all.
 */

import * as vcollErrors from '../../errors.js';
import { InvalidArgumentError } from '../../errors.js';

/** An error as plain, cloneable data. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  /** Its own enumerable fields whose values clone (e.g. code, field, rank). */
  readonly fields: Record<string, unknown>;
  readonly cause?: WireError | { readonly value: unknown };
}

/** How deep a chain of causes is carried. */
const MAX_CAUSES = 4;

const BUILT_IN: Record<string, ErrorConstructor> = {
  Error,
  RangeError,
  TypeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

function cloneable(v: unknown): boolean {
  try {
    structuredClone(v);
    return true;
  } catch {
    return false;
  }
}

/** `e` as plain data (anything thrown: a non-Error becomes an Error of its text). */
export function toWire(e: unknown, depth = 0): WireError {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e), stack: undefined, fields: {} };
  const fields: Record<string, unknown> = {};
  for (const k of Object.keys(e)) {
    if (k === 'name' || k === 'message' || k === 'stack' || k === 'cause') continue;
    const v = (e as unknown as Record<string, unknown>)[k];
    if (cloneable(v)) fields[k] = v;
  }
  const out: { -readonly [K in keyof WireError]: WireError[K] } = { name: e.name, message: e.message, stack: e.stack, fields };
  if (e.cause !== undefined && depth < MAX_CAUSES) {
    out.cause = e.cause instanceof Error ? toWire(e.cause, depth + 1) : cloneable(e.cause) ? { value: e.cause } : { value: String(e.cause) };
  }
  return out;
}

/** The error class named `name`: vcoll's (errors.ts), a built-in one, else Error. */
function classOf(name: string): ErrorConstructor {
  const v = (vcollErrors as Record<string, unknown>)[name];
  if (typeof v === 'function' && v.prototype instanceof Error) return v as ErrorConstructor;
  return BUILT_IN[name] ?? Error;
}

/** Rebuilds an error sent by `toWire`: an instance of its class with its fields. */
export function fromWire(w: WireError): Error {
  const e = Object.create(classOf(w.name).prototype as object) as Error;
  const define = (k: string, value: unknown): void => {
    Object.defineProperty(e, k, { value, writable: true, configurable: true, enumerable: k !== 'message' && k !== 'stack' && k !== 'cause' });
  };
  define('message', w.message);
  if (w.stack !== undefined) define('stack', w.stack);
  for (const [k, v] of Object.entries(w.fields)) define(k, v);
  if (Object.prototype.hasOwnProperty.call(w.fields, 'name') === false && e.name !== w.name) define('name', w.name);
  if (w.cause !== undefined) define('cause', 'value' in w.cause ? w.cause.value : fromWire(w.cause));
  return e;
}

/** Where in `v` (reached as `path`) something that does not clone sits, and what it is. */
function uncloneable(v: unknown, path: string, seen: Set<object>): { path: string; what: string } | undefined {
  if (typeof v === 'function') return { path, what: `a function${v.name === '' ? '' : ` (${v.name})`}` };
  if (typeof v === 'symbol') return { path, what: `a symbol (${String(v)})` };
  if (v === null || typeof v !== 'object' || seen.has(v)) return undefined;
  seen.add(v);
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof SharedArrayBuffer || v instanceof Date || v instanceof RegExp) return undefined;
  if (v instanceof Map) {
    let i = 0;
    for (const [k, x] of v) {
      const hit = uncloneable(k, `${path}.<key ${i}>`, seen) ?? uncloneable(x, `${path}.get(${typeof k === 'string' ? JSON.stringify(k) : `<key ${i}>`})`, seen);
      if (hit !== undefined) return hit;
      i++;
    }
    return undefined;
  }
  if (v instanceof Set) {
    let i = 0;
    for (const x of v) {
      const hit = uncloneable(x, `${path}.<element ${i++}>`, seen);
      if (hit !== undefined) return hit;
    }
    return undefined;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = uncloneable(v[i] as unknown, `${path}[${i}]`, seen);
      if (hit !== undefined) return hit;
    }
    return undefined;
  }
  for (const k of Object.keys(v)) {
    const hit = uncloneable((v as Record<string, unknown>)[k], /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, seen);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/**
 * Throws an InvalidArgumentError('args', …) naming what in `args` cannot be structured-cloned
 * to the workers (a function, a symbol, a class instance holding one, …).
 */
export function checkArgsCloneable(args: unknown): void {
  try {
    structuredClone(args);
  } catch (e) {
    const hit = uncloneable(args, 'args', new Set());
    const why = e instanceof Error ? e.message : String(e);
    const what = hit === undefined ? `cannot be cloned to the worker threads (${why})` : `${hit.path} is ${hit.what}, which cannot be cloned to the worker threads`;
    throw new InvalidArgumentError('args', `${what}; pass plain data (structured-cloneable values)`);
  }
}
