import { lazyFilteredVisits } from '../adapters/lazy-filtered-visits.js';
import { createFilteredHandler } from '../handlers/filtered.js';
import { loadVisitTableDeps } from './duckdb-chunk.js';
import { requireEnv } from './env.js';

const bucket = requireEnv('VISIT_TABLE_BUCKET');

/**
 * Lambda entry of the filtered function (unless `-c filteredReports=false`): DuckDB over the visit table
 * in `VISIT_TABLE_BUCKET`, loaded with its native library at the first call, invoked by the report
 * and MCP functions (`lambdaFilteredVisits`).
 */
export const handler = createFilteredHandler(
  lazyFilteredVisits(async () => (await loadVisitTableDeps()).s3FilteredVisits(bucket)),
);
