/**
 * `npm run soak`: random cases over every collective, variant, distribution, root, layout,
 * persistent or one-shot, world or split or intercommunicator, in-flight mixes, and injected
 * faults (a rank that throws, exits, is stuck or passes wrong counts), on the simulator, worker
 * threads and MPI. Every case is verified byte for byte on every rank, or — with a fault — must
 * reject with a typed vcoll error naming the failing rank. A case that does not finish within
 * its wall-clock limit is a HANG. Every failure is printed with a reproducer line.
 *
 *   npm run soak -- [--runs N] [--seed S] [--transport sim|threads|mpi|all] [--case TOKEN[,TOKEN…]]
 *                   [--max-seconds T] [--json out.json] [--no-mixes] [--no-faults] [--mpi-stuck]
 *
 * Jobs run in child processes (this file with --child), one per transport at a time, so that a
 * hung job can be killed and the soak goes on. See docs/soak.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError as CommanderArgumentError } from 'commander';
import { VcollError, hierarchicalModel, runMpi, runSim, runThreads } from '../../src/index.js';
import { FAULT_KINDS, PLANT_KINDS, TRANSPORTS, decodeCase, describeCase, drawCase, encodeCase, nodesFor, type Case, type FaultKind, type GenOptions, type PlantKind, type Transport } from './cases.js';
import { execCase } from './exec.js';
import { exitOnError } from '../../src/cli/exit.js';
import { parseIntegerOption } from '../../src/cli/options.js';
import type { SoakJobArgs } from './program.js';

const SELF = fileURLToPath(import.meta.url);
const PROGRAM_URL = new URL(import.meta.url.endsWith('.ts') ? './program.ts' : './program.js', import.meta.url);

/** What became of one case. */
export type OutcomeKind = 'verified' | 'expected' | 'wrong' | 'hang' | 'unexpected';
export interface Outcome {
  readonly kind: OutcomeKind;
  readonly detail: string;
}

// ---- the child: runs jobs -------------------------------------------------------------------

type ToChild = { readonly type: 'job'; readonly job: number; readonly cases: readonly Case[]; readonly mpiStuckMs: number };
/** Every message carries its job's number: the driver ignores those of a job it gave up on. */
type FromChild = { readonly job: number } & (
  | { readonly type: 'case'; readonly index: number; readonly outcome: Outcome }
  | { readonly type: 'batch-error'; readonly detail: string; readonly hang: boolean }
  | { readonly type: 'job-done' }
);
type Report = FromChild extends infer M ? (M extends unknown ? Omit<M, 'job'> : never) : never;

function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}${e instanceof VcollError ? ` [${e.code}]` : ''}: ${e.message}`.slice(0, 1500);
  return String(e);
}

/** A run that resolved: verified, or WRONG (mismatches, or a fault that went unnoticed). */
function judgeResults(c: Case, perRank: readonly (readonly string[])[]): Outcome {
  const mismatches = perRank.flat();
  if (c.fault !== undefined && c.fault.expect !== 'verified') {
    return { kind: 'wrong', detail: `the run resolved although rank ${c.fault.rank} ${c.fault.kind === 'wrong-count' ? 'passed wrong counts' : c.fault.kind}${mismatches.length ? `; ${mismatches.slice(0, 3).join('; ')}` : ' (no mismatch seen)'}` };
  }
  if (mismatches.length > 0) return { kind: 'wrong', detail: mismatches.slice(0, 4).join('; ') };
  return { kind: 'verified', detail: '' };
}

/** A run that rejected: an expected failure when the case has a fault and the error is typed and names the rank. */
function judgeError(c: Case, e: unknown): Outcome {
  const text = errorText(e);
  if (c.fault === undefined || c.fault.expect === 'verified') return { kind: 'unexpected', detail: text };
  if (!(e instanceof VcollError)) return { kind: 'unexpected', detail: `not a typed vcoll error: ${text}` };
  // MPI's per-operation watchdog names the rank that timed out and what it waited for, which may wait for the stuck rank
  // only through others (a ring): there a typed error in bounded time is all one can ask
  const named = c.fault.kind === 'wrong-count' || (c.fault.kind === 'stuck' && c.transport === 'mpi') || new RegExp(`\\brank ${c.fault.rank}\\b`).test(e.message);
  if (!named) {
    return { kind: 'unexpected', detail: `the error does not name rank ${c.fault.rank}: ${text}` };
  }
  return { kind: 'expected', detail: text };
}

/** Whether a rejection of a threads/MPI job is the transport giving up on a job that ran too long. */
function isTimeout(e: unknown): boolean {
  return e instanceof Error && /MPI job of \d+ ranks killed after \d+ ms/.test(e.message);
}

function simModel(c: Case) {
  const { alpha, beta, gamma, ports } = c.model;
  return hierarchicalModel({ nodeOf: nodesFor(c.p), intra: { alpha: alpha / 4, beta: beta / 2 }, inter: { alpha, beta }, gamma, ports });
}

async function runJob(msg: ToChild, send: (m: Report) => Promise<void>): Promise<void> {
  const cases = msg.cases;
  const t = cases[0].transport;
  if (t === 'sim') {
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i];
      let outcome: Outcome;
      try {
        const res = await runSim(c.p, (comm) => execCase(comm, c), { model: simModel(c) });
        outcome = judgeResults(c, res.results);
      } catch (e) {
        outcome = judgeError(c, e);
      }
      await send({ type: 'case', index: i, outcome });
    }
    return;
  }
  const c0 = cases[0];
  const faulty = cases.some((c) => c.fault !== undefined);
  const args: SoakJobArgs = { cases };
  try {
    const results =
      t === 'threads'
        ? await runThreads<string[][]>(c0.p, PROGRAM_URL, args, { nodes: nodesFor(c0.p), deadlockMs: faulty ? 500 : 2000 })
        : await runMpi<string[][]>(c0.p, PROGRAM_URL, args, {
            nodes: nodesFor(c0.p),
            timeoutMs: 50_000 + 10_000 * cases.length,
            env: msg.mpiStuckMs > 0 ? { VCOLL_MPI_TIMEOUT_MS: String(msg.mpiStuckMs) } : {},
          });
    for (let i = 0; i < cases.length; i++) await send({ type: 'case', index: i, outcome: judgeResults(cases[i], results.map((r) => r[i])) });
  } catch (e) {
    if (cases.length === 1 && !isTimeout(e)) await send({ type: 'case', index: 0, outcome: judgeError(c0, e) });
    else await send({ type: 'batch-error', detail: errorText(e), hang: isTimeout(e) });
  }
}

function childMain(): void {
  // a rank that exits or throws on a worker thread must not take this process with it
  process.on('unhandledRejection', () => {});
  process.on('message', (msg: ToChild) => {
    const send = (m: Report): Promise<void> => new Promise((resolve) => process.send?.({ ...m, job: msg.job }, () => resolve()));
    void runJob(msg, send).then(() => send({ type: 'job-done' }));
  });
}

// ---- the driver -------------------------------------------------------------------------------

export interface SoakOptions {
  runs: number;
  simRuns?: number;
  threadsRuns?: number;
  mpiRuns?: number;
  seed: number;
  transport: Transport | 'all';
  case?: string;
  maxSeconds?: number;
  json?: string;
  mixes: boolean;
  faults: boolean;
  faultRate: number;
  faultKinds?: FaultKind[];
  mpiStuck: boolean;
  mpiStuckMs: number;
  plant?: PlantKind;
  threadsBatch: number;
  mpiBatch: number;
  simBatch: number;
  hangSeconds: number;
  simPMax: number;
  threadsPMax: number;
  mpiPMax: number;
  progress: boolean;
  verbose: boolean;
}

interface Failure {
  readonly kind: Exclude<OutcomeKind, 'verified' | 'expected'>;
  readonly transport: Transport;
  readonly detail: string;
  readonly description: string;
  readonly reproducer: string;
}

interface Counts {
  cases: number;
  jobs: number;
  verified: number;
  expected: number;
  wrong: number;
  hang: number;
  unexpected: number;
  faults: Record<FaultKind, number>;
  mixes: number;
}

const newCounts = (): Counts => ({ cases: 0, jobs: 0, verified: 0, expected: 0, wrong: 0, hang: 0, unexpected: 0, faults: { throw: 0, exit: 0, stuck: 0, 'wrong-count': 0 }, mixes: 0 });

/** The shell line that reruns exactly these cases (as one job when more than one). */
export function reproducer(cases: readonly Case[]): string {
  return `npm run soak -- --transport ${cases[0].transport} --case ${cases.map(encodeCase).join(',')}`;
}

/** A child process that runs jobs; killed and replaced after a hang. */
class Runner {
  private child: ChildProcess | undefined;
  private stderr = '';
  private jobs = 0;

  private spawn(): ChildProcess {
    const child = fork(SELF, ['--child'], { execArgv: process.execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-2000);
    });
    child.on('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    return child;
  }

  /**
   * Runs one job; `onCase` gets every case's outcome. Resolves 'done', or 'hang' (after
   * `limitMs` without news: the child is killed) / 'batch-error' / 'crash' with the index of
   * the first case without an outcome.
   */
  run(cases: readonly Case[], mpiStuckMs: number, limitMs: number, onCase: (i: number, o: Outcome) => void): Promise<{ end: 'done' | 'hang' | 'batch-error' | 'crash'; next: number; detail: string }> {
    const child = (this.child ??= this.spawn());
    const job = ++this.jobs;
    this.stderr = '';
    return new Promise((resolve) => {
      let next = 0;
      let timer: NodeJS.Timeout | undefined;
      const finish = (end: 'done' | 'hang' | 'batch-error' | 'crash', detail: string): void => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve({ end, next, detail });
      };
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          // SIGTERM first: runMpi takes its mpirun job down on it
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 3000).unref();
          this.child = undefined;
          finish('hang', `no result after ${(limitMs / 1000).toFixed(0)} s`);
        }, limitMs);
      };
      let failed: { end: 'hang' | 'batch-error'; detail: string } | undefined;
      const onMessage = (m: FromChild): void => {
        if (m.job !== job) return;
        arm();
        if (m.type === 'case') {
          next = m.index + 1;
          onCase(m.index, m.outcome);
        } else if (m.type === 'batch-error') failed = { end: m.hang ? 'hang' : 'batch-error', detail: m.detail };
        else if (failed !== undefined) finish(failed.end, failed.detail);
        else finish('done', '');
      };
      const onExit = (code: number | null, signal: string | null): void => {
        const why = this.stderr.trim().split('\n').slice(-5).join(' | ');
        finish('crash', `the soak's child process exited (${signal ?? `code ${code}`})${why ? `: ${why}` : ''}`);
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
      arm();
      child.send({ type: 'job', job, cases, mpiStuckMs } satisfies ToChild);
    });
  }

  close(): void {
    this.child?.kill('SIGTERM');
    this.child = undefined;
  }
}

function faultsFor(t: Transport, o: SoakOptions): FaultKind[] {
  if (!o.faults) return [];
  return (o.faultKinds ?? FAULT_KINDS).filter((k) => !(t === 'sim' && k === 'exit') && !(t === 'mpi' && k === 'stuck' && !o.mpiStuck));
}

function genOptions(t: Transport, o: SoakOptions): GenOptions {
  return {
    mixes: o.mixes,
    faultRate: o.faultRate,
    faults: faultsFor(t, o),
    pMax: t === 'sim' ? o.simPMax : t === 'threads' ? o.threadsPMax : o.mpiPMax,
    plant: o.plant,
  };
}

/** Runs the soak; resolves with the failures (and writes the summary to stdout). */
export async function soak(o: SoakOptions): Promise<{ failures: Failure[]; counts: Record<string, Counts> }> {
  const t0 = Date.now();
  const deadline = o.maxSeconds === undefined ? Infinity : t0 + o.maxSeconds * 1000;
  const failures: Failure[] = [];
  const counts: Record<string, Counts> = {};
  const record = (c: Case, out: Outcome, batch?: readonly Case[]): void => {
    const k = (counts[c.transport] ??= newCounts());
    k.cases++;
    if (c.ops.length > 1) k.mixes++;
    if (c.fault && c.fault.kind !== 'corrupt') k.faults[c.fault.kind]++;
    k[out.kind]++;
    if (o.verbose && out.kind === 'expected') process.stderr.write(`expected: ${describeCase(c)}\n  ${out.detail.split('\n')[0]}\n`);
    if (out.kind === 'verified' || out.kind === 'expected') return;
    const f: Failure = { kind: out.kind, transport: c.transport, detail: out.detail, description: describeCase(c), reproducer: reproducer(batch ?? [c]) };
    failures.push(f);
    process.stderr.write(`\n${out.kind.toUpperCase()} ${f.description}\n  ${f.detail}\n  ${f.reproducer}\n`);
  };

  // the work of each transport: explicit cases, or drawn ones
  const explicit = o.case?.split(',').filter((x) => x !== '').map(decodeCase);
  const transports: Transport[] = explicit ? [...new Set(explicit.map((c) => c.transport))] : o.transport === 'all' ? [...TRANSPORTS] : [o.transport];
  const runsOf = (t: Transport): number => (t === 'sim' ? o.simRuns : t === 'threads' ? o.threadsRuns : o.mpiRuns) ?? o.runs;

  let lastProgress = 0;
  const progress = (force = false): void => {
    if (!o.progress) return;
    const now = Date.now();
    if (!force && now - lastProgress < (process.stderr.isTTY ? 250 : 10_000)) return;
    lastProgress = now;
    const per = transports.map((t) => `${t} ${counts[t]?.cases ?? 0}/${explicit ? explicit.filter((c) => c.transport === t).length : runsOf(t)}`).join(' ');
    const all = Object.values(counts);
    const sum = (f: (k: Counts) => number): number => all.reduce((a, k) => a + f(k), 0);
    const line = `[${((now - t0) / 1000).toFixed(0).padStart(5)} s] ${per} | verified ${sum((k) => k.verified)} expected ${sum((k) => k.expected)} WRONG ${sum((k) => k.wrong)} HANG ${sum((k) => k.hang)} UNEXPECTED ${sum((k) => k.unexpected)}`;
    process.stderr.write(process.stderr.isTTY ? `\r${line}` : `${line}\n`);
  };

  const driveTransport = async (t: Transport): Promise<void> => {
    const runner = new Runner();
    const gen = genOptions(t, o);
    const limitMs = o.hangSeconds * 1000;
    // jobs: explicit cases form one job; drawn ones are batched (faults alone; threads/MPI batches of one p)
    const queue: Case[][] = [];
    let drawn = 0;
    const total = explicit ? 0 : runsOf(t);
    const pendingByP = new Map<number, Case[]>();
    const batchSize = t === 'sim' ? o.simBatch : t === 'threads' ? o.threadsBatch : o.mpiBatch;
    const nextJob = (): Case[] | undefined => {
      if (queue.length > 0) return queue.shift();
      if (Date.now() >= deadline) return undefined;
      while (drawn < total) {
        const c = drawCase(t, o.seed, drawn++, gen);
        if (c.fault !== undefined && t !== 'sim') return [c];
        const key = t === 'sim' ? 0 : c.p;
        const b = pendingByP.get(key) ?? [];
        b.push(c);
        pendingByP.set(key, b);
        if (b.length >= batchSize) {
          pendingByP.delete(key);
          return b;
        }
      }
      const [first] = pendingByP.entries();
      if (first === undefined) return undefined;
      pendingByP.delete(first[0]);
      return first[1];
    };
    if (explicit) queue.push(explicit.filter((c) => c.transport === t));

    // MPI ranks get the short watchdog whenever a stuck fault may come (also for a replayed case)
    const stuckMs = (cs: readonly Case[]): number => (o.mpiStuck || cs.some((c) => c.fault?.kind === 'stuck') ? o.mpiStuckMs : 0);
    for (let job = nextJob(); job !== undefined; job = nextJob()) {
      const cases = job;
      (counts[t] ??= newCounts()).jobs++;
      // the simulator runs every rank in one process: big p takes proportionally longer
      const perCase = t === 'sim' ? limitMs * Math.max(1, ...cases.map((c) => Math.ceil(c.p / 64))) : limitMs + 10_000 * cases.length;
      const r = await runner.run(cases, stuckMs(cases), perCase, (i, out) => {
        record(cases[i], out);
        progress();
      });
      if (r.end === 'done' && r.next >= cases.length) continue;
      const rest = cases.slice(r.next);
      if (rest.length === 0) continue;
      if (t === 'sim' || rest.length === 1) {
        // sim reports case by case: the first without an outcome is the culprit
        record(rest[0], { kind: r.end === 'hang' ? 'hang' : 'unexpected', detail: r.detail || 'the job ended without an outcome for this case' });
        if (rest.length > 1) queue.unshift(rest.slice(1));
        continue;
      }
      // a threads/MPI batch failed as a whole: rerun its cases alone; if all pass alone, the batch is the reproducer
      const alone: Outcome[] = [];
      for (const c of rest) {
        (counts[t] as Counts).jobs++;
        let got: Outcome | undefined;
        const a = await runner.run([c], stuckMs([c]), limitMs + 10_000, (_i, out) => {
          got = out;
        });
        got ??= { kind: a.end === 'hang' ? 'hang' : 'unexpected', detail: a.detail };
        alone.push(got);
      }
      rest.forEach((c, i) => {
        if (alone[i].kind !== 'verified' || !alone.every((x) => x.kind === 'verified')) record(c, alone[i]);
      });
      if (alone.every((x) => x.kind === 'verified')) {
        // only the batch fails: report it once, as a batch
        record(rest[0], { kind: r.end === 'hang' ? 'hang' : 'unexpected', detail: `in a batch of ${rest.length} (every case passes alone): ${r.detail}` }, rest);
        for (const c of rest.slice(1)) record(c, { kind: 'verified', detail: '' });
      }
      progress();
    }
    runner.close();
  };

  await Promise.all(transports.map((t) => driveTransport(t)));
  progress(true);
  if (o.progress && process.stderr.isTTY) process.stderr.write('\n');

  const out = process.stdout;
  const seconds = (Date.now() - t0) / 1000;
  out.write(`\nsoak: seed ${o.seed}, ${seconds.toFixed(0)} s${o.mixes ? '' : ', no mixes'}${o.faults ? '' : ', no faults'}${o.plant ? `, planted ${o.plant}` : ''}\n`);
  out.write('transport   cases   jobs  verified  expected  WRONG  HANG  UNEXPECTED   mixes  faults (throw/exit/stuck/wrong-count)\n');
  for (const t of transports) {
    const k = counts[t] ?? newCounts();
    const f = k.faults;
    out.write(
      `${t.padEnd(9)} ${String(k.cases).padStart(7)} ${String(k.jobs).padStart(6)} ${String(k.verified).padStart(9)} ${String(k.expected).padStart(9)} ${String(k.wrong).padStart(6)} ${String(k.hang).padStart(5)} ${String(k.unexpected).padStart(11)} ${String(k.mixes).padStart(7)}  ${f.throw}/${f.exit}/${f.stuck}/${f['wrong-count']}\n`,
    );
  }
  if (failures.length === 0) out.write('no failure: every case verified or failed as expected\n');
  else {
    out.write(`\n${failures.length} failure(s):\n`);
    for (const f of failures) out.write(`\n${f.kind.toUpperCase()} ${f.description}\n  ${f.detail}\n  ${f.reproducer}\n`);
  }
  if (o.json !== undefined) {
    writeFileSync(o.json, `${JSON.stringify({ seed: o.seed, seconds, options: o, counts, failures }, null, 2)}\n`);
  }
  return { failures, counts };
}


function cliMain(): void {
  const program = new Command()
    .name('soak')
    .description('random collective cases on the simulator, worker threads and MPI, verified byte for byte, with injected faults')
    .option('--runs <n>', 'cases per transport', parseIntegerOption('runs', 0), 200)
    .option('--sim-runs <n>', 'cases on the simulator (default --runs)', parseIntegerOption('sim-runs', 0))
    .option('--threads-runs <n>', 'cases on worker threads (default --runs)', parseIntegerOption('threads-runs', 0))
    .option('--mpi-runs <n>', 'cases on MPI (default --runs)', parseIntegerOption('mpi-runs', 0))
    .option('--seed <n>', 'seed of the case generator', parseIntegerOption('seed', 0), Date.now() % 2 ** 31)
    .option('--transport <t>', 'sim | threads | mpi | all', (v: string) => {
      if (v !== 'all' && !TRANSPORTS.includes(v as Transport)) throw new CommanderArgumentError('--transport must be sim, threads, mpi or all');
      return v as Transport | 'all';
    }, 'sim')
    .option('--case <tokens>', 'rerun exactly these cases (reproducer tokens, comma-separated: one job)')
    .option('--max-seconds <s>', 'stop starting jobs after this long', parseIntegerOption('max-seconds', 1))
    .option('--json <file>', 'also write the summary and failures as JSON')
    .option('--no-mixes', 'no in-flight mixes')
    .option('--no-faults', 'no injected faults')
    .option('--fault-kinds <list>', `injected faults, comma-separated (default all: ${FAULT_KINDS.join(',')}; exit never on sim, stuck on MPI only with --mpi-stuck)`, (v: string) => {
      const kinds = v.split(',').filter((k) => k !== '');
      const bad = kinds.find((k) => !FAULT_KINDS.includes(k as FaultKind));
      if (bad !== undefined) throw new CommanderArgumentError(`--fault-kinds: unknown fault "${bad}" (choose from ${FAULT_KINDS.join(', ')})`);
      return kinds as FaultKind[];
    })
    .option('--fault-rate <x>', 'fraction of cases with a fault', (v: string) => Number(v), 0.15)
    .option('--mpi-stuck', 'MPI: include the stuck-rank fault (needs the per-operation timeout, VCOLL_MPI_TIMEOUT_MS)', false)
    .option('--mpi-stuck-ms <ms>', 'MPI: VCOLL_MPI_TIMEOUT_MS for the ranks with --mpi-stuck', parseIntegerOption('mpi-stuck-ms', 1), 3000)
    .option('--plant <fault>', 'test the soak: plant wrong-count (wrong counts) or corrupt (a flipped result byte) in every case, expecting it verified (must fail)', (v: string) => {
      if (!PLANT_KINDS.includes(v as PlantKind)) throw new CommanderArgumentError(`--plant must be one of ${PLANT_KINDS.join(', ')}`);
      return v as PlantKind;
    })
    .option('--threads-batch <n>', 'cases per runThreads call', parseIntegerOption('threads-batch', 1), 8)
    .option('--mpi-batch <n>', 'cases per mpirun job', parseIntegerOption('mpi-batch', 1), 6)
    .option('--sim-batch <n>', 'cases per message to the simulator child', parseIntegerOption('sim-batch', 1), 50)
    .option('--hang-seconds <s>', 'wall-clock limit of one case (sim: × ⌈p/64⌉; a threads/MPI job gets 10 s more per case)', parseIntegerOption('hang-seconds', 1), 60)
    .option('--sim-p-max <n>', 'largest p on the simulator (2 % of the cases above 64)', parseIntegerOption('sim-p-max', 1), 512)
    .option('--threads-p-max <n>', 'largest p on worker threads', parseIntegerOption('threads-p-max', 1), 8)
    .option('--mpi-p-max <n>', 'largest p on MPI', parseIntegerOption('mpi-p-max', 1), 4)
    .option('--no-progress', 'no progress line on stderr')
    .option('--verbose', 'also print every expected failure with its error', false);
  try {
    program.parse(process.argv);
  } catch (e) {
    exitOnError(e); // a bad option value: its message, exit 2
    return;
  }
  const o = program.opts<SoakOptions>();
  void soak(o).then(
    ({ failures }) => {
      process.exitCode = failures.length > 0 ? 1 : 0;
    },
    (e: unknown) => {
      process.stderr.write(`soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 2;
    },
  );
}

if (process.argv.includes('--child')) childMain();
else cliMain();
