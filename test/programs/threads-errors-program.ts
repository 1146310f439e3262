/**
 * Rank program for test/threads-errors.test.ts (also run on the simulator, to compare the
 * shapes of the errors both transports give): one rank fails with a typed vcoll error —
 * raised by the library (an argument check, a truncated receive) or thrown by the program —
 * while the others wait for it.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { TooLargeError } from '../../src/errors.js';

export type ErrorScenario = 'bad-dest' | 'truncated' | 'too-large' | 'plain';

export interface ErrorArgs {
  readonly scenario: ErrorScenario;
}

export default async function errorsProgram(comm: Communicator, args: ErrorArgs): Promise<number> {
  const me = comm.rank;
  switch (args.scenario) {
    case 'bad-dest':
      // Rank 1 sends to a rank that does not exist: an InvalidArgumentError for `dest`.
      if (me === 1) await comm.send(comm.size + 5, 0, new Uint8Array(1));
      else await comm.recv(1, 0, new Uint8Array(1));
      return me;
    case 'truncated':
      // Rank 1 receives 10 bytes into 4: a TruncationError (bytes 10, capacity 4).
      if (me === 0) await comm.send(1, 0, new Uint8Array(10));
      else if (me === 1) await comm.recv(0, 0, new Uint8Array(4));
      else await comm.recv(1, 0, new Uint8Array(1));
      return me;
    case 'too-large':
      if (me === 2) throw new TooLargeError('p', 'at most 4, got 5');
      await comm.recv(2, 0, new Uint8Array(1));
      return me;
    case 'plain':
      if (me === 0) throw new RangeError('plain failure');
      await comm.recv(0, 0, new Uint8Array(1));
      return me;
  }
}
