import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../adapters/dynamo/rollup-store.js';
import { DynamoRealtimeStore } from '../adapters/dynamo/realtime-store.js';
import { DynamoBatchMarkers } from '../adapters/dynamo/batch-marker-store.js';
import { DynamoVisitStore } from '../adapters/dynamo/visit-store.js';
import { CachedSiteDirectory } from '../adapters/cached-site-directory.js';
import { createSessionizeHandler } from '../handlers/sessionize.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { dynamoPaymentDeps } from '../adapters/dynamo/payment-deps.js';
import { recreditVisitors } from '../services/payments.js';
import { ShardVisitCache } from '../adapters/shard-visit-cache.js';
import { DynamoRecentPaymentMarks } from '../adapters/dynamo/recent-payment-marks.js';

const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const payments = dynamoPaymentDeps(dynamo);

/** Lambda entry of the sessionizer (Kinesis event source mapping). */
export const handler = createSessionizeHandler({
  ...createTelemetry('sessionize'),
  sites: new CachedSiteDirectory(new DynamoConfigStore(dynamo)),
  visits: new DynamoVisitStore(dynamo),
  rollups: new DynamoRollupStore(dynamo),
  realtime: { store: new DynamoRealtimeStore(dynamo), clock: Date.now },
  markers: new DynamoBatchMarkers(dynamo),
  visitCache: new ShardVisitCache(new DynamoRecentPaymentMarks(dynamo)),
  recredit: (site, visitors) => recreditVisitors(payments, site, visitors),
});
