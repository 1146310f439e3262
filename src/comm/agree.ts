/**
 * Communicator management's own little collectives, written on an Endpoint (never on
 * `collectives/`, which is built on top of communicators): a Bruck allgather of fixed-size
 * records, a dissemination max-allreduce of fixed-size records and a binomial broadcast of a
 * byte string, all inside one communicator's context on tags reserved for management. Also the
 * per-endpoint context-id counter and the lock that serializes context agreements of one
 * endpoint.
 *
 * Costs in the α+βm model, p members, w bytes per record: the allgather takes ⌈log₂p⌉ rounds,
 * α⌈log₂p⌉ + β(p−1)w (Bruck et al., IEEE TPDS 8(11), 1997) — Θ(p·w) bytes held per member, so
 * Θ(p²·w) for a simulation whose p members share one process; the max-allreduce takes
 * ⌈log₂p⌉(α + βw) and holds 2w bytes per member (dissemination, Hensgen, Finkel and Manber,
 * IJPP 17(1), 1988: max is idempotent, so the overlapping rounds of p ≠ 2^k are harmless); the
 * broadcast of m bytes takes ⌈log₂p⌉(α + βm) (binomial tree).
 *
 * Context agreement (MPI's context ids): every endpoint keeps the next context id it has never
 * used (the world communicator uses 0, so counters start at 1). A communicator with context id c
 * uses two endpoint contexts (`endpointCtx`): 2c for user tags (< COLLECTIVE_TAG, and every
 * ANY_TAG receive) and 2c + 1 for the tags of collectives and communicator management, so that
 * a user's ANY_TAG receive never takes a collective's message. A new communicator takes the
 * maximum of its members' counters and each member moves its counter past it. Two
 * communicators that share a member therefore never share a context; disjoint ones may, which
 * is harmless since no rank can receive traffic of both.
 */

import { COLLECTIVE_TAG, type Status } from './communicator.js';
import type { Endpoint } from './endpoint.js';
import { type Request, waitAll } from './request.js';

/** First tag of the 16 that communicator management reserves (the top of the collective range). */
export const MANAGEMENT_TAG = COLLECTIVE_TAG + 2 ** 20 - 16;
export const TAG_SPLIT = MANAGEMENT_TAG;
export const TAG_BCAST = MANAGEMENT_TAG + 1;
export const TAG_LEADER = MANAGEMENT_TAG + 2;

/** A group of world ranks inside one context, addressed by local rank. */
export interface Members {
  readonly endpoint: Endpoint;
  readonly ctx: number;
  readonly rank: number;
  readonly size: number;
  worldRankOf(rank: number): number;
}

interface ContextState {
  /** The smallest context id this endpoint has not used. */
  next: number;
  /** Tail of the chain of agreements in progress on this endpoint. */
  lock: Promise<void>;
}

const states = new WeakMap<Endpoint, ContextState>();

function stateOf(endpoint: Endpoint): ContextState {
  let s = states.get(endpoint);
  if (s === undefined) {
    s = { next: 1, lock: Promise.resolve() };
    states.set(endpoint, s);
  }
  return s;
}

/** A view of one endpoint's context counter, handed to an agreement while it holds the lock. */
export interface ContextCounter {
  /** The smallest context id this endpoint has not used. */
  readonly next: number;
  /** Marks every id ≤ `ctx` as used. */
  claim(ctx: number): void;
}

/**
 * Runs `agreement` once every earlier agreement on this endpoint has settled, so that a
 * counter read by one agreement cannot be handed out by another that overlaps it in time
 * (e.g. two splits of different communicators started without awaiting the first).
 */
export function withContext<T>(endpoint: Endpoint, agreement: (counter: ContextCounter) => Promise<T>): Promise<T> {
  const s = stateOf(endpoint);
  const counter: ContextCounter = {
    get next() {
      return s.next;
    },
    claim(ctx: number) {
      if (ctx + 1 > s.next) s.next = ctx + 1;
    },
  };
  const run = s.lock.then(() => agreement(counter));
  s.lock = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

/**
 * The endpoint context of traffic with `tag` on a communicator whose context id is `ctx`:
 * 2·ctx for user tags (and ANY_TAG, which is negative), 2·ctx + 1 for tags ≥ COLLECTIVE_TAG.
 */
export function endpointCtx(ctx: number, tag: number): number {
  return tag >= COLLECTIVE_TAG ? 2 * ctx + 1 : 2 * ctx;
}

function send(m: Members, to: number, tag: number, data: Uint8Array): Request<void> {
  return m.endpoint.isend(endpointCtx(m.ctx, tag), m.worldRankOf(to), tag, data);
}

function recv(m: Members, from: number, tag: number, into: Uint8Array): Request<Status> {
  return m.endpoint.irecv(endpointCtx(m.ctx, tag), m.worldRankOf(from), tag, into);
}

/**
 * Bruck allgather: every member contributes `mine` (the same length everywhere); resolves
 * with all contributions, member i's at [i·w, (i+1)·w).
 */
export async function allgatherRecords(m: Members, tag: number, mine: Float64Array): Promise<Float64Array> {
  const p = m.size;
  const w = mine.length;
  const r = m.rank;
  // Rotated: block i holds member (r + i) mod p's record.
  const rot = new Float64Array(p * w);
  rot.set(mine, 0);
  const bytes = new Uint8Array(rot.buffer);
  const bw = w * 8;
  for (let d = 1; d < p; d *= 2) {
    const cnt = Math.min(d, p - d);
    const s = send(m, (r - d + p) % p, tag, bytes.subarray(0, cnt * bw));
    const q = recv(m, (r + d) % p, tag, bytes.subarray(d * bw, (d + cnt) * bw));
    await Promise.all([s, q]);
  }
  const out = new Float64Array(p * w);
  for (let i = 0; i < p; i++) out.set(rot.subarray(i * w, (i + 1) * w), ((r + i) % p) * w);
  return out;
}

/**
 * Dissemination max-allreduce: every member contributes `mine` (the same length everywhere);
 * resolves with the element-wise maximum over all members, the same on every member. In round
 * d = 1, 2, 4, … < p a member sends what it has to r + d and takes the maximum with what r − d
 * sent; after ⌈log₂p⌉ rounds every member has covered all p (overlaps are harmless for max).
 * O(w) memory per member whatever p (allgatherRecords holds p·w).
 */
export async function allreduceMaxRecords(m: Members, tag: number, mine: Float64Array): Promise<Float64Array> {
  const p = m.size;
  const r = m.rank;
  const acc = Float64Array.from(mine);
  const got = new Float64Array(mine.length);
  const accBytes = new Uint8Array(acc.buffer);
  const gotBytes = new Uint8Array(got.buffer);
  for (let d = 1; d < p; d *= 2) {
    // acc is not touched until both the send and the receive of the round have completed
    await Promise.all([send(m, (r + d) % p, tag, accBytes), recv(m, (r - d + p) % p, tag, gotBytes)]);
    for (let i = 0; i < acc.length; i++) if (got[i] > acc[i]) acc[i] = got[i];
  }
  return acc;
}

/**
 * Binomial broadcast of a byte string from `root` (which passes `data`; the others pass
 * null); the others receive at most `maxBytes`. Resolves with the string on every member.
 */
export async function bcastBytes(
  m: Members,
  tag: number,
  root: number,
  data: Uint8Array | null,
  maxBytes: number,
): Promise<Uint8Array> {
  const p = m.size;
  const vr = (m.rank - root + p) % p;
  let buf: Uint8Array;
  let limit: number;
  if (vr === 0) {
    buf = data ?? new Uint8Array(0);
    limit = p;
  } else {
    limit = vr & -vr;
    const into = new Uint8Array(maxBytes);
    const st = await recv(m, (vr - limit + root) % p, tag, into);
    buf = into.subarray(0, st.bytes);
  }
  const sends: Request<void>[] = [];
  let top = 1;
  while (top < limit && vr + top < p) top *= 2;
  // Largest subtree first.
  for (let k = top / 2; k >= 1; k /= 2) {
    if (k < limit && vr + k < p) sends.push(send(m, (vr + k + root) % p, tag, buf));
  }
  await waitAll(sends);
  return buf;
}
