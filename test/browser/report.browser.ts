/**
 * The HTML bench report (src/report/html.ts) in a real browser: renders the synthetic results of
 * test/fixtures/bench-results.ts, opens the page from a file in headless Chromium
 * (playwright-core) and checks that it loads without console errors, that every chart's SVG is
 * laid out with a non-empty box and visible marks, and that there are as many charts as the
 * fixture implies. Leaves a full-page screenshot in test-output/report.png, and one per chart in
 * test-output/chart-<id>.png, for a human to look at.
 *
 * Chromium: /usr/bin/chromium or $VCOLL_CHROMIUM; missing, the test fails (apt-get install chromium).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { renderReport } from '../../src/report/html.js';
import { FIXTURE_CHART_IDS, fixtureResults } from '../fixtures/bench-results.js';

const CHROMIUM = process.env.VCOLL_CHROMIUM ?? '/usr/bin/chromium';
const OUTPUT = resolve('test-output');

describe('HTML report in Chromium', () => {
  let browser: Browser | undefined;
  let page: Page;
  let dir: string;
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium not found at ${CHROMIUM}: install it (apt-get install chromium) or point VCOLL_CHROMIUM at a Chromium binary`,
      );
    }
    dir = mkdtempSync(join(tmpdir(), 'vcoll-report-'));
    const file = join(dir, 'report.html');
    writeFileSync(file, await renderReport(fixtureResults()));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // Any request that leaves the file would be an external resource.
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('loads without console or page errors and fetches nothing', async () => {
    expect(await page.title()).toContain('vcoll bench report');
    const requests = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name));
    expect(requests).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('has one laid-out chart per (op, p) and per intergroup figure', async () => {
    const figures = page.locator('figure.chart');
    expect(await figures.count()).toBe(FIXTURE_CHART_IDS.length);
    const ids = await figures.evaluateAll((fs) => fs.map((f) => f.getAttribute('data-chart-id')));
    expect(ids).toEqual([...FIXTURE_CHART_IDS]);
    for (let i = 0; i < FIXTURE_CHART_IDS.length; i++) {
      const fig = figures.nth(i);
      const svg = fig.locator('svg').first();
      const box = await svg.boundingBox();
      expect(box, FIXTURE_CHART_IDS[i]).not.toBeNull();
      expect(box!.width, FIXTURE_CHART_IDS[i]).toBeGreaterThan(100);
      expect(box!.height, FIXTURE_CHART_IDS[i]).toBeGreaterThan(100);
      // Visible marks: lines and points with a non-empty box of their own.
      const marks = fig.locator('g.mark-line path, g.mark-symbol path');
      const n = await marks.count();
      expect(n, FIXTURE_CHART_IDS[i]).toBeGreaterThan(0);
      let visible = 0;
      for (let k = 0; k < n; k++) {
        const b = await marks.nth(k).boundingBox();
        if (b !== null && (b.width > 0 || b.height > 0)) visible++;
      }
      expect(visible, FIXTURE_CHART_IDS[i]).toBeGreaterThan(0);
      expect(await fig.locator('figcaption').innerText()).not.toBe('');
    }
  });

  it('shows the violated guideline as a table row and a red ring', async () => {
    await expect.poll(() => page.locator('table.violations tbody tr').count()).toBe(1);
    expect(await page.locator('[data-chart-id="bench-gatherv-p4"] g.mark-symbol path[stroke="#d00000"]').count()).toBeGreaterThan(0);
  });

  it('writes screenshots to test-output/: report.png (full page) and chart-<id>.png', async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const path = join(OUTPUT, 'report.png');
    await page.screenshot({ path, fullPage: true });
    expect(existsSync(path)).toBe(true);
    for (const id of FIXTURE_CHART_IDS) {
      const shot = join(OUTPUT, `chart-${id}.png`);
      await page.locator(`figure.chart[data-chart-id="${id}"]`).screenshot({ path: shot });
      expect(existsSync(shot)).toBe(true);
    }
  });
});
