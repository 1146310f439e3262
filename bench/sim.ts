/**
 * Simulator throughput: simulated messages per second (goal >= 1e6/s) for gathers at p = 8000.
 *
 *   npx tsx bench/sim.ts [--p 8000] [--b 100] [--reps 3]
 *
 * Runs a linear gather (blocking receives in rank order, and all receives posted at once) and
 * a binomial gather (tree executor: receive from the children in order, then send to the
 * parent), checks the virtual time against the evaluator, and prints wall time and messages/s.
 */
import type { Communicator } from '../src/comm/communicator.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { obliviousBinomialTree } from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import type { Tree } from '../src/trees/tree.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const p = arg('p', 8000);
const b = arg('b', 100);
const reps = arg('reps', 3);
const sizes = Array.from({ length: p }, (_, i) => 1 + ((i * 7919) % (2 * b)));
const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });

function treeGather(tree: Tree, S: Float64Array) {
  return async (comm: Communicator): Promise<void> => {
    const v = comm.rank;
    const kids = tree.children[v];
    const own = new Uint8Array(sizes[v]);
    const buf = kids.length > 0 ? new Uint8Array(S[v]) : own;
    let off = 0;
    for (let j = 0; j < kids.length; j++) {
      if (j === tree.copyAt[v]) {
        comm.copy(buf.subarray(off, off + own.length), own);
        off += own.length;
      }
      const c = kids[j];
      await comm.recv(c, 0, buf.subarray(off, off + S[c]));
      off += S[c];
    }
    if (kids.length > 0 && tree.copyAt[v] === kids.length) comm.copy(buf.subarray(off, off + own.length), own);
    if (tree.parent[v] >= 0) await comm.send(tree.parent[v], 0, buf);
  };
}

function linearPosted(root: number) {
  const total = sizes.reduce((a, x) => a + x, 0);
  return async (comm: Communicator): Promise<void> => {
    const v = comm.rank;
    if (v !== root) return comm.send(root, 0, new Uint8Array(sizes[v]));
    const buf = new Uint8Array(total);
    const ops: Promise<unknown>[] = [];
    let off = 0;
    for (let r = 0; r < p; r++) {
      if (r === root) comm.copy(buf.subarray(off, off + sizes[r]), new Uint8Array(sizes[r]));
      else ops.push(comm.irecv(r, 0, buf.subarray(off, off + sizes[r])));
      off += sizes[r];
    }
    await comm.waitAll(ops);
  };
}

async function bench(name: string, program: (c: Communicator) => Promise<void>, expected: number | undefined): Promise<void> {
  let best = Infinity;
  let messages = 0;
  let time = 0;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const res = await runSim(p, program, { model });
    const dt = (performance.now() - t0) / 1000;
    best = Math.min(best, dt);
    messages = res.messages;
    time = res.time;
  }
  const check = expected === undefined ? '' : time === expected ? ' (= evaluator)' : ` (evaluator says ${expected}!)`;
  console.log(
    `${name.padEnd(28)} p=${p} messages=${messages} virtual time=${time}${check} wall=${best.toFixed(3)}s ` +
      `${Math.round(messages / best).toLocaleString('en-US')} msg/s`,
  );
}

const lin = linearTree(sizes, model, { root: 0 }).tree;
const bin = obliviousBinomialTree(sizes, model, { root: 0 }).tree;
const evLin = evaluate(lin, sizes, model);
const evBin = evaluate(bin, sizes, model);
await bench('linear gather (blocking)', treeGather(lin, evLin.subtreeSize), evLin.time);
await bench('linear gather (all posted)', linearPosted(0), evLin.time);
await bench('binomial gather', treeGather(bin, evBin.subtreeSize), evBin.time);
