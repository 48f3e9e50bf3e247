import { describe } from 'vitest';

/**
 * Which suite runs a test file: `npm test` (vitest.config.ts) or the reliability suite
 * (vitest.reliability.config.ts sets `FOOTFALL_SUITE=reliability`). A file outside test/reliability/ that uses
 * `reliabilityOnly`, `propertyRuns` or `inputSize` is run by both: the reliability config includes every such file
 * (`filesForReliability`), so CI still runs what npm test leaves out (docs/reliability.md).
 */
export const RELIABILITY_SUITE = process.env.FOOTFALL_SUITE === 'reliability';

/**
 * `describe` for tests too slow for `npm test` (a crash at every write, a scale run): they run in the reliability
 * suite only.
 */
export const reliabilityOnly = describe.runIf(RELIABILITY_SUITE);

/**
 * fast-check's `numRuns` for a property: `quick` in `npm test`, which still guards the rule on every run,
 * `full` in the reliability suite.
 */
export function propertyRuns(quick: number, full: number): number {
  return RELIABILITY_SUITE ? full : quick;
}

/**
 * The size of a scale test's input (events, payments, rows): `quick` in `npm test`, enough to cross the boundaries
 * the rule is about (several items, several batches), `full` in the reliability suite, the size that shows it holds
 * at scale.
 */
export function inputSize(quick: number, full: number): number {
  return RELIABILITY_SUITE ? full : quick;
}
