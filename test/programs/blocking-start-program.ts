/**
 * Rank program of test/mpi/schedule.mpi.ts: persistent gatherv / scatterv plans of the
 * compiled variants over MPI, started with `startBlocking()` (the whole data phase in C) and
 * `start()` alternately, with other collectives in between (the call slots move the plans'
 * tags), checked byte for byte; `startBlocking` refused while a `start()` is still running.
 * Returns the problems it found (empty: all good).
 */
import { gathervInit, scattervInit } from '../../src/collectives/index.js';
import { bcast } from '../../src/collectives/basic/index.js';
import type { Communicator } from '../../src/comm/communicator.js';

/** A user tag: the root's go-ahead of the refusal check. */
const GO = 7;

export default async function blockingStartProgram(comm: Communicator): Promise<string[]> {
  const p = comm.size;
  const me = comm.rank;
  const root = p - 1;
  const problems: string[] = [];
  const counts = Array.from({ length: p }, (_, i) => (i % 2 === 0 ? 3 : 0) + i);
  const total = counts.reduce((a, b) => a + b, 0);
  const displs = counts.map((_, i) => counts.slice(0, i).reduce((a, b) => a + b, 0));
  for (const algorithm of ['linear', 'binomial', 'optimal', 'adaptive'] as const) {
    const send = new Uint8Array(counts[me]);
    const recv = me === root ? new Uint8Array(total) : undefined;
    const g = await gathervInit(comm, me === root ? { root, send, recv, counts } : { root, send }, { algorithm });
    const sRecv = new Uint8Array(counts[me]);
    const sSend = me === root ? new Uint8Array(total) : undefined;
    const s = await scattervInit(comm, me === root ? { root, recv: sRecv, send: sSend, counts } : { root, recv: sRecv }, { algorithm });
    // adaptive gatherv: the first start builds the tree, overlapped; from the second on the schedule runs
    await g.start();
    if (g.startBlocking === undefined || s.startBlocking === undefined) {
      problems.push(`${algorithm}: no startBlocking over MPI`);
      continue;
    }
    for (let it = 0; it < 6; it++) {
      send.fill((me * 7 + it) & 0xff);
      if (sSend !== undefined) for (let i = 0; i < total; i++) sSend[i] = (i * 3 + it) & 0xff;
      if (it % 2 === 0) {
        g.startBlocking();
        s.startBlocking();
      } else {
        await g.start();
        await s.start();
      }
      // another collective in between: the next start runs in another call slot
      await bcast(comm, new Uint8Array(4), 0);
      if (recv !== undefined) {
        for (let r = 0; r < p; r++) {
          for (let k = 0; k < counts[r]; k++) {
            if (recv[displs[r] + k] !== ((r * 7 + it) & 0xff)) problems.push(`${algorithm} gatherv it ${it}: block ${r} byte ${k} is ${recv[displs[r] + k]}`);
          }
        }
      }
      for (let k = 0; k < counts[me]; k++) {
        if (sRecv[k] !== (((displs[me] + k) * 3 + it) & 0xff)) problems.push(`${algorithm} scatterv it ${it}: byte ${k} is ${sRecv[k]}`);
      }
    }
    // refused while a start() is still running (the plan's own check, before anything is
    // sent): the other ranks start only once the root has tried, so its start() is pending
    if (me === root) {
      const running = g.start();
      try {
        g.startBlocking();
        problems.push(`${algorithm}: startBlocking during start() was not refused`);
      } catch (e) {
        if (!(e instanceof Error) || !/previous start\(\)/.test(e.message)) problems.push(`${algorithm}: startBlocking during start() threw ${String(e)}`);
      }
      for (let r = 0; r < p; r++) if (r !== root) await comm.send(r, GO, new Uint8Array(0));
      await running;
    } else {
      await comm.recv(root, GO, new Uint8Array(0));
      await g.start();
    }
  }
  return problems;
}
