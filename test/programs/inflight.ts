/**
 * Collectives in flight together on one communicator: a mix of gatherv/scatterv cases and
 * building blocks (bcast, allgatherv, allreduce, barrier) started one after the other without
 * awaiting, in the same order on every rank (MPI's rule for nonblocking collectives), then
 * awaited together; every rank checks every buffer byte for byte. Optionally on a split
 * sub-communicator (even and odd ranks), while the parent runs its own mix at the same time.
 * Shared by the simulator tests, the worker-threads program and the MPI suite.
 */
import { allgatherv, allreduce, barrier, bcast, interAllgather } from '../../src/collectives/index.js';
import { splitIntercomm, type InterCommunicator } from '../../src/comm/intercomm.js';
import type { Communicator } from '../../src/comm/communicator.js';
import { int, rng } from '../helpers/random.js';
import { blockByte, caseRunner, makeCase, type VCase } from './v-cases.js';
import type { VAlgorithm } from '../../src/collectives/types.js';
import type { DistributionName } from '../../src/workloads/distributions.js';

export type MixItem =
  | { readonly kind: 'v'; readonly case: VCase }
  | { readonly kind: 'bcast'; readonly root: number; readonly bytes: number }
  | { readonly kind: 'allgatherv'; readonly counts: readonly number[] }
  | { readonly kind: 'allreduce'; readonly n: number }
  | { readonly kind: 'barrier' }
  /** interAllgather on an intercommunicator of the even and the odd ranks (made once per mix): k + group bytes per rank. */
  | { readonly kind: 'inter'; readonly k: number; readonly algorithm: 'root-gathering' | 'segmented' };

export interface Mix {
  readonly p: number;
  readonly items: readonly MixItem[];
  /** 0: one-shot calls; n > 0: every v case planned (in flight together), then started n times together. */
  readonly starts: number;
  /** Also run `items` of `sub` on a split communicator (color rank mod 2) at the same time. */
  readonly sub?: Mix;
}

interface Running {
  readonly prepare: (k: number) => void;
  readonly check: (k: number) => string | undefined;
  readonly run: () => Promise<unknown>;
}

function itemRunner(comm: Communicator, item: MixItem, at: number, inter: InterCommunicator | undefined): Running {
  const me = comm.rank;
  const p = comm.size;
  const salt = (at + 1) * 13;
  switch (item.kind) {
    case 'v': {
      const r = caseRunner(comm, item.case);
      return { prepare: r.prepare, check: r.check, run: r.once };
    }
    case 'bcast': {
      const buf = new Uint8Array(item.bytes);
      return {
        prepare: (k) => {
          for (let j = 0; j < buf.length; j++) buf[j] = me === item.root ? blockByte(item.root + salt, j, k) : 0;
        },
        check: (k) => {
          for (let j = 0; j < buf.length; j++) {
            if (buf[j] !== blockByte(item.root + salt, j, k)) return `rank ${me} bcast #${at} byte ${j} is ${buf[j]}`;
          }
          return undefined;
        },
        run: () => bcast(comm, buf, item.root),
      };
    }
    case 'allgatherv': {
      const total = item.counts.reduce((a, b) => a + b, 0);
      const send = new Uint8Array(item.counts[me]);
      const recv = new Uint8Array(total);
      return {
        prepare: (k) => {
          for (let j = 0; j < send.length; j++) send[j] = blockByte(me + salt, j, k);
          recv.fill(0);
        },
        check: (k) => {
          let off = 0;
          for (let r = 0; r < p; r++) {
            for (let j = 0; j < item.counts[r]; j++) {
              if (recv[off + j] !== blockByte(r + salt, j, k)) return `rank ${me} allgatherv #${at} block ${r} byte ${j} is ${recv[off + j]}`;
            }
            off += item.counts[r];
          }
          return undefined;
        },
        run: () => allgatherv(comm, { send, recv, counts: item.counts }),
      };
    }
    case 'allreduce': {
      const send = new Float64Array(item.n);
      const recv = new Float64Array(item.n);
      return {
        prepare: (k) => {
          for (let j = 0; j < send.length; j++) send[j] = me * 1000 + j + k + salt;
          recv.fill(-1);
        },
        check: (k) => {
          for (let j = 0; j < recv.length; j++) {
            const want = (1000 * p * (p - 1)) / 2 + p * (j + k + salt);
            if (recv[j] !== want) return `rank ${me} allreduce #${at} element ${j} is ${recv[j]}, expected ${want}`;
          }
          return undefined;
        },
        run: () => allreduce(comm, { send, recv, op: 'sum' }),
      };
    }
    case 'barrier':
      return { prepare: () => undefined, check: () => undefined, run: () => barrier(comm) };
    case 'inter': {
      if (inter === undefined) throw new Error('inter item without an intercommunicator');
      const group = me % 2;
      const mineK = item.k + group;
      const theirK = item.k + 1 - group;
      const send = new Uint8Array(mineK);
      const recv = new Uint8Array(inter.remoteSize * theirK);
      const byteOf = (g: number, r: number, j: number, k: number): number => blockByte(salt + 100 * g + r, j, k);
      return {
        prepare: (k) => {
          for (let j = 0; j < mineK; j++) send[j] = byteOf(group, inter.rank, j, k);
          recv.fill(0);
        },
        check: (k) => {
          for (let r = 0; r < inter.remoteSize; r++) {
            for (let j = 0; j < theirK; j++) {
              const got = recv[r * theirK + j];
              if (got !== byteOf(1 - group, r, j, k)) return `rank ${me} interAllgather #${at} remote block ${r} byte ${j} is ${got}`;
            }
          }
          return undefined;
        },
        run: () => interAllgather(inter, { send, recv }, { algorithm: item.algorithm }),
      };
    }
  }
}

async function runItems(comm: Communicator, mix: Mix): Promise<string[]> {
  const inter = comm.size > 1 && mix.items.some((it) => it.kind === 'inter') ? await splitIntercomm(comm, (comm.rank % 2) as 0 | 1) : undefined;
  const runners = mix.items.map((item, i) => itemRunner(comm, item, i, inter));
  const bad: string[] = [];
  if (mix.starts === 0) {
    for (const r of runners) r.prepare(0);
    await Promise.all(runners.map((r) => r.run()));
    for (const r of runners) {
      const m = r.check(0);
      if (m !== undefined) bad.push(m);
    }
    return bad;
  }
  // Persistent: every v case planned in flight together, then all started together, n times.
  const vItems = mix.items.flatMap((item, i) => (item.kind === 'v' ? [{ i, c: caseRunner(comm, item.case) }] : []));
  const plans = await Promise.all(vItems.map((v) => v.c.init()));
  for (let k = 0; k < mix.starts; k++) {
    for (const v of vItems) v.c.prepare(k);
    await Promise.all(plans.map((pl) => pl.start()));
    for (const v of vItems) {
      const m = v.c.check(k);
      if (m !== undefined) bad.push(`#${v.i}: ${m}`);
    }
  }
  return bad;
}

/** Runs `mix` on this rank (and `mix.sub` on the split communicator at the same time); returns the mismatches. */
export async function runMixRank(comm: Communicator, mix: Mix): Promise<string[]> {
  if (mix.sub === undefined) return runItems(comm, mix);
  const sub = await comm.split(comm.rank % 2, comm.rank);
  if (sub === null) throw new Error('split gave no communicator');
  const subMix = comm.rank % 2 === 0 ? mix.sub : { ...mix.sub, items: mix.sub.items.map((it) => retarget(it, sub.size)) };
  const [a, b] = await Promise.all([runItems(comm, mix), runItems(sub, subMix)]);
  return [...a, ...b.map((m) => `sub: ${m}`)];
}

/** The item for a communicator of `size` ranks (the odd group may have one rank fewer). */
function retarget(item: MixItem, size: number): MixItem {
  switch (item.kind) {
    case 'v':
      return { kind: 'v', case: { ...item.case, p: size, root: item.case.root % size, counts: item.case.counts.slice(0, size), displs: undefined } };
    case 'bcast':
      return { ...item, root: item.root % size };
    case 'allgatherv':
      return { kind: 'allgatherv', counts: item.counts.slice(0, size) };
    case 'inter':
      return size < 2 ? { kind: 'barrier' } : item;
    default:
      return item;
  }
}

const V_ALGORITHMS: readonly VAlgorithm[] = ['linear', 'binomial', 'adaptive', 'optimal', 'binary', 'auto'];
const DISTS: readonly DistributionName[] = ['same', 'random', 'spikes', 'decreasing', 'bucket'];

/** A random mix of `n` collectives on p ranks from `seed` (the same on every rank). */
export function randomItems(p: number, n: number, seed: number, persistent: boolean): MixItem[] {
  const rnd = rng(seed);
  const items: MixItem[] = [];
  for (let i = 0; i < n; i++) {
    const kind = persistent ? 0 : int(rnd, 0, 6);
    if (kind <= 1) {
      const c = makeCase({
        op: rnd() < 0.5 ? 'gatherv' : 'scatterv',
        algorithm: V_ALGORITHMS[int(rnd, 0, V_ALGORITHMS.length - 1)],
        p,
        seed: int(rnd, 1, 1_000_000),
        dist: DISTS[int(rnd, 0, DISTS.length - 1)],
        unitBytes: rnd() < 0.5 ? 1 : 4,
        layout: 'default',
        zeros: rnd() < 0.3,
        inPlace: false,
        starts: 0,
      });
      items.push({ kind: 'v', case: { ...c, model: { ...c.model, ports: 1 } } });
    } else if (kind === 2) items.push({ kind: 'bcast', root: int(rnd, 0, p - 1), bytes: int(rnd, 0, 300) });
    else if (kind === 3) items.push({ kind: 'allgatherv', counts: Array.from({ length: p }, () => int(rnd, 0, 40)) });
    else if (kind === 4) items.push({ kind: 'allreduce', n: int(rnd, 1, 20) });
    else if (kind === 5 || p < 2) items.push({ kind: 'barrier' });
    else items.push({ kind: 'inter', k: int(rnd, 0, 9), algorithm: rnd() < 0.5 ? 'root-gathering' : 'segmented' });
  }
  return items;
}

/** Two gathervs (or scattervs) in flight, roots 0 and p − 1, unequal counts. */
export function twoRoots(op: 'gatherv' | 'scatterv', algorithm: VAlgorithm, p: number, seed: number): Mix {
  const cases: VCase[] = [0, p - 1].map((root, i) => {
    const c = makeCase({ op, algorithm, p, seed: seed * 2 + i, dist: 'random', unitBytes: 1, layout: 'default', zeros: false, inPlace: false, starts: 0 });
    const counts = c.counts.map((m, r) => m + r + i * 3);
    return { ...c, root, counts, displs: undefined, capacity: counts.reduce((a, b) => a + b, 0) + 2, model: { ...c.model, ports: 1 } };
  });
  return { p, items: cases.map((c) => ({ kind: 'v', case: c })), starts: 0 };
}


/** `n` random mixes on p ranks (one-shot, persistent every third, a split communicator's mix every fourth). */
export function randomMixes(p: number, n: number, seed: number): Mix[] {
  const mixes: Mix[] = [];
  for (let i = 1; i <= n; i++) {
    const s = seed * 1000 + i;
    const persistent = i % 3 === 0;
    const half = Math.ceil(p / 2);
    mixes.push({
      p,
      items: randomItems(p, 3 + (i % 4), s, persistent),
      starts: persistent ? 3 : 0,
      ...(i % 4 === 1 && p > 1 ? { sub: { p: half, items: randomItems(half, 3, s + 100, false), starts: 0 } } : {}),
    });
  }
  return mixes;
}
