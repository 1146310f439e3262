import { describe, expect, it } from 'vitest';
import { ANY_SOURCE, ANY_TAG, type Communicator } from '../src/comm/communicator.js';
import { CommunicationError, DeadlockError, InvalidArgumentError, TruncationError } from '../src/errors.js';
import { hierarchicalModel, linearModel, pairwiseModel, type CostModel } from '../src/model/cost-model.js';
import { runSim, type SimOptions } from '../src/transports/sim/index.js';
import { evaluate } from '../src/trees/evaluate.js';
import { type Tree } from '../src/trees/tree.js';
import { linearTree } from '../src/trees/linear.js';
import { obliviousBinomialTree } from '../src/trees/binomial.js';
import { optimalTree } from '../src/trees/optimal/homogeneous.js';
import { optimalBinaryTree } from '../src/trees/optimal/binary.js';
import { adaptiveBinomialTree } from '../src/trees/adaptive.js';
import { treeSchedule } from '../src/trees/draw.js';
import { int, rng } from './helpers/random.js';
import { expectDeadlock, rejection } from './helpers/errors.js';
import { randomTree } from './helpers/trees.js';

const model10 = linearModel({ alpha: 10, beta: 0 });

describe('simulator: point to point', () => {
  it('ping-pong costs two messages and moves the data', async () => {
    const model = linearModel({ alpha: 10, beta: 1 });
    const res = await runSim(
      2,
      async (comm) => {
        const buf = new Uint8Array(5);
        if (comm.rank === 0) {
          await comm.send(1, 3, Uint8Array.of(1, 2, 3, 4, 5));
          const st = await comm.recv(1, 4, buf);
          expect(st).toEqual({ source: 1, tag: 4, bytes: 5 });
        } else {
          await comm.recv(0, 3, buf);
          for (let i = 0; i < 5; i++) buf[i] *= 2;
          await comm.send(0, 4, buf);
        }
        return Array.from(buf);
      },
      { model, trace: true },
    );
    expect(res.time).toBe(30);
    expect(res.finish).toEqual([30, 30]);
    expect(res.results[0]).toEqual([2, 4, 6, 8, 10]);
    expect(res.messages).toBe(2);
    expect(res.bytes).toBe(10);
    expect(res.trace?.messages).toEqual([
      { from: 0, to: 1, ctx: 0, tag: 3, bytes: 5, start: 0, end: 15 },
      { from: 1, to: 0, ctx: 0, tag: 4, bytes: 5, start: 15, end: 30 },
    ]);
    // unitBytes: 5 bytes are one model unit.
    const res2 = await runSim(
      2,
      async (comm) => {
        const buf = new Uint8Array(5);
        if (comm.rank === 0) {
          await comm.send(1, 0, buf);
          await comm.recv(1, 0, buf);
        } else {
          await comm.recv(0, 0, buf);
          await comm.send(0, 0, buf);
        }
      },
      { model, unitBytes: 5 },
    );
    expect(res2.time).toBe(22);
  });

  // Rank 0 posts isend to 1, isend to 2, irecv from 3, irecv from 4 at once; every transfer costs 10.
  const star = async (comm: Communicator): Promise<void> => {
    const one = new Uint8Array(1);
    if (comm.rank === 0) {
      await comm.waitAll<unknown>([
        comm.isend(1, 0, one),
        comm.isend(2, 0, one),
        comm.irecv(3, 0, new Uint8Array(1)),
        comm.irecv(4, 0, new Uint8Array(1)),
      ]);
    } else if (comm.rank <= 2) await comm.recv(0, 0, one);
    else await comm.send(0, 0, one);
  };
  // Rank 0 sends to 1 and 2 at once.
  const twoSends = async (comm: Communicator): Promise<void> => {
    const one = new Uint8Array(1);
    if (comm.rank === 0) await comm.waitAll([comm.isend(1, 0, one), comm.isend(2, 0, one)]);
    else await comm.recv(0, 0, one);
  };

  it('port models: one-ported, full duplex, k ports (hand-computed times)', async () => {
    const run = (prog: (c: Communicator) => Promise<void>, p: number, ports: SimOptions['ports']) =>
      runSim(p, prog, { model: model10, ports });
    // One-ported: the four transfers run one after another in match order.
    const a1 = await run(star, 5, 'one-ported');
    expect(a1.time).toBe(40);
    expect(a1.finish).toEqual([40, 10, 20, 30, 40]);
    // Full duplex: sends to 1, 2 in sequence, receives from 3, 4 in sequence, the two streams overlap.
    const a2 = await run(star, 5, 'full-duplex');
    expect(a2.finish).toEqual([20, 10, 20, 10, 20]);
    // Two ports: the first two matched (the sends) at 0, then the receives.
    const a3 = await run(star, 5, 2);
    expect(a3.finish).toEqual([20, 10, 10, 20, 20]);
    expect((await run(star, 5, 3)).finish).toEqual([20, 10, 10, 10, 20]);
    expect((await run(star, 5, 4)).time).toBe(10);
    // Two sends: a full-duplex rank still has a single send port.
    expect((await run(twoSends, 3, 'one-ported')).finish).toEqual([20, 10, 20]);
    expect((await run(twoSends, 3, 'full-duplex')).finish).toEqual([20, 10, 20]);
    expect((await run(twoSends, 3, 2)).finish).toEqual([10, 10, 10]);
    // Default ports come from the model.
    expect((await runSim(3, twoSends, { model: linearModel({ alpha: 10, beta: 0, ports: 2 }) })).time).toBe(10);
  });

  it('zero-byte messages match and complete at once, without waiting for a port', async () => {
    const res = await runSim(
      3,
      async (comm) => {
        if (comm.rank === 0) {
          const big = comm.isend(1, 0, new Uint8Array(10));
          const none = comm.isend(2, 0, new Uint8Array(0));
          await comm.waitAll([big, none]);
          return -1;
        }
        if (comm.rank === 1) return (await comm.recv(0, 0, new Uint8Array(10))).bytes;
        return (await comm.recv(0, 0, new Uint8Array(4))).bytes;
      },
      { model: linearModel({ alpha: 10, beta: 1 }), trace: true },
    );
    expect(res.results).toEqual([-1, 10, 0]);
    expect(res.finish).toEqual([20, 20, 0]);
    expect(res.messages).toBe(2);
    expect(res.bytes).toBe(10);
    expect(res.trace?.messages.find((m) => m.to === 2)).toEqual({ from: 0, to: 2, ctx: 0, tag: 0, bytes: 0, start: 0, end: 0 });
  });

  it('wildcards and non-overtaking', async () => {
    const res = await runSim(
      3,
      async (comm) => {
        const b = (x: number) => Uint8Array.of(x);
        if (comm.rank === 1) {
          await comm.waitAll([comm.isend(0, 5, b(1)), comm.isend(0, 6, b(2)), comm.isend(0, 5, b(3)), comm.isend(0, 5, b(4))]);
          return [];
        }
        if (comm.rank === 2) {
          await comm.send(0, 9, b(9));
          return [];
        }
        const got: string[] = [];
        const rx = async (src: number, tag: number) => {
          const into = new Uint8Array(4);
          const st = await comm.recv(src, tag, into);
          got.push(`${st.source}/${st.tag}/${into[0]}/${st.bytes}`);
        };
        await rx(1, 5); // first tag-5 message of rank 1
        await rx(ANY_SOURCE, 6);
        await rx(1, ANY_TAG); // the next in order from 1: tag 5, value 3
        await rx(ANY_SOURCE, 9);
        await rx(ANY_SOURCE, ANY_TAG);
        return got;
      },
      { model: model10 },
    );
    expect(res.results[0]).toEqual(['1/5/1/1', '1/6/2/1', '1/5/3/1', '2/9/9/1', '1/5/4/1']);
  });

  it('truncation rejects the receive with a TruncationError (a CommunicationError: bytes, capacity)', async () => {
    const res = await runSim(
      2,
      async (comm) => {
        if (comm.rank === 0) {
          await comm.send(1, 0, new Uint8Array(4));
          return 'sent';
        }
        const e = await rejection(comm.recv(0, 0, new Uint8Array(2)));
        return e instanceof TruncationError && e.bytes === 4 && e.capacity === 2 && /truncated/.test(e.message) ? 'truncated' : String(e);
      },
      { model: model10 },
    );
    expect(res.results).toEqual(['sent', 'truncated']);
    // Unhandled, it fails the run and names the rank.
    const e = await rejection(
      runSim(
        2,
        async (comm) => {
          if (comm.rank === 0) await comm.send(1, 0, new Uint8Array(4));
          else await comm.recv(0, 0, new Uint8Array(2));
        },
        { model: model10 },
      ),
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).message).toMatch(/rank 1 failed/);
  });

  it('bad dest, source or tag rejects with InvalidArgumentError', async () => {
    const res = await runSim(
      2,
      async (comm) => {
        const buf = new Uint8Array(1);
        const errs = [
          await rejection(comm.isend(2, 0, buf)),
          await rejection(comm.isend(-1, 0, buf)),
          await rejection(comm.isend(1, -1, buf)),
          await rejection(comm.irecv(5, 0, buf)),
          await rejection(comm.irecv(0, 1.5, buf)),
        ];
        return errs.map((e) => (e instanceof InvalidArgumentError ? e.field : String(e)));
      },
      { model: model10 },
    );
    expect(res.results[0]).toEqual(['dest', 'dest', 'tag', 'source', 'tag']);
    await expect(runSim(0, async () => 0, { model: model10 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(runSim(2, async () => 0, { model: model10, ports: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('reports a deadlock with the blocked ranks and what they wait for', async () => {
    const e = await rejection(
      runSim(
        3,
        async (comm) => {
          if (comm.rank === 2) return;
          await comm.recv(1 - comm.rank, 7, new Uint8Array(1));
        },
        { model: model10 },
      ),
    );
    expectDeadlock(e, ['rank 0: recv from 1 tag 7', 'rank 1: recv from 0 tag 7'], ['rank 2']);
    // The same DeadlockError as on worker threads: every waiting rank with its operations.
    expect(e).toBeInstanceOf(DeadlockError);
    expect((e as DeadlockError).ranks).toEqual([
      { rank: 0, finished: false, waitsFor: ['recv from 1 tag 7'] },
      { rank: 1, finished: false, waitsFor: ['recv from 0 tag 7'] },
    ]);
  });

  it('an operation left unmatched when every rank finished is reported; a free self message costs nothing', async () => {
    const e = await rejection(
      runSim(
        2,
        async (comm) => {
          if (comm.rank === 0) void comm.isend(1, 4, new Uint8Array(3)).then(undefined, () => undefined);
        },
        { model: model10 },
      ),
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as Error).message).toContain('rank 0: send to 1 tag 4 (3 bytes)');
    const res = await runSim(
      1,
      async (comm) => {
        const into = new Uint8Array(2);
        await comm.waitAll<unknown>([comm.isend(0, 0, Uint8Array.of(7, 8)), comm.irecv(0, 0, into)]);
        return Array.from(into);
      },
      { model: model10 },
    );
    expect(res.results[0]).toEqual([7, 8]);
    expect(res.time).toBe(0);
  });

  it('a message to oneself is a copy: γ per unit on one port (both in full duplex)', async () => {
    const model = linearModel({ alpha: 10, beta: 1, gamma: 0.5 });
    // Rank 0 copies 8 bytes to itself (4 units of time) while rank 1 sends it 2 bytes (12).
    const prog = async (comm: Communicator): Promise<void> => {
      if (comm.rank === 1) return comm.send(0, 0, new Uint8Array(2));
      const into = new Uint8Array(8);
      await comm.waitAll<unknown>([
        comm.isend(0, 5, Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8)),
        comm.irecv(0, 5, into),
        comm.irecv(1, 0, new Uint8Array(2)),
      ]);
      expect(Array.from(into)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    };
    const one = await runSim(2, prog, { model, trace: true });
    expect(one.finish).toEqual([16, 16]);
    expect(one.trace?.messages.map((m) => [m.from, m.to, m.start, m.end])).toEqual([
      [0, 0, 0, 4],
      [1, 0, 4, 16],
    ]);
    expect((await runSim(2, prog, { model, ports: 'full-duplex' })).time).toBe(16);
    // Two ports: the copy and the transfer overlap.
    expect((await runSim(2, prog, { model, ports: 2 })).time).toBe(12);
  });

  it('a throwing rank rejects runSim naming it, and the others do not hang', async () => {
    const seen: string[] = [];
    const e = await rejection(
      runSim(
        4,
        async (comm) => {
          if (comm.rank === 2) {
            await comm.send(3, 0, new Uint8Array(1));
            throw new Error('boom');
          }
          try {
            await comm.recv(2, 0, new Uint8Array(1));
            if (comm.rank !== 3) throw new Error('unexpected message');
            await comm.recv(2, 1, new Uint8Array(1));
          } catch (err) {
            seen.push(`${comm.rank}:${(err as Error).name}`);
            throw err;
          }
        },
        { model: model10 },
      ),
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(2);
    expect((e as Error).message).toMatch(/rank 2 failed: boom/);
    expect(seen.sort()).toEqual(['0:CommunicationError', '1:CommunicationError', '3:CommunicationError']);
  });

  it('a failing rank also rejects a copy to oneself still waiting for its port', async () => {
    const seen: string[] = [];
    const e = await rejection(
      runSim(
        3,
        async (comm) => {
          if (comm.rank === 2) throw new Error('boom');
          if (comm.rank === 1) return void (await comm.recv(0, 0, new Uint8Array(50)).catch(() => undefined));
          const busy = comm.isend(1, 0, new Uint8Array(50)).then(undefined, () => undefined); // holds the only port
          const into = new Uint8Array(4);
          void comm.isend(0, 1, new Uint8Array(4)).then(undefined, () => undefined);
          try {
            await comm.irecv(0, 1, into); // the receiving half of the copy
          } catch (err) {
            seen.push((err as Error).name);
          }
          await busy;
        },
        { model: linearModel({ alpha: 10, beta: 1, gamma: 1 }) },
      ),
    );
    expect((e as CommunicationError).rank).toBe(2);
    expect(seen).toEqual(['CommunicationError']);
  });

  it('nodeOf comes from a hierarchical model, else 0', async () => {
    const h = hierarchicalModel({ nodeOf: [0, 0, 1, 1], intra: { alpha: 1, beta: 0 }, inter: { alpha: 5, beta: 0 } });
    const r1 = await runSim(4, async (comm) => [0, 1, 2, 3].map((r) => comm.nodeOf(r)), { model: h });
    expect(r1.results[3]).toEqual([0, 0, 1, 1]);
    const r2 = await runSim(2, async (comm) => comm.nodeOf(1), { model: model10 });
    expect(r2.results).toEqual([0, 0]);
  });

  it('copy really copies and charges gamma per unit', async () => {
    const res = await runSim(
      1,
      async (comm) => {
        const dst = new Uint8Array(8);
        comm.copy(dst, Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8));
        return Array.from(dst);
      },
      { model: linearModel({ alpha: 1, beta: 1, gamma: 0.5 }), unitBytes: 2, trace: true },
    );
    expect(res.results[0]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(res.time).toBe(2);
    expect(res.trace?.copies).toEqual([{ rank: 0, bytes: 8, start: 0, end: 2 }]);
  });
});

const byteOf = (rank: number, q: number): number => (rank * 31 + q * 7 + 1) & 255;

/** The bytes of rank v's block (sizes in units of `unit` bytes). */
function block(v: number, bytes: number): Uint8Array {
  const b = new Uint8Array(bytes);
  for (let q = 0; q < bytes; q++) b[q] = byteOf(v, q);
  return b;
}

/** Layout of v's subtree buffer: children's layouts in receive order, own block after `copyAt` of them. */
function layout(tree: Tree, v: number, bytes: (r: number) => number, out: number[][] = []): number[][] {
  const kids = tree.children[v];
  const at = tree.copyAt[v];
  for (let j = 0; j <= kids.length; j++) {
    if (j === at) out.push([v, bytes(v)]);
    if (j < kids.length) layout(tree, kids[j], bytes, out);
  }
  return out;
}

function layoutBytes(tree: Tree, v: number, bytes: (r: number) => number): Uint8Array {
  const parts = layout(tree, v, bytes).map(([r, n]) => block(r, n));
  const out = new Uint8Array(parts.reduce((s, x) => s + x.length, 0));
  let o = 0;
  for (const x of parts) {
    out.set(x, o);
    o += x.length;
  }
  return out;
}

/** Executes a gather tree: receives from the children in order (copy at copyAt), then one send to the parent. */
function gatherProgram(tree: Tree, sizes: number[], unit: number, copyAll: boolean) {
  const S = evaluate(tree, sizes, linearModel({ alpha: 0, beta: 0 })).subtreeSize;
  return async (comm: Communicator): Promise<Uint8Array | null> => {
    const v = comm.rank;
    const kids = tree.children[v];
    const at = tree.copyAt[v];
    const own = block(v, sizes[v] * unit);
    const copies = kids.length > 0 || copyAll || v === tree.root; // as evaluate: the root copies even alone
    const buf = copies ? new Uint8Array(S[v] * unit) : own;
    let off = 0;
    const doCopy = () => {
      if (copies) comm.copy(buf.subarray(off, off + own.length), own);
      off += own.length;
    };
    for (let j = 0; j < kids.length; j++) {
      if (j === at) doCopy();
      const c = kids[j];
      const st = await comm.recv(c, 1, buf.subarray(off, off + S[c] * unit));
      expect(st.bytes).toBe(S[c] * unit);
      off += S[c] * unit;
    }
    if (at === kids.length) doCopy();
    if (tree.parent[v] >= 0) {
      await comm.send(tree.parent[v], 1, buf);
      return null;
    }
    return buf;
  };
}

/**
 * A scatter rank's subtree buffer (the root: its layout; any other rank: received from its
 * parent) with the offsets of its own block and of each child's part, in gather order.
 */
async function scatterReceive(
  comm: Communicator,
  tree: Tree,
  sizes: number[],
  unit: number,
  S: ArrayLike<number>,
): Promise<{ buf: Uint8Array; ownOff: number; offs: number[] }> {
  const v = comm.rank;
  const kids = tree.children[v];
  const buf = tree.parent[v] < 0 ? layoutBytes(tree, v, (r) => sizes[r] * unit) : new Uint8Array(S[v] * unit);
  if (tree.parent[v] >= 0) await comm.recv(tree.parent[v], 2, buf);
  const offs: number[] = [];
  let off = 0;
  let ownOff = 0;
  for (let j = 0; j <= kids.length; j++) {
    if (j === tree.copyAt[v]) {
      ownOff = off;
      off += sizes[v] * unit;
    }
    if (j < kids.length) {
      offs.push(off);
      off += S[kids[j]] * unit;
    }
  }
  return { buf, ownOff, offs };
}

/** Executes a scatter tree: receive from the parent, then the gather operations in reverse order. */
function scatterProgram(tree: Tree, sizes: number[], unit: number, copyAll: boolean) {
  const S = evaluate(tree, sizes, linearModel({ alpha: 0, beta: 0 })).subtreeSize;
  return async (comm: Communicator): Promise<Uint8Array> => {
    const v = comm.rank;
    const kids = tree.children[v];
    const at = tree.copyAt[v];
    const { buf, ownOff, offs } = await scatterReceive(comm, tree, sizes, unit, S);
    const copies = kids.length > 0 || copyAll || v === tree.root; // as evaluate: the root copies even alone
    let own = buf.subarray(ownOff, ownOff + sizes[v] * unit);
    const doCopy = () => {
      if (!copies) return;
      const dst = new Uint8Array(own.length);
      comm.copy(dst, own);
      own = dst;
    };
    if (at === kids.length) doCopy();
    for (let j = kids.length - 1; j >= 0; j--) {
      const c = kids[j];
      await comm.send(c, 2, buf.subarray(offs[j], offs[j] + S[c] * unit));
      if (j === at) doCopy();
    }
    return own;
  };
}

function randomModel(rnd: () => number, p: number, kind: number, copyAll: boolean): CostModel {
  const g = kind === 0 ? 0 : rnd() * 2;
  if (kind <= 1) return linearModel({ alpha: int(rnd, 0, 100), beta: rnd() * 3, gamma: g, copyAll });
  if (kind === 2) {
    const m = () => Array.from({ length: p }, () => Array.from({ length: p }, () => rnd() * 50));
    return pairwiseModel({ alpha: m(), beta: m(), gamma: Array.from({ length: p }, () => rnd()), copyAll });
  }
  return hierarchicalModel({
    nodeOf: Array.from({ length: p }, () => int(rnd, 0, 3)),
    intra: { alpha: rnd() * 5, beta: rnd() },
    inter: { alpha: 20 + rnd() * 50, beta: 1 + rnd() * 3 },
    gamma: g,
    copyAll,
  });
}

async function checkTree(tree: Tree, sizes: number[], model: CostModel, unit: number): Promise<void> {
  const p = tree.p;
  const want = layoutBytes(tree, tree.root, (r) => sizes[r] * unit);
  const g = await runSim(p, gatherProgram(tree, sizes, unit, model.copyAll), { model, unitBytes: unit, ports: 'one-ported' });
  expect(g.time).toBe(evaluate(tree, sizes, model, 'gather').time);
  expect(g.results[tree.root]).toEqual(want);
  const s = await runSim(p, scatterProgram(tree, sizes, unit, model.copyAll), { model, unitBytes: unit, ports: 'one-ported' });
  expect(s.time).toBe(evaluate(tree, sizes, model, 'scatter').time);
  for (let r = 0; r < p; r++) expect(s.results[r]).toEqual(block(r, sizes[r] * unit));
}

describe('simulator: tree execution equals the evaluator (one-ported)', () => {
  it('random trees, sizes and models, p up to 64, gather and scatter', async () => {
    const rnd = rng(20261123);
    for (let iter = 0; iter < 60; iter++) {
      const p = iter < 10 ? iter + 1 : int(rnd, 1, 64);
      const root = int(rnd, 0, p - 1);
      const tree = randomTree(p, root, rnd);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 40)));
      const copyAll = rnd() < 0.3;
      const model = randomModel(rnd, p, iter % 4, copyAll);
      await checkTree(tree, sizes, model, iter % 3 === 0 ? 4 : 1);
    }
  });

  it('trees of the builders (linear, binomial, optimal, binary)', async () => {
    const rnd = rng(7);
    for (const p of [1, 2, 5, 17, 64]) {
      const sizes = Array.from({ length: p }, () => int(rnd, 0, 30));
      const model = linearModel({ alpha: 25, beta: 1, gamma: 1 });
      const root = int(rnd, 0, p - 1);
      for (const built of [
        linearTree(sizes, model, { root }),
        obliviousBinomialTree(sizes, model, { root }),
        optimalTree(sizes, model, { root }),
        optimalTree(sizes, model),
        optimalBinaryTree(sizes, model, { root }),
      ]) {
        await checkTree(built.tree, sizes, model, 1);
      }
    }
  });

  it('a non-blocking linear gather (all receives posted at once) equals the evaluator', async () => {
    const p = 50;
    const rnd = rng(3);
    const sizes = Array.from({ length: p }, () => int(rnd, 1, 20));
    const model = linearModel({ alpha: 10, beta: 1, gamma: 0.5 });
    const tree = linearTree(sizes, model, { root: 0 }).tree;
    const res = await runSim(
      p,
      async (comm) => {
        if (comm.rank !== 0) return comm.send(0, 0, block(comm.rank, sizes[comm.rank]));
        const total = sizes.reduce((a, b) => a + b, 0);
        const buf = new Uint8Array(total);
        comm.copy(buf.subarray(0, sizes[0]), block(0, sizes[0]));
        const ops = [];
        let off = sizes[0];
        for (let r = 1; r < p; r++) {
          ops.push(comm.irecv(r, 0, buf.subarray(off, off + sizes[r])));
          off += sizes[r];
        }
        await comm.waitAll(ops);
      },
      { model },
    );
    expect(tree.copyAt[0]).toBe(0);
    expect(res.time).toBe(evaluate(tree, sizes, model).time);
    expect(res.messages).toBe(p - 1);
  });
});

/**
 * Runs `ops` in order keeping at most k of them outstanding: operation j starts once fewer
 * than k of the earlier ones are unfinished — evaluate()'s greedy k-port rule (docs/MODEL.md).
 */
async function windowed(ops: readonly (() => PromiseLike<unknown>)[], k: number): Promise<void> {
  const inflight = new Set<Promise<unknown>>();
  for (const op of ops) {
    while (inflight.size >= k) await Promise.race(inflight);
    const pr: Promise<unknown> = Promise.resolve(op()).then(() => inflight.delete(pr));
    inflight.add(pr);
  }
  await Promise.all(inflight);
}

/** The local copy as a port operation: a message to oneself (charged γ, holds one port). */
const portCopy = (comm: Communicator, dst: Uint8Array, src: Uint8Array) => () =>
  comm.waitAll<unknown>([comm.isend(comm.rank, 3, src), comm.irecv(comm.rank, 3, dst)]);

/** k-ported gather executor: receives and the copy in gather order, k at a time. */
function gatherWindowProgram(tree: Tree, sizes: number[], unit: number, copyAll: boolean, k: number) {
  const S = evaluate(tree, sizes, linearModel({ alpha: 0, beta: 0 })).subtreeSize;
  return async (comm: Communicator): Promise<Uint8Array | null> => {
    const v = comm.rank;
    const kids = tree.children[v];
    const own = block(v, sizes[v] * unit);
    const copies = kids.length > 0 || copyAll || v === tree.root; // as evaluate: the root copies even alone
    const buf = copies ? new Uint8Array(S[v] * unit) : own;
    const ops: (() => PromiseLike<unknown>)[] = [];
    let off = 0;
    for (let j = 0; j <= kids.length; j++) {
      if (j === tree.copyAt[v] && copies) {
        ops.push(portCopy(comm, buf.subarray(off, off + own.length), own));
        off += own.length;
      }
      if (j === kids.length) break;
      const c = kids[j];
      const into = buf.subarray(off, off + S[c] * unit);
      ops.push(() => comm.irecv(c, 1, into));
      off += S[c] * unit;
    }
    await windowed(ops, k);
    if (tree.parent[v] >= 0) {
      await comm.send(tree.parent[v], 1, buf);
      return null;
    }
    return buf;
  };
}

/** k-ported scatter executor: receive from the parent, then the gather operations reversed, k at a time. */
function scatterWindowProgram(tree: Tree, sizes: number[], unit: number, copyAll: boolean, k: number) {
  const S = evaluate(tree, sizes, linearModel({ alpha: 0, beta: 0 })).subtreeSize;
  return async (comm: Communicator): Promise<Uint8Array> => {
    const v = comm.rank;
    const kids = tree.children[v];
    const at = tree.copyAt[v];
    const { buf, ownOff, offs } = await scatterReceive(comm, tree, sizes, unit, S);
    const copies = kids.length > 0 || copyAll || v === tree.root; // as evaluate: the root copies even alone
    const mine = sizes[v] * unit;
    const own = copies ? new Uint8Array(mine) : buf.subarray(ownOff, ownOff + mine);
    const ops: (() => PromiseLike<unknown>)[] = [];
    const copyOp = portCopy(comm, own, buf.subarray(ownOff, ownOff + mine));
    if (copies && at === kids.length) ops.push(copyOp);
    for (let j = kids.length - 1; j >= 0; j--) {
      const c = kids[j];
      const part = buf.subarray(offs[j], offs[j] + S[c] * unit);
      ops.push(() => comm.isend(c, 2, part));
      if (copies && j === at) ops.push(copyOp);
    }
    await windowed(ops, k);
    return own;
  };
}

function withPorts(model: CostModel, k: number): CostModel {
  return { ...model, ports: k, comm: model.comm, copy: model.copy };
}

describe('simulator: tree execution equals the evaluator (k ports, full duplex)', () => {
  it('k = 1, 2, 3: windowed executor with the copy as a port operation = evaluate, random trees and models', async () => {
    const rnd = rng(424242);
    for (let iter = 0; iter < 72; iter++) {
      const p = iter < 6 ? iter + 1 : int(rnd, 1, 48);
      const k = 1 + (iter % 3);
      const root = int(rnd, 0, p - 1);
      const tree = randomTree(p, root, rnd);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 40)));
      const copyAll = rnd() < 0.3;
      const model = withPorts(randomModel(rnd, p, (iter >> 1) % 4, copyAll), k);
      const unit = iter % 5 === 0 ? 2 : 1;
      const want = layoutBytes(tree, tree.root, (r) => sizes[r] * unit);
      const g = await runSim(p, gatherWindowProgram(tree, sizes, unit, copyAll, k), { model, unitBytes: unit });
      expect(g.time).toBe(evaluate(tree, sizes, model, 'gather').time);
      expect(g.results[tree.root]).toEqual(want);
      const sc = await runSim(p, scatterWindowProgram(tree, sizes, unit, copyAll, k), { model, unitBytes: unit });
      expect(sc.time).toBe(evaluate(tree, sizes, model, 'scatter').time);
      for (let r = 0; r < p; r++) expect(sc.results[r]).toEqual(block(r, sizes[r] * unit));
    }
  });

  it('k-ported adaptive and linear trees of the builders = evaluate', async () => {
    const rnd = rng(99);
    for (const k of [2, 3]) {
      for (const p of [2, 7, 30]) {
        const sizes = Array.from({ length: p }, () => int(rnd, 0, 25));
        const model = linearModel({ alpha: 20, beta: 1, gamma: 1, ports: k });
        const root = int(rnd, 0, p - 1);
        for (const built of [linearTree(sizes, model, { root }), adaptiveBinomialTree(sizes, model), adaptiveBinomialTree(sizes, model, { root })]) {
          const g = await runSim(p, gatherWindowProgram(built.tree, sizes, 1, false, k), { model });
          expect(g.time).toBe(built.time);
          const sc = await runSim(p, scatterWindowProgram(built.tree, sizes, 1, false, k), { model });
          expect(sc.time).toBe(evaluate(built.tree, sizes, model, 'scatter').time);
        }
      }
    }
  });

  it('the copy matters: with k = 2 only the copy as a port operation gives the evaluator time', async () => {
    // Root 0 with children 1, 2, copy first: evaluate lets the copy overlap the receives.
    const sizes = [10, 1, 1];
    const tree = linearTree(sizes, linearModel({ alpha: 1, beta: 1, gamma: 1 }), { root: 0 }).tree;
    const model = linearModel({ alpha: 1, beta: 1, gamma: 1, ports: 2 });
    // copy 10 on port A [0, 10]; recv 1 on port B [0, 2]; recv 2 on port B [2, 4]: C = 10.
    expect(evaluate(tree, sizes, model).time).toBe(10);
    expect((await runSim(3, gatherWindowProgram(tree, sizes, 1, false, 2), { model })).time).toBe(10);
    // comm.copy() is the processor's copy: nothing is posted before it ends, then both receives run at once.
    const processorCopy = async (comm: Communicator): Promise<void> => {
      if (comm.rank !== 0) return comm.send(0, 1, block(comm.rank, 1));
      const buf = new Uint8Array(12);
      comm.copy(buf.subarray(0, 10), block(0, 10));
      await comm.waitAll([comm.irecv(1, 1, buf.subarray(10, 11)), comm.irecv(2, 1, buf.subarray(11, 12))]);
    };
    expect((await runSim(3, processorCopy, { model })).time).toBe(12);
    // The blocking one-at-a-time executor: 10 + 2 + 2.
    expect((await runSim(3, gatherProgram(tree, sizes, 1, false), { model })).time).toBe(14);
  });

  it('a self-message copy holds a port: all-posted star = the evaluator schedule, transfer by transfer', async () => {
    const rnd = rng(31337);
    for (const k of [2, 3]) {
      for (let iter = 0; iter < 6; iter++) {
        const p = int(rnd, 3, 12);
        const sizes = Array.from({ length: p }, () => int(rnd, 1, 20));
        sizes[0] = int(rnd, 5, 60);
        const model = linearModel({ alpha: int(rnd, 0, 10), beta: 1, gamma: 1, ports: k });
        const tree = linearTree(sizes, model, { root: 0 }).tree;
        const sched = treeSchedule(tree, sizes, { model, operation: 'gather' });
        const res = await runSim(
          p,
          async (comm) => {
            if (comm.rank !== 0) return comm.send(0, 1, block(comm.rank, sizes[comm.rank]));
            const buf = new Uint8Array(sizes.reduce((a, x) => a + x, 0));
            const ops: PromiseLike<unknown>[] = [portCopy(comm, buf.subarray(0, sizes[0]), block(0, sizes[0]))()];
            let off = sizes[0];
            for (let r = 1; r < p; r++) {
              ops.push(comm.irecv(r, 1, buf.subarray(off, off + sizes[r])));
              off += sizes[r];
            }
            await comm.waitAll(ops);
          },
          { model, trace: true },
        );
        expect(res.time).toBe(sched.time);
        for (const m of res.trace?.messages ?? []) {
          if (m.from === 0) expect([m.start, m.end]).toEqual([sched.copyStart[0], sched.copyEnd[0]]);
          else expect([m.start, m.end]).toEqual([sched.edgeStart[m.from], sched.edgeEnd[m.from]]);
        }
      }
    }
  });

  it('full duplex: a gather or scatter tree never sends and receives at once, so it takes the one-ported time', async () => {
    const rnd = rng(5150);
    for (let iter = 0; iter < 30; iter++) {
      const p = int(rnd, 1, 40);
      const tree = randomTree(p, int(rnd, 0, p - 1), rnd);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.2 ? 0 : int(rnd, 1, 30)));
      const copyAll = rnd() < 0.3;
      const model = randomModel(rnd, p, iter % 4, copyAll);
      const g = await runSim(p, gatherProgram(tree, sizes, 1, copyAll), { model, ports: 'full-duplex' });
      expect(g.time).toBe(evaluate(tree, sizes, model, 'gather').time);
      const sc = await runSim(p, scatterWindowProgram(tree, sizes, 1, copyAll, 1), { model, ports: 'full-duplex' });
      expect(sc.time).toBe(evaluate(tree, sizes, model, 'scatter').time);
    }
  });
});

describe('simulator: determinism', () => {
  it('the same run twice gives the same trace (JSON-exportable)', async () => {
    const rnd = rng(11);
    const p = 40;
    const tree = randomTree(p, 3, rnd);
    const sizes = Array.from({ length: p }, () => int(rnd, 0, 9));
    const model = linearModel({ alpha: 3, beta: 1, gamma: 1 });
    const program = async (comm: Communicator) => {
      // Gather, plus a wildcard exchange and non-blocking traffic to exercise arbitration.
      await gatherProgram(tree, sizes, 1, false)(comm);
      const peer = (comm.rank + 1) % p;
      await comm.waitAll<unknown>([comm.isend(peer, 9, new Uint8Array(comm.rank % 5)), comm.irecv(ANY_SOURCE, 9, new Uint8Array(8))]);
    };
    const a = await runSim(p, program, { model, ports: 2, trace: true });
    const b = await runSim(p, program, { model, ports: 2, trace: true });
    expect(JSON.parse(JSON.stringify(a.trace))).toEqual(b.trace);
    expect(a.trace?.messages.length).toBe(a.messages);
    expect(a.finish).toEqual(b.finish);
  });
});
