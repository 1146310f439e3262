/**
 * A tiny in-memory Endpoint for the tests of comm/: p ranks in one process, messages delivered
 * in a seeded random order across pairs (FIFO within a pair, as MPI's non-overtaking rule
 * requires), matching by (context, source, tag) with wildcards. Every message is copied.
 */
import { ANY_SOURCE, ANY_TAG, type Communicator, type Received, type Status } from '../src/comm/communicator.js';
import type { Endpoint } from '../src/comm/endpoint.js';
import { createWorldCommunicator } from '../src/comm/group.js';
import { CommunicationError, TruncationError } from '../src/errors.js';
import { rng } from './helpers/random.js';

interface Msg {
  readonly ctx: number;
  readonly source: number;
  readonly dest: number;
  readonly tag: number;
  readonly data: Uint8Array;
  readonly delivered: () => void;
}

interface Posted {
  readonly ctx: number;
  readonly source: number;
  readonly tag: number;
  readonly into: Uint8Array;
  /** A receive of unknown size (irecvAlloc): its maxBytes; `into` is then unused. */
  readonly maxBytes?: number;
  readonly resolve: (s: Status | Received) => void;
  readonly reject: (e: Error) => void;
}

const matches = (r: Posted, m: Msg): boolean =>
  r.ctx === m.ctx && (r.source === ANY_SOURCE || r.source === m.source) && (r.tag === ANY_TAG || r.tag === m.tag);

class MemNet {
  /** Per ordered pair: messages in flight, FIFO. */
  private readonly flight = new Map<number, Msg[]>();
  private scheduled = false;
  readonly posted: Posted[][];
  readonly unexpected: Msg[][];
  /** Every context id a message was sent in, per sending world rank. */
  messages = 0;

  constructor(
    readonly p: number,
    private readonly random: () => number,
  ) {
    this.posted = Array.from({ length: p }, () => []);
    this.unexpected = Array.from({ length: p }, () => []);
  }

  send(m: Msg): void {
    const key = m.source * this.p + m.dest;
    let q = this.flight.get(key);
    if (q === undefined) this.flight.set(key, (q = []));
    q.push(m);
    this.messages++;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.pump());
    }
  }

  private pump(): void {
    this.scheduled = false;
    for (;;) {
      const keys = [...this.flight.keys()];
      if (keys.length === 0) return;
      const key = keys[Math.floor(this.random() * keys.length)];
      const q = this.flight.get(key) as Msg[];
      const m = q.shift() as Msg;
      if (q.length === 0) this.flight.delete(key);
      this.deliver(m);
    }
  }

  private deliver(m: Msg): void {
    m.delivered();
    const posted = this.posted[m.dest];
    const i = posted.findIndex((r) => matches(r, m));
    if (i < 0) {
      this.unexpected[m.dest].push(m);
      return;
    }
    const [r] = posted.splice(i, 1);
    complete(r, m);
  }
}

function complete(r: Posted, m: Msg): void {
  if (r.maxBytes !== undefined) {
    if (m.data.length > r.maxBytes) r.reject(new TruncationError(`message of ${m.data.length} bytes exceeds maxBytes ${r.maxBytes}`, m.data.length, r.maxBytes));
    else r.resolve({ source: m.source, tag: m.tag, bytes: m.data.length, data: m.data.slice() });
    return;
  }
  if (m.data.length > r.into.length) {
    r.reject(new CommunicationError(`message of ${m.data.length} bytes exceeds the receive buffer of ${r.into.length}`));
    return;
  }
  r.into.set(m.data);
  r.resolve({ source: m.source, tag: m.tag, bytes: m.data.length });
}

export class MemEndpoint implements Endpoint {
  /** Context ids this endpoint has sent in. */
  readonly contexts = new Set<number>();

  constructor(
    private readonly net: MemNet,
    readonly worldRank: number,
    private readonly nodes: readonly number[] | undefined,
  ) {}

  get worldSize(): number {
    return this.net.p;
  }

  isend(ctx: number, dest: number, tag: number, data: Uint8Array): Promise<void> {
    if (!(dest >= 0 && dest < this.net.p)) return Promise.reject(new Error(`bad world dest ${dest}`));
    this.contexts.add(ctx);
    return new Promise((resolve) => {
      this.net.send({ ctx, source: this.worldRank, dest, tag, data: data.slice(), delivered: resolve });
    });
  }

  irecv(ctx: number, source: number, tag: number, into: Uint8Array): Promise<Status> {
    return this.post(ctx, source, tag, into, undefined) as Promise<Status>;
  }

  irecvAlloc(ctx: number, source: number, tag: number, maxBytes: number): Promise<Received> {
    return this.post(ctx, source, tag, new Uint8Array(0), maxBytes) as Promise<Received>;
  }

  private post(ctx: number, source: number, tag: number, into: Uint8Array, maxBytes: number | undefined): Promise<Status | Received> {
    return new Promise((resolve, reject) => {
      const r: Posted = { ctx, source, tag, into, maxBytes, resolve, reject };
      const u = this.net.unexpected[this.worldRank];
      const i = u.findIndex((m) => matches(r, m));
      if (i >= 0) {
        const [m] = u.splice(i, 1);
        complete(r, m);
      } else {
        this.net.posted[this.worldRank].push(r);
      }
    });
  }

  copy(dst: Uint8Array, src: Uint8Array): void {
    dst.set(src);
  }

  nodeOf(worldRank: number): number {
    return this.nodes === undefined ? 0 : this.nodes[worldRank];
  }
}

export interface MemRun<T> {
  readonly results: T[];
  readonly endpoints: MemEndpoint[];
  /** Messages sent in the whole run. */
  readonly messages: number;
}

/** Runs `program` on p in-memory ranks (world communicators built by createWorldCommunicator). */
export async function runMem<T>(
  p: number,
  program: (comm: Communicator) => Promise<T>,
  options: { seed?: number; nodes?: readonly number[] } = {},
): Promise<MemRun<T>> {
  const net = new MemNet(p, rng(options.seed ?? 1));
  const endpoints = Array.from({ length: p }, (_, r) => new MemEndpoint(net, r, options.nodes));
  const results = await Promise.all(endpoints.map((ep) => program(createWorldCommunicator(ep))));
  return { results, endpoints, messages: net.messages };
}
