/**
 * Hierarchical gather / gatherv / scatter / scatterv cases shared by test/hierarchical*.test.ts
 * (simulator), their worker-threads runs and the MPI suite (this module's default export is the
 * threads and MPI rank program): placements of ranks on nodes, deterministic block data, the
 * reference buffer of the root (sentinels outside the blocks) and one rank's run of a case,
 * checked on the rank that can see the result (the root of a gather, every rank of a scatter).
 */
import type { Communicator } from '../../src/comm/communicator.js';
import {
  hierarchicalGather,
  hierarchicalGatherv,
  hierarchicalGathervInit,
  hierarchicalScatter,
  hierarchicalScatterv,
  hierarchicalScattervInit,
  type HierarchicalInfo,
  type HierarchicalOptions,
  type HierarchicalTreeName,
  type HierarchicalVariantName,
} from '../../src/collectives/hierarchical/index.js';
import { firstMismatch } from '../../src/run/data.js';
import { int } from '../helpers/random.js';
import { blockOf, expectedRecv, SENTINEL } from '../helpers/blocks.js';

export { blockOf } from '../helpers/blocks.js';

export type HierOp = 'gather' | 'gatherv' | 'scatter' | 'scatterv';

export interface HierCase {
  readonly op: HierOp;
  readonly variant: HierarchicalVariantName;
  /** The tree of both levels (default: the library's, 'binomial'). */
  readonly tree?: HierarchicalTreeName;
  readonly root: number;
  /** Elements per rank (gather: all equal). */
  readonly counts: readonly number[];
  /** gatherv: element displacements (undefined: prefix sums, and displs not passed). */
  readonly displs?: readonly number[];
  readonly unitBytes: number;
  /** Bytes of the root's full buffer (gather: its recv; scatter: its send). */
  readonly recvBytes: number;
  readonly seed: number;
  /** gatherv, scatterv: one persistent plan (hierarchicalGathervInit / hierarchicalScattervInit) started twice instead of two calls. */
  readonly persistent?: boolean;
}

export type Placement = 'ordered' | 'ordered-unequal' | 'permuted' | 'permuted-unequal';

/**
 * nodeOf for p ranks: 'ordered' = consecutive blocks of n ranks (the last may be shorter),
 * 'ordered-unequal' = consecutive blocks of random sizes, 'permuted' = an ordered placement
 * shuffled, 'permuted-unequal' = every rank on a random one of `nodes` nodes. Node ids are
 * arbitrary numbers (not 0 … N−1) to show they need not be dense.
 */
export function placementOf(kind: Placement, p: number, n: number, rnd: () => number): number[] {
  const id = (k: number): number => 100 + 7 * k;
  const out: number[] = [];
  if (kind === 'ordered' || kind === 'permuted') {
    for (let r = 0; r < p; r++) out.push(id(Math.floor(r / n)));
  } else if (kind === 'ordered-unequal') {
    let node = 0;
    while (out.length < p) {
      const size = int(rnd, 1, 2 * n);
      for (let j = 0; j < size && out.length < p; j++) out.push(id(node));
      node++;
    }
  } else {
    const nodes = Math.max(1, Math.ceil(p / n));
    for (let r = 0; r < p; r++) out.push(id(int(rnd, 0, nodes - 1)));
  }
  if (kind === 'permuted') {
    for (let i = p - 1; i > 0; i--) {
      const j = int(rnd, 0, i);
      [out[i], out[j]] = [out[j], out[i]];
    }
  }
  return out;
}


/** A gatherv case: counts (zeros included) and displacements (prefix sums, gaps, or permuted with gaps). */
export function gathervCase(
  p: number,
  variant: HierarchicalVariantName,
  rnd: () => number,
  seed: number,
  opts: { maxCount?: number; unitBytes?: number; displs?: 'default' | 'gaps' | 'permuted' } = {},
): HierCase {
  const max = opts.maxCount ?? 12;
  const counts = Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : int(rnd, 1, max)));
  const unitBytes = opts.unitBytes ?? int(rnd, 1, 3);
  const kind = opts.displs ?? (['default', 'gaps', 'permuted'] as const)[int(rnd, 0, 2)];
  const root = int(rnd, 0, p - 1);
  if (kind === 'default') {
    const total = counts.reduce((a, x) => a + x, 0);
    return { op: 'gatherv', variant, root, counts, unitBytes, recvBytes: total * unitBytes, seed };
  }
  const order = Array.from({ length: p }, (_, i) => i);
  if (kind === 'permuted') {
    for (let i = p - 1; i > 0; i--) {
      const j = int(rnd, 0, i);
      [order[i], order[j]] = [order[j], order[i]];
    }
  }
  const displs = new Array<number>(p).fill(0);
  let at = int(rnd, 0, 3);
  for (const r of order) {
    displs[r] = at;
    at += counts[r] + int(rnd, 0, 2);
  }
  return { op: 'gatherv', variant, root, counts, displs, unitBytes, recvBytes: (at + int(rnd, 0, 2)) * unitBytes, seed };
}

export function gatherCase(p: number, variant: HierarchicalVariantName, root: number, m: number, seed: number): HierCase {
  return { op: 'gather', variant, root, counts: new Array<number>(p).fill(m), unitBytes: 1, recvBytes: p * m, seed };
}

/** The case as the scatter (or scatterv) of the same blocks, or on another tree. */
export function asOp(c: HierCase, op: HierOp, tree?: HierarchicalTreeName): HierCase {
  return { ...c, op, ...(tree !== undefined ? { tree } : {}) };
}

export function withTree(c: HierCase, tree: HierarchicalTreeName): HierCase {
  return { ...c, tree };
}

/**
 * One rank's part of a case; resolves with the root's recv (gathers; undefined elsewhere), the
 * info and this rank's verdict: the first wrong byte it can see (gather: the root's recv;
 * scatter: its own block, and at the root its send unchanged), or undefined.
 */
export async function runCaseRank(
  comm: Communicator,
  c: HierCase,
  extra: Omit<HierarchicalOptions, 'variant' | 'tree'> = {},
): Promise<{ recv: Uint8Array | undefined; info: HierarchicalInfo; bad: string | undefined }> {
  const r = comm.rank;
  const isRoot = r === c.root;
  const options: HierarchicalOptions = { ...extra, variant: c.variant, ...(c.tree !== undefined ? { tree: c.tree } : {}) };
  if (c.op === 'scatter' || c.op === 'scatterv') {
    const send = isRoot ? expectedRecv(c) : undefined;
    const kept = send?.slice();
    const recv = new Uint8Array(c.counts[r] * c.unitBytes).fill(SENTINEL);
    const info =
      c.op === 'scatter'
        ? await hierarchicalScatter(comm, { send, recv, root: c.root }, options)
        : await hierarchicalScatterv(
            comm,
            { send, recv, root: c.root, counts: isRoot ? c.counts : undefined, displs: isRoot ? c.displs : undefined, unitBytes: c.unitBytes },
            options,
          );
    const bad =
      firstMismatch(recv, blockOf(r, c.counts[r] * c.unitBytes, c.seed), `rank ${r} recv`) ??
      (send !== undefined && kept !== undefined ? firstMismatch(send, kept, `root ${r} send (changed)`) : undefined);
    return { recv: undefined, info, bad };
  }
  const send = blockOf(r, c.counts[r] * c.unitBytes, c.seed);
  const recv = isRoot ? new Uint8Array(c.recvBytes).fill(SENTINEL) : undefined;
  const info =
    c.op === 'gather'
      ? await hierarchicalGather(comm, { send, recv, root: c.root }, options)
      : await hierarchicalGatherv(
          comm,
          {
            send,
            recv,
            root: c.root,
            counts: isRoot ? c.counts : undefined,
            displs: isRoot ? c.displs : undefined,
            unitBytes: c.unitBytes,
          },
          options,
        );
  return { recv, info, bad: isRoot ? mismatch(c, recv) : undefined };
}

/** The first differing byte of the root's recv against the reference, or undefined. */
export function mismatch(c: HierCase, recv: Uint8Array | undefined): string | undefined {
  if (recv === undefined) return 'no recv at the root';
  return firstMismatch(recv, expectedRecv(c), 'recv');
}

/**
 * A persistent gatherv or scatterv case on this rank: one plan, `starts` starts, the buffers
 * poisoned before each; what this rank sees wrong after each start.
 */
export async function runPersistentRank(comm: Communicator, c: HierCase, starts: number, extra: Omit<HierarchicalOptions, 'variant' | 'tree'> = {}): Promise<(string | undefined)[]> {
  const r = comm.rank;
  const isRoot = r === c.root;
  const options: HierarchicalOptions = { ...extra, variant: c.variant, ...(c.tree !== undefined ? { tree: c.tree } : {}) };
  const out: (string | undefined)[] = [];
  if (c.op === 'scatterv') {
    const send = isRoot ? expectedRecv(c) : undefined;
    const kept = send?.slice();
    const recv = new Uint8Array(c.counts[r] * c.unitBytes);
    const plan = await hierarchicalScattervInit(
      comm,
      { send, recv, root: c.root, counts: isRoot ? c.counts : undefined, displs: isRoot ? c.displs : undefined, unitBytes: c.unitBytes },
      options,
    );
    for (let k = 0; k < starts; k++) {
      recv.fill(SENTINEL);
      await plan.start();
      out.push(
        firstMismatch(recv, blockOf(r, c.counts[r] * c.unitBytes, c.seed), `start ${k}: rank ${r} recv`) ??
          (send !== undefined && kept !== undefined ? firstMismatch(send, kept, `start ${k}: root ${r} send (changed)`) : undefined),
      );
    }
    return out;
  }
  if (c.op !== 'gatherv') throw new Error(`persistent ${c.op}: only gatherv and scatterv have a persistent form`);
  const send = blockOf(r, c.counts[r] * c.unitBytes, c.seed);
  const recv = isRoot ? new Uint8Array(c.recvBytes) : undefined;
  const plan = await hierarchicalGathervInit(
    comm,
    { send, recv, root: c.root, counts: isRoot ? c.counts : undefined, displs: isRoot ? c.displs : undefined, unitBytes: c.unitBytes },
    options,
  );
  for (let k = 0; k < starts; k++) {
    recv?.fill(SENTINEL);
    await plan.start();
    const bad = isRoot ? mismatch(c, recv) : undefined;
    out.push(bad === undefined ? undefined : `start ${k}: ${bad}`);
  }
  return out;
}

/** Threads and MPI rank program: runs every case twice (the second call uses the cache; persistent: one plan started twice); each rank reports what it can see. */
export default async function hierarchicalProgram(comm: Communicator, cases: readonly HierCase[]): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = [];
  for (const c of cases) {
    if (c.persistent === true) {
      for (const bad of await runPersistentRank(comm, c, 2)) out.push(bad === undefined ? undefined : `persistent ${c.op} ${c.variant} ${c.tree ?? 'binomial'} root ${c.root}: ${bad}`);
      continue;
    }
    for (let k = 0; k < 2; k++) {
      const { bad } = await runCaseRank(comm, c);
      out.push(bad === undefined ? undefined : `${c.op} ${c.variant} ${c.tree ?? 'binomial'} root ${c.root}: ${bad}`);
    }
  }
  return out;
}
