/**
 * Receives of the wrong length, run by the MPI rank programs of the schedule tests: rank 0
 * binds a schedule that receives 5 bytes from rank 1 four ways (native and portable, each
 * without and with a recvError), and each binding runs against a message of 3 bytes, one of 9,
 * then a good one of 5 (so that the binding is seen to still work).
 */
import type { Communicator } from '../../src/comm/communicator.js';
import type { BoundSchedule, ScheduleOptions } from '../../src/comm/schedule.js';
import { CommunicationError, TruncationError } from '../../src/errors.js';

/** The four bindings, in order: native, native + recvError, portable, portable + recvError. */
const VARIANTS: readonly { readonly portable: boolean; readonly recvError: boolean }[] = [
  { portable: false, recvError: false },
  { portable: false, recvError: true },
  { portable: true, recvError: false },
  { portable: true, recvError: true },
];

const recvError: ScheduleOptions['recvError'] = (peer, tag, expected, got, cause) =>
  new CommunicationError(`custom: peer ${peer} tag ${tag} expected ${expected} got ${String(got)} cause ${cause instanceof TruncationError ? 'TruncationError' : String(cause)}`, { rank: 0 });

/**
 * Rank 1 sends, per binding, 3 bytes of 1, 9 of 2 and 5 of 3 with `tag`; rank 0 binds with
 * `bind` (its options: portable, and the recvError when the variant has one) and returns, in
 * order, what each of the two wrong runs failed with (`describe`) and the bytes after the good
 * one (`then …`, the view `bind` returns), plus what `bind` reports; other ranks nothing.
 */
export async function wrongLengthRuns(
  comm: Communicator,
  tag: number,
  bind: (options: ScheduleOptions & { readonly portable: boolean }) => { readonly bound: BoundSchedule; readonly into: Uint8Array; readonly problem?: string },
  describe: (e: unknown) => string,
): Promise<string[]> {
  const out: string[] = [];
  if (comm.rank === 1) {
    for (let v = 0; v < VARIANTS.length; v++) {
      await comm.send(0, tag, new Uint8Array(3).fill(1));
      await comm.send(0, tag, new Uint8Array(9).fill(2));
      await comm.send(0, tag, new Uint8Array(5).fill(3));
    }
    return out;
  }
  if (comm.rank !== 0) return out;
  for (const v of VARIANTS) {
    const { bound, into, problem } = bind({ portable: v.portable, ...(v.recvError ? { recvError } : {}) });
    if (problem !== undefined) out.push(problem);
    for (let k = 0; k < 2; k++) {
      try {
        await bound.run();
        out.push('no error');
      } catch (e) {
        out.push(describe(e));
      }
    }
    await bound.run();
    out.push(`then ${Array.from(into).join(',')}`);
  }
  return out;
}
