/**
 * The HTML bench report (src/report/html.ts) and its charts (src/report/charts.ts), rendered in
 * Node from the synthetic results of test/fixtures/bench-results.ts: one figure per expected
 * chart with a real SVG in it, the violations table, escaping, no external resources. The same
 * page in a browser: test/browser/report.browser.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { BenchResults } from '../src/harness/results.js';
import { UnavailableError } from '../src/errors.js';
import { PLOTTING_HINT, chartSpecs, displayTime, loadPlotting, logTicks, plottingImportError, postProcessSvg, renderCharts } from '../src/report/charts.js';
import { escapeHtml, formatNumber, formatTime, renderReport } from '../src/report/html.js';
import { FIXTURE_CHART_IDS, GL2_GATHER_NAME, fixtureResults } from './fixtures/bench-results.js';

/** The HTML of every `<figure class="chart">`, keyed by its data-chart-id, in page order. */
function figures(html: string): [string, string][] {
  return [...html.matchAll(/<figure class="chart"[^>]*data-chart-id="([^"]+)"[^>]*>([\s\S]*?)<\/figure>/g)].map((m) => [m[1], m[2]]);
}

function section(html: string, re: RegExp): string {
  const m = re.exec(html);
  if (m === null) throw new Error(`no match for ${re.source}`);
  return m[0];
}

describe('HTML report', () => {
  const results = fixtureResults();
  let html: string;

  beforeAll(async () => {
    html = await renderReport(results);
  });

  it('is one HTML page with the configuration, environment and calibration', () => {
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('</html>');
    expect(html).toMatch(/<th scope="row">transport<\/th><td>threads<\/td>/);
    expect(html).toMatch(/<th scope="row">block sizes b<\/th><td>1, 10, 100<\/td>/);
    expect(html).toMatch(/<th scope="row">cpus<\/th><td>8<\/td>/);
    expect(html).toContain('<h3>Calibration</h3>');
    expect(html).toMatch(/α \(latency\)<\/th><td>4\.8 µs<\/td>/);
  });

  it('has one figure per (op, p) and per intergroup figure, each with a rendered SVG', () => {
    const figs = figures(html);
    expect(figs.map(([id]) => id)).toEqual([...FIXTURE_CHART_IDS]);
    for (const [id, body] of figs) {
      const svg = section(body, /<svg[\s\S]*<\/svg>/);
      expect(svg, id).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      // Marks: lines and points are <path> elements in Vega's mark groups.
      expect(svg, id).toMatch(/class="mark-line role-mark/);
      expect(svg, id).toMatch(/class="mark-symbol role-mark/);
      expect((svg.match(/<path\b/g) ?? []).length, id).toBeGreaterThan(5);
      expect(body, id).toMatch(/<figcaption>[^<]+<\/figcaption>/);
    }
    // Facet headers name the distributions and the intergroup cases.
    const gather = figs.find(([id]) => id === 'bench-gatherv-p4')![1];
    expect(gather).toContain('>Same</text>');
    expect(gather).toContain('>Random</text>');
    expect(figs.find(([id]) => id === 'inter-fig4')![1]).toContain('8 processes (setting 2)');
  });

  it('draws every algorithm, the references and the model in the legend', () => {
    const gather = figures(html).find(([id]) => id === 'bench-gatherv-p4')![1];
    for (const label of ['linear', 'binomial', 'gather(m)', `GL2: ${escapeHtml(GL2_GATHER_NAME)}`, 'model', 'guideline violated'])
      expect(gather, label).toContain(`>${label}</text>`);
    // No violation on scatterv: no ring and no marker legend there.
    const scatter = figures(html).find(([id]) => id === 'bench-scatterv-p4')![1];
    expect(scatter).not.toContain('guideline violated');
    expect(scatter).toContain('No guideline was violated.');
  });

  it('marks the violated verdict on its point with a red ring carrying a title', () => {
    const gather = figures(html).find(([id]) => id === 'bench-gatherv-p4')![1];
    const rings = gather.match(/<path[^>]*stroke="#d00000"[^>]*><title>[^<]*<\/title><\/path>/g) ?? [];
    expect(rings).toHaveLength(1);
    expect(rings[0]).toContain('GL2 violated (gatherv, binomial, random, b = 100, p = 4)');
  });

  it('summarises the verdicts per guideline and op', () => {
    const summary = section(html, /<table class="summary">[\s\S]*?<\/table>/);
    const rows = [...summary.matchAll(/<tr><td>(GL\d)<\/td><td>(\w+)<\/td><td><span class="(\w+)">(\d+) \/ (\d+)<\/span><\/td><\/tr>/g)].map((m) => m.slice(1).join(' '));
    expect(rows).toEqual(['GL1 gatherv good 0 1', 'GL2 gatherv bad 1 1', 'GL2 scatterv good 0 1']);
  });

  it('lists exactly the violated verdict in the violations table', () => {
    const table = section(html, /<table class="violations">[\s\S]*?<\/table>/);
    const body = section(table, /<tbody>[\s\S]*<\/tbody>/);
    const rows = body.match(/<tr>[\s\S]*?<\/tr>/g) ?? [];
    expect(rows).toHaveLength(1);
    const v = results.verdicts.find((x) => x.verdict === 'violated')!;
    const cells = [...rows[0]!.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((m) => m[1]);
    expect(cells.slice(0, 6)).toEqual(['GL2', 'gatherv', 'binomial', 'Random', '100', '4']);
    expect(cells[6]).toBe(`${formatNumber(displayTime(v.lhsMedian, 's'))}<br><span class="side">binomial</span>`);
    expect(cells[7]).toBe(`${formatNumber(displayTime(v.rhsMedian, 's'))}<br><span class="side">${escapeHtml(GL2_GATHER_NAME)}</span>`);
    expect(cells[8]).toBe(formatNumber(v.ratio));
    expect(cells[9]).toBe('0.00610');
    expect(table).toContain('lhs median (µs)');
  });

  it('escapes text from the results everywhere, tables and SVG alike', () => {
    expect(html).not.toContain('<padded>');
    expect(html).toContain('&lt;padded&gt;');
    expect(html).toContain('Fake MPI &lt;4.1&gt; &amp; &quot;co&quot;');
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('references no external resource and keeps element ids unique', () => {
    expect(html).not.toMatch(/\ssrc\s*=/i);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/@import|url\(\s*['"]?(https?:)?\/\//i);
    for (const m of html.matchAll(/\shref\s*=\s*"([^"]*)"/gi)) expect(m[1]).toMatch(/^#/);
    const urls = new Set(html.match(/https?:\/\/[^\s"')<>]+/g) ?? []);
    expect([...urls].sort()).toEqual(['http://www.w3.org/1999/xlink', 'http://www.w3.org/2000/svg']);
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('says all rows were verified, and lists the skipped algorithms', () => {
    expect(html).toContain(`All ${results.rows.length + results.inter.length} rows verified`);
    const skipped = section(html, /<table class="skipped">[\s\S]*?<\/table>/);
    expect(skipped).toContain('<td>two-block</td><td>2</td><td>random</td><td>1, 10</td>');
  });

  it('lists the rows that failed verification', async () => {
    const bad: BenchResults = {
      ...results,
      rows: results.rows.map((r, i) => (i === 3 ? { ...r, verified: false, mismatches: ['rank 2: byte 7 <differs>'] } : r)),
    };
    const page = await renderReport(bad);
    expect(page).toContain('1 of');
    const list = section(page, /<ul class="failures">[\s\S]*?<\/ul>/);
    expect(list.match(/<li>/g)).toHaveLength(1);
    expect(list).toContain('rank 2: byte 7 &lt;differs&gt;');
  });

  it('handles a run without references, intergroup cases or calibration, in model units', async () => {
    const { calibration: _c, ...rest } = results;
    const sim: BenchResults = {
      ...rest,
      timeUnit: 'model',
      config: { ...results.config, references: 'none', transport: 'sim' },
      rows: results.rows.filter((r) => r.kind === 'algorithm'),
      verdicts: [],
      skipped: [],
      inter: [],
    };
    const page = await renderReport(sim);
    expect(figures(page).map(([id]) => id)).toEqual(['bench-gatherv-p4', 'bench-scatterv-p4']);
    expect(page).toContain('references: none');
    expect(page).not.toContain('<h3>Calibration</h3>');
    expect(page).toContain('time (model units)');
    expect(formatTime(1234.5, 'model')).toBe('1,230 model units');
  });
});

describe('charts', () => {
  it('render without Vega-Lite or Vega warnings', async () => {
    const warnings: string[] = [];
    const charts = await renderCharts(fixtureResults(), { onWarning: (m) => warnings.push(m) });
    expect(charts.map((c) => c.id)).toEqual([...FIXTURE_CHART_IDS]);
    expect(warnings).toEqual([]);
  });

  it('plot medians in µs on log axes, with the model and q1–q3 bars', () => {
    const spec = chartSpecs(fixtureResults())[0].spec as unknown as { data: { values: { layer: string; y: number; series: string; b: number; dist: string }[] } };
    const values = spec.data.values;
    const results = fixtureResults();
    const row = results.rows.find((r) => r.op === 'gatherv' && r.name === 'linear' && r.dist === 'same' && r.b === 10)!;
    const measured = values.find((d) => d.layer === 'measured' && d.series === 'linear' && d.dist === 'Same' && d.b === 10)!;
    expect(measured.y).toBeCloseTo(row.stats.median * 1e6, 9);
    const model = values.find((d) => d.layer === 'model' && d.series === 'linear' && d.dist === 'Same' && d.b === 10)!;
    expect(model.y).toBeCloseTo(row.predicted! * 1e6, 9);
    expect(values.filter((d) => d.layer === 'violation')).toHaveLength(1);
  });

  it('formats times with three significant digits', () => {
    expect(formatTime(12.345e-6, 's')).toBe('12.3 µs');
    expect(formatTime(0.0123456, 's')).toBe('12,300 µs');
    expect(formatNumber(0.000123456)).toBe('0.000123');
  });

  it('choose log ticks for wide and narrow ranges', () => {
    expect(logTicks([1, 20000])).toEqual([1, 10, 100, 1000, 10000]);
    expect(logTicks([3, 60])).toEqual([5, 10, 20, 50]);
    const narrow = logTicks([7.6, 18]);
    expect(narrow.length).toBeGreaterThanOrEqual(3);
    expect(narrow.every((t) => t >= 7 && t <= 19)).toBe(true);
    expect(logTicks([0, -1])).toEqual([]);
  });

  it('prefix SVG ids and turn point descriptions into titles', () => {
    const svg =
      '<svg><defs><clipPath id="clip1"><rect/></clipPath></defs><g clip-path="url(#clip1)">' +
      '<path d="M0" aria-label="a &lt; b" role="graphics-symbol" aria-roledescription="point"/>' +
      '<path d="M1" aria-label="line" role="graphics-symbol" aria-roledescription="line mark"/></g></svg>';
    const out = postProcessSvg(svg, 'c1');
    expect(out).toContain('id="c1-clip1"');
    expect(out).toContain('url(#c1-clip1)');
    expect(out).toContain('<path d="M0" aria-label="a &lt; b" role="graphics-symbol" aria-roledescription="point"><title>a &lt; b</title></path>');
    expect(out).toContain('<path d="M1" aria-label="line" role="graphics-symbol" aria-roledescription="line mark"/>');
  });
});

describe('the plotting libraries (optional peer dependencies)', () => {
  it('load on first use, once', async () => {
    const first = loadPlotting();
    expect(loadPlotting()).toBe(first);
    const { vega, vl } = await first;
    expect(typeof vega.View).toBe('function');
    expect(typeof vl.compile).toBe('function');
  });

  it('missing, turn into an UnavailableError that says how to install them', () => {
    // What Node's ESM loader throws when `import('vega')` finds no package (and require's code).
    for (const code of ['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND']) {
      const notFound = Object.assign(new Error("Cannot find package 'vega' imported from /app/node_modules/vcoll/dist/report/charts.js"), { code });
      const e = plottingImportError(notFound);
      expect(e).toBeInstanceOf(UnavailableError);
      const u = e as UnavailableError;
      expect(u.code).toBe('UNAVAILABLE');
      expect(u.what).toBe('vega');
      expect(u.message).toContain(`run \`${PLOTTING_HINT}\``);
      expect(PLOTTING_HINT).toBe('npm install vega vega-lite');
      expect(u.message).toContain("Cannot find package 'vega'");
      expect(u.cause).toBe(notFound);
    }
    // Any other failure of the import stays what it was.
    const other = new SyntaxError('Unexpected token');
    expect(plottingImportError(other)).toBe(other);
  });
});
