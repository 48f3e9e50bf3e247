import { LambdaClient } from '@aws-sdk/client-lambda';
import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoImportJobStore } from '../adapters/dynamo/import-job-store.js';
import { lambdaImportInvoker } from '../adapters/lambda-import-invoker.js';
import { importStartDeps } from '../wiring/import-deps.js';
import { dynamoAuthDeps, dynamoSettingsDeps, dynamoShareDeps } from '../wiring/app-deps.js';
import { DynamoEmailReportStore } from '../adapters/dynamo/email-report-store.js';
import { createAppHandler } from '../handlers/app.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { stackSecretBox } from './secret-box.js';

const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const secrets = stackSecretBox();

/** Lambda entry of `/api/app/{proxy+}` (app mode): sign-in, sessions and account settings. */
export const handler = createAppHandler({
  ...createTelemetry('app'),
  auth: dynamoAuthDeps(dynamo),
  settings: dynamoSettingsDeps(dynamo, secrets),
  shares: dynamoShareDeps(dynamo),
  // The verified sender of email reports (`-c reportSender=`): unset, the settings page says reports are off.
  emailReports: { store: new DynamoEmailReportStore(dynamo), from: process.env.REPORT_SENDER || null },
  // "Import history": the imports function, named by the stack (`invokes`, lib/functions.ts).
  imports: {
    start: importStartDeps(
      dynamo,
      secrets,
      lambdaImportInvoker(new LambdaClient({}), requireEnv('IMPORTS_FUNCTION')),
      Date.now,
    ),
    jobs: new DynamoImportJobStore(dynamo),
  },
  cookieSecurity: 'always',
  // Set by the stack in app mode: the value CloudFront's origin custom header carries (lib/app-distribution.ts).
  originSecret: process.env.ORIGIN_SECRET || undefined,
  publicUrl: process.env.APP_URL || undefined,
  // Set by the stack unless `-c filteredReports=false`, as the report and MCP functions get their engine (lib/footfall-stack.ts).
  capabilities: { filtered_reports: process.env.FILTERED_REPORTS === 'true' },
});
