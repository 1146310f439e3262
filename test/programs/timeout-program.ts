/**
 * Rank programs for the per-operation timeout (test/timeout.test.ts, test/mpi/timeout.mpi.ts):
 * - 'recv-nobody': rank 0 receives from rank 1, which never sends (the others return);
 * - 'root-disagree': ranks disagree on the root of a gatherv (rank 0 thinks 0, the others 1);
 * - 'busy-loop': rank `size - 1` computes in JS for `busyMs` before it sends to the others;
 * - 'pingpong': a correct exchange of `count` messages (must not time out);
 * - 'exit': rank 1 calls process.exit(3) (MPI only);
 * - 'blocking-recv': rank 0 waits in MPI_Recv (mpiBlocking) for rank 1, which never sends (MPI only);
 * - 'native-barrier': rank 0 alone enters the MPI library's barrier (MPI only);
 * - 'send-nobody': rank 0 sends 4 MiB to rank 1, which never receives;
 * - 'stuck-after-reduce': every rank takes part in a reduce to rank `size - 1`, which then
 *   stays alive but never returns (a timer keeps its event loop going) while the others return;
 * - 'stuck-zero': rank 0 stays alive but never returns, the others return at once.
 * With `catch`, rank 0 catches its error and returns its fields instead of failing.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import type { GroupCommunicator } from '../../src/comm/group.js';
import { reduce } from '../../src/collectives/basic/index.js';
import { gatherv } from '../../src/index.js';

/** Never resolves; the timer keeps the event loop alive, as a real stuck program's would. */
function stuck(): Promise<never> {
  return new Promise(() => setTimeout(() => {}, 1e9));
}

export type TimeoutScenario = 'recv-nobody' | 'root-disagree' | 'busy-loop' | 'pingpong' | 'exit' | 'blocking-recv' | 'native-barrier' | 'send-nobody' | 'stuck-after-reduce' | 'stuck-zero';

export interface TimeoutArgs {
  readonly scenario: TimeoutScenario;
  readonly catch?: boolean;
  readonly busyMs?: number;
  readonly count?: number;
}

export interface CaughtError {
  readonly name: string;
  readonly message: string;
  readonly rank: number | undefined;
  readonly peer?: number;
  readonly operation?: string;
  readonly timeoutMs?: number;
}

async function scenario(comm: Communicator, args: TimeoutArgs): Promise<unknown> {
  const { rank, size } = comm;
  switch (args.scenario) {
    case 'recv-nobody':
      if (rank === 0) await comm.recv(1, 7, new Uint8Array(4));
      return rank;
    case 'root-disagree': {
      const root = rank === 0 ? 0 : 1;
      const counts = Array.from({ length: size }, () => 2);
      const recv = rank === root ? new Uint8Array(2 * size) : undefined;
      await gatherv(comm, { root, send: new Uint8Array(2).fill(rank), recv, counts }, { algorithm: 'linear' });
      return recv === undefined ? null : Array.from(recv);
    }
    case 'busy-loop': {
      const last = size - 1;
      if (rank === last) {
        const end = Date.now() + (args.busyMs ?? 5000);
        while (Date.now() < end) {
          /* a JS loop: this rank fires no timers */
        }
        for (let r = 0; r < last; r++) await comm.send(r, 9, Uint8Array.of(r));
        return rank;
      }
      const got = new Uint8Array(1);
      await comm.recv(last, 9, got);
      return got[0];
    }
    case 'pingpong': {
      const n = args.count ?? 1000;
      const buf = new Uint8Array(8);
      let sum = 0;
      for (let i = 0; i < n; i++) {
        if (rank === 0) {
          buf[0] = i & 255;
          await comm.send(1, 3, buf);
          await comm.recv(1, 4, buf);
          sum += buf[0];
        } else if (rank === 1) {
          await comm.recv(0, 3, buf);
          await comm.send(0, 4, buf);
        }
      }
      return sum;
    }
    case 'send-nobody':
      // A send past the eager limit whose receive never comes (rendezvous: it stays pending).
      if (rank === 0) await comm.send(1, 8, new Uint8Array(4 << 20));
      return rank;
    case 'blocking-recv': {
      // MPI only: MPI_Recv in this thread, nobody sends (the event loop stands still).
      const { mpiBlocking } = await import('../../src/transports/mpi/blocking.js');
      if (rank === 0) mpiBlocking(comm).recv(1, 7, new Uint8Array(4));
      return rank;
    }
    case 'native-barrier': {
      // MPI only: the library's barrier on rank 0 alone.
      if (rank === 0) (comm as GroupCommunicator).native?.barrier();
      return rank;
    }
    case 'stuck-after-reduce': {
      const root = size - 1;
      const recv = rank === root ? new Int32Array(4) : undefined;
      await reduce(comm, { root, send: Int32Array.of(rank, 1, 2, 3), recv, op: 'bxor' });
      if (rank === root) await stuck();
      return rank;
    }
    case 'stuck-zero':
      if (rank === 0) await stuck();
      return rank;
    case 'exit':
      if (rank === 1) process.exit(3);
      await comm.recv(1, 7, new Uint8Array(4));
      return rank;
  }
}

export default async function (comm: Communicator, args: TimeoutArgs): Promise<unknown> {
  try {
    return await scenario(comm, args);
  } catch (e) {
    if (args.catch !== true || comm.rank !== 0 || !(e instanceof Error)) throw e;
    const f = e as Error & { rank?: number; peer?: number; operation?: string; timeoutMs?: number };
    return { name: f.name, message: f.message, rank: f.rank, peer: f.peer, operation: f.operation, timeoutMs: f.timeoutMs } satisfies CaughtError;
  }
}
