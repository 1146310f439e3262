/**
 * THE table of the intragroup allgather / allgatherv algorithms: one row per algorithm, in the
 * manner of collectives/v-variants.ts. What is derived from it:
 * - the names: `AllgatherVariantName`, the unions `AllgatherAlgorithm` / `AllgathervAlgorithm`
 *   (re-exported by types.ts) and the lists `ALLGATHER_ALGORITHMS` / `ALLGATHERV_ALGORITHMS`
 *   (the rows that name the operation in `ops`, in row order, then 'auto': what the CLI, the
 *   errors of args.ts and the tests enumerate);
 * - `ALLGATHER_VARIANTS` / `ALLGATHERV_VARIANTS`, the implementations the entries run (index.ts);
 * - the restrictions, checked on every rank by the entries before the algorithm runs
 *   (`checkAllgatherRestrictions`). None today: recursive doubling folds the extra ranks of
 *   p ≠ 2^k in and Bruck runs for any p, so nothing is power-of-two only; what is offered for one
 *   operation only is `ops` (naming the algorithm for the other fails in args.ts like any name
 *   not in its list).
 * `auto` is not a row: chooseAllgather / chooseAllgatherv (index.ts) pick among these.
 *
 * Rows, in the order of the CLI's lists (allgather: ring, recursive-doubling, bruck;
 * allgatherv: ring, pipelined-ring, bruck):
 * | name               | ops                    | source (Kang19 cites it)                        | rounds (full duplex)        |
 * | ------------------ | ---------------------- | ----------------------------------------------- | --------------------------- |
 * | ring               | allgather, allgatherv  | Chan et al. 2007 §5; Träff et al. 2010 (Kang19 §3, refs [12], [16]) | p − 1 |
 * | recursive-doubling | allgather              | Thakur, Rabenseifner, Gropp 2005 §4.1 (Kang19 §3, ref [15]) | ⌊log₂p⌋ (+2 for p ≠ 2^k) |
 * | pipelined-ring     | allgatherv             | Träff et al. 2010 (Kang19 §3, ref [16]; §4.1)   | ≈ total/S + p, S ≈ total/(4p) |
 * | bruck              | allgather, allgatherv  | Bruck et al. 1997 §3; Thakur et al. 2005 §4.1 (Kang19 §3, ref [14]) | ⌈log₂p⌉ |
 * Every algorithm starts with the handshake (handshake.ts); the costs below include it.
 */
import type { VcollError } from '../../errors.js';
import { BRUCK_ALLGATHER } from './bruck.js';
import { PIPELINED_RING_ALLGATHER } from './pipelined-ring.js';
import { RECURSIVE_DOUBLING_ALLGATHER } from './recursive-doubling.js';
import { RING_ALLGATHER } from './ring.js';
import type { AllgathervInput, AllgathervVariant } from './types.js';

/** The two public operations: allgather (equal blocks) and allgatherv (any blocks). */
export type AllgatherOp = 'allgather' | 'allgatherv';

/**
 * A condition an algorithm needs, as a predicate with the error every rank raises when it fails:
 * the shape of collectives/variant.ts's VariantRestriction on what an allgather sees (p and every
 * block's size, known alike on every rank). Not that type itself: variant.ts → types.ts →
 * v-variants.ts → … → basic/ → allgather/ would put allgather/ on a folder cycle.
 */
export interface AllgatherRestriction {
  /** Why the algorithm cannot run here (one phrase), or undefined when it can. */
  readonly why: (c: { readonly p: number; readonly bytes: readonly number[] }) => string | undefined;
  /** The typed error for `why` on `rank`. */
  readonly error: (why: string, rank: number) => VcollError;
}

/** One intragroup allgather(v) algorithm. */
export interface AllgatherVariantRow<N extends string = string> {
  readonly name: N;
  /** The operations that offer it (their lists and variant arrays). */
  readonly ops: readonly AllgatherOp[];
  /** The original paper and section, and where Kang19 cites it (docs/papers.md). */
  readonly paper: string;
  /** One line: what the algorithm does. */
  readonly summary: string;
  /** Its time in the α + βm model (+ γ per copied byte), from the algorithm file's header. */
  readonly cost: string;
  readonly restrictions: readonly AllgatherRestriction[];
  /** The implementation the entries run. */
  readonly variant: AllgathervVariant;
}

const ROWS = [
  {
    name: 'ring',
    ops: ['allgather', 'allgatherv'],
    paper: 'Chan et al. 2007 §5; Träff et al. 2010 for irregular blocks (Kang19 §3, refs [12], [16])',
    summary: 'p − 1 steps: send a block to rank − 1, receive the next from rank + 1, in place; bandwidth-optimal, for large blocks',
    cost:
      'full duplex Σ_s (α + β·max_r m_{(r+s+1) mod p}) + 8β, equal blocks (p−1)(α+βm) + 8β; ' +
      'one-ported, equal blocks: 2(p−1)(α+βm) + 16β (p even), 2p(α+βm) + 24β (p odd)',
    restrictions: [],
    variant: RING_ALLGATHER,
  } satisfies AllgatherVariantRow<'ring'>,
  {
    name: 'recursive-doubling',
    ops: ['allgather'],
    paper: 'Thakur, Rabenseifner and Gropp 2005 §4.1 (Kang19 §3, ref [15])',
    summary: '⌈log₂p⌉ exchanges with rank ⊕ 2^k, in place; the extra ranks of p ≠ 2^k fold in (a pre- and a post-step)',
    cost:
      'handshake α + 8β, then p = 2^k: kα + β(p−1)m (one-ported 2kα + 2β(p−1)m); other p (q = 2^⌊log₂p⌋, e = p − q): ' +
      '(⌊log₂p⌋+2)α + βm·(1 + Σ_{k<log₂q} (2^k + min(2^k, e)) + (p−1))',
    restrictions: [],
    variant: RECURSIVE_DOUBLING_ALLGATHER,
  } satisfies AllgatherVariantRow<'recursive-doubling'>,
  {
    name: 'pipelined-ring',
    ops: ['allgatherv'],
    paper: 'Träff, Ripke, Siebert, Balaji, Thakur and Gropp 2010 (Kang19 §3, ref [16]; the final stage of §4.1)',
    summary: 'blocks cut into chunks of S ≈ total/(4p) bytes streamed around the ring; bandwidth-optimal for large irregular blocks',
    cost:
      'handshake α + 8β, then full duplex ≈ β·Σ_{i≠r} m_i + O(pβS) + (total/S + p)α; ' +
      'one-ported, equal blocks: the ring\'s time, up to 2.4 × full duplex measured for uneven blocks',
    restrictions: [],
    variant: PIPELINED_RING_ALLGATHER,
  } satisfies AllgatherVariantRow<'pipelined-ring'>,
  {
    name: 'bruck',
    ops: ['allgather', 'allgatherv'],
    paper: 'Bruck, Ho, Kipnis, Upfal and Weathersby 1997 §3; Thakur et al. 2005 §4.1 (Kang19 §3, ref [14])',
    summary: '⌈log₂p⌉ rounds for any p, blocks packed, one final rotation; for small (irregular) blocks',
    cost:
      'full duplex, equal blocks: ⌈log₂p⌉α + β(p−1)m + 8β + γ(p−1)m; irregular: Σ_k (α + β·max_r of the blocks r receives in round k) + γ·(total − m_r); ' +
      'one-ported: twice the full-duplex time for p = 2^k, more for other p',
    restrictions: [],
    variant: BRUCK_ALLGATHER,
  } satisfies AllgatherVariantRow<'bruck'>,
] as const;

for (const r of ROWS) {
  if (r.variant.name !== r.name) throw new Error(`allgather/variants: row '${r.name}' holds the variant '${r.variant.name}'`);
}

type Row = (typeof ROWS)[number];

/** The names of the rows that offer `Op`. */
type OfferedBy<Op extends AllgatherOp, R extends Row = Row> = R extends { readonly name: infer N; readonly ops: readonly (infer O)[] }
  ? Op extends O
    ? N
    : never
  : never;

/** Every intragroup allgather(v) algorithm (the union of both lists, without 'auto'). */
export type AllgatherVariantName = Row['name'];

export type AllgatherAlgorithm = OfferedBy<'allgather'> | 'auto';
export type AllgathervAlgorithm = OfferedBy<'allgatherv'> | 'auto';

/** Every row (see the module comment). */
export const ALLGATHER_VARIANT_ROWS: readonly AllgatherVariantRow<AllgatherVariantName>[] = ROWS;

function rowsOf(op: AllgatherOp): AllgatherVariantRow<AllgatherVariantName>[] {
  return ALLGATHER_VARIANT_ROWS.filter((r) => r.ops.includes(op));
}

/** The allgather algorithms (equal blocks), then 'auto'. */
export const ALLGATHER_ALGORITHMS: readonly AllgatherAlgorithm[] = [...rowsOf('allgather').map((r) => r.name as OfferedBy<'allgather'>), 'auto'];
/** The allgatherv algorithms (any blocks), then 'auto'. */
export const ALLGATHERV_ALGORITHMS: readonly AllgathervAlgorithm[] = [...rowsOf('allgatherv').map((r) => r.name as OfferedBy<'allgatherv'>), 'auto'];

/** The allgather algorithms (equal blocks). */
export const ALLGATHER_VARIANTS: readonly AllgathervVariant[] = rowsOf('allgather').map((r) => r.variant);
/** The allgatherv algorithms (any blocks). */
export const ALLGATHERV_VARIANTS: readonly AllgathervVariant[] = rowsOf('allgatherv').map((r) => r.variant);

/** The row of `name`, or undefined. */
export function allgatherRow(name: string): AllgatherVariantRow<AllgatherVariantName> | undefined {
  return ALLGATHER_VARIANT_ROWS.find((r) => r.name === name);
}

/**
 * Throws the error of the first restriction of `row` that fails for this input. Every rank checks,
 * before the algorithm runs; p and the sizes are the same on every rank that passed the same
 * arguments (a rank whose sizes differ may throw alone: the transports fail the others fast).
 */
export function checkAllgatherRestrictions(row: AllgatherVariantRow, input: AllgathervInput): void {
  for (const r of row.restrictions) {
    const why = r.why({ p: input.comm.size, bytes: input.bytes });
    if (why !== undefined) throw r.error(why, input.comm.rank);
  }
}
