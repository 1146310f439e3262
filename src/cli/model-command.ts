/** `vcoll model`: the Traff17 Table 1 comparison for any p, b, α, β, γ and distributions. */
import Table from 'cli-table3';
import cliProgress from 'cli-progress';
import { DISTRIBUTIONS, DISTRIBUTION_LABELS, blockSizes, parseDistribution, type DistributionName } from '../workloads/distributions.js';
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import { linearModel } from '../model/cost-model.js';
import { checkTreeWork } from '../util/limits.js';
import { treeLimit } from '../trees/registry.js';
import { COMPARED_ALGORITHMS, compareTrees, type ComparedAlgorithm, type ComparisonRow, type RootSelection } from '../trees/compare.js';
import type { OptimalMode } from '../trees/optimal/homogeneous.js';

export interface ModelCommandOptions {
  p: number;
  b: number;
  alpha: number;
  beta: number;
  gamma: number;
  rho: number;
  seed: number;
  dist: string;
  root: RootSelection;
  fixedRoot?: number;
  algorithms: ComparedAlgorithm[];
  optimalMode: OptimalMode;
  format: 'table' | 'csv' | 'json';
  progress?: boolean;
}

/** One row of the JSON/CSV output (the contract scripts rely on). */
export interface ModelRow {
  distribution: DistributionName;
  algorithm: ComparedAlgorithm;
  root: 'fixed' | 'best';
  rootRank: number;
  time: number;
  size: number;
}

/** A comma list of distributions, or "all"; an empty list is an InvalidArgumentError naming `field`. */
export function parseDistributionList(list: string, field = '--dist'): DistributionName[] {
  if (list.trim() === 'all') return [...DISTRIBUTIONS];
  const dists = list
    .split(',')
    .filter((s) => s.trim() !== '')
    .map((s) => parseDistribution(s, field));
  if (dists.length === 0) throw new InvalidArgumentError(field, `must name at least one distribution (or "all"), got "${list}"`);
  return dists;
}

/**
 * The trees' p limits (their dynamic programs' tables) and the memory and time of building them
 * all, checked before any block size is drawn: TooLargeError('--p').
 */
export function checkModelResources(opts: ModelCommandOptions, dists: number): void {
  const model = linearModel({ alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma });
  const names = opts.algorithms.map((a) => (a === 'optimal' && opts.optimalMode === 'paper' ? 'optimal-paper' : a));
  for (const name of names) {
    const limit = treeLimit(name, model);
    if (limit !== undefined && opts.p > limit) throw new TooLargeError('--p', `${opts.p} > ${limit}, the largest p of the '${name}' tree`);
  }
  checkTreeWork('--p', opts.p, names, dists);
}

export interface ModelResult {
  rows: ModelRow[];
  /** Per distribution, the comparison rows with their extra information (optimal alternative). */
  details: { distribution: DistributionName; size: number; rows: ComparisonRow[] }[];
}

export function runModel(opts: ModelCommandOptions, out: NodeJS.WritableStream = process.stdout): ModelResult {
  const dists = parseDistributionList(opts.dist);
  checkModelResources(opts, dists.length);
  const model = linearModel({ alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma });
  const showProgress = opts.progress ?? Boolean(process.stderr.isTTY);
  const bar = showProgress
    ? new cliProgress.SingleBar(
        {
          format: '{label} [{bar}] {percentage}%',
          stream: process.stderr,
          clearOnComplete: true,
          hideCursor: true,
          // --progress on a pipe: print a line every second instead of redrawing.
          noTTYOutput: opts.progress === true,
          notTTYSchedule: 1000,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const details: ModelResult['details'] = [];
  const rows: ModelRow[] = [];
  try {
    for (const distribution of dists) {
      const sizes = blockSizes(distribution, { p: opts.p, b: opts.b, rho: opts.rho, seed: opts.seed });
      const size = sizes.reduce((a, x) => a + x, 0);
      let current = '';
      const cmp = compareTrees(sizes, model, {
        roots: opts.root,
        fixedRoot: opts.fixedRoot,
        algorithms: opts.algorithms,
        optimalMode: opts.optimalMode,
        onProgress: bar
          ? ({ algorithm, root, done, total }) => {
              const label = `${distribution} ${algorithm} (${root} root)`;
              if (label !== current) {
                current = label;
                bar.start(total, done, { label });
              } else {
                bar.update(done);
              }
            }
          : undefined,
      });
      details.push({ distribution, size, rows: cmp });
      for (const r of cmp) rows.push({ distribution, algorithm: r.algorithm, root: r.root, rootRank: r.rootRank, time: r.time, size });
    }
  } finally {
    bar?.stop();
  }
  out.write(formatModel(opts, { rows, details }));
  return { rows, details };
}

export function formatModel(opts: ModelCommandOptions, result: ModelResult): string {
  if (opts.format === 'json') return JSON.stringify(result.rows, null, 2) + '\n';
  if (opts.format === 'csv') {
    const lines = ['distribution,algorithm,root,rootRank,time,size'];
    for (const r of result.rows) lines.push([r.distribution, r.algorithm, r.root, r.rootRank, r.time, r.size].join(','));
    return lines.join('\n') + '\n';
  }
  const algs = COMPARED_ALGORITHMS.filter((a) => opts.algorithms.includes(a));
  const fixedRoot = opts.fixedRoot ?? Math.floor(opts.p / 2);
  const head = ['Distribution', 'Root', 'm', ...algs.map((a) => a[0].toUpperCase() + a.slice(1))];
  const table = new Table({
    head,
    style: { head: [], border: [] },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
  const notes: string[] = [];
  for (const d of result.details) {
    for (const kind of ['fixed', 'best'] as const) {
      const rs = d.rows.filter((r) => r.root === kind);
      if (rs.length === 0) continue;
      const cells = algs.map((a) => {
        const r = rs.find((x) => x.algorithm === a);
        if (!r) return '';
        if (r.alternative) {
          notes.push(
            `${DISTRIBUTION_LABELS[d.distribution]}, ${kind} root: optimal (${opts.optimalMode}) ${r.time} (${r.rootRank}); ` +
              `${r.alternative.mode} mode ${r.alternative.time} (${r.alternative.rootRank})`,
          );
        }
        return kind === 'best' ? `${r.time} (${r.rootRank})` : String(r.time);
      });
      table.push([kind === 'fixed' || opts.root === 'best' ? DISTRIBUTION_LABELS[d.distribution] : '', kind === 'fixed' ? `fixed ${fixedRoot}` : 'best', String(d.size), ...cells]);
    }
  }
  const title =
    `Completion times in the linear model (Traff17 Table 1 layout): p=${opts.p} b=${opts.b} ` +
    `α=${opts.alpha} β=${opts.beta} γ=${opts.gamma} ρ=${opts.rho}; best roots in brackets; optimal = ${opts.optimalMode} DP\n`;
  const foot = notes.length ? `\nWhere the two optimal conventions differ (exact = true optimum, paper = Traff17's tables):\n  ${notes.join('\n  ')}\n` : '';
  return title + table.toString() + '\n' + foot;
}
