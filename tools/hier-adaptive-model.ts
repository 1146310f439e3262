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
 * Prints one table per (placement, model, op): the times of hierarchical adaptive,
 * hierarchical binomial and flat (binomial gatherv/scatterv, as `--hier-variant flat`), the
 * ratios adaptive/binomial and binomial/flat (≤ 1: the ordering holds), the adaptive trees'
 * data phase alone (the prediction: their tree without the construction) and Traff18's flat
 * adaptive gatherv/scatterv for reference. A row where `adaptive ≤ binomial ≤ flat` fails says
 * why (the constructions cost more than the adaptive trees' data phase gains; the adaptive trees
 * move the data slower; the flat tree beats the two-level binomial one); a summary per
 * placement, model and op counts the rows; exit 1 if any row fails.
 *
 *   npm run bench:hier-adaptive [-- --b 16,1024,32768 --ops gatherv,scatterv --ratios 10,100
 *                                  --dists same,random --placements 36x16,11-unequal --seed 1 --json out.json]
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

interface Runs {
  readonly adaptive: RunReport;
  readonly binomial: RunReport;
  readonly flat: RunReport;
  readonly flatAdaptive: RunReport;
}

interface Row {
  readonly placement: string;
  readonly ratio: number;
  readonly op: Op;
  readonly dist: DistributionName;
  readonly b: number;
  readonly runs: Runs;
  readonly ok: boolean;
}

/** One run: the irregular collective whatever the distribution ('same' included: gatherv/scatterv with equal counts). */
async function run(spec: HierarchicalModelSpec, op: Op, dist: DistributionName, b: number, variant: HierarchicalVariantName, tree: HierarchicalTreeName, seed: number): Promise<RunReport> {
  const p = spec.nodeOf.length;
  const hc = hierarchicalCase({ p, op: op as VOperation, dist, b, rho: CASE_DEFAULTS.rho, seed, root: 0, unitBytes: 1, reps: 1, warmup: 0, variant, tree, modelSpec: spec });
  const collective: HierarchicalCollective = op;
  const irregular: HierarchicalRunCase = { ...hc, rankCase: { ...hc.rankCase, collective } };
  const r = await runHierarchicalCase('sim', p, irregular);
  if (!r.verified) throw new Error(`${op} ${variant} ${tree} ${dist} b=${b}: not verified: ${r.mismatches.join('; ')}`);
  return r;
}

/** x ≤ y up to rounding (the simulator and the evaluator add the same terms, not always in the same order). */
const le = (x: number, y: number): boolean => x <= y + 1e-9 * Math.max(1, Math.abs(y));

const fmt = (x: number): string => (x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x.toFixed(2));

/** Why a row breaks adaptive ≤ binomial ≤ flat ('' when it does not). */
function why(r: Runs): string {
  const out: string[] = [];
  const a = r.adaptive;
  if (!le(a.time, r.binomial.time)) {
    const construction = a.time - a.predicted;
    const gain = r.binomial.time - a.predicted;
    out.push(gain >= -1e-9 * a.time ? `construction ${fmt(construction)} > gain ${fmt(Math.max(0, gain))}` : `slower data (${fmt(-gain)})`);
  }
  if (!le(r.binomial.time, r.flat.time)) out.push('binomial > flat');
  return out.join('; ');
}

async function main(): Promise<void> {
  const program = new Command()
    .name('bench:hier-adaptive')
    .option('--b <list>', 'mean block sizes (bytes)', parseIntegerListOption('b', 1), [16, 1024, 32768])
    .option('--ops <list>', 'gatherv,scatterv', (v: string) => v.split(',') as Op[], ['gatherv', 'scatterv'] as Op[])
    .option('--ratios <list>', 'inter-node α / intra-node α', parseIntegerListOption('ratios', 1), [10, 100])
    .option('--dists <list>', 'distributions (default: Traff18\'s)', (v: string) => v.split(',') as DistributionName[], [...SEED000_DISTRIBUTIONS])
    .option('--placements <list>', '36x16 (ordered) and/or 11-unequal (permuted)', (v: string) => v.split(','), ['36x16', '11-unequal'])
    .option('--seed <n>', 'distributions and placement seed', parseIntegerOption('seed', 0), 1)
    .option('--json <file>', 'also write every row as JSON');
  program.parse(process.argv);
  const o = program.opts<{ b: number[]; ops: Op[]; ratios: number[]; dists: DistributionName[]; placements: string[]; seed: number; json?: string }>();
  const placements = o.placements.map((name) => {
    if (name === '36x16') return ordered(36, 16);
    if (name === '11-unequal') return unequalPermuted(11, 16, o.seed);
    throw new Error(`--placements: unknown '${name}' (36x16, 11-unequal)`);
  });
  process.stdout.write(
    'Hierarchical gatherv/scatterv: adaptive levels (Traff18) vs binomial levels (TraffRougier14) vs flat binomial, on the simulator (exact model times, µs), root 0, zero-copy root.\n' +
      `Machine: intra α = ${TRAFF_ROUGIER14_MACHINE.intra.alpha} µs, β = 1/4000 µs/B; inter β = 1/3200 µs/B, α = ratio × intra α; γ = 1/5000 µs/B; one-ported.\n` +
      'ratios ≤ 1: the ordering adaptive ≤ binomial ≤ flat holds. "adaptive data" = the adaptive trees\' data phase alone (no construction).\n',
  );
  const rows: Row[] = [];
  for (const pl of placements) {
    for (const ratio of o.ratios) {
      const spec = machine(pl.nodeOf, ratio);
      for (const op of o.ops) {
        const table = new Table({
          head: ['dist', 'b (B)', 'adaptive', 'binomial', 'flat', 'adaptive/binomial', 'binomial/flat', 'adaptive data', 'flat adaptive', 'fails: why'],
          style: { head: [], border: [] },
        });
        for (const dist of o.dists) {
          for (const b of o.b) {
            process.stderr.write(`${pl.name} 1:${ratio} ${op} ${dist} b=${b}        \r`);
            const runs: Runs = {
              adaptive: await run(spec, op, dist, b, 'zero-copy', 'adaptive', o.seed),
              binomial: await run(spec, op, dist, b, 'zero-copy', 'binomial', o.seed),
              flat: await run(spec, op, dist, b, 'flat', 'binomial', o.seed),
              flatAdaptive: await run(spec, op, dist, b, 'flat', 'adaptive', o.seed),
            };
            const a = runs.adaptive.time;
            const bi = runs.binomial.time;
            const f = runs.flat.time;
            const ok = le(a, bi) && le(bi, f);
            rows.push({ placement: pl.name, ratio, op, dist, b, runs, ok });
            table.push([dist, String(b), fmt(a), fmt(bi), fmt(f), (a / bi).toFixed(2), (bi / f).toFixed(2), fmt(runs.adaptive.predicted), fmt(runs.flatAdaptive.time), why(runs)]);
          }
        }
        process.stderr.write(' '.repeat(70) + '\r');
        process.stdout.write(`\n${pl.name}, α intra:inter = 1:${ratio}, ${op}\n${table.toString()}\n`);
      }
    }
  }
  const failed = rows.filter((r) => !r.ok);
  process.stdout.write(`\n${rows.length - failed.length} of ${rows.length} rows keep adaptive ≤ binomial ≤ flat.\n`);
  const summary = new Table({
    head: ['placement', 'α 1:x', 'op', 'rows', 'adaptive ≤ binomial', 'binomial ≤ flat', 'both', 'adaptive data ≤ binomial', 'adaptive ≤ flat', 'construction (µs, median)'],
    style: { head: [], border: [] },
  });
  for (const pl of placements) {
    for (const ratio of o.ratios) {
      for (const op of o.ops) {
        const mine = rows.filter((r) => r.placement === pl.name && r.ratio === ratio && r.op === op);
        const count = (f: (r: Row) => boolean): string => String(mine.filter(f).length);
        const construction = mine.map((r) => r.runs.adaptive.time - r.runs.adaptive.predicted).sort((x, y) => x - y);
        summary.push([
          pl.name.split(',')[0],
          String(ratio),
          op,
          String(mine.length),
          count((r) => le(r.runs.adaptive.time, r.runs.binomial.time)),
          count((r) => le(r.runs.binomial.time, r.runs.flat.time)),
          count((r) => r.ok),
          count((r) => le(r.runs.adaptive.predicted, r.runs.binomial.time)),
          count((r) => le(r.runs.adaptive.time, r.runs.flat.time)),
          construction.length > 0 ? fmt(construction[Math.floor(construction.length / 2)]) : '',
        ]);
      }
    }
  }
  process.stdout.write(`${summary.toString()}\n`);
  if (failed.length > 0) {
    process.stdout.write(
      'The ordering fails where a row says why: "construction" — the adaptive trees\' data phase beats binomial\'s, by less than the two constructions cost ' +
        '(construction = adaptive − its data phase); "slower data" — the adaptive trees move the data slower than the binomial ones; "binomial > flat" — the flat tree beats the two-level binomial one.\n',
    );
    process.exitCode = 1;
  }
  if (o.json !== undefined) {
    const out = rows.map((r) => ({
      placement: r.placement,
      ratio: r.ratio,
      op: r.op,
      dist: r.dist,
      b: r.b,
      ok: r.ok,
      adaptive: r.runs.adaptive.time,
      adaptiveData: r.runs.adaptive.predicted,
      binomial: r.runs.binomial.time,
      flat: r.runs.flat.time,
      flatAdaptive: r.runs.flatAdaptive.time,
    }));
    writeFileSync(o.json, `${JSON.stringify(out, null, 1)}\n`);
  }
}

await main();
