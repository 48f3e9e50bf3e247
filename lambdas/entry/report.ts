import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { dynamoReportDeps } from '../wiring/report-deps.js';
import { createReportHandler } from '../handlers/report.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { filteredEngine, tableLooks } from './filtered.js';

const conn = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const telemetry = createTelemetry('report');

/** Lambda entry of `GET /api/v1/{proxy+}` (app mode). */
export const handler = createReportHandler({
  ...telemetry,
  ...dynamoReportDeps(conn, Date.now, filteredEngine(), tableLooks(conn, telemetry.logger)),
});
