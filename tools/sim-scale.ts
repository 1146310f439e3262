/**
 * How simulated runs scale with p: one gatherv (random blocks, b = 100, the run harness's
 * defaults otherwise: `vcoll run --transport sim`) per algorithm and p = 2^from … 2^to, each in
 * a fresh Node process (its own heap, `--max-old-space-size` of --heap MiB, the simulator's semi-space), printing wall
 * seconds, simulated messages per second, peak RSS, RSS per rank and the ratio of each to the
 * previous p. A case the harness refuses up front (TooLargeError: the memory estimate above the
 * heap, a tree builder's limit) or that fails is reported as such and the sweep goes on.
 *
 *   npx tsx tools/sim-scale.ts [--from 13] [--to 20] [--algorithms linear,binomial,adaptive]
 *                              [--op gatherv] [--heap 14000] [--timeout 600]
 *                              [--no-smpi] [--smpi-timeout 600]
 *
 * Side by side with SMPI (SimGrid's MPI simulator; Debian: `apt-get install libsimgrid-dev`,
 * which brings smpicc and smpirun): when both are on PATH and unless --no-smpi, the same gatherv
 * (the same block sizes, root 0) runs once per p as a C program, tools/smpi/gatherv.c, compiled
 * once with smpicc into a temporary folder and run by smpirun on a generated `<cluster>` of p
 * hosts (10 GBps, 1 us: the "1 µs / 10 GB/s cluster" of the published comparison). Per p: the
 * smpirun process's wall seconds, SimGrid's own figure after parsing and platform setup
 * (smpi/display-timing), peak RSS and CPU seconds (getrusage in the program: SMPI runs every
 * rank in one process), verified (the root checks every byte, and gathered as many as vcoll's
 * case), and SMPI's wall over each vcoll row's. A timed-out case (--smpi-timeout s) ends the SMPI
 * sweep: larger p are skipped with a note. (The tool has no JSON output, for either side.)
 * SMPI's MPI_Gatherv is linear whatever the selector (SimGrid 3.32 colls::gatherv → igatherv: the
 * root posts p − 1 receives and waits for them all; gatherv has no coll-selector entry).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runCase } from '../src/run/job.js';
import { CASE_DEFAULTS } from '../src/run/spec.js';
import { sharedBlockSizes } from '../src/workloads/distributions.js';
import { formatBytes, resourceLimits, simHeapFlags } from '../src/util/limits.js';
import type { VAlgorithm } from '../src/collectives/types.js';

/** The case of every row, vcoll's and SMPI's: the run harness's defaults, random blocks, b = 100. */
const CASE = { ...CASE_DEFAULTS, dist: 'random', b: 100 } as const;

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
    const report = await runCase('sim', p, { ...CASE, op, algorithm: algorithm as VAlgorithm });
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
  const r = spawnSync(process.execPath, [...simHeapFlags(heapMiB), '--import', 'tsx', self, '--child', op, algorithm, String(p)], {
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

interface SmpiResult {
  readonly ok: boolean;
  readonly timedOut: boolean;
  /** The smpirun process, spawn to exit (platform parsing and actor creation included). */
  readonly wallMs: number;
  /** SimGrid's "The simulation took … seconds (after parsing and platform setup)". */
  readonly simWallS?: number;
  readonly verified: boolean;
  /** Simulated seconds of the gatherv (MPI_Wtime at the root, after the barrier). */
  readonly simTime?: number;
  /** Peak RSS of the simulator process (KiB, getrusage at the root after the gatherv). */
  readonly maxRssKiB: number;
  /** CPU seconds (user + sys) of the simulator process until then: the wall without other processes' load. */
  readonly cpuS?: number;
  readonly error?: string;
}

/** Guard-page stacks take two mappings per rank: above this share of vm.max_map_count, small unguarded stacks. */
const MAP_COUNT_SHARE = 0.9;
/** Stack per rank without guard pages (KiB): the program runs in 8 KiB with a guard page, 4 KiB overflows. */
const UNGUARDED_STACK_KIB = 16;

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function maxMapCount(): number {
  try {
    return Number(readFileSync('/proc/sys/vm/max_map_count', 'utf8').trim()) || 65530;
  } catch {
    return 65530;
  }
}

function unguarded(p: number): boolean {
  return 2 * p > MAP_COUNT_SHARE * maxMapCount();
}

/**
 * SMPI's peak RSS, estimated: 24 KiB per rank and 4 B per pair of ranks, fitted to 431 MiB at
 * p = 2^13 and 1,340 MiB at 2^14 (it matches 157 MiB at 2^12), plus the stacks when unguarded.
 * The p² part is not explained.
 */
function smpiBytes(p: number): number {
  return 32 * 2 ** 20 + 24 * 1024 * p + 4 * p * p + (unguarded(p) ? UNGUARDED_STACK_KIB * 1024 * p : 0);
}

/**
 * smpirun's flags: no privatization (the program has no globals; dlopen privatization loads a
 * copy of the binary per rank: at p = 4096 4.2–6.0 s CPU and 281 MiB against 3.4–3.7 s and
 * 158 MiB), the program's own CPU work (filling, checking) not simulated as computation (one
 * execution activity less per rank, simulated times that do not depend on this machine's speed:
 * 2.4 s CPU at p = 4096), SimGrid's timing report, logs at critical but for it. The default raw
 * contexts and 8 MiB stacks (mapped, touched only where used) stay, unless p ranks' guard pages
 * would pass vm.max_map_count (two mappings per rank: from about 2^15 ranks at the default
 * 65,530, "Failed to protect stack").
 */
function smpiFlags(p: number): string[] {
  const flags = ['-no-privatize', '--cfg=smpi/simulate-computation:no', '--cfg=smpi/display-timing:yes', '--log=root.thres:critical', '--log=smpi_utils.thres:info'];
  if (unguarded(p)) flags.push('--cfg=contexts/guard-size:0', `--cfg=contexts/stack-size:${UNGUARDED_STACK_KIB}`);
  return flags;
}

/** Compiles tools/smpi/gatherv.c into `dir`; the error's last lines when it fails. */
function compileSmpi(dir: string): string | undefined {
  const source = fileURLToPath(new URL('./smpi/gatherv.c', import.meta.url));
  const r = spawnSync('smpicc', ['-O2', '-o', join(dir, 'gatherv'), source], { encoding: 'utf8', cwd: dir });
  if (r.status === 0) return undefined;
  return r.error?.message ?? `smpicc exit ${String(r.status)}: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`;
}

/** The platform: one crossbar cluster of p hosts h0 … h(p−1), a private 10 GBps / 1 us link each. */
function clusterXml(p: number): string {
  return `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="vcoll" prefix="h" radical="0-${p - 1}" suffix="" speed="1Gf" bw="10GBps" lat="1us"/>
</platform>
`;
}

/** One smpirun of the program at p ranks, on the block sizes of vcoll's case (bytes, int32 LE). */
function runSmpi(dir: string, p: number, timeoutS: number): SmpiResult {
  const sizes = sharedBlockSizes(CASE.dist, { p, b: CASE.b, rho: CASE.rho, seed: CASE.seed });
  const counts = Buffer.alloc(4 * p);
  sizes.forEach((n, i) => counts.writeInt32LE(n * CASE.unitBytes, 4 * i));
  writeFileSync(join(dir, 'counts.bin'), counts);
  writeFileSync(join(dir, 'plat.xml'), clusterXml(p));
  writeFileSync(join(dir, 'hosts'), Array.from({ length: p }, (_, i) => `h${i}\n`).join(''));
  const args = [...smpiFlags(p), '-np', String(p), '-platform', 'plat.xml', '-hostfile', 'hosts', './gatherv', 'counts.bin'];
  const t = performance.now();
  // smpirun (a shell script) traps SIGTERM and passes it to the simulator, smpimain.
  const r = spawnSync('smpirun', args, { cwd: dir, encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 1 << 24 });
  const wallMs = performance.now() - t;
  const out = `${r.stdout}\n${r.stderr}`;
  const line = /verified (\d) bytes (\d+) simtime (\S+) maxrss_kib (\d+) cpu_s (\S+)/.exec(out);
  const bytes = sizes.reduce((a, n) => a + n * CASE.unitBytes, 0);
  const took = /The simulation took (\S+) seconds/.exec(out);
  const timedOut = r.error !== undefined && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
  if (r.status !== 0 || line === null) {
    const last = out.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('  ->')).slice(-2).join(' | ');
    const why = timedOut ? `timed out after ${timeoutS} s` : r.error !== undefined ? r.error.message : r.signal !== null ? `killed by ${r.signal}` : `exit ${String(r.status)}: ${last}`;
    return { ok: false, timedOut, wallMs, verified: false, maxRssKiB: 0, error: why };
  }
  return { ok: true, timedOut: false, wallMs, simWallS: took === null ? undefined : Number(took[1]), verified: line[1] === '1' && Number(line[2]) === bytes, simTime: Number(line[3]), maxRssKiB: Number(line[4]), cpuS: Number(line[5]) };
}

const ratio = (a: number, b: number | undefined): string => (b === undefined || b === 0 ? '    –' : (a / b).toFixed(2).padStart(5));

/** The SMPI rows, side by side with vcoll's rows of the same p. */
function smpiSweep(from: number, to: number, algorithms: readonly string[], vcoll: ReadonlyMap<string, ChildResult>, timeoutS: number): void {
  console.log('');
  if (onPath('smpicc') === undefined || onPath('smpirun') === undefined) {
    console.log('SMPI: smpicc/smpirun not on PATH, no side-by-side run (Debian/Ubuntu: apt-get install libsimgrid-dev; --no-smpi hides this line)');
    return;
  }
  const version = spawnSync('smpirun', ['-version'], { encoding: 'utf8' }).stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'vcoll-smpi-'));
  try {
    const failed = compileSmpi(dir);
    if (failed !== undefined) {
      console.log(`SMPI: smpicc tools/smpi/gatherv.c failed, no side-by-side run: ${failed}`);
      return;
    }
    console.log(`SMPI (${version}): the same gatherv (same block sizes, root 0, after an MPI_Barrier) as tools/smpi/gatherv.c, smpirun per p, timeout ${timeoutS} s`);
    console.log('  SMPI runs MPI_Gatherv linearly (colls::gatherv → igatherv: the root posts p − 1 receives; no selector entry), so the linear row is its peer');
    console.log('  platform: <cluster> of p hosts, 10 GBps, 1 us per private link; smpirun -no-privatize, smpi/simulate-computation:no');
    const heads = algorithms.map((a) => `÷${a}`.padStart(Math.max(7, a.length + 1))).join(' ');
    console.log(`p          wall s   ×prev  after setup s  cpu s  peak RSS MiB  ×prev  RSS/rank KiB  verified  sim time µs  ${heads}`);
    const memory = resourceLimits().memoryBytes;
    let prev: SmpiResult | undefined;
    let stoppedAt: number | undefined;
    for (let e = from; e <= to; e++) {
      const p = 2 ** e;
      const head = `2^${String(e).padEnd(8)}`;
      if (stoppedAt !== undefined) {
        console.log(`${head} not run: SMPI timed out at 2^${stoppedAt}`);
        continue;
      }
      if (smpiBytes(p) > memory) {
        console.log(`${head} not run: SMPI's estimate (24 KiB per rank and 4 B per pair of ranks: ${formatBytes(smpiBytes(p))}) is above VCOLL_MAX_MEMORY (${formatBytes(memory)})`);
        prev = undefined;
        continue;
      }
      const r = runSmpi(dir, p, timeoutS);
      if (!r.ok) {
        console.log(`${head} ${(r.wallMs / 1000).toFixed(1).padStart(7)}   not run: ${r.error ?? 'failed'}`);
        if (r.timedOut) stoppedAt = e;
        prev = undefined;
        continue;
      }
      const vs = algorithms
        .map((a) => {
          const v = vcoll.get(`${a} ${p}`);
          return (v?.ok === true ? ratio(r.wallMs, v.wallMs) : '    –').padStart(Math.max(7, a.length + 1));
        })
        .join(' ');
      console.log(
        `${head} ${(r.wallMs / 1000).toFixed(2).padStart(7)}  ${ratio(r.wallMs, prev?.wallMs)}  ${(r.simWallS ?? Number.NaN).toFixed(2).padStart(13)}  ${(r.cpuS ?? Number.NaN).toFixed(2).padStart(5)}  ${(r.maxRssKiB / 1024).toFixed(0).padStart(12)}  ${ratio(r.maxRssKiB, prev?.maxRssKiB)}  ${(r.maxRssKiB / p).toFixed(2).padStart(12)}  ${(r.verified ? 'yes' : 'NO').padEnd(8)}  ${((r.simTime ?? Number.NaN) * 1e6).toFixed(1).padStart(11)}  ${vs}`,
      );
      prev = r;
    }
    console.log('  wall s: the smpirun process (platform parsing and actor creation included); vcoll\'s wall s: runCase in its child (Node start excluded)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
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
      'no-smpi': { type: 'boolean', default: false },
      'smpi-timeout': { type: 'string', default: '600' },
    },
  });
  const [from, to, heap, timeout, smpiTimeout] = [values.from, values.to, values.heap, values.timeout, values['smpi-timeout']].map(Number);
  const algorithms = values.algorithms === '' ? [] : values.algorithms.split(',');
  const op = values.op;
  const vcoll = new Map<string, ChildResult>();
  console.log(`${op}, random blocks, b = 100, the simulator (vcoll run --transport sim); a fresh process per case, heap ${heap} MiB, timeout ${timeout} s`);
  console.log('algorithm  p          wall s   ×prev  M msgs/s  peak RSS MiB  ×prev  RSS/rank KiB  verified');
  for (const algorithm of algorithms) {
    let prev: ChildResult | undefined;
    for (let e = from; e <= to; e++) {
      const p = 2 ** e;
      const r = runChild(op, algorithm, p, heap, timeout);
      vcoll.set(`${algorithm} ${p}`, r);
      const head = `${algorithm.padEnd(10)} 2^${String(e).padEnd(8)}`;
      if (!r.ok) {
        console.log(`${head} ${(r.wallMs / 1000).toFixed(1).padStart(7)}   not run: ${r.error ?? 'failed'}`);
        prev = undefined;
        continue;
      }
      const rate = r.messages / (r.wallMs / 1000) / 1e6;
      console.log(
        `${head} ${(r.wallMs / 1000).toFixed(2).padStart(7)}  ${ratio(r.wallMs, prev?.wallMs)}  ${rate.toFixed(3).padStart(8)}  ${(r.maxRssKiB / 1024).toFixed(0).padStart(12)}  ${ratio(r.maxRssKiB, prev?.maxRssKiB)}  ${((r.maxRssKiB * 1024) / p / 1024).toFixed(2).padStart(12)}  ${r.verified ? 'yes' : 'NO'}`,
      );
      prev = r;
    }
  }
  if (values['no-smpi']) return;
  if (op !== 'gatherv') {
    console.log(`\nSMPI: the side-by-side run is of gatherv only (--op ${op})`);
    return;
  }
  smpiSweep(from, to, algorithms, vcoll, smpiTimeout);
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const at = process.argv.indexOf('--child');
  if (at > 0) await child(process.argv[at + 1] as 'gatherv' | 'scatterv', process.argv[at + 2], Number(process.argv[at + 3]));
  else main();
}
