import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoSaltStore } from '../adapters/dynamo/salt-store.js';
import { CachedSiteDirectory } from '../adapters/cached-site-directory.js';
import { KinesisEventStream, createKinesisClient } from '../adapters/kinesis-stream.js';
import { SiteRateLimiter } from '../domain/rate-limit.js';
import { createEventHandler } from '../handlers/event.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';

// Built once per execution environment (cold start), reused by every invocation.
const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });

/** Lambda entry of `POST|OPTIONS /api/event` (API Gateway HTTP API, payload 2.0). */
export const handler = createEventHandler({
  ...createTelemetry('event'),
  clock: Date.now,
  sites: new CachedSiteDirectory(new DynamoConfigStore(dynamo)),
  salts: new DynamoSaltStore(dynamo),
  stream: new KinesisEventStream(createKinesisClient(), requireEnv('STREAM_NAME')),
  limiter: new SiteRateLimiter(),
});
