import { DynamoRealtimeStore } from '../lambdas/adapters/dynamo/realtime-store.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoBatchMarkers } from '../lambdas/adapters/dynamo/batch-marker-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { CachedSiteDirectory } from '../lambdas/adapters/cached-site-directory.js';
import { createSessionizeHandler } from '../lambdas/handlers/sessionize.js';
import { createTelemetry } from '../lambdas/observability/telemetry.js';
import { toKinesisEvent } from './kinesis-event.js';
import { LocalStreamPoller, type BatchConsumer } from './stream-poller.js';
import { createArchiveConsumer } from './archive.js';
import { dynamoPaymentDeps } from '../lambdas/adapters/dynamo/payment-deps.js';
import { recreditVisitors } from '../lambdas/services/payments.js';
import { ShardVisitCache } from '../lambdas/adapters/shard-visit-cache.js';
import { DynamoRecentPaymentMarks } from '../lambdas/adapters/dynamo/recent-payment-marks.js';
import { functionConnection } from './iam/partition-guard.js';
import { demandArchiveBatch, demandArchiveWrite, demandStreamRead } from './iam/stand-ins.js';
import { EVENTS_PREFIX } from '../lambdas/domain/archive-schema.js';

/** How long the local ingest path and sessionizer keep a site (ms); `footfall rebuild`'s fence waits it out. */
export const LOCAL_SITE_CACHE_TTL_MS = 5_000;

/** Checkpoint names of the local stream's consumers. */
export const SESSIONIZER = 'sessionize';
export const ARCHIVER = 'archive';

/** The sessionizer Lambda handler as a consumer of the local stream (same handler, same event shape). */
export function sessionizeConsumer(table: DynamoConnection, clock: () => number = Date.now): BatchConsumer {
  // The sessionizer's own grant, as its role holds it in AWS.
  const dynamo = functionConnection(table, 'sessionize');
  const payments = dynamoPaymentDeps(dynamo, clock);
  const handler = createSessionizeHandler({
    ...createTelemetry('sessionize-local'),
    sites: new CachedSiteDirectory(new DynamoConfigStore(dynamo), LOCAL_SITE_CACHE_TTL_MS, clock),
    visits: new DynamoVisitStore(dynamo),
    rollups: new DynamoRollupStore(dynamo),
    realtime: { store: new DynamoRealtimeStore(dynamo, { localExpiry: table }), clock },
    markers: new DynamoBatchMarkers(dynamo),
    visitCache: new ShardVisitCache(new DynamoRecentPaymentMarks(dynamo), { clock }),
    recredit: (site, visitors) => recreditVisitors(payments, site, visitors),
  });
  return async (records) => {
    demandStreamRead('sessionize');
    const { batchItemFailures } = await handler(toKinesisEvent(records));
    return batchItemFailures[0]?.itemIdentifier ?? null;
  };
}

/** A poller feeding the sessionizer from the local stream in `streamDir`. */
export function sessionizePoller(
  streamDir: string,
  dynamo: DynamoConnection,
  onError?: (e: unknown) => void,
  clock: () => number = Date.now,
): LocalStreamPoller {
  return new LocalStreamPoller(streamDir, SESSIONIZER, sessionizeConsumer(dynamo, clock), { batchSize: 1000, onError });
}

/**
 * The local stand-in for Firehose: a poller writing the stream to Parquet
 * under `archiveDir`. `close()` stops it and releases DuckDB.
 */
export function archivePoller(
  streamDir: string,
  archiveDir: string,
  onError?: (e: unknown) => void,
): { poller: LocalStreamPoller; close(): Promise<void> } {
  // Each batch and file asks the delivery's roles what Firehose would need of them (local/iam/stand-ins.ts).
  const consumer = createArchiveConsumer(archiveDir, { beforeWrite: (key) => demandArchiveWrite(EVENTS_PREFIX + key) });
  const take: BatchConsumer = (records) => {
    demandArchiveBatch();
    return consumer(records);
  };
  const poller = new LocalStreamPoller(streamDir, ARCHIVER, take, { batchSize: 5000, onError });
  return {
    poller,
    close: async () => {
      await poller.stop();
      await consumer.close();
    },
  };
}
