/**
 * Adaptive gatherv/scatterv on worker threads with ranks whose own counts disagree with the
 * root's counts although every range total agrees (Traff18 Lemma 3 reports only totals): the
 * root rejects the run with InvalidArgumentError on 'counts' (the count checksum of
 * adaptive/decide.ts), the other ranks fail with a CommunicationError, nobody hangs.
 */
import { describe, expect, it } from 'vitest';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { runThreads } from '../src/transports/threads/index.js';
import type { OwnCountsArgs } from './programs/adaptive-own-counts.js';

const program = new URL('./programs/adaptive-own-counts.ts', import.meta.url);

describe('adaptive gatherv/scatterv on threads: count errors that cancel within a range', () => {
  for (const op of ['gatherv', 'scatterv'] as const) {
    for (const overlap of op === 'gatherv' ? [true, false] : [false]) {
      it(`${op}${op === 'gatherv' ? `, overlap ${overlap}` : ''}: counts [2, 2, 5, 2], ranks 2 and 3 pass 4 and 3`, async () => {
        const args: OwnCountsArgs = { inst: { sizes: [2, 2, 5, 2], root: 0, unitBytes: 1 }, own: [2, 2, 4, 3], op, overlap };
        const err = await runThreads<string[]>(4, program, args).then(
          (res) => res,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(CommunicationError);
        const cause = (err as CommunicationError).cause as InvalidArgumentError;
        expect(cause).toBeInstanceOf(InvalidArgumentError);
        expect(cause.field).toBe('counts');
        expect(cause.rank).toBe(0);
      }, 60_000);
    }
  }
});

describe('count checksum (adaptive/decide.ts)', () => {
  it('joined ranges add up to the prefix checksum, and an error confined to two ranks always changes it', async () => {
    const { addChecks, checkPrefix, countCheck, rangeCheck, CHECK_MOD } = await import('../src/collectives/adaptive/decide.js');
    let s = 12345;
    const rnd = (n: number): number => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return s % n;
    };
    for (let t = 0; t < 200; t++) {
      const p = 2 + rnd(3000);
      const counts = Array.from({ length: p }, () => (rnd(4) === 0 ? rnd(2 ** 31) * 4096 : rnd(1000)));
      const prefix = checkPrefix(counts);
      let acc = 0;
      for (let i = 0; i < p; i++) acc = addChecks(acc, countCheck(i, counts[i]));
      expect(acc).toBe(rangeCheck(prefix, 0, p - 1));
      const a = rnd(p);
      const b = (a + 1 + rnd(p - 1)) % p;
      if (counts[b] === 0) continue;
      const k = 1 + rnd(Math.min(counts[b], CHECK_MOD - 1)); // b keeps a non-negative count
      const moved = counts.slice();
      moved[a] += k;
      moved[b] -= k;
      const lo = Math.min(a, b);
      const hi = Math.max(a, b);
      let sum = 0;
      for (let i = lo; i <= hi; i++) sum = addChecks(sum, countCheck(i, moved[i]));
      expect(sum).not.toBe(rangeCheck(prefix, lo, hi));
    }
  });
});
