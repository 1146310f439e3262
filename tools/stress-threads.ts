/**
 * `npm run stress:threads`: hunts hangs and wrong results of gatherv/scatterv on worker
 * threads. Draws random cases from a seed — every algorithm, p 1..8, every distribution,
 * random roots, 1/2/8-byte elements, one-shot or persistent, 1..3 repetitions, b up to 1000
 * and now and then 70000 (blocks far beyond the 64 KiB channel rings), random α, β, γ — and
 * runs them in batches of one p (executions separated by barriers as `vcoll run` does, or,
 * per batch, back to back), each batch in a child process that starts the worker
 * threads once (tools/stress-threads-program.ts) and watches them: a case whose slowest
 * rank has not finished it after --timeout-s is a hang. The child then reports every rank's
 * state (case, barriers entered, pending sends/receives with peer, tag, bytes) and exits,
 * which kills its workers. The driver prints the case as a `vcoll run` command line, reruns it
 * alone (--isolate times) to see whether it hangs on its own, and continues with the rest
 * of the batch. Wrong results and errors are reported the same way. Exit status 1 if any.
 *
 *   npm run stress:threads -- [--cases N] [--minutes M] [--seed S] [--jobs J] [--timeout-s 30]
 *                             [--batch 12] [--isolate 3] [--p-max 8] [--big-chance 0.08]
 *                             [--trace on|off|mixed] [--barrier on|off|mixed] [--out log.json]
 *
 * --jobs J runs J batches at once (J·p threads on the machine: the load under which races
 * show). With neither --cases nor --minutes it runs 200 cases.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import prand from 'pure-rand';
import { parseChoice, parseIntegerOption, parseNumberOption } from '../src/cli/options.js';
import { type VAlgorithm } from '../src/collectives/types.js';
import { PORTABLE_V_ALGORITHMS } from '../src/collectives/v-variants.js';
import { ANY_TAG, COLLECTIVE_TAG } from '../src/comm/communicator.js';
import { describeTag } from '../src/comm/tags.js';
import { summarize } from '../src/run/job.js';
import type { RankCaseResult } from '../src/run/rank.js';
import { V_OPERATIONS, validateCase, type RunCase } from '../src/run/spec.js';
import { runThreads } from '../src/transports/threads/index.js';
import { DISTRIBUTIONS, blockSizes, type DistributionName } from '../src/workloads/distributions.js';
import { createProgressBuffer, readProgress, type RankProgress, type StressJobArgs } from './stress-threads-program.js';

const SELF = fileURLToPath(import.meta.url);
const PROGRAM_URL = new URL(import.meta.url.endsWith('.ts') ? './stress-threads-program.ts' : './stress-threads-program.js', import.meta.url);

// ---- cases -------------------------------------------------------------------------------

/**
 * The shell command that runs `c` alone on p threads: `vcoll run` from the sources (`npx vcoll`
 * would first rebuild dist/ through the package's prepare script).
 */
export function commandLine(p: number, c: RunCase): string {
  return [
    'npx tsx src/cli/main.ts run --transport threads',
    `--p ${p} --op ${c.op} --algorithm ${c.algorithm} --dist ${c.dist} --b ${c.b} --rho ${c.rho} --seed ${c.seed}`,
    `--root ${c.root} --unit-bytes ${c.unitBytes} --alpha ${c.model.alpha} --beta ${c.model.beta} --gamma ${c.model.gamma}`,
    `${c.persistent ? '--persistent ' : ''}--reps ${c.reps} --warmup ${c.warmup} --format json`,
  ].join(' ');
}

type Rng = ReturnType<typeof prand.xoroshiro128plus>;
const int = (rng: Rng, lo: number, hi: number): number => prand.unsafeUniformIntDistribution(lo, hi, rng);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, 0, xs.length - 1)];

/** One random valid case for p ranks (two-block only on distributions with at most two block sizes). */
export function randomCase(rng: Rng, p: number, bigChance: number): RunCase {
  const op = pick(rng, V_OPERATIONS);
  const algorithm: VAlgorithm = pick(rng, PORTABLE_V_ALGORITHMS);
  const r = int(rng, 0, 999) / 1000;
  const b = r < bigChance ? 70000 : r < 0.5 ? int(rng, 1, 16) : int(rng, 1, 1000);
  const rho = pick(rng, [2, 5, 8]);
  const seed = int(rng, 0, 2 ** 31 - 1);
  let dist: DistributionName = pick(rng, DISTRIBUTIONS);
  for (let k = 0; algorithm === 'two-block' && new Set(blockSizes(dist, { p, b, rho, seed })).size > 2; k++) {
    dist = k < 20 ? pick(rng, DISTRIBUTIONS) : 'same';
  }
  const c: RunCase = {
    op,
    algorithm,
    dist,
    b,
    rho,
    seed,
    root: int(rng, 0, p - 1),
    unitBytes: pick(rng, [1, 2, 8]),
    model: { alpha: pick(rng, [100, 100, 0, 5, 10000]), beta: pick(rng, [1, 1, 0.01, 10]), gamma: pick(rng, [0, 0, 1]) },
    persistent: int(rng, 0, 1) === 1,
    reps: int(rng, 1, 3),
    warmup: int(rng, 0, 1),
  };
  return validateCase(p, c);
}

// ---- the child: one batch on one set of worker threads, watched -------------------------

interface BatchRequest {
  readonly p: number;
  readonly cases: readonly RunCase[];
  readonly timeoutMs: number;
  readonly trace: boolean;
  readonly barrier: boolean;
}

/** What a failed case looked like (reports of verified cases are not sent back). */
interface CaseFailure {
  readonly index: number;
  readonly mismatches: string[];
}

type ChildMessage =
  | { readonly type: 'progress'; readonly done: number }
  | { readonly type: 'done'; readonly failures: CaseFailure[]; readonly seconds: number }
  | { readonly type: 'hang'; readonly index: number; readonly stalledMs: number; readonly ranks: RankProgress[] }
  | { readonly type: 'error'; readonly index: number; readonly message: string; readonly ranks: RankProgress[] };

/** Cases every rank has finished: the slowest rank's count. */
function casesDone(ranks: readonly RankProgress[], total: number): number {
  let min = total;
  for (const r of ranks) {
    const done = r.state === 'program returned' ? total : r.state === 'case done' ? r.caseIndex + 1 : Math.max(0, r.caseIndex);
    if (done < min) min = done;
  }
  return min;
}

async function runChild(req: BatchRequest): Promise<void> {
  const send = (m: ChildMessage): Promise<void> => new Promise((resolve) => process.send?.(m, () => resolve()));
  const sab = createProgressBuffer(req.p);
  let done = 0;
  let since = performance.now();
  let over = false;
  const finish = async (m: ChildMessage, code: number): Promise<void> => {
    if (over) return;
    over = true;
    clearInterval(watch);
    await send(m);
    // exiting kills the worker threads (a hung one included)
    process.exit(code);
  };
  const watch = setInterval(() => {
    const ranks = readProgress(sab, req.p);
    const d = casesDone(ranks, req.cases.length);
    const now = performance.now();
    if (d !== done) {
      done = d;
      since = now;
      void send({ type: 'progress', done });
    } else if (now - since > req.timeoutMs) {
      void finish({ type: 'hang', index: done, stalledMs: Math.round(now - since), ranks }, 3);
    }
  }, 200);
  const t0 = performance.now();
  const args: StressJobArgs = { cases: req.cases, progress: sab, trace: req.trace, barrier: req.barrier };
  try {
    const results = await runThreads<RankCaseResult[]>(req.p, PROGRAM_URL, args);
    const failures: CaseFailure[] = [];
    req.cases.forEach((c, i) => {
      const rep = summarize('threads', req.p, c, results.map((r) => r[i]), 's');
      if (!rep.verified) failures.push({ index: i, mismatches: rep.mismatches });
    });
    await finish({ type: 'done', failures, seconds: (performance.now() - t0) / 1000 }, 0);
  } catch (e) {
    const ranks = readProgress(sab, req.p);
    await finish({ type: 'error', index: casesDone(ranks, req.cases.length), message: e instanceof Error ? e.message : String(e), ranks }, 4);
  }
}

// ---- the driver ----------------------------------------------------------------------------

interface StressOptions {
  cases?: number;
  minutes?: number;
  seed: number;
  jobs: number;
  timeoutS: number;
  batch: number;
  isolate: number;
  pMax: number;
  bigChance: number;
  trace: 'on' | 'off' | 'mixed';
  barrier: 'on' | 'off' | 'mixed';
  out?: string;
}

type BatchOutcome =
  | { readonly kind: 'done'; readonly failures: CaseFailure[] }
  | { readonly kind: 'hang'; readonly index: number; readonly ranks: RankProgress[] | undefined; readonly detail: string }
  | { readonly kind: 'error'; readonly index: number; readonly ranks: RankProgress[]; readonly message: string };

/** Runs one batch in a child process; a child silent for timeout + 30 s is killed (a hang at case `done`). */
function runBatch(req: BatchRequest): Promise<BatchOutcome> {
  return new Promise((resolve) => {
    const child: ChildProcess = fork(SELF, ['--child'], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    // the end of the child's stderr explains a crash (e.g. a module that failed to load)
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-1500);
    });
    let outcome: BatchOutcome | undefined;
    let done = 0;
    let backstop: NodeJS.Timeout | undefined;
    const arm = (): void => {
      if (backstop !== undefined) clearTimeout(backstop);
      backstop = setTimeout(() => {
        outcome ??= { kind: 'hang', index: done, ranks: undefined, detail: `the child process stopped answering (killed pid ${child.pid})` };
        child.kill('SIGKILL');
      }, req.timeoutMs + 30_000);
    };
    arm();
    child.on('message', (m: ChildMessage) => {
      arm();
      if (m.type === 'progress') done = m.done;
      else if (m.type === 'done') outcome = { kind: 'done', failures: m.failures };
      else if (m.type === 'hang') outcome = { kind: 'hang', index: m.index, ranks: m.ranks, detail: `no progress for ${(m.stalledMs / 1000).toFixed(1)} s` };
      else outcome = { kind: 'error', index: m.index, ranks: m.ranks, message: m.message };
    });
    child.on('exit', (code, signal) => {
      if (backstop !== undefined) clearTimeout(backstop);
      const why = stderr.trim().split('\n').filter((l) => l.trim() !== '' && !l.startsWith('npm warn')).slice(-6).join(' | ');
      resolve(outcome ?? { kind: 'error', index: done, ranks: [], message: `child exited with ${signal ?? `code ${code}`} without a report${why ? `: ${why}` : ''}` });
    });
    child.send(req);
  });
}

/** A pending operation's tag for the hang report: the raw tag, and for a collective's tag what it is (comm/tags.ts describeTag). */
export function tagName(travelled: number): string {
  if (travelled === ANY_TAG) return 'any tag';
  return travelled >= COLLECTIVE_TAG ? `tag ${travelled} (${describeTag(travelled)})` : `tag ${travelled}`;
}

/** One line per rank: where it is and what it waits for. */
export function describeRanks(ranks: readonly RankProgress[], index: number): string[] {
  return ranks.map((r) => {
    const where =
      r.state === 'not started'
        ? 'not started (worker start-up)'
        : r.state === 'program returned'
          ? 'returned from the program (in endpoint.drain or reporting)'
          : `case ${r.caseIndex} ${r.state === 'case done' ? 'finished' : `running, ${r.syncs} barrier(s) entered${r.inSync ? ', inside a barrier' : ''}`}`;
    const ops = r.pending.map((o) => `${o.kind} ${o.kind === 'send' ? 'to' : 'from'} ${o.peer}${o.comm ? `@comm${o.comm}` : ''} ${tagName(o.tag)}, ${o.bytes} B`);
    const stuck = r.state === 'not started' || (r.state === 'in case' && r.caseIndex === index) ? 'STUCK ' : '';
    return `  ${stuck}rank ${r.rank}: ${where}; ops ${r.opsCompleted}/${r.opsStarted} done${ops.length ? `; pending: ${ops.join(', ')}` : ''}${r.untracked ? ` (+${r.untracked} untracked)` : ''}`;
  });
}

interface Finding {
  readonly kind: 'hang' | 'error' | 'wrong result';
  readonly p: number;
  readonly case: RunCase;
  readonly command: string;
  readonly caseInBatch: number;
  readonly batchSize: number;
  readonly detail: string;
  readonly ranks: string[];
  /** Reruns alone: how many showed the same kind of problem. */
  isolated?: { runs: number; reproduced: number; outcomes: string[] };
}

async function stress(o: StressOptions): Promise<boolean> {
  const maxCases = o.cases ?? (o.minutes === undefined ? 200 : Infinity);
  const deadline = o.minutes === undefined ? Infinity : Date.now() + o.minutes * 60_000;
  const rng = prand.xoroshiro128plus(o.seed);
  const timeoutMs = o.timeoutS * 1000;
  const findings: Finding[] = [];
  const t0 = Date.now();
  let issued = 0;
  let run = 0;
  let batches = 0;
  const log = (s: string): void => {
    process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${s}\n`);
  };

  const nextBatch = (): BatchRequest | undefined => {
    if (issued >= maxCases || Date.now() >= deadline) return undefined;
    const p = int(rng, 1, o.pMax);
    const n = Math.min(o.batch, maxCases - issued);
    const cases = Array.from({ length: n }, () => randomCase(rng, p, o.bigChance));
    issued += n;
    const trace = o.trace === 'mixed' ? int(rng, 0, 1) === 1 : o.trace === 'on';
    const barrier = o.barrier === 'mixed' ? int(rng, 0, 1) === 1 : o.barrier === 'on';
    return { p, cases, timeoutMs, trace, barrier };
  };

  const isolate = async (f: Finding, trace: boolean, barrier: boolean): Promise<void> => {
    const runs = o.isolate;
    const outcomes: string[] = [];
    let reproduced = 0;
    for (let k = 0; k < runs; k++) {
      const r = await runBatch({ p: f.p, cases: [f.case], timeoutMs, trace, barrier });
      const kind = r.kind === 'done' ? (r.failures.length ? 'wrong result' : 'ok') : r.kind;
      outcomes.push(r.kind === 'error' ? `error: ${r.message}` : kind);
      if (kind === f.kind) reproduced++;
    }
    f.isolated = { runs, reproduced, outcomes };
    log(`  alone: ${reproduced}/${runs} reproduced (${outcomes.join(', ')})`);
  };

  const report = (f: Finding): void => {
    findings.push(f);
    log(`${f.kind.toUpperCase()} (case ${f.caseInBatch + 1} of a batch of ${f.batchSize}): ${f.detail}\n  ${f.command}`);
    for (const line of f.ranks) process.stderr.write(`${line}\n`);
  };

  const worker = async (): Promise<void> => {
    for (let req = nextBatch(); req !== undefined; req = nextBatch()) {
      let pending: BatchRequest | undefined = req;
      while (pending !== undefined) {
        const cur: BatchRequest = pending;
        pending = undefined;
        const out = await runBatch(cur);
        batches++;
        if (out.kind === 'done') {
          run += cur.cases.length;
          for (const fl of out.failures) {
            const c = cur.cases[fl.index];
            report({ kind: 'wrong result', p: cur.p, case: c, command: commandLine(cur.p, c), caseInBatch: fl.index, batchSize: cur.cases.length, detail: `${fl.mismatches.join('; ')}${cur.barrier ? '' : ' (executions back to back, no barriers)'}`, ranks: [] });
          }
          continue;
        }
        const index = Math.min(out.index, cur.cases.length - 1);
        run += index + 1;
        const c = cur.cases[index];
        const f: Finding = {
          kind: out.kind,
          p: cur.p,
          case: c,
          command: commandLine(cur.p, c),
          caseInBatch: index,
          batchSize: cur.cases.length,
          detail: `${out.kind === 'hang' ? out.detail : out.message}${cur.trace ? '' : ' (untraced: no pending operations recorded)'}${cur.barrier ? '' : ' (executions back to back, no barriers)'}`,
          ranks: out.ranks ? describeRanks(out.ranks, index) : [],
        };
        report(f);
        if (o.isolate > 0) await isolate(f, cur.trace, cur.barrier);
        // the rest of the batch still runs
        if (index + 1 < cur.cases.length) pending = { ...cur, cases: cur.cases.slice(index + 1) };
      }
      log(`${run} cases run in ${batches} batches, ${findings.length} finding(s)`);
    }
  };

  log(`stress: seed ${o.seed}, ${o.cases ?? '∞'} cases, ${o.minutes ?? '∞'} min, ${o.jobs} job(s), batches of ${o.batch}, watchdog ${o.timeoutS} s`);
  await Promise.all(Array.from({ length: o.jobs }, () => worker()));

  const out = process.stdout;
  out.write(`\n${run} cases in ${batches} batches, ${((Date.now() - t0) / 1000).toFixed(0)} s, seed ${o.seed}: `);
  out.write(findings.length === 0 ? 'no hang, no error, every result verified\n' : `${findings.length} finding(s)\n`);
  for (const f of findings) {
    out.write(`\n${f.kind}: ${f.detail}\n  ${f.command}\n`);
    if (f.isolated) out.write(`  alone: ${f.isolated.reproduced}/${f.isolated.runs} reproduced (${f.isolated.outcomes.join(', ')})\n`);
    for (const line of f.ranks) out.write(`${line}\n`);
  }
  if (o.out !== undefined) writeFileSync(o.out, `${JSON.stringify({ seed: o.seed, cases: run, batches, findings }, null, 2)}\n`);
  return findings.length === 0;
}

if (process.argv.includes('--child')) {
  process.once('message', (req: BatchRequest) => void runChild(req));
} else {
  const program = new Command()
    .name('stress:threads')
    .option('--cases <n>', 'number of cases (default 200 without --minutes)', parseIntegerOption('cases', 1))
    .option('--minutes <m>', 'stop starting batches after this many minutes', parseNumberOption('minutes', 0))
    .option('--seed <n>', 'seed of the case generator', parseIntegerOption('seed', 0), Date.now() % 2 ** 31)
    .option('--jobs <n>', 'batches run at once (load)', parseIntegerOption('jobs', 1), 1)
    .option('--timeout-s <s>', 'watchdog: seconds without the slowest rank finishing its case', parseNumberOption('timeout-s', 1), 30)
    .option('--batch <n>', 'cases per worker start-up', parseIntegerOption('batch', 1), 12)
    .option('--isolate <n>', 'reruns of a hung or failed case alone', parseIntegerOption('isolate', 0), 3)
    .option('--p-max <n>', 'largest p', parseIntegerOption('p-max', 1), 8)
    .option('--big-chance <x>', 'fraction of cases with b = 70000', parseNumberOption('big-chance', 0), 0.08)
    .option('--trace <mode>', 'record pending operations: on | off | mixed (per batch)', parseChoice('trace', ['on', 'off', 'mixed'] as const), 'mixed')
    .option('--barrier <mode>', 'barrier before every execution (as vcoll run): on | off | mixed (per batch)', parseChoice('barrier', ['on', 'off', 'mixed'] as const), 'mixed')
    .option('--out <file>', 'also write the findings as JSON');
  program.parse(process.argv);
  const ok = await stress(program.opts<StressOptions>());
  process.exitCode = ok ? 0 : 1;
}
