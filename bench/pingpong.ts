/**
 * Ping-pong latency and bandwidth of the threads transport (runThreads + ThreadsCommunicator
 * over SPSC SharedArrayBuffer channels) against a bare SharedArrayBuffer + Atomics.wait/notify
 * ping-pong between two worker threads, measured in the same run. The bare baseline runs twice:
 * blocking in Atomics.wait at once, and after the same bounded spin (2000 loads) the
 * communicator does before it sleeps in Atomics.waitAsync.
 *
 *   npx tsx bench/pingpong.ts [--quick] [--ring BYTES]   (channel ring size, default 64 KiB)
 *
 * This file is also the rank program that runThreads loads (its default export).
 */

import { isMainThread, Worker } from 'node:worker_threads';
import type { Communicator } from '../src/comm/communicator.js';
import { runThreads } from '../src/transports/threads/run.js';

interface Args {
  readonly bytes: number;
  readonly iterations: number;
  readonly warmup: number;
}

/** Rank program: rank 0 pings rank 1; returns the mean round trip in ns (rank 0). */
export default async function pingpong(comm: Communicator, args: Args): Promise<number> {
  const buf = new Uint8Array(args.bytes).fill(comm.rank + 1);
  const peer = 1 - comm.rank;
  let t0 = 0n;
  for (let i = 0; i < args.warmup + args.iterations; i++) {
    if (i === args.warmup) t0 = process.hrtime.bigint();
    if (comm.rank === 0) {
      await comm.send(peer, 0, buf);
      await comm.recv(peer, 0, buf);
    } else {
      await comm.recv(peer, 0, buf);
      await comm.send(peer, 0, buf);
    }
  }
  return Number(process.hrtime.bigint() - t0) / args.iterations;
}

/**
 * The baseline: two workers share a flag word and a data area of `bytes`; each copies the
 * message in, flips the flag, notifies and blocks in Atomics.wait for the reply.
 */
const BARE = `
const { workerData, parentPort } = require('node:worker_threads');
const { sab, side, bytes, iterations, warmup, spin } = workerData;
const flag = new Int32Array(sab, 0, 1);
const shared = new Uint8Array(sab, 8, Math.max(bytes, 1)).subarray(0, bytes);
const local = new Uint8Array(bytes).fill(side + 1);
let t0 = 0n;
const waitFor = (target) => {
  for (let i = 0; i < spin; i++) if (Atomics.load(flag, 0) === target) return;
  let v; while ((v = Atomics.load(flag, 0)) !== target) Atomics.wait(flag, 0, v);
};
for (let i = 0; i < warmup + iterations; i++) {
  if (i === warmup) t0 = process.hrtime.bigint();
  if (side === 0) {
    shared.set(local); Atomics.store(flag, 0, 2 * i + 1); Atomics.notify(flag, 0);
    waitFor(2 * i + 2);
    local.set(shared);
  } else {
    waitFor(2 * i + 1);
    local.set(shared);
    shared.set(local); Atomics.store(flag, 0, 2 * i + 2); Atomics.notify(flag, 0);
  }
}
parentPort.postMessage(Number(process.hrtime.bigint() - t0) / iterations);
`;

async function bare(args: Args, spin: number): Promise<number> {
  const sab = new SharedArrayBuffer(8 + Math.max(args.bytes, 1));
  const run = (side: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const w = new Worker(BARE, { eval: true, workerData: { sab, side, spin, ...args } });
      w.once('message', (ns: number) => {
        resolve(ns);
        void w.terminate();
      });
      w.once('error', reject);
    });
  const [ns] = await Promise.all([run(0), run(1)]);
  return ns;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const cases: Args[] = [
    { bytes: 8, iterations: quick ? 2000 : 20000, warmup: 500 },
    { bytes: 64 * 1024, iterations: quick ? 300 : 3000, warmup: 100 },
    { bytes: 4 * 1024 * 1024, iterations: quick ? 20 : 100, warmup: 5 },
  ];
  const self = new URL(import.meta.url);
  const ringAt = process.argv.indexOf('--ring');
  const channelBytes = ringAt > 0 ? Number(process.argv[ringAt + 1]) : 64 * 1024;
  console.log(`channel ring: ${channelBytes} bytes`);
  const us = (ns: number): string => (ns / 1000).toFixed(2).padStart(9);
  console.log('size      | bare wait µs | bare spin+wait µs | channel µs | ratio vs wait | ratio vs spin+wait | GB/s wait / spin / channel');
  for (const c of cases) {
    const oneWait = (await bare(c, 0)) / 2;
    const oneSpin = (await bare(c, 2000)) / 2;
    const [chanRtt] = await runThreads<number>(2, self, c, { channelBytes });
    const oneChan = chanRtt / 2;
    const label = c.bytes >= 1 << 20 ? `${c.bytes >> 20} MiB` : c.bytes >= 1024 ? `${c.bytes >> 10} KiB` : `${c.bytes} B`;
    console.log(
      `${label.padEnd(9)} | ${us(oneWait)}    | ${us(oneSpin)}         | ${us(oneChan)}  | ${(oneChan / oneWait).toFixed(2).padStart(13)} | ` +
        `${(oneChan / oneSpin).toFixed(2).padStart(18)} | ${(c.bytes / oneWait).toFixed(2)} / ${(c.bytes / oneSpin).toFixed(2)} / ${(c.bytes / oneChan).toFixed(2)}`,
    );
  }
}

if (isMainThread) await main();
