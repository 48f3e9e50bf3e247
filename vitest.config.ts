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
    // Vitest's default is one worker fewer than the cores: one on two cores, the whole suite in series.
    // Most files wait on dynalite, child processes or sockets, so two workers keep both cores busy.
    maxWorkers: 2,
    // Per-file clean-up (synth outputs); runs before every file, isolated or not.
    setupFiles: ['test/support/setup.ts'],
    env: { POWERTOOLS_METRICS_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
