/**
 * Communicators on the worker-threads transport: context ids travel in the channel header, so
 * split / nested split / intercommunicator traffic with identical tags never mixes, and a user
 * ANY_TAG receive never takes a collective's message; bad createIntercomm arguments reject
 * without hanging; the same scenarios as the in-memory and simulator tests, p ≤ 8.
 */
import { describe, expect, it } from 'vitest';
import { UNDEFINED } from '../src/comm/communicator.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { runThreads } from '../src/transports/threads/run.js';
import {
  expectAllocRecv,
  expectAnyTag,
  expectBadArgs,
  expectBadInter,
  expectBadSplit,
  expectByNode,
  expectConcurrent,
  expectInter,
  expectIsolation,
  expectSplit,
} from './comm-expect.js';
import type {
  AllocRecvObservation,
  AnyTagObservation,
  BadInterObservation,
  BlockingRecvObservation,
  Failure,
  InterObservation,
  IsolationObservation,
  NodeObservation,
  RingObservation,
  SplitObservation,
} from './programs/comm-scenarios.js';
import type { Step } from './programs/comm-program.js';
import { int, rng } from './helpers/random.js';

const PROGRAM = new URL('./programs/comm-program.ts', import.meta.url);

/** Runs the steps in one threads run; result[i][r]: step i's result on rank r. */
async function batch(p: number, steps: Step[], nodes?: number[]): Promise<unknown[][]> {
  const perRank = await runThreads<unknown[]>(p, PROGRAM, { batch: steps }, { channelBytes: 1024, nodes });
  return steps.map((_, i) => perRank.map((r) => r[i]));
}

describe('communicators on threads', () => {
  it('p = 7: split, nested isolation, concurrent splits, bad input, splitByNode, intercommunicators', async () => {
    const p = 7;
    const r = rng(11);
    const colors = Array.from({ length: p }, () => [UNDEFINED, 0, 3][int(r, 0, 2)]);
    const keys = Array.from({ length: p }, () => int(r, -2, 2));
    const nodes = [1, 0, 1, 2, 0, 1, 2];
    const two: (0 | 1)[] = [1, 0, 0, 1, 1, 0, 1];
    const res = await batch(
      p,
      [
        { scenario: 'split', args: { colors, keys } },
        { scenario: 'isolation' },
        { scenario: 'concurrent' },
        { scenario: 'badSplit', args: { badRank: 2, color: -7, key: 0 } },
        { scenario: 'badArgs' },
        { scenario: 'byNode' },
        { scenario: 'inter', args: { colors: two, how: 'split' } },
        { scenario: 'inter', args: { colors: two, how: 'create', sameHigh: true } },
        { scenario: 'anyTag' },
        { scenario: 'badInter', args: { colors: two, bad: 'remoteLeader', badGroup: 0, remoteIdle: true } },
        { scenario: 'badInter', args: { colors: two, bad: 'leaderMismatch', badGroup: 1, remoteIdle: false } },
      ],
      nodes,
    );
    expectSplit(colors, keys, res[0] as (SplitObservation | null)[]);
    expectIsolation(p, res[1] as IsolationObservation[]);
    expectConcurrent(p, res[2] as RingObservation[][]);
    expectBadSplit(res[3] as (Failure | 'resolved')[], 2, 'color');
    expectBadArgs(res[4] as Failure[][]);
    expectByNode(nodes, res[5] as NodeObservation[]);
    expectInter(two, res[6] as InterObservation[], false);
    expectInter(two, res[7] as InterObservation[], true);
    expectAnyTag(p, res[8] as AnyTagObservation[]);
    expectBadInter(two, 'remoteLeader', 0, true, res[9] as BadInterObservation[]);
    expectBadInter(two, 'leaderMismatch', 1, false, res[10] as BadInterObservation[]);
  });

  it('p = 1 and p = 8: split and isolation', async () => {
    for (const p of [1, 8]) {
      const colors = Array.from({ length: p }, (_, i) => (i * 5) % 3);
      const keys = Array.from({ length: p }, (_, i) => -i % 2);
      const res = await batch(p, [{ scenario: 'split', args: { colors, keys } }, { scenario: 'isolation' }]);
      expectSplit(colors, keys, res[0] as (SplitObservation | null)[]);
      expectIsolation(p, res[1] as IsolationObservation[]);
    }
  });

  it('blocking recv (watched before it posts): recv-before-send rings, out-of-order tags, world and split', async () => {
    const sizes = [0, 1, 8, 63, 64, 65, 200, 1500, 5000, 8];
    for (const p of [2, 5]) {
      const res = await batch(p, [
        { scenario: 'blockingRecv', args: { sizes } },
        { scenario: 'blockingRecv', args: { sizes, split: true } },
      ]);
      for (const step of res) {
        for (const o of step as BlockingRecvObservation[]) {
          const left = (o.rank - 1 + o.size) % o.size;
          expect(o.ring).toEqual(sizes.map(() => true));
          expect(o.outOfOrder).toEqual([true, true]);
          expect(o.statuses).toEqual([
            { source: left, tag: 2, bytes: 9 },
            { source: left, tag: 1, bytes: 70 },
          ]);
        }
      }
    }
  });

  it('irecvAlloc: posted before and after the message (ring of 1 KiB), ANY_SOURCE, to oneself, maxBytes; world and split', async () => {
    const sizes = [0, 1, 63, 64, 65, 1500, 5000, 70000];
    for (const p of [2, 5]) {
      const res = await batch(p, [
        { scenario: 'allocRecv', args: { sizes } },
        { scenario: 'allocRecv', args: { sizes, split: true } },
      ]);
      for (const step of res) expectAllocRecv(sizes, step as AllocRecvObservation[]);
    }
  });

  it('a blocking recv watching its channel leaves a message with another tag to a later receive', async () => {
    const flag = new SharedArrayBuffer(4);
    const wrong = await runThreads<number>(2, new URL('./programs/recv-watch.ts', import.meta.url), { flag, rounds: 300 }, { channelBytes: 1024 });
    expect(wrong).toEqual([0, 0]);
  });

  it('a rank failing after a split fails every rank fast, naming it', async () => {
    const t0 = Date.now();
    const e = await runThreads(4, PROGRAM, { batch: [{ scenario: 'failure', args: { rank: 1 } }] }, { failureGraceMs: 20_000 }).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(1);
    expect((e as CommunicationError).message).toMatch(/rank 1 failed: boom in a sub-communicator/);
    expect(Date.now() - t0).toBeLessThan(15_000); // not the grace period
  });

  it('rejects a nodes option of the wrong length', async () => {
    await expect(runThreads(2, PROGRAM, { batch: [] }, { nodes: [0] })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
