import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { dynamoReportDeps } from '../wiring/report-deps.js';
import { createMcpHandler } from '../handlers/mcp.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { originList } from '../domain/auth/origin.js';
import { filteredEngine, tableLooks } from './filtered.js';

/** The app's origin and the owner's `mcpOrigins` (lib/footfall-stack.ts), comma-separated. */
const allowed = originList(process.env.APP_ORIGINS);

const conn = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const telemetry = createTelemetry('mcp');

/** Lambda entry of the MCP endpoint `/mcp` (app mode), behind a function URL. */
export const handler = createMcpHandler({
  ...telemetry,
  ...dynamoReportDeps(conn, Date.now, filteredEngine(), tableLooks(conn, telemetry.logger)),
  allowedOrigins: () => allowed,
});
