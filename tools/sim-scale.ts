/**
 * How simulated runs scale with p: one gatherv (random blocks, b = 100, the run harness's
 * defaults otherwise: `vcoll run --transport sim`) per algorithm and p = 2^from … 2^to, each in
 * a fresh Node process (its own heap, `--max-old-space-size` of --heap MiB), printing wall
 * seconds, simulated messages per second, peak RSS, RSS per rank and the ratio of each to the
 * previous p. A case the harness refuses up front (TooLargeError: the memory estimate above the
 * heap, a tree builder's limit) or that fails is reported as such and the sweep goes on.
 *
 *   npx tsx tools/sim-scale.ts [--from 13] [--to 20] [--algorithms linear,binomial,adaptive]
 *                              [--op gatherv] [--heap 14000] [--timeout 600]
 *
 * SMPI (SimGrid's MPI simulator: Debian's libsimgrid-dev, `smpirun`) is not driven from here;
 * docs/measurements.md has the side-by-side figures at p = 8000 and how they were taken.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runCase } from '../src/run/job.js';
import { CASE_DEFAULTS } from '../src/run/spec.js';
import type { VAlgorithm } from '../src/collectives/types.js';

interface ChildResult {
  readonly ok: boolean;
  readonly wallMs: number;
  readonly messages: number;
  readonly verified: boolean;
  /** Peak resident set (KiB, process.resourceUsage().maxRSS). */
  readonly maxRssKiB: number;
  readonly error?: string;
}

/** The child: one case, its figures as one JSON line on stdout. */
async function child(op: 'gatherv' | 'scatterv', algorithm: string, p: number): Promise<void> {
  const t = performance.now();
  let out: ChildResult;
  try {
    const report = await runCase('sim', p, { ...CASE_DEFAULTS, op, algorithm: algorithm as VAlgorithm, dist: 'random', b: 100 });
    out = { ok: true, wallMs: performance.now() - t, messages: report.messages, verified: report.verified, maxRssKiB: process.resourceUsage().maxRSS };
  } catch (e) {
    const error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    out = { ok: false, wallMs: performance.now() - t, messages: 0, verified: false, maxRssKiB: process.resourceUsage().maxRSS, error };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function runChild(op: string, algorithm: string, p: number, heapMiB: number, timeoutS: number): ChildResult {
  const self = fileURLToPath(import.meta.url);
  const t = performance.now();
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heapMiB}`, '--import', 'tsx', self, '--child', op, algorithm, String(p)], {
    encoding: 'utf8',
    timeout: timeoutS * 1000,
    maxBuffer: 1 << 24,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as ChildResult;
  } catch {
    const why = r.error !== undefined ? r.error.message : r.signal !== null ? `killed by ${r.signal}` : `exit ${String(r.status)}: ${r.stderr.trim().split('\n').slice(-1)[0] ?? ''}`;
    return { ok: false, wallMs: performance.now() - t, messages: 0, verified: false, maxRssKiB: 0, error: why };
  }
}

function main(): void {
  const { values } = parseArgs({
    options: {
      from: { type: 'string', default: '13' },
      to: { type: 'string', default: '20' },
      algorithms: { type: 'string', default: 'linear,binomial,adaptive' },
      op: { type: 'string', default: 'gatherv' },
      heap: { type: 'string', default: '14000' },
      timeout: { type: 'string', default: '600' },
    },
  });
  const [from, to, heap, timeout] = [values.from, values.to, values.heap, values.timeout].map(Number);
  const algorithms = values.algorithms.split(',');
  const op = values.op;
  console.log(`${op}, random blocks, b = 100, the simulator (vcoll run --transport sim); a fresh process per case, heap ${heap} MiB, timeout ${timeout} s`);
  console.log('algorithm  p          wall s   ×prev  M msgs/s  peak RSS MiB  ×prev  RSS/rank KiB  verified');
  for (const algorithm of algorithms) {
    let prev: ChildResult | undefined;
    for (let e = from; e <= to; e++) {
      const p = 2 ** e;
      const r = runChild(op, algorithm, p, heap, timeout);
      const head = `${algorithm.padEnd(10)} 2^${String(e).padEnd(8)}`;
      if (!r.ok) {
        console.log(`${head} ${(r.wallMs / 1000).toFixed(1).padStart(7)}   not run: ${r.error ?? 'failed'}`);
        prev = undefined;
        continue;
      }
      const ratio = (a: number, b: number | undefined): string => (b === undefined || b === 0 ? '    –' : (a / b).toFixed(2).padStart(5));
      const rate = r.messages / (r.wallMs / 1000) / 1e6;
      console.log(
        `${head} ${(r.wallMs / 1000).toFixed(2).padStart(7)}  ${ratio(r.wallMs, prev?.wallMs)}  ${rate.toFixed(3).padStart(8)}  ${(r.maxRssKiB / 1024).toFixed(0).padStart(12)}  ${ratio(r.maxRssKiB, prev?.maxRssKiB)}  ${((r.maxRssKiB * 1024) / p / 1024).toFixed(2).padStart(12)}  ${r.verified ? 'yes' : 'NO'}`,
      );
      prev = r;
    }
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const at = process.argv.indexOf('--child');
  if (at > 0) await child(process.argv[at + 1] as 'gatherv' | 'scatterv', process.argv[at + 2], Number(process.argv[at + 3]));
  else main();
}
