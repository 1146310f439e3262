/**
 * The HTML report of a bench (`vcoll report`): one self-contained page, with inline CSS and
 * inline SVG charts (src/report/charts.ts), no scripts and no external resources, so it can
 * be mailed, archived or opened offline.
 *
 * Contents: the run's configuration and environment, the calibrated model (when fitted), the
 * guideline verdicts of Traff18 §4 (GL1, GL2: violated / total per guideline and operation,
 * and a table of the violations), whether every row was verified, then the charts reproducing
 * Traff18 Figs. 3–10 (time against block size per distribution) and, when the run had
 * intergroup cases, Kang19 Figs. 4–6 (intergroup allgather(v) times and improvement ratios).
 */
import type { BenchResults, GuidelineVerdict, TimeUnit } from '../harness/results.js';
import { DISTRIBUTION_LABELS } from '../workloads/distributions.js';
import { displayTime, renderCharts, timeUnitLabel, type Chart } from './charts.js';

/** Escape text for HTML element content and double-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

const sig3 = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });

/** A number with 3 significant digits ('12.3', '1,230', '0.00123'). */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  return sig3.format(x);
}

/** A time of the run (its unit) with its display unit: '12.3 µs' or '12.3 model units'. */
export function formatTime(t: number, unit: TimeUnit): string {
  return `${formatNumber(displayTime(t, unit))} ${timeUnitLabel(unit)}`;
}

function formatPValue(p: number): string {
  if (p === 0) return '0';
  return p < 1e-3 ? p.toExponential(2) : p.toPrecision(3);
}

function list(xs: readonly (string | number)[]): string {
  return xs.length === 0 ? '—' : xs.join(', ');
}

/** A two-column key/value table; values are plain text. */
function kvTable(entries: readonly [string, string][], cls = 'kv'): string {
  const body = entries.map(([k, v]) => `<tr><th scope="row">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('\n');
  return `<table class="${cls}"><tbody>\n${body}\n</tbody></table>`;
}

/** A table with a header row; cells are plain text, or `{ html }` for pre-escaped content. */
function table(head: readonly string[], rows: readonly (readonly (string | { html: string })[])[], cls: string): string {
  const th = head.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const tr = rows.map((r) => `<tr>${r.map((c) => `<td>${typeof c === 'string' ? escapeHtml(c) : c.html}</td>`).join('')}</tr>`).join('\n');
  return `<table class="${cls}"><thead><tr>${th}</tr></thead><tbody>\n${tr}\n</tbody></table>`;
}

function configSection(r: BenchResults): string {
  const c = r.config;
  const entries: [string, string][] = [
    ['created', r.created],
    ['run time', `${formatNumber(r.seconds)} s`],
    ['transport', c.transport],
    ['operations', list(c.ops)],
    ['algorithms', list(c.algorithms)],
    ['distributions', list(c.dists)],
    ['block sizes b', list(c.bs)],
    ['processes p', list(c.ps)],
    ['repetitions (warm-up)', `${c.reps} (${c.warmup})`],
    ['root', String(c.root)],
    ['bytes per element', String(c.unitBytes)],
    ['ρ', String(c.rho)],
    ['seed', String(c.seed)],
    ['model α, β, γ', `${c.model.alpha}, ${c.model.beta}, ${c.model.gamma}`],
    ['calibrate', c.calibrate ? 'yes' : 'no'],
    ['persistent', c.persistent ? 'yes (data phase only)' : 'no'],
    ['guideline references', c.references],
    ['significance level α', String(c.alpha)],
    ['time unit', r.timeUnit === 's' ? 'seconds (shown in µs)' : 'model units'],
  ];
  if (c.interSettings.length > 0) {
    entries.push(['intergroup settings', list(c.interSettings)]);
    entries.push(['intergroup sizes (bytes)', list(c.interSizes)]);
    entries.push(['intergroup ranks p + q', list(c.interRanks)]);
  }
  const e = r.environment;
  const env: [string, string][] = [
    ['node', e.node],
    ['platform', e.platform],
    ['host', e.host],
    ['cpus', String(e.cpus)],
  ];
  if (e.library !== undefined) env.push(['MPI library', e.library]);
  let out = `<section id="configuration"><h2>Configuration</h2>\n<div class="cols"><div><h3>Run</h3>\n${kvTable(entries)}</div>\n<div><h3>Environment</h3>\n${kvTable(env)}`;
  const fitted = r.calibrations ?? (r.calibration ? [{ ...r.calibration, p: r.config.ps[0] }] : []);
  if (fitted.length > 0) {
    out += `\n<h3>Calibration</h3>\n<p class="note">The model fitted to the transport, per element of ${escapeHtml(String(c.unitBytes))} bytes.</p>\n`;
    for (const k of fitted) {
      out += kvTable([
        ...(fitted.length > 1 ? ([['p', String(k.p)]] as [string, string][]) : []),
        ['α (latency)', `${formatNumber(k.alpha)} ${k.unit}`],
        ['β (per element)', `${formatNumber(k.beta)} ${k.unit}`],
        ['γ (per element copied)', `${formatNumber(k.gamma)} ${k.unit}`],
      ]);
    }
  }
  return `${out}</div></div></section>`;
}

function verdictSummary(r: BenchResults): string {
  const vs = r.verdicts;
  if (vs.length === 0) {
    const why = r.config.references === 'none' ? 'the run had no guideline references (references: none)' : 'no verdicts were recorded';
    return `<section id="guidelines"><h2>Guidelines</h2>\n<p>No guideline verdicts: ${escapeHtml(why)}.</p></section>`;
  }
  const groups = new Map<string, { guideline: string; op: string; total: number; violated: number }>();
  for (const v of vs) {
    const key = `${v.guideline}\u0000${v.op}`;
    const g = groups.get(key) ?? { guideline: v.guideline, op: v.op, total: 0, violated: 0 };
    g.total++;
    if (v.verdict === 'violated') g.violated++;
    groups.set(key, g);
  }
  const sorted = [...groups.values()].sort((a, b) => a.guideline.localeCompare(b.guideline) || a.op.localeCompare(b.op));
  const summary = table(
    ['guideline', 'operation', 'violated / total'],
    sorted.map((g) => [g.guideline, g.op, { html: `<span class="${g.violated > 0 ? 'bad' : 'good'}">${g.violated} / ${g.total}</span>` }]),
    'summary',
  );
  const violated = vs.filter((v) => v.verdict === 'violated');
  const alphas = [...new Set(vs.map((v) => v.alpha))];
  const explain =
    '<p class="note">A guideline is violated when a one-sided Wilcoxon rank-sum test finds its left side significantly slower than its right side ' +
    `(level α = ${escapeHtml(alphas.join(', '))}). GL1: the regular operation ≤ the irregular one on "same" blocks; ` +
    'GL2: the irregular operation ≤ allreduce(1) + the regular operation of p·max m<sub>i</sub> (Traff18 §4).</p>';
  const unit = timeUnitLabel(r.timeUnit);
  const side = (name: string, t: number): { html: string } => ({
    html: `${escapeHtml(formatNumber(displayTime(t, r.timeUnit)))}<br><span class="side">${escapeHtml(name)}</span>`,
  });
  const rows = violated.map((v: GuidelineVerdict) => [
    v.guideline,
    v.op,
    v.algorithm,
    DISTRIBUTION_LABELS[v.dist] ?? v.dist,
    String(v.b),
    String(v.p),
    side(v.lhs, v.lhsMedian),
    side(v.rhs, v.rhsMedian),
    formatNumber(v.ratio),
    formatPValue(v.pValue),
  ]);
  const violations =
    violated.length === 0
      ? '<p class="good" id="no-violations">No guideline was violated.</p>'
      : `<h3>Violations</h3>\n${table(
          ['guideline', 'op', 'algorithm', 'dist', 'b', 'p', `lhs median (${unit})`, `rhs median (${unit})`, 'ratio', 'p-value'],
          rows,
          'violations',
        )}`;
  return `<section id="guidelines"><h2>Guidelines</h2>\n${explain}\n${summary}\n${violations}</section>`;
}

function verificationSection(r: BenchResults): string {
  const failures: string[] = [];
  for (const row of r.rows) {
    if (row.verified) continue;
    const why = row.mismatches.length > 0 ? `: ${row.mismatches.slice(0, 3).join('; ')}${row.mismatches.length > 3 ? '; …' : ''}` : '';
    failures.push(`${row.op} ${row.name} (${row.kind}), ${row.dist}, b = ${row.b}, p = ${row.p}${why}`);
  }
  for (const i of r.inter) if (!i.verified) failures.push(`intergroup setting ${i.setting}, ${i.ranks} ranks, ${i.size} bytes`);
  const total = r.rows.length + r.inter.length;
  let out: string;
  if (failures.length === 0) {
    out = `<section id="verification"><h2>Verification</h2>\n<p class="good verification">All ${total} rows verified: every execution left every rank's data equal to the reference.</p>`;
  } else {
    const items = failures.map((f) => `<li>${escapeHtml(f)}</li>`).join('\n');
    out = `<section id="verification"><h2>Verification</h2>\n<p class="bad verification">${failures.length} of ${total} rows failed verification:</p>\n<ul class="failures">\n${items}\n</ul>`;
  }
  return `${out}\n${skippedTable(r)}</section>`;
}

/** Algorithms left out of cases they cannot run, one line per (op, algorithm, reason). */
function skippedTable(r: BenchResults): string {
  const skipped = r.skipped ?? [];
  if (skipped.length === 0) return '';
  const groups = new Map<string, { op: string; algorithm: string; reason: string; cases: number; dists: Set<string>; bs: Set<number>; ps: Set<number> }>();
  for (const s of skipped) {
    const key = `${s.op}\u0000${s.algorithm}\u0000${s.reason}`;
    const g = groups.get(key) ?? { op: s.op, algorithm: s.algorithm, reason: s.reason, cases: 0, dists: new Set(), bs: new Set(), ps: new Set() };
    g.cases++;
    g.dists.add(s.dist);
    g.bs.add(s.b);
    g.ps.add(s.p);
    groups.set(key, g);
  }
  const nums = (xs: Set<number>): string => [...xs].sort((a, b) => a - b).join(', ');
  const rows = [...groups.values()].map((g) => [g.op, g.algorithm, String(g.cases), [...g.dists].join(', '), nums(g.bs), nums(g.ps), g.reason]);
  return `<h3>Skipped</h3>\n<p class="note">Algorithms left out of cases they cannot run (${skipped.length} cases).</p>\n${table(['op', 'algorithm', 'cases', 'distributions', 'b', 'p', 'reason'], rows, 'skipped')}`;
}

function chartsSection(charts: readonly Chart[]): string {
  if (charts.length === 0) return '<section id="charts"><h2>Charts</h2>\n<p>No data to plot.</p></section>';
  const figs = charts.map(
    (c, i) =>
      `<figure class="chart" id="${escapeHtml(c.id)}" data-chart-id="${escapeHtml(c.id)}">\n<h3>Figure ${i + 1}. ${escapeHtml(c.title)}</h3>\n` +
      `<div class="svg">${c.svg}</div>\n<figcaption>${escapeHtml(c.caption)}</figcaption>\n</figure>`,
  );
  return `<section id="charts"><h2>Charts</h2>\n${figs.join('\n')}</section>`;
}

const CSS = `
:root { color-scheme: light; }
body { font-family: Helvetica, Arial, sans-serif; color: #222; background: #fff; margin: 0 auto; padding: 1.5rem 2rem 3rem; max-width: 1180px; line-height: 1.4; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
.subtitle { color: #555; margin: 0 0 1rem; }
table { border-collapse: collapse; font-size: .88rem; margin: .4rem 0 1rem; }
th, td { border: 1px solid #ddd; padding: .25rem .6rem; text-align: left; vertical-align: top; }
thead th { background: #f3f3f3; }
table.kv th { background: #fafafa; font-weight: normal; color: #444; white-space: nowrap; }
table.violations td:nth-child(n+5) { text-align: right; font-variant-numeric: tabular-nums; }
.side { color: #666; font-size: .8rem; }
.cols { display: flex; flex-wrap: wrap; gap: 2rem; }
.cols > div { flex: 1 1 420px; }
.note { color: #555; font-size: .85rem; max-width: 60rem; }
.good { color: #1d6b2a; }
.bad { color: #b00000; font-weight: bold; }
figure.chart { margin: 1.5rem 0 2.5rem; padding: 0; break-inside: avoid; }
figure.chart .svg { overflow-x: auto; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: .85rem; color: #444; margin-top: .4rem; max-width: 60rem; }
`;

/** The whole report as one self-contained HTML page. */
export async function renderReport(results: BenchResults): Promise<string> {
  const charts = await renderCharts(results);
  const c = results.config;
  const title = `vcoll bench report: ${c.ops.join(', ')} on ${c.transport}`;
  const subtitle = `${results.rows.length} rows, ${results.verdicts.length} guideline verdicts, ${results.inter.length} intergroup rows; created ${results.created}`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="subtitle">${escapeHtml(subtitle)}</p>`,
    configSection(results),
    verdictSummary(results),
    verificationSection(results),
    chartsSection(charts),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
