import type { FilteredVisits } from '../ports.js';

/**
 * A `FilteredVisits` built at its first call: the report and MCP functions load DuckDB's native
 * library (about 68 MB) only when a filtered report is asked for, so unfiltered requests keep their
 * cold start.
 */
export function lazyFilteredVisits(build: () => Promise<FilteredVisits>): FilteredVisits {
  let engine: Promise<FilteredVisits> | undefined;
  const get = () => {
    engine ??= build();
    engine.catch(() => (engine = undefined));
    return engine;
  };
  return {
    totals: async (...args) => (await get()).totals(...args),
    payments: async (...args) => (await get()).payments(...args),
    breakdown: async (...args) => (await get()).breakdown(...args),
    input: async (...args) => (await get()).input(...args),
    propBreakdown: async (...args) => (await get()).propBreakdown(...args),
    series: async (...args) => (await get()).series(...args),
    goals: async (...args) => (await get()).goals(...args),
    paymentList: async (...args) => (await get()).paymentList(...args),
    firstPayers: async (...args) => (await get()).firstPayers(...args),
  };
}
