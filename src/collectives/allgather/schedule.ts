/**
 * The data phases of allgather / allgatherv as schedules (src/comm/schedule.ts): the public
 * entry. `ring`, `recursive-doubling` and `bruck` run exactly these schedules after their
 * handshake (handshake.ts, program code: ring's and Bruck's first data exchange rides on it, so
 * their schedules start with round 1); the compilers are with their variants — ring.ts
 * (ringSchedule), bruck.ts (bruckSchedule), recursive-doubling.ts (recursiveDoublingSchedule),
 * pipelined-ring.ts (pipelinedRingSchedule: one step of two concurrent streams, each send of a
 * forwarded chunk after its receive) — on the parts of schedule-parts.ts. Compiling never
 * communicates.
 */
import type { RankSchedule, WorldSchedule } from '../../comm/schedule.js';
import { InvalidArgumentError, UnavailableError } from '../../errors.js';
import { bruckSchedule } from './bruck.js';
import { pipelinedRingSchedule } from './pipelined-ring.js';
import { recursiveDoublingSchedule } from './recursive-doubling.js';
import { ringSchedule } from './ring.js';
import type { AllgatherRankDescription } from './schedule-parts.js';
import { ALLGATHER_TAGS } from './types.js';
import { allgatherRow } from './variants.js';

export { recvCapacity, type AllgatherRankDescription } from './schedule-parts.js';

/** The allgather(v) algorithms `compileAllgatherSchedule` compiles. */
export const COMPILED_ALLGATHER_ALGORITHMS = ['ring', 'recursive-doubling', 'bruck', 'pipelined-ring'] as const;

export type CompiledAllgatherAlgorithm = (typeof COMPILED_ALLGATHER_ALGORITHMS)[number];

export interface CompileAllgatherOptions {
  /** The data tag (default: the algorithm's own, ALLGATHER_TAGS; basic/allgather.ts uses BASIC_TAG.allgather). */
  readonly tag?: number;
  /**
   * Include ring's and Bruck's first data exchange (which the handshake carries at run time)
   * as step 0, without the fingerprint and on the data tag — the step as it runs without the
   * handshake (basic/allgather.ts) — so that the schedule is the whole data phase (default
   * false: what runs after the handshake). The handshakes of recursive doubling and the
   * pipelined ring carry no data.
   */
  readonly firstStep?: boolean;
}

const DEFAULT_TAG: Record<CompiledAllgatherAlgorithm, number> = {
  ring: ALLGATHER_TAGS.ring,
  'recursive-doubling': ALLGATHER_TAGS.recursiveDoubling,
  bruck: ALLGATHER_TAGS.bruck,
  'pipelined-ring': ALLGATHER_TAGS.pipelinedRing,
};

function isCompiled(algorithm: string): algorithm is CompiledAllgatherAlgorithm {
  return (COMPILED_ALLGATHER_ALGORITHMS as readonly string[]).includes(algorithm);
}

/** One rank's schedule of `algorithm` after the handshake (see the module comment; `firstStep`: CompileAllgatherOptions). */
export function compileAllgatherRankSchedule(
  algorithm: CompiledAllgatherAlgorithm,
  d: AllgatherRankDescription,
  tag: number = DEFAULT_TAG[algorithm],
  firstStep = false,
): RankSchedule {
  if (algorithm === 'ring') return ringSchedule(d, tag, firstStep);
  if (algorithm === 'bruck') return bruckSchedule(d, tag, firstStep);
  if (algorithm === 'pipelined-ring') return pipelinedRingSchedule(d, tag);
  return recursiveDoublingSchedule(d, tag);
}

/**
 * Every rank's schedule of the data phase of `algorithm` after the handshake (with
 * `options.firstStep`, the whole data phase), for block sizes `bytesPerRank` (bytes) at byte
 * offsets `offsets` in recv (default: prefix sums, i.e. packed).
 * An allgather is the case of equal sizes. `auto` and unknown names are an UnavailableError;
 * bad sizes or offsets an InvalidArgumentError.
 */
export function compileAllgatherSchedule(
  algorithm: string,
  bytesPerRank: readonly number[],
  offsets?: readonly number[],
  options: CompileAllgatherOptions = {},
): WorldSchedule {
  if (!isCompiled(algorithm)) {
    const known = allgatherRow(algorithm) !== undefined;
    throw new UnavailableError(
      'schedule',
      known
        ? `${algorithm} is not compiled into schedules: compiled are ${COMPILED_ALLGATHER_ALGORITHMS.join(', ')}`
        : `no allgather algorithm named '${algorithm}'${algorithm === 'auto' ? ' (auto: choose the algorithm first)' : ''}`,
    );
  }
  const p = bytesPerRank.length;
  if (p < 1) throw new InvalidArgumentError('bytesPerRank', 'must have one entry per rank (p >= 1)');
  bytesPerRank.forEach((b, i) => {
    if (!Number.isSafeInteger(b) || b < 0) throw new InvalidArgumentError(`bytesPerRank[${i}]`, `must be an integer >= 0, got ${b}`);
  });
  let at = offsets;
  if (at === undefined) {
    const prefix: number[] = [];
    let end = 0;
    for (const b of bytesPerRank) {
      prefix.push(end);
      end += b;
    }
    at = prefix;
  } else {
    if (at.length !== p) throw new InvalidArgumentError('offsets', `must have ${p} entries, got ${at.length}`);
    at.forEach((x, i) => {
      if (!Number.isSafeInteger(x) || x < 0) throw new InvalidArgumentError(`offsets[${i}]`, `must be an integer >= 0, got ${x}`);
    });
  }
  const tag = options.tag ?? DEFAULT_TAG[algorithm];
  const ranks: RankSchedule[] = [];
  const first = options.firstStep ?? false;
  for (let rank = 0; rank < p; rank++) ranks.push(compileAllgatherRankSchedule(algorithm, { rank, p, bytes: bytesPerRank, offsets: at }, tag, first));
  const withFirst = first && (algorithm === 'ring' || algorithm === 'bruck');
  return { label: `allgatherv ${algorithm}${withFirst ? ' (with its first step)' : ''}`, ranks };
}
