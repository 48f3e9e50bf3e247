import type { S3Event } from 'aws-lambda';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { createSessionizeHandler } from '../lambdas/handlers/sessionize.js';
import { createTelemetry } from '../lambdas/observability/telemetry.js';
import { LocalStreamPoller, type BatchConsumer } from './stream-poller.js';
import { createArchiveConsumer } from './archive.js';
import { functionConnection } from './iam/partition-guard.js';
import {
  demandArchiveBatch,
  demandArchiveWrite,
  functionArchiveDelivery,
  functionRawObjects,
} from './iam/stand-ins.js';
import { LocalArchiveDelivery, LocalArchiveDeliveryPoller } from './archive-delivery.js';
import { EVENTS_PREFIX } from '../lambdas/domain/archive-schema.js';
import { LocalRawObjects } from './raw-objects.js';
import { createObjectSessionizeHandler } from '../lambdas/handlers/sessionize-objects.js';
import { dynamoSessionizeDeps } from '../lambdas/wiring/sessionize-deps.js';
import { join } from 'node:path';
import { unlink } from 'node:fs/promises';

/** How long the local ingest path and sessionizer keep a site (ms); `footfall rebuild`'s fence waits it out. */
export const LOCAL_SITE_CACHE_TTL_MS = 5_000;

/** Checkpoint name of the local stream's consumer (the sessionizer; the archive is fed by it). */
export const SESSIONIZER = 'sessionize';

/**
 * The sessionizer Lambda as a consumer of the local stream, through the path AWS runs
 * (`docs/ingestion.md`, "Choosing the ingestion path"): each batch of the stream is delivered as
 * one raw object under `rawDir` (the stand-in of the ingest delivery, `LocalRawObjects`) and the
 * sessionizer's entry is invoked with that object's `ObjectCreated` notification; it journals the
 * object and sessionizes the journal in order, with the same handlers and the sessionizer's own
 * grants (`s3:GetObject`, `s3:ListBucket` on `raw/`, its table partitions, `firehose:PutRecordBatch`
 * on the archive), and forwards each object's events to the local archive delivery
 * (`LocalArchiveDelivery`, `archiveDeliveryDir`). Objects are kept under `rawObjectsDir`. Once its journal entry is done the local object is deleted
 * (in AWS the bucket's lifecycle expires it); the stream log keeps the events.
 */
export function sessionizeConsumer(
  table: DynamoConnection,
  streamDir: string,
  clock: () => number = Date.now,
): BatchConsumer {
  const rawDir = rawObjectsDir(streamDir);
  // The sessionizer's own grant, as its role holds it in AWS.
  const dynamo = functionConnection(table, 'sessionize');
  const raw = new LocalRawObjects(rawDir);
  const deps = dynamoSessionizeDeps(dynamo, {
    telemetry: createTelemetry('sessionize-local'),
    objects: functionRawObjects(raw, 'sessionize'),
    archive: functionArchiveDelivery(new LocalArchiveDelivery(archiveDeliveryDir(streamDir)), 'sessionize'),
    clock,
    siteCacheTtlMs: LOCAL_SITE_CACHE_TTL_MS,
    localExpiry: table,
  });
  const handler = createObjectSessionizeHandler({ ...deps.objects, sessionize: createSessionizeHandler(deps.stream) });
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
/** Where the local stand-in of the archive delivery keeps the calls it took and has not converted yet. */
export const archiveDeliveryDir = (streamDir: string): string => join(streamDir, 'archive-delivery');

/** A poller feeding the sessionizer from the local stream in `streamDir`. */
export function sessionizePoller(
  streamDir: string,
  dynamo: DynamoConnection,
  onError?: (e: unknown) => void,
  clock: () => number = Date.now,
): LocalStreamPoller {
  const consumer = sessionizeConsumer(dynamo, streamDir, clock);
  // A batch retried after a crash is the same records: the same raw object, forwarded to the archive once.
  return new LocalStreamPoller(streamDir, SESSIONIZER, consumer, { batchSize: 1000, onError, stableRetries: true });
}

/**
 * The local stand-in for the archive's Firehose: a poller converting what the sessionizer forwarded
 * to the archive delivery of the stream in `streamDir` (deaggregated, `local/archive-delivery.ts`)
 * to Parquet under `archiveDir`. Drain the sessionizer first: the archive is fed by it.
 * `close()` stops it and releases DuckDB.
 */
export function archivePoller(
  streamDir: string,
  archiveDir: string,
  onError?: (e: unknown) => void,
): { poller: LocalArchiveDeliveryPoller; close(): Promise<void> } {
  // Each batch and file asks the delivery's roles what Firehose would need of them (local/iam/stand-ins.ts).
  const consumer = createArchiveConsumer(archiveDir, { beforeWrite: (key) => demandArchiveWrite(EVENTS_PREFIX + key) });
  const poller = new LocalArchiveDeliveryPoller(
    archiveDeliveryDir(streamDir),
    (records, name) => {
      demandArchiveBatch();
      return consumer(records, name);
    },
    { onError, onSkip: (s) => console.warn(`archive: skipped record ${s.sequenceNumber}: ${s.reason}`) },
  );
  return {
    poller,
    close: async () => {
      await poller.stop();
      await consumer.close();
    },
  };
}
