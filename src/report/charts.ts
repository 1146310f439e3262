/**
 * The charts of `vcoll report`: Vega-Lite specs built from a bench's results (src/harness/results.ts)
 * and rendered to standalone SVG strings in Node with `vega` + `vega-lite` (headless renderer,
 * no canvas, no browser). Both are optional peer dependencies, imported on the first chart
 * rendered (`loadPlotting`); without them rendering fails with an UnavailableError('vega').
 *
 * Reproduces:
 *   - Traff18 Figs. 3–10: for each irregular operation and process count p, completion time
 *     against the average block size b, one panel per block-size distribution, one line per
 *     algorithm, with the regular operation (GL1's left side, gather(m) / scatter(m)) and GL2's
 *     mock-up allreduce(1) + gather(p·max m_i) (dashed) as references. Besides the paper: the
 *     cost model's prediction per row (thin dotted line, same colour), q1–q3 bars, and red rings
 *     on the points of guideline violations (the left side of a violated GL1 / GL2 verdict).
 *     The paper plots minima over 75 repetitions; we plot medians (the verdicts' statistic).
 *   - Kang19 Figs. 4–5: intergroup allgather (settings 1–4, Algorithm 1) and allgatherv
 *     (settings 5–8, Algorithm 2) against root gathering, time against the largest block per
 *     rank, one panel per (ranks, setting);
 *   - Kang19 Fig. 6: the improvement T_old / T_new against message size, one line per
 *     setting, with Eq. (5)'s expected ratio of each setting dashed.
 *
 * Times are in the results' unit: measured seconds are shown in µs, the simulator's virtual
 * time in model units. Intergroup rows carry no unit of their own; they are taken to be in the
 * results' `timeUnit` too.
 */
import type * as Vega from 'vega';
import type * as VegaLite from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';
import { UnavailableError } from '../errors.js';
import { DISTRIBUTIONS, DISTRIBUTION_LABELS, type DistributionName } from '../workloads/distributions.js';
import type { BenchResults, BenchRow, GuidelineVerdict, InterRow, TimeUnit } from '../harness/results.js';
import type { VOperation } from '../run/spec.js';

/** One rendered chart: `svg` is a standalone `<svg>` element, safe to inline in HTML. */
export interface Chart {
  /** Unique within a report, usable as an HTML id / data attribute: 'bench-gatherv-p16', 'inter-fig6', … */
  readonly id: string;
  readonly title: string;
  readonly svg: string;
  /** Plain text (not HTML) explaining what is drawn. */
  readonly caption: string;
}

/** A chart before rendering: its Vega-Lite spec. */
export interface ChartSpec {
  readonly id: string;
  readonly title: string;
  readonly caption: string;
  readonly spec: TopLevelSpec;
}

/** The display unit of a run's times. */
export function timeUnitLabel(unit: TimeUnit): string {
  return unit === 's' ? 'µs' : 'model units';
}

/** A time in the run's unit converted to the display unit (seconds → µs). */
export function displayTime(t: number, unit: TimeUnit): number {
  return unit === 's' ? t * 1e6 : t;
}

// Colours: Tableau 10 without its red, which marks violations.
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#bab0ac', '#17becf', '#bcbd22', '#7f7f7f'];
const VIOLATION_RED = '#d00000';

const STYLE_MEASURED = 'measured (median, q1–q3)';
const STYLE_GL2 = 'GL2 mock-up (median)';
const STYLE_MODEL = 'model';
const STYLE_EXPECTED = 'Eq. (5) expected';
const VIOLATED = 'guideline violated';

const PANEL_WIDTH = 260;
const PANEL_HEIGHT = 190;

const FONT = 'Helvetica, Arial, sans-serif';

/** Shared look: paper-like, light grid, thin grey panel frames, legends on the right. */
const CONFIG = {
  font: FONT,
  view: { stroke: '#bbbbbb' },
  axis: { labelFontSize: 10, titleFontSize: 11, titleFontWeight: 'normal' as const, gridColor: '#eeeeee', labelOverlap: true },
  header: { labelFontSize: 12, labelFontWeight: 'bold' as const },
  legend: { labelFontSize: 11, titleFontSize: 11, labelLimit: 400, orient: 'right' as const, symbolSize: 260, rowPadding: 3, offset: 16 },
  line: { strokeWidth: 1.8 },
};

function uniqueInOrder<T>(xs: Iterable<T>): T[] {
  return [...new Set(xs)];
}

function sortNumbers(xs: Iterable<number>): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}

/** Distributions in the configuration's order, then the library's order for any others. */
function orderedDists(results: BenchResults, present: ReadonlySet<DistributionName>): DistributionName[] {
  const order = uniqueInOrder<DistributionName>([...results.config.dists, ...DISTRIBUTIONS]);
  return order.filter((d) => present.has(d));
}

function distLabel(d: DistributionName): string {
  return DISTRIBUTION_LABELS[d] ?? d;
}

/** What a row's line is called in the legend. */
export function seriesName(row: Pick<BenchRow, 'kind' | 'name'>): string {
  if (row.kind === 'gl2' && !/^GL2\b/.test(row.name)) return `GL2: ${row.name}`;
  return row.name;
}

function fmt3(x: number): string {
  return new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 }).format(x);
}

/** Log scales cannot show 0 or negative values. */
function positive(x: number | undefined): x is number {
  return x !== undefined && Number.isFinite(x) && x > 0;
}

/**
 * Tick values of a log axis over the values' range: the powers of ten when it spans two decades
 * or more, 1-2-5 steps over one decade or more, else evenly spaced round values (a narrow range
 * still gets a few labels).
 */
export function logTicks(values: readonly number[]): number[] {
  const v = values.filter(positive);
  if (v.length === 0) return [];
  const lo = Math.min(...v) / 1.05;
  const hi = Math.max(...v) * 1.05;
  const round = (x: number): number => Number(x.toPrecision(12));
  const series = (mantissas: readonly number[]): number[] => {
    const out: number[] = [];
    for (let k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++)
      for (const m of mantissas) {
        const t = round(m * 10 ** k);
        if (t >= lo && t <= hi) out.push(t);
      }
    return out;
  };
  const decades = Math.log10(hi / lo);
  if (decades >= 2) {
    const t = series([1]);
    if (t.length >= 3) return t;
  }
  if (decades >= 1) {
    const t = series([1, 2, 5]);
    if (t.length >= 3) return t;
  }
  // Linear round steps: about five ticks.
  const raw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) out.push(round(t));
  return out;
}

interface BenchDatum {
  dist: string;
  b: number;
  series: string;
  style: string;
  layer: 'measured' | 'model' | 'violation';
  y: number;
  lo?: number;
  hi?: number;
  /** What the point is, for its SVG `<title>` (a hover tooltip in browsers). */
  desc: string;
  /** Violations only: the legend entry of the red ring. */
  marker?: string;
}

function violationNote(v: GuidelineVerdict, unit: TimeUnit): string {
  const u = timeUnitLabel(unit);
  return (
    `${v.guideline} violated (${v.op}, ${v.algorithm}, ${v.dist}, b = ${v.b}, p = ${v.p}): ` +
    `${v.lhs} ${fmt3(displayTime(v.lhsMedian, unit))} ${u} > ${v.rhs} ${fmt3(displayTime(v.rhsMedian, unit))} ${u}, ` +
    `ratio ${fmt3(v.ratio)}, p-value ${v.pValue.toPrecision(3)} < α = ${v.alpha}`
  );
}

function benchSpec(results: BenchResults, op: VOperation, p: number): ChartSpec {
  const unit = results.timeUnit;
  const unitLabel = timeUnitLabel(unit);
  const rows = results.rows.filter((r) => r.op === op && r.p === p);
  const dists = orderedDists(results, new Set(rows.map((r) => r.dist)));
  const distLabels = dists.map(distLabel);
  const kindRank = { algorithm: 0, gl1: 1, gl2: 2 } as const;
  const series = uniqueInOrder(
    [...rows].sort((a, b) => kindRank[a.kind] - kindRank[b.kind]).map(seriesName),
  );
  const bs = sortNumbers(rows.map((r) => r.b));
  const data: BenchDatum[] = [];
  for (const r of rows) {
    const name = seriesName(r);
    const dist = distLabel(r.dist);
    const y = displayTime(r.stats.median, unit);
    const at = `${name}, ${dist}, b = ${r.b}, p = ${p}`;
    if (positive(y)) {
      const lo = displayTime(r.stats.q1, unit);
      const hi = displayTime(r.stats.q3, unit);
      const style = r.kind === 'gl2' ? STYLE_GL2 : STYLE_MEASURED;
      const desc = `${at}: median ${fmt3(y)} ${unitLabel} (q1 ${fmt3(lo)}, q3 ${fmt3(hi)}, n = ${r.stats.n})${r.verified ? '' : ', NOT VERIFIED'}`;
      const d: BenchDatum = { dist, b: r.b, series: name, style, layer: 'measured', y, desc };
      if (r.stats.n > 1 && positive(lo) && hi > lo) Object.assign(d, { lo, hi });
      data.push(d);
    }
    const pred = r.predicted === undefined ? undefined : displayTime(r.predicted, unit);
    if (positive(pred)) data.push({ dist, b: r.b, series: name, style: STYLE_MODEL, layer: 'model', y: pred, desc: `${at}: model ${fmt3(pred)} ${unitLabel}` });
  }
  // One ring per point: a gl1 row can be GL1's left side for several algorithms.
  const violations = new Map<string, BenchDatum>();
  for (const v of results.verdicts) {
    if (v.verdict !== 'violated' || v.op !== op || v.p !== p) continue;
    const y = displayTime(v.lhsMedian, unit);
    if (!positive(y)) continue;
    const key = `${v.dist}\u0000${v.b}\u0000${v.lhs}`;
    const note = violationNote(v, unit);
    const old = violations.get(key);
    if (old) old.desc = `${old.desc}\n${note}`;
    else violations.set(key, { dist: distLabel(v.dist), b: v.b, series: v.lhs, style: VIOLATED, layer: 'violation', y, desc: note, marker: VIOLATED });
  }
  data.push(...violations.values());

  const colorScale = { domain: series, range: PALETTE.slice(0, Math.max(1, series.length)) };
  const dashScale = { domain: [STYLE_MEASURED, STYLE_GL2, STYLE_MODEL], range: [[1, 0], [7, 4], [1.5, 2.5]] };
  const x = {
    field: 'b',
    type: 'quantitative' as const,
    scale: { type: 'log' as const, nice: false, padding: 12 },
    axis: { title: 'average block size b (elements)', values: bs, format: '~s', grid: true },
  };
  const y = {
    field: 'y',
    type: 'quantitative' as const,
    scale: { type: 'log' as const, nice: false, padding: 12 },
    axis: { title: `time (${unitLabel})`, format: '~s', grid: true, values: logTicks(data.flatMap((d) => [d.y, d.lo ?? d.y, d.hi ?? d.y])) },
  };
  const color = { field: 'series', type: 'nominal' as const, scale: colorScale, legend: { title: 'line', symbolType: 'stroke', symbolStrokeWidth: 2 } };
  const dash = { field: 'style', type: 'nominal' as const, scale: dashScale, legend: { title: 'kind', symbolType: 'stroke', symbolStrokeColor: '#444444', symbolStrokeWidth: 2 } };
  const description = { field: 'desc' };
  const hasViolations = violations.size > 0;
  const layers: unknown[] = [
    {
      transform: [{ filter: "datum.layer === 'measured' && isValid(datum.lo)" }],
      mark: { type: 'rule', strokeWidth: 1.2, opacity: 0.7 },
      encoding: { x, y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' }, color },
    },
    {
      transform: [{ filter: "datum.layer === 'model'" }],
      mark: { type: 'line', strokeWidth: 1.1, opacity: 0.9 },
      encoding: { x, y, color, strokeDash: dash, detail: { field: 'series' }, description },
    },
    {
      transform: [{ filter: "datum.layer === 'measured'" }],
      mark: { type: 'line', point: { filled: true, size: 30 } },
      encoding: { x, y, color, strokeDash: dash, description },
    },
  ];
  if (hasViolations) {
    layers.push({
      transform: [{ filter: "datum.layer === 'violation'" }],
      mark: { type: 'point', filled: false, size: 260, strokeWidth: 2.2, color: VIOLATION_RED, opacity: 1 },
      encoding: {
        x,
        y,
        shape: {
          field: 'marker',
          type: 'nominal',
          scale: { domain: [VIOLATED], range: ['circle'] },
          legend: { title: 'marker', symbolStrokeColor: VIOLATION_RED, symbolStrokeWidth: 2.2, symbolFillColor: 'transparent' },
        },
        description,
      },
    });
  }
  const columns = Math.min(3, Math.max(1, dists.length));
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: 'white',
    padding: 8,
    data: { values: data },
    facet: { field: 'dist', type: 'nominal', sort: distLabels, title: null },
    columns,
    spec: { width: PANEL_WIDTH, height: PANEL_HEIGHT, layer: layers },
    resolve: { scale: { x: 'shared', y: 'shared' } },
    config: CONFIG,
  } as unknown as TopLevelSpec;

  const refs: string[] = [];
  if (rows.some((r) => r.kind === 'gl1')) refs.push('the regular operation of the largest block (GL1\'s left side on "same" blocks)');
  if (rows.some((r) => r.kind === 'gl2')) refs.push('GL2\'s mock-up allreduce(1) + regular operation of p·max m_i (dashed)');
  const caption =
    `${op}, p = ${p}, ${results.config.transport}: median completion time (${unitLabel}) of ${results.config.reps} repetitions against the average block size b, ` +
    `one panel per block-size distribution, one line per algorithm; bars span the quartiles q1–q3. ` +
    (refs.length > 0 ? `References: ${refs.join('; ')}. ` : '') +
    (data.some((d) => d.layer === 'model')
      ? "Thin dotted lines: the cost model's prediction for the line of the same colour — of the data phase alone for an algorithm with a construction or schedule phase, unless the run was persistent (then the data phase is all that was timed). "
      : '') +
    (hasViolations ? 'Red rings: the slower (left) side of a violated guideline, GL1 on the regular operation\'s point, GL2 on the algorithm\'s. ' : 'No guideline was violated. ') +
    'Both axes logarithmic; as Traff18 Figs. 3–10, which plot minima of 75 repetitions.';
  return { id: `bench-${op}-p${p}`, title: `${op}, p = ${p}: time against block size b`, caption, spec };
}

const BYTES_LABEL =
  "datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB' : datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB' : format(datum.value, '~g') + ' B'";

/** The x encoding of the intergroup charts: the largest block per rank, log scale, labelled in bytes. */
function sizeAxis(rows: readonly InterRow[]): Record<string, unknown> {
  return {
    field: 'size',
    type: 'quantitative',
    scale: { type: 'log', nice: false, padding: 12 },
    axis: { title: 'largest block per rank (bytes)', values: sortNumbers(rows.map((r) => r.size)), labelExpr: BYTES_LABEL, grid: true },
  };
}

/** The top of a faceted intergroup chart: its data, one panel per `panel` value, three columns at most. */
function facetHead(data: readonly object[], panels: readonly string[]): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: 'white',
    padding: 8,
    data: { values: data },
    facet: { field: 'panel', type: 'nominal', sort: panels, title: null },
    columns: Math.min(3, panels.length),
  };
}

function interPanel(r: InterRow): string {
  return `${r.ranks} processes (setting ${r.setting})`;
}

function interTimeSpec(results: BenchResults, rows: readonly InterRow[], which: 4 | 5): ChartSpec {
  const unit = results.timeUnit;
  const unitLabel = timeUnitLabel(unit);
  const newName = which === 4 ? 'Algorithm 1' : 'Algorithm 2';
  const sorted = [...rows].sort((a, b) => a.ranks - b.ranks || a.setting - b.setting || a.size - b.size);
  const panels = uniqueInOrder(sorted.map(interPanel));
  const data: { panel: string; size: number; series: string; y: number; desc: string }[] = [];
  for (const r of sorted) {
    const panel = interPanel(r);
    const old = displayTime(r.rootGathering, unit);
    const neu = displayTime(r.algorithm, unit);
    const at = `${panel}, p = ${r.p}, q = ${r.q}, ${r.size} bytes`;
    const ok = r.verified ? '' : ', NOT VERIFIED';
    if (positive(old)) data.push({ panel, size: r.size, series: 'Root gathering', y: old, desc: `Root gathering, ${at}: ${fmt3(old)} ${unitLabel}${ok}` });
    if (positive(neu)) data.push({ panel, size: r.size, series: newName, y: neu, desc: `${newName}, ${at}: ${fmt3(neu)} ${unitLabel}${ok}` });
  }
  const settings = sortNumbers(rows.map((r) => r.setting));
  const spec = {
    ...facetHead(data, panels),
    spec: {
      width: PANEL_WIDTH,
      height: PANEL_HEIGHT,
      mark: { type: 'line', point: { filled: true, size: 30 } },
      encoding: {
        x: sizeAxis(rows),
        y: {
          field: 'y',
          type: 'quantitative',
          scale: { type: 'log', nice: false, padding: 12 },
          axis: { title: `time (${unitLabel})`, format: '~s', grid: true, values: logTicks(data.map((d) => d.y)) },
        },
        color: {
          field: 'series',
          type: 'nominal',
          scale: { domain: ['Root gathering', newName], range: [PALETTE[1], PALETTE[0]] },
          legend: { title: null, symbolType: 'stroke', symbolStrokeWidth: 2 },
        },
        description: { field: 'desc' },
      },
    },
    resolve: { scale: { y: 'independent' } },
    config: CONFIG,
  } as unknown as TopLevelSpec;
  const what = which === 4 ? 'allgather, settings 1–4' : 'allgatherv, settings 5–8';
  const caption =
    `Intergroup ${what}: time (${unitLabel}; each algorithm's minimum over the repetitions of the slowest rank) against the largest block per rank, ` +
    `root gathering against the paper's ${newName}, one panel per number of processes and setting (${settings.join(', ')}). ` +
    `Both axes logarithmic; as Kang19 Fig. ${which}.`;
  return { id: `inter-fig${which}`, title: `Intergroup ${what}: time against message size`, caption, spec };
}

function interRatioSpec(rows: readonly InterRow[]): ChartSpec {
  const sorted = [...rows].sort((a, b) => a.ranks - b.ranks || a.setting - b.setting || a.size - b.size);
  const settings = sortNumbers(rows.map((r) => r.setting));
  const names = settings.map((s) => `setting ${s}`);
  const panels = uniqueInOrder(sorted.map((r) => `${r.ranks} processes`));
  const measured = 'measured T_old / T_new';
  const data: { panel: string; size: number; series: string; style: string; y: number; desc: string }[] = [];
  for (const r of sorted) {
    const panel = `${r.ranks} processes`;
    const series = `setting ${r.setting}`;
    const at = `${series}, ${panel}, ${r.size} bytes`;
    if (Number.isFinite(r.ratio)) data.push({ panel, size: r.size, series, style: measured, y: r.ratio, desc: `${at}: T_old / T_new = ${fmt3(r.ratio)}` });
    if (Number.isFinite(r.expected)) data.push({ panel, size: r.size, series, style: STYLE_EXPECTED, y: r.expected, desc: `${at}: Eq. (5) expects ${fmt3(r.expected)}` });
  }
  const color = { field: 'series', type: 'nominal', sort: names, scale: { domain: names, range: PALETTE.slice(0, names.length) }, legend: { title: 'setting', symbolType: 'stroke', symbolStrokeWidth: 2 } };
  const dash = { field: 'style', type: 'nominal', scale: { domain: [measured, STYLE_EXPECTED], range: [[1, 0], [6, 4]] }, legend: { title: 'line', symbolType: 'stroke', symbolStrokeColor: '#444444', symbolStrokeWidth: 2 } };
  const x = sizeAxis(rows);
  const y = { field: 'y', type: 'quantitative', scale: { zero: false }, axis: { title: 'improvement T_old / T_new', grid: true } };
  const spec = {
    ...facetHead(data, panels),
    spec: {
      width: PANEL_WIDTH,
      height: PANEL_HEIGHT,
      layer: [
        { mark: { type: 'rule', color: '#999999', strokeWidth: 1 }, encoding: { y: { datum: 1, type: 'quantitative' } } },
        {
          transform: [{ filter: `datum.style === '${STYLE_EXPECTED}'` }],
          mark: { type: 'line', strokeWidth: 1.3 },
          encoding: { x, y, color, strokeDash: dash, detail: { field: 'series' } },
        },
        {
          transform: [{ filter: `datum.style === '${measured}'` }],
          mark: { type: 'line', point: { filled: true, size: 30 } },
          encoding: {
            x,
            y,
            color,
            strokeDash: dash,
            description: { field: 'desc' },
          },
        },
      ],
    },
    resolve: { scale: { y: 'independent' } },
    config: CONFIG,
  } as unknown as TopLevelSpec;
  const caption =
    `Improvement of the new algorithms (Algorithm 1 for allgather, settings 1–4; Algorithm 2 for allgatherv, 5–8) over root gathering, ` +
    `T_old / T_new against the largest block per rank, one line per setting (${settings.join(', ')}), one panel per number of processes; ` +
    `dashed in the same colour: Eq. (5)'s expected ratio (M + 3ΣA + 3ΣB) / M for the setting's blocks; grey rule: no improvement. As Kang19 Fig. 6.`;
  return { id: 'inter-fig6', title: 'Intergroup allgather(v): improvement T_old / T_new against message size', caption, spec };
}

/** The specs of every chart of a report, in display order (no rendering). */
export function chartSpecs(results: BenchResults): ChartSpec[] {
  const out: ChartSpec[] = [];
  const ops = uniqueInOrder<VOperation>([...results.config.ops, ...results.rows.map((r) => r.op)]);
  for (const op of ops) {
    const ps = sortNumbers(results.rows.filter((r) => r.op === op).map((r) => r.p));
    for (const p of ps) out.push(benchSpec(results, op, p));
  }
  if (results.inter.length > 0) {
    const gather = results.inter.filter((r) => r.setting <= 4);
    const gatherv = results.inter.filter((r) => r.setting >= 5);
    if (gather.length > 0) out.push(interTimeSpec(results, gather, 4));
    if (gatherv.length > 0) out.push(interTimeSpec(results, gatherv, 5));
    out.push(interRatioSpec(results.inter));
  }
  return out;
}

export interface RenderOptions {
  /** Vega-Lite's and Vega's warnings (default: dropped, so a CLI's output stays clean). */
  readonly onWarning?: (message: string) => void;
}

/** The plotting libraries: optional peer dependencies of vcoll, loaded on the first chart. */
export interface Plotting {
  readonly vega: typeof Vega;
  readonly vl: typeof VegaLite;
}

/** How to get the plotting libraries, for the error that says they are missing. */
export const PLOTTING_HINT = 'npm install vega vega-lite';

/**
 * The error for a failed import of the plotting libraries: an UnavailableError('vega') saying
 * how to install them when a module was not found (vega and vega-lite are optional peer
 * dependencies: a project that never renders a report does not install them); else `e` itself.
 */
export function plottingImportError(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return e;
  const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
  return new UnavailableError(
    'vega',
    `the report's charts need the packages vega and vega-lite, which are not installed (${why}): run \`${PLOTTING_HINT}\``,
    { cause: e },
  );
}

let plotting: Promise<Plotting> | undefined;

/**
 * vega and vega-lite, imported on first use (never at vcoll's import): rejects with an
 * UnavailableError('vega') naming `npm install vega vega-lite` when they are not installed.
 */
export function loadPlotting(): Promise<Plotting> {
  plotting ??= Promise.all([import('vega'), import('vega-lite')]).then(
    ([vega, vl]) => ({ vega, vl }),
    (e: unknown) => {
      plotting = undefined; // installed later in the same process: try again
      throw plottingImportError(e);
    },
  );
  return plotting;
}

function quietLogger(vega: typeof Vega, onWarning: ((message: string) => void) | undefined): ReturnType<typeof Vega.logger> {
  return vega.logger(vega.Warn, undefined, (method, _level, input) => {
    const message = input.map((x) => (x instanceof Error ? x.message : String(x))).join(' ');
    if (method === 'error') throw new Error(`vega: ${message}`);
    if (method === 'warn') onWarning?.(message);
  });
}

/** Render one Vega-Lite spec to an SVG string; `idPrefix` keeps its element ids unique in a page. */
export async function renderSvg(spec: TopLevelSpec, idPrefix: string, options: RenderOptions = {}): Promise<string> {
  const { vega, vl } = await loadPlotting();
  const logger = quietLogger(vega, options.onWarning);
  const compiled = vl.compile(spec, { logger }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logger });
  try {
    const svg = await view.toSVG();
    return postProcessSvg(svg, idPrefix);
  } finally {
    view.finalize();
  }
}

/**
 * Make a standalone SVG fit for inlining next to others: prefix its ids (clip paths, gradients)
 * so that charts do not capture each other's, and turn the descriptions Vega writes as
 * aria-label on symbols (points, violation rings) into `<title>` children, which browsers show
 * as tooltips without any script.
 */
export function postProcessSvg(svg: string, idPrefix: string): string {
  const safe = idPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
  let out = svg
    .replace(/\sid="([^"]+)"/g, (_m, id: string) => ` id="${safe}-${id}"`)
    .replace(/url\(#([^)]+)\)/g, (_m, id: string) => `url(#${safe}-${id})`);
  out = out.replace(/<path([^>]*?)\saria-label="([^"]*)"([^>]*?)\/>/g, (m, before: string, label: string, after: string) =>
    /aria-roledescription="point"/.test(before + after) ? `<path${before} aria-label="${label}"${after}><title>${label}</title></path>` : m,
  );
  return out;
}

/** Every chart of a report rendered to SVG, in display order. */
export async function renderCharts(results: BenchResults, options: RenderOptions = {}): Promise<Chart[]> {
  const specs = chartSpecs(results);
  const out: Chart[] = [];
  for (const s of specs) out.push({ id: s.id, title: s.title, caption: s.caption, svg: await renderSvg(s.spec, s.id, options) });
  return out;
}
