import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/browser/**', 'test/reliability/**', 'node_modules/**'],
    // Timeouts catch hangs, not slowness: CLI tests start a Node process per
    // command, which takes seconds each when the machine's two cores are busy.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    env: { POWERTOOLS_METRICS_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
