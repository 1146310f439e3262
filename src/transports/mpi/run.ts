/**
 * `runMpi`: runs a rank program on p MPI processes started by mpirun, from an ordinary Node
 * process (tests, benchmarks, the CLI), and resolves with every rank's result in rank order —
 * the MPI counterpart of runThreads, with the same program modules
 * (`export default async function (comm, args)`). Arguments and results travel as
 * v8-serialized files (structured-clone types).
 *
 * Never a hang: a rank that fails aborts the job (runMpiRank: MPI_Abort), and runMpi rejects
 * with a CommunicationError naming that rank and its message — a deadlock or a stuck rank too,
 * through the ranks' watchdog (`opTimeoutMs`, world.ts), which also names a rank that does not
 * reach MPI_Finalize while the others have (the finalize handshake); a rank that calls
 * process.exit is named as well; a job that runs past `timeoutMs` is killed and rejects too.
 *
 * The launcher: `mpirun` (or VCOLL_MPIRUN, or the `mpirun` option). With Open MPI it adds
 * `--oversubscribe` (more ranks than cores) and, as root, `--allow-run-as-root`; MPICH's
 * hydra needs neither. `mpirunArgs` (or VCOLL_MPIRUN_ARGS) go before the program (e.g. `--hostfile hosts`).
 */

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { badTimeout } from '../../comm/timeout.js';
import { CommunicationError, InvalidArgumentError, UnavailableError } from '../../errors.js';
import { BUILD_HINT, DEFAULT_BINDING_PATH } from './binding.js';
import { programUrlOf } from '../program-url.js';

export interface RunMpiOptions {
  /** The launcher (default: VCOLL_MPIRUN, else `mpirun` on the PATH). */
  readonly mpirun?: string;
  /** Launcher arguments placed before the program (e.g. ['--hostfile', 'hosts']; default: VCOLL_MPIRUN_ARGS split at spaces). */
  readonly mpirunArgs?: readonly string[];
  /** The node of every rank as `comm.nodeOf` reports it (default: the machines the ranks run on). */
  readonly nodes?: readonly number[];
  /** Kill the job after this long (ms; default 300000). */
  readonly timeoutMs?: number;
  /**
   * The ranks' per-operation watchdog (mpiWorld's `timeoutMs`, passed as VCOLL_MPI_TIMEOUT_MS):
   * ms > 0, Infinity: off (default: the ranks' own default, 60 s, or VCOLL_MPI_TIMEOUT_MS).
   */
  readonly opTimeoutMs?: number;
  /** Extra environment variables for the ranks. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Which MPI library a launcher belongs to. */
export type MpiFlavor = 'openmpi' | 'mpich' | 'unknown';

const flavors = new Map<string, MpiFlavor>();

/** The launcher's MPI library, from `<mpirun> --version` (cached). */
export function launcherFlavor(mpirun: string): MpiFlavor {
  let f = flavors.get(mpirun);
  if (f === undefined) {
    let text = '';
    try {
      text = execFileSync(mpirun, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      throw new UnavailableError('mpirun', `no MPI launcher '${mpirun}' (${e instanceof Error ? e.message : String(e)}): ${BUILD_HINT}`);
    }
    f = /Open MPI|OpenRTE/i.test(text) ? 'openmpi' : /HYDRA|MPICH|Intel/i.test(text) ? 'mpich' : 'unknown';
    flavors.set(mpirun, f);
  }
  return f;
}

/** The launcher's own flags for p ranks on this machine (oversubscription, running as root). */
export function launcherFlags(mpirun: string): string[] {
  if (launcherFlavor(mpirun) !== 'openmpi') return [];
  const flags = ['--oversubscribe'];
  if (process.getuid?.() === 0) flags.push('--allow-run-as-root');
  return flags;
}

const SELF_IS_TS = import.meta.url.endsWith('.ts');
const LAUNCH = fileURLToPath(new URL(SELF_IS_TS ? './launch.ts' : './launch.js', import.meta.url));

/** The node command line that runs a rank (through tsx from sources or for a .ts program). */
export function rankCommand(programUrl: string): string[] {
  const needsTs = SELF_IS_TS || /\.[cm]?ts$/.test(new URL(programUrl).pathname);
  const node = [process.execPath];
  if (needsTs) node.push('--import', import.meta.resolve('tsx'));
  return [...node, LAUNCH];
}

/**
 * `vcoll: rank R failed: message` lines of the ranks' stderr, then (ranks that failed no other
 * way) `vcoll: rank R exited with code C before MPI_Finalize` lines (world.ts), then `vcoll:
 * rank R did not reach MPI_Finalize within T ms (…)` lines (the finalize handshake,
 * handshake.ts: R is the first rank missing, named by a rank that waited for it).
 */
/** A rank's line saying the job failed (what `failures` reads). */
const FATAL_LINE = /^vcoll: rank \d+ (failed: |exited with code |did not reach MPI_Finalize )/m;
/** How long a job may take to end after such a line before it is killed (ms). */
const ABORT_GRACE_MS = 5000;

function failures(stderr: string): { rank: number; message: string }[] {
  const out: { rank: number; message: string }[] = [];
  for (const m of stderr.matchAll(/^vcoll: rank (\d+) failed: (.*)$/gm)) out.push({ rank: Number(m[1]), message: m[2] });
  for (const m of stderr.matchAll(/^vcoll: rank (\d+) (exited with code -?\d+ before MPI_Finalize)$/gm)) {
    const rank = Number(m[1]);
    if (!out.some((f) => f.rank === rank)) out.push({ rank, message: `${m[2]} (process.exit?)` });
  }
  for (const m of stderr.matchAll(/^vcoll: rank (\d+) (did not reach MPI_Finalize within .*)$/gm)) {
    const rank = Number(m[1]);
    if (!out.some((f) => f.rank === rank)) out.push({ rank, message: m[2] });
  }
  return out;
}

/**
 * Runs `p` MPI ranks of the program at `programModuleUrl` and resolves with their results in
 * rank order. Throws an UnavailableError when the binding is not built or there is no mpirun.
 */
export async function runMpi<R = unknown>(p: number, programModuleUrl: string | URL, args?: unknown, options: RunMpiOptions = {}): Promise<R[]> {
  if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be a positive integer, got ${p}`);
  const nodes = options.nodes;
  if (nodes !== undefined && (nodes.length !== p || nodes.some((n) => !Number.isInteger(n) || n < 0))) {
    throw new InvalidArgumentError('nodes', `must list one node number >= 0 per rank (${p})`);
  }
  const timeoutMs = options.timeoutMs ?? 300_000;
  if (!(timeoutMs > 0)) throw new InvalidArgumentError('timeoutMs', `must be > 0, got ${timeoutMs}`);
  const opTimeoutMs = options.opTimeoutMs;
  const badOp = opTimeoutMs === undefined ? undefined : badTimeout(opTimeoutMs);
  if (badOp !== undefined) throw new InvalidArgumentError('opTimeoutMs', badOp);
  const bindingPath = process.env.VCOLL_MPI_BINDING ?? DEFAULT_BINDING_PATH;
  if (!existsSync(bindingPath)) throw new UnavailableError('mpi-binding', `vcoll's MPI binding is not built (no ${bindingPath}): ${BUILD_HINT}`);
  const mpirun = options.mpirun ?? process.env.VCOLL_MPIRUN ?? 'mpirun';
  const programUrl = programUrlOf(programModuleUrl);
  const dir = mkdtempSync(join(tmpdir(), 'vcoll-mpi-'));
  try {
    const argsFile = join(dir, 'args.bin');
    writeFileSync(argsFile, serialize(args));
    const extra = options.mpirunArgs ?? (process.env.VCOLL_MPIRUN_ARGS ?? '').split(/\s+/).filter((a) => a !== '');
    const argv = [...launcherFlags(mpirun), ...extra, '-np', String(p), ...rankCommand(programUrl), programUrl, argsFile, dir];
    const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
    if (nodes !== undefined) env.VCOLL_MPI_NODES = nodes.join(',');
    if (opTimeoutMs !== undefined) env.VCOLL_MPI_TIMEOUT_MS = String(opTimeoutMs);
    const { code, stderr, timedOut } = await new Promise<{ code: number | null; stderr: string; timedOut: boolean }>((resolve, reject) => {
      const child = spawn(mpirun, argv, { env, stdio: ['ignore', 'inherit', 'pipe'], detached: true });
      let err = '';
      let timedOut = false;
      // The job is in a process group of its own: take it down with this process.
      const killJob = (): void => {
        try {
          process.kill(-(child.pid as number), 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      // …also when this process is stopped by a signal (the job's group would not see it), which is then re-raised.
      const onSignal = (signal: NodeJS.Signals): void => {
        killJob();
        process.off('exit', killJob);
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        process.kill(process.pid, signal);
      };
      process.once('exit', killJob);
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const unhook = (): void => {
        process.off('exit', killJob);
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      };
      child.stderr.setEncoding('utf8');
      // Once a rank has reported that the job failed, the job ends by MPI_Abort (or the rank's
      // exit); should the MPI library not take the other ranks down (Open MPI's MPI_Abort can
      // wait on ranks already inside MPI_Finalize), the job is killed after a grace period.
      let grace: NodeJS.Timeout | undefined;
      child.stderr.on('data', (d: string) => {
        err += d;
        if (err.length > 1 << 20) err = err.slice(-(1 << 19));
        if (grace === undefined && FATAL_LINE.test(err)) grace = setTimeout(killJob, ABORT_GRACE_MS);
      });
      const timer = setTimeout(() => {
        timedOut = true;
        killJob();
      }, timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        unhook();
        reject(new UnavailableError('mpirun', `cannot start '${mpirun}': ${e.message}`, { cause: e }));
      });
      child.on('close', (c) => {
        clearTimeout(timer);
        clearTimeout(grace);
        unhook();
        resolve({ code: c, stderr: err, timedOut });
      });
    });
    const failed = failures(stderr);
    if (failed.length > 0) {
      const first = failed[0];
      const more = failed.length > 1 ? ` (also ${failed.slice(1).map((f) => `rank ${f.rank}`).join(', ')})` : '';
      throw new CommunicationError(`MPI job failed: rank ${first.rank} failed: ${first.message}${more}`, { rank: first.rank });
    }
    if (timedOut) throw new CommunicationError(`MPI job of ${p} ranks killed after ${timeoutMs} ms (a hang?)\n${stderr.slice(-4000)}`);
    if (code !== 0) throw new CommunicationError(`mpirun exited with code ${code}:\n${stderr.slice(-4000)}`);
    const results: R[] = [];
    for (let r = 0; r < p; r++) {
      const file = join(dir, `rank-${r}.bin`);
      if (!existsSync(file)) throw new CommunicationError(`MPI job ended without rank ${r}'s result\n${stderr.slice(-4000)}`, { rank: r });
      results.push(deserialize(readFileSync(file)) as R);
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
