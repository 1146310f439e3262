/**
 * Recursive-doubling allgather (Thakur, Rabenseifner and Gropp 2005 §4.1; Kang19 §3, ref
 * [15]), in place in recv, any block sizes. Let q = 2^⌊log₂p⌋ and e = p − q.
 * - p = q: in round k = 0 … log₂p − 1 rank r exchanges, with partner r ⊕ 2^k, all blocks of
 *   its aligned group of 2^k ranks (one vectored message each way).
 * - p ≠ q (our choice; MPICH instead runs a distance-halving repair of the missing blocks):
 *   the e extra ranks fold in. Pre-step: rank q+i (i < e) sends its block to rank i. Then the
 *   first q ranks run recursive doubling where rank i's "block" is blocks i and q+i. Post-step:
 *   rank i sends all p−1 blocks but q+i's to rank q+i.
 * Cost (full duplex, equal blocks m, γm ≤ α+βm for the overlapped own copy):
 *   p = 2^k: kα + β(p−1)m. One-ported: every exchange is two transfers, 2kα + 2β(p−1)m.
 *   otherwise (full duplex): (⌊log₂p⌋+2)α + βm·(1 + Σ_{k<log₂q} (2^k + min(2^k, e)) + (p−1)):
 *   the pre-step, the rounds (the slowest pair holds the extra blocks of ranks 0 … 2^k−1)
 *   and the post-step. Latency-optimal for p = 2^k; use Bruck for other p.
 * Plus, first, the handshake (handshake.ts): one message of 8 bytes to the left neighbour and
 * one from the right, α + 8β (2α + 16β one-ported), before round 0.
 */
import { blocksBytes, blocksMessage, checkReceived, copyOwn, recvBlock } from './blocks.js';
import { handshake } from './handshake.js';
import { ALLGATHER_TAGS, type AllgathervInput, type AllgathervVariant } from './types.js';

/** The largest power of two ≤ p. */
export function pof2Below(p: number): number {
  let q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

/** Ranks g … g+n−1 of the first q and their extra partners (i+q < p). */
function group(g: number, n: number, q: number, p: number): number[] {
  const out: number[] = [];
  for (let i = g; i < g + n; i++) out.push(i);
  for (let i = g; i < g + n && i + q < p; i++) out.push(i + q);
  return out;
}

export async function recursiveDoublingAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const { comm, bytes } = input;
  const { rank, size: p } = comm;
  await handshake(input, 'recursive-doubling'); // its first partner is r ⊕ 1, not the handshake's neighbours
  const q = pof2Below(p);
  const copied = { done: false };
  const own = (): void => {
    if (!copied.done) copyOwn(input);
    copied.done = true;
  };
  if (rank >= q) {
    // an extra rank: hand the block to rank − q, get everything back from it
    const partner = rank - q;
    const others: number[] = [];
    for (let i = 0; i < p; i++) if (i !== rank) others.push(i);
    const w = comm.isend(partner, tag, input.send);
    own();
    await w;
    const st = await comm.recv(partner, tag, blocksMessage(input, others, false));
    checkReceived(comm, st, blocksBytes(input, others));
    return;
  }
  if (rank + q < p) {
    const st = await comm.recv(rank + q, tag, recvBlock(input, rank + q));
    checkReceived(comm, st, bytes[rank + q]);
  }
  for (let mask = 1; mask < q; mask *= 2) {
    const partner = rank ^ mask;
    const mine = group(rank & ~(mask - 1), mask, q, p);
    const theirs = group(partner & ~(mask - 1), mask, q, p);
    const r = comm.irecv(partner, tag, blocksMessage(input, theirs, false));
    const w = comm.isend(partner, tag, blocksMessage(input, mine, true));
    own();
    await comm.waitAll<unknown>([r, w]);
    checkReceived(comm, await r, blocksBytes(input, theirs));
  }
  own();
  if (rank + q < p) {
    const all: number[] = [];
    for (let i = 0; i < p; i++) if (i !== rank + q) all.push(i);
    await comm.send(rank + q, tag, blocksMessage(input, all, true));
  }
}

export const RECURSIVE_DOUBLING_ALLGATHER: AllgathervVariant = {
  name: 'recursive-doubling',
  description: 'recursive doubling (Thakur et al. 2005): ⌈log₂p⌉ exchanges with rank ⊕ 2^k, in place; extra ranks of p ≠ 2^k fold in (2 more steps)',
  run: (input) => recursiveDoublingAllgatherv(input, ALLGATHER_TAGS.recursiveDoubling),
};
