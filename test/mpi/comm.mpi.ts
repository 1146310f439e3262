/**
 * Communicators over MPI (the native binding under mpirun): the same scenarios as on the
 * simulator and threads — split, nested isolation, concurrent splits, bad input on every rank,
 * splitByNode (virtual nodes), intercommunicators, ANY_TAG isolation of collectives, blocking
 * receives, receives of unknown size — at 1, 2, 3, 4 and 8 processes; a failing rank ends the
 * job with a message naming it.
 */
import { describe, expect, it } from 'vitest';
import { UNDEFINED } from '../../src/comm/communicator.js';
import { CommunicationError } from '../../src/errors.js';
import { runMpi } from '../../src/transports/mpi/run.js';
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
} from '../comm-expect.js';
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
} from '../programs/comm-scenarios.js';
import type { Step } from '../programs/comm-program.js';
import type { BlockingObservation } from '../programs/blocking-program.js';
import { int, rng } from '../helpers/random.js';

const PROGRAM = new URL('../programs/comm-program.ts', import.meta.url);

/** Runs the steps in one MPI job; result[i][r]: step i's result on rank r. */
async function batch(p: number, steps: Step[], nodes?: number[]): Promise<unknown[][]> {
  const perRank = await runMpi<unknown[]>(p, PROGRAM, { batch: steps }, { nodes });
  return steps.map((_, i) => perRank.map((r) => r[i]));
}

describe('communicators over MPI', () => {
  it.each([1, 2, 3, 4, 8])('p = %i: split, isolation, concurrent splits, bad input, byNode, intercommunicators, ANY_TAG, blocking and alloc receives', async (p) => {
    const r = rng(100 + p);
    const colors = Array.from({ length: p }, () => [UNDEFINED, 0, 3][int(r, 0, 2)]);
    const keys = Array.from({ length: p }, () => int(r, -2, 2));
    const nodes = Array.from({ length: p }, () => int(r, 0, 2));
    // Group 1 has two ranks from p = 3 on (a leader mismatch needs two).
    const two: (0 | 1)[] = Array.from({ length: p }, (_, i) => (p === 3 ? (i < 2 ? 1 : 0) : i % 2) as 0 | 1);
    const sizes = [0, 1, 8, 63, 64, 65, 200, 1500, 5000, 70000];
    const steps: Step[] = [
      { scenario: 'split', args: { colors, keys } },
      { scenario: 'isolation' },
      { scenario: 'concurrent' },
      { scenario: 'badSplit', args: { badRank: p - 1, color: -7, key: 0 } },
      { scenario: 'badArgs' },
      { scenario: 'byNode' },
      { scenario: 'anyTag' },
      { scenario: 'allocRecv', args: { sizes } },
      { scenario: 'allocRecv', args: { sizes, split: true } },
    ];
    if (p >= 2) {
      steps.push(
        { scenario: 'inter', args: { colors: two, how: 'split' } },
        { scenario: 'inter', args: { colors: two, how: 'create', sameHigh: true } },
        { scenario: 'badInter', args: { colors: two, bad: 'remoteLeader', badGroup: 0, remoteIdle: true } },
        { scenario: 'blockingRecv', args: { sizes } },
        { scenario: 'blockingRecv', args: { sizes, split: true } },
      );
    }
    if (p >= 3) steps.push({ scenario: 'badInter', args: { colors: two, bad: 'leaderMismatch', badGroup: 1, remoteIdle: false } });
    const res = await batch(p, steps, nodes);
    expectSplit(colors, keys, res[0] as (SplitObservation | null)[]);
    expectIsolation(p, res[1] as IsolationObservation[]);
    expectConcurrent(p, res[2] as RingObservation[][]);
    expectBadSplit(res[3] as (Failure | 'resolved')[], p - 1, 'color');
    expectBadArgs(res[4] as Failure[][]);
    expectByNode(nodes, res[5] as NodeObservation[]);
    expectAnyTag(p, res[6] as AnyTagObservation[]);
    expectAllocRecv(sizes, res[7] as AllocRecvObservation[]);
    expectAllocRecv(sizes, res[8] as AllocRecvObservation[]);
    if (p >= 2) {
      expectInter(two, res[9] as InterObservation[], false);
      expectInter(two, res[10] as InterObservation[], true);
      expectBadInter(two, 'remoteLeader', 0, true, res[11] as BadInterObservation[]);
      for (const step of [res[12], res[13]]) {
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
    if (p >= 3) expectBadInter(two, 'leaderMismatch', 1, false, res[14] as BadInterObservation[]);
  });

  it.each([
    [1, true],
    [2, true],
    [3, true],
    [4, true],
    [2, false],
    [3, false],
  ])('p = %i, fast path %s: blocking point-to-point (mpiBlocking): ring, ANY_SOURCE, self, bad arguments, array cache, world and split', async (p, fast) => {
    const sizes = [0, 8, 5000, 70000];
    const res = await runMpi<BlockingObservation[]>(p, new URL('../programs/blocking-program.ts', import.meta.url), { sizes }, fast ? {} : { env: { VCOLL_MPI_FAST: '0' } });
    for (let r = 0; r < p; r++) {
      res[r].forEach((o, k) => {
        expect(o.fast).toBe(fast);
        expect(o.cache, `rank ${r} comm ${k}`).toEqual({
          alternating: true,
          detachedRecvTruncates: true,
          detachedSendIsEmpty: true,
          resizableBefore: true,
          resizableShrunkTruncates: true,
        });
        const size = k === 0 ? p : r % 2 === 0 ? Math.ceil(p / 2) : Math.floor(p / 2);
        expect(o.ring, `rank ${r} comm ${k}`).toEqual(sizes.map(() => true));
        expect(o.self).toBe(true);
        expect(o.errors).toEqual(['InvalidArgumentError:dest', 'InvalidArgumentError:tag', 'InvalidArgumentError:data']);
        if (o.anySource !== null) expect(o.anySource).toEqual({ source: size - 1, tag: 9, bytes: 11 });
      });
    }
  });

  it('receives left pending when the program returns are cancelled: the job ends cleanly', async () => {
    expect(await runMpi<number>(3, new URL('../programs/pending-recv.ts', import.meta.url))).toEqual([0, 1, 2]);
  });

  it('a rank failing after a split ends the job (MPI_Abort) with a message naming it', async () => {
    const t0 = Date.now();
    const e = await runMpi(4, PROGRAM, { batch: [{ scenario: 'failure', args: { rank: 1 } }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as CommunicationError).rank).toBe(1);
    expect((e as CommunicationError).message).toMatch(/rank 1 failed: .*boom in a sub-communicator/);
    expect(Date.now() - t0).toBeLessThan(60_000);
  });
});
