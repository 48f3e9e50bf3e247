import { AthenaClient } from '@aws-sdk/client-athena';
import { S3Client } from '@aws-sdk/client-s3';
import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { dynamoOperationsDeps } from '../wiring/operations-deps.js';
import { AthenaArchiveReader } from '../adapters/athena-archive.js';
import { S3ArchiveEraser } from '../adapters/s3-archive-eraser.js';
import { AWS_DRAIN_MS, AWS_FENCE_MS } from '../adapters/aws-fence.js';
import { EVENTS_PREFIX } from '../domain/archive-schema.js';
import { createOperationsHandler } from '../handlers/operations.js';
import { OPERATIONS_EVERY_MS, advanceOperations, refreshAskedFor } from '../services/operations.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { S3ArchiveChanges } from '../adapters/s3-archive-changes.js';
import { lazyPort } from '../forward-port.js';
import { RECENT_ARCHIVE_METHODS, VISIT_TABLE_STORE_METHODS } from '../ports.js';
import { loadVisitTableDeps } from './duckdb-chunk.js';
import { CHANGES_EVERY_MS_IN_AWS } from '../services/visit-table.js';

/**
 * Of the function's 15 minutes: steps start within the first 10 (`OPERATIONS_BUDGET_MS`) and an
 * Athena query gives up after 4 (`ATHENA_QUERY_TIMEOUT_MS`), so the last step ends before the timeout.
 */
const OPERATIONS_BUDGET_MS = 10 * 60_000;
const ATHENA_QUERY_TIMEOUT_MS = 4 * 60_000;

const { logger } = createTelemetry('operations');
const athena = new AthenaClient({});
const s3 = new S3Client({});
const archiveLocation = { bucket: requireEnv('EVENTS_BUCKET'), prefix: EVENTS_PREFIX };
/** Set by the stack with `-c filteredReports=true`: the visit table of filtered reports is written in it. */
const visitTableBucket = process.env.VISIT_TABLE_BUCKET;
const query = {
  workGroup: requireEnv('ATHENA_WORKGROUP'),
  database: requireEnv('GLUE_DATABASE'),
  timeoutMs: ATHENA_QUERY_TIMEOUT_MS,
};
const deps = dynamoOperationsDeps(createDynamoConnection({ table: requireEnv('TABLE_NAME') }), {
  archive: new AthenaArchiveReader(athena, query),
  eraser: new S3ArchiveEraser(s3, archiveLocation, { client: athena, options: query }),
  fenceMs: AWS_FENCE_MS,
  drainMs: AWS_DRAIN_MS,
  // Firehose delivers on its own: the fence is waited out by the clock, across runs.
  catchUp: async () => {},
  clock: Date.now,
  logger,
  ...(visitTableBucket
    ? {
        visitTable: {
          // DuckDB loads at the first run that writes the table, not at every cold start (`loadVisitTableDeps`).
          table: lazyPort(VISIT_TABLE_STORE_METHODS, async () =>
            (await loadVisitTableDeps()).s3VisitTable(visitTableBucket),
          ),
          changes: new S3ArchiveChanges(s3, archiveLocation),
          changesEveryMs: CHANGES_EVERY_MS_IN_AWS,
          // A site's table is refreshed while someone looks at its reports, and once a day (`docs/cost.md`, "Filtered reports").
          onDemand: { runEveryMs: OPERATIONS_EVERY_MS },
          // The open days from the archive's objects, not an Athena query (`docs/cost.md`, "Filtered reports").
          recent: lazyPort(RECENT_ARCHIVE_METHODS, async () =>
            (await loadVisitTableDeps()).s3ArchiveCopies(s3, archiveLocation),
          ),
        },
      }
    : {}),
});

const { visitTable } = deps;

/** Lambda entry of the operations schedule: queued site deletions and erasures (`createOperationsHandler`). */
export const handler = createOperationsHandler({
  logger,
  operations: (deadline) => advanceOperations(deps, deadline),
  ...(visitTable ? { refresh: (domain: string) => refreshAskedFor(visitTable, domain) } : {}),
  budgetMs: OPERATIONS_BUDGET_MS,
  clock: Date.now,
});
