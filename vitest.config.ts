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
    // Each worker runs its files one after another in one process instead of a fresh process per file: the
    // modules every file loads (the AWS SDK, aws-cdk-lib, dynalite) are imported once per worker, which halves
    // the suite's CPU time. Files restore what they change (environment, fake timers, stubs), and per-file
    // clean-up is registered in the setup file, which runs for every file.
    isolate: false,
    setupFiles: ['test/support/setup.ts'],
    env: { POWERTOOLS_METRICS_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
