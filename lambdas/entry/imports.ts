import { LambdaClient } from '@aws-sdk/client-lambda';
import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { lambdaImportInvoker } from '../adapters/lambda-import-invoker.js';
import { createImportsHandler } from '../handlers/imports.js';
import { createTelemetry } from '../observability/telemetry.js';
import { runHistoryImport } from '../services/history-import.js';
import { requireEnv } from './env.js';
import { importRunDeps } from '../wiring/import-deps.js';
import { stackSecretBox } from './secret-box.js';

const { logger } = createTelemetry('imports');
const deps = importRunDeps(
  createDynamoConnection({ table: requireEnv('TABLE_NAME') }),
  stackSecretBox(),
  Date.now,
  // The providers' own APIs in AWS: no stand-in variable is set on the function.
  {},
);

/** Lambda entry of the imports function: one provider history import begun in the app (`createImportsHandler`). */
export const handler = createImportsHandler({
  logger,
  run: (site, provider, run, deadline) => runHistoryImport(deps, site, provider, run, deadline),
  // Itself: the name Lambda sets in every function's environment.
  invoke: lambdaImportInvoker(new LambdaClient({}), requireEnv('AWS_LAMBDA_FUNCTION_NAME')),
  clock: Date.now,
});
