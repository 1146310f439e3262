/**
 * `vcoll inter`: Kang19's settings 1–8 on the simulator (or on worker threads) — root gathering against Algorithm 1
 * (allgather, settings 1–4) or Algorithm 2 (allgatherv, 5–8) — over a size sweep (or one size),
 * printing times and improvement ratios beside the paper's Eq. (5). JSON: one object per
 * (setting, size) per line, `{setting, p, q, kA, kB, rootGathering, algorithm, ratio, …}`.
 */
import Table from 'cli-table3';
import { InvalidArgumentError } from '../errors.js';
import { INTER_SETTINGS, PAPER_RATIOS, type InterSettingNumber } from '../run/inter-settings.js';
import { checkInterRanks, interSimBytes, runInter, type InterReport } from '../run/inter.js';
import { heapToRaise } from '../util/limits.js';

export interface InterCommandOptions {
  transport: 'sim' | 'threads';
  /** A setting number, or "all". */
  setting: string;
  ranks: number;
  /** One size (bytes per rank of the larger block); absent: the sweep 64 KiB … 8 MiB. */
  size?: number;
  alpha: number;
  beta: number;
  /** Untimed / timed rounds (src/run/inter.ts defaults when absent). */
  warmup?: number;
  reps?: number;
  format: 'json' | 'table';
}

/** The paper's sweep: 64 KiB to 8 MiB per rank, doubling. */
export const INTER_SWEEP: readonly number[] = Array.from({ length: 8 }, (_, i) => 65536 * 2 ** i);

/** A list of Kang19 settings (`1,3`) or `all`; an entry outside 1…8 is an InvalidArgumentError naming `field`. */
export function parseSettings(v: string, field = '--setting'): InterSettingNumber[] {
  if (v === 'all') return [...INTER_SETTINGS];
  return v.split(',').map((s) => {
    const n = Number(s.trim());
    if (!(INTER_SETTINGS as readonly number[]).includes(n)) throw new InvalidArgumentError(field, `must be 1…8 (or a list, or "all"), got "${s}"`);
    return n as InterSettingNumber;
  });
}

/**
 * The heap (MiB) to run `vcoll inter --transport sim` again with (cli/heap-rerun.ts), as `vcoll
 * run` and `vcoll bench` do: when the run's estimate (interSimBytes) exceeds Node's heap limit
 * and fits the memory limit; undefined otherwise, and for threads. The whole estimate, receive
 * buffers included: those are outside V8's heap, but the objects alone (1 GiB + 48 KiB per
 * rank) come to Node's default limit of about 4 GiB at p + q = 2^16, where a collector without
 * room to work runs mostly itself.
 */
export function heapForInter(opts: Pick<InterCommandOptions, 'transport' | 'ranks'>): number | undefined {
  if (opts.transport !== 'sim' || !Number.isInteger(opts.ranks) || opts.ranks < 2) return undefined;
  return heapToRaise(interSimBytes(opts.ranks));
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toPrecision(6));

/**
 * The stderr note of a scaled run (InterReport.exact false): what its times are, and whether its
 * blocks were rounded.
 */
export function scaledNote(r: InterReport): string {
  const blocks = r.rounded
    ? `no scale divides every block within memory, so each block is rounded to a multiple of ${r.scale} bytes (at least one; "expected" is that of the rounded sizes)`
    : `every block is simulated with 1/${r.scale} of its bytes and β × ${r.scale}`;
  return `vcoll inter: setting ${r.setting} at p + q = ${r.p + r.q}, size ${r.size}: ${blocks}; the times are approximate: control messages (counts, trailers) cost β × ${r.scale} per byte and the algorithms' size thresholds see the scaled sizes (docs/cli.md, "vcoll inter")`;
}

export async function runInterCommand(
  opts: InterCommandOptions,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  note: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<InterReport[]> {
  const settings = parseSettings(opts.setting);
  if (opts.transport === 'sim') checkInterRanks(opts.ranks, '--ranks');
  const sizes = opts.size === undefined ? INTER_SWEEP : [opts.size];
  const reports: InterReport[] = [];
  const table = new Table({ head: ['setting', 'p', 'q', 'kA', 'kB', 'root gathering', 'algorithm', 'ratio', 'Eq. 5', 'paper', 'verified'] });
  for (const setting of settings) {
    for (const size of sizes) {
      const r = await runInter({ transport: opts.transport, setting, ranks: opts.ranks, size, alpha: opts.alpha, beta: opts.beta, warmup: opts.warmup, reps: opts.reps });
      reports.push(r);
      if (!r.exact) note(scaledNote(r));
      if (opts.format === 'json') out(JSON.stringify(r));
      else {
        const mark = r.exact ? '' : '*';
        table.push([r.setting, r.p, r.q, r.kA, r.kB, `${fmt(r.rootGathering)}${mark}`, `${fmt(r.algorithm)}${mark}`, r.ratio.toFixed(2), r.expected.toFixed(2), PAPER_RATIOS[r.setting].toFixed(2), r.verified ? 'yes' : 'NO']);
      }
    }
  }
  if (opts.format === 'table') {
    out(
      opts.transport === 'sim'
        ? `Kang19 settings on the simulator: ${opts.ranks} ranks, full duplex, α = ${opts.alpha}, β = ${opts.beta} per byte; times of the slowest rank (model units)`
        : `Kang19 settings on ${opts.ranks} worker threads: measured times of the slowest rank (s), minimum of ${reports[0]?.reps ?? '?'} rounds after ${reports[0]?.warmup ?? '?'} warm-ups, both algorithms interleaved`,
    );
    out(table.toString());
    if (reports.some((r) => !r.exact)) out('* scaled blocks: approximate times (see the note on stderr)');
  }
  return reports;
}
