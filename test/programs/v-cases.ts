/**
 * gatherv/scatterv test cases shared by the simulator tests and the worker-threads program:
 * a case is plain data (structured-cloneable), every rank derives its buffers from it, runs
 * the collective (once, or planned once and started several times with fresh data), and
 * checks its buffers byte for byte — blocks where they belong, sentinel bytes everywhere
 * else untouched.
 */
import { gatherv, gathervInit, scatterv, scattervInit } from '../../src/collectives/index.js';
import type { CollectiveInfo, CollectiveOptions, PersistentCollective, VAlgorithm } from '../../src/collectives/types.js';
import type { Communicator } from '../../src/comm/communicator.js';
import { blockSizes, type DistributionName } from '../../src/workloads/distributions.js';
import { linearModel } from '../../src/model/cost-model.js';
import { int, rng } from '../helpers/random.js';

export const SENTINEL = 0xa5;

export type DisplLayout = 'default' | 'gaps' | 'permuted';

export interface VCase {
  readonly op: 'gatherv' | 'scatterv';
  readonly algorithm: VAlgorithm;
  readonly p: number;
  readonly root: number;
  /** Elements per rank. */
  readonly counts: readonly number[];
  /** undefined: the default (prefix sums of counts). */
  readonly displs: readonly number[] | undefined;
  /** Root buffer size in elements. */
  readonly capacity: number;
  readonly unitBytes: number;
  readonly inPlace: boolean;
  /** ports: k > 1 only for the algorithms that run k-ported (binomial, two-block, linear, adaptive, auto). */
  readonly model: { readonly alpha: number; readonly beta: number; readonly gamma: number; readonly copyAll: boolean; readonly ports?: number };
  /** 0: one call of gatherv/scatterv; n > 0: *Init once, start() n times with fresh data. */
  readonly starts: number;
  /** Bad input: this non-root rank believes its count is `count` (not counts[rank]). */
  readonly lie?: { readonly rank: number; readonly count: number };
}

/** Displacements for `counts` with the chosen layout (gaps of 0..3 elements between blocks). */
export function makeDispls(counts: readonly number[], layout: DisplLayout, rnd: () => number): { displs: number[] | undefined; capacity: number } {
  const p = counts.length;
  const total = counts.reduce((a, b) => a + b, 0);
  if (layout === 'default') return { displs: undefined, capacity: total + int(rnd, 0, 2) };
  const order = Array.from({ length: p }, (_, i) => i);
  if (layout === 'permuted') {
    for (let i = p - 1; i > 0; i--) {
      const j = int(rnd, 0, i);
      [order[i], order[j]] = [order[j], order[i]];
    }
  }
  const displs = new Array<number>(p).fill(0);
  let at = int(rnd, 0, 3);
  for (const i of order) {
    displs[i] = at;
    at += counts[i] + int(rnd, 0, 3);
  }
  return { displs, capacity: at };
}

export interface CaseChoice {
  readonly op: 'gatherv' | 'scatterv';
  readonly algorithm: VAlgorithm;
  readonly p: number;
  readonly seed: number;
  readonly dist: DistributionName;
  readonly unitBytes: number;
  readonly layout: DisplLayout;
  readonly zeros: boolean;
  readonly inPlace: boolean;
  readonly starts: number;
}

/**
 * A case from a few random choices: counts from the distribution (b ∈ 1..12), some blocks
 * emptied when `zeros`, reduced to two values for 'two-block'.
 */
export function makeCase(ch: CaseChoice): VCase {
  const rnd = rng(ch.seed); // seeded: a case is reproducible from its seed
  const p = ch.p;
  const root = int(rnd, 0, p - 1);
  let counts = blockSizes(ch.dist, { p, b: int(rnd, 1, 12), rho: int(rnd, 1, 6), seed: int(rnd, 1, 1000) });
  if (ch.zeros) counts = counts.map((m) => (rnd() < 0.3 ? 0 : m));
  if (ch.algorithm === 'two-block') {
    const mean = counts.reduce((a, b) => a + b, 0) / p;
    const small = int(rnd, 0, 3);
    const large = small + int(rnd, 1, 20);
    counts = counts.map((m) => (m > mean ? large : small));
  }
  const { displs, capacity } = makeDispls(counts, ch.layout, rnd);
  return {
    op: ch.op,
    algorithm: ch.algorithm,
    p,
    root,
    counts,
    displs,
    capacity,
    unitBytes: ch.unitBytes,
    inPlace: ch.inPlace,
    model: {
      alpha: int(rnd, 0, 200),
      beta: int(rnd, 0, 3),
      gamma: int(rnd, 0, 2),
      // degrading builds its tree under the ordered copy convention only (a drawn copyAll is dropped, the stream kept)
      copyAll: rnd() < 0.2 && !ORDERED_COPY_ONLY.has(ch.algorithm),
      ports: K_PORTED.has(ch.algorithm) && rnd() < 0.3 ? int(rnd, 2, 3) : 1,
    },
    starts: ch.starts,
  };
}

const K_PORTED = new Set(['binomial', 'two-block', 'linear', 'adaptive', 'auto']);
const ORDERED_COPY_ONLY = new Set(['degrading']);

/** Byte j of rank r's block in execution round k. */
export function blockByte(r: number, j: number, k: number): number {
  return (r * 29 + j * 7 + k * 101 + 1) & 0xff;
}

function block(r: number, n: number, k: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let j = 0; j < n; j++) b[j] = blockByte(r, j, k);
  return b;
}

function displsOf(c: VCase): number[] {
  if (c.displs !== undefined) return [...c.displs];
  const d: number[] = [];
  let at = 0;
  for (const m of c.counts) {
    d.push(at);
    at += m;
  }
  return d;
}

/** The root's full buffer in round k: sentinel, with every block at its displacement. */
export function rootBuffer(c: VCase, k: number, skip = -1): Uint8Array {
  const u = c.unitBytes;
  const buf = new Uint8Array(c.capacity * u).fill(SENTINEL);
  const d = displsOf(c);
  for (let i = 0; i < c.p; i++) if (i !== skip) buf.set(block(i, c.counts[i] * u, k), d[i] * u);
  return buf;
}

function firstDiff(got: Uint8Array, want: Uint8Array, what: string): string | undefined {
  if (got.length !== want.length) return `${what}: length ${got.length}, expected ${want.length}`;
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== want[i]) return `${what}: byte ${i} is ${got[i]}, expected ${want[i]}`;
  }
  return undefined;
}

export interface RankOutcome {
  readonly info: CollectiveInfo;
  /** undefined when every buffer of this rank was right after every execution. */
  readonly mismatch: string | undefined;
}

export function caseOptions(c: VCase): CollectiveOptions {
  return { algorithm: c.algorithm, model: linearModel(c.model) };
}

const SLACK = 3;

/** One rank's part of a case: its buffers, how to fill and check them, and the two ways to run it. */
export interface CaseRunner {
  /** Fills the buffers for execution round k. */
  readonly prepare: (k: number) => void;
  /** undefined when this rank's buffers are right after round k, else the first difference. */
  readonly check: (k: number) => string | undefined;
  /** One call of the collective. */
  readonly once: () => Promise<CollectiveInfo>;
  /** Plans it (the *Init form). */
  readonly init: () => Promise<PersistentCollective>;
}

/** This rank's buffers and calls for case `c` (fresh buffers on every call). */
export function caseRunner(comm: Communicator, c: VCase): CaseRunner {
  const me = comm.rank;
  const u = c.unitBytes;
  const isRoot = me === c.root;
  const options = caseOptions(c);
  const mine = (c.lie !== undefined && c.lie.rank === me ? c.lie.count : c.counts[me]) * u;
  if (c.op === 'gatherv') {
    const send = new Uint8Array(isRoot && c.inPlace ? 0 : mine);
    const recv = isRoot ? new Uint8Array(c.capacity * u) : undefined;
    const args = isRoot
      ? { root: c.root, send, recv, counts: c.counts, displs: c.displs, unitBytes: u, inPlace: c.inPlace }
      : { root: c.root, send, unitBytes: u };
    const prepare = (k: number): void => {
      if (!(isRoot && c.inPlace)) send.set(block(me, mine, k));
      if (recv) {
        recv.fill(SENTINEL);
        if (c.inPlace) recv.set(block(me, mine, k), displsOf(c)[me] * u);
      }
    };
    const check = (k: number): string | undefined => {
      const s = isRoot && c.inPlace ? undefined : firstDiff(send, block(me, mine, k), `rank ${me} send buffer (round ${k})`);
      return s ?? (recv ? firstDiff(recv, rootBuffer(c, k), `root ${me} recv (round ${k})`) : undefined);
    };
    return { prepare, check, once: () => gatherv(comm, args, options), init: () => gathervInit(comm, args, options) };
  }
  const send = isRoot ? new Uint8Array(c.capacity * u) : undefined;
  const recv = new Uint8Array(isRoot && c.inPlace ? 0 : mine + SLACK);
  const args = isRoot
    ? { root: c.root, recv, count: c.inPlace ? undefined : c.counts[me], send, counts: c.counts, displs: c.displs, unitBytes: u, inPlace: c.inPlace }
    : { root: c.root, recv, count: mine / u, unitBytes: u };
  const prepare = (k: number): void => {
    recv.fill(SENTINEL);
    if (send) send.set(rootBuffer(c, k));
  };
  const check = (k: number): string | undefined => {
    let want = new Uint8Array(recv.length).fill(SENTINEL);
    if (!(isRoot && c.inPlace)) want.set(block(me, mine, k));
    else want = new Uint8Array(0);
    const r = firstDiff(recv, want, `rank ${me} recv (round ${k})`);
    return r ?? (send ? firstDiff(send, rootBuffer(c, k), `root ${me} send buffer (round ${k}, changed)`) : undefined);
  };
  return { prepare, check, once: () => scatterv(comm, args, options), init: () => scattervInit(comm, args, options) };
}

/** Runs the case on this rank and checks its buffers. */
export async function runCaseRank(comm: Communicator, c: VCase): Promise<RankOutcome> {
  const r = caseRunner(comm, c);
  return execute(c.starts, r.prepare, r.check, r.once, r.init);
}

/**
 * starts = 0: prepare round 0, run `once`, check. Otherwise plan with `init` and start the plan
 * `starts` times, each round prepared before and checked after (the first mismatch ends it).
 */
async function execute(
  starts: number,
  prepare: (k: number) => void,
  check: (k: number) => string | undefined,
  once: () => Promise<CollectiveInfo>,
  init: () => Promise<PersistentCollective>,
): Promise<RankOutcome> {
  if (starts === 0) {
    prepare(0);
    const info = await once();
    return { info, mismatch: check(0) };
  }
  const plan = await init();
  for (let k = 0; k < starts; k++) {
    prepare(k);
    await plan.start();
    const bad = check(k);
    if (bad !== undefined) return { info: plan.info, mismatch: bad };
  }
  return { info: plan.info, mismatch: undefined };
}
