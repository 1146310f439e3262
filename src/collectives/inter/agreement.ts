/**
 * Do the ranks of one group agree on the arrays they passed (interAllgatherv's `counts`)?
 * Folded into a sum-allreduce the algorithm does anyway (Kang19 Algorithm 2's allreduce of
 * the block sizes), at 8 numbers more and no extra message: each rank contributes the four
 * bytes h_i of a 32-bit fingerprint of its array and their squares. With S_i = Σ h_i and
 * Q_i = Σ h_i² over the n ranks, n·Q_i = S_i² holds exactly when all ranks' h_i are equal
 * (Cauchy–Schwarz), and every rank computes the same verdict from the same sums — so either
 * all ranks proceed or all throw, never a hang. Exact in float64 while n²·2^16 < 2^53
 * (n < 2^18 ranks). A disagreement that leaves all four bytes equal (probability 2^−32 for a
 * random change) goes unnoticed.
 */
import { fingerprint } from '../allgather/handshake.js';

/** Numbers each rank adds to the allreduce. */
export const AGREEMENT_TERMS = 8;

/** This rank's terms for `values`: [h_0, h_0², …, h_3, h_3²]. */
export function agreementTerms(values: readonly number[]): number[] {
  const fp = fingerprint('counts', values);
  const out: number[] = [];
  for (let i = 0; i < 4; i++) out.push(fp[i], fp[i] * fp[i]);
  return out;
}

/** From the summed terms over n ranks: did every rank pass the same values? */
export function allAgree(sums: ArrayLike<number>, at: number, n: number): boolean {
  for (let i = 0; i < 4; i++) {
    const s = sums[at + 2 * i];
    const q = sums[at + 2 * i + 1];
    if (n * q !== s * s) return false;
  }
  return true;
}
