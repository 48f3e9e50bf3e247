import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { dynamoPaymentDeps } from '../wiring/payment-deps.js';
import { DynamoWebhookLogStore } from '../adapters/dynamo/webhook-log-store.js';
import { createWebhookHandler } from '../handlers/webhook.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { stackSecretBox } from './secret-box.js';

const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const config = new DynamoConfigStore(dynamo, stackSecretBox());

/** Lambda entry of `POST /api/webhooks/{provider}/{domain}`. */
export const handler = createWebhookHandler({
  ...createTelemetry('webhook'),
  ...dynamoPaymentDeps(dynamo),
  sites: config,
  secrets: config,
  log: new DynamoWebhookLogStore(dynamo),
});
