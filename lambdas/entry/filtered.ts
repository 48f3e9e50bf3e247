import { lazyFilteredVisits } from '../adapters/lazy-filtered-visits.js';
import type { FilteredVisits } from '../ports.js';
import { loadVisitTableDeps } from './duckdb-chunk.js';

/**
 * The filtered reports' engine of the report and MCP functions: DuckDB over the visit table in
 * `VISIT_TABLE_BUCKET` (lib/footfall-stack.ts sets it with `-c filteredReports=true`), loaded
 * with its native library at the first filtered request; none without the variable (a request with
 * `filters` is then a 400).
 */
export function filteredEngine(): FilteredVisits | undefined {
  const bucket = process.env.VISIT_TABLE_BUCKET;
  if (!bucket) return undefined;
  return lazyFilteredVisits(async () => (await loadVisitTableDeps()).s3FilteredVisits(bucket));
}
