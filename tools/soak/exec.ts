/**
 * One soak case on one rank, on any transport: builds the communicator (world, split or
 * intercommunicator), derives every op's counts, displacements and data from the case, issues
 * the ops (one after another's completion, or all in flight as a mix), injects the case's fault
 * on the faulty rank, and compares every buffer this rank owns byte for byte with the reference
 * computed here (gaps and untouched tails included). Returns the mismatches (empty: verified).
 */
import {
  allgather,
  allgatherv,
  allreduce,
  barrier,
  bcast,
  blockSizes,
  exscan,
  gather,
  gatherv,
  gathervInit,
  hierarchicalGather,
  hierarchicalGatherv,
  interAllgather,
  interAllgatherv,
  linearModel,
  reduce,
  scatter,
  scatterv,
  scattervInit,
  splitIntercomm,
  type AllgatherAlgorithm,
  type AllgathervAlgorithm,
  type BasicAlgorithm,
  type BcastAlgorithm,
  type Communicator,
  type HierarchicalVariantName,
  type InterAllgatherAlgorithm,
  type InterCommunicator,
  type PersistentCollective,
  type VAlgorithm,
} from '../../src/index.js';
import prand from 'pure-rand';
import { groupOf, type Case, type OpSpec } from './cases.js';

/** Byte k of the block of rank r in data set `seed` (distinct ranks differ at every k mod 256). */
export function pat(seed: number, r: number, k: number): number {
  return ((r + 1) * 167 + k * 31 + (k >>> 8) * 13 + seed * 7) & 255;
}
/** What a receive buffer holds before the op: bytes nobody may write must still hold it after. */
export function sentinel(k: number): number {
  return (0xa5 ^ (k * 11)) & 255;
}
function fillSentinel(buf: Uint8Array): void {
  for (let k = 0; k < buf.length; k++) buf[k] = sentinel(k);
}
function putBlock(buf: Uint8Array, at: number, len: number, seed: number, r: number): void {
  for (let k = 0; k < len; k++) buf[at + k] = pat(seed, r, k);
}

/** A receive buffer of `bytes` bytes: sentinel, with block i (counts[i] elements of u bytes, rank i's data of `seed`) at element pos[i]. */
function placedBlocks(bytes: number, pos: readonly number[], counts: readonly number[], u: number, seed: number): Uint8Array {
  const want = new Uint8Array(bytes);
  fillSentinel(want);
  for (let i = 0; i < counts.length; i++) putBlock(want, pos[i] * u, counts[i] * u, seed, i);
  return want;
}
function block(len: number, seed: number, r: number): Uint8Array {
  const b = new Uint8Array(len);
  putBlock(b, 0, len, seed, r);
  return b;
}

/** First difference of `got` from `want`, or undefined. */
function diff(label: string, got: ArrayLike<number>, want: ArrayLike<number>): string | undefined {
  if (got.length !== want.length) return `${label}: length ${got.length}, expected ${want.length}`;
  for (let k = 0; k < got.length; k++) {
    if (got[k] !== want[k]) {
      let n = 0;
      for (let j = k; j < got.length; j++) if (got[j] !== want[j]) n++;
      return `${label}: ${n} of ${got.length} wrong from index ${k} (got ${got[k]}, expected ${want[k]})`;
    }
  }
  return undefined;
}

/** Counts of a group of `size` (b = 0: all empty; two-block needs at most two sizes, else `same`). */
export function countsFor(s: OpSpec, size: number, seed: number): number[] {
  if (s.b === 0) return new Array<number>(size).fill(0);
  const c = blockSizes(s.dist, { p: size, b: s.b, rho: s.rho, seed: (seed % 100000) + 1 });
  if (s.variant === 'two-block' && new Set(c).size > 2) return blockSizes('same', { p: size, b: s.b });
  return c;
}

/** Where the blocks lie (elements): `displs` to pass (undefined: the default prefix sums), positions and the buffer's extent. */
export function placement(s: OpSpec, counts: readonly number[], seed: number): { displs: number[] | undefined; pos: number[]; extent: number } {
  const n = counts.length;
  const rng = prand.xoroshiro128plus(seed ^ 0x5eed);
  const r = (lo: number, hi: number): number => prand.unsafeUniformIntDistribution(lo, hi, rng);
  const pos = new Array<number>(n).fill(0);
  let at = 0;
  if (s.layout === 'strided') {
    // a vector layout: block i at i·stride (TraffRougier14 §5)
    const stride = Math.max(0, ...counts) + r(0, 2);
    for (let i = 0; i < n; i++) pos[i] = i * stride;
  } else {
    const order = Array.from({ length: n }, (_, i) => i);
    if (s.layout === 'permuted') {
      for (let i = n - 1; i > 0; i--) {
        const j = r(0, i);
        [order[i], order[j]] = [order[j], order[i]];
      }
    }
    for (const i of order) {
      if (s.layout === 'gaps' || s.layout === 'permuted') at += r(0, 3);
      pos[i] = at;
      at += counts[i];
    }
  }
  let extent = 0;
  for (let i = 0; i < n; i++) if (counts[i] > 0) extent = Math.max(extent, pos[i] + counts[i]);
  if (s.layout === 'gaps') extent += r(0, 2);
  return { displs: s.layout === 'default' ? undefined : pos, pos, extent };
}

/** One op bound to its buffers: run it (or plan and start it), reset its buffers for a round, check them. */
interface Instance {
  /** One-shot: the op. Persistent: the Init call. */
  issue(): Promise<unknown>;
  /** Persistent only. */
  start?(): Promise<void>;
  /** Refills the buffers for round `round` (0: before issue). */
  reset(round: number): void;
  check(round: number): string[];
  /** The buffer this rank's result lands in (a planted corruption flips a byte of it). */
  out?: Uint8Array | Int32Array;
}

interface Group {
  comm?: Communicator;
  inter?: InterCommunicator;
  /** Group index (0 or 1), rank and size in it; remote group size (inter). */
  g: number;
  rank: number;
  size: number;
  remote: number;
}

/** ±1 that keeps a count non-negative. */
const bump = (n: number): number => (n > 0 ? n - 1 : n + 1);

function modelFor(c: Case, s: OpSpec) {
  const ported = s.variant === 'linear' || s.variant === 'binomial' || s.variant === 'two-block' || s.variant === 'auto';
  return linearModel({ alpha: c.model.alpha, beta: c.model.beta, gamma: c.model.gamma, ports: ported ? c.model.ports : 1 });
}

function makeInstance(c: Case, s: OpSpec, idx: number, grp: Group, worldRank: number): Instance {
  const { rank, size, g } = grp;
  const comm = grp.comm as Communicator;
  const wrong = c.fault?.kind === 'wrong-count' && c.fault.rank === worldRank && c.fault.op === idx;
  const seed = s.seed + g * 1009;
  const dataSeed = (round: number): number => seed + round * 101;
  const u = s.unitBytes;
  const root = s.root % size;
  const label = (what: string, round: number): string => `op ${idx} ${s.op}:${s.variant} world rank ${worldRank} (rank ${rank}/${size}) round ${round} ${what}`;
  const out = (...xs: (string | undefined)[]): string[] => xs.filter((x): x is string => x !== undefined);

  switch (s.op) {
    case 'gatherv':
    case 'hier-gatherv': {
      const counts = countsFor(s, size, seed);
      const pl = placement(s, counts, seed);
      const inPlace = s.op === 'gatherv' && s.inPlace && rank === root;
      let myCount = counts[rank];
      let argCounts = counts;
      if (wrong) {
        if (rank === root) {
          const j = size >= 2 ? (root + 1) % size : root;
          argCounts = counts.map((x, i) => (i === j ? bump(x) : x));
        } else myCount = bump(myCount);
      }
      const send = new Uint8Array(inPlace ? 0 : myCount * u);
      const recv = rank === root ? new Uint8Array(pl.extent * u) : undefined;
      const expected = (round: number): Uint8Array => placedBlocks(pl.extent * u, pl.pos, counts, u, dataSeed(round));
      const args = { root, send, recv, ...(rank === root ? { counts: argCounts, displs: pl.displs } : {}), unitBytes: u, ...(inPlace ? { inPlace: true } : {}) };
      let plan: PersistentCollective | undefined;
      const inst: Instance = {
        out: recv,
        reset(round) {
          putBlock(send, 0, send.length, dataSeed(round), rank);
          if (recv) {
            fillSentinel(recv);
            if (inPlace) putBlock(recv, pl.pos[rank] * u, counts[rank] * u, dataSeed(round), rank);
          }
        },
        issue() {
          if (s.op === 'hier-gatherv') return hierarchicalGatherv(comm, args, { variant: s.variant as HierarchicalVariantName });
          const options = { algorithm: s.variant as VAlgorithm, model: modelFor(c, s) };
          if (s.starts > 0) {
            return gathervInit(comm, args, options).then((p) => {
              plan = p;
            });
          }
          return gatherv(comm, args, options);
        },
        check(round) {
          return out(recv && diff(label('root recv', round), recv, expected(round)), diff(label('send (must stay unchanged)', round), send, block(send.length, dataSeed(round), rank)));
        },
      };
      if (s.starts > 0 && s.op === 'gatherv') inst.start = () => (plan as PersistentCollective).start();
      return inst;
    }
    case 'scatterv': {
      const counts = countsFor(s, size, seed);
      const pl = placement(s, counts, seed);
      const inPlace = s.inPlace && rank === root;
      let myCount = counts[rank];
      let argCounts = counts;
      if (wrong) {
        if (rank === root) {
          const j = size >= 2 ? (root + 1) % size : root;
          argCounts = counts.map((x, i) => (i === j ? bump(x) : x));
        } else myCount = bump(myCount);
      }
      const slack = s.layout === 'gaps' ? 1 : 0;
      const recv = new Uint8Array((myCount + slack) * u);
      const send = rank === root ? new Uint8Array(pl.extent * u) : undefined;
      const rootBlocks = (round: number): Uint8Array => placedBlocks(pl.extent * u, pl.pos, counts, u, dataSeed(round));
      const args = { root, recv, count: myCount, ...(rank === root ? { send, counts: argCounts, displs: pl.displs } : {}), unitBytes: u, ...(inPlace ? { inPlace: true } : {}) };
      let plan: PersistentCollective | undefined;
      const inst: Instance = {
        out: recv,
        reset(round) {
          fillSentinel(recv);
          if (send) send.set(rootBlocks(round));
        },
        issue() {
          const options = { algorithm: s.variant as VAlgorithm, model: modelFor(c, s) };
          if (s.starts > 0) {
            return scattervInit(comm, args, options).then((p) => {
              plan = p;
            });
          }
          return scatterv(comm, args, options);
        },
        check(round) {
          const want = new Uint8Array(recv.length);
          fillSentinel(want);
          if (!inPlace) putBlock(want, 0, counts[rank] * u, dataSeed(round), rank);
          let sendDiff: string | undefined;
          if (send) sendDiff = diff(label('root send (must stay unchanged)', round), send, rootBlocks(round));
          return out(diff(label('recv', round), recv, want), sendDiff);
        },
      };
      if (s.starts > 0) inst.start = () => (plan as PersistentCollective).start();
      return inst;
    }
    case 'allgather':
    case 'hier-gather':
    case 'gather': {
      const m = s.b;
      const myM = wrong ? bump(m) : m;
      const all = s.op === 'allgather';
      const send = new Uint8Array(myM);
      const recv = all || rank === root ? new Uint8Array(size * myM) : undefined;
      return {
        out: recv,
        reset(round) {
          putBlock(send, 0, send.length, dataSeed(round), rank);
          if (recv) fillSentinel(recv);
        },
        issue() {
          if (s.op === 'allgather') return allgather(comm, { send, recv: recv as Uint8Array }, { algorithm: s.variant as AllgatherAlgorithm });
          if (s.op === 'hier-gather') return hierarchicalGather(comm, { send, recv, root }, { variant: s.variant as HierarchicalVariantName });
          return gather(comm, { send, recv, root }, { algorithm: s.variant as BasicAlgorithm });
        },
        check(round) {
          if (!recv) return [];
          const want = new Uint8Array(size * m);
          for (let i = 0; i < size; i++) putBlock(want, i * m, m, dataSeed(round), i);
          return out(diff(label('recv', round), recv, want));
        },
      };
    }
    case 'scatter': {
      const m = s.b;
      const myM = wrong ? bump(m) : m;
      const recv = new Uint8Array(myM);
      const send = rank === root ? new Uint8Array(size * myM) : undefined;
      return {
        out: recv,
        reset(round) {
          fillSentinel(recv);
          if (send) for (let i = 0; i < size; i++) putBlock(send, i * myM, myM, dataSeed(round), i);
        },
        issue: () => scatter(comm, { send, recv, root }, { algorithm: s.variant as BasicAlgorithm }),
        check: (round) => out(diff(label('recv', round), recv, block(m, dataSeed(round), rank))),
      };
    }
    case 'allgatherv': {
      const counts = countsFor(s, size, seed);
      const pl = placement(s, counts, seed);
      const argCounts = wrong ? counts.map((x, i) => (i === (rank + 1) % size ? bump(x) : x)) : counts;
      const send = new Uint8Array(counts[rank] * u);
      const recv = new Uint8Array(pl.extent * u);
      return {
        out: recv,
        reset(round) {
          putBlock(send, 0, send.length, dataSeed(round), rank);
          fillSentinel(recv);
        },
        issue: () => allgatherv(comm, { send, recv, counts: argCounts, displs: pl.displs, unitBytes: u }, { algorithm: s.variant as AllgathervAlgorithm }),
        check: (round) => out(diff(label('recv', round), recv, placedBlocks(recv.length, pl.pos, counts, u, dataSeed(round)))),
      };
    }
    case 'inter-allgather': {
      const inter = grp.inter as InterCommunicator;
      const mOf = (h: number): number => (h === 0 ? s.b : s.b >> 1);
      const myM = wrong ? bump(mOf(g)) : mOf(g);
      const rm = mOf(1 - g);
      const rseed = s.seed + (1 - g) * 1009;
      const send = new Uint8Array(myM);
      const recv = new Uint8Array(grp.remote * rm);
      return {
        out: recv,
        reset(round) {
          putBlock(send, 0, send.length, dataSeed(round), rank);
          fillSentinel(recv);
        },
        issue: () => interAllgather(inter, { send, recv }, { algorithm: s.variant as InterAllgatherAlgorithm }),
        check(round) {
          const want = new Uint8Array(recv.length);
          for (let i = 0; i < grp.remote; i++) putBlock(want, i * rm, rm, rseed + round * 101, i);
          return out(diff(label('recv (remote blocks)', round), recv, want));
        },
      };
    }
    case 'inter-allgatherv': {
      const inter = grp.inter as InterCommunicator;
      const own = countsFor(s, size, seed);
      const rseed = s.seed + (1 - g) * 1009;
      const remote = countsFor(s, grp.remote, rseed);
      const pl = placement(s, remote, rseed);
      const argCounts = wrong ? remote.map((x, i) => (i === 0 ? bump(x) : x)) : remote;
      const send = new Uint8Array(own[rank] * u);
      const recv = new Uint8Array(pl.extent * u);
      return {
        out: recv,
        reset(round) {
          putBlock(send, 0, send.length, dataSeed(round), rank);
          fillSentinel(recv);
        },
        issue: () => interAllgatherv(inter, { send, recv, counts: argCounts, displs: pl.displs, unitBytes: u }, { algorithm: s.variant as InterAllgatherAlgorithm }),
        check: (round) => out(diff(label('recv (remote blocks)', round), recv, placedBlocks(recv.length, pl.pos, remote, u, rseed + round * 101))),
      };
    }
    case 'bcast': {
      const n = s.b * u;
      const buf = new Uint8Array(wrong ? bump(n) : n);
      return {
        out: buf,
        reset(round) {
          if (rank === root) putBlock(buf, 0, buf.length, dataSeed(round), root);
          else fillSentinel(buf);
        },
        issue: () => bcast(comm, buf, root, { algorithm: s.variant as BcastAlgorithm }),
        check: (round) => out(diff(label('buffer', round), buf, block(n, dataSeed(round), root))),
      };
    }
    case 'reduce':
    case 'allreduce':
    case 'exscan': {
      const [opName, algorithm] = s.variant.split('/') as ['sum' | 'max' | 'min' | 'bxor', BasicAlgorithm | undefined];
      const n = s.b;
      const val = (round: number, r: number, i: number): number => ((r * 37 + i * 11 + dataSeed(round)) % 2001) - 1000;
      const send = new Int32Array(wrong ? bump(n) : n);
      const recv = s.op === 'allreduce' || s.op === 'exscan' || rank === root ? new Int32Array(send.length) : undefined;
      const combine = (a: number, b: number): number =>
        opName === 'sum' ? (a + b) | 0 : opName === 'max' ? Math.max(a, b) : opName === 'min' ? Math.min(a, b) : a ^ b;
      return {
        out: recv,
        reset(round) {
          for (let i = 0; i < send.length; i++) send[i] = val(round, rank, i);
          recv?.fill(0x5a5a5a5a);
        },
        issue() {
          if (s.op === 'reduce') return reduce(comm, { send, recv, root, op: opName });
          if (s.op === 'allreduce') return allreduce(comm, { send, recv: recv as Int32Array, op: opName }, { algorithm: algorithm ?? 'vcoll' });
          return exscan(comm, { send, recv, op: opName });
        },
        check(round) {
          if (!recv) return [];
          if (s.op === 'exscan' && rank === 0) return [];
          const upto = s.op === 'exscan' ? rank : size;
          const want = new Int32Array(n);
          for (let i = 0; i < n; i++) {
            let acc = val(round, 0, i);
            for (let r = 1; r < upto; r++) acc = combine(acc, val(round, r, i));
            want[i] = acc;
          }
          return out(diff(label('recv', round), recv, want));
        },
      };
    }
    case 'barrier':
      return { reset() {}, issue: () => barrier(comm, { algorithm: s.variant as BasicAlgorithm }), check: () => [] };
  }
}

const never = new Promise<never>(() => {});

/** Runs case `c` on this rank of `world`; resolves with the mismatches this rank found (empty: verified). */
export async function execCase(world: Communicator, c: Case): Promise<string[]> {
  const me = world.rank;
  const { g, rank, size } = groupOf(c, me);
  const grp: Group = { g, rank, size, remote: c.comm === 'inter' ? c.p - size : 0 };
  if (c.comm === 'world') grp.comm = world;
  else if (c.comm === 'split') {
    const sub = await world.split(g, c.reverse ? -me : me);
    if (sub === null || sub.rank !== rank || sub.size !== size) return [`split: world rank ${me} got rank ${sub?.rank}/${sub?.size}, expected ${rank}/${size}`];
    grp.comm = sub;
  } else {
    const inter = await splitIntercomm(world, g as 0 | 1);
    if (inter.rank !== rank || inter.size !== size || inter.remoteSize !== grp.remote) {
      return [`splitIntercomm: world rank ${me} got ${inter.rank}/${inter.size}+${inter.remoteSize}, expected ${rank}/${size}+${grp.remote}`];
    }
    grp.inter = inter;
  }
  const insts = c.ops.map((s, i) => makeInstance(c, s, i, grp, me));
  const fault = c.fault !== undefined && c.fault.rank === me && c.fault.kind !== 'wrong-count' && c.fault.kind !== 'corrupt' ? c.fault : undefined;
  const mismatches: string[] = [];

  // round 0: every op (one-shot) or its Init (persistent), all in flight when the case is a mix
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < insts.length; i++) {
    if (fault !== undefined && fault.op === i) {
      for (const q of inFlight) q.catch(() => {});
      if (fault.kind === 'throw') throw new Error(`soak: planted throw on rank ${me}`);
      if (fault.kind === 'exit') process.exit(3);
      // stuck: alive (a timer keeps the event loop from draining, as a real stuck program's would) but never going on
      if (c.transport !== 'sim') setInterval(() => {}, 60_000);
      await never;
    }
    insts[i].reset(0);
    const q = insts[i].issue();
    if (c.ops.length === 1) await q;
    else inFlight.push(q);
  }
  await Promise.all(inFlight);
  const corrupt = (i: number): void => {
    const o = insts[i].out;
    if (c.fault?.kind === 'corrupt' && c.fault.op === i && o !== undefined && o.length > 0) o[o.length >> 1] ^= 1;
  };
  c.ops.forEach((s, i) => {
    if (s.starts === 0) {
      corrupt(i);
      mismatches.push(...insts[i].check(0));
    }
  });
  // persistent plans: start() `starts` times, new data each time, in flight together
  const rounds = Math.max(0, ...c.ops.map((s) => s.starts));
  for (let round = 1; round <= rounds; round++) {
    const active = c.ops.map((s, i) => (s.starts >= round ? i : -1)).filter((i) => i >= 0);
    for (const i of active) insts[i].reset(round);
    await Promise.all(active.map((i) => (insts[i].start as () => Promise<void>)()));
    for (const i of active) {
      corrupt(i);
      mismatches.push(...insts[i].check(round));
    }
  }
  return mismatches.slice(0, 4);
}
