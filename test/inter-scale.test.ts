/**
 * Work counts that keep Kang19's intergroup settings (`vcoll inter`, src/run/inter.ts) linear
 * in the number of simulated ranks P = p + q, so that p + q = 2^16 fits (counted, never timed):
 * - splitIntercomm's agreement moves O(log P) bytes per rank (a max-allreduce of one record),
 *   not a record of every rank (a Bruck allgather: O(P) per rank, 28 B × P² in all before);
 * - both groups of a split by consecutive ranks are views of one table of world ranks, shared
 *   by every rank of the process (not P numbers per rank);
 * - the block layouts of the collectives (counts, displs, their bytes) are validated and built
 *   once per frozen array, not copied per rank: O(P) entries per run, not O(P²);
 * - Bruck and recursive doubling find the bytes of a run of blocks of a shared packed layout in
 *   O(1) (the schedules are the same as walking the blocks);
 * - the memory estimate of a simulated run is a fixed part, a part per rank and the real
 *   receive buffers, no longer a quadratic set-up;
 * - the simulator's port arbitration looks at O(1) waiting transfers per transfer at the root
 *   of a linear gather(v) or scatter(v) (root gathering's gatherv, settings 5–8), not at the
 *   root's whole queue each time (O(n²) for n ranks);
 * - root gathering's scatter-allgather broadcast receives into O(⌈n/p⌉ + 8) bytes per rank
 *   besides its buffer (the padded pieces' data lands in the buffer, padding and trailers in
 *   one sink of the process), not p(⌈n/p⌉ + 8) bytes and Bruck's packed copy of as many (O(p²)
 *   over the ranks: 9p bytes each when n < p), with the times, messages and copies of the
 *   padded buffer exactly.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MANAGEMENT_TAG } from '../src/comm/agree.js';
import type { Communicator, Status } from '../src/comm/communicator.js';
import { ForwardingCommunicator } from '../src/comm/forwarding.js';
import type { Request } from '../src/comm/request.js';
import type { MessageData } from '../src/comm/segments.js';
import { basicAllgather } from '../src/collectives/basic/allgather.js';
import { bcast } from '../src/collectives/basic/bcast.js';
import { scatter } from '../src/collectives/basic/scatter.js';
import { gatherv, scatterv } from '../src/collectives/index.js';
import { beginCall } from '../src/collectives/call-scope.js';
import { PORT_QUEUE_VISITS } from '../src/transports/sim/sim.js';
import type { SimResult } from '../src/transports/sim/types.js';
import { GroupCommunicator } from '../src/comm/group.js';
import { splitIntercomm } from '../src/comm/intercomm.js';
import { bruckSchedule } from '../src/collectives/allgather/bruck.js';
import { recursiveDoublingSchedule } from '../src/collectives/allgather/recursive-doubling.js';
import { sharedBlockLayout } from '../src/collectives/allgather/shared-layout.js';
import { normalizeAllgather, normalizeAllgatherv } from '../src/collectives/allgather/args.js';
import { blockLayout, LAYOUT_ENTRIES_BUILT } from '../src/collectives/args.js';
import { InvalidArgumentError, TooLargeError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { checkInterRanks, interSimBytes, runInter } from '../src/run/inter.js';
import { runSim } from '../src/transports/sim/index.js';

const MODEL = { model: linearModel({ alpha: 10, beta: 1, gamma: 0 }), ports: 'full-duplex' as const };

/** The world-rank table a communicator of vcoll holds (a view; its buffer tells who shares it). */
function tableOf(c: Communicator): Int32Array {
  if (!(c instanceof GroupCommunicator)) throw new Error('not a GroupCommunicator');
  return c.worldRanksOfRange(0, c.size);
}

/** splitIntercomm on P simulated ranks with colors `colorOf`: management traffic and what every rank saw. */
async function split(p: number, colorOf: (rank: number) => 0 | 1) {
  const res = await runSim(
    p,
    async (comm) => {
      const inter = await splitIntercomm(comm, colorOf(comm.rank));
      return { local: tableOf(inter.local), size: inter.size, remoteSize: inter.remoteSize, rank: inter.rank };
    },
    { ...MODEL, trace: true },
  );
  const management = (res.trace?.messages ?? []).filter((m) => m.tag >= MANAGEMENT_TAG);
  return { results: res.results, messages: management.length, bytes: management.reduce((a, m) => a + m.bytes, 0) };
}

describe('splitIntercomm at scale', () => {
  it('moves one 48-byte record per rank and round: O(log P) per rank, not a record of every rank', async () => {
    for (const p of [64, 512]) {
      const rounds = Math.ceil(Math.log2(p));
      const { messages, bytes, results } = await split(p, (r) => (r < (25 * p) / 32 ? 0 : 1));
      expect(messages).toBe(p * rounds);
      expect(bytes).toBe(48 * p * rounds);
      // the gather of a record of every rank moved 24(P − 1) bytes per rank: 12 264 at P = 512, against 432
      expect(bytes / p).toBeLessThan(24 * (p - 1));
      expect(results.every((x) => x.size + x.remoteSize === p)).toBe(true);
    }
  });

  it('groups of consecutive ranks share one table of world ranks; interleaved colors still get their own, right ones', async () => {
    const p = 96;
    const { results } = await split(p, (r) => (r < 40 ? 0 : 1));
    expect(new Set(results.map((x) => x.local.buffer)).size).toBe(1);
    results.forEach((x, world) => {
      expect(Array.from(x.local)).toEqual(Array.from({ length: world < 40 ? 40 : 56 }, (_, i) => (world < 40 ? i : 40 + i)));
      expect(x.rank).toBe(world < 40 ? world : world - 40);
    });
    const odd = await split(p, (r) => (r % 2) as 0 | 1);
    odd.results.forEach((x, world) => {
      expect(Array.from(x.local)).toEqual(Array.from({ length: p / 2 }, (_, i) => 2 * i + (world % 2)));
      expect(x.rank).toBe(world >> 1);
    });
    // the fallback gathers an 8-byte color per rank after the allreduce (Bruck: 8(P − 1) bytes per rank)
    expect(odd.bytes).toBe(48 * p * Math.ceil(Math.log2(p)) + 8 * p * (p - 1));
  });
});

describe('block layouts shared by the ranks', () => {
  it('a run of the settings builds O(P) layout entries, not a copy per rank (P² in all)', async () => {
    const perRank: number[] = [];
    for (const ranks of [128, 512]) {
      for (const setting of [1, 3, 6, 8] as const) {
        const before = LAYOUT_ENTRIES_BUILT.count;
        const r = await runInter({ setting, ranks, size: 4096, alpha: 100, beta: 1 });
        expect(r.verified).toBe(true);
        perRank.push((LAYOUT_ENTRIES_BUILT.count - before) / ranks);
      }
    }
    // a copy per rank and call would be ≥ P/4 entries per rank (≥ 128 at P = 512)
    for (const x of perRank) expect(x).toBeLessThan(16);
  });

  it("allgather(v)'s checked arguments: every simulated rank holds the same layout arrays (frozen counts; regular blocks)", async () => {
    const p = 24;
    const counts = Object.freeze(Array.from({ length: p }, (_, i) => i % 5));
    const total = counts.reduce((a, b) => a + b, 0);
    const { results } = await runSim(
      p,
      (comm) => {
        const v = normalizeAllgatherv(comm, { send: new Uint8Array(counts[comm.rank]), recv: new Uint8Array(total), counts }).input;
        const r = normalizeAllgather(comm, { send: new Uint8Array(3), recv: new Uint8Array(3 * p) }).input;
        return Promise.resolve([v.bytes, v.offsets, r.bytes, r.offsets]);
      },
      MODEL,
    );
    for (const [i, shared] of results[0].entries()) expect(results.every((x) => x[i] === shared)).toBe(true);
  });

  it('frozen counts: one validated layout shared by every call; other arrays: a new one per call, as blockLayout', () => {
    const counts = Object.freeze([3, 0, 5, 2]);
    const a = sharedBlockLayout(0, 4, counts, undefined, 2, 20, 'recv', 'counts!');
    const b = sharedBlockLayout(3, 4, counts, undefined, 2, 64, 'recv', 'counts!');
    expect(b).toBe(a);
    expect(a.bytes).toEqual([6, 0, 10, 4]);
    expect(a.offsets).toEqual([0, 6, 6, 16]);
    expect(Object.isFrozen(a.counts) && Object.isFrozen(a.bytes)).toBe(true);
    // a buffer too small for the shared layout fails exactly as blockLayout does
    const small = (f: typeof blockLayout | typeof sharedBlockLayout) => {
      try {
        f(1, 4, counts, undefined, 2, 19, 'recv', 'counts!');
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const got = small(sharedBlockLayout);
    expect(got).toBeInstanceOf(InvalidArgumentError);
    expect(got).toEqual(small(blockLayout));
    const mutable = [3, 0, 5, 2];
    const c = sharedBlockLayout(0, 4, mutable, undefined, 1, 10, 'recv', 'counts!');
    mutable[0] = 4;
    expect(sharedBlockLayout(0, 4, mutable, undefined, 1, 11, 'recv', 'counts!').counts).toEqual([4, 0, 5, 2]);
    expect(c.counts).toEqual([3, 0, 5, 2]);
  });

  it('Bruck and recursive doubling over a frozen packed layout: the same schedules as walking the blocks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(0), fc.nat(9)), { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (bytes, gaps) => {
          const offsets: number[] = [];
          let at = 0;
          for (const b of bytes) {
            offsets.push(b === 0 && gaps ? 1000 : at);
            at += b;
          }
          for (let rank = 0; rank < bytes.length; rank++) {
            const walked = { rank, p: bytes.length, bytes: [...bytes], offsets: [...offsets] };
            const shared = { ...walked, bytes: Object.freeze([...bytes]), offsets: Object.freeze([...offsets]) };
            expect(bruckSchedule(shared, 7)).toEqual(bruckSchedule(walked, 7));
            expect(bruckSchedule(shared, 7, true)).toEqual(bruckSchedule(walked, 7, true));
            expect(recursiveDoublingSchedule(shared, 7)).toEqual(recursiveDoublingSchedule(walked, 7));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("the memory estimate of Kang19's settings on the simulator", () => {
  it('grows about linearly with P (the set-up is no longer quadratic); only the receive buffers, 1 byte per pair at least, are', () => {
    const growth = [2 ** 12, 2 ** 13, 2 ** 14].map((p) => interSimBytes(2 * p) / interSimBytes(p));
    for (const g of growth) expect(g).toBeLessThan(2.6);
    expect(interSimBytes(2 ** 16)).toBeLessThan(16 * 2 ** 30);
  });

  it('refuses at once, naming --ranks, when the estimate is above the limit', () => {
    const saved = process.env.VCOLL_MAX_MEMORY;
    process.env.VCOLL_MAX_MEMORY = '2G';
    try {
      expect(() => checkInterRanks(4096, '--ranks')).not.toThrow();
      expect(() => checkInterRanks(2 ** 16, '--ranks')).toThrow(TooLargeError);
      expect(() => checkInterRanks(2 ** 16, '--ranks')).toThrow(/--ranks.*65536 simulated ranks/);
    } finally {
      if (saved === undefined) delete process.env.VCOLL_MAX_MEMORY;
      else process.env.VCOLL_MAX_MEMORY = saved;
    }
  });
});

describe("the simulator's port arbitration at a root with many transfers waiting", () => {
  /** Waiting-list entries arbitration looked at per message of a linear gatherv or scatterv to/from rank 0. */
  async function visitsPerMessage(p: number, op: 'gatherv' | 'scatterv', ports: 'full-duplex' | 'one-ported' | 2): Promise<number> {
    const counts = Array.from({ length: p }, (_, i) => 1 + (i % 3));
    const total = counts.reduce((a, b) => a + b, 0);
    const before = PORT_QUEUE_VISITS.count;
    const res = await runSim(
      p,
      async (comm) => {
        const root = comm.rank === 0;
        if (op === 'gatherv') await gatherv(comm, { root: 0, send: new Uint8Array(counts[comm.rank]), ...(root ? { recv: new Uint8Array(total), counts } : {}) }, { algorithm: 'linear' });
        else await scatterv(comm, { root: 0, recv: new Uint8Array(counts[comm.rank]), ...(root ? { send: new Uint8Array(total), counts } : {}) }, { algorithm: 'linear' });
      },
      { model: linearModel({ alpha: 10, beta: 1, gamma: 0 }), ports },
    );
    expect(res.messages).toBe(p - 1);
    return (PORT_QUEUE_VISITS.count - before) / res.messages;
  }

  it('a linear gatherv / scatterv: O(1) entries per transfer, in every port model (the root′s whole queue, p/2 on average, before)', async () => {
    for (const p of [256, 1024]) {
      for (const op of ['gatherv', 'scatterv'] as const) {
        for (const ports of ['full-duplex', 'one-ported', 2] as const) expect(await visitsPerMessage(p, op, ports), `${op} p ${p} ${ports}`).toBeLessThanOrEqual(2);
      }
    }
  });

  it("Kang19's allgatherv settings (root gathering's linear gatherv): O(1) entries per rank, whatever P", async () => {
    for (const setting of [5, 8] as const) {
      for (const ranks of [256, 1024]) {
        const before = PORT_QUEUE_VISITS.count;
        const r = await runInter({ setting, ranks, size: 4096, alpha: 100, beta: 1 });
        expect(r.verified).toBe(true);
        // walking the root's queue: 250–330 per rank at P = 1024, growing with P
        expect((PORT_QUEUE_VISITS.count - before) / ranks, `setting ${setting}, P = ${ranks}`).toBeLessThan(2);
      }
    }
  });
});

/**
 * Counts the memory its rank receives into, but `own`'s: per ArrayBuffer (in `seen`, shared by
 * the ranks) the end of the furthest view received into.
 */
class ReceiveMemory extends ForwardingCommunicator {
  constructor(
    inner: Communicator,
    private readonly own: ArrayBufferLike,
    private readonly seen: Map<ArrayBufferLike, number>,
  ) {
    super(inner);
  }

  protected wrap(sub: Communicator): Communicator {
    return sub;
  }

  override irecv(source: number, tag: number, into: MessageData): Request<Status> {
    for (const v of ArrayBuffer.isView(into) ? [into] : into) {
      if (v.buffer !== this.own) this.seen.set(v.buffer, Math.max(this.seen.get(v.buffer) ?? 0, v.byteOffset + v.byteLength));
    }
    return this.inner.irecv(source, tag, into);
  }
}

/** The scatter-allgather broadcast as it was, with its padded buffer of p(⌈n/p⌉ + 8) bytes on every rank: the reference of its times. */
async function paddedBufferBcast(comm: Communicator, buf: Uint8Array, root: number): Promise<void> {
  comm = beginCall(comm);
  const { size: p, rank } = comm;
  const n = buf.length;
  const piece = Math.ceil(n / p);
  const stride = piece + 8;
  const whole = new Uint8Array(stride * p);
  if (rank === root) {
    const view = new DataView(whole.buffer);
    for (let i = 0; i < p; i++) {
      const from = Math.min(n, i * piece);
      comm.copy(whole.subarray(i * stride, i * stride + Math.min(n, from + piece) - from), buf.subarray(from, Math.min(n, from + piece)));
      view.setFloat64(i * stride + piece, n, true);
    }
  }
  const mine = new Uint8Array(stride);
  await scatter(comm, { send: rank === root ? whole : undefined, recv: mine, root });
  await basicAllgather(comm, { send: mine, recv: whole });
  if (rank !== root) {
    for (let i = 0; i < p; i++) {
      const from = Math.min(n, i * piece);
      const to = Math.min(n, from + piece);
      if (to > from) comm.copy(buf.subarray(from, to), whole.subarray(i * stride, i * stride + to - from));
    }
  }
}

/** Everything of a simulated run the model decides: times, counts, every message and copy (tags too). */
function timesOf(res: SimResult<unknown>): string {
  const h = createHash('sha256');
  h.update(JSON.stringify([res.time, res.finish, res.messages, res.bytes]));
  for (const m of res.trace?.messages ?? []) h.update(`${m.from},${m.to},${m.tag},${m.bytes},${m.start},${m.end};`);
  for (const c of res.trace?.copies ?? []) h.update(`${c.rank},${c.bytes},${c.start},${c.end};`);
  return `${res.time} ${h.digest('hex')}`;
}

describe("root gathering's scatter-allgather broadcast", () => {
  const pattern = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) & 255);

  it('receives into O(⌈n/p⌉ + 8) bytes per rank besides its buffer, not p(⌈n/p⌉ + 8) and Bruck′s copy of them', async () => {
    for (const [p, n] of [
      [1000, 12300],
      [2000, 12300],
      [1024, 700],
      [3000, 2500],
    ]) {
      const seen = new Map<ArrayBufferLike, number>();
      const ref = pattern(n);
      const root = p >> 1;
      await runSim(
        p,
        async (comm) => {
          const buf = comm.rank === root ? ref.slice() : new Uint8Array(n);
          await bcast(new ReceiveMemory(comm, buf.buffer, seen), buf, root, { algorithm: 'scatter-allgather' });
          expect(Buffer.compare(buf, ref)).toBe(0);
        },
        { model: linearModel({ alpha: 100, beta: 1, gamma: 0 }), ports: 'full-duplex' },
      );
      const stride = Math.ceil(n / p) + 8;
      let bytes = 0;
      for (const b of seen.values()) bytes += b;
      // every rank's piece, the binomial scatter's subtrees (½·log₂p pieces per rank on
      // average) and one sink; a padded buffer and Bruck's tmp per rank were ≈ 2p pieces each
      const bound = p * stride * (2 + Math.log2(p));
      expect(bytes, `p ${p}, n ${n}`).toBeLessThan(bound);
      expect(2 * (p - 1) * p * stride).toBeGreaterThan(20 * bound);
    }
  });

  it('takes exactly the times, messages and copies of the padded buffer (any p, root, port model, γ)', async () => {
    for (const p of [2, 3, 5, 8, 12, 17, 32, 33, 100]) {
      for (const n of [1, p - 1, 3 * p + 1, 12 * p + 5, 1000]) {
        if (n % p === 0) continue; // the pieces are the buffer itself: nothing padded
        for (const root of new Set([0, p - 1, p >> 1])) {
          for (const [ports, gamma] of [
            ['full-duplex', 0],
            ['one-ported', 0.37],
            [2, 1.3],
          ] as const) {
            const ref = pattern(n);
            const options = { model: linearModel({ alpha: 1.7, beta: 0.3, gamma }), ports, trace: true };
            const run = (b: typeof bcast) =>
              runSim(
                p,
                async (comm) => {
                  const buf = comm.rank === root ? ref.slice() : new Uint8Array(n).fill(0xee);
                  await b(comm, buf, root, { algorithm: 'scatter-allgather' });
                  expect(Buffer.compare(buf, ref)).toBe(0);
                },
                options,
              );
            const row = `p ${p}, n ${n}, root ${root}, ${ports}, γ ${gamma}`;
            expect(timesOf(await run(bcast)), row).toBe(timesOf(await run(paddedBufferBcast)));
          }
        }
      }
    }
  });
});
