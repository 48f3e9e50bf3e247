import type { S3Event } from 'aws-lambda';
import { DynamoRealtimeStore } from '../lambdas/adapters/dynamo/realtime-store.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoBatchMarkers } from '../lambdas/adapters/dynamo/batch-marker-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { CachedSiteDirectory } from '../lambdas/adapters/cached-site-directory.js';
import { createSessionizeHandler } from '../lambdas/handlers/sessionize.js';
import { createTelemetry } from '../lambdas/observability/telemetry.js';
import { LocalStreamPoller, type BatchConsumer } from './stream-poller.js';
import { createArchiveConsumer } from './archive.js';
import { dynamoPaymentDeps } from '../lambdas/adapters/dynamo/payment-deps.js';
import { recreditVisitors } from '../lambdas/services/payments.js';
import { ShardVisitCache } from '../lambdas/adapters/shard-visit-cache.js';
import { DynamoRecentPaymentMarks } from '../lambdas/adapters/dynamo/recent-payment-marks.js';
import { functionConnection } from './iam/partition-guard.js';
import { demandArchiveBatch, demandArchiveWrite, functionRawObjects } from './iam/stand-ins.js';
import { EVENTS_PREFIX } from '../lambdas/domain/archive-schema.js';
import { LocalRawObjects } from './raw-objects.js';
import { DynamoIngestJournal } from '../lambdas/adapters/dynamo/ingest-journal.js';
import { createObjectSessionizeHandler } from '../lambdas/handlers/sessionize-objects.js';
import { join } from 'node:path';
import { unlink } from 'node:fs/promises';

/** How long the local ingest path and sessionizer keep a site (ms); `footfall rebuild`'s fence waits it out. */
export const LOCAL_SITE_CACHE_TTL_MS = 5_000;

/** Checkpoint names of the local stream's consumers. */
export const SESSIONIZER = 'sessionize';
export const ARCHIVER = 'archive';

/**
 * The sessionizer Lambda as a consumer of the local stream, through the path AWS runs
 * (`docs/ingestion.md`, "Choosing the ingestion path"): each batch of the stream is delivered as
 * one raw object under `rawDir` (the stand-in of the ingest delivery, `LocalRawObjects`) and the
 * sessionizer's entry is invoked with that object's `ObjectCreated` notification; it journals the
 * object and sessionizes the journal in order, with the same handlers and the sessionizer's own
 * grants (`s3:GetObject`, `s3:ListBucket` on `raw/`, its table partitions). Once its journal
 * entry is done the local object is deleted (in AWS the bucket's lifecycle expires it after a
 * day); the stream log keeps the events.
 */
export function sessionizeConsumer(
  table: DynamoConnection,
  rawDir: string,
  clock: () => number = Date.now,
): BatchConsumer {
  // The sessionizer's own grant, as its role holds it in AWS.
  const dynamo = functionConnection(table, 'sessionize');
  const payments = dynamoPaymentDeps(dynamo, clock);
  const telemetry = createTelemetry('sessionize-local');
  const stream = createSessionizeHandler({
    ...telemetry,
    sites: new CachedSiteDirectory(new DynamoConfigStore(dynamo), LOCAL_SITE_CACHE_TTL_MS, clock),
    visits: new DynamoVisitStore(dynamo),
    rollups: new DynamoRollupStore(dynamo),
    realtime: { store: new DynamoRealtimeStore(dynamo, { localExpiry: table }), clock },
    markers: new DynamoBatchMarkers(dynamo),
    visitCache: new ShardVisitCache(new DynamoRecentPaymentMarks(dynamo), { clock }),
    recredit: (site, visitors) => recreditVisitors(payments, site, visitors),
  });
  const raw = new LocalRawObjects(rawDir);
  const handler = createObjectSessionizeHandler({
    journal: new DynamoIngestJournal(dynamo, { clock, localExpiry: table }),
    objects: functionRawObjects(raw, 'sessionize'),
    sessionize: stream,
    logger: telemetry.logger,
    clock,
  });
  return async (records) => {
    const key = await raw.deliver(records);
    await handler(objectCreated(key));
    await unlink(join(rawDir, key)).catch(() => undefined);
    return null;
  };
}

/** The S3 `ObjectCreated:Put` notification of `key` (URL-encoded as S3 sends it), as the sessionizer receives it. */
export function objectCreated(key: string): S3Event {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'local',
        eventTime: new Date().toISOString(),
        eventName: 'ObjectCreated:Put',
        userIdentity: { principalId: 'local' },
        requestParameters: { sourceIPAddress: '127.0.0.1' },
        responseElements: { 'x-amz-request-id': 'local', 'x-amz-id-2': 'local' },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'raw',
          bucket: { name: 'local-events', ownerIdentity: { principalId: 'local' }, arn: 'arn:aws:s3:::local-events' },
          object: { key: encodeURIComponent(key).replace(/%2F/g, '/'), size: 0, eTag: '', sequencer: '0' },
        },
      },
    ],
  };
}

/** Where the local stand-in of the ingest delivery keeps its objects for the stream in `streamDir`. */
export const rawObjectsDir = (streamDir: string): string => join(streamDir, 'delivery');

/** A poller feeding the sessionizer from the local stream in `streamDir`. */
export function sessionizePoller(
  streamDir: string,
  dynamo: DynamoConnection,
  onError?: (e: unknown) => void,
  clock: () => number = Date.now,
): LocalStreamPoller {
  return new LocalStreamPoller(streamDir, SESSIONIZER, sessionizeConsumer(dynamo, rawObjectsDir(streamDir), clock), {
    batchSize: 1000,
    onError,
  });
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
