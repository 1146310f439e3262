/**
 * `npm run bench:hier-adaptive`: model results of the hierarchical gatherv and scatterv with
 * adaptive levels (Traff18's adaptive binomial trees over the members' blocks on each node and
 * over the node totals on the bridge, built by Traff18's distributed construction; Traff18 §6:
 * "use the new algorithms in a hierarchical fashion") against the same two-level algorithm over
 * binomial trees (TraffRougier14) and the flat binomial gatherv/scatterv — on the simulator,
 * whose times are exact in the model, every run verified byte for byte on every rank.
 *
 * Machines: the two-level model of `vcoll run --algorithm hierarchical` (TraffRougier14 §4's
 * machine, src/run/hierarchical-case.ts: intra-node α = 0.5 µs, β = 1/4000 µs/B; inter-node
 * β = 1/3200 µs/B; γ = 1/5000 µs/B) with the inter-node α set to 10× and 100× the intra-node
 * one (5 µs and 50 µs): α ratios intra:inter 1:10 and 1:100. Placements: 36 nodes × 16 ranks in
 * rank order (p = 576), and 11 unequal nodes (1 to 16 ranks, seeded) with the ranks shuffled.
 * Blocks: Traff18's distributions (SEED000_DISTRIBUTIONS: same, random, bucket, spikes,
 * increasing, decreasing, alternating, two-blocks) of mean b bytes for a few b; gatherv and
 * scatterv in every case ('same' too: the irregular collective with equal counts), root 0,
 * zero-copy root.
 *
 * The ordering adaptive ≤ binomial ≤ flat compares the trees, as the papers do: the adaptive
 * trees' data phase — a persistent plan's start() (hierarchicalGathervInit /
 * hierarchicalScattervInit: the two constructions at init), simulated and checked equal to the
 * evaluation of the trees (src/run/hierarchical-predict.ts) —, the binomial levels' call (they
 * build nothing; simulated, checked equal to the evaluation) and the flat binomial
 * gatherv/scatterv call (simulated; it builds no tree either). The adaptive one-shot call,
 * constructions included, is printed and counted beside them; the summary gives the plan's
 * median time (the constructions). Prints one table per (placement, model, op), the ratios, Traff18's flat
 * adaptive gatherv/scatterv for reference and, where the data phases break the ordering, why;
 * a summary per placement, model and op counts the rows; exit 1 if any row's data phases fail.
 *
 *   npm run bench:hier-adaptive [-- --b 16,1024,32768 --ops gatherv,scatterv --ratios 10,100
 *                                  --dists same,random --placements 36x16,11-unequal --seed 1 --json out.json
 *                                  --markdown tables.md]
 */
import { writeFileSync } from 'node:fs';
import Table from 'cli-table3';
import { Command } from 'commander';
import prand from 'pure-rand';
import { parseIntegerListOption, parseIntegerOption } from '../src/cli/options.js';
import type { HierarchicalTreeName, HierarchicalVariantName } from '../src/collectives/hierarchical/index.js';
import type { HierarchicalModelSpec } from '../src/model/model-json.js';
import { hierarchicalCase, TRAFF_ROUGIER14_MACHINE, type HierarchicalCollective, type HierarchicalRunCase } from '../src/run/hierarchical-case.js';
import { runHierarchicalCase } from '../src/run/hierarchical-job.js';
import type { RunReport } from '../src/run/job.js';
import { CASE_DEFAULTS, SEED000_DISTRIBUTIONS, type VOperation } from '../src/run/spec.js';
import type { DistributionName } from '../src/workloads/distributions.js';

type Op = 'gatherv' | 'scatterv';

interface Placement {
  readonly name: string;
  readonly nodeOf: number[];
}

/** 36 × 16 in rank order. */
function ordered(nodes: number, perNode: number): Placement {
  return { name: `${nodes} nodes × ${perNode}, ordered`, nodeOf: Array.from({ length: nodes * perNode }, (_, r) => Math.floor(r / perNode)) };
}

/** `nodes` nodes of 1 … maxPerNode ranks (seeded), the ranks shuffled over them. */
function unequalPermuted(nodes: number, maxPerNode: number, seed: number): Placement {
  const rng = prand.xoroshiro128plus(seed);
  const sizes = Array.from({ length: nodes }, () => prand.unsafeUniformIntDistribution(1, maxPerNode, rng));
  const nodeOf: number[] = [];
  sizes.forEach((n, b) => {
    for (let i = 0; i < n; i++) nodeOf.push(b);
  });
  for (let i = nodeOf.length - 1; i > 0; i--) {
    const j = prand.unsafeUniformIntDistribution(0, i, rng);
    [nodeOf[i], nodeOf[j]] = [nodeOf[j], nodeOf[i]];
  }
  return { name: `${nodes} unequal nodes (${sizes.join('+')} = ${nodeOf.length} ranks), permuted`, nodeOf };
}

function machine(nodeOf: readonly number[], ratio: number): HierarchicalModelSpec {
  const m = TRAFF_ROUGIER14_MACHINE;
  return {
    kind: 'hierarchical',
    nodeOf,
    intra: { alpha: m.intra.alpha, beta: m.intra.beta },
    inter: { alpha: ratio * m.intra.alpha, beta: m.inter.beta },
    gamma: m.gamma,
    ports: 1,
    copyAll: false,
  };
}

/** The three algorithms' reports of one row. */
interface Three {
  readonly adaptive: RunReport;
  readonly binomial: RunReport;
  readonly flat: RunReport;
}

interface Runs {
  /** Persistent (`--persistent`): planned once (sizes; the adaptive constructions; the flat counts scatter or construction), the timed start() the data phase alone. */
  readonly planned: Three;
  /** One-shot calls, planning included. */
  readonly oneShot: Three;
  /** Traff18's flat adaptive gatherv/scatterv, one-shot (reference). */
  readonly flatAdaptive: RunReport;
}

interface Row {
  readonly placement: string;
  readonly ratio: number;
  readonly op: Op;
  readonly dist: DistributionName;
  readonly b: number;
  readonly runs: Runs;
  /** adaptive ≤ binomial ≤ flat, planned (the ordering the benchmark judges). */
  readonly ok: boolean;
  /** The same for the one-shot calls. */
  readonly oneShotOk: boolean;
}

/** One run: the irregular collective whatever the distribution ('same' included: gatherv/scatterv with equal counts). */
async function run(spec: HierarchicalModelSpec, op: Op, dist: DistributionName, b: number, variant: HierarchicalVariantName, tree: HierarchicalTreeName, seed: number, persistent = false): Promise<RunReport> {
  const p = spec.nodeOf.length;
  const hc = hierarchicalCase({ p, op: op as VOperation, dist, b, rho: CASE_DEFAULTS.rho, seed, root: 0, unitBytes: 1, reps: 1, warmup: 0, variant, tree, modelSpec: spec, persistent });
  const collective: HierarchicalCollective = op;
  const irregular: HierarchicalRunCase = { ...hc, rankCase: { ...hc.rankCase, collective } };
  const r = await runHierarchicalCase('sim', p, irregular);
  if (!r.verified) throw new Error(`${op} ${variant} ${tree} ${dist} b=${b}: not verified: ${r.mismatches.join('; ')}`);
  return r;
}

/** x ≤ y up to rounding (the simulator and the evaluator add the same terms, not always in the same order). */
const le = (x: number, y: number): boolean => x <= y + 1e-9 * Math.max(1, Math.abs(y));

const fmt = (x: number): string => (x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x.toFixed(2));

/** adaptive ≤ binomial ≤ flat for one metric. */
const inOrder = (t: Three): boolean => le(t.adaptive.time, t.binomial.time) && le(t.binomial.time, t.flat.time);

/** Why a metric breaks adaptive ≤ binomial ≤ flat ('' when it does not). */
function why(t: Three): string {
  const out: string[] = [];
  if (!le(t.adaptive.time, t.binomial.time)) out.push(`adaptive > binomial (+${((t.adaptive.time / t.binomial.time - 1) * 100).toFixed(1)} %)`);
  if (!le(t.binomial.time, t.flat.time)) out.push(`binomial > flat (+${((t.binomial.time / t.flat.time - 1) * 100).toFixed(1)} %)`);
  return out.join('; ');
}

/** The simulator against the evaluator where the prediction is meant to be exact: every planned start, the binomial levels' one-shot call. */
function checkExact(r: Runs): void {
  const exact = (what: string, x: RunReport): void => {
    if (!le(x.time, x.predicted) || !le(x.predicted, x.time)) throw new Error(`${what}: simulator ${x.time} µs, evaluator ${x.predicted} µs: meant to be exact`);
  };
  exact('adaptive levels, planned start()', r.planned.adaptive);
  exact('binomial levels, planned start()', r.planned.binomial);
  exact('flat, planned start()', r.planned.flat);
  exact('binomial levels, one-shot', r.oneShot.binomial);
}

const ratio = (x: number, y: number): string => (x / y).toFixed(2);

async function main(): Promise<void> {
  const program = new Command()
    .name('bench:hier-adaptive')
    .option('--b <list>', 'mean block sizes (bytes)', parseIntegerListOption('b', 1), [16, 1024, 32768])
    .option('--ops <list>', 'gatherv,scatterv', (v: string) => v.split(',') as Op[], ['gatherv', 'scatterv'] as Op[])
    .option('--ratios <list>', 'inter-node α / intra-node α', parseIntegerListOption('ratios', 1), [10, 100])
    .option('--dists <list>', 'distributions (default: Traff18\'s)', (v: string) => v.split(',') as DistributionName[], [...SEED000_DISTRIBUTIONS])
    .option('--placements <list>', '36x16 (ordered) and/or 11-unequal (permuted)', (v: string) => v.split(','), ['36x16', '11-unequal'])
    .option('--seed <n>', 'distributions and placement seed', parseIntegerOption('seed', 0), 1)
    .option('--json <file>', 'also write every row as JSON')
    .option('--markdown <file>', 'also write the tables as markdown (gatherv and scatterv side by side), as docs/hierarchical-gather.md shows them');
  program.parse(process.argv);
  const o = program.opts<{ b: number[]; ops: Op[]; ratios: number[]; dists: DistributionName[]; placements: string[]; seed: number; json?: string; markdown?: string }>();
  const placements = o.placements.map((name) => {
    if (name === '36x16') return ordered(36, 16);
    if (name === '11-unequal') return unequalPermuted(11, 16, o.seed);
    throw new Error(`--placements: unknown '${name}' (36x16, 11-unequal)`);
  });
  process.stdout.write(
    'Hierarchical gatherv/scatterv: adaptive levels (Traff18) vs binomial levels (TraffRougier14) vs flat binomial, on the simulator (exact model times, µs), root 0, zero-copy root.\n' +
      `Machine: intra α = ${TRAFF_ROUGIER14_MACHINE.intra.alpha} µs, β = 1/4000 µs/B; inter β = 1/3200 µs/B, α = ratio × intra α; γ = 1/5000 µs/B; one-ported.\n` +
      'planned = a persistent plan\'s start() (`--persistent`: sizes, the adaptive constructions and the flat counts paid once at init): the trees\' data phases,\n' +
      'checked equal to the evaluator\'s; one-shot = the whole calls. The benchmark judges adaptive ≤ binomial ≤ flat on the planned starts. Ratios ≤ 1: it holds.\n',
  );
  const rows: Row[] = [];
  for (const pl of placements) {
    for (const r of o.ratios) {
      const spec = machine(pl.nodeOf, r);
      for (const op of o.ops) {
        const table = new Table({
          head: ['dist', 'b (B)', 'planned: adaptive', 'binomial', 'flat', 'a/b', 'b/f', 'one-shot: adaptive', 'binomial', 'flat', 'a/b', 'b/f', 'plan (adaptive)', 'planned fails: why'],
          style: { head: [], border: [] },
        });
        for (const dist of o.dists) {
          for (const b of o.b) {
            process.stderr.write(`${pl.name} 1:${r} ${op} ${dist} b=${b}        \r`);
            const three = async (persistent: boolean): Promise<Three> => ({
              adaptive: await run(spec, op, dist, b, 'zero-copy', 'adaptive', o.seed, persistent),
              binomial: await run(spec, op, dist, b, 'zero-copy', 'binomial', o.seed, persistent),
              flat: await run(spec, op, dist, b, 'flat', 'binomial', o.seed, persistent),
            });
            const runs: Runs = { planned: await three(true), oneShot: await three(false), flatAdaptive: await run(spec, op, dist, b, 'flat', 'adaptive', o.seed) };
            checkExact(runs);
            const { planned: P, oneShot: O } = runs;
            rows.push({ placement: pl.name, ratio: r, op, dist, b, runs, ok: inOrder(P), oneShotOk: inOrder(O) });
            table.push([
              dist,
              String(b),
              fmt(P.adaptive.time),
              fmt(P.binomial.time),
              fmt(P.flat.time),
              ratio(P.adaptive.time, P.binomial.time),
              ratio(P.binomial.time, P.flat.time),
              fmt(O.adaptive.time),
              fmt(O.binomial.time),
              fmt(O.flat.time),
              ratio(O.adaptive.time, O.binomial.time),
              ratio(O.binomial.time, O.flat.time),
              fmt(P.adaptive.planTime ?? 0),
              why(P),
            ]);
          }
        }
        process.stderr.write(' '.repeat(70) + '\r');
        process.stdout.write(`\n${pl.name}, α intra:inter = 1:${r}, ${op}\n${table.toString()}\n`);
      }
    }
  }
  const failed = rows.filter((x) => !x.ok);
  process.stdout.write(
    `\nPlanned starts: ${rows.length - failed.length} of ${rows.length} rows keep adaptive ≤ binomial ≤ flat; one-shot calls: ${rows.filter((x) => x.oneShotOk).length} of ${rows.length}.\n`,
  );
  const summary = new Table({
    head: ['placement', 'α 1:x', 'op', 'rows', 'planned: a ≤ b', 'b ≤ f', 'both', 'one-shot: a ≤ b', 'b ≤ f', 'both', 'plan (µs, median): adaptive', 'binomial', 'flat'],
    style: { head: [], border: [] },
  });
  const median = (xs: number[]): string => {
    const v = [...xs].sort((x, y) => x - y);
    return v.length > 0 ? fmt(v[Math.floor(v.length / 2)]) : '';
  };
  for (const pl of placements) {
    for (const r of o.ratios) {
      for (const op of o.ops) {
        const mine = rows.filter((x) => x.placement === pl.name && x.ratio === r && x.op === op);
        const count = (f: (x: Row) => boolean): string => String(mine.filter(f).length);
        summary.push([
          pl.name.split(',')[0],
          String(r),
          op,
          String(mine.length),
          count((x) => le(x.runs.planned.adaptive.time, x.runs.planned.binomial.time)),
          count((x) => le(x.runs.planned.binomial.time, x.runs.planned.flat.time)),
          count((x) => x.ok),
          count((x) => le(x.runs.oneShot.adaptive.time, x.runs.oneShot.binomial.time)),
          count((x) => le(x.runs.oneShot.binomial.time, x.runs.oneShot.flat.time)),
          count((x) => x.oneShotOk),
          median(mine.map((x) => x.runs.planned.adaptive.planTime ?? 0)),
          median(mine.map((x) => x.runs.planned.binomial.planTime ?? 0)),
          median(mine.map((x) => x.runs.planned.flat.planTime ?? 0)),
        ]);
      }
    }
  }
  process.stdout.write(`${summary.toString()}\n`);
  if (failed.length > 0) {
    process.stdout.write('The planned starts break the ordering where a row says why (the benchmark exits 1).\n');
    process.exitCode = 1;
  }
  if (o.markdown !== undefined) writeFileSync(o.markdown, markdown(rows, placements, o.ratios));
  if (o.json !== undefined) {
    const out = rows.map((x) => ({
      placement: x.placement,
      ratio: x.ratio,
      op: x.op,
      dist: x.dist,
      b: x.b,
      ok: x.ok,
      oneShotOk: x.oneShotOk,
      planned: { adaptive: x.runs.planned.adaptive.time, binomial: x.runs.planned.binomial.time, flat: x.runs.planned.flat.time },
      plan: { adaptive: x.runs.planned.adaptive.planTime, binomial: x.runs.planned.binomial.planTime, flat: x.runs.planned.flat.planTime },
      oneShot: { adaptive: x.runs.oneShot.adaptive.time, binomial: x.runs.oneShot.binomial.time, flat: x.runs.oneShot.flat.time },
      flatAdaptive: x.runs.flatAdaptive.time,
    }));
    writeFileSync(o.json, `${JSON.stringify(out, null, 1)}\n`);
  }
}

/** The rows as markdown: one table per placement and model, gatherv and scatterv side by side; a planned ratio that breaks the ordering in bold. */
function markdown(rows: readonly Row[], placements: readonly Placement[], ratios: readonly number[]): string {
  const bold = (x: number, y: number): string => (le(x, y) ? ratio(x, y) : `**${ratio(x, y)}**`);
  const out: string[] = [];
  for (const pl of placements) {
    for (const r of ratios) {
      const mine = rows.filter((x) => x.placement === pl.name && x.ratio === r);
      out.push(`${pl.name}, α intra:inter = 1:${r}, µs (planned starts; a/b = adaptive/binomial, b/f = binomial/flat; 1-shot: the same ratios of the whole calls):`, '');
      out.push('| dist | b (B) | gatherv adaptive | binomial | flat | a/b | b/f | 1-shot a/b | 1-shot b/f | scatterv adaptive | binomial | flat | a/b | b/f | 1-shot a/b | 1-shot b/f |');
      out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
      const keys = [...new Set(mine.map((x) => `${x.dist}|${x.b}`))];
      for (const k of keys) {
        const [dist, b] = k.split('|');
        const cells = [dist, b];
        for (const op of ['gatherv', 'scatterv'] as const) {
          const x = mine.find((y) => y.op === op && `${y.dist}|${y.b}` === k);
          if (x === undefined) {
            cells.push('', '', '', '', '', '', '');
            continue;
          }
          const { planned: P, oneShot: O } = x.runs;
          cells.push(
            fmt(P.adaptive.time),
            fmt(P.binomial.time),
            fmt(P.flat.time),
            bold(P.adaptive.time, P.binomial.time),
            bold(P.binomial.time, P.flat.time),
            ratio(O.adaptive.time, O.binomial.time),
            ratio(O.binomial.time, O.flat.time),
          );
        }
        out.push(`| ${cells.join(' | ')} |`);
      }
      out.push('');
    }
  }
  return `${out.join('\n')}\n`;
}

await main();
