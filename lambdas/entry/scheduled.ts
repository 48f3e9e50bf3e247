import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../adapters/dynamo/rollup-store.js';
import { dynamoPaymentDeps } from '../adapters/dynamo/payment-deps.js';
import { createScheduledHandler } from '../handlers/scheduled.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';

const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });

/** Lambda entry of the EventBridge schedule. */
export const handler = createScheduledHandler({
  ...createTelemetry('scheduled'),
  ...dynamoPaymentDeps(dynamo),
  sites: new DynamoConfigStore(dynamo),
  rollups: new DynamoRollupStore(dynamo),
});
