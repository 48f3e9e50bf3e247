import { defineConfig } from 'vitest/config';

// Real-browser tests of the tracker and the app (headless Chromium via playwright-core);
// the global setup builds the app (app/dist/) when it is missing or stale.
// Kept apart from the unit suite: they need /usr/bin/chromium and take seconds, not milliseconds.
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/browser/global-setup.ts'],
    pool: 'forks',
    // One browser per file; files would otherwise compete for CPU and make timing-based asserts flaky.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
