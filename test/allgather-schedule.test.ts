/**
 * The compiled data phases of allgather / allgatherv (src/collectives/allgather/schedule.ts:
 * ring, recursive doubling, Bruck): (a) every rank's schedule after the handshake passes the
 * static check (matching, deadlock freedom, ranges, overlaps) for every compiled algorithm,
 * p ∈ {1, 2, 3, 4, 5, 7, 8, 13}, random sizes with zeros, packed and gapped offsets; (b) the
 * variants, which now run these schedules, give the right bytes on the simulator, send exactly
 * the compiled messages and copies, keep the predicted virtual times for equal blocks, and keep
 * the virtual times, per-rank finish times and traces that the program code (one await per
 * message) gave before the change, recorded below; (c) the check catches corrupted schedules.
 */
import { describe, expect, it } from 'vitest';
import {
  ALLGATHER_TAGS,
  allgatherInput,
  COMPILED_ALLGATHER_ALGORITHMS,
  compileAllgatherSchedule,
  recursiveDoublingAllgatherv,
  type CompiledAllgatherAlgorithm,
} from '../src/collectives/allgather/index.js';
import { CommunicationError, InvalidArgumentError, UnavailableError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { checkSchedule } from '../src/schedule/check.js';
import { formatSchedule } from '../src/schedule/format.js';
import { runSchedule } from '../src/schedule/run.js';
import type { RankSchedule, ScheduleOp, ScheduleStep, WorldSchedule } from '../src/schedule/types.js';
import { spanBytes } from '../src/schedule/types.js';
import { runSim, type PortSetting, type SimTrace } from '../src/transports/sim/index.js';
import { int, rng } from './helpers/random.js';
import { blockOf, displsOf, expectedRecv, makeCase, runCaseRank, SENTINEL, type AgCase, type Layout } from './programs/allgather-program.js';

const PS = [1, 2, 3, 4, 5, 7, 8, 13];
const alpha = 10;
const beta = 1;

/** Byte sizes with zeros (about one in four). */
function randomBytes(rnd: () => number, p: number, max: number): number[] {
  return Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : int(rnd, 1, max)));
}

/** Offsets with gaps (and a start gap), in a random order of the blocks. */
function gappedOffsets(rnd: () => number, bytes: readonly number[]): number[] {
  const p = bytes.length;
  const order = Array.from({ length: p }, (_, i) => i);
  for (let i = p - 1; i > 0; i--) {
    const j = int(rnd, 0, i);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const out = new Array<number>(p);
  let at = int(rnd, 0, 5);
  for (const i of order) {
    out[i] = at;
    at += bytes[i] + int(rnd, 0, 4);
  }
  return out;
}

function problemsText(world: WorldSchedule): string {
  return checkSchedule(world)
    .slice(0, 5)
    .map((x) => `${x.kind}: ${x.message}`)
    .join('\n');
}

describe('(a) compileAllgatherSchedule passes checkSchedule', () => {
  it('every compiled algorithm × p ∈ {1,2,3,4,5,7,8,13} × equal sizes (allgather) and random sizes with zeros, packed and gapped (allgatherv)', () => {
    const rnd = rng(4242);
    let checked = 0;
    for (const algorithm of COMPILED_ALLGATHER_ALGORITHMS) {
      for (const p of PS) {
        // allgather: equal blocks, m = 0 included (every compiled algorithm offers allgather)
        for (const m of [0, 1, 7]) {
          const world = compileAllgatherSchedule(algorithm, new Array<number>(p).fill(m));
          expect(world.ranks).toHaveLength(p);
          expect(problemsText(world), `${algorithm} p=${p} m=${m}`).toBe('');
          checked++;
        }
        // allgatherv: ring and bruck offer it; recursive doubling serves irregular blocks as a
        // variant (basic/ and the tests run it on the v input), so it is checked there too
        for (let k = 0; k < 6; k++) {
          const bytes = randomBytes(rnd, p, k < 3 ? 9 : 300);
          const offsets = k % 2 === 0 ? undefined : gappedOffsets(rnd, bytes);
          const world = compileAllgatherSchedule(algorithm, bytes, offsets);
          expect(problemsText(world), `${algorithm} p=${p} bytes=${JSON.stringify(bytes)} offsets=${JSON.stringify(offsets)}`).toBe('');
          checked++;
        }
      }
    }
    expect(checked).toBe(COMPILED_ALLGATHER_ALGORITHMS.length * PS.length * 9);
  });

  it('the schedules have the documented shape (ring p=4, one block empty) and print', () => {
    const world = compileAllgatherSchedule('ring', [3, 0, 2, 5]);
    const r0 = world.ranks[0];
    expect(r0.buffers).toEqual([
      { name: 'send', bytes: 3 },
      { name: 'recv', bytes: 10 },
    ]);
    // the own copy, then steps 1 and 2 (step 0 is the handshake, program code)
    expect(r0.steps.map((s) => [s.window, s.ops.map((o) => o.kind)])).toEqual([
      [1, ['copy']],
      [2, ['recv', 'send']],
      [2, ['recv', 'send']],
    ]);
    expect(world.ranks[1].steps[0].ops.map((o) => o.kind)).toEqual(['recv', 'send']); // an empty own block: no copy
    const text = formatSchedule(world);
    expect(text).toContain("schedule 'allgatherv ring': 4 ranks");
    expect(text).toContain(`0x${ALLGATHER_TAGS.ring.toString(16)}`);
    // Bruck: 'tmp' holds the other blocks; recursive doubling's messages are vectored
    expect(compileAllgatherSchedule('bruck', [3, 0, 2, 5]).ranks[1].buffers.map((b) => [b.name, b.bytes])).toEqual([
      ['send', 0],
      ['recv', 10],
      ['tmp', 10],
    ]);
    // (blocks adjacent in recv travel as one range: blocks 2 and 3 packed, 3 + 4 bytes at 3;
    // with a gap between them, two ranges)
    const rd = compileAllgatherSchedule('recursive-doubling', [1, 2, 3, 4]).ranks[0];
    const round1 = rd.steps[1].ops[0];
    expect(round1.kind === 'recv' && round1.data).toEqual([{ buffer: 1, offset: 3, length: 7 }]);
    const gapped = compileAllgatherSchedule('recursive-doubling', [1, 2, 3, 4], [0, 1, 3, 7]).ranks[0].steps[1].ops[0];
    expect(gapped.kind === 'recv' && gapped.data.length).toBe(2);
  });

  it('auto and unknown names are not compiled (UnavailableError); bad sizes and offsets are InvalidArgumentErrors', () => {
    for (const name of ['auto', 'linear']) expect(() => compileAllgatherSchedule(name, [1, 2])).toThrow(UnavailableError);
    expect(() => compileAllgatherSchedule('ring', [])).toThrow(InvalidArgumentError);
    expect(() => compileAllgatherSchedule('ring', [1, -1])).toThrow(InvalidArgumentError);
    expect(() => compileAllgatherSchedule('ring', [1, 2], [0])).toThrow(InvalidArgumentError);
    expect(() => compileAllgatherSchedule('ring', [1, 2], [0, 0.5])).toThrow(InvalidArgumentError);
    expect(compileAllgatherSchedule('bruck', [1, 2], undefined, { tag: 99 }).ranks[0].steps.flatMap((s) => s.ops).every((o) => o.kind === 'copy' || o.kind === 'combine' || o.tag === 99)).toBe(true);
  });
});

describe('(a) the whole data phase (firstStep: true) run as a schedule alone gives every rank every block', () => {
  it('every compiled algorithm × p ∈ PS × random sizes with zeros, packed and gapped: checkSchedule clean; runSchedule on the simulator, portable and native executor, right bytes and sentinels', async () => {
    const rnd = rng(31337);
    for (const algorithm of COMPILED_ALLGATHER_ALGORITHMS) {
      for (const p of PS) {
        for (const layout of ['default', 'gapped', 'permuted'] as const) {
          const c = makeCase('allgatherv', algorithm, randomBytes(rnd, p, 12), int(rnd, 1, 3), layout, int(rnd, 0, 1000));
          const bytes = c.counts.map((n) => n * c.unitBytes);
          const offsets = displsOf(c).map((x) => x * c.unitBytes);
          const world = compileAllgatherSchedule(algorithm, bytes, offsets, { firstStep: true });
          const what = `${algorithm} p=${p} ${JSON.stringify(c)}`;
          expect(problemsText(world), what).toBe('');
          const want = expectedRecv(c);
          for (const portable of [true, false]) {
            const res = await runSim(
              p,
              async (comm) => {
                const rs = world.ranks[comm.rank];
                const recvBuf = new Uint8Array(c.recvBytes).fill(SENTINEL);
                const buffers = rs.buffers.map((b, i) =>
                  i === 0 ? blockOf(comm.rank, b.bytes, c.seed) : i === 1 ? recvBuf.subarray(0, b.bytes) : new Uint8Array(b.bytes),
                );
                await runSchedule(comm, rs, buffers, { portable });
                return recvBuf;
              },
              { model: linearModel({ alpha, beta }) },
            );
            for (let r = 0; r < p; r++) expect([...res.results[r]], `${what} portable=${portable} rank ${r}`).toEqual([...want]);
          }
        }
      }
    }
  });

  it('with its first step, ring and Bruck have one step more than after the handshake (p ≥ 2), recursive doubling and the pipelined ring none', () => {
    const bytes = [3, 0, 2, 5, 1];
    for (const algorithm of COMPILED_ALLGATHER_ALGORITHMS) {
      const after = compileAllgatherSchedule(algorithm, bytes);
      const whole = compileAllgatherSchedule(algorithm, bytes, undefined, { firstStep: true });
      for (let r = 0; r < bytes.length; r++) {
        // the own copy's step (absent for an empty block) becomes the first exchange's step
        const extra = algorithm === 'recursive-doubling' || algorithm === 'pipelined-ring' ? 0 : bytes[r] > 0 ? 0 : 1;
        expect(whole.ranks[r].steps.length, `${algorithm} rank ${r}`).toBe(after.ranks[r].steps.length + extra);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------
// (b) on the simulator

/** A digest of a trace: every message and copy, sorted (independent of completion order at equal times). */
function traceDigest(t: SimTrace): string {
  const lines = [
    ...t.messages.map((m) => `m ${m.from} ${m.to} ${m.tag} ${m.bytes} ${m.start} ${m.end}`),
    ...t.copies.map((c) => `c ${c.rank} ${c.bytes} ${c.start} ${c.end}`),
  ].sort();
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (const l of lines) {
    for (let i = 0; i < l.length; i++) {
      h1 = Math.imul(h1 ^ l.charCodeAt(i), 0x01000193) >>> 0;
      h2 = Math.imul(h2 ^ l.charCodeAt(i), 0x5bd1e995) >>> 0;
    }
    h1 = Math.imul(h1 ^ 10, 0x01000193) >>> 0;
  }
  return `${lines.length}:${h1.toString(16).padStart(8, '0')}${h2.toString(16).padStart(8, '0')}`;
}

interface TimeCase {
  readonly c: AgCase;
  readonly ports: PortSetting;
  readonly gamma: number;
}

/**
 * The hard cases of the recorded fixture: every algorithm (recursive doubling as the variant on
 * the v input) × p ∈ PS, irregular sizes with zeros, unitBytes 1–3, default/gapped/permuted
 * layouts, both port models, γ ∈ {0, 2} (γ > 0: the own copy's overlap with the handshake
 * shows); then allgather with equal blocks, γ ∈ {0, 3}.
 */
function timeCases(): TimeCase[] {
  const out: TimeCase[] = [];
  const layouts: Layout[] = ['default', 'gapped', 'permuted'];
  const algs = ['ring', 'bruck', 'recursive-doubling', 'pipelined-ring'] as const;
  algs.forEach((alg, a) => {
    PS.forEach((p, i) => {
      const seed = 1000 + 10 * i + a;
      const rnd = rng(seed);
      const counts = Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : int(rnd, 1, alg === 'pipelined-ring' ? 300 : 40)));
      const api = alg === 'recursive-doubling' ? 'variant' : 'allgatherv';
      const c = makeCase(api, alg, counts, 1 + (i % 3), layouts[(i + a) % 3], seed);
      out.push({ c, ports: i % 2 === 0 ? 'full-duplex' : 'one-ported', gamma: (i >> 1) % 2 === 0 ? 0 : 2 });
    });
  });
  (['ring', 'bruck', 'recursive-doubling'] as const).forEach((alg, a) => {
    PS.forEach((p, i) => {
      const m = 1 + ((p + a) % 5);
      const c = makeCase('allgather', alg, new Array<number>(p).fill(m), 1, 'default', 2000 + i);
      out.push({ c, ports: (i + a) % 2 === 0 ? 'one-ported' : 'full-duplex', gamma: i % 3 === 0 ? 0 : 3 });
    });
  });
  return out;
}

/**
 * [virtual time, every rank's finish time, traceDigest] of each of timeCases(), in order, with
 * α = 10, β = 1 and the case's γ and ports. Produced BEFORE the data phases were compiled: by
 * running the program-code implementation (one await per message; git HEAD of
 * src/collectives/allgather/ on 2026-11-26) on exactly these cases with runCaseRank under
 * runSim(…, { trace: true }) and printing these rows (a throwaway script with the same
 * timeCases and traceDigest). The pipelined ring became a schedule later (one step of two
 * streams, pipelined-ring.ts): its streams now both start once the handshake has completed,
 * where the program code started the send stream when the handshake's send completed and the
 * receive stream when its receive did, and its operations are issued in another order at one
 * virtual time. Full duplex and k ports it is unchanged here; one-ported, where simultaneous posts
 * decide the port order, two rows changed (p = 7: 6353 → 6439; p = 13: 7379 → 7344), recorded
 * again from the schedule (the old rows in comments).
 */
const RECORDED: readonly (readonly [number, readonly number[], string])[] = [
  [0, [0], '1:4a7f6e91cc1561c7'], // allgatherv ring p=1 full-duplex γ=0
  [130, [130, 130], '4:2578a0f424780768'], // allgatherv ring p=2 one-ported γ=0
  [166, [166, 138, 166], '7:23c603f782d47d51'], // allgatherv ring p=3 full-duplex γ=2
  [161, [161, 139, 139, 161], '15:1c5f8ebfaafe16bb'], // allgatherv ring p=4 one-ported γ=2
  [152, [136, 136, 152, 152, 130], '23:761a87a6553cca98'], // allgatherv ring p=5 full-duplex γ=0
  [950, [800, 950, 950, 853, 822, 725, 709], '46:99a4074c8fa16e4e'], // allgatherv ring p=7 one-ported γ=0
  [351, [351, 348, 348, 331, 326, 326, 297, 351], '63:1a65920fa96431ad'], // allgatherv ring p=8 full-duplex γ=2
  [1264, [1214, 1180, 1264, 1264, 1246, 1194, 1194, 1138, 1118, 1190, 1218, 1218, 1214], '167:3372c22ffc38d855'], // allgatherv ring p=13 one-ported γ=2
  [0, [0], '0:811c9dc501000193'], // allgatherv bruck p=1 full-duplex γ=0
  [156, [156, 156], '6:91a20144e8d27cfe'], // allgatherv bruck p=2 one-ported γ=0
  [736, [700, 712, 736], '13:8c477148a5dc820a'], // allgatherv bruck p=3 full-duplex γ=2
  [455, [389, 381, 455, 377], '20:0719b86ea279d1ae'], // allgatherv bruck p=4 one-ported γ=2
  [160, [158, 158, 144, 160, 160], '35:92dc3f3c0ce6bcb0'], // allgatherv bruck p=5 full-duplex γ=0
  [620, [557, 551, 620, 496, 557, 551, 620], '38:b696e1a0c5d7ed1c'], // allgatherv bruck p=7 one-ported γ=0
  [417, [341, 417, 413, 374, 375, 373, 405, 386], '74:3b22b597936c3b93'], // allgatherv bruck p=8 full-duplex γ=2
  [2474, [2300, 2474, 2228, 2174, 2260, 2242, 2458, 2388, 2224, 2274, 2170, 2158, 2172], '182:53f65919d3670879'], // allgatherv bruck p=13 one-ported γ=2
  [0, [0], '1:cd1ad05062c4df08'], // variant recursive-doubling p=1 full-duplex γ=0
  [154, [154, 154], '6:22667afec605c246'], // variant recursive-doubling p=2 one-ported γ=0
  [405, [405, 240, 405], '10:a63267c9a3aba961'], // variant recursive-doubling p=3 full-duplex γ=2
  [193, [193, 193, 193, 193], '15:c16d5e8b03cd3503'], // variant recursive-doubling p=4 one-ported γ=2
  [552, [552, 368, 368, 368, 552], '20:cc3a295c3c64fc9e'], // variant recursive-doubling p=5 full-duplex γ=0
  [855, [855, 852, 804, 572, 855, 852, 804], '27:8a35376318da7d5d'], // variant recursive-doubling p=7 one-ported γ=0
  [280, [252, 280, 252, 280, 252, 280, 252, 280], '40:a6fca0c2ac96c03e'], // variant recursive-doubling p=8 full-duplex γ=2
  [1196, [1164, 1196, 1140, 1160, 1196, 862, 862, 862, 1164, 1196, 1140, 1160, 1196], '55:6286ef3128af1e83'], // variant recursive-doubling p=13 one-ported γ=2
  [0, [0], '1:47c013e62ac25b0e'], // allgatherv pipelined-ring p=1 full-duplex γ=0
  [36, [36, 36], '2:0309a8b426daadd2'], // allgatherv pipelined-ring p=2 one-ported γ=0
  [3279, [3279, 3279, 2758], '29:cd2e01ba3f358516'], // allgatherv pipelined-ring p=3 full-duplex γ=2
  [1506, [1341, 1506, 1506, 1440], '58:92aefcca7e05902c'], // allgatherv pipelined-ring p=4 one-ported γ=2
  [1472, [1136, 1136, 1158, 1472, 1472], '97:3acb6de007c98a02'], // allgatherv pipelined-ring p=5 full-duplex γ=0
  // program code: [6353, [5799, 6353, 6353, 6080, 5679, 5401, 4956], '199:85820f5a32056dc6']
  [6439, [5690, 6439, 6439, 6166, 5859, 5697, 5319], '199:d6a551fe2de1a4fc'], // allgatherv pipelined-ring p=7 one-ported γ=0
  [2146, [2146, 1982, 1915, 2054, 2054, 1947, 1947, 2146], '266:6f3609652a13f34b'], // allgatherv pipelined-ring p=8 full-duplex γ=2
  // program code: [7379, [7023, 7023, 6759, 6865, 6865, 6543, 6637, 6997, 7258, 7323, 7379, 7379, 6863], '695:7b595ba0a35be0c6']
  [7344, [6933, 6933, 6551, 6871, 6871, 6423, 6464, 6995, 7223, 7288, 7344, 7344, 6684], '695:6155f24ff64442af'], // allgatherv pipelined-ring p=13 one-ported γ=2
  [0, [0], '1:165e1492103b6fda'], // allgather ring p=1 one-ported γ=0
  [21, [21, 21], '4:5bd6ff444f064ee2'], // allgather ring p=2 full-duplex γ=3
  [108, [108, 108, 94], '9:b87f6f83d3e52775'], // allgather ring p=3 one-ported γ=3
  [53, [53, 53, 53, 53], '16:c564a9ddc870b9ab'], // allgather ring p=4 full-duplex γ=0
  [134, [134, 134, 134, 134, 123], '25:cb7597b7216810ad'], // allgather ring p=5 one-ported γ=3
  [86, [86, 86, 86, 86, 86, 86, 86], '49:1ea4a25b2fc51f53'], // allgather ring p=7 full-duplex γ=3
  [212, [212, 212, 212, 212, 212, 212, 212, 212], '64:b95b7d0d052a1a6b'], // allgather ring p=8 one-ported γ=0
  [176, [176, 176, 176, 176, 176, 176, 176, 176, 176, 176, 176, 176, 176], '169:f1a82318b7ea4a40'], // allgather ring p=13 full-duplex γ=3
  [0, [0], '1:1321501f14596adf'], // allgather bruck p=1 full-duplex γ=0
  [56, [56, 56], '6:b46a00f186ac5447'], // allgather bruck p=2 one-ported γ=3
  [68, [68, 68, 68], '13:c57ed1af8d73cf7f'], // allgather bruck p=3 full-duplex γ=3
  [62, [62, 62, 62, 62], '18:fc958de2e70ffac4'], // allgather bruck p=4 one-ported γ=0
  [70, [70, 70, 70, 70, 70], '28:224faf24672d04aa'], // allgather bruck p=5 full-duplex γ=3
  [240, [240, 218, 218, 240, 218, 218, 218], '40:7fd32c7ee5d5343c'], // allgather bruck p=7 one-ported γ=3
  [73, [73, 73, 73, 73, 73, 73, 73, 73], '46:56e37a64c3c59f40'], // allgather bruck p=8 full-duplex γ=0
  [461, [461, 461, 436, 461, 426, 461, 426, 436, 426, 461, 436, 461, 436], '89:04b8bffe14c6913c'], // allgather bruck p=13 one-ported γ=3
  [0, [0], '1:92b8dd24ef67c104'], // allgather recursive-doubling p=1 one-ported γ=0
  [33, [33, 33], '6:08fa30fab8fab5ae'], // allgather recursive-doubling p=2 full-duplex γ=3
  [100, [100, 88, 100], '10:037152d29da78234'], // allgather recursive-doubling p=3 one-ported γ=3
  [44, [44, 44, 44, 44], '16:90f0e12525b029cb'], // allgather recursive-doubling p=4 full-duplex γ=0
  [153, [153, 131, 131, 131, 153], '20:ea0a6f57bc9ad53b'], // allgather recursive-doubling p=5 one-ported γ=3
  [123, [123, 123, 123, 83, 123, 123, 123], '28:00824a578334e7d7'], // allgather recursive-doubling p=7 full-duplex γ=3
  [110, [110, 110, 110, 110, 110, 110, 110, 110], '40:25c19a0fd4eb982f'], // allgather recursive-doubling p=8 one-ported γ=0
  [95, [95, 95, 95, 95, 95, 73, 73, 73, 95, 95, 95, 95, 95], '60:a570c63937c9a279'], // allgather recursive-doubling p=13 full-duplex γ=3
];

describe('(b) the variants run their schedules on the simulator', () => {
  it('the recorded hard cases: the same bytes, virtual time, per-rank finish times and trace (messages and copies, with their times) as the program code gave', async () => {
    const cases = timeCases();
    expect(cases).toHaveLength(RECORDED.length);
    for (let k = 0; k < cases.length; k++) {
      const { c, ports, gamma } = cases[k];
      const p = c.counts.length;
      const what = `${c.api} ${c.algorithm} p=${p} ${ports} γ=${gamma}`;
      const res = await runSim(p, (comm) => runCaseRank(comm, c), { model: linearModel({ alpha, beta, gamma }), ports, trace: true });
      const want = expectedRecv(c);
      for (let r = 0; r < p; r++) expect([...res.results[r]], `${what} rank ${r}`).toEqual([...want]);
      const [time, finish, digest] = RECORDED[k];
      expect(res.time, what).toBe(time);
      expect(res.finish, what).toEqual(finish);
      expect(traceDigest(res.trace as SimTrace), what).toBe(digest);
    }
  });

  /** Sends (from, to, tag, bytes) and copies (rank, bytes) of the compiled world, sorted. */
  function compiledTraffic(world: WorldSchedule): { messages: string[]; copies: string[] } {
    const messages: string[] = [];
    const copies: string[] = [];
    world.ranks.forEach((rs: RankSchedule) => {
      for (const st of rs.steps) {
        for (const op of st.ops) {
          if (op.kind === 'send') messages.push(`${rs.rank} ${op.peer} ${op.tag} ${spanBytes(op.data)}`);
          else if (op.kind === 'copy') copies.push(`${rs.rank} ${spanBytes(op.from)}`);
        }
      }
    });
    return { messages: messages.sort(), copies: copies.sort() };
  }

  it('random sizes with zeros, gapped offsets, every compiled algorithm × p: right bytes; the run sends exactly the compiled messages (plus the handshake) and makes exactly its copies', async () => {
    const rnd = rng(77);
    const model = linearModel({ alpha, beta, gamma: 1 });
    for (const algorithm of COMPILED_ALLGATHER_ALGORITHMS) {
      for (const p of PS) {
        for (const layout of ['default', 'gapped'] as const) {
          const counts = randomBytes(rnd, p, 20);
          const unitBytes = int(rnd, 1, 3);
          // recursive doubling is not offered for allgatherv: its variant row on the v input
          const c = makeCase(algorithm === 'recursive-doubling' ? 'variant' : 'allgatherv', algorithm, counts, unitBytes, layout, int(rnd, 0, 1000));
          const what = `${algorithm} p=${p} ${layout} ${JSON.stringify(c)}`;
          const res = await runSim(p, (comm) => runCaseRank(comm, c), { model, ports: layout === 'default' ? 'full-duplex' : 'one-ported', trace: true });
          const want = expectedRecv(c);
          for (let r = 0; r < p; r++) expect([...res.results[r]], `${what} rank ${r}`).toEqual([...want]);
          const bytes = counts.map((n) => n * unitBytes);
          const offsets = displsOf(c).map((x) => x * unitBytes);
          const world = compileAllgatherSchedule(algorithm as CompiledAllgatherAlgorithm, bytes, offsets);
          expect(problemsText(world), what).toBe('');
          const trace = res.trace as SimTrace;
          const hs = trace.messages.filter((m) => m.tag === ALLGATHER_TAGS.handshake);
          // the handshake: one message per rank to its left neighbour (none for p = 1)
          expect(hs.length, what).toBe(p === 1 ? 0 : p);
          const compiled = compiledTraffic(world);
          const ran = trace.messages.filter((m) => m.tag !== ALLGATHER_TAGS.handshake).map((m) => `${m.from} ${m.to} ${m.tag} ${m.bytes}`);
          expect(ran.sort(), what).toEqual(compiled.messages);
          expect(trace.copies.map((x) => `${x.rank} ${x.bytes}`).sort(), what).toEqual(compiled.copies);
        }
      }
    }
  });

  it('equal blocks (allgather): the predicted virtual times of test/allgather.test.ts for every p ∈ PS', async () => {
    const time = async (p: number, m: number, algorithm: CompiledAllgatherAlgorithm, ports: PortSetting, gamma = 0): Promise<number> => {
      const c = makeCase('allgather', algorithm, new Array<number>(p).fill(m), 1, 'default', p);
      const res = await runSim(p, (comm) => runCaseRank(comm, c), { model: linearModel({ alpha, beta, gamma }), ports });
      const want = expectedRecv(c);
      for (const r of res.results) expect([...r]).toEqual([...want]);
      return res.time;
    };
    for (const p of PS) {
      // ring: full duplex (also with γ > 0: the own copy overlaps step 0), one-ported
      const ring = p === 1 ? 0 : (p - 1) * (alpha + beta * 7) + 8 * beta;
      expect(await time(p, 7, 'ring', 'full-duplex'), `ring p=${p}`).toBe(ring);
      expect(await time(p, 7, 'ring', 'full-duplex', 1), `ring p=${p} γ=1`).toBe(p === 1 ? 7 : ring);
      const ring1 = p === 1 ? 0 : p % 2 === 0 ? 2 * (p - 1) * (alpha + beta * 5) + 16 * beta : 2 * p * (alpha + beta * 5) + 24 * beta;
      expect(await time(p, 5, 'ring', 'one-ported'), `ring one-ported p=${p}`).toBe(ring1);
      // Bruck, full duplex
      const log2ceil = p <= 1 ? 0 : Math.ceil(Math.log2(p));
      expect(await time(p, 3, 'bruck', 'full-duplex'), `bruck p=${p}`).toBe(log2ceil * alpha + beta * (p - 1) * 3 + (p > 1 ? 8 * beta : 0));
      // recursive doubling: p = 2^k exact both port models, else the folded form (full duplex)
      const q = 2 ** Math.floor(Math.log2(p));
      const e = p - q;
      const k = Math.log2(q);
      const m = 4;
      if (e === 0) {
        const hs = p === 1 ? 0 : alpha + 8 * beta;
        expect(await time(p, m, 'recursive-doubling', 'full-duplex'), `rd p=${p}`).toBe(hs + k * alpha + beta * (p - 1) * m);
        expect(await time(p, m, 'recursive-doubling', 'one-ported'), `rd one-ported p=${p}`).toBe(2 * (hs + k * alpha + beta * (p - 1) * m));
      } else {
        let units = 1 + (p - 1);
        for (let d = 1; d < q; d *= 2) units += d + Math.min(d, e);
        expect(await time(p, m, 'recursive-doubling', 'full-duplex'), `rd p=${p}`).toBe(alpha + 8 * beta + (k + 2) * alpha + beta * m * units);
      }
    }
  });

  it('a block shorter than expected in a compiled receive is checkReceived′s InvalidArgumentError(send) on the receiving rank; a longer one the transport′s truncation', async () => {
    // recursive doubling without the handshake (as basic/allgather.ts runs it), p = 6: extra
    // rank 5 hands its block to rank 1 in the compiled pre-step
    const run = (m5: number): Promise<unknown> =>
      runSim(
        6,
        (comm) => {
          const m = comm.rank === 5 ? m5 : 4;
          const input = { ...allgatherInput(comm, { send: new Uint8Array(m), recv: new Uint8Array(6 * m) }), handshake: false };
          return recursiveDoublingAllgatherv(input, ALLGATHER_TAGS.recursiveDoubling);
        },
        { model: linearModel({ alpha, beta }) },
      ).then(
        () => undefined,
        (err: unknown) => err,
      );
    const short = await run(3);
    expect(short).toBeInstanceOf(CommunicationError);
    const cause = (short as CommunicationError).cause;
    expect(cause).toBeInstanceOf(InvalidArgumentError);
    expect((cause as InvalidArgumentError).field).toBe('send');
    expect((cause as InvalidArgumentError).rank).toBe(1);
    expect((cause as Error).message).toBe('invalid send: received 3 bytes from rank 5 where 4 were expected: the ranks\' buffers differ in length');
    const long = await run(5);
    expect(long).toBeInstanceOf(CommunicationError);
    expect(((long as CommunicationError).cause as Error).message).toMatch(/rank 1: message of 5 bytes from rank 5 .*truncated/);
  });
});

describe('(c) checkSchedule catches a corrupted allgather schedule', () => {
  /** `world` with rank `rank`'s op j of step s replaced by `f(op)` (removed when f gives undefined). */
  function corrupt(world: WorldSchedule, rank: number, s: number, j: number, f: (op: ScheduleOp) => ScheduleOp | undefined): WorldSchedule {
    return {
      label: world.label,
      ranks: world.ranks.map((rs) =>
        rs.rank !== rank
          ? rs
          : {
              ...rs,
              steps: rs.steps.map((st, si) =>
                si !== s ? st : corruptStep(st, j, f),
              ),
            },
      ),
    };
  }

  /** Step `st` with op j replaced by f(op), or removed (its stream one shorter, dependencies on it dropped, later indices moved). */
  function corruptStep(st: ScheduleStep, j: number, f: (op: ScheduleOp) => ScheduleOp | undefined): ScheduleStep {
    const x = f(st.ops[j]);
    if (x !== undefined) return { ...st, ops: st.ops.map((op, oj) => (oj === j ? x : op)) };
    const ops = st.ops.filter((_, oj) => oj !== j);
    if (st.streams === undefined) return { ...st, ops };
    const streams = [...st.streams];
    for (let k = 0, end = 0; k < streams.length; k++) {
      end += streams[k];
      if (j < end) {
        streams[k]--;
        break;
      }
    }
    const after = st.after?.filter((_, oj) => oj !== j).map((d) => (d === j ? -1 : d > j ? d - 1 : d));
    return { ...st, ops, streams, after };
  }

  /** Where rank's receives are: [step, op]. */
  function receivesOf(rs: RankSchedule): [number, number][] {
    const out: [number, number][] = [];
    rs.steps.forEach((st, s) => st.ops.forEach((op, j) => op.kind === 'recv' && out.push([s, j])));
    return out;
  }

  it('one receive removed → an unmatched send (every compiled algorithm, every p ≥ 3 of PS, every rank)', () => {
    for (const algorithm of COMPILED_ALLGATHER_ALGORITHMS) {
      for (const p of PS.filter((x) => x >= 3)) {
        const world = compileAllgatherSchedule(algorithm, Array.from({ length: p }, (_, i) => 1 + (i % 4)));
        for (let rank = 0; rank < p; rank++) {
          const receives = receivesOf(world.ranks[rank]);
          if (receives.length === 0) continue;
          const [s, j] = receives[(rank * 7) % receives.length];
          const bad = corrupt(world, rank, s, j, () => undefined);
          const problems = checkSchedule(bad);
          expect(problems.some((x) => x.kind === 'unmatched-send'), `${algorithm} p=${p} rank ${rank} step ${s} op ${j}`).toBe(true);
        }
      }
    }
  });

  it('a receive of the wrong length, a send to the wrong tag, a step moved, a range beyond its buffer: each reported', () => {
    const world = compileAllgatherSchedule('bruck', [5, 0, 3, 9, 2, 4, 1]);
    const rs = world.ranks[2];
    const [s, j] = receivesOf(rs)[0];
    const shorter = corrupt(world, 2, s, j, (op) => (op.kind === 'recv' ? { ...op, data: op.data.map((r) => ({ ...r, length: Math.max(0, r.length - 1) })) } : op));
    expect(checkSchedule(shorter).some((x) => x.kind === 'length')).toBe(true);
    const sendAt = rs.steps[s].ops.findIndex((op) => op.kind === 'send');
    const retagged = corrupt(world, 2, s, sendAt, (op) => ({ ...op, tag: 12345 }) as ScheduleOp);
    expect(checkSchedule(retagged).some((x) => x.kind === 'unmatched-send' || x.kind === 'unmatched-recv')).toBe(true);
    const beyond = corrupt(world, 2, s, j, (op) => (op.kind === 'recv' ? { ...op, data: [{ buffer: 2, offset: 1e6, length: 1 }] } : op));
    expect(checkSchedule(beyond).some((x) => x.kind === 'range')).toBe(true);
    // ring p = 4: rank 0 runs its last step first → its receives pair with sends of other lengths
    const ring = compileAllgatherSchedule('ring', [1, 2, 3, 4]);
    const r0 = ring.ranks[0];
    const swapped: WorldSchedule = { ...ring, ranks: ring.ranks.map((x) => (x.rank === 0 ? { ...r0, steps: [r0.steps[0], r0.steps[2], r0.steps[1]] } : x)) };
    expect(checkSchedule(swapped).some((x) => x.kind === 'deadlock' || x.kind === 'length')).toBe(true);
  });
});
