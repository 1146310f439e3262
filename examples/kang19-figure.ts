/**
 * Fig. 6 of Kang et al., "Scalable algorithms for MPI intergroup Allgather and Allgatherv"
 * (Parallel Computing 2019, "Kang19"), its 64-process panel, on the simulator: the improvement
 * T_old / T_new of Algorithm 1 (allgather, settings 1–4) and Algorithm 2 (allgatherv, settings
 * 5–8) over root gathering (what MPICH and Open MPI ship), against the largest block per rank,
 * 64 KiB … 8 MiB. The last line is the limit the paper's Eq. (5) predicts for large messages.
 *
 *   npm run build && npx tsx examples/kang19-figure.ts          # ~10 s; the 256-process panel: … kang19-figure.ts 256 (~3 min)
 *
 * Model: homogeneous, full duplex (one send and one receive at a time), α = 1000 per message,
 * β = 1 per byte (what `vcoll inter` uses). A block of `size` bytes is simulated with 32 KiB
 * at β·size/32 KiB per byte: the same transfer time in less memory, and enough bytes for the
 * collectives' size thresholds (e.g. Bruck below 80 KiB, ring above) to choose as they would
 * at full size. Every rank checks every byte it received.
 */
import { interAllgather, interAllgatherv, linearModel, runSim, splitIntercomm } from 'vcoll';

const ranks = Number(process.argv[2] ?? 64);
const SIZES = Array.from({ length: 8 }, (_, i) => 65536 * 2 ** i);
const REAL = 32768; // simulated bytes of the largest block
const EQ5 = [7.0, 4.84, 4.21, 6.68, 7.0, 7.0, 4.84, 4.84]; // the paper's limits, settings 1–8
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
/** Rank `rank` of group `group` (0: A, 1: B) sends a block of n bytes of this pattern. */
const blockOf = (group: number, rank: number, n: number): Uint8Array => new Uint8Array(n).map((_, i) => (group * 101 + rank * 31 + i * 7) & 255);

/**
 * Kang19 §5's settings: group sizes p (A) and q (B) and every rank's block. Allgather: 1 p = q;
 * 2 p/q = 25/7; 3 as 2 with k_B = k_A/4; 4 as 2 with k_A = k_B/4. Allgatherv: 5 = 1; 7 = 2;
 * 6 (p = q) and 8 (25/7) with block sizes growing linearly with the rank up to `size`.
 */
function setting(s: number, size: number): { vector: boolean; blocks: [number[], number[]] } {
  const square = s === 1 || s === 5 || s === 6; // p = q; otherwise p/q = 25/7
  const p = square ? Math.ceil(ranks / 2) : Math.round((25 * ranks) / 32);
  const q = ranks - p;
  if (s === 6 || s === 8) {
    const arithmetic = (n: number): number[] => Array.from({ length: n }, (_, i) => Math.ceil((size * (i + 1)) / n));
    return { vector: true, blocks: [arithmetic(p), arithmetic(q)] };
  }
  const kA = s === 4 ? size / 4 : size; // setting 3: B sends a quarter of A's; setting 4: A a quarter of B's
  const kB = s === 3 ? size / 4 : size;
  return { vector: s >= 5, blocks: [new Array<number>(p).fill(kA), new Array<number>(q).fill(kB)] };
}

/** Virtual time of the slowest rank for root gathering and for the paper's algorithm. */
async function times(s: number, size: number): Promise<[number, number]> {
  const scale = size / REAL;
  const { vector, blocks } = setting(s, REAL);
  const p = blocks[0].length;
  const model = linearModel({ alpha: 1000, beta: scale, gamma: 0 });
  // What every rank of group g must receive: the other group's blocks in rank order.
  const expected = [1, 0].map((other) => Buffer.concat(blocks[other].map((n, r) => blockOf(other, r, n))));
  const { results } = await runSim(
    ranks,
    async (comm) => {
      const group = comm.rank < p ? 0 : 1;
      const inter = await splitIntercomm(comm, group);
      const theirs = blocks[1 - group];
      const send = blockOf(group, inter.rank, blocks[group][inter.rank]);
      const out: number[] = [];
      for (const algorithm of ['root-gathering', 'segmented'] as const) {
        const recv = new Uint8Array(sum(theirs));
        await comm.clock?.sync();
        const t0 = comm.clock?.now() ?? 0;
        if (vector) await interAllgatherv(inter, { send, recv, counts: theirs }, { algorithm });
        else await interAllgather(inter, { send, recv }, { algorithm });
        out.push((comm.clock?.now() ?? 0) - t0);
        if (!expected[group].equals(recv)) throw new Error(`setting ${s}, ${algorithm}: rank ${comm.rank} received wrong data`);
      }
      return out;
    },
    { model, ports: 'full-duplex' },
  );
  return [0, 1].map((a) => Math.max(...results.map((r) => r[a]))) as [number, number];
}

console.log(`Kang19 Fig. 6, ${ranks} processes: improvement T_old / T_new (root gathering / Algorithm 1 or 2) on the simulator`);
console.log(['size'.padStart(8), ...EQ5.map((_, i) => `set. ${i + 1}`.padStart(8))].join(''));
for (const size of SIZES) {
  const row: string[] = [];
  for (let s = 1; s <= 8; s++) {
    const [old, now] = await times(s, size);
    row.push((old / now).toFixed(2).padStart(8));
  }
  console.log([`${size / 1024} KiB`.padStart(8), ...row].join(''));
}
console.log(['Eq. (5)'.padStart(8), ...EQ5.map((x) => x.toFixed(2).padStart(8))].join(''));
