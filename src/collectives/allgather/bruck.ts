/**
 * Bruck allgather / allgatherv (Bruck, Ho, Kipnis, Upfal and Weathersby 1997 §3; Thakur et
 * al. 2005 §4.1 for MPI; Kang19 §3, ref [14]), any p, ⌈log₂p⌉ rounds. Rank r keeps the
 * blocks of ranks r, r+1, … (mod p) packed back to back in a temporary buffer, in that order
 * (its own block stays in `send` and goes first in every message as a segment). In round
 * k with d = 2^k it sends its first n = min(d, p−d) blocks to r−d and receives n blocks,
 * those of ranks r+d … r+d+n−1, from r+d, appending them. A final rotation copies the
 * packed blocks to their displacements (one copy per run of blocks contiguous in recv: two
 * for the default layout). Variable blocks need no more than their sizes, known everywhere —
 * the allgatherv suited to small irregular blocks (few rounds, one copy of everything).
 * Round 0 is the handshake (handshake.ts): its message carries the 8-byte fingerprint of the
 * sizes in front of the block, so ranks whose counts differ fail instead of misplacing data.
 * Cost (full duplex, equal blocks m): ⌈log₂p⌉α + β(p−1)m + 8β + γ(p−1)m for the rotation
 * (the own block's copy overlaps round 0 when γm ≤ α+βm). Irregular: Σ_k (α + β·max_r of the n
 * blocks r receives in round k) + γ·(total − m_r). One-ported: every round's transfers
 * r → r−d form cycles needing two or three transfer slots; measured on the simulator (equal
 * blocks, γ = 0) exactly twice the full-duplex time for p = 2^k, more for other p (e.g.
 * p = 6, α = 10, βm = 5: 150 one-ported against 3α + 5βm = 55 full duplex).
 */
import { checkReceived, copyOwn } from './blocks.js';
import { firstStep } from './handshake.js';
import { ALLGATHER_TAGS, type AllgathervInput, type AllgathervVariant } from './types.js';

export async function bruckAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const { comm, bytes, offsets, recv, send } = input;
  const { rank, size: p } = comm;
  // relative block j (rank + j mod p), j ≥ 1, lies at tmp[at[j], at[j + 1])
  const at = new Array<number>(p + 1);
  at[0] = 0;
  at[1] = 0;
  for (let j = 1; j < p; j++) at[j + 1] = at[j] + bytes[(rank + j) % p];
  const tmp = new Uint8Array(at[p]);
  let copied = false;
  for (let d = 1; d < p; d *= 2) {
    const n = Math.min(d, p - d);
    const head = tmp.subarray(0, at[n]);
    const out = send.length === 0 ? head : head.length === 0 ? send : [send, head];
    const into = tmp.subarray(at[d], at[d + n]);
    if (d === 1) {
      // round 0 is the handshake (handshake.ts): to rank − 1, from rank + 1, fingerprint first
      const first = firstStep(input, 'bruck', tag, out, into);
      copyOwn(input);
      copied = true;
      await first.received();
      await first.w;
      continue;
    }
    const r = comm.irecv((rank + d) % p, tag, into);
    const w = comm.isend((rank - d + p) % p, tag, out);
    await comm.waitAll<unknown>([r, w]);
    checkReceived(comm, await r, into.length);
  }
  if (!copied) copyOwn(input);
  // the rotation: runs of blocks that are contiguous in recv, one copy each
  let runTmp = 0;
  let runRecv = -1;
  let runLen = 0;
  for (let j = 1; j < p; j++) {
    const i = (rank + j) % p;
    if (bytes[i] === 0) continue;
    if (runLen > 0 && offsets[i] === runRecv + runLen) {
      runLen += bytes[i];
      continue;
    }
    if (runLen > 0) comm.copy(recv.subarray(runRecv, runRecv + runLen), tmp.subarray(runTmp, runTmp + runLen));
    runTmp = at[j];
    runRecv = offsets[i];
    runLen = bytes[i];
  }
  if (runLen > 0) comm.copy(recv.subarray(runRecv, runRecv + runLen), tmp.subarray(runTmp, runTmp + runLen));
}

export const BRUCK_ALLGATHER: AllgathervVariant = {
  name: 'bruck',
  description: 'Bruck et al. 1997: ⌈log₂p⌉ rounds for any p, blocks packed, one final rotation; for small (irregular) blocks',
  run: (input) => bruckAllgatherv(input, ALLGATHER_TAGS.bruck),
};
