/**
 * `npm run bench:sim`: throughput of the virtual-time simulator (goal: ≥ 10⁶
 * simulated messages per second) and the wall time of an adaptive gatherv at p = 8000.
 *
 *   npm run bench:sim -- [--p 8000 --rounds 20 --fan 4 --bytes 8 --reps 3 --b 100 --seed 1 --sweep 64,1000]
 *
 * (a) Message-heavy: `rounds` rounds of pairwise exchanges at p ranks (round i: every rank
 *     sends `bytes` bytes to r + d_i and receives from r − d_i, then waits for both), α = 100,
 *     β = 1, one-ported; and the same with `fan` partners per round (one waitAll of 2·fan
 *     operations). Prints simulated messages per second (best of `reps`), the goal ratio
 *     measured / 10⁶, and the *promise floor*: the same rank programs run against a stub
 *     communicator that completes every operation at once (no simulator at all), i.e. what
 *     the programs' own promises cost — no simulator can be faster than that.
 * (a'') The same two patterns at the smaller p of `--sweep`, with rounds scaled so every run
 *     simulates as many messages as at p, with their promise floors: how the rate depends on
 *     p (at large p the simulator's working set outgrows the caches and the collector has
 *     more to move).
 * (a') For reference, patterns bound by one macrotask turn per distinct virtual time: a
 *     linear gather (blocking receives in rank order, and all receives posted at once) and a
 *     binomial gather tree, each checked against the evaluator.
 * (b) An adaptive gatherv (Traff18) at p ranks, b = `b`, random distribution, through
 *     `gatherv(comm, …, { algorithm: 'adaptive' })`: wall time, messages, virtual time, and
 *     whether the root's buffer is right. Skipped, saying so, while collectives/ does not
 *     offer 'adaptive'.
 */
import { Command } from 'commander';
import { parseIntegerOption } from '../src/cli/options.js';
import { BaseCommunicator, type Communicator, type Received, type Status } from '../src/comm/communicator.js';
import { OpRequest, type Request } from '../src/comm/request.js';
import { GATHERV_VARIANTS, gatherv } from '../src/collectives/index.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import type { SimResult } from '../src/transports/sim/index.js';
import { obliviousBinomialTree } from '../src/trees/binomial.js';
import { evaluate } from '../src/trees/evaluate.js';
import { linearTree } from '../src/trees/linear.js';
import type { Tree } from '../src/trees/tree.js';
import { blockSizes } from '../src/workloads/distributions.js';

const GOAL = 1e6;
const model = linearModel({ alpha: 100, beta: 1, gamma: 1 });

interface Options {
  p: number;
  rounds: number;
  sweep: string;
  fan: number;
  bytes: number;
  reps: number;
  b: number;
  seed: number;
}

interface Measured<T> {
  wall: number;
  res: SimResult<T>;
}

async function best<T>(reps: number, run: () => Promise<SimResult<T>>): Promise<Measured<T>> {
  let out: Measured<T> | undefined;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const res = await run();
    const wall = (performance.now() - t0) / 1000;
    if (out === undefined || wall < out.wall) out = { wall, res };
  }
  return out as Measured<T>;
}

const rate = (m: Measured<unknown>): number => m.res.messages / m.wall;
const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');

function line(name: string, m: Measured<unknown>, extra = ''): void {
  console.log(
    `${name.padEnd(34)} messages=${String(m.res.messages).padStart(7)} virtual=${String(m.res.time).padStart(9)} ` +
      `wall=${m.wall.toFixed(3)}s ${fmt(rate(m)).padStart(10)} msg/s${extra}`,
  );
}

/** Round i: send to r + d, receive from r − d for `fan` distances d, then wait for all. */
function exchange(o: Options, fan: number) {
  const { p, rounds, bytes } = o;
  return async (comm: Communicator): Promise<number> => {
    const r = comm.rank;
    const out = new Uint8Array(bytes).fill(r & 255);
    const into = Array.from({ length: fan }, () => new Uint8Array(bytes));
    const ops: Request<unknown>[] = new Array(2 * fan);
    let sum = 0;
    for (let i = 0; i < rounds; i++) {
      for (let f = 0; f < fan; f++) {
        const d = 1 + (((i * fan + f) * 7919) % (p - 1));
        ops[2 * f] = comm.isend((r + d) % p, f, out);
        ops[2 * f + 1] = comm.irecv((r - d + p) % p, f, into[f]);
      }
      await comm.waitAll(ops);
      sum += into[0][0];
    }
    return sum;
  };
}

/**
 * The promise floor: a Communicator whose operations all complete in the next macrotask
 * turn, in one batch (what the simulator does at best), with no matching, ports or clock.
 */
interface Batch {
  requests: OpRequest<unknown>[];
  values: unknown[];
  messages: number;
}

class InstantComm extends BaseCommunicator {
  constructor(
    readonly rank: number,
    readonly size: number,
    private readonly batch: Batch,
  ) {
    super();
  }
  private op<T>(v: T): Request<T> {
    const req = new OpRequest<T>();
    this.batch.requests.push(req as OpRequest<unknown>);
    this.batch.values.push(v);
    return req;
  }
  isend(): Request<void> {
    this.batch.messages++;
    return this.op(undefined);
  }
  irecv(source: number, tag: number, into: Uint8Array): Request<Status> {
    return this.op({ source, tag, bytes: into.length });
  }
  irecvAlloc(source: number, tag: number): Request<Received> {
    return this.op({ source, tag, bytes: 0, data: new Uint8Array(0) });
  }
  copy(dst: Uint8Array, src: Uint8Array): void {
    dst.set(src);
  }
  nodeOf(): number {
    return 0;
  }
  split(): Promise<Communicator | null> {
    return Promise.reject(new Error('not in the floor benchmark'));
  }
  splitByNode(): Promise<Communicator> {
    return Promise.reject(new Error('not in the floor benchmark'));
  }
}

async function floor(p: number, program: (c: Communicator) => Promise<unknown>): Promise<SimResult<unknown>> {
  const batch: Batch = { requests: [], values: [], messages: 0 };
  let done = 0;
  for (let r = 0; r < p; r++) void program(new InstantComm(r, p, batch)).then(() => done++);
  while (done < p) {
    await new Promise((resolve) => setImmediate(resolve));
    const { requests, values } = batch;
    batch.requests = [];
    batch.values = [];
    for (let i = 0; i < requests.length; i++) requests[i].resolve(values[i]);
  }
  return { time: 0, finish: [], results: [], messages: batch.messages, bytes: 0 };
}

function treeGather(tree: Tree, sizes: readonly number[], S: Float64Array) {
  return async (comm: Communicator): Promise<void> => {
    const v = comm.rank;
    const kids = tree.children[v];
    const own = new Uint8Array(sizes[v]);
    const buf = kids.length > 0 ? new Uint8Array(S[v]) : own;
    let off = 0;
    for (let j = 0; j <= kids.length; j++) {
      if (j === tree.copyAt[v] && kids.length > 0) {
        comm.copy(buf.subarray(off, off + own.length), own);
        off += own.length;
      }
      if (j === kids.length) break;
      const c = kids[j];
      await comm.recv(c, 0, buf.subarray(off, off + S[c]));
      off += S[c];
    }
    if (tree.parent[v] >= 0) await comm.send(tree.parent[v], 0, buf);
  };
}

function linearPosted(p: number, sizes: readonly number[]) {
  const total = sizes.reduce((a, x) => a + x, 0);
  return async (comm: Communicator): Promise<void> => {
    const v = comm.rank;
    if (v !== 0) return comm.send(0, 0, new Uint8Array(sizes[v]));
    const buf = new Uint8Array(total);
    comm.copy(buf.subarray(0, sizes[0]), new Uint8Array(sizes[0]));
    const ops: Request<unknown>[] = [];
    let off = sizes[0];
    for (let r = 1; r < p; r++) {
      ops.push(comm.irecv(r, 0, buf.subarray(off, off + sizes[r])));
      off += sizes[r];
    }
    await comm.waitAll(ops);
  };
}

async function adaptiveGatherv(o: Options): Promise<void> {
  if (!GATHERV_VARIANTS.some((v) => v.name === 'adaptive')) {
    console.log(`(b) adaptive gatherv p=${o.p}: skipped — collectives/ does not offer gatherv 'adaptive' yet`);
    return;
  }
  const p = o.p;
  const counts = blockSizes('random', { p, b: o.b, seed: o.seed });
  const displs: number[] = [];
  let total = 0;
  for (const c of counts) {
    displs.push(total);
    total += c;
  }
  const byteOf = (r: number, q: number): number => (r * 131 + q) & 255;
  const root = Math.floor(p / 2);
  let recvBuf: Uint8Array | undefined;
  const program = async (comm: Communicator): Promise<void> => {
    const r = comm.rank;
    const send = new Uint8Array(counts[r]);
    for (let q = 0; q < send.length; q++) send[q] = byteOf(r, q);
    if (r === root) {
      recvBuf = new Uint8Array(total);
      await gatherv(comm, { root, send, recv: recvBuf, counts, displs }, { algorithm: 'adaptive', model });
    } else {
      await gatherv(comm, { root, send }, { algorithm: 'adaptive', model });
    }
  };
  const m = await best(o.reps, () => runSim(p, program, { model }));
  let ok = recvBuf !== undefined;
  for (let r = 0; ok && r < p; r++) {
    for (let q = 0; q < counts[r]; q++) {
      if ((recvBuf as Uint8Array)[displs[r] + q] !== byteOf(r, q)) {
        ok = false;
        break;
      }
    }
  }
  line(`(b) adaptive gatherv p=${p} b=${o.b} random`, m, ` root=${root} ${ok ? 'verified' : 'WRONG DATA'}`);
}

async function main(o: Options): Promise<void> {
  const { p } = o;
  console.log(`simulator benchmark: p=${p}, model α=100 β=1 γ=1, one-ported, best of ${o.reps}`);
  for (const fan of [1, o.fan]) {
    const name = fan === 1 ? `(a) pairwise exchanges ×${o.rounds}` : `(a) ${fan} partners per round ×${o.rounds}`;
    const heavy = await best(o.reps, () => runSim(p, exchange(o, fan), { model }));
    line(name, heavy);
    const fl = await best(o.reps, () => floor(p, exchange(o, fan)));
    console.log(
      `    goal ratio (measured / 1e6 msg/s): ${(rate(heavy) / GOAL).toFixed(2)}; promise floor ${fmt(rate(fl))} msg/s, ` +
        `simulator at ${((100 * rate(heavy)) / rate(fl)).toFixed(0)}% of it`,
    );
  }

  for (const q of o.sweep.split(',').filter((x) => x.trim() !== '').map(Number)) {
    if (!Number.isInteger(q) || q < 2) throw new Error(`--sweep: ${q} is not an integer >= 2`);
    const scaled = { ...o, p: q, rounds: Math.max(1, Math.round((o.rounds * p) / q)) };
    for (const fan of [1, o.fan]) {
      const m = await best(o.reps, () => runSim(q, exchange(scaled, fan), { model }));
      const fl = await best(o.reps, () => floor(q, exchange(scaled, fan)));
      line(
        `(a'') p=${q} ${fan === 1 ? 'pairwise' : `${fan} partners`} ×${scaled.rounds}`,
        m,
        `  goal ratio ${(rate(m) / GOAL).toFixed(2)}; floor ${fmt(rate(fl))} msg/s`,
      );
    }
  }

  const sizes = Array.from({ length: p }, (_, i) => 1 + ((i * 7919) % (2 * o.b)));
  const lin = linearTree(sizes, model, { root: 0 }).tree;
  const bin = obliviousBinomialTree(sizes, model, { root: 0 }).tree;
  const evLin = evaluate(lin, sizes, model);
  const evBin = evaluate(bin, sizes, model);
  const check = (m: Measured<unknown>, want: number): string => (m.res.time === want ? ' (= evaluator)' : ` (evaluator: ${want}!)`);
  const l1 = await best(o.reps, () => runSim(p, treeGather(lin, sizes, evLin.subtreeSize), { model }));
  line("(a') linear gather, blocking", l1, check(l1, evLin.time));
  const l2 = await best(o.reps, () => runSim(p, linearPosted(p, sizes), { model }));
  line("(a') linear gather, all posted", l2, check(l2, evLin.time));
  const b1 = await best(o.reps, () => runSim(p, treeGather(bin, sizes, evBin.subtreeSize), { model }));
  line("(a') binomial gather tree", b1, check(b1, evBin.time));

  await adaptiveGatherv(o);
}

const cmd = new Command('bench:sim')
  .option('--p <n>', 'ranks', parseIntegerOption('p', 2), 8000)
  .option('--rounds <n>', 'exchange rounds of (a)', parseIntegerOption('rounds', 1), 20)
  .option('--fan <n>', 'partners per round of the second pattern of (a)', parseIntegerOption('fan', 1), 4)
  .option('--bytes <n>', 'bytes per message of (a)', parseIntegerOption('bytes', 0), 8)
  .option('--reps <n>', 'repetitions (best is reported)', parseIntegerOption('reps', 1), 3)
  .option('--b <n>', 'average block of (b) and (a\')', parseIntegerOption('b', 1), 100)
  .option('--seed <n>', 'seed of the random distribution of (b)', parseIntegerOption('seed', 0), 1)
  .option('--sweep <list>', "smaller p for (a''), comma-separated ('' for none)", '64,1000');
cmd.parse();
await main(cmd.opts<Options>());
