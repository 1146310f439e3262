/**
 * What the scenarios of test/programs/comm-scenarios.ts must observe, computed from their
 * arguments alone (shared by the in-memory, simulator and threads tests).
 */
import { expect } from 'vitest';
import { UNDEFINED } from '../src/comm/communicator.js';
import type {
  AllocRecvObservation,
  AnyTagObservation,
  BadInterArg,
  BadInterObservation,
  Failure,
  InterObservation,
  IsolationObservation,
  NodeObservation,
  RingObservation,
  SplitObservation,
} from './programs/comm-scenarios.js';

/** MPI_Comm_split's group of `rank`: same color, ordered by key then rank. */
export function splitGroup(colors: readonly number[], keys: readonly number[], rank: number): number[] {
  const members = colors.map((_, i) => i).filter((i) => colors[i] === colors[rank]);
  return members.sort((a, b) => keys[a] - keys[b] || a - b);
}

export function expectSplit(
  colors: readonly number[],
  keys: readonly number[],
  got: readonly (SplitObservation | null)[],
): void {
  expect(got.length).toBe(colors.length);
  got.forEach((o, r) => {
    if (colors[r] === UNDEFINED) {
      expect(o).toBeNull();
      return;
    }
    const members = splitGroup(colors, keys, r);
    expect(o).toEqual({ rank: members.indexOf(r), size: members.length, members });
  });
}

function expectRing(ring: RingObservation, marker: number, members: readonly number[], rank: number): void {
  const from = (rank - 1 + members.length) % members.length;
  expect(ring).toEqual({ source: from, marker, world: members[from] });
}

export function expectIsolation(p: number, got: readonly IsolationObservation[]): void {
  const world = Array.from({ length: p }, (_, i) => i);
  got.forEach((o, r) => {
    const a = splitGroup(
      world.map((i) => i % 2),
      world.map((i) => -i),
      r,
    );
    const ar = a.indexOf(r);
    const half = (x: number): number => (x < a.length / 2 ? 0 : 1);
    const b = a.filter((_, i) => half(i) === half(ar));
    const groups = [world, a, b];
    expect(o.levels.length).toBe(3);
    o.levels.forEach((lv, i) => {
      const rank = groups[i].indexOf(r);
      expect(lv.members).toEqual(groups[i]);
      expect(lv.rank).toBe(rank);
      expect(lv.size).toBe(groups[i].length);
      expectRing(lv.ring, i, groups[i], rank);
    });
  });
}

export function expectConcurrent(p: number, got: readonly RingObservation[][]): void {
  const world = Array.from({ length: p }, (_, i) => i);
  got.forEach((rings, r) => {
    const parity = world.filter((i) => i % 2 === r % 2);
    const groups = [world, world, parity];
    rings.forEach((ring, i) => expectRing(ring, i, groups[i], groups[i].indexOf(r)));
  });
}

export function expectBadSplit(got: readonly (Failure | 'resolved')[], badRank: number, field: string): void {
  got.forEach((f, r) => {
    expect(f).not.toBe('resolved');
    const e = f as Failure;
    expect(e.name).toBe('InvalidArgumentError');
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.field).toBe(field);
    expect(e.rank).toBe(r);
    expect(e.message).toContain(`rank ${badRank} passed`);
  });
}

export function expectByNode(nodes: readonly number[], got: readonly NodeObservation[]): void {
  got.forEach((o, r) => {
    const members = nodes.map((_, i) => i).filter((i) => nodes[i] === nodes[r]);
    expect(o).toEqual({ node: nodes[r], rank: members.indexOf(r), members, nodesSeen: members.map(() => nodes[r]) });
  });
}

export function expectInter(colors: readonly (0 | 1)[], got: readonly InterObservation[], sameHigh: boolean): void {
  const groups = [0, 1].map((c) => colors.map((_, i) => i).filter((i) => colors[i] === c));
  // merge: high = (color 1) puts color 0 first; with the same `high` the group holding world rank 0 goes first.
  const first = sameHigh ? colors[0] : 0;
  const merged = [...groups[first], ...groups[1 - first]];
  got.forEach((o, r) => {
    const mine = groups[colors[r]];
    const theirs = groups[1 - colors[r]];
    expect(o.rank).toBe(mine.indexOf(r));
    expect(o.size).toBe(mine.length);
    expect(o.remoteSize).toBe(theirs.length);
    expect(o.localMembers).toEqual(mine);
    expect(o.remoteMembers).toEqual(theirs);
    expect(o.wildcard).toEqual(theirs.map((w, i) => ({ source: i, world: w })));
    expect(o.merged).toEqual({ rank: merged.indexOf(r), members: merged });
    expect(o.errors.map((e) => [e.code, e.field, e.rank])).toEqual([
      ['INVALID_ARGUMENT', 'dest', mine.indexOf(r)],
      ['INVALID_ARGUMENT', 'source', mine.indexOf(r)],
      ['INVALID_ARGUMENT', 'tag', mine.indexOf(r)],
      ['INVALID_ARGUMENT', 'rank', mine.indexOf(r)],
    ]);
  });
}

export function expectBadArgs(got: readonly Failure[][]): void {
  got.forEach((fs, r) => {
    const sub = Math.floor(r / 2);
    expect(fs.map((e) => [e.code, e.field, e.rank])).toEqual([
      ['INVALID_ARGUMENT', 'dest', sub],
      ['INVALID_ARGUMENT', 'source', sub],
      ['INVALID_ARGUMENT', 'source', sub],
      ['INVALID_ARGUMENT', 'tag', sub],
      ['INVALID_ARGUMENT', 'tag', sub],
      ['INVALID_ARGUMENT', 'tag', sub],
      ['INVALID_ARGUMENT', 'rank', sub],
    ]);
  });
}

/** Every rank's wildcard receive got the user message of the previous rank, the collectives their own. */
export function expectAnyTag(p: number, got: readonly AnyTagObservation[]): void {
  expect(got.length).toBe(p);
  got.forEach((o, r) => {
    const prev = (r - 1 + p) % p;
    expect(o).toEqual({ status: { source: prev, tag: 3, bytes: 8 }, from: prev, bcastOk: true, splitSize: p });
  });
}

/**
 * createIntercomm with a bad argument in group `badGroup`: its ranks reject naming the field;
 * the other group rejects too (naming it, "remote group") when the leaders could still talk,
 * i.e. for a bad localLeader; afterwards a correct createIntercomm works.
 */
export function expectBadInter(
  colors: readonly (0 | 1)[],
  bad: BadInterArg,
  badGroup: 0 | 1,
  remoteIdle: boolean,
  got: readonly BadInterObservation[],
): void {
  const field = bad === 'leaderRange' || bad === 'leaderMismatch' ? 'localLeader' : bad;
  const groups = [0, 1].map((c) => colors.map((_, i) => i).filter((i) => colors[i] === c));
  got.forEach((o, r) => {
    const mine = groups[colors[r]];
    const theirs = groups[1 - colors[r]];
    if (colors[r] !== badGroup && remoteIdle) {
      expect(o).toEqual({ outcome: 'idle', after: null });
      return;
    }
    expect(o.outcome).not.toBe('resolved');
    const f = o.outcome as Failure;
    expect([f.name, f.field, f.rank]).toEqual(['InvalidArgumentError', field, mine.indexOf(r)]);
    if (colors[r] !== badGroup) expect(f.message).toMatch(/remote group/);
    expect(o.after).toEqual(remoteIdle ? null : theirs);
  });
}

/** Every receive of unknown size got its message whole; over maxBytes and bad maxBytes fail typed. */
export function expectAllocRecv(sizes: readonly number[], got: readonly AllocRecvObservation[]): void {
  for (const o of got) {
    expect(o.posted).toEqual(sizes.map(() => true));
    expect(o.unexpected).toEqual(sizes.map(() => true));
    expect([o.anySource, o.self]).toEqual([true, true]);
    expect(o.tooLong).toMatchObject({ name: 'TruncationError' });
    expect(o.badMax).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'maxBytes', rank: o.rank });
  }
}
