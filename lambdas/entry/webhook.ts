import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { dynamoWebhookDeps } from '../wiring/webhook-deps.js';
import { createWebhookHandler } from '../handlers/webhook.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { stackSecretBox } from './secret-box.js';

/** Lambda entry of `POST /api/webhooks/{provider}/{domain}`. */
export const handler = createWebhookHandler(
  dynamoWebhookDeps(createDynamoConnection({ table: requireEnv('TABLE_NAME') }), {
    telemetry: createTelemetry('webhook'),
    box: stackSecretBox(),
  }),
);
