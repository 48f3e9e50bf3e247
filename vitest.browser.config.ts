import { defineConfig } from 'vitest/config';

// Real-browser tests of the tracker (headless Chromium via playwright-core).
// Kept apart from the unit suite: they need /usr/bin/chromium and take seconds, not milliseconds.
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    pool: 'forks',
    // One browser per file; files would otherwise compete for CPU and make timing-based asserts flaky.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
