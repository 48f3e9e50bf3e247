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
import { DynamoIngestJournal } from '../adapters/dynamo/ingest-journal.js';
import { S3RawObjects } from '../adapters/s3-raw-objects.js';
import { createObjectSessionizeHandler } from '../handlers/sessionize-objects.js';
import { FirehoseArchiveDelivery, createFirehoseClient } from '../adapters/firehose-stream.js';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context, KinesisStreamBatchResponse, KinesisStreamEvent, S3Event } from 'aws-lambda';

const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const payments = dynamoPaymentDeps(dynamo);

const telemetry = createTelemetry('sessionize');
const sessionizeStream = createSessionizeHandler({
  ...telemetry,
  sites: new CachedSiteDirectory(new DynamoConfigStore(dynamo)),
  visits: new DynamoVisitStore(dynamo),
  rollups: new DynamoRollupStore(dynamo),
  realtime: { store: new DynamoRealtimeStore(dynamo), clock: Date.now },
  markers: new DynamoBatchMarkers(dynamo),
  visitCache: new ShardVisitCache(new DynamoRecentPaymentMarks(dynamo)),
  recredit: (site, visitors) => recreditVisitors(payments, site, visitors),
});

const sessionizeObjects = createObjectSessionizeHandler({
  journal: new DynamoIngestJournal(dynamo),
  objects: new S3RawObjects(new S3Client({}), requireEnv('RAW_BUCKET')),
  sessionize: sessionizeStream,
  archive: new FirehoseArchiveDelivery(createFirehoseClient(), requireEnv('ARCHIVE_STREAM')),
  logger: telemetry.logger,
});

/**
 * Lambda entry of the sessionizer: S3 `ObjectCreated` notifications of the raw delivery and the
 * sweep's scheduled event (`docs/ingestion.md`, "Choosing the ingestion path"), and, while a stack
 * upgraded from the event stream drains it (`-c drainStream=true`), the stream's event source
 * mapping's batches.
 */
export async function handler(
  event: KinesisStreamEvent | Partial<S3Event>,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<KinesisStreamBatchResponse | undefined> {
  const first = event.Records?.[0];
  if (first && first.eventSource === 'aws:kinesis') return sessionizeStream(event as KinesisStreamEvent);
  const scheduled = !event.Records;
  await sessionizeObjects(
    scheduled ? {} : (event as Partial<S3Event>),
    () => context?.getRemainingTimeInMillis() ?? 60_000,
  );
  return undefined;
}
