/**
 * THE table of the intergroup allgather / allgatherv algorithms (on an intercommunicator), one
 * row per algorithm, in the manner of collectives/v-variants.ts. What is derived from it:
 * - the names: `InterAllgatherAlgorithm` (re-exported by types.ts) and
 *   `INTER_ALLGATHER_ALGORITHMS` (row order: what the CLI, the errors of index.ts and the tests
 *   enumerate; `portableAlgorithms(…)` of it for the simulator and threads);
 * - what interAllgather / interAllgatherv run (index.ts: the row's `allgather` / `allgatherv`,
 *   after the arguments are checked).
 * The one restriction, mpi-native's transport, is raised at the run by the implementation itself
 * (native.ts: nativeInterOf, on every rank of both groups, after the arguments are checked); the
 * predicate is there for listings and applicability, as in v-variants.ts. The default is
 * 'segmented' (index.ts).
 *
 * | name           | paper (docs/papers.md)                               | what                                                     |
 * | -------------- | ---------------------------------------------------- | -------------------------------------------------------- |
 * | root-gathering | Kang19 §3.1, Eq. 2 (what MPICH and Open MPI ship)    | gather at local rank 0, root exchange, broadcast, sequential stages |
 * | segmented      | Kang19 §4 Algorithm 1, §4.1 Algorithm 2              | segmented exchange over min(p, q) links, one allgatherv per group |
 * | mpi-native     | — (the MPI library; MPICH, Open MPI: root gathering) | the library's MPI_Allgather(v), MPI transport only       |
 */
import { UnavailableError } from '../../errors.js';
import { NATIVE_HINT } from '../native.js';
import { MPI_NATIVE } from '../types.js';
import type { VariantRequirement, VariantRestriction } from '../variant.js';
import { nativeAllgather, nativeAllgatherv } from './mpi-native.js';
import { rootGathering } from './root-gathering.js';
import { segmentedAllgather } from './segmented.js';
import { segmentedAllgatherv } from './segmented-v.js';
import type { InterAllgatherInput, InterAllgathervInput } from './types.js';

/** One intergroup allgather(v) algorithm. */
export interface InterAllgatherVariantRow<N extends string = string> {
  readonly name: N;
  /** Paper key and section (docs/papers.md). */
  readonly paper: string;
  /** One line: what the algorithm does. */
  readonly summary: string;
  /** Its time in the α + βm model (groups of p and q ranks, K_A = Σ k_A,i, K_B = Σ k_B,j, M = max(K_A, K_B)), from the algorithm file's header. */
  readonly cost: string;
  /** What it needs of the transport beyond point-to-point (absent: runs everywhere). */
  readonly requires?: VariantRequirement;
  readonly restrictions: readonly VariantRestriction[];
  /** interAllgather with this algorithm (the arguments checked). */
  readonly allgather: (x: InterAllgatherInput) => Promise<void> | void;
  /** interAllgatherv with this algorithm (the arguments checked). */
  readonly allgatherv: (x: InterAllgathervInput) => Promise<void> | void;
}

/** The MPI library's own collectives on the intercommunicator (the MPI transport). */
const NATIVE: VariantRestriction = {
  on: 'transport',
  why: ({ native }) => (native === false ? "calls the MPI library's own collective: the MPI transport only" : undefined),
  error: (why, rank) => new UnavailableError('mpi-transport', `rank ${rank}: interAllgather(v) with algorithm 'mpi-native' ${why}: ${NATIVE_HINT}`, { rank }),
};

const ROWS = [
  {
    name: 'root-gathering',
    paper: 'Kang19 §3.1, Eq. 2 (what MPICH, MVAPICH and Open MPI ship)',
    summary:
      'each group gathers its blocks at local rank 0; the roots exchange, then each broadcasts in its group, in sequential stages (the larger group first)',
    cost:
      'long messages: ≈ βM + 3β(K_A + K_B) + O(log p + log q)α (Eq. 2); one-ported: the same stages, the broadcasts’ exchanges take two transfers',
    restrictions: [],
    allgather: ({ inter, send, recv, k }: InterAllgatherInput) => rootGathering(inter, send, recv, { block: k, count: inter.remoteSize, field: 'recv' }, true),
    allgatherv: ({ inter, send, recv, bytes, offsets }: InterAllgathervInput) => rootGathering(inter, send, recv, { bytes, offsets, field: 'counts' }, false),
  } satisfies InterAllgatherVariantRow<'root-gathering'>,
  {
    name: 'segmented',
    paper: 'Kang19 §4 Algorithm 1 (allgather), §4.1 Algorithm 2 (allgatherv)',
    summary:
      'the larger group cut into subgroups, messages segmented over min(p, q) intergroup links, then one intragroup allgatherv per group, no reordering',
    cost:
      'allgather: ⌈p/q⌉ exchange rounds, transfer ≤ M + k_B (Theorem 1, q | p), ≤ M + max(k_A, k_B) + 8β otherwise; ' +
      'allgatherv: size check, allreduce and exscan O(log p)α, transfer ≤ max(K_A + max k_A, K_B + max k_B) + O(log pq) (Theorem 3); ' +
      'one-ported: every exchange round and ring step takes two transfers',
    restrictions: [],
    allgather: ({ inter, send, recv }: InterAllgatherInput) => segmentedAllgather(inter, send, recv),
    allgatherv: ({ inter, send, recv, bytes, offsets }: InterAllgathervInput) => segmentedAllgatherv(inter, send, recv, bytes, offsets),
  } satisfies InterAllgatherVariantRow<'segmented'>,
  {
    name: MPI_NATIVE,
    paper: '— (the MPI library; MPICH and Open MPI run root gathering, Kang19 §3.1)',
    summary: "the MPI library's own MPI_Allgather / MPI_Allgatherv on the MPI intercommunicator (MPI transport only)",
    cost: 'whatever the library does (root gathering: Eq. 2)',
    requires: 'native',
    restrictions: [NATIVE],
    allgather: nativeAllgather,
    allgatherv: nativeAllgatherv,
  } satisfies InterAllgatherVariantRow<typeof MPI_NATIVE>,
] as const;

/** The algorithms of interAllgather / interAllgatherv ('mpi-native': the MPI transport only). */
export type InterAllgatherAlgorithm = (typeof ROWS)[number]['name'];

/** Every intergroup allgather(v) algorithm, one row each (see the module comment). */
export const INTER_ALLGATHER_VARIANTS: readonly InterAllgatherVariantRow<InterAllgatherAlgorithm>[] = ROWS;

/** The names, in row order. */
export const INTER_ALLGATHER_ALGORITHMS: readonly InterAllgatherAlgorithm[] = INTER_ALLGATHER_VARIANTS.map((r) => r.name);

/** The row of `name`, or undefined. */
export function interAllgatherRow(name: string): InterAllgatherVariantRow<InterAllgatherAlgorithm> | undefined {
  return INTER_ALLGATHER_VARIANTS.find((r) => r.name === name);
}
