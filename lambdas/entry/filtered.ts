import { LambdaClient } from '@aws-sdk/client-lambda';
import { lambdaFilteredVisits } from '../adapters/lambda-filtered-visits.js';
import type { FilteredVisits } from '../ports.js';

/**
 * The filtered reports' engine of the report and MCP functions: a synchronous invocation of the
 * filtered function named by `FILTERED_FUNCTION` (lib/footfall-stack.ts sets it with
 * `-c filteredReports=true`), which runs DuckDB over the visit table; none without the variable (a
 * request with `filters` is then a 400).
 */
export function filteredEngine(): FilteredVisits | undefined {
  const name = process.env.FILTERED_FUNCTION;
  if (!name) return undefined;
  return lambdaFilteredVisits(new LambdaClient({}), name);
}
