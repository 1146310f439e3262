/**
 * Schedules (src/schedule): the static check (shape, ranges, matching, deadlock freedom under
 * rendezvous semantics with windows, overlapping writes), the text listing, and the portable
 * executor on the simulator, on hand-built world schedules.
 */
import { describe, expect, it } from 'vitest';
import { CommunicationError, DeadlockError, InvalidArgumentError, VcollError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { assertSchedule, checkSchedule, type ScheduleProblem } from '../src/schedule/check.js';
import { formatSchedule } from '../src/schedule/format.js';
import { bindSchedule, runSchedule } from '../src/schedule/run.js';
import type { ByteRange, RankSchedule, ScheduleOp, ScheduleStep, WorldSchedule } from '../src/schedule/types.js';
import { runSim } from '../src/transports/sim/run.js';
import { barrierSchedule, bcastSchedule, gatherSchedule, scatterSchedule } from '../src/collectives/basic/schedule.js';
import { allreduceSchedule, reduceSchedule } from '../src/collectives/basic/reduce-schedule.js';
import { hierarchicalGatherSchedule } from '../src/collectives/hierarchical/schedule.js';
import { bridgeFor, nodeStructure } from '../src/collectives/hierarchical/structure.js';

const TAG = 7;
const model = linearModel({ alpha: 10, beta: 1 });

const r = (buffer: number, offset: number, length: number): ByteRange => ({ buffer, offset, length });
const send = (peer: number, ...data: ByteRange[]): ScheduleOp => ({ kind: 'send', peer, tag: TAG, data });
const recv = (peer: number, ...data: ByteRange[]): ScheduleOp => ({ kind: 'recv', peer, tag: TAG, data });
const copy = (from: ByteRange, to: ByteRange): ScheduleOp => ({ kind: 'copy', from: [from], to: [to] });
const step = (window: number, ...ops: ScheduleOp[]): ScheduleStep => ({ window, ops });

/**
 * A binomial gather of 4 bytes per rank to root 0 (4 ranks). Round 0: 1 → 0, 3 → 2 (rank 2
 * packs its own block and rank 3's); round 1: 2 → 0. The root's receive buffer holds the
 * blocks in the order 0, 1, 3, 2, so rank 2's message lands as one vectored receive,
 * recv[12..16)+recv[8..12).
 */
function binomialGather(): WorldSchedule {
  return {
    label: 'gatherv binomial',
    ranks: [
      {
        rank: 0,
        buffers: [
          { name: 'send', bytes: 4 },
          { name: 'recv', bytes: 16 },
        ],
        steps: [step(1, copy(r(0, 0, 4), r(1, 0, 4)), recv(1, r(1, 4, 4))), step(1, recv(2, r(1, 12, 4), r(1, 8, 4)))],
      },
      { rank: 1, buffers: [{ name: 'send', bytes: 4 }], steps: [step(1, send(0, r(0, 0, 4)))] },
      {
        rank: 2,
        buffers: [
          { name: 'send', bytes: 4 },
          { name: 'packed', bytes: 8 },
        ],
        steps: [step(1, copy(r(0, 0, 4), r(1, 0, 4)), recv(3, r(1, 4, 4))), step(1, send(0, r(1, 0, 8)))],
      },
      { rank: 3, buffers: [{ name: 'send', bytes: 4 }], steps: [step(1, send(2, r(0, 0, 4)))] },
    ],
  };
}

/** `world` with rank `rank`'s schedule replaced. */
function withRank(world: WorldSchedule, rank: number, rs: Omit<RankSchedule, 'rank'>): WorldSchedule {
  return { label: world.label, ranks: world.ranks.map((x) => (x.rank === rank ? { rank, ...rs } : x)) };
}

const kinds = (ps: readonly ScheduleProblem[]): string[] => ps.map((p) => `${p.kind}@${p.rank}`).sort();

describe('checkSchedule', () => {
  it('(a) a correct 4-rank binomial gather passes', () => {
    expect(checkSchedule(binomialGather())).toEqual([]);
    expect(() => assertSchedule(binomialGather())).not.toThrow();
  });

  it('(b) a missing receive is an unmatched send (and rank 1 blocks on it)', () => {
    const w = binomialGather();
    const root = w.ranks[0];
    // the root no longer receives from rank 1
    const bad = withRank(w, 0, { buffers: root.buffers, steps: [step(1, copy(r(0, 0, 4), r(1, 0, 4))), root.steps[1]] });
    const ps = checkSchedule(bad);
    const unmatched = ps.filter((p) => p.kind === 'unmatched-send');
    expect(unmatched).toHaveLength(1);
    expect(unmatched[0]).toMatchObject({ rank: 1, step: 0, op: 0 });
    expect(unmatched[0].message).toContain('send to 0 tag 7');
    // under rendezvous semantics the send never completes
    expect(kinds(ps)).toEqual(['deadlock@1', 'unmatched-send@1']);
    expect(ps.find((p) => p.kind === 'deadlock')?.message).toContain('which no receive matches');
    let thrown: unknown;
    try {
      assertSchedule(bad);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(VcollError);
    expect((thrown as VcollError).code).toBe('INTERNAL');
    expect((thrown as VcollError).message).toContain('unmatched-send: rank 1 step 0 op 0');
  });

  it('(c) a receive waiting on a send of a later step deadlocks, naming both ranks', () => {
    const w: WorldSchedule = {
      label: 'cross-step',
      ranks: [
        { rank: 0, buffers: [{ name: 'b', bytes: 8 }], steps: [step(1, recv(1, r(0, 0, 4))), step(1, send(1, r(0, 4, 4)))] },
        { rank: 1, buffers: [{ name: 'b', bytes: 8 }], steps: [step(1, recv(0, r(0, 4, 4))), step(1, send(0, r(0, 0, 4)))] },
      ],
    };
    const ps = checkSchedule(w);
    expect(kinds(ps)).toEqual(['deadlock@0', 'deadlock@1']);
    const d0 = ps.find((p) => p.rank === 0);
    expect(d0).toMatchObject({ kind: 'deadlock', step: 0, op: 0 });
    expect(d0?.message).toContain('rank 0 step 0 waits on op 0 (recv from 1 tag 7)');
    expect(d0?.message).toContain('which rank 1 posts only in step 1');
    expect(d0?.message).toContain('rank 1 step 0 waits on op 0 (recv from 0 tag 7)');
    const d1 = ps.find((p) => p.rank === 1);
    expect(d1?.message).toContain('rank 1 step 0 waits on op 0 (recv from 0 tag 7), which rank 0 posts only in step 1');
    // swapping the order on one rank resolves it
    const fixed = withRank(w, 1, { buffers: w.ranks[1].buffers, steps: [w.ranks[1].steps[1], w.ranks[1].steps[0]] });
    expect(checkSchedule(fixed)).toEqual([]);
  });

  it('(d) a receive of another length than its send', () => {
    const w = binomialGather();
    const bad = withRank(w, 1, { buffers: [{ name: 'send', bytes: 8 }], steps: [step(1, send(0, r(0, 0, 8)))] });
    const ps = checkSchedule(bad);
    expect(kinds(ps)).toEqual(['length@0']);
    expect(ps[0]).toMatchObject({ step: 0, op: 1 });
    expect(ps[0].message).toContain('receives 4 B');
    expect(ps[0].message).toContain('has 8 B');
    // a copy between spans of different lengths too
    const badCopy = withRank(w, 2, {
      buffers: w.ranks[2].buffers,
      steps: [step(1, copy(r(0, 0, 4), r(1, 0, 3)), recv(3, r(1, 4, 4))), w.ranks[2].steps[1]],
    });
    expect(kinds(checkSchedule(badCopy))).toEqual(['length@2']);
  });

  it('(e) a range beyond its buffer, and bad shapes', () => {
    const w = binomialGather();
    const bad = withRank(w, 3, { buffers: [{ name: 'send', bytes: 4 }], steps: [step(1, send(2, r(0, 2, 4)))] });
    const ps = checkSchedule(bad);
    expect(kinds(ps)).toEqual(['range@3']);
    expect(ps[0]).toMatchObject({ step: 0, op: 0 });
    expect(ps[0].message).toContain('send[2..6) ends beyond buffer send (4 B)');
    // a buffer that does not exist, a negative offset
    const bad2 = withRank(w, 3, { buffers: [{ name: 'send', bytes: 4 }], steps: [step(1, send(2, r(1, 0, 4)))] });
    expect(kinds(checkSchedule(bad2))).toEqual(['range@3']);
    const bad3 = withRank(w, 1, { buffers: [{ name: 'send', bytes: 4 }], steps: [step(1, send(0, r(0, -1, 4)))] });
    expect(kinds(checkSchedule(bad3))).toEqual(['range@1']);
    // peers outside [0, p), a window of 0, ranks out of order: shape (matching is skipped)
    const badPeer = withRank(w, 3, { buffers: [{ name: 'send', bytes: 4 }], steps: [step(1, send(4, r(0, 0, 4)))] });
    expect(kinds(checkSchedule(badPeer))).toEqual(['shape@3']);
    const badWindow = withRank(w, 3, { buffers: [{ name: 'send', bytes: 4 }], steps: [step(0, send(2, r(0, 0, 4)))] });
    expect(kinds(checkSchedule(badWindow))).toEqual(['shape@3']);
    const swapped: WorldSchedule = { label: 'x', ranks: [w.ranks[1], w.ranks[0], w.ranks[2], w.ranks[3]] };
    expect(kinds(checkSchedule(swapped))).toEqual(['shape@0', 'shape@1']);
  });

  it('(f) two receives of one step into overlapping bytes', () => {
    const w = binomialGather();
    // the root's step 0 receives rank 1's block over its own copy's destination recv[0..4)
    const bad = withRank(w, 0, {
      buffers: w.ranks[0].buffers,
      steps: [step(1, copy(r(0, 0, 4), r(1, 0, 4)), recv(1, r(1, 2, 4))), w.ranks[0].steps[1]],
    });
    const ps = checkSchedule(bad);
    expect(kinds(ps)).toEqual(['overlap@0']);
    expect(ps[0]).toMatchObject({ step: 0, op: 1 });
    expect(ps[0].message).toContain('recv[2..4)');
    // two receives, one vectored, of one step
    const two: WorldSchedule = {
      label: 'overlap',
      ranks: [
        {
          rank: 0,
          buffers: [{ name: 'recv', bytes: 12 }],
          steps: [step(2, recv(1, r(0, 0, 2), r(0, 8, 2)), recv(2, r(0, 4, 5)))],
        },
        { rank: 1, buffers: [{ name: 'send', bytes: 4 }], steps: [step(1, send(0, r(0, 0, 4)))] },
        { rank: 2, buffers: [{ name: 'send', bytes: 5 }], steps: [step(1, send(0, r(0, 0, 5)))] },
      ],
    };
    const ps2 = checkSchedule(two);
    expect(kinds(ps2)).toEqual(['overlap@0']);
    expect(ps2[0].message).toContain('recv[8..9)');
    // the same ranges in two steps do not overlap
    const split: WorldSchedule = withRank(two, 0, {
      buffers: two.ranks[0].buffers,
      steps: [step(1, recv(1, r(0, 0, 2), r(0, 8, 2))), step(1, recv(2, r(0, 4, 5)))],
    });
    expect(checkSchedule(split)).toEqual([]);
  });

  it('(g) window 1 serialises [recv, send] on both ranks into a deadlock; window 2 does not', () => {
    const pair = (window: number): WorldSchedule => ({
      label: `exchange, window ${window}`,
      ranks: [0, 1].map((rank) => ({
        rank,
        buffers: [{ name: 'b', bytes: 8 }],
        steps: [step(window, recv(1 - rank, r(0, 0, 4)), send(1 - rank, r(0, 4, 4)))],
      })),
    });
    const ps = checkSchedule(pair(1));
    expect(kinds(ps)).toEqual(['deadlock@0', 'deadlock@1']);
    expect(ps[0]).toMatchObject({ step: 0, op: 0 });
    expect(ps[0].message).toContain('posts as op 1 of its step 0 only once fewer than 1 earlier ops are incomplete (window 1)');
    expect(checkSchedule(pair(2))).toEqual([]);
    // window 1 with the order swapped on one rank is fine
    const w = pair(1);
    const fixed = withRank(w, 1, { buffers: w.ranks[1].buffers, steps: [step(1, send(0, r(0, 4, 4)), recv(0, r(0, 0, 4)))] });
    expect(checkSchedule(fixed)).toEqual([]);
  });

  it('a long chain of steps resolves through the worklist', () => {
    // a ring pass of p ranks, each step of rank i waits on rank i-1: p steps in all
    const p = 200;
    const ranks: RankSchedule[] = [];
    for (let i = 0; i < p; i++) {
      const steps: ScheduleStep[] = [];
      if (i > 0) steps.push(step(1, recv(i - 1, r(0, 0, 1))));
      if (i < p - 1) steps.push(step(1, send(i + 1, r(0, 0, 1))));
      ranks.push({ rank: i, buffers: [{ name: 'b', bytes: 1 }], steps });
    }
    expect(checkSchedule({ label: 'chain', ranks })).toEqual([]);
    // closing the ring (rank 0 first receives from p-1, which sends to 0 last) deadlocks every rank
    ranks[0] = { rank: 0, buffers: [{ name: 'b', bytes: 1 }], steps: [step(1, recv(p - 1, r(0, 0, 1))), ...ranks[0].steps] };
    ranks[p - 1] = { rank: p - 1, buffers: [{ name: 'b', bytes: 1 }], steps: [...ranks[p - 1].steps, step(1, send(0, r(0, 0, 1)))] };
    const ps = checkSchedule({ label: 'ring', ranks });
    expect(ps).toHaveLength(p);
    expect(ps.every((x) => x.kind === 'deadlock')).toBe(true);
  });
});

describe('formatSchedule', () => {
  it('(h) lists buffers, steps and operations of the binomial gather, with totals', () => {
    const text = formatSchedule(binomialGather());
    const lines = text.split('\n');
    for (const line of [
      "schedule 'gatherv binomial': 4 ranks",
      'rank 0: buffers send (4 B), recv (16 B)',
      '  step 0 (window 1):',
      '    copy send[0..4) → recv[0..4) (4 B)',
      '    recv ← 1 tag 7  recv[4..8) (4 B)',
      '    recv ← 2 tag 7  recv[12..16)+recv[8..12) (8 B)',
      '  rank 0: 2 steps, 0 messages sent, 0 B sent',
      'rank 2: buffers send (4 B), packed (8 B)',
      '    copy send[0..4) → packed[0..4) (4 B)',
      '    recv ← 3 tag 7  packed[4..8) (4 B)',
      '    send → 0 tag 7  packed[0..8) (8 B)',
      '  rank 2: 2 steps, 1 message sent, 8 B sent',
      '    send → 2 tag 7  send[0..4) (4 B)',
      'total: 6 steps, 3 messages sent, 16 B sent',
    ]) {
      expect(lines).toContain(line);
    }
    // collective tags in hex
    const w: WorldSchedule = {
      label: 't',
      ranks: [{ rank: 0, buffers: [{ name: 'b', bytes: 2 }], steps: [step(2, { kind: 'send', peer: 0, tag: 0x40000380, data: [r(0, 0, 1)] })] }],
    };
    expect(formatSchedule(w)).toContain('    send → 0 tag 0x40000380  b[0..1) (1 B)');
  });
});

describe('runSchedule on the simulator', () => {
  /** Rank i's send buffer: 4 bytes 10i+1 … 10i+4. */
  const block = (i: number): Uint8Array => Uint8Array.from([1, 2, 3, 4], (x) => 10 * i + x);
  const buffersOf = (rs: RankSchedule): Uint8Array[] => rs.buffers.map((b, i) => (i === 0 ? block(rs.rank) : new Uint8Array(b.bytes)));

  it('(i) runs the binomial gather: the root gets the blocks where the schedule puts them', async () => {
    const world = binomialGather();
    const { results, messages, bytes } = await runSim(
      4,
      async (c) => {
        const bufs = buffersOf(world.ranks[c.rank]);
        await runSchedule(c, world.ranks[c.rank], bufs);
        return bufs[bufs.length - 1];
      },
      { model },
    );
    // root layout: blocks 0, 1, 3, 2
    expect(Array.from(results[0])).toEqual([...block(0), ...block(1), ...block(3), ...block(2)]);
    expect(Array.from(results[2])).toEqual([...block(2), ...block(3)]);
    expect(messages).toBe(3);
    expect(bytes).toBe(16);
  });

  it('(i) a bound schedule runs again on the same buffers, with their current contents, in the same time', async () => {
    const world = binomialGather();
    const { results } = await runSim(
      4,
      async (c) => {
        const bufs = buffersOf(world.ranks[c.rank]);
        const bound = bindSchedule(c, world.ranks[c.rank], bufs);
        const times: number[] = [];
        const roots: number[][] = [];
        for (let k = 0; k < 2; k++) {
          if (k === 1 && c.rank === 3) bufs[0].fill(99); // rank 3's block changes between the runs
          const t0 = c.clock?.now() ?? 0;
          await bound.run();
          times.push((c.clock?.now() ?? 0) - t0);
          roots.push(Array.from(bufs[bufs.length - 1]));
          await c.clock?.sync();
        }
        return { times, roots };
      },
      { model },
    );
    const first = [...block(0), ...block(1), ...block(3), ...block(2)];
    expect(results[0].roots[0]).toEqual(first);
    expect(results[0].roots[1]).toEqual([...block(0), ...block(1), ...block(3).map(() => 99), ...block(2)]);
    expect(results[0].times[1]).toBe(results[0].times[0]);
  });

  it('(i) runs steps with a window of 2 and k ports (the exchange of (g))', async () => {
    const world: WorldSchedule = {
      label: 'exchange',
      ranks: [0, 1].map((rank) => ({
        rank,
        buffers: [{ name: 'b', bytes: 8 }],
        steps: [step(2, recv(1 - rank, r(0, 0, 4)), send(1 - rank, r(0, 4, 4)))],
      })),
    };
    const { results } = await runSim(
      2,
      async (c) => {
        const b = Uint8Array.from([0, 0, 0, 0, 1, 2, 3, 4], (x) => x + (x > 0 ? 10 * c.rank : 0));
        await runSchedule(c, world.ranks[c.rank], [b]);
        return Array.from(b);
      },
      { model, ports: 2 },
    );
    expect(results[0]).toEqual([11, 12, 13, 14, 1, 2, 3, 4]);
    expect(results[1]).toEqual([1, 2, 3, 4, 11, 12, 13, 14]);
  });

  it('(i) runs window 1 as the check says: the exchange of (g) deadlocks on the simulator too', async () => {
    const world: WorldSchedule = {
      label: 'exchange',
      ranks: [0, 1].map((rank) => ({
        rank,
        buffers: [{ name: 'b', bytes: 8 }],
        steps: [step(1, recv(1 - rank, r(0, 0, 4)), send(1 - rank, r(0, 4, 4)))],
      })),
    };
    await expect(runSim(2, (c) => runSchedule(c, world.ranks[c.rank], [new Uint8Array(8)]), { model })).rejects.toBeInstanceOf(DeadlockError);
  });

  it('(i) rejects buffers that do not fit the schedule with InvalidArgumentError, before sending', async () => {
    const world = binomialGather();
    const wrong: Record<string, (rs: RankSchedule) => Uint8Array[]> = {
      count: (rs) => buffersOf(rs).slice(1),
      size: (rs) => rs.buffers.map((b) => new Uint8Array(b.bytes + 1)),
    };
    for (const make of Object.values(wrong)) {
      const { results } = await runSim(
        4,
        async (c) => {
          try {
            await runSchedule(c, world.ranks[c.rank], make(world.ranks[c.rank]));
            return 'ran';
          } catch (e) {
            return e instanceof InvalidArgumentError ? e.field : String(e);
          }
        },
        { model },
      );
      for (const f of results) expect(f).toMatch(/^buffers/);
    }
    // another rank's schedule
    const { results } = await runSim(
      2,
      async (c) => runSchedule(c, world.ranks[1 - c.rank], buffersOf(world.ranks[1 - c.rank])).then(
        () => 'ran',
        (e: unknown) => (e instanceof InvalidArgumentError ? e.field : String(e)),
      ),
      { model },
    );
    expect(results).toEqual(['schedule', 'schedule']);
  });

  it('a receive that gets fewer bytes than its span fails with CommunicationError', async () => {
    const world: WorldSchedule = {
      label: 'short',
      ranks: [
        { rank: 0, buffers: [{ name: 'b', bytes: 8 }], steps: [step(1, recv(1, r(0, 0, 8)))] },
        { rank: 1, buffers: [{ name: 'b', bytes: 4 }], steps: [step(1, send(0, r(0, 0, 4)))] },
      ],
    };
    expect(kinds(checkSchedule(world))).toEqual(['length@0']);
    const { results } = await runSim(
      2,
      async (c) =>
        runSchedule(c, world.ranks[c.rank], [new Uint8Array(world.ranks[c.rank].buffers[0].bytes)]).then(
          () => 'ok',
          (e: unknown) => (e instanceof CommunicationError ? e.message : `other: ${String(e)}`),
        ),
      { model },
    );
    expect(results[1]).toBe('ok');
    expect(results[0]).toContain('rank 0: schedule step 0 op 0: receive from rank 1 tag 7 got 4 bytes, expected 8');
  });
});

describe('the building blocks as schedules (collectives/basic/schedule.ts)', () => {
  const world = (label: string, ranks: RankSchedule[]): WorldSchedule => ({ label, ranks });

  it('the binomial bcast and the dissemination barrier check clean for every p ≤ 17 and root', () => {
    for (let p = 1; p <= 17; p++) {
      for (let root = 0; root < p; root++) {
        const w = world(`bcast p=${p} root=${root}`, Array.from({ length: p }, (_, r) => bcastSchedule(p, root, r, 5, 7)));
        expect(checkSchedule(w), w.label).toEqual([]);
        // every rank but the root receives once; p − 1 messages in all
        expect(w.ranks.reduce((n, rs) => n + rs.steps.flatMap((s) => s.ops).filter((o) => o.kind === 'send').length, 0)).toBe(p - 1);
      }
      const b = world(`barrier p=${p}`, Array.from({ length: p }, (_, r) => barrierSchedule(p, r, 9)));
      expect(checkSchedule(b), b.label).toEqual([]);
    }
  });

  it('the binomial gather and scatter check clean for every p ≤ 17, root and block size; p − 1 messages', () => {
    for (let p = 1; p <= 17; p++) {
      for (let root = 0; root < p; root++) {
        for (const m of [0, 3]) {
          for (const [name, make] of [
            ['gather', gatherSchedule],
            ['scatter', scatterSchedule],
          ] as const) {
            const w = world(`${name} p=${p} root=${root} m=${m}`, Array.from({ length: p }, (_, r) => make(p, root, r, m, 11)));
            expect(checkSchedule(w), w.label).toEqual([]);
            expect(w.ranks.flatMap((rs) => rs.steps.flatMap((s) => s.ops)).filter((o) => o.kind === 'send').length).toBe(p - 1);
          }
        }
      }
    }
  });

  it('reduce and allreduce (with combine operations) check clean for every p ≤ 17, root and length', () => {
    for (let p = 1; p <= 17; p++) {
      for (const n of [0, 24]) {
        for (let root = 0; root < p; root++) {
          for (const inPlace of [false, true]) {
            const w = world(`reduce p=${p} root=${root} n=${n}`, Array.from({ length: p }, (_, r) => reduceSchedule(p, root, r, n, 7, inPlace)));
            expect(checkSchedule(w), w.label).toEqual([]);
            const ops = w.ranks.flatMap((rs) => rs.steps.flatMap((s) => s.ops));
            // p − 1 messages, one combine per message
            expect(ops.filter((o) => o.kind === 'send').length).toBe(p - 1);
            expect(ops.filter((o) => o.kind === 'combine').length).toBe(p - 1);
          }
        }
        const a = world(`allreduce p=${p} n=${n}`, Array.from({ length: p }, (_, r) => allreduceSchedule(p, r, n, 9)));
        expect(checkSchedule(a), a.label).toEqual([]);
        // the fold's 2·(p − p') messages and p'·log₂p' exchanges' messages
        let pof2 = 1;
        while (pof2 * 2 <= p) pof2 *= 2;
        const sends = a.ranks.flatMap((rs) => rs.steps.flatMap((s) => s.ops)).filter((o) => o.kind === 'send').length;
        expect(sends).toBe(2 * (p - pof2) + pof2 * Math.log2(pof2));
      }
    }
  });

  it('a combine whose operands differ in length, or has two ranges, is caught', () => {
    const p = 4;
    const a = Array.from({ length: p }, (_, r) => allreduceSchedule(p, r, 16, 9));
    const grow = (rs: RankSchedule, f: (o: ScheduleOp) => ScheduleOp): RankSchedule => ({ ...rs, steps: rs.steps.map((s) => ({ ...s, ops: s.ops.map(f) })) });
    const longer = grow(a[1], (o) => (o.kind === 'combine' ? { ...o, from: [{ ...o.from[0], length: 8 }] } : o));
    const problems = checkSchedule(world('allreduce', a.map((rs, r) => (r === 1 ? longer : rs))));
    expect(problems.some((x) => x.kind === 'length' && x.message.includes('combine of 8 B into 16 B'))).toBe(true);
    const split = grow(a[2], (o) => (o.kind === 'combine' ? { ...o, into: [{ ...o.into[0], length: 8 }, { ...o.into[0], offset: 8, length: 8 }] } : o));
    expect(checkSchedule(world('allreduce', a.map((rs, r) => (r === 2 ? split : rs)))).some((x) => x.kind === 'shape' && x.message.includes('one range'))).toBe(true);
  });

  it('the regular hierarchical gather checks clean: ordered, permuted and unequal nodes, every root, both root targets', () => {
    const placements: [string, (p: number) => number][] = [
      ['4 per node', (r) => Math.floor(r / 4)],
      ['permuted over 3', (r) => (r * 5) % 3],
      ['unequal', (r) => (r < 5 ? 0 : r < 6 ? 1 : 2)],
    ];
    for (const [name, nodeOf] of placements) {
      for (let p = 1; p <= 14; p++) {
        const s = nodeStructure(p, nodeOf);
        for (let root = 0; root < p; root++) {
          for (const reorder of [false, true]) {
            const ranks = Array.from({ length: p }, (_, r) => hierarchicalGatherSchedule(s, bridgeFor(s, s.nodeIndex[root], s.nodeIndex[r]), root, r, 3, reorder).schedule);
            const w = world(`hierarchical gather ${name} p=${p} root=${root} reorder=${reorder}`, ranks);
            expect(checkSchedule(w), w.label).toEqual([]);
            expect(ranks.flatMap((rs) => rs.steps.flatMap((st) => st.ops)).filter((o) => o.kind === 'send').length).toBe(p - 1);
          }
        }
      }
    }
  });

  it('a barrier round without its receive, or a bcast leaf without its parent’s send, is caught', () => {
    const p = 6;
    const b = Array.from({ length: p }, (_, r) => barrierSchedule(p, r, 9));
    const broken: RankSchedule = { ...b[3], steps: b[3].steps.map((s, k) => (k === 1 ? { ...s, ops: s.ops.filter((o) => o.kind !== 'recv') } : s)) };
    expect(checkSchedule(world('barrier', b.map((rs, r) => (r === 3 ? broken : rs)))).length).toBeGreaterThan(0);
    const c = Array.from({ length: p }, (_, r) => bcastSchedule(p, 0, r, 5, 7));
    const noSends: RankSchedule = { ...c[0], steps: [] };
    expect(checkSchedule(world('bcast', c.map((rs, r) => (r === 0 ? noSends : rs)))).length).toBeGreaterThan(0);
  });
});

describe('steps of concurrent streams (ScheduleStep.streams, after)', () => {
  /** Rank r: stream 0 receives 4 bytes from the other rank; stream 1 sends 4 bytes to it, after the receive when `wait[r]`. */
  const relay = (wait: readonly boolean[]): WorldSchedule => ({
    label: 'relay',
    ranks: [0, 1].map((rank) => ({
      rank,
      buffers: [{ name: 'b', bytes: 8 }],
      steps: [{ window: 1, ops: [recv(1 - rank, r(0, 0, 4)), send(1 - rank, r(0, 4, 4))], streams: [1, 1], after: [-1, wait[rank] ? 0 : -1] }],
    })),
  });

  it('two streams each of window 1 run [recv | send] side by side: no deadlock where one stream of window 1 has one', () => {
    expect(checkSchedule(relay([false, false]))).toEqual([]);
    expect(checkSchedule(relay([true, false]))).toEqual([]);
  });

  it('a send after its own rank’s receive on both ranks is a deadlock, named with the dependency rule', () => {
    const ps = checkSchedule(relay([true, true]));
    expect(kinds(ps)).toEqual(['deadlock@0', 'deadlock@1']);
    expect(ps[0].message).toContain('waits on op 0 (recv from 1 tag 7)');
    expect(ps[0].message).toContain('of its stream (window 1 per stream), and its dependency, if any, has completed');
  });

  it('a dependency chain through three streams and two ranks resolves; reversing one link deadlocks', () => {
    // rank 0: s0 recv A from 1; s1 send B to 1 after A; s2 recv C from 1 (tag 8).
    // rank 1: s0 send A; s1 recv B; s2 send C after B — or, `cross`, s0 recv B; s1 send A after B, send C
    const c8 = (op: ScheduleOp): ScheduleOp => ({ ...op, tag: 8 }) as ScheduleOp;
    const chain = (cross: boolean): WorldSchedule => ({
      label: 'chain',
      ranks: [
        { rank: 0, buffers: [{ name: 'b', bytes: 12 }], steps: [{ window: 1, ops: [recv(1, r(0, 0, 4)), send(1, r(0, 4, 4)), c8(recv(1, r(0, 8, 4)))], streams: [1, 1, 1], after: [-1, 0, -1] }] },
        {
          rank: 1,
          buffers: [{ name: 'b', bytes: 12 }],
          steps: [
            cross
              ? { window: 1, ops: [recv(0, r(0, 4, 4)), send(0, r(0, 0, 4)), c8(send(0, r(0, 8, 4)))], streams: [1, 2], after: [-1, 0, -1] }
              : { window: 1, ops: [send(0, r(0, 0, 4)), recv(0, r(0, 4, 4)), c8(send(0, r(0, 8, 4)))], streams: [1, 1, 1], after: [-1, -1, 1] },
          ],
        },
      ],
    });
    expect(checkSchedule(chain(false))).toEqual([]);
    // rank 1 now sends A only after receiving B, which rank 0 sends only after A: a cycle through the streams
    expect(kinds(checkSchedule(chain(true)))).toEqual(['deadlock@0', 'deadlock@1']);
  });

  it('bad streams and dependencies are shape problems, and bindSchedule refuses them with InvalidArgumentError', async () => {
    const base = relay([false, false]);
    const bad = (st: Partial<ScheduleStep>): WorldSchedule => withRank(base, 0, { buffers: base.ranks[0].buffers, steps: [{ ...base.ranks[0].steps[0], ...st }] });
    const cases: [Partial<ScheduleStep>, RegExp][] = [
      [{ streams: [1] }, /streams:? count 1 operations, the step has 2/],
      [{ streams: [1, -1, 2] }, /streams\[1\]:? -1 is not an integer ≥ 0/],
      [{ after: [-1, 1] }, /after\[1\]:? 1 is neither −1 nor an operation of an earlier stream/],
      [{ after: [0, -1] }, /after\[0\]:? 0 is neither −1/],
      [{ after: [-1] }, /after:? must have one entry per operation \(2\)/],
      [{ streams: undefined, after: [-1, -1] }, /after:? is given without streams/],
      [{ ops: [recv(1, r(0, 0, 4)), recv(1, r(0, 4, 4))], streams: [1, 1], after: [-1, -1] }, /ops\[1\]:? receives from rank 1 with tag 7 in stream 1, and stream 0 does too/],
    ];
    for (const [st, re] of cases) {
      const ps = checkSchedule(bad(st));
      expect(ps.map((p) => p.kind), re.source).toContain('shape');
      expect(ps.find((p) => p.kind === 'shape')?.message, re.source).toMatch(re);
      const { results } = await runSim(
        1,
        (c) => runSchedule(c, { ...bad(st).ranks[0] }, [new Uint8Array(8)]).then(
          () => 'ran',
          (e: unknown) => (e instanceof InvalidArgumentError ? e.message : String(e)),
        ),
        { model },
      );
      expect(results[0], re.source).toMatch(re);
    }
  });

  it('the listing heads the streams and marks dependencies', () => {
    const text = formatSchedule(relay([true, false]));
    expect(text).toContain('  step 0 (window 1 per stream, 2 streams):\n    stream 0 (1 op):\n      recv ← 1 tag 7  b[0..4) (4 B)\n    stream 1 (1 op):\n      send → 1 tag 7  b[4..8) (4 B)  after op 0');
    const empty: WorldSchedule = { label: 'e', ranks: [{ rank: 0, buffers: [{ name: 'b', bytes: 4 }], steps: [{ window: 1, ops: [copy(r(0, 0, 2), r(0, 2, 2))], streams: [0, 1, 0] }] }] };
    expect(formatSchedule(empty)).toContain('    stream 0 (0 ops):\n    stream 1 (1 op):\n      copy b[0..2) → b[2..4) (2 B)\n    stream 2 (0 ops)');
  });

  it('the portable executor runs streams as the check says: the relay moves the data; the cycle deadlocks on the simulator', async () => {
    const go = (w: WorldSchedule) =>
      runSim(
        2,
        async (c) => {
          const b = Uint8Array.from([0, 0, 0, 0, 1, 2, 3, 4], (x) => x + (x > 0 ? 10 * c.rank : 0));
          await runSchedule(c, w.ranks[c.rank], [b], { portable: true });
          return Array.from(b);
        },
        { model },
      );
    const { results } = await go(relay([true, false]));
    expect(results[0]).toEqual([11, 12, 13, 14, 1, 2, 3, 4]);
    expect(results[1]).toEqual([1, 2, 3, 4, 11, 12, 13, 14]);
    await expect(go(relay([true, true]))).rejects.toBeInstanceOf(DeadlockError);
  });
});
