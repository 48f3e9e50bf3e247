import { defineConfig } from 'vitest/config';

/**
 * Reliability checks under load, faults and hostile input (`docs/reliability.md`):
 * `npm run test:reliability` runs the short form (a few minutes on 2 cores);
 * `FOOTFALL_RELIABILITY=long npm run test:reliability` the long one that gives
 * the documented figures. Files run one after another, so that the load of one
 * does not distort the figures of another. Besides the load, crash, fault and
 * fuzz checks it holds the tests too slow for `npm test` (the arrival-order
 * property, crashes at every write, storage and retention at scale), so CI
 * still runs them (`docs/reliability.md`).
 */
const long = process.env.FOOTFALL_RELIABILITY === 'long';

export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    testTimeout: long ? 3_600_000 : 240_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    env: { POWERTOOLS_METRICS_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
