import { LambdaClient } from '@aws-sdk/client-lambda';
import { lambdaFilteredVisits } from '../adapters/lambda-filtered-visits.js';
import { lambdaRefreshInvoker } from '../adapters/lambda-refresh-invoker.js';
import { DynamoLookStore } from '../adapters/dynamo/look-store.js';
import type { DynamoConnection } from '../adapters/dynamo/client.js';
import type { FilteredVisits } from '../ports.js';
import { TableLooks, type TableLooksDeps } from '../services/table-looks.js';

const lambda = new LambdaClient({});

/**
 * The filtered reports' engine of the report and MCP functions: a synchronous invocation of the
 * filtered function named by `FILTERED_FUNCTION` (lib/footfall-stack.ts sets it with
 * `-c filteredReports=true`), which runs DuckDB over the visit table; none without the variable (a
 * request with `filters` is then a 400).
 */
export function filteredEngine(): FilteredVisits | undefined {
  const name = process.env.FILTERED_FUNCTION;
  if (!name) return undefined;
  return lambdaFilteredVisits(lambda, name);
}

/**
 * The looks of the report and MCP functions (`TableLooks`, `docs/data-model.md` "Filtered reports", *On demand*):
 * with the filtered function, each report request records a look at its site, and a look at an idle site invokes
 * the operations function (`OPERATIONS_FUNCTION`) to refresh the site's table.
 */
export function tableLooks(conn: DynamoConnection, logger: TableLooksDeps['logger']): TableLooks | undefined {
  const operations = process.env.OPERATIONS_FUNCTION;
  if (!process.env.FILTERED_FUNCTION || !operations) return undefined;
  return new TableLooks({
    marks: new DynamoLookStore(conn),
    refresh: lambdaRefreshInvoker(lambda, operations),
    clock: Date.now,
    logger,
  });
}
