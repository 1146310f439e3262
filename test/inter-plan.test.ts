import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  partOf,
  partSize,
  partStart,
  prefixSums,
  segmentedRankPlan,
  subgroupOf,
  subgroupStarts,
  vRecvPlan,
  vSendPieces,
  type Piece,
} from '../src/collectives/inter/plan.js';

describe('near-equal parts', () => {
  it('partSize / partStart / partOf agree for every total ≤ 40 and n ≤ 12', () => {
    for (let total = 0; total <= 40; total++) {
      for (let n = 1; n <= 12; n++) {
        let at = 0;
        for (let i = 0; i < n; i++) {
          const s = partSize(total, n, i);
          expect(s).toBe(i < total % n ? Math.ceil(total / n) : Math.floor(total / n));
          expect(partStart(total, n, i)).toBe(at);
          for (let x = at; x < at + s; x++) expect(partOf(total, n, x)).toBe(i);
          at += s;
        }
        expect(at).toBe(total);
        expect(partStart(total, n, n)).toBe(total);
      }
    }
  });
});

describe('Algorithm 1 subgroups', () => {
  it('Kang19 Fig. 2: p = 8, q = 3 gives {0,1,2}, {3,4,5}, {6,7}', () => {
    expect(subgroupStarts(8, 3)).toEqual([0, 3, 6, 8]);
    expect(subgroupOf(8, 3, 4)).toEqual({ index: 1, offset: 1 });
    expect(subgroupOf(8, 3, 7)).toEqual({ index: 2, offset: 1 });
  });

  it('sizes ⌈p/q⌉ for i < p mod q, ⌊p/q⌋ after, consecutive, covering A', () => {
    for (let q = 1; q <= 20; q++) {
      for (let p = q; p <= 45; p++) {
        const s = subgroupStarts(p, q);
        expect(s[0]).toBe(0);
        expect(s[q]).toBe(p);
        for (let i = 0; i < q; i++) expect(s[i + 1] - s[i]).toBe(i < p % q ? Math.ceil(p / q) : Math.floor(p / q));
      }
    }
  });
});

/** Replays one direction of a plan on global byte ids: returns every receiver's buffer after exchange + allgatherv. */
function replayAlg1(p: number, q: number, kA: number, kB: number): void {
  // Group X of size nx with blocks kx, group Y of size ny with blocks ky. For both groups: data ids
  // of byte b of rank j's block = j·k + b (+1, 0 = unset).
  const groups = [
    { n: p, k: kA },
    { n: q, k: kB },
  ];
  const plans = groups.map((g, gi) => {
    const o = groups[1 - gi];
    return Array.from({ length: g.n }, (_, r) => segmentedRankPlan(g.n, o.n, g.k, o.k, r));
  });
  for (let gi = 0; gi < 2; gi++) {
    const g = groups[gi];
    const o = groups[1 - gi];
    const mine = plans[gi];
    const theirs = plans[1 - gi];
    expect(mine[0].isA).toBe(g.n >= o.n);
    // Every receive of a local rank matches the send of its peer, in the same round position order.
    const recvBufs = mine.map(() => new Int32Array(o.n * o.k));
    for (let r = 0; r < g.n; r++) {
      for (const round of mine[r].rounds) {
        const rc = round.recv;
        const sends = theirs[rc.peer].rounds.map((x) => x.send).filter((s) => s.peer === r);
        expect(sends.length).toBe(1);
        expect(sends[0].length).toBe(rc.length);
        for (let b = 0; b < rc.length; b++) recvBufs[r][rc.offset + b] = rc.peer * o.k + sends[0].offset + b + 1;
      }
      // Every send of a remote rank to r is received by r exactly once.
    }
    for (let j = 0; j < o.n; j++) {
      for (const round of theirs[j].rounds) {
        const s = round.send;
        const rcv = mine[s.peer].rounds.map((x) => x.recv).filter((x) => x.peer === j);
        expect(rcv.length).toBe(1);
      }
    }
    // The allgatherv counts/displs: the same on every rank, contiguous, tiling the remote data;
    // what a rank received is exactly its own allgatherv block.
    const { counts, displs } = mine[0];
    for (let r = 0; r < g.n; r++) {
      expect(mine[r].counts).toEqual(counts);
      expect(mine[r].displs).toEqual(displs);
    }
    expect(prefixSums(counts).slice(0, g.n)).toEqual(displs);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(o.n * o.k);
    for (let r = 0; r < g.n; r++) {
      const want = new Int32Array(o.n * o.k);
      for (let x = displs[r]; x < displs[r] + counts[r]; x++) want[x] = x + 1;
      if (!recvBufs[r].every((v, x) => v === want[x])) expect(Array.from(recvBufs[r])).toEqual(Array.from(want));
    }
    // B's ranks (and both at p = q) get one round per subgroup member, A's one round.
    const nRounds = Math.max(...mine.map((pl) => pl.rounds.length));
    expect(nRounds).toBe(g.n >= o.n ? 1 : Math.ceil(o.n / g.n));
  }
  // Segments of B's blocks are near-equal: within one B rank they differ by at most one byte.
  const [bn, bk, bPlans] = p >= q ? [q, kB, plans[1]] : [p, kA, plans[0]];
  for (let i = 0; i < bn && p !== q; i++) {
    const lens = bPlans[i].rounds.map((r) => r.send.length);
    expect(lens.reduce((a, b) => a + b, 0)).toBe(bk);
    expect(Math.max(...lens) - Math.min(...lens)).toBeLessThanOrEqual(1);
  }
}

describe('Algorithm 1 rank plans', () => {
  it('exhaustive p, q ≤ 9, k_A, k_B ≤ 5 (both orders): every byte once, in place for the allgatherv', () => {
    for (let p = 1; p <= 9; p++) for (let q = 1; q <= 9; q++) for (let kA = 0; kA <= 5; kA++) for (let kB = 0; kB <= 5; kB++) replayAlg1(p, q, kA, kB);
  });

  it('random p, q ≤ 40 and blocks ≤ 100', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), fc.nat(40), fc.nat(40), (p, q, kA, kB) => {
        replayAlg1(p, q, kA, kB);
      }),
      { numRuns: 40 },
    );
  });

  it('Kang19 Fig. 2 (p = 8, q = 3): B′s allgatherv counts 3k_A, 3k_A, 2k_A; A′s k_B/3 … k_B/2', () => {
    const b = segmentedRankPlan(3, 8, 6, 4, 2);
    expect(b.isA).toBe(false);
    expect(b.counts).toEqual([12, 12, 8]);
    expect(b.rounds.map((r) => [r.send.peer, r.send.length, r.recv.peer, r.recv.offset])).toEqual([
      [6, 3, 6, 24],
      [7, 3, 7, 28],
    ]);
    const a = segmentedRankPlan(8, 3, 4, 6, 0);
    expect(a.counts).toEqual([2, 2, 2, 2, 2, 2, 3, 3]);
    expect(a.displs).toEqual([0, 2, 4, 6, 8, 10, 12, 15]);
  });
});

/** Checks Algorithm 2's send and receive plans of one direction against each other and the rules. */
function checkAlg2(senderBytes: number[], receivers: number): void {
  const prefix = prefixSums(senderBytes);
  const total = prefix[senderBytes.length];
  const fromSenders = new Map<string, number>();
  senderBytes.forEach((size, j) => {
    const pieces = vSendPieces(total, receivers, prefix[j], size);
    let covered = 0;
    let lastPeer = -1;
    for (const pc of pieces) {
      expect(pc.length).toBeGreaterThan(0);
      expect(pc.peer).toBeGreaterThan(lastPeer);
      expect(pc.offset).toBe(covered);
      lastPeer = pc.peer;
      covered += pc.length;
      fromSenders.set(`${j}>${pc.peer}@${prefix[j] + pc.offset}`, pc.length);
    }
    expect(covered).toBe(size);
  });
  let seen = 0;
  let expectStart = 0;
  for (let r = 0; r < receivers; r++) {
    const plan = vRecvPlan(senderBytes, prefix, receivers, r);
    expect(plan.length).toBe(r < total % receivers ? Math.ceil(total / receivers) : Math.floor(total / receivers));
    expect(plan.start).toBe(expectStart);
    expect(plan.counts[r]).toBe(plan.length);
    expect(plan.displs[r]).toBe(plan.start);
    expectStart += plan.length;
    // The pieces tile the segment.
    const sorted = [...plan.pieces].sort((x, y) => x.offset - y.offset);
    let at = plan.start;
    for (const pc of sorted) {
      expect(pc.offset).toBe(at);
      at += pc.length;
      expect(fromSenders.get(`${pc.peer}>${r}@${pc.offset}`)).toBe(pc.length);
      seen++;
    }
    expect(at).toBe(plan.start + plan.length);
    // Order rule: multi-target senders are only at the two ends; the higher one is first,
    // the lower one last, the others in between in rank order.
    const multi = (pc: Piece): boolean => pc.length < senderBytes[pc.peer];
    const ord = plan.pieces;
    if (ord.length >= 2) {
      const lo = sorted[0];
      const hi = sorted[sorted.length - 1];
      if (multi(hi)) expect(ord[0]).toEqual(hi);
      if (multi(lo)) expect(ord[ord.length - 1]).toEqual(lo);
      const between = ord.filter((pc) => !((multi(hi) && pc === hi) || (multi(lo) && pc === lo)));
      expect(between.map((pc) => pc.peer)).toEqual([...between.map((pc) => pc.peer)].sort((x, y) => x - y));
      for (const pc of sorted.slice(1, -1)) expect(multi(pc)).toBe(false);
    }
  }
  expect(expectStart).toBe(total);
  expect(seen).toBe(fromSenders.size);
}

describe('Algorithm 2 plans', () => {
  it('a worked example: blocks 3,3,3,3 to 3 receivers', () => {
    const bytes = [3, 3, 3, 3];
    const pre = prefixSums(bytes);
    expect(vSendPieces(12, 3, 3, 3)).toEqual([
      { peer: 0, offset: 0, length: 1 },
      { peer: 1, offset: 1, length: 2 },
    ]);
    // Receiver 1 gets [4, 8): from a1 [4,6) and a2 [6,8), both multi-target: the higher first.
    expect(vRecvPlan(bytes, pre, 3, 1).pieces).toEqual([
      { peer: 2, offset: 6, length: 2 },
      { peer: 1, offset: 4, length: 2 },
    ]);
    // Receiver 0 gets [0, 4): a0 whole, a1 [3,4) multi-target: a1 first.
    expect(vRecvPlan(bytes, pre, 3, 0).pieces.map((x) => x.peer)).toEqual([1, 0]);
    // Receiver 2 gets [8, 12): a2 [8,9) multi-target (lower, last), a3 whole.
    expect(vRecvPlan(bytes, pre, 3, 2).pieces.map((x) => x.peer)).toEqual([3, 2]);
  });

  it('one big sender spread over every receiver', () => {
    const plan = vSendPieces(10, 4, 0, 10);
    expect(plan.map((x) => x.length)).toEqual([3, 3, 2, 2]);
  });

  it('exhaustive small cases: sizes in 0…4 for up to 4 senders, 1…5 receivers', () => {
    const sizes = [0, 1, 2, 3, 4];
    const rec = (acc: number[]): void => {
      if (acc.length > 0) for (let n = 1; n <= 5; n++) checkAlg2(acc, n);
      if (acc.length < 4) for (const s of sizes) rec([...acc, s]);
    };
    rec([]);
  });

  it('random senders (incl. zero) and receivers', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(50), { minLength: 1, size: 'medium' }), fc.integer({ min: 1, max: 40 }), (bytes, n) => {
        checkAlg2(bytes, n);
      }),
      { numRuns: 150 },
    );
  });
});
