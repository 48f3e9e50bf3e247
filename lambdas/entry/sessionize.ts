import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { createSessionizeHandler } from '../handlers/sessionize.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { S3RawObjects } from '../adapters/s3-raw-objects.js';
import { createObjectSessionizeHandler } from '../handlers/sessionize-objects.js';
import { FirehoseArchiveDelivery, createFirehoseClient } from '../adapters/firehose-stream.js';
import { dynamoSessionizeDeps } from '../wiring/sessionize-deps.js';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context, KinesisStreamBatchResponse, KinesisStreamEvent, S3Event } from 'aws-lambda';

const deps = dynamoSessionizeDeps(createDynamoConnection({ table: requireEnv('TABLE_NAME') }), {
  telemetry: createTelemetry('sessionize'),
  objects: new S3RawObjects(new S3Client({}), requireEnv('RAW_BUCKET')),
  archive: new FirehoseArchiveDelivery(createFirehoseClient(), requireEnv('ARCHIVE_STREAM')),
});
const sessionizeStream = createSessionizeHandler(deps.stream);
const sessionizeObjects = createObjectSessionizeHandler({ ...deps.objects, sessionize: sessionizeStream });

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
