import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoWebhookLogStore } from '../adapters/dynamo/webhook-log-store.js';
import type { WebhookHandlerDeps } from '../handlers/webhook.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { SecretBox } from '../ports.js';
import { dynamoPaymentDeps } from './payment-deps.js';

/**
 * The webhook function's dependencies (`POST /api/webhooks/{provider}/{domain}`) on the single
 * table, for the Lambda entry (`lambdas/entry/webhook.ts`) and the local service alike: the sites
 * and their signing secrets (opened with `box`), the payment stores, the delivery log.
 */
export function dynamoWebhookDeps(
  conn: DynamoConnection,
  wiring: { telemetry: Telemetry; box: SecretBox; clock?: () => number },
): WebhookHandlerDeps {
  const config = new DynamoConfigStore(conn, wiring.box);
  return {
    ...wiring.telemetry,
    ...dynamoPaymentDeps(conn, wiring.clock),
    sites: config,
    secrets: config,
    log: new DynamoWebhookLogStore(conn),
  };
}
