import { defineConfig } from 'vitest/config';

/**
 * Every file shares its worker's process with the files before it (`isolate: false`), so the AWS SDK, aws-cdk-lib
 * and dynalite load once per worker instead of once per file; a file restores what it changes in the process, and
 * `test/support/shared-setup.ts` fails the file that does not (docs/reliability.md).
 */
const EXCLUDED = ['test/browser/**', 'test/reliability/**', 'node_modules/**'];

export default defineConfig({
  test: {
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
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: EXCLUDED,
          isolate: false,
          // Fails a file that leaves a mocked AWS client, fake timers or a changed environment variable behind.
          setupFiles: ['test/support/shared-setup.ts'],
        },
      },
    ],
  },
});
