import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Reliability checks under load, faults and hostile input (`docs/reliability.md`):
 * `npm run test:reliability` runs the short form (a few minutes on 2 cores);
 * `FOOTFALL_RELIABILITY=long npm run test:reliability` the long one that gives
 * the documented figures. Files run one after another, so that the load of one
 * does not distort the figures of another. Besides the load, crash, fault and
 * fuzz checks it holds the tests too slow for `npm test` (the arrival-order
 * property, crashes at every write, storage and retention at scale), so CI
 * still runs them (`docs/reliability.md`): those in files of their own under test/reliability/, and those marked
 * in their file elsewhere with `reliabilityOnly`, `propertyRuns` or `inputSize` (test/support/suite.ts), whose files it
 * includes too.
 */
const long = process.env.FOOTFALL_RELIABILITY === 'long';

/** Test files outside test/reliability/ that leave tests or property runs to this suite. */
function filesForReliability(): string[] {
  const root = fileURLToPath(new URL('.', import.meta.url));
  return readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .map((file) => join('test', file))
    .filter((file) => file.endsWith('.test.ts') && !file.startsWith(join('test', 'reliability')))
    .filter((file) => /\b(reliabilityOnly|propertyRuns|inputSize)\b/.test(readFileSync(join(root, file), 'utf8')));
}

export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts', ...filesForReliability()],
    testTimeout: long ? 3_600_000 : 240_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    setupFiles: ['test/support/setup.ts'],
    env: {
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      FOOTFALL_SUITE: 'reliability',
    },
  },
});
