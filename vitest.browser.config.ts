import { defineConfig } from 'vitest/config';

/**
 * The browser suite (`npx vitest run --config vitest.browser.config.ts`): test/browser/*.browser.ts,
 * which open pages the project renders (the HTML bench report) in headless Chromium through
 * playwright-core. Needs Chromium at /usr/bin/chromium or $VCOLL_CHROMIUM (`apt-get install
 * chromium`); the tests fail, not skip, without it.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
