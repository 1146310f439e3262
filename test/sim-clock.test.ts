import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import { int, rng } from './helpers/random.js';
import { expectDeadlock, rejection } from './helpers/errors.js';

const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });

function clockOf(comm: Communicator) {
  const c = comm.clock;
  if (c === undefined) throw new Error('the simulator must provide comm.clock');
  return c;
}

describe('simulator: virtual clock', () => {
  it('now() follows the rank: copies advance it, completions settle it', async () => {
    const res = await runSim(
      2,
      async (comm) => {
        const clock = clockOf(comm);
        const seen = [clock.now()];
        if (comm.rank === 0) {
          comm.copy(new Uint8Array(7), new Uint8Array(7)); // 7
          seen.push(clock.now());
          await comm.send(1, 0, new Uint8Array(3)); // 7 + 13
        } else {
          await comm.recv(0, 0, new Uint8Array(3));
        }
        seen.push(clock.now());
        return seen;
      },
      { model },
    );
    expect(res.results).toEqual([
      [0, 7, 20],
      [0, 20],
    ]);
  });

  it('after sync() every clock equals the latest one; sync costs nothing', async () => {
    const rnd = rng(77);
    for (const p of [1, 2, 5, 33]) {
      const work = Array.from({ length: p }, () => int(rnd, 0, 50));
      const latest = Math.max(...work);
      const res = await runSim(
        p,
        async (comm) => {
          const clock = clockOf(comm);
          comm.copy(new Uint8Array(work[comm.rank]), new Uint8Array(work[comm.rank]));
          await clock.sync();
          const t = clock.now();
          await clock.sync(); // a second generation works too
          return [t, clock.now()];
        },
        { model },
      );
      for (const r of res.results) expect(r).toEqual([latest, latest]);
      expect(res.finish).toEqual(new Array(p).fill(latest));
      expect(res.messages).toBe(0);
    }
  });

  it('a collective timed between sync() and its end takes the evaluator time', async () => {
    const p = 12;
    const rnd = rng(5);
    const sizes = Array.from({ length: p }, () => int(rnd, 1, 9));
    const tree = linearTree(sizes, model, { root: 3 }).tree;
    const want = evaluate(tree, sizes, model).time;
    const res = await runSim(
      p,
      async (comm) => {
        const clock = clockOf(comm);
        // Skewed start: some ranks are late; traffic before the barrier must not leak into the timing.
        comm.copy(new Uint8Array(comm.rank * 3), new Uint8Array(comm.rank * 3));
        if (comm.rank > 0) await comm.send(0, 9, new Uint8Array(2));
        else for (let r = 1; r < p; r++) await comm.recv(r, 9, new Uint8Array(2));
        await clock.sync();
        const t0 = clock.now();
        const v = comm.rank;
        if (v !== 3) {
          await comm.send(3, 1, new Uint8Array(sizes[v]));
        } else {
          const buf = new Uint8Array(sizes.reduce((a, x) => a + x, 0));
          comm.copy(buf.subarray(0, sizes[3]), new Uint8Array(sizes[3]));
          for (const c of tree.children[3]) await comm.recv(c, 1, new Uint8Array(sizes[c]));
        }
        await clock.sync();
        return clock.now() - t0;
      },
      { model },
    );
    for (const d of res.results) expect(d).toBe(want);
  });

  it('a rank that never calls sync() is a deadlock naming the ranks waiting in clock.sync()', async () => {
    const e = await rejection(
      runSim(
        3,
        async (comm) => {
          if (comm.rank === 2) return;
          await clockOf(comm).sync();
        },
        { model },
      ),
    );
    expectDeadlock(e, ['rank 0: waiting in clock.sync()', 'rank 1: waiting in clock.sync()'], ['rank 2']);
  });

  it('sync() called again before the first resolved is an InvalidArgumentError; a failing rank releases sync waiters', async () => {
    const res = await runSim(
      2,
      async (comm) => {
        const clock = clockOf(comm);
        if (comm.rank === 1) return clock.sync().then(() => 'synced');
        const first = clock.sync();
        const again = await rejection(clock.sync());
        await first;
        return again instanceof InvalidArgumentError ? again.field : String(again);
      },
      { model },
    );
    expect(res.results).toEqual(['sync', 'synced']);
    const seen: string[] = [];
    const e = await rejection(
      runSim(
        3,
        async (comm) => {
          if (comm.rank === 0) throw new Error('boom');
          try {
            await clockOf(comm).sync();
          } catch (err) {
            seen.push((err as Error).name);
            throw err;
          }
        },
        { model },
      ),
    );
    expect((e as CommunicationError).rank).toBe(0);
    expect(seen).toEqual(['CommunicationError', 'CommunicationError']);
  });
});
