/**
 * Worker-threads rank program for test/threads-deadlock.test.ts. Scenarios that deadlock
 * (every rank ends up waiting for a message that never comes) and scenarios that must not be
 * taken for deadlocked (a rank computing for a long time, a long exchange through a small
 * ring). A rank whose operation fails records what it caught in `args.out` (a shared buffer,
 * one slot per rank, JSON) so the test can look at every rank's own error, then rethrows.
 */
import type { VAlgorithm } from '../../src/collectives/types.js';
import type { Communicator } from '../../src/comm/communicator.js';
import { CommunicationError, DeadlockError } from '../../src/errors.js';

export type DeadlockScenario =
  | 'cross-recv'
  | 'returned'
  | 'gatherv-root'
  | 'gatherv-algorithm'
  | 'hier-variant'
  | 'compute'
  | 'compute-asleep'
  | 'long-exchange'
  | 'outside'
  | 'outside-sent'
  | 'stuck-gather-root'
  | 'stuck-bcast-leaf'
  | 'timer-after'
  | 'compute-chunks'
  | 'compute-chunks-after';

export interface DeadlockArgs {
  readonly scenario: DeadlockScenario;
  /** One slot of SLOT_BYTES per rank: what the rank caught, as JSON (zero-terminated). */
  readonly out: SharedArrayBuffer;
  /** 'compute*': how long rank 0 (rank p − 1 for 'compute-chunks-after') computes (ms); 'long-exchange': bytes each way; 'timer-after': the timer (ms). */
  readonly amount?: number;
  /** 'stuck-*': the ranks that never call the collective (default: rank 0 for the gather, rank 3 for the bcast). */
  readonly stuck?: readonly number[];
}

/** What a rank caught, as the program records it. */
export interface Caught {
  readonly name: string;
  readonly deadlock: boolean;
  readonly communication: boolean;
  readonly rank: number | undefined;
  readonly message: string;
  readonly waitsFor: readonly string[] | undefined;
}

export const SLOT_BYTES = 4096;

/** What rank `rank` recorded (undefined: nothing). */
export function caughtBy(out: SharedArrayBuffer, rank: number): Caught | undefined {
  const slot = new Uint8Array(out, rank * SLOT_BYTES, SLOT_BYTES);
  const end = slot.indexOf(0);
  if (end === 0) return undefined;
  return JSON.parse(Buffer.from(slot.subarray(0, end < 0 ? SLOT_BYTES : end)).toString('utf8')) as Caught;
}

function record(out: SharedArrayBuffer, rank: number, e: unknown): void {
  const c: Caught = {
    name: e instanceof Error ? e.name : typeof e,
    deadlock: e instanceof DeadlockError,
    communication: e instanceof CommunicationError,
    rank: e instanceof CommunicationError ? e.rank : undefined,
    message: e instanceof Error ? e.message : String(e),
    waitsFor: e instanceof DeadlockError ? e.ranks.flatMap((r) => r.waitsFor) : undefined,
  };
  const bytes = Buffer.from(JSON.stringify(c), 'utf8').subarray(0, SLOT_BYTES - 1);
  new Uint8Array(out, rank * SLOT_BYTES, SLOT_BYTES).set(bytes);
}

/** Blocks the thread for `ms` (the JS of the rank computes: its event loop does not turn). */
function compute(ms: number): number {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) for (let i = 0; i < 10_000; i++) x = (x * 31 + i) | 0;
  return x;
}

async function gathervMismatch(comm: Communicator, kind: 'root' | 'algorithm'): Promise<void> {
  const p = comm.size;
  // 'root': ranks 0 and 1 take rank 0 for the root, the others rank 1.
  const root = kind === 'root' && comm.rank >= 2 ? 1 : 0;
  // 'algorithm': rank 0 (the root) gathers linearly, the others along a binomial tree.
  const algorithm: VAlgorithm = kind === 'algorithm' ? (comm.rank === 0 ? 'linear' : 'binomial') : 'binomial';
  const counts = Array.from({ length: p }, (_, r) => 100 + r);
  const total = counts.reduce((a, b) => a + b, 0);
  const send = new Uint8Array(counts[comm.rank]).fill(comm.rank);
  const isRoot = comm.rank === root;
  // Imported here: the other scenarios start faster without the collectives.
  const { gatherv } = await import('../../src/collectives/v-collectives.js');
  await gatherv(comm, { root, send, recv: isRoot ? new Uint8Array(total) : undefined, counts: isRoot ? counts : undefined }, { algorithm });
}

async function run(comm: Communicator, args: DeadlockArgs): Promise<unknown> {
  const me = comm.rank;
  const p = comm.size;
  switch (args.scenario) {
    case 'cross-recv': {
      // Both ranks receive first: neither ever sends.
      const into = new Uint8Array(8);
      await comm.recv(1 - me, 1, into);
      await comm.send(1 - me, 1, into);
      return me;
    }
    case 'returned': {
      // Rank 1 returns without sending what rank 0 waits for.
      if (me === 0) await comm.recv(1, 7, new Uint8Array(4));
      return me;
    }
    case 'gatherv-root':
      await gathervMismatch(comm, 'root');
      return me;
    case 'gatherv-algorithm':
      await gathervMismatch(comm, 'algorithm');
      return me;
    case 'hier-variant': {
      // Rank 0 (the root) runs the flat hierarchical gatherv, the others the two-level one.
      const { hierarchicalGatherv } = await import('../../src/collectives/hierarchical/index.js');
      const counts = Array.from({ length: p }, (_, r) => 10 + r);
      const send = new Uint8Array(counts[me]).fill(me);
      const recv = me === 0 ? new Uint8Array(counts.reduce((a, b) => a + b, 0)) : undefined;
      await hierarchicalGatherv(comm, { root: 0, send, recv, counts: me === 0 ? counts : undefined }, { variant: me === 0 ? 'flat' : 'zero-copy' });
      return me;
    }
    case 'compute': {
      // Rank 0 computes long before it sends; the others wait for it.
      const ms = args.amount ?? 1500;
      if (me === 0) {
        compute(ms);
        for (let d = 1; d < p; d++) await comm.send(d, 3, Uint8Array.of(d));
        return me;
      }
      const into = new Uint8Array(1);
      await comm.recv(0, 3, into);
      return into[0];
    }
    case 'compute-asleep': {
      // Rank 0 posts its receives, lets its progress loop go to sleep (a short timer), then
      // computes long with the loop asleep, and only then sends: its state stays WAITING while
      // it computes, and only its silent heartbeat tells it is busy.
      const ms = args.amount ?? 1500;
      if (me === 0) {
        const replies = Array.from({ length: p - 1 }, (_, i) => comm.irecv(i + 1, 4, new Uint8Array(1)));
        await new Promise((r) => setTimeout(r, 30));
        compute(ms);
        for (let d = 1; d < p; d++) await comm.send(d, 3, Uint8Array.of(d));
        await comm.waitAll(replies);
        return me;
      }
      const into = new Uint8Array(1);
      await comm.recv(0, 3, into);
      await comm.send(0, 4, into);
      return into[0];
    }
    case 'outside': {
      // Rank 1 awaits a timer that never fires in time (outside vcoll, nothing pending, its
      // event loop idle) while the others call barrier.
      if (me === 1) await new Promise((r) => setTimeout(r, 1e9));
      const { barrier } = await import('../../src/collectives/basic/barrier.js');
      await barrier(comm);
      return me;
    }
    case 'outside-sent': {
      // Rank 1 sends rank 0 a message, then awaits a timer outside vcoll; rank 0 sends it one
      // back (rank 1's doorbell rung, its ring holding bytes) and waits for a second message.
      if (me === 1) {
        await comm.send(0, 1, Uint8Array.of(1));
        await new Promise((r) => setTimeout(r, 1e9));
      } else if (me === 0) {
        await comm.recv(1, 1, new Uint8Array(1));
        await comm.send(1, 3, Uint8Array.of(3)); // into rank 1's ring: its doorbell rung, never read
        await comm.recv(1, 2, new Uint8Array(1));
      }
      return me;
    }
    case 'stuck-gather-root':
    case 'stuck-bcast-leaf': {
      // The stuck ranks (the gather's root, leaves of the bcast: nobody waits for them) await a
      // live timer that never fires in time instead of calling the collective; every other rank
      // runs it, its sends fit in the rings, and returns.
      const gathering = args.scenario === 'stuck-gather-root';
      if ((args.stuck ?? [gathering ? 0 : 3]).includes(me)) await new Promise((r) => setTimeout(r, 1e9));
      if (gathering) {
        const { gather } = await import('../../src/collectives/basic/gather.js');
        await gather(comm, { root: 0, send: Uint8Array.of(me), recv: me === 0 ? new Uint8Array(p) : undefined });
      } else {
        const { bcast } = await import('../../src/collectives/basic/bcast.js');
        await bcast(comm, Uint8Array.of(me === 0 ? 42 : 0), 0);
      }
      return me;
    }
    case 'timer-after': {
      // Every rank runs a bcast; rank p − 1 (a leaf) then awaits a timer of `amount` ms before
      // it returns, after the others have returned.
      const { bcast } = await import('../../src/collectives/basic/bcast.js');
      const buf = Uint8Array.of(me === 0 ? 42 : 0);
      await bcast(comm, buf, 0);
      if (me === p - 1) await new Promise((r) => setTimeout(r, args.amount ?? 100));
      return buf[0];
    }
    case 'compute-chunks':
    case 'compute-chunks-after': {
      // A rank computes `amount` ms in chunks of 20 ms, yielding to its event loop between
      // chunks through a zero timer (only timers active at every beat, but the loop busy):
      // rank 0 before it sends to the others waiting for it, or rank p − 1 after a bcast, once
      // the others have returned.
      const ms = args.amount ?? 1500;
      const chunks = async (): Promise<void> => {
        const end = Date.now() + ms;
        while (Date.now() < end) {
          compute(20);
          await new Promise((r) => setTimeout(r, 0));
        }
      };
      if (args.scenario === 'compute-chunks-after') {
        const { bcast } = await import('../../src/collectives/basic/bcast.js');
        const buf = Uint8Array.of(me === 0 ? 42 : 0);
        await bcast(comm, buf, 0);
        if (me === p - 1) await chunks();
        return buf[0];
      }
      if (me === 0) {
        await chunks();
        for (let d = 1; d < p; d++) await comm.send(d, 3, Uint8Array.of(d));
        return me;
      }
      const into = new Uint8Array(1);
      await comm.recv(0, 3, into);
      return into[0];
    }
    case 'long-exchange': {
      // Both ranks send each other `amount` bytes at once, through the test's small rings.
      const n = args.amount ?? 8 << 20;
      const peer = 1 - me;
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = (i * 7 + me) & 255;
      const into = new Uint8Array(n);
      await comm.waitAll<unknown>([comm.isend(peer, 9, out), comm.irecv(peer, 9, into)]);
      for (let i = 0; i < n; i++) if (into[i] !== ((i * 7 + peer) & 255)) return -1;
      return n;
    }
  }
}

export default async function deadlockProgram(comm: Communicator, args: DeadlockArgs): Promise<unknown> {
  try {
    return await run(comm, args);
  } catch (e) {
    record(args.out, comm.rank, e);
    throw e;
  }
}
