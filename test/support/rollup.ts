import type { RollupDelta, RollupMetric } from '../../lambdas/domain/rollup.js';

/** A daily rollup delta of example.com for 2026-03-05: zero counts and empty sets but for `d`. */
export const rollupDelta = (metric: RollupMetric, d: Partial<Omit<RollupDelta, 'key'>> = {}): RollupDelta => ({
  key: { site: 'example.com', metric, granularity: 'D', period: '2026-03-05', bucket: 0 },
  visits: 0,
  pageviews: 0,
  counters: new Map(),
  values: new Map(),
  visitors: new Set(),
  valueVisitors: new Map(),
  ...d,
});
