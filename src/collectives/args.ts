/**
 * Argument validation of gatherv/scatterv, done once at the public boundary: turns the
 * caller's arguments into the normalised plan inputs of collectives/variant.ts, or throws
 * an InvalidArgumentError naming the field and this rank.
 *
 * What every rank can check on its own: the root (same value everywhere, so a bad root
 * fails on every rank), unitBytes, its buffers and count, the options. What only the root
 * can check: counts, displacements (in range, non-overlapping, inside its buffer) and its
 * own block against counts[root]. A non-root count that disagrees with the root's entry is
 * caught later by the algorithms (the rank that sees the mismatch throws).
 */
import type { Communicator } from '../comm/communicator.js';
import { InvalidArgumentError } from '../errors.js';
import { requireModelFits, type CostModel } from '../model/cost-model.js';
import { DEFAULT_MODEL } from './defaults.js';
import { type AdaptiveVariantOptions, type AutoOptions, type CollectiveOptions, type GathervArgs, type ScattervArgs, type VAlgorithm } from './types.js';
import { V_ALGORITHMS } from './v-variants.js';
import type { GathervPlanInput, ScattervPlanInput } from './variant.js';

/** Largest count, displacement or total (elements): schedules travel as Int32. */
export const MAX_ELEMENTS = 2 ** 31 - 1;

interface CommonInput {
  readonly algorithm: VAlgorithm;
  readonly model: CostModel;
  readonly adaptive: Required<AdaptiveVariantOptions>;
  readonly auto: Required<AutoOptions>;
  readonly unitBytes: number;
  readonly root: number;
  readonly me: number;
  readonly isRoot: boolean;
  readonly inPlace: boolean;
}

/** What gatherv and scatterv arguments have in common. */
interface CommonArgs {
  readonly root: number;
  readonly unitBytes?: number;
  readonly inPlace?: boolean;
}

function fail(rank: number, field: string, message: string): never {
  throw new InvalidArgumentError(field, message, { rank });
}

function isBytes(v: unknown): v is Uint8Array {
  return v instanceof Uint8Array;
}

function checkComm(comm: Communicator): void {
  if (comm === null || typeof comm !== 'object') throw new InvalidArgumentError('comm', 'must be a Communicator');
  const { rank, size } = comm;
  if (!Number.isInteger(size) || size < 1 || !Number.isInteger(rank) || rank < 0 || rank >= size) {
    throw new InvalidArgumentError('comm', `must have an integer size >= 1 and a rank in [0, size), got rank ${String(rank)} of ${String(size)}`);
  }
}

function optionalBoolean(rank: number, field: string, v: unknown, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') fail(rank, field, `must be a boolean, got ${String(v)}`);
  return v;
}

/**
 * The checks every rank makes on its own, in this order: comm, args, root, unitBytes, options,
 * inPlace (only the root may `verb` in place).
 */
function common(comm: Communicator, args: CommonArgs, options: CollectiveOptions | undefined, verb: 'gather' | 'scatter'): CommonInput {
  checkComm(comm);
  const me = comm.rank;
  const p = comm.size;
  if (args === null || typeof args !== 'object') fail(me, 'args', 'must be an object');
  const rootArg: unknown = args.root;
  if (typeof rootArg !== 'number' || !Number.isInteger(rootArg) || rootArg < 0 || rootArg >= p) {
    fail(me, 'root', `must be an integer in [0, ${p - 1}], got ${String(rootArg)}`);
  }
  const unitBytes: unknown = args.unitBytes ?? 1;
  if (typeof unitBytes !== 'number' || !Number.isInteger(unitBytes) || unitBytes < 1) {
    fail(me, 'unitBytes', `must be an integer >= 1, got ${String(unitBytes)}`);
  }
  if (options !== undefined && (options === null || typeof options !== 'object')) fail(me, 'options', 'must be an object');
  const algorithm = options?.algorithm ?? 'auto';
  if (!V_ALGORITHMS.includes(algorithm)) fail(me, 'algorithm', `must be one of ${V_ALGORITHMS.join(', ')}, got ${String(algorithm)}`);
  const model = options?.model ?? DEFAULT_MODEL;
  if (model === null || typeof model !== 'object' || typeof model.comm !== 'function' || typeof model.copy !== 'function') {
    fail(me, 'model', 'must be a CostModel (see linearModel, pairwiseModel, hierarchicalModel)');
  }
  try {
    requireModelFits(model, p);
  } catch (e) {
    if (e instanceof InvalidArgumentError) fail(me, e.field, e.detail);
    throw e;
  }
  const ad = options?.adaptive;
  if (ad !== undefined && (ad === null || typeof ad !== 'object')) fail(me, 'adaptive', 'must be an object');
  const adaptive = {
    lemma4: optionalBoolean(me, 'adaptive.lemma4', ad?.lemma4, false),
    overlap: optionalBoolean(me, 'adaptive.overlap', ad?.overlap, true),
    rule: ad?.rule === undefined || ad.rule === 'exact' || ad.rule === 'lemma1' ? (ad?.rule ?? 'exact') : fail(me, 'adaptive.rule', `must be 'exact' or 'lemma1', got ${String(ad.rule)}`),
  };
  const au = options?.auto;
  if (au !== undefined && (au === null || typeof au !== 'object')) fail(me, 'auto', 'must be an object');
  const roundLatency: unknown = au?.roundLatency ?? 0;
  if (typeof roundLatency !== 'number' || !Number.isFinite(roundLatency) || roundLatency < 0) {
    fail(me, 'auto.roundLatency', `must be a finite number >= 0, got ${String(roundLatency)}`);
  }
  const isRoot = me === rootArg;
  const inPlace = optionalBoolean(me, 'inPlace', args.inPlace, false);
  if (inPlace && !isRoot) fail(me, 'inPlace', `only the root may ${verb} in place`);
  return { algorithm, model, adaptive, auto: { roundLatency }, unitBytes, root: rootArg, me, isRoot, inPlace };
}

/** An integer in [0, MAX_ELEMENTS] (a count or a displacement), or fail naming `field`. */
function elements(me: number, field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_ELEMENTS) {
    fail(me, field, `must be an integer in [0, ${MAX_ELEMENTS}], got ${typeof v === 'number' ? String(v) : `${typeof v === 'string' ? `"${v}"` : String(v)} (${v === null ? 'null' : typeof v})`}`);
  }
  return v;
}

/** An array-like argument with one entry per rank, or fail naming `field` (`missing`: when it is no array). */
function perRank(me: number, p: number, field: string, v: unknown, missing: string): ArrayLike<unknown> {
  if (v === null || typeof v !== 'object' || typeof (v as ArrayLike<unknown>).length !== 'number') fail(me, field, missing);
  const a = v as ArrayLike<unknown>;
  if (a.length !== p) fail(me, field, `must have ${p} entries (one per rank), got ${a.length}`);
  return a;
}

/**
 * Per-rank entries of the block layouts built (blockLayout and allgather/shared-layout.ts): a
 * work count for tests — O(P) for a run of P simulated ranks whose layouts are shared, P² when
 * every rank copies its own.
 */
export const LAYOUT_ENTRIES_BUILT = { count: 0 };

/**
 * Counts and displacements checked against a buffer of `bufBytes` bytes (`bufField` names
 * it): counts[i] and displs[i] integers in [0, MAX_ELEMENTS], every non-empty block inside the
 * buffer, no two non-empty blocks overlapping; displs default to the prefix sums. Shared by
 * gatherv/scatterv (the root's arguments) and allgatherv (every rank's); `missingCounts` is
 * the message when counts is not an array.
 */
export function blockLayout(
  me: number,
  p: number,
  countsArg: unknown,
  displsArg: unknown,
  unitBytes: number,
  bufBytes: number,
  bufField: string,
  missingCounts = 'the root must pass counts (one per rank)',
): { counts: number[]; displs: number[] } {
  const c = perRank(me, p, 'counts', countsArg, missingCounts);
  LAYOUT_ENTRIES_BUILT.count += p;
  const counts = new Array<number>(p);
  let total = 0;
  for (let i = 0; i < p; i++) {
    counts[i] = elements(me, `counts[${i}]`, c[i]);
    total += counts[i];
  }
  if (total > MAX_ELEMENTS) fail(me, 'counts', `total ${total} exceeds ${MAX_ELEMENTS} elements`);
  if (total * unitBytes > bufBytes) {
    fail(me, bufField, `holds ${bufBytes} bytes, the ${total} elements of ${unitBytes} bytes need ${total * unitBytes}`);
  }
  const capacity = Math.floor(bufBytes / unitBytes);
  let displs: number[];
  if (displsArg === undefined) {
    displs = new Array<number>(p);
    let at = 0;
    for (let i = 0; i < p; i++) {
      displs[i] = at;
      at += counts[i];
    }
    return { counts, displs };
  }
  const d = perRank(me, p, 'displs', displsArg, 'must be an array (one displacement per rank) or omitted');
  displs = new Array<number>(p);
  for (let i = 0; i < p; i++) {
    const v = elements(me, `displs[${i}]`, d[i]);
    displs[i] = v;
    if (counts[i] > 0 && v + counts[i] > capacity) {
      fail(me, `displs[${i}]`, `block ${i} (elements ${v}..${v + counts[i] - 1}) lies outside ${bufField} (${capacity} elements)`);
    }
  }
  const order: number[] = [];
  for (let i = 0; i < p; i++) if (counts[i] > 0) order.push(i);
  order.sort((a, b) => displs[a] - displs[b] || a - b);
  for (let j = 1; j < order.length; j++) {
    const a = order[j - 1];
    const b = order[j];
    if (displs[b] < displs[a] + counts[a]) {
      fail(me, `displs[${Math.max(a, b)}]`, `blocks ${Math.min(a, b)} and ${Math.max(a, b)} overlap`);
    }
  }
  return { counts, displs };
}

/** Validates gatherv arguments on one rank; returns the plan input and the requested algorithm. */
export function normalizeGatherv(
  comm: Communicator,
  args: GathervArgs,
  options?: CollectiveOptions,
): { readonly input: GathervPlanInput; readonly algorithm: VAlgorithm; readonly auto: Required<AutoOptions> } {
  const c = common(comm, args, options, 'gather');
  const { unitBytes: u, root, me, isRoot, inPlace } = c;
  let send: Uint8Array;
  if (isRoot && inPlace) {
    send = new Uint8Array(0);
  } else {
    if (!isBytes(args.send)) fail(me, 'send', 'must be a Uint8Array');
    if (args.send.length % u !== 0) fail(me, 'send', `length ${args.send.length} is not a multiple of unitBytes ${u}`);
    send = args.send;
  }
  const count = send.length / u;
  if (count > MAX_ELEMENTS) fail(me, 'send', `${count} elements exceed ${MAX_ELEMENTS}`);
  let recv: Uint8Array | undefined;
  let counts: number[] | undefined;
  let displs: number[] | undefined;
  if (isRoot) {
    if (!isBytes(args.recv)) fail(me, 'recv', 'the root must pass a Uint8Array receive buffer');
    recv = args.recv;
    ({ counts, displs } = blockLayout(me, comm.size, args.counts, args.displs, u, recv.length, 'recv'));
    if (!inPlace && count !== counts[root]) {
      fail(me, 'send', `the root's block has ${count} elements, counts[${root}] is ${counts[root]}`);
    }
  }
  // One literal of fixed shape (no spread): plan inputs are made on every call.
  const input: GathervPlanInput = {
    comm,
    root,
    unitBytes: u,
    counts,
    displs,
    inPlace,
    model: c.model,
    adaptive: c.adaptive,
    count: isRoot && inPlace ? (counts as number[])[root] : count,
    send,
    recv,
    // present, so that `{ ...input, once: true }` keeps this shape (V8 gives a spread followed by a new property a hidden class of its own)
    once: false,
  };
  return { input, algorithm: c.algorithm, auto: c.auto };
}

/** Validates scatterv arguments on one rank; returns the plan input and the requested algorithm. */
export function normalizeScatterv(
  comm: Communicator,
  args: ScattervArgs,
  options?: CollectiveOptions,
): { readonly input: ScattervPlanInput; readonly algorithm: VAlgorithm; readonly auto: Required<AutoOptions> } {
  const c = common(comm, args, options, 'scatter');
  const { unitBytes: u, root, me, isRoot, inPlace } = c;
  let send: Uint8Array | undefined;
  let counts: number[] | undefined;
  let displs: number[] | undefined;
  if (isRoot) {
    if (!isBytes(args.send)) fail(me, 'send', 'the root must pass a Uint8Array send buffer');
    send = args.send;
    ({ counts, displs } = blockLayout(me, comm.size, args.counts, args.displs, u, send.length, 'send'));
  }
  let recv: Uint8Array;
  let count: number;
  if (isRoot && inPlace) {
    recv = new Uint8Array(0);
    count = (counts as number[])[root];
    if (args.count !== undefined && args.count !== count) {
      fail(me, 'count', `the root's count ${String(args.count)} differs from counts[${root}] = ${count}`);
    }
  } else {
    if (!isBytes(args.recv)) fail(me, 'recv', 'must be a Uint8Array');
    if (args.count === undefined) {
      if (args.recv.length % u !== 0) fail(me, 'recv', `length ${args.recv.length} is not a multiple of unitBytes ${u} (pass count)`);
      count = args.recv.length / u;
    } else {
      count = elements(me, 'count', args.count);
      if (count * u > args.recv.length) fail(me, 'recv', `holds ${args.recv.length} bytes, count ${count} needs ${count * u}`);
    }
    if (count > MAX_ELEMENTS) fail(me, 'recv', `${count} elements exceed ${MAX_ELEMENTS}`);
    recv = args.recv.subarray(0, count * u);
    if (isRoot && count !== (counts as number[])[root]) {
      fail(me, 'count', `the root receives ${count} elements, counts[${root}] is ${(counts as number[])[root]}`);
    }
  }
  const input: ScattervPlanInput = { comm, root, unitBytes: u, counts, displs, inPlace, model: c.model, adaptive: c.adaptive, count, recv, send, once: false };
  return { input, algorithm: c.algorithm, auto: c.auto };
}
