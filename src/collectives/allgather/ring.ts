/**
 * Ring allgather / allgatherv (Chan et al. 2007 §5; Träff, Ripke, Siebert, Balaji, Thakur and
 * Gropp 2010, the irregular case: Kang19 §3, refs [12], [16]). In step s = 0 … p−2 rank r
 * sends block (r+s) mod p to r−1 and receives block (r+s+1) mod p from r+1, in place in recv
 * (isend + irecv + waitAll); the own block goes out of `send` in step 0 while it is copied
 * into recv, so the copy overlaps the first transfer. Step 0 is the handshake (handshake.ts):
 * its message carries the 8-byte fingerprint of the sizes in front of the block.
 *
 * Cost (α+βm, blocks m_i): full duplex Σ_s (α + β·max_r m_{(r+s+1) mod p}) + 8β — for equal
 * blocks exactly (p−1)(α+βm) + 8β (when γm ≤ α+βm). One-ported, equal blocks: p even, every
 * step is a cycle of p transfers taking two rounds, 2(p−1)(α+βm) + 16β; p odd ≥ 3, the odd
 * cycle needs a third round that consecutive steps absorb except once, 2p(α+βm) + 24β (both
 * exact on the simulator, test/allgather.test.ts). Bandwidth-optimal (every rank receives
 * each block once), latency linear in p.
 */
import { checkReceived, copyOwn, recvBlock, sendBlock } from './blocks.js';
import { firstStep } from './handshake.js';
import { ALLGATHER_TAGS, type AllgathervInput, type AllgathervVariant } from './types.js';

export async function ringAllgatherv(input: AllgathervInput, tag: number): Promise<void> {
  const { comm } = input;
  const { rank, size: p } = comm;
  if (p === 1) {
    copyOwn(input);
    return;
  }
  const left = (rank - 1 + p) % p;
  const right = (rank + 1) % p;
  const first = firstStep(input, 'ring', tag, input.send, recvBlock(input, right));
  copyOwn(input);
  await first.received();
  await first.w;
  for (let s = 1; s < p - 1; s++) {
    const out = (rank + s) % p;
    const inn = (rank + s + 1) % p;
    const r = comm.irecv(right, tag, recvBlock(input, inn));
    const w = comm.isend(left, tag, sendBlock(input, out));
    await comm.waitAll<unknown>([r, w]);
    checkReceived(comm, await r, input.bytes[inn]);
  }
}

export const RING_ALLGATHER: AllgathervVariant = {
  name: 'ring',
  description: 'ring (Chan et al. 2007, Träff et al. 2010): p−1 steps to the neighbour, in place; bandwidth-optimal, for large blocks',
  run: (input) => ringAllgatherv(input, ALLGATHER_TAGS.ring),
};
