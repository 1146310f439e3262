/**
 * The guideline references of Traff18 §4 as executions a benchmark times beside the
 * irregular operation (same blocks, same root, same data check):
 *
 *   gl1  the regular operation over blocks padded to the case's largest block m = max m_i:
 *        gather(m) / scatter(m). On `same` blocks nothing is padded and this is GL1's left side,
 *        gather(m) ≤ gatherv(m).
 *   gl2  GL2's mock-up of gatherv: allreduce of one number (max m_i), the regular gather of the
 *        blocks padded to it, and the root's copies of the blocks to their displacements;
 *        of scatterv: the allreduce, the root's copies of the blocks into padded slots, the
 *        regular scatter. The other processes' buffers have room for the padded block (the
 *        block at its start), so they need no copy, as Traff18 §4 arranges. Right side of GL2,
 *        gatherv(m) ≤ allreduce(1) + gather(p·max m_i).
 *
 * The regular collectives are vcoll's (binomial gather/scatter, recursive-doubling allreduce)
 * or, with variant 'mpi-native', the MPI library's MPI_Gather / MPI_Scatter / MPI_Allreduce.
 * Cost in the linear model (vcoll's, one-ported, p = 2^k): gather(m) = kα + β(p−1)m (+ γm per
 * inner rank); the mock-up adds the allreduce's kα (+ β per step for one element) and the
 * root's p copies, γ·Σm_i.
 */
import { allreduce, gather, scatter } from '../collectives/basic/index.js';
import type { BasicOptions } from '../collectives/basic/algorithm.js';
import type { Communicator } from '../comm/communicator.js';
import { blockOf, firstMismatch, fullBuffer, poison, prefixDispls } from './data.js';
import type { VOperation } from './spec.js';
import { maxOf } from '../util/extremes.js';

export type ReferenceKind = 'gl1' | 'gl2';
export type ReferenceVariant = 'vcoll' | 'mpi-native';

/** One timed unit of work: poison what it writes, run it, check what it wrote. */
export interface ReferenceExecution {
  prepare(): void;
  run(): Promise<void>;
  check(): string | undefined;
}

/** What every rank of a case derives from the counts: the largest block and the displacements. */
interface CountsFacts {
  readonly max: number;
  /** Built on first use (only the root needs them). */
  displs: number[] | undefined;
}

/**
 * Per counts array (the simulated ranks of a run share one, sharedBlockSizes): computed once,
 * not on every rank — O(p) per rank would be O(p²) over a simulation (and `Math.max(...counts)`
 * overflows the stack at a few hundred thousand ranks).
 */
const COUNTS_FACTS = new WeakMap<readonly number[], CountsFacts>();

function countsFacts(counts: readonly number[]): CountsFacts {
  let f = COUNTS_FACTS.get(counts);
  if (f === undefined) {
    f = { max: Math.max(0, maxOf(counts, (x) => x)), displs: undefined };
    COUNTS_FACTS.set(counts, f);
  }
  return f;
}

function displsOf(facts: CountsFacts, counts: readonly number[]): number[] {
  facts.displs ??= prefixDispls(counts);
  return facts.displs;
}

/** Rank r's block padded to `max` elements (the block, then zeros). */
function paddedBlock(rank: number, count: number, max: number, u: number): Uint8Array {
  const out = new Uint8Array(max * u);
  out.set(blockOf(rank, count, u));
  return out;
}

/** Every rank's padded block back to back (the regular operation's root buffer). */
function paddedAll(counts: readonly number[], max: number, u: number): Uint8Array {
  const out = new Uint8Array(counts.length * max * u);
  counts.forEach((c, r) => out.set(blockOf(r, c, u), r * max * u));
  return out;
}

/**
 * The reference `kind` of operation `op` for these counts on this rank. `comm` may be a
 * counting wrapper: the references' messages are counted like the algorithms'.
 */
export function referenceExecution(
  comm: Communicator,
  op: VOperation,
  kind: ReferenceKind,
  variant: ReferenceVariant,
  counts: readonly number[],
  root: number,
  u: number,
): ReferenceExecution {
  const me = comm.rank;
  const p = comm.size;
  const isRoot = me === root;
  const facts = countsFacts(counts);
  const max = facts.max;
  const options: BasicOptions = variant === 'mpi-native' ? { algorithm: 'mpi-native' } : {};
  const mine = blockOf(me, counts[me], u);
  // GL2's allreduce of one number: this rank's count in, the largest out.
  const mineCount = new Float64Array([counts[me]]);
  const maxOut = new Float64Array(1);
  const agreeMax = async (): Promise<number> => {
    await allreduce(comm, { send: mineCount, recv: maxOut, op: 'max' }, options);
    return maxOut[0];
  };
  // only the root places blocks at their displacements
  const displs = isRoot ? displsOf(facts, counts) : [];

  if (op === 'gatherv') {
    const send = paddedBlock(me, counts[me], max, u);
    if (kind === 'gl1') {
      const expected = isRoot ? paddedAll(counts, max, u) : undefined;
      const recv = expected ? new Uint8Array(expected.length) : undefined;
      return {
        prepare: () => {
          if (recv && expected) poison(recv, expected);
        },
        run: () => gather(comm, { send, recv, root }, options),
        check: () => (recv && expected ? firstMismatch(recv, expected, `root ${me} gather(m) buffer`) : firstMismatch(send.subarray(0, mine.length), mine, `rank ${me} send buffer (changed)`)),
      };
    }
    const expected = isRoot ? fullBuffer(counts, u) : undefined;
    const recv = expected ? new Uint8Array(expected.length) : undefined;
    const scratch = isRoot ? new Uint8Array(p * max * u) : undefined;
    return {
      prepare: () => {
        if (recv && expected) poison(recv, expected);
      },
      run: async () => {
        const m = await agreeMax();
        const slot = m * u;
        await gather(comm, { send: send.subarray(0, slot), recv: scratch?.subarray(0, p * slot), root }, options);
        if (recv && scratch) {
          for (let r = 0; r < p; r++) recv.set(scratch.subarray(r * slot, r * slot + counts[r] * u), displs[r] * u);
        }
      },
      check: () => (recv && expected ? firstMismatch(recv, expected, `root ${me} gatherv mock-up buffer`) : undefined),
    };
  }

  // scatterv
  const recv = new Uint8Array(max * u);
  const expectedMine = paddedBlock(me, counts[me], max, u);
  if (kind === 'gl1') {
    const send = isRoot ? paddedAll(counts, max, u) : undefined;
    return {
      prepare: () => poison(recv, expectedMine),
      run: () => scatter(comm, { send, recv, root }, options),
      check: () => firstMismatch(recv, expectedMine, `rank ${me} scatter(m) buffer`),
    };
  }
  const full = isRoot ? fullBuffer(counts, u) : undefined;
  const scratch = isRoot ? new Uint8Array(p * max * u) : undefined;
  return {
    prepare: () => poison(recv, expectedMine),
    run: async () => {
      const m = await agreeMax();
      const slot = m * u;
      if (full && scratch) {
        for (let r = 0; r < p; r++) scratch.set(full.subarray(displs[r] * u, (displs[r] + counts[r]) * u), r * slot);
      }
      await scatter(comm, { send: scratch?.subarray(0, p * slot), recv: recv.subarray(0, slot), root }, options);
    },
    // The padding that arrives is whatever the root's scratch held there: only the block is checked.
    check: () => firstMismatch(recv.subarray(0, mine.length), mine, `rank ${me} scatterv mock-up buffer`),
  };
}
