/**
 * Worker-threads rank program (p = 2) for blocking receives that are watched before they are
 * posted (ThreadsEndpoint.irecvAwaited): rank 0 raises a flag in shared memory and at once
 * calls `recv(1, tag 2)`; rank 1, spinning on that flag, then sends a message with tag 1 and
 * one with tag 2 — so the tag-1 message usually lands *while* rank 0 watches the channel, and
 * must not be taken by the tag-2 receive; every third tag-2 message is longer than the ring (taken
 * piece by piece by the blocking receive). Every round checks both messages byte for byte;
 * returns the number of rounds whose data or statuses were wrong (rank 0) or 0 (rank 1).
 */
import type { Communicator } from '../../src/comm/communicator.js';

const byteOf = (round: number, tag: number, i: number): number => (round * 13 + tag * 101 + i) & 255;

function message(round: number, tag: number, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => byteOf(round, tag, i));
}

function right(buf: Uint8Array, round: number, tag: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (buf[i] !== byteOf(round, tag, i)) return false;
  return true;
}

export default async function recvWatch(comm: Communicator, args: { flag: SharedArrayBuffer; rounds: number }): Promise<number> {
  const flag = new Int32Array(args.flag);
  let wrong = 0;
  for (let round = 1; round <= args.rounds; round++) {
    const n1 = 1 + (round % 40);
    // Every third tag-2 message is longer than the test's 1 KiB ring (it arrives in pieces).
    const n2 = round % 3 === 0 ? 3000 + round : 1 + ((round * 7) % 90);
    if (comm.rank === 0) {
      const b = new Uint8Array(4000);
      const a = new Uint8Array(128);
      Atomics.store(flag, 0, round);
      const s2 = await comm.recv(1, 2, b);
      const s1 = await comm.recv(1, 1, a);
      const ok = s2.tag === 2 && s2.bytes === n2 && right(b, round, 2, n2) && s1.tag === 1 && s1.bytes === n1 && right(a, round, 1, n1);
      if (!ok) wrong++;
    } else {
      while (Atomics.load(flag, 0) !== round) {
        // spin: rank 0 is about to watch its channel
      }
      await comm.send(0, 1, message(round, 1, n1));
      await comm.send(0, 2, message(round, 2, n2));
    }
    // Rank 0 moves on only once rank 1 is waiting for the next flag.
    if (comm.rank === 1) await comm.send(0, 3, new Uint8Array(0));
    else await comm.recv(1, 3, new Uint8Array(0));
  }
  return wrong;
}
