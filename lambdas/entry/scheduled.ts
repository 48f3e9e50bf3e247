import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { dynamoScheduledDeps } from '../wiring/scheduled-deps.js';
import { dynamoReportServiceDeps } from '../wiring/report-deps.js';
import { DynamoEmailReportStore } from '../adapters/dynamo/email-report-store.js';
import { SesMailSender } from '../adapters/ses-mail-sender.js';
import { createScheduledHandler } from '../handlers/scheduled.js';
import { emailReportSender } from '../services/email-reports.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';

const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const telemetry = createTelemetry('scheduled');
// Set by the stack with `-c reportSender=` (lib/footfall-stack.ts `sendReports`); without it no report is sent.
const sender = process.env.REPORT_SENDER;

/** Lambda entry of the EventBridge schedule. */
export const handler = createScheduledHandler(
  dynamoScheduledDeps(dynamo, {
    telemetry,
    emailReports: sender
      ? emailReportSender(
          {
            reports: dynamoReportServiceDeps(dynamo),
            store: new DynamoEmailReportStore(dynamo),
            sender: new SesMailSender(requireEnv('REPORT_CONFIGURATION_SET')),
            from: sender,
            appUrl: requireEnv('APP_URL'),
          },
          telemetry.logger,
        )
      : undefined,
  }),
);
